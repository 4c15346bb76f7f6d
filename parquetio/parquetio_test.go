package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

type obs struct {
	Time    time.Time `parquet:"time,timestamp(millisecond)"`
	Changed bool      `parquet:"changed"`
}

type rec struct {
	URL     string            `parquet:"url"`
	Host    string            `parquet:"host,dict"`
	N       int32             `parquet:"n"`
	Big     int64             `parquet:"big"`
	Score   float32           `parquet:"score"`
	Sig     []byte            `parquet:"sig,optional"`
	When    time.Time         `parquet:"when,timestamp(millisecond)"`
	History []obs             `parquet:"history,list"`
	Meta    map[string]string `parquet:"meta"`
}

type other struct {
	URL string `parquet:"url"`
	N   string `parquet:"n"`
}

type subset struct {
	URL string `parquet:"url"`
	N   int32  `parquet:"n"`
}

func makeRecs(n int, seed uint64) []rec {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]rec, n)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range out {
		out[i] = rec{
			URL:   fmt.Sprintf("http://h%03d.sim.test/page/%d", r.IntN(50), i),
			Host:  fmt.Sprintf("h%03d.sim.test", r.IntN(50)),
			N:     int32(r.IntN(1000)),
			Big:   r.Int64(),
			Score: r.Float32(),
			When:  base.Add(time.Duration(r.IntN(1e6)) * time.Millisecond),
		}
		if i%3 == 0 {
			out[i].Sig = []byte{byte(i), byte(i >> 8), 7}
		}
		for j := 0; j < i%4; j++ {
			out[i].History = append(out[i].History, obs{Time: base.Add(time.Duration(j) * time.Hour), Changed: j%2 == 0})
		}
		if i%5 == 0 {
			out[i].Meta = map[string]string{"k": fmt.Sprint(i), "z": "v"}
		}
	}
	return out
}

func normalize(rs []rec) {
	for i := range rs {
		if len(rs[i].Sig) == 0 {
			rs[i].Sig = nil
		}
		if len(rs[i].History) == 0 {
			rs[i].History = nil
		}
		if len(rs[i].Meta) == 0 {
			rs[i].Meta = nil
		}
		rs[i].When = rs[i].When.UTC()
		for j := range rs[i].History {
			rs[i].History[j].Time = rs[i].History[j].Time.UTC()
		}
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	want := makeRecs(5000, 1)
	if err := WriteFile(dirFS{}, path, want, RowGroupRows(1000)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[rec](dirFS{}, path)
	if err != nil {
		t.Fatal(err)
	}
	normalize(want)
	normalize(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs: got %d rows, want %d; first got %+v want %+v", len(got), len(want), got[0], want[0])
	}
	f, _ := dirFS{}.Open(path)
	r, err := Open[rec](f, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRowGroups() != 5 || r.NumRows() != 5000 {
		t.Fatalf("row groups %d rows %d, want 5 and 5000", r.NumRowGroups(), r.NumRows())
	}
	// A row-group range reads exactly those rows.
	var mid []rec
	for row, err := range r.Rows(2, 4) {
		if err != nil {
			t.Fatal(err)
		}
		mid = append(mid, row)
	}
	normalize(mid)
	if !reflect.DeepEqual(mid, want[2000:4000]) {
		t.Fatalf("Rows(2,4) gave %d rows, not rows 2000..4000", len(mid))
	}
	// Stopping early is fine.
	n := 0
	for range r.Rows(0, 1) {
		n++
		if n == 10 {
			break
		}
	}
	if n != 10 {
		t.Fatalf("early break: %d", n)
	}
	// An out-of-range request is an error, not a panic.
	var rangeErr error
	for _, err := range r.Rows(3, 9) {
		rangeErr = err
	}
	if rangeErr == nil {
		t.Fatal("Rows(3,9) on 5 row groups: no error")
	}
}

func TestRowGroupBytes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter[rec](&buf, RowGroupBytes(64<<10))
	recs := makeRecs(20000, 2)
	for i := 0; i < len(recs); i += 100 {
		if err := w.Write(recs[i : i+100]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open[rec](memFile{bytes.NewReader(buf.Bytes())}, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRowGroups() < 3 || r.NumRows() != 20000 {
		t.Fatalf("row groups %d rows %d: byte bound not applied", r.NumRowGroups(), r.NumRows())
	}
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func TestEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.parquet")
	if err := WriteFile[rec](dirFS{}, path, nil); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[rec](dirFS{}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("got %d rows from an empty file", len(got))
	}
	tbl := readArrow(t, path)
	if tbl != 0 {
		t.Fatalf("arrow read %d rows from empty file", tbl)
	}
}

func TestSchemaMismatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	if err := WriteFile(dirFS{}, path, makeRecs(10, 3)); err != nil {
		t.Fatal(err)
	}
	_, err := ReadAll[other](dirFS{}, path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "n is") {
		t.Fatalf("want a schema error naming the file and column, got %v", err)
	}
	type missing struct {
		URL   string `parquet:"url"`
		Extra int64  `parquet:"extra"`
	}
	_, err = ReadAll[missing](dirFS{}, path)
	if err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("want a missing-column error, got %v", err)
	}
	f, _ := dirFS{}.Open(path)
	r, err := Open[missing](f, path, AllowMissingColumns())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if row.URL == "" || row.Extra != 0 {
			t.Fatalf("bad row %+v", row)
		}
		n++
	}
	r.Close()
	if n != 10 {
		t.Fatalf("read %d rows", n)
	}
	// A subset of the columns is fine.
	sub, err := ReadAll[subset](dirFS{}, path)
	if err != nil || len(sub) != 10 {
		t.Fatalf("subset read: %d rows, %v", len(sub), err)
	}
}

// TestCorrupt flips bytes and truncates a valid file at many points: every
// read must give an error naming the file or valid rows, never a panic.
func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	want := makeRecs(3000, 4)
	if err := WriteFile(dirFS{}, good, want, RowGroupRows(700)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	try := func(name string, b []byte) (rows int, err error) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		got, err := ReadAll[rec](dirFS{}, path)
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
		return len(got), err
	}
	// Truncations: all must fail (the footer is at the end).
	for _, cut := range []int{0, 1, 3, 4, 7, 8, 100, len(data) / 3, len(data) / 2, len(data) - 9, len(data) - 8, len(data) - 5, len(data) - 1} {
		if _, err := try(fmt.Sprintf("trunc-%d.parquet", cut), data[:cut]); err == nil {
			t.Errorf("truncated at %d of %d: no error", cut, len(data))
		}
	}
	// Byte flips: an error, or (if the flip hit something unchecked) rows.
	r := rand.New(rand.NewPCG(9, 9))
	errs := 0
	for i := 0; i < 300; i++ {
		b := bytes.Clone(data)
		pos := r.IntN(len(b))
		if i%3 == 0 { // aim at the footer, where damage is most likely fatal
			pos = len(b) - 8 - r.IntN(min(len(b)-8, 2000))
		}
		b[pos] ^= byte(1 + r.IntN(255))
		if _, err := try(fmt.Sprintf("flip-%d.parquet", i), b); err != nil {
			errs++
		}
	}
	if errs == 0 {
		t.Fatal("no flipped file gave an error")
	}
	t.Logf("%d of 300 byte flips detected", errs)
}

// TestArrowReadsOurFiles reads a written file with Arrow's Go Parquet reader.
func TestArrowReadsOurFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	want := makeRecs(2500, 5)
	if err := WriteFile(dirFS{}, path, want, RowGroupRows(1000)); err != nil {
		t.Fatal(err)
	}
	if n := readArrow(t, path); n != int64(len(want)) {
		t.Fatalf("arrow read %d rows, want %d", n, len(want))
	}
}

func readArrow(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 512}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow read table: %v", err)
	}
	defer tbl.Release()
	sc := tbl.Schema()
	for _, name := range []string{"url", "host", "n", "big", "score", "sig", "when", "history", "meta"} {
		if len(sc.FieldIndices(name)) != 1 {
			t.Fatalf("arrow schema lacks %q: %v", name, sc)
		}
	}
	if tbl.NumRows() > 0 {
		col := tbl.Column(sc.FieldIndices("url")[0])
		if col.Len() != int(tbl.NumRows()) {
			t.Fatalf("url column len %d", col.Len())
		}
	}
	return tbl.NumRows()
}

func BenchmarkWrite(b *testing.B) {
	recs := makeRecs(10000, 6)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w := NewWriter[rec](discard{})
		if err := w.Write(recs...); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	recs := makeRecs(10000, 7)
	w := NewWriter[rec](&buf)
	if err := w.Write(recs...); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Open[rec](memFile{bytes.NewReader(buf.Bytes())}, "mem")
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range r.All() {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "rows/s")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
