package crawldb_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/storage"
)

// seqOf iterates over datums without errors.
func seqOf(ds []crawldb.Datum) func(yield func(crawldb.Datum, error) bool) {
	return func(yield func(crawldb.Datum, error) bool) {
		for _, d := range ds {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func dump(t *testing.T, format string, ds []crawldb.Datum, f crawldb.DumpFilter) ([]byte, int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := crawldb.NewDumpWriter(format, &buf)
	if err != nil {
		t.Fatal(err)
	}
	n, err := crawldb.Dump(context.Background(), seqOf(ds), f, w)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

func TestDumpCSV(t *testing.T) {
	ds := crawldbtest.SampleDatums(200, 20)
	out, n := dump(t, "csv", ds, crawldb.DumpFilter{})
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if n != 200 || len(recs) != 201 || !slices.Equal(recs[0], crawldb.CSVHeader()) {
		t.Fatalf("n %d, %d records, header %v", n, len(recs), recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, d := range ds {
		r := recs[i+1]
		get := func(name string) string { return r[col[name]] }
		if get("url") != d.URL || get("status") != d.Status.String() || get("status_code") != strconv.Itoa(int(d.Status)) {
			t.Fatalf("row %d: %v", i, r)
		}
		if ft := get("fetch_time"); d.FetchTime.IsZero() != (ft == "") {
			t.Errorf("row %d: fetch_time %q for %v", i, ft, d.FetchTime)
		} else if ft != "" {
			pt, err := time.Parse(time.RFC3339Nano, ft)
			if err != nil || !pt.Equal(d.FetchTime) {
				t.Errorf("row %d: fetch_time %q (%v), want %v", i, ft, err, d.FetchTime)
			}
		}
		if sc, _ := strconv.ParseFloat(get("score"), 32); float32(sc) != d.Score {
			t.Errorf("row %d: score %s, want %v", i, get("score"), d.Score)
		}
		if sig, _ := hex.DecodeString(get("signature")); !bytes.Equal(sig, d.Signature) {
			t.Errorf("row %d: signature %s", i, get("signature"))
		}
		if get("features.bytes") != strconv.FormatInt(d.Features.Bytes, 10) || get("features.words") != strconv.Itoa(int(d.Features.Words)) {
			t.Errorf("row %d: features %v", i, r)
		}
		// The history string parses back to the history.
		var hist []crawldb.Observation
		for _, f := range strings.Fields(get("history")) {
			tm, err := time.Parse(time.RFC3339Nano, f[:len(f)-1])
			if err != nil {
				t.Fatalf("row %d: history %q: %v", i, get("history"), err)
			}
			hist = append(hist, crawldb.Observation{Time: tm, Changed: f[len(f)-1] == '+'})
		}
		if len(hist) != len(d.History) {
			t.Fatalf("row %d: history %q has %d entries, want %d", i, get("history"), len(hist), len(d.History))
		}
		for j := range hist {
			if !hist[j].Time.Equal(d.History[j].Time) || hist[j].Changed != d.History[j].Changed {
				t.Errorf("row %d: history[%d] %+v, want %+v", i, j, hist[j], d.History[j])
			}
		}
		var md map[string]string
		if s := get("metadata"); s != "" {
			if err := json.Unmarshal([]byte(s), &md); err != nil {
				t.Fatalf("row %d: metadata %q: %v", i, s, err)
			}
		}
		if len(md) != len(d.Metadata) || (len(md) > 0 && md["k"] != d.Metadata["k"]) {
			t.Errorf("row %d: metadata %v, want %v", i, md, d.Metadata)
		}
	}

	// An empty dump is just the header.
	out, _ = dump(t, "csv", nil, crawldb.DumpFilter{})
	if string(out) != strings.Join(crawldb.CSVHeader(), ",")+"\n" {
		t.Errorf("empty CSV %q", out)
	}
}

func TestDumpJSON(t *testing.T) {
	ds := crawldbtest.SampleDatums(100, 21)
	ds[0].Score = float32(math.NaN())
	out, n := dump(t, "json", ds, crawldb.DumpFilter{})
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if n != 100 || len(lines) != 100 {
		t.Fatalf("n %d, %d lines", n, len(lines))
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		d := ds[i]
		if m["url"] != d.URL || m["status"] != d.Status.String() || m["schedule_source"] != string(d.Source) {
			t.Errorf("line %d: %s", i, line)
		}
		if d.FetchTime.IsZero() {
			if m["fetch_time"] != nil {
				t.Errorf("line %d: fetch_time %v for never", i, m["fetch_time"])
			}
		} else if s, _ := m["fetch_time"].(string); s == "" {
			t.Errorf("line %d: fetch_time %v", i, m["fetch_time"])
		} else if pt, err := time.Parse(time.RFC3339Nano, s); err != nil || !pt.Equal(d.FetchTime) {
			t.Errorf("line %d: fetch_time %q", i, s)
		}
		if i == 0 && m["score"] != nil {
			t.Errorf("NaN score encoded as %v", m["score"])
		}
		if h, _ := m["history"].([]any); len(h) != len(d.History) {
			t.Errorf("line %d: history %v", i, m["history"])
		}
		f, _ := m["features"].(map[string]any)
		if f["words"] != float64(d.Features.Words) || f["bytes"] != float64(d.Features.Bytes) {
			t.Errorf("line %d: features %v", i, m["features"])
		}
		if md, _ := m["metadata"].(map[string]any); len(md) != len(d.Metadata) {
			t.Errorf("line %d: metadata %v", i, m["metadata"])
		}
	}
}

func TestDumpParquet(t *testing.T) {
	ds := crawldbtest.SampleDatums(700, 22) // > the writer's batch
	out, n := dump(t, "parquet", ds, crawldb.DumpFilter{})
	if n != 700 {
		t.Fatalf("n %d", n)
	}
	path := filepath.Join(t.TempDir(), "dump.parquet")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := crawldbtest.ReadParquetGo[crawldb.Datum](path)
	if err != nil {
		t.Fatal(err)
	}
	if err := crawldbtest.DiffRows(ds, got); err != nil {
		t.Error(err)
	}
	tbl, err := crawldbtest.ReadArrow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if err := crawldbtest.DiffArrow(ds, tbl); err != nil {
		t.Error(err)
	}
	// The dump is a valid CrawlDB part.
	db := filepath.Join(t.TempDir(), "crawldb")
	os.MkdirAll(crawldb.Current(db), 0o755)
	os.WriteFile(filepath.Join(crawldb.Current(db), "part-r-00000.parquet"), out, 0o644)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		t.Fatal(err)
	}
	d, ok, err := r.Get(context.Background(), ds[350].URL)
	if err != nil || !ok || d.URL != ds[350].URL {
		t.Errorf("Get from dump: %v %v", ok, err)
	}
}

func TestDumpFilters(t *testing.T) {
	ds := crawldbtest.SampleDatums(500, 23)
	cases := []struct {
		status, regex string
		limit         int64
	}{
		{"db_fetched", "", 0},
		{"DB_GONE", "", 0},
		{"", `/p/0000001\d$`, 0},
		{"db_unfetched", `^http://h00[0-4]\.`, 0},
		{"", "", 7},
		{"db_fetched", "", 3},
	}
	for _, c := range cases {
		f, err := crawldb.NewDumpFilter(c.status, c.regex, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, d := range ds {
			if f.Match(&d) && (c.limit == 0 || int64(len(want)) < c.limit) {
				want = append(want, d.URL)
			}
		}
		if len(want) == 0 || (c.limit == 0 && len(want) == len(ds)) {
			t.Fatalf("%+v: filter selects %d of %d: a useless case", c, len(want), len(ds))
		}
		out, n := dump(t, "json", ds, f)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m struct {
				URL    string `json:"url"`
				Status string `json:"status"`
			}
			json.Unmarshal([]byte(line), &m)
			got = append(got, m.URL)
			if c.status != "" && m.Status != strings.ToLower(c.status) {
				t.Errorf("%+v: %s has status %s", c, m.URL, m.Status)
			}
		}
		if n != int64(len(want)) || !slices.Equal(got, want) {
			t.Errorf("%+v: got %d %v, want %v", c, n, got, want)
		}
	}
	for _, bad := range [][2]string{{"db_nonsense", ""}, {"", "("}} {
		if _, err := crawldb.NewDumpFilter(bad[0], bad[1], 0); err == nil {
			t.Errorf("bad filter %v accepted", bad)
		}
	}
	if _, err := crawldb.NewDumpFilter("", "", -1); err == nil {
		t.Error("negative limit accepted")
	}
	if _, err := crawldb.NewDumpWriter("xml", io.Discard); err == nil {
		t.Error("xml format accepted")
	}
}

func TestTop(t *testing.T) {
	ds := crawldbtest.SampleDatums(3000, 24)
	// Ties: several datums share a score.
	for i := 0; i < 50; i++ {
		ds[i*7].Score = 9.5
	}
	ds[3].Score = float32(math.NaN())
	for _, n := range []int{0, 1, 10, 60, 5000} {
		got, err := crawldb.Top(context.Background(), seqOf(ds), n)
		if err != nil {
			t.Fatal(err)
		}
		var all []crawldb.ScoredURL
		for _, d := range ds {
			if !math.IsNaN(float64(d.Score)) {
				all = append(all, crawldb.ScoredURL{URL: d.URL, Score: d.Score})
			}
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].Score != all[j].Score {
				return all[i].Score > all[j].Score
			}
			return all[i].URL < all[j].URL
		})
		want := all[:min(n, len(all))]
		if !slices.Equal(got, want) {
			t.Errorf("Top(%d): got %d, first %v; want %d, first %v", n, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
		}
	}
	// Merge of partial TopNs equals the whole.
	a, b, whole := crawldb.NewTopN(25), crawldb.NewTopN(25), crawldb.NewTopN(25)
	for i, d := range ds {
		whole.Add(d.URL, d.Score)
		if i%2 == 0 {
			a.Add(d.URL, d.Score)
		} else {
			b.Add(d.URL, d.Score)
		}
	}
	a.Merge(b)
	if !slices.Equal(a.Result(), whole.Result()) {
		t.Error("merged TopN differs")
	}
}

func benchmarkDump(b *testing.B, format string) {
	ds := crawldbtest.SampleDatums(1024, 25)
	w, err := crawldb.NewDumpWriter(format, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := w.Write(&ds[i%len(ds)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkDumpCSV(b *testing.B)     { benchmarkDump(b, "csv") }
func BenchmarkDumpJSON(b *testing.B)    { benchmarkDump(b, "json") }
func BenchmarkDumpParquet(b *testing.B) { benchmarkDump(b, "parquet") }

func BenchmarkReaderAll(b *testing.B) {
	ds := crawldbtest.SampleDatums(20000, 26)
	db := writeDB(b, ds, 4, 5000)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range r.All(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != len(ds) {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(len(ds)), "rows/op")
}
