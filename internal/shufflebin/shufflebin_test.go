package shufflebin

import (
	"errors"
	"testing"
	"time"
)

// TestTime checks every form of a time's encoding: it comes back equal,
// in UTC, from the form its value calls for, and every truncation of it
// is ErrShort.
func TestTime(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		flag byte
	}{
		{time.Time{}, timeZero},
		{time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600)), timeMilli},
		{time.UnixMilli(-1), timeMilli},
		{time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), timeNano},
		{time.Date(2500, 1, 2, 3, 4, 5, 6, time.UTC), timeSecs},
		{time.Unix(3458764513820540928, 0), timeSecs}, // whole ms past UnixMilli's range
	} {
		b := AppendTime(nil, c.t)
		if b[0] != c.flag {
			t.Errorf("%v: flag %d, want %d", c.t, b[0], c.flag)
		}
		r := NewReader(b)
		if got := r.Time(); !got.Equal(c.t) || got.Location() != time.UTC || r.Err() != nil || r.Left() != 0 {
			t.Errorf("%v: read %v (%v), error %v, %d bytes left", c.t, got, got.Location(), r.Err(), r.Left())
		}
		for n := range len(b) {
			r := NewReader(b[:n])
			r.Time()
			if !errors.Is(r.Err(), ErrShort) {
				t.Errorf("%v cut to %d bytes: error %v", c.t, n, r.Err())
			}
		}
	}
}

// TestReaderSticks checks that the first error sticks and later reads
// return zeros.
func TestReaderSticks(t *testing.T) {
	r := NewReader([]byte{0x80})
	if v := r.Uvarint(); v != 0 || !errors.Is(r.Err(), ErrShort) {
		t.Fatalf("Uvarint of a cut varint: %d, %v", v, r.Err())
	}
	if r.Byte() != 0 || r.Length() != 0 || r.Bytes(0) != nil || !errors.Is(r.Err(), ErrShort) {
		t.Error("reads after an error did not return zeros, or the error changed")
	}
}
