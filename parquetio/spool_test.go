package parquetio

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestSpoolBuffer writes a page buffer across its in-memory part into its
// file, reads it back by Read and by WriteTo, and checks that released
// buffers leave no file behind and lend their memory to the next one.
func TestSpoolBuffer(t *testing.T) {
	dir := t.TempDir()
	pool := &spoolPool{dir: dir}
	r := rand.New(rand.NewPCG(1, 2))
	want := make([]byte, 3*spoolMemory+12345)
	for i := range want {
		want[i] = byte(r.IntN(256))
	}
	b := pool.GetBuffer()
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	for rest := want; len(rest) > 0; {
		n := min(len(rest), 1+r.IntN(20000))
		if k, err := b.Write(rest[:n]); err != nil || k != n {
			t.Fatalf("write %d: %d, %v", n, k, err)
		}
		rest = rest[n:]
	}
	if ents, _ := os.ReadDir(dir); runtime.GOOS == "linux" && len(ents) != 0 {
		t.Errorf("spill file visible in %s: %v (should be unlinked)", dir, ents)
	}
	if end, err := b.Seek(0, io.SeekEnd); err != nil || end != int64(len(want)) {
		t.Fatalf("size %d, %v; want %d", end, err, len(want))
	}
	// Read in small pieces.
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var got []byte
	p := make([]byte, 7777)
	for {
		n, err := b.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Read gave %d bytes, not the %d written", len(got), len(want))
	}
	// WriteTo from the middle of the in-memory part.
	if _, err := b.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := io.Copy(&out, b); err != nil || n != int64(len(want)-100) || !bytes.Equal(out.Bytes(), want[100:]) {
		t.Fatalf("WriteTo: %d bytes, %v", n, err)
	}
	if _, err := b.Write([]byte("x")); err != nil {
		t.Fatalf("write at the end after reading: %v", err)
	}
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("overwrite accepted")
	}
	if _, err := b.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("seek before the start accepted")
	}
	mem := b.(*spoolBuffer).mem
	pool.PutBuffer(b)
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("write after release accepted")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("released buffer left %v", ents)
	}
	b2 := pool.GetBuffer().(*spoolBuffer)
	if b2.size != 0 || len(b2.mem) != 0 || &b2.mem[:1][0] != &mem[:1][0] {
		t.Errorf("next buffer: size %d, mem %d bytes, reused %v", b2.size, len(b2.mem), &b2.mem[:1][0] == &mem[:1][0])
	}
}

// TestSpooledWriterSameBytes writes one large row group through the
// spooling writer and through parquet-go's in-memory page buffers: the files
// are the same bytes, and no spill file is left.
func TestSpooledWriterSameBytes(t *testing.T) {
	dir := t.TempDir()
	recs := makeRecs(60000, 5)
	var spooled bytes.Buffer
	w := NewWriter[rec](&spooled, SpoolDir(dir), Metadata("k", "v"))
	for i := 0; i < len(recs); i += 1000 {
		if err := w.Write(recs[i : i+1000]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := newWriterConfig([]WriterOption{Metadata("k", "v")})
	var inMemory bytes.Buffer
	popts, err := cfg.parquetOptions()
	if err != nil {
		t.Fatal(err)
	}
	pw := parquet.NewGenericWriter[rec](&inMemory, append(popts, parquet.ColumnPageBuffers(parquet.NewBufferPool()))...)
	for i := 0; i < len(recs); i += 1000 {
		if _, err := pw.Write(recs[i : i+1000]); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(spooled.Bytes(), inMemory.Bytes()) {
		t.Fatalf("spooled file (%d bytes) differs from the in-memory one (%d bytes)", spooled.Len(), inMemory.Len())
	}
	r, err := Open[rec](memFile{bytes.NewReader(spooled.Bytes())}, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRowGroups() != 1 || r.NumRows() != int64(len(recs)) || r.RowGroupBytes(0) < 4*spoolMemory {
		t.Fatalf("%d row groups, %d rows, %d bytes: the test should spool", r.NumRowGroups(), r.NumRows(), r.RowGroupBytes(0))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spill files left: %v", ents)
	}
}

// BenchmarkWriteSpooled writes 100,000 rows as one row group, most of whose
// pages go through the spool files.
func BenchmarkWriteSpooled(b *testing.B) {
	recs := makeRecs(100000, 8)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		w := NewWriter[rec](discard{}, SpoolDir(dir))
		for i := 0; i < len(recs); i += 1000 {
			if err := w.Write(recs[i : i+1000]...); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "rows/s")
}
