package dbscan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

func TestReadCSV(t *testing.T) {
	pts, header, err := ReadCSV(strings.NewReader("a, b ,c\n1,2,3\n -4.5e1 , 0x1p4, 6\n\n7,8,9\n"), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header, []string{"a", "b", "c"}) || pts.Dim != 3 || !slices.Equal(pts.Data, []float64{1, 2, 3, -45, 16, 6, 7, 8, 9}) {
		t.Fatalf("header %v points %+v", header, pts)
	}
	if pts, _, err := ReadCSV(strings.NewReader("x\n"), "h.csv"); err != nil || pts.Len() != 0 {
		t.Fatalf("header only: %v %v", pts, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "bad.csv: empty"},
		{"1,2\n3,4\n", "bad.csv:1: the first row should be a header"},
		{"a,b\n1,2\n3,x\n", `bad.csv:3: column "b": "x" is not a finite number`},
		{"a,b\n1,2\n3,NaN\n", `bad.csv:3: column "b"`},
		{"a,b\n1,2\n3,+Inf\n", `bad.csv:3: column "b"`},
		{"a,b\n1,2\n3\n", "bad.csv:3: wrong number of fields"},
		{"a,b\n1,2\n,4\n", `bad.csv:3: column "a": "" is not`},
	} {
		_, _, err := ReadCSV(strings.NewReader(c.in), "bad.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.want)
		}
	}
}

type parquetPoints struct {
	URL   string   `parquet:"url"`
	Words int32    `parquet:"words"`
	Bytes int64    `parquet:"bytes"`
	F32   float32  `parquet:"f32"`
	F64   float64  `parquet:"f64"`
	Opt   *float64 `parquet:"opt,optional"`
	Tags  []string `parquet:"tags,list"`
}

func writeParquet[T any](t *testing.T, p string, rows []T) {
	t.Helper()
	f, err := storage.NewLocal().Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquetio.NewWriter[T](f)
	if err := w.Write(rows...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	one := 1.5
	rows := []parquetPoints{
		{URL: "u1", Words: 10, Bytes: 1 << 40, F32: 0.5, F64: -2, Opt: &one, Tags: []string{"x"}},
		{URL: "u2", Words: -3, Bytes: 7, F32: 1.25, F64: 3, Opt: &one},
		{URL: "u3", Words: 0, Bytes: 0, F32: 2, F64: 1e-300},
	}
	p := filepath.Join(dir, "p.parquet")
	writeParquet(t, p, rows)
	res := storage.NewResolver()
	pts, cols, err := ReadPoints(res, p, []string{"f64", "words"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cols, []string{"f64", "words"}) || !slices.Equal(pts.Data, []float64{-2, 10, 3, -3, 1e-300, 0}) {
		t.Fatalf("columns %v points %v", cols, pts.Data)
	}
	// All numeric columns: opt has a null in row 2.
	_, _, err = ReadPoints(res, p, nil)
	if err == nil || !strings.Contains(err.Error(), `row 2, column "opt": null`) {
		t.Fatalf("null: %v", err)
	}
	pts, cols, err = ReadPoints(res, p, []string{"words", "bytes", "f32"})
	if err != nil || pts.Len() != 3 || pts.At(0)[1] != 1<<40 || pts.At(1)[2] != 1.25 {
		t.Fatalf("%v %v %v", pts, cols, err)
	}
	for _, c := range []struct {
		cols []string
		want string
	}{
		{[]string{"nope"}, `no top-level column "nope"`},
		{[]string{"url"}, `column "url": type BYTE_ARRAY is not numeric`},
		{[]string{"words", "words"}, `column "words" given twice`},
	} {
		if _, _, err := ReadPoints(res, p, c.cols); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.cols, err, c.want)
		}
	}
	// A directory of parts reads as one set, in name order.
	writeParquet(t, filepath.Join(dir, "d", "part-0.parquet"), rows[:2])
	writeParquet(t, filepath.Join(dir, "d", "part-1.parquet"), rows[2:])
	pts, _, err = ReadPoints(res, filepath.Join(dir, "d"), []string{"words"})
	if err != nil || !slices.Equal(pts.Data, []float64{10, -3, 0}) {
		t.Fatalf("directory: %v %v", pts.Data, err)
	}
	// Corrupt files are errors, not panics.
	data, _ := os.ReadFile(p)
	for i, bad := range [][]byte{data[:len(data)/2], append(append([]byte{}, data[:40]...), bytes.Repeat([]byte{0xff}, len(data)-40)...), []byte("PAR1")} {
		bp := filepath.Join(dir, "bad"+string(rune('0'+i))+".parquet")
		os.WriteFile(bp, bad, 0o644)
		if _, _, err := ReadPoints(res, bp, nil); err == nil {
			t.Errorf("corrupt file %d read without error", i)
		}
	}
}

// TestOfflineFlow is what `trawl dbscan` does with the partitioned jobs:
// CSV in, PointRow Parquet for the jobs, labels CSV in input order out,
// equal to Cluster's.
func TestOfflineFlow(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("x,y\n")
	src := genBlobs(randFor(41), 1500, 2, 4, 0.2)
	for i := range src.Len() {
		csv.WriteString(strings.Join([]string{fmtFloat(src.At(i)[0]), fmtFloat(src.At(i)[1])}, ",") + "\n")
	}
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644)
	res := storage.NewResolver()
	pts, cols, err := ReadPoints(res, filepath.Join(dir, "in.csv"), []string{"y", "x"})
	if err != nil || !slices.Equal(cols, []string{"y", "x"}) {
		t.Fatal(cols, err)
	}
	f, err := os.Create(filepath.Join(dir, "points.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePointRows(f, pts); err != nil {
		t.Fatal(err)
	}
	f.Close()
	env := testEnv(t)
	cfg := JobConfig{Source: Source{Points: filepath.Join(dir, "points.parquet")}, Work: filepath.Join(dir, "w"), Output: filepath.Join(dir, "o"),
		Eps: 0.5, MinPts: 5, Partitions: 6, Reduces: 3}
	if _, err := Run(context.Background(), env, cfg); err != nil {
		t.Fatal(err)
	}
	as, err := ReadAssignments(res, cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := LabelsOf(as, pts.Len())
	if err != nil {
		t.Fatal(err)
	}
	want, err := Cluster(context.Background(), pts, Params{Eps: cfg.Eps, MinPts: cfg.MinPts})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(labels, want.Labels) {
		t.Fatal("labels differ from Cluster's")
	}
	var out bytes.Buffer
	if err := WriteLabelsCSV(&out, labels); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != pts.Len()+1 || lines[0] != "label" {
		t.Fatalf("labels CSV: %d lines, first %q", len(lines), lines[0])
	}
	back, _, err := ReadCSV(strings.NewReader(out.String()), "labels.csv")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range want.Labels {
		if back.Data[i] != float64(l) {
			t.Fatalf("line %d: %v, want %d", i+2, back.Data[i], l)
		}
	}
	if _, err := LabelsOf(as[1:], pts.Len()); err == nil {
		t.Fatal("a missing assignment should fail")
	}
}
