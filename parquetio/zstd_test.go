package parquetio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// pageLike is n bytes that compress as Parquet pages of URLs and numbers do.
func pageLike(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "http://h%04d.sim.test/page/%d%c", r.IntN(300), r.IntN(1e7), byte(r.IntN(256)))
	}
	return b.Bytes()[:n]
}

// TestZstdCodec checks that the writers' codec compresses pages up to its
// window to the same bytes as parquet-go's zstd codec, that larger pages
// round-trip through parquet-go's decoder, and that empty pages work.
func TestZstdCodec(t *testing.T) {
	ours := newZstdCodec(pqzstd.SpeedDefault)
	theirs := &pqzstd.Codec{Level: pqzstd.SpeedDefault}
	if ours.CompressionCodec() != format.Zstd || ours.String() != theirs.String() {
		t.Fatalf("codec identity %v %q, want %v %q", ours.CompressionCodec(), ours.String(), format.Zstd, theirs.String())
	}
	for i, n := range []int{0, 1, 1000, 64 << 10, 256 << 10, zstdWindow, 3 * zstdWindow} {
		src := pageLike(n, uint64(i))
		got, err := ours.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		want, err := theirs.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if n <= zstdWindow && !bytes.Equal(got, want) {
			t.Errorf("%d bytes: %d compressed bytes differ from parquet-go's %d", n, len(got), len(want))
		}
		if n > zstdWindow && len(got) > len(want)+len(want)/10 {
			t.Errorf("%d bytes: %d compressed, parquet-go %d: window too small", n, len(got), len(want))
		}
		back, err := theirs.Decode(nil, got)
		if err != nil {
			t.Fatalf("%d bytes: decode: %v", n, err)
		}
		if !bytes.Equal(back, src) {
			t.Fatalf("%d bytes: round trip differs", n)
		}
		back, err = ours.Decode(back[:0], got)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("%d bytes: own decode: %v", n, err)
		}
	}
}

// BenchmarkZstdEncode compresses a 256 KiB page with the writers' codec and
// with parquet-go's.
func BenchmarkZstdEncode(b *testing.B) {
	src := pageLike(256<<10, 9)
	for _, c := range []struct {
		name  string
		codec interface {
			Encode(dst, src []byte) ([]byte, error)
		}
	}{{"trawl", newZstdCodec(pqzstd.SpeedDefault)}, {"parquet-go", &pqzstd.Codec{Level: pqzstd.SpeedDefault}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = c.codec.Encode(dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestZstdCodecKeepsEncoders checks that an encoder outlives garbage
// collections (a sync.Pool would drop it) and that at most
// maxIdleEncoders are kept when more compressions ran at once.
func TestZstdCodecKeepsEncoders(t *testing.T) {
	c := newZstdCodec(pqzstd.SpeedFastest)
	src := pageLike(64<<10, 1)
	if _, err := c.Encode(nil, src); err != nil {
		t.Fatal(err)
	}
	first := c.take()
	if first == nil {
		t.Fatal("no idle encoder after a compression")
	}
	c.give(first)
	runtime.GC()
	runtime.GC()
	if _, err := c.Encode(nil, src); err != nil {
		t.Fatal(err)
	}
	if e := c.take(); e != first {
		t.Fatal("the encoder was not reused after garbage collections")
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 3 * maxIdleEncoders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := c.Encode(nil, src); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := len(c.idle); n < 1 || n > maxIdleEncoders {
		t.Fatalf("%d idle encoders kept, want 1 to %d", n, maxIdleEncoders)
	}
}
