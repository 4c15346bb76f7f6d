// Package shufflebin holds the binary pieces of trawl's shuffle encodings,
// shared by the engine's reflective codec (mapreduce.Codec) and the types
// that encode themselves for speed (crawldb.Datum): a time's encoding, and
// a Reader of bytes, varints, lengths and fixed-size numbers whose first
// error sticks, so that a decoder reads a whole value and checks once.
package shufflebin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrShort is the error of a read past the end of the bytes.
var ErrShort = errors.New("shufflebin: truncated value")

// Time flags: the first byte of a time's encoding.
const (
	timeZero  = 0 // the zero time
	timeNano  = 1 // a zigzag varint of UnixNano
	timeSecs  = 2 // a zigzag varint of Unix and a uvarint of the nanoseconds
	timeMilli = 3 // a zigzag varint of UnixMilli
)

// AppendTime appends the encoding of t: a byte 0 for the zero time; 3
// and the zigzag varint of UnixMilli for a whole millisecond (as a
// CrawlDB's times are) within UnixMilli's range; 1 and that of UnixNano
// within its range (years 1678 to 2261); else 2, the zigzag varint of the
// seconds and the uvarint of the nanoseconds. Reader.Time decodes it, in
// UTC.
func AppendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, timeZero)
	}
	s := t.Unix()
	if t.Nanosecond()%1e6 == 0 && s > -9223372036854775 && s < 9223372036854775 {
		return binary.AppendVarint(append(b, timeMilli), t.UnixMilli())
	}
	if s > -9223372036 && s < 9223372035 {
		return binary.AppendVarint(append(b, timeNano), t.UnixNano())
	}
	b = binary.AppendVarint(append(b, timeSecs), s)
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// Reader reads an encoding from a byte slice. Its first error sticks:
// the reads after it return zeros, and Err reports it.
type Reader struct {
	b   []byte
	i   int
	err error
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error a read met, or nil.
func (r *Reader) Err() error { return r.err }

// Offset is the number of bytes read.
func (r *Reader) Offset() int { return r.i }

// Left is the number of bytes not read yet.
func (r *Reader) Left() int { return len(r.b) - r.i }

// Fail records err as the Reader's error, unless it has one, and stops
// its reads.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.i = len(r.b)
}

// Byte reads a byte.
func (r *Reader) Byte() byte {
	if r.i >= len(r.b) {
		r.Fail(ErrShort)
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.Fail(varintError(n))
		return 0
	}
	r.i += n
	return v
}

// Varint reads a zigzag varint: a uvarint whose low bit is the sign, as
// binary.AppendVarint writes it.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// varintError is the error of binary.Uvarint's n <= 0.
func varintError(n int) error {
	if n == 0 {
		return ErrShort
	}
	return errors.New("shufflebin: varint overflows 64 bits")
}

// Int32 reads a zigzag varint that must fit an int32.
func (r *Reader) Int32() int32 {
	v := r.Varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.Fail(fmt.Errorf("shufflebin: %d overflows an int32", v))
		return 0
	}
	return int32(v)
}

// Float32 reads a float32's IEEE bits, little endian.
func (r *Reader) Float32() float32 {
	b := r.Bytes(4)
	if b == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// Bytes reads n bytes, which the Reader's slice holds: a caller that
// keeps them copies them.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.Left() {
		r.Fail(ErrShort)
		return nil
	}
	v := r.b[r.i : r.i+n]
	r.i += n
	return v
}

// Length reads a uvarint length no larger than the bytes left.
func (r *Reader) Length() int {
	n := r.Uvarint()
	if n > uint64(r.Left()) {
		r.Fail(ErrShort)
		return 0
	}
	return int(n)
}

// Count reads a uvarint number of elements that take at least size bytes
// each, no more than the bytes left hold.
func (r *Reader) Count(size int) int {
	n := r.Uvarint()
	if n > uint64(r.Left()/size) {
		r.Fail(ErrShort)
		return 0
	}
	return int(n)
}

// Time reads a time AppendTime appended, in UTC.
func (r *Reader) Time() time.Time {
	switch c := r.Byte(); c {
	case timeZero:
		return time.Time{}
	case timeMilli:
		return time.UnixMilli(r.Varint()).UTC()
	case timeNano:
		return time.Unix(0, r.Varint()).UTC()
	case timeSecs:
		s := r.Varint()
		ns := r.Uvarint()
		if ns >= 1e9 {
			r.Fail(fmt.Errorf("shufflebin: bad nanoseconds %d", ns))
			return time.Time{}
		}
		return time.Unix(s, int64(ns)).UTC()
	default:
		r.Fail(fmt.Errorf("shufflebin: bad time flag %d", c))
		return time.Time{}
	}
}
