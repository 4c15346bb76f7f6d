package crawldb

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/trawl/trawl/internal/shufflebin"
)

// A Datum encodes itself for a MapReduce shuffle (it implements
// mapreduce.ShuffleMarshaler and ShuffleUnmarshaler): generate and
// updatedb move every row of the CrawlDB through one, and the engine's
// reflective codec spent most of a row's decoding on allocating its
// strings one by one and on a call per field.
//
// The encoding: the status; a byte of flags (the three bools, and which
// of Signature, History and Metadata are not nil, so that nil and empty
// stay apart); the four times (shufflebin.AppendTime: a CrawlDB's whole
// milliseconds take a flag and a varint of UnixMilli); the integers as
// zigzag varints; the
// float32s as their IEEE bits, little endian; the signature (a length
// and its bytes); the history (a count, then each observation's time, a
// byte of its two bools and its Modified); then the lengths of the
// strings (the six fields', then the metadata's count and each entry's
// key and value lengths, the entries in key order so that equal rows
// give equal bytes), and last all the strings' bytes in one block, which
// the decoder copies once and slices.
const (
	shuffleFixedInterval = 1 << iota
	shuffleClusterSample
	shuffleOffTopic
	shuffleSignature
	shuffleHistory
	shuffleMetadata
)

// observation flags in the shuffle encoding.
const (
	shuffleChanged = 1 << iota
	shuffleInitial
)

// AppendShuffle appends d's shuffle encoding to b (see above).
func (d *Datum) AppendShuffle(b []byte) []byte {
	var flags byte
	if d.FixedInterval {
		flags |= shuffleFixedInterval
	}
	if d.ClusterSample {
		flags |= shuffleClusterSample
	}
	if d.OffTopic {
		flags |= shuffleOffTopic
	}
	if d.Signature != nil {
		flags |= shuffleSignature
	}
	if d.History != nil {
		flags |= shuffleHistory
	}
	if d.Metadata != nil {
		flags |= shuffleMetadata
	}
	b = append(b, byte(d.Status), flags)
	b = shufflebin.AppendTime(b, d.FetchTime)
	b = shufflebin.AppendTime(b, d.PrevFetchTime)
	b = shufflebin.AppendTime(b, d.ModifiedTime)
	b = shufflebin.AppendTime(b, d.GenerateTime)
	for _, v := range [...]int32{d.FetchInterval, d.Retries, d.HTTPStatus, d.FetchCount, d.ChangeCount, d.ClusterID,
		d.OffTopicHops, d.Features.Words, d.Features.Outlinks, d.Features.Inlinks, d.Features.Images, d.Features.Depth} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, d.Features.Bytes)
	for _, f := range [...]float32{d.Score, d.Relevance, d.LinkRelevance} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	if d.Signature != nil {
		b = binary.AppendUvarint(b, uint64(len(d.Signature)))
		b = append(b, d.Signature...)
	}
	if d.History != nil {
		b = binary.AppendUvarint(b, uint64(len(d.History)))
		for _, o := range d.History {
			b = shufflebin.AppendTime(b, o.Time)
			var of byte
			if o.Changed {
				of |= shuffleChanged
			}
			if o.Initial {
				of |= shuffleInitial
			}
			b = append(b, of)
			b = binary.AppendVarint(b, o.Modified)
		}
	}
	strs := [...]string{d.URL, d.Host, d.ContentType, d.ETag, d.LastModified, string(d.Source)}
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
	}
	var keys []string
	if d.Metadata != nil {
		keys = make([]string, 0, len(d.Metadata))
		for k := range d.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = binary.AppendUvarint(b, uint64(len(d.Metadata[k])))
		}
	}
	for _, s := range strs {
		b = append(b, s...)
	}
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, d.Metadata[k]...)
	}
	return b
}

// UnmarshalShuffle sets d from data, an encoding AppendShuffle appended.
// It does not keep data.
func (d *Datum) UnmarshalShuffle(data []byte) error {
	r := shufflebin.NewReader(data)
	*d = Datum{Status: Status(r.Byte())}
	flags := r.Byte()
	d.FixedInterval = flags&shuffleFixedInterval != 0
	d.ClusterSample = flags&shuffleClusterSample != 0
	d.OffTopic = flags&shuffleOffTopic != 0
	d.FetchTime = r.Time()
	d.PrevFetchTime = r.Time()
	d.ModifiedTime = r.Time()
	d.GenerateTime = r.Time()
	for _, p := range [...]*int32{&d.FetchInterval, &d.Retries, &d.HTTPStatus, &d.FetchCount, &d.ChangeCount, &d.ClusterID,
		&d.OffTopicHops, &d.Features.Words, &d.Features.Outlinks, &d.Features.Inlinks, &d.Features.Images, &d.Features.Depth} {
		*p = r.Int32()
	}
	d.Features.Bytes = r.Varint()
	for _, p := range [...]*float32{&d.Score, &d.Relevance, &d.LinkRelevance} {
		*p = r.Float32()
	}
	if flags&shuffleSignature != 0 {
		d.Signature = slices.Clone(r.Bytes(r.Length()))
		if d.Signature == nil {
			d.Signature = []byte{}
		}
	}
	if flags&shuffleHistory != 0 {
		n := r.Count(3) // an observation takes at least 3 bytes
		d.History = make([]Observation, n)
		for i := range d.History {
			o := &d.History[i]
			o.Time = r.Time()
			of := r.Byte()
			o.Changed, o.Initial = of&shuffleChanged != 0, of&shuffleInitial != 0
			o.Modified = r.Varint()
		}
	}
	var lens [6]int
	total := 0
	for i := range lens {
		lens[i] = r.Length()
		total += lens[i]
	}
	var meta []int
	if flags&shuffleMetadata != 0 {
		n := r.Count(2) // an entry's two lengths take at least 2 bytes
		meta = make([]int, 2*n)
		for i := range meta {
			meta[i] = r.Length()
			total += meta[i]
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("crawldb: shuffle datum: %w", err)
	}
	if total != r.Left() {
		return fmt.Errorf("crawldb: shuffle datum: %d bytes of strings, %d left", total, r.Left())
	}
	// One copy of all the strings, which the fields slice.
	s := string(r.Bytes(total))
	cut := func(n int) string {
		v := s[:n]
		s = s[n:]
		return v
	}
	d.URL, d.Host, d.ContentType = cut(lens[0]), cut(lens[1]), cut(lens[2])
	d.ETag, d.LastModified, d.Source = cut(lens[3]), cut(lens[4]), Source(cut(lens[5]))
	if flags&shuffleMetadata != 0 {
		d.Metadata = make(map[string]string, len(meta)/2)
		for i := 0; i < len(meta); i += 2 {
			k := cut(meta[i])
			d.Metadata[k] = cut(meta[i+1])
		}
	}
	return nil
}
