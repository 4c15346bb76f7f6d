package crawldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// A Datum encodes itself for a MapReduce shuffle (it implements
// mapreduce.ShuffleMarshaler and ShuffleUnmarshaler): generate and
// updatedb move every row of the CrawlDB through one, and the engine's
// reflective codec spent most of a row's decoding on allocating its
// strings one by one and on a call per field.
//
// The encoding: the status; a byte of flags (the three bools, and which
// of Signature, History and Metadata are not nil, so that nil and empty
// stay apart); the four times (0 for the zero time, 3 and the zigzag
// varint of UnixMilli for a whole millisecond, as the CrawlDB's times
// are, else 1 and that of UnixNano, or 2, the seconds and the nanoseconds
// outside UnixNano's range; decoded as UTC); the integers as zigzag varints; the
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

var errShuffleShort = errors.New("crawldb: truncated shuffle datum")

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
	b = appendShuffleTime(b, d.FetchTime)
	b = appendShuffleTime(b, d.PrevFetchTime)
	b = appendShuffleTime(b, d.ModifiedTime)
	b = appendShuffleTime(b, d.GenerateTime)
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
			b = appendShuffleTime(b, o.Time)
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

// appendShuffleTime appends t's encoding: see AppendShuffle.
func appendShuffleTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	// A CrawlDB time is whole milliseconds (the Parquet columns' unit);
	// UnixMilli is defined within about 292 million years of 1970.
	s := t.Unix()
	if t.Nanosecond()%1e6 == 0 && s > -9223372036854775 && s < 9223372036854775 {
		return binary.AppendVarint(append(b, 3), t.UnixMilli())
	}
	// UnixNano is defined for years 1678..2261; outside, seconds and nanos.
	if s > -9223372036 && s < 9223372035 {
		return binary.AppendVarint(append(b, 1), t.UnixNano())
	}
	b = binary.AppendVarint(append(b, 2), s)
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// UnmarshalShuffle sets d from data, an encoding AppendShuffle appended.
// It does not keep data.
func (d *Datum) UnmarshalShuffle(data []byte) error {
	r := shuffleReader{b: data}
	*d = Datum{Status: Status(r.byte1())}
	flags := r.byte1()
	d.FixedInterval = flags&shuffleFixedInterval != 0
	d.ClusterSample = flags&shuffleClusterSample != 0
	d.OffTopic = flags&shuffleOffTopic != 0
	d.FetchTime = r.time()
	d.PrevFetchTime = r.time()
	d.ModifiedTime = r.time()
	d.GenerateTime = r.time()
	for _, p := range [...]*int32{&d.FetchInterval, &d.Retries, &d.HTTPStatus, &d.FetchCount, &d.ChangeCount, &d.ClusterID,
		&d.OffTopicHops, &d.Features.Words, &d.Features.Outlinks, &d.Features.Inlinks, &d.Features.Images, &d.Features.Depth} {
		*p = r.int32()
	}
	d.Features.Bytes = r.varint()
	for _, p := range [...]*float32{&d.Score, &d.Relevance, &d.LinkRelevance} {
		*p = r.float32()
	}
	if flags&shuffleSignature != 0 {
		d.Signature = slices.Clone(r.bytes(r.length()))
		if d.Signature == nil {
			d.Signature = []byte{}
		}
	}
	if flags&shuffleHistory != 0 {
		n := r.count(3) // an observation takes at least 3 bytes
		d.History = make([]Observation, n)
		for i := range d.History {
			o := &d.History[i]
			o.Time = r.time()
			of := r.byte1()
			o.Changed, o.Initial = of&shuffleChanged != 0, of&shuffleInitial != 0
			o.Modified = r.varint()
		}
	}
	var lens [6]int
	total := 0
	for i := range lens {
		lens[i] = r.length()
		total += lens[i]
	}
	var meta []int
	if flags&shuffleMetadata != 0 {
		n := r.count(2) // an entry's two lengths take at least 2 bytes
		meta = make([]int, 2*n)
		for i := range meta {
			meta[i] = r.length()
			total += meta[i]
		}
	}
	if r.err != nil {
		return r.err
	}
	if total < 0 || total != len(r.b)-r.i {
		return fmt.Errorf("crawldb: shuffle datum: %d bytes of strings, %d left", total, len(r.b)-r.i)
	}
	// One copy of all the strings, which the fields slice.
	s := string(r.b[r.i:])
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

// shuffleReader reads a shuffle encoding; its first error sticks, and
// the reads after it return zeros.
type shuffleReader struct {
	b   []byte
	i   int
	err error
}

func (r *shuffleReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.i = len(r.b)
}

func (r *shuffleReader) byte1() byte {
	if r.i >= len(r.b) {
		r.fail(errShuffleShort)
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *shuffleReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.fail(errShuffleShort)
		return 0
	}
	r.i += n
	return v
}

func (r *shuffleReader) varint() int64 {
	v, n := binary.Varint(r.b[r.i:])
	if n <= 0 {
		r.fail(errShuffleShort)
		return 0
	}
	r.i += n
	return v
}

func (r *shuffleReader) int32() int32 {
	v := r.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail(fmt.Errorf("crawldb: shuffle datum: %d overflows an int32", v))
		return 0
	}
	return int32(v)
}

func (r *shuffleReader) float32() float32 {
	if len(r.b)-r.i < 4 {
		r.fail(errShuffleShort)
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(r.b[r.i:]))
	r.i += 4
	return v
}

// length reads a length no larger than what is left.
func (r *shuffleReader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.b)-r.i) {
		r.fail(errShuffleShort)
		return 0
	}
	return int(n)
}

// count reads a number of elements that take at least size bytes each.
func (r *shuffleReader) count(size int) int {
	n := r.uvarint()
	if n > uint64((len(r.b)-r.i)/size) {
		r.fail(errShuffleShort)
		return 0
	}
	return int(n)
}

func (r *shuffleReader) bytes(n int) []byte {
	if n > len(r.b)-r.i {
		r.fail(errShuffleShort)
		return nil
	}
	v := r.b[r.i : r.i+n]
	r.i += n
	return v
}

func (r *shuffleReader) time() time.Time {
	switch c := r.byte1(); c {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, r.varint()).UTC()
	case 3:
		return time.UnixMilli(r.varint()).UTC()
	case 2:
		s := r.varint()
		ns := r.uvarint()
		if ns >= 1e9 {
			r.fail(fmt.Errorf("crawldb: shuffle datum: bad nanoseconds %d", ns))
			return time.Time{}
		}
		return time.Unix(s, int64(ns)).UTC()
	default:
		r.fail(fmt.Errorf("crawldb: shuffle datum: bad time flag %d", c))
		return time.Time{}
	}
}
