package jobs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
)

// genValue is the shuffle value of generate's selection job, keyed by host
// (or domain): either a URL of a pending fetch list (Pending) or a candidate
// for the new fetch list (its CrawlDB datum).
//
// Its encoding controls the order in which a host's values reach the
// reducer (the engine sorts them by their bytes): all pending URLs first,
// then the candidates best first — by decreasing score (Nutch's
// generatorSortValue), ties by increasing URL. The reducer therefore keeps
// only the host's pending URLs in memory and takes the first candidates.
//
//	pending:   0x00 URL
//	candidate: 0x01 key(score) URL 0x00 datum
//
// key(score) is 4 bytes that sort as the score decreases; URLs never hold a
// NUL byte (the map side checks), so URL 0x00 sorts as the URL does.
type genValue struct {
	Pending bool
	URL     string
	Datum   crawldb.Datum // candidates only
}

// datumCodec encodes the datum part of a genValue. It is built once and
// never changes (a Codec is immutable and safe for concurrent use).
var datumCodec = func() *mapreduce.Codec[crawldb.Datum] {
	c, err := mapreduce.NewCodec[crawldb.Datum]()
	if err != nil {
		panic(fmt.Sprintf("jobs: no shuffle codec for crawldb.Datum: %v", err))
	}
	return c
}()

// scoreKey maps a score to 4 bytes whose byte order is the decreasing order
// of scores. NaN sorts after every number.
func scoreKey(s float32) uint32 {
	if s != s { // NaN
		return math.MaxUint32
	}
	if s == 0 {
		s = 0 // -0 and +0 sort together
	}
	b := math.Float32bits(s)
	if b&0x80000000 != 0 {
		b = ^b // negative: larger magnitude sorts first ascending
	} else {
		b |= 0x80000000
	}
	return ^b // descending
}

// AppendShuffle implements mapreduce.ShuffleMarshaler.
func (v genValue) AppendShuffle(dst []byte) []byte {
	if v.Pending {
		dst = append(dst, 0)
		return append(dst, v.URL...)
	}
	dst = append(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, scoreKey(v.Datum.Score))
	dst = append(dst, v.URL...)
	dst = append(dst, 0)
	return datumCodec.Append(dst, &v.Datum)
}

// UnmarshalShuffle implements mapreduce.ShuffleUnmarshaler.
func (v *genValue) UnmarshalShuffle(data []byte) error {
	if len(data) == 0 {
		return errors.New("generate value: empty")
	}
	switch data[0] {
	case 0:
		*v = genValue{Pending: true, URL: string(data[1:])}
		return nil
	case 1:
		if len(data) < 6 {
			return errors.New("generate value: truncated candidate")
		}
		rest := data[5:]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return errors.New("generate value: candidate URL not terminated")
		}
		v.Pending = false
		v.URL = string(rest[:i])
		if err := datumCodec.Decode(rest[i+1:], &v.Datum); err != nil {
			return fmt.Errorf("generate value %s: %w", v.URL, err)
		}
		return nil
	}
	return fmt.Errorf("generate value: unknown kind byte %d", data[0])
}
