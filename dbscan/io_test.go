package dbscan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// readCSVSeq is ReadCSV as it was before it parsed in parallel: every
// row through encoding/csv. TestReadCSVChunks holds the parallel reader
// to its points and its errors.
func readCSVSeq(r io.Reader, name string) (Points, []string, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return Points{}, nil, err
	}
	header = append([]string(nil), header...)
	for i, h := range header {
		header[i] = strings.TrimSpace(h)
	}
	pts := NewPoints(len(header), 16)
	row := make([]float64, len(header))
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return pts, header, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return Points{}, nil, fmt.Errorf("dbscan: %s:%d: %w", name, pe.Line, pe.Err)
			}
			return Points{}, nil, fmt.Errorf("dbscan: %s: %w", name, err)
		}
		for i, f := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				line, _ := cr.FieldPos(i)
				return Points{}, nil, fmt.Errorf("dbscan: %s:%d: column %q: %q is not a finite number", name, line, header[i], f)
			}
			row[i] = v
		}
		pts.Data = append(pts.Data, row...)
	}
}

// TestReadCSVChunks reads CSV inputs in chunks of many sizes on 1 to 4
// goroutines and checks the points, or the error, against readCSVSeq:
// long inputs, spaces, CRLF line ends, empty lines, no final newline,
// bad values and field counts far into the input, quoted fields (which
// switch to encoding/csv) and a header spanning lines.
func TestReadCSVChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var rows strings.Builder
	for i := range 3000 {
		sep := []string{",", ", ", " ,", ",\t"}[i%4]
		fmt.Fprintf(&rows, "%v%s%v%s %v", r.NormFloat64()*1e3, sep, r.Float64(), sep, float64(i))
		switch i % 97 {
		case 5:
			rows.WriteString("\r\n")
		case 11:
			rows.WriteString("\n\n")
		case 13:
			rows.WriteString("\r\n\r\n")
		default:
			rows.WriteString("\n")
		}
	}
	body := rows.String()
	lines := strings.SplitAfter(body, "\n")
	at := func(line int, s string) string { // s in place of line (1-based, after the header)
		l := append([]string(nil), lines...)
		l[line-1] = s
		return strings.Join(l, "")
	}
	inputs := map[string]string{
		"plain":        "a,b,c\n" + body,
		"no final nl":  "a, b ,c\n" + strings.TrimSuffix(body, "\n"),
		"crlf header":  "a,b,c\r\n" + body,
		"bad value":    "a,b,c\n" + at(2500, "1,2,x\n"),
		"nan":          "a,b,c\n" + at(1700, "1,NaN,3\n"),
		"empty field":  "a,b,c\n" + at(2900, ",2,3\n"),
		"few fields":   "a,b,c\n" + at(2000, "1,2\n"),
		"many fields":  "a,b,c\n" + at(10, "1,2,3,4\n"),
		"quoted":       "a,b,c\n" + at(1500, `"1", "2",3`+"\n"),
		"quoted bad":   "a,b,c\n" + at(1500, `"1",2,3`+"\n") + "1,2,zz\n",
		"quoted nl":    "a,b,c\n" + at(1500, "\"1\n\",2,3\n"),
		"bare quote":   "a,b,c\n" + at(2100, `1,2"",3`+"\n"),
		"header lines": "\"a\nx\",b,c\n" + at(2222, "1,2,3,4\n"),
		"only header":  "a,b,c\n",
		"empty lines":  "a,b,c\n\n\n\r\n",
		"spaces line":  "a,b,c\n" + at(300, " \n"),
		"one column":   "a\n1\n\n2\n 3 \n",
	}
	for name, in := range inputs {
		want, wantHeader, wantErr := readCSVSeq(strings.NewReader(in), "in.csv")
		for _, chunk := range []int{1, 7, 100, 4096, 1 << 20} {
			for _, workers := range []int{1, 2, 4} {
				br := bufio.NewReaderSize(strings.NewReader(in), 1<<16)
				cr := csv.NewReader(br)
				cr.TrimLeadingSpace = true
				header, err := cr.Read()
				if err != nil {
					t.Fatal(err)
				}
				last, _ := cr.FieldPos(len(header) - 1)
				last += strings.Count(header[len(header)-1], "\n")
				for i, h := range header {
					header[i] = strings.TrimSpace(h)
				}
				rr := &csvRows{name: "in.csv", header: header, workers: workers, chunk: chunk}
				if workers == 2 {
					rr.size = int64(len(in)) // allocate the points once
				}
				got, err := rr.read(br, last+1)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("%s, chunks of %d on %d: error %v, want %v", name, chunk, workers, err, wantErr)
				}
				if err == nil && (got.Dim != want.Dim || !slices.Equal(got.Data, want.Data)) {
					t.Fatalf("%s, chunks of %d on %d: %d values, want %d", name, chunk, workers, len(got.Data), len(want.Data))
				}
			}
		}
		// And through ReadCSV itself.
		got, header, err := ReadCSV(strings.NewReader(in), "in.csv")
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || (err == nil && (!slices.Equal(header, wantHeader) || !slices.Equal(got.Data, want.Data))) {
			t.Fatalf("%s: ReadCSV: %v (header %v, %d values), want %v (%v, %d)", name, err, header, len(got.Data), wantErr, wantHeader, len(want.Data))
		}
		if name == "plain" && len(want.Data) != 9000 {
			t.Fatalf("plain: %d values", len(want.Data))
		}
	}
}

// errReader fails after its data.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// TestReadCSVReadError checks that a failing reader is an error naming
// the input, however far in.
func TestReadCSVReadError(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b\n")
	for i := range 200000 {
		fmt.Fprintf(&b, "%d,%d\n", i, -i)
	}
	_, _, err := ReadCSV(&errReader{[]byte(b.String()), errors.New("disk on fire")}, "in.csv")
	if err == nil || !strings.Contains(err.Error(), "in.csv:") || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("error %v", err)
	}
}

// panicReader panics after its data.
type panicReader struct{ data []byte }

func (p *panicReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		panic("reader gone")
	}
	n := copy(b, p.data)
	p.data = p.data[n:]
	return n, nil
}

// TestReadCSVReaderPanics checks that a reader that panics mid-file is an
// error naming the input, not a crash.
func TestReadCSVReaderPanics(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b\n")
	for i := range 300000 {
		fmt.Fprintf(&b, "%d,%d\n", i, i)
	}
	_, _, err := ReadCSV(&panicReader{[]byte(b.String())}, "in.csv")
	if err == nil || !strings.Contains(err.Error(), "in.csv") || !strings.Contains(err.Error(), "reader gone") {
		t.Fatalf("error %v", err)
	}
}
