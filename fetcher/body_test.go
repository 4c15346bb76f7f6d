package fetcher

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readLimited reads a body of the announced length into one buffer, grows
// one of unknown length, stops one byte past the limit, and passes on a
// reader's error.
func TestReadLimited(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10_000) // 100,000 bytes
	for _, tc := range []struct {
		name        string
		limit, hint int64
		want        int
		cap         int // 0: any
	}{
		{"announced length", 1 << 20, int64(len(body)), len(body), len(body) + 1},
		{"unknown length", 1 << 20, -1, len(body), 0},
		{"short hint", 1 << 20, 10, len(body), 0},
		{"limit", 5_000, -1, 5_001, 0},
		{"limit below hint", 5_000, int64(len(body)), 5_001, 5_001},
		{"one byte at a time", 1 << 20, int64(len(body)), len(body), len(body) + 1},
	} {
		var r io.Reader = bytes.NewReader(body)
		if tc.name == "one byte at a time" {
			r = iotest.OneByteReader(r)
		}
		got, err := readLimited(r, tc.limit, tc.hint)
		if err != io.EOF || !bytes.Equal(got, body[:tc.want]) || tc.cap > 0 && cap(got) != tc.cap {
			t.Errorf("%s: %d bytes (cap %d), %v; want %d bytes (cap %d), EOF", tc.name, len(got), cap(got), err, tc.want, tc.cap)
		}
	}
	boom := errors.New("boom")
	got, err := readLimited(io.MultiReader(bytes.NewReader(body[:100]), iotest.ErrReader(boom)), 1<<20, -1)
	if !errors.Is(err, boom) || !bytes.Equal(got, body[:100]) {
		t.Errorf("failing reader: %d bytes, %v", len(got), err)
	}
}

func BenchmarkReadLimited(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 4539) // the synthetic web's mean body
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := readLimited(bytes.NewReader(body), 1<<20, int64(len(body))); err != io.EOF {
			b.Fatal(err)
		}
	}
}
