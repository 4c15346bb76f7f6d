package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// runInProcess runs trawl in this process and returns its output and exit
// status.
func runInProcess(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env = append([]string{"HOME=" + t.TempDir()}, env...)
	code = run(context.Background(), append([]string{"trawl", "--log-level", "warn"}, args...), strings.NewReader(""), &out, &errb, env)
	return out.String(), errb.String(), code
}

// TestDBSCANCommand runs trawl dbscan on a CSV of three blobs and noise and
// compares its labels with dbscan.Cluster on the same points, as given and
// standardized, and with a column selection.
func TestDBSCANCommand(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	var csv strings.Builder
	csv.WriteString("x,y,z\n")
	var rows [][]float64
	for i := range 600 {
		var x, y float64
		switch {
		case i%10 == 9: // noise
			x, y = rng.Float64()*40-20, rng.Float64()*40-20
		default:
			c := float64(i % 3)
			x, y = 10*c+rng.NormFloat64(), 5*c+rng.NormFloat64()
		}
		z := rng.Float64() * 1000
		rows = append(rows, []float64{x, y, z})
		fmt.Fprintf(&csv, "%v,%v,%v\n", x, y, z)
	}
	in := filepath.Join(dir, "points.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := func(cols []int, standardize bool, eps float64, minPts int) []int32 {
		sel := make([][]float64, len(rows))
		for i, r := range rows {
			for _, c := range cols {
				sel[i] = append(sel[i], r[c])
			}
		}
		pts, err := dbscan.PointsFromRows(sel)
		if err != nil {
			t.Fatal(err)
		}
		if standardize {
			if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
				t.Fatal(err)
			}
		}
		res, err := dbscan.Cluster(context.Background(), pts, dbscan.Params{Eps: eps, MinPts: minPts})
		if err != nil {
			t.Fatal(err)
		}
		return res.Labels
	}
	readLabels := func(text string) []int32 {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if lines[0] != "label" {
			t.Fatalf("header %q", lines[0])
		}
		var out []int32
		for _, l := range lines[1:] {
			v, err := strconv.Atoi(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, int32(v))
		}
		return out
	}
	for _, c := range []struct {
		name  string
		args  []string
		cols  []int
		std   bool
		eps   float64
		minPt int
	}{
		{"x,y as given", []string{"--columns", "x,y", "--eps", "1", "--min-pts", "5"}, []int{0, 1}, false, 1, 5},
		{"y,x standardized", []string{"--columns", "y, x", "--standardize", "--eps", "0.15", "--min-pts", "8"}, []int{1, 0}, true, 0.15, 8},
		{"all columns standardized", []string{"--standardize", "--eps", "0.4", "--min-pts", "4"}, []int{0, 1, 2}, true, 0.4, 4},
	} {
		out := filepath.Join(dir, "labels.csv")
		_, stderr, code := runInProcess(t, nil, append([]string{"dbscan", "--input", in, "--output", out}, c.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, w := readLabels(string(data)), want(c.cols, c.std, c.eps, c.minPt)
		if len(got) != len(rows) {
			t.Fatalf("%s: %d labels for %d rows", c.name, len(got), len(rows))
		}
		clusters, noise := map[int32]bool{}, 0
		for i := range got {
			if got[i] != w[i] {
				t.Fatalf("%s: row %d label %d, dbscan.Cluster %d", c.name, i, got[i], w[i])
			}
			if got[i] < 0 {
				noise++
			} else {
				clusters[got[i]] = true
			}
		}
		if len(clusters) < 2 || noise == 0 {
			t.Errorf("%s: %d clusters, %d noise: the case tests little", c.name, len(clusters), noise)
		}
	}
	// To stdout.
	stdout, stderr, code := runInProcess(t, nil, "dbscan", "--input", in, "--columns", "x,y", "--eps", "1", "--min-pts", "5", "--output", "-")
	if code != 0 || !slicesEqual(readLabels(stdout), want([]int{0, 1}, false, 1, 5)) {
		t.Errorf("stdout run: exit %d %s", code, stderr)
	}
	// Errors: usage, a missing column, a bad row; no output file left.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x,y\n1,2\n3,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--input", in, "--eps", "1", "--output", "o.csv"}, exitUsage, "--min-pts is required"},
		{[]string{"--input", in, "--eps", "0", "--min-pts", "3", "--output", "o.csv"}, exitUsage, "eps"},
		{[]string{"--input", in, "--eps", "1", "--min-pts", "3", "--columns", "x,w", "--output", "o.csv"}, exitFailure, "w"},
		{[]string{"--input", bad, "--eps", "1", "--min-pts", "3", "--output", "o.csv"}, exitFailure, "bad.csv"},
		{[]string{"--input", filepath.Join(dir, "none.csv"), "--eps", "1", "--min-pts", "3", "--output", "o.csv"}, exitFailure, "none.csv"},
	} {
		_, stderr, code := runInProcess(t, nil, append([]string{"dbscan"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("dbscan %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o.csv")); err == nil {
		t.Error("a failed run wrote its output")
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// writeSyntheticCrawlDB writes a CrawlDB of fetched pages in three feature
// groups, with daily histories, into crawl/crawldb/current.
func writeSyntheticCrawlDB(t *testing.T, crawl string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	var rows []crawldb.Datum
	for i := range n {
		g := i % 3
		d := crawldb.Datum{
			URL:       fmt.Sprintf("http://h%d.example/g%d/p%05d.html", i%7, g, i),
			Host:      fmt.Sprintf("h%d.example", i%7),
			Status:    crawldb.StatusDBFetched,
			ClusterID: -1,
			Features: crawldb.Features{Words: int32(200*(g+1)*(g+1) + rng.IntN(20)), Outlinks: int32(10*(g+1) + rng.IntN(3)),
				Inlinks: int32(g + 1), Images: int32(g), Depth: 2, Bytes: int64(5000*(g+1)*(g+1) + rng.IntN(100))},
			FetchInterval: 86400,
			FetchTime:     t0.Add(24 * time.Hour),
		}
		for day := range 6 {
			d.Observe(t0.Add(time.Duration(day-5)*24*time.Hour), day > 0 && rng.IntN(g+2) == 0, time.Time{})
			d.FetchCount++
		}
		rows = append(rows, d)
	}
	slicesSortByURL(rows)
	cur := filepath.Join(crawl, "crawldb", crawldb.CurrentName)
	if err := parquetio.WriteFile(storage.NewLocal(), filepath.Join(cur, "part-r-00000.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cur, "_SUCCESS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func slicesSortByURL(rows []crawldb.Datum) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && rows[j].URL < rows[j-1].URL; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// TestClusterCommand runs trawl cluster --suggest-eps, trawl cluster and
// trawl readdb clusters on a synthetic CrawlDB.
func TestClusterCommand(t *testing.T) {
	crawl := filepath.Join(t.TempDir(), "crawl")
	writeSyntheticCrawlDB(t, crawl, 300)
	stdout, stderr, code := runInProcess(t, nil, "--crawl", crawl, "cluster", "--suggest-eps", "--min-pts", "5")
	if code != 0 || !strings.HasPrefix(stdout, "suggested eps:\t") || !strings.Contains(stdout, "300 young pages") {
		t.Fatalf("suggest eps: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stderr, code = runInProcess(t, nil, "--crawl", crawl, "cluster", "--min-pts", "5")
	if code != exitUsage || !strings.Contains(stderr, "--eps") {
		t.Errorf("cluster without eps: exit %d %s", code, stderr)
	}
	// Settings give the defaults; flags win.
	env := []string{config.EnvName(config.ClusterEps) + "=0.8", config.EnvName(config.ClusterMinSamples) + "=4"}
	stdout, stderr, code = runInProcess(t, env, "--crawl", crawl, "cluster", "--min-pts", "5", "--sample-rate", "0", "--partitions", "2")
	if code != 0 {
		t.Fatalf("cluster: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, w := range []string{"cluster result:\t", "points:\t300\t", "eps, minPts:\t0.8, 5", "clusters:\t3\n", "samples:\t12\t(K 4, R 0)", "time:\t"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
	stdout, stderr, code = runInProcess(t, nil, "--crawl", crawl, "readdb", "clusters")
	if code != 0 || !strings.Contains(stdout, "300 points, 3 clusters") || !strings.Contains(stdout, "applied:\tnone") ||
		!strings.Contains(stdout, "label\tsize\tcore\tsamples\tperiod\n0\t100\t") {
		t.Errorf("readdb clusters: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runInProcess(t, nil, "--crawl", crawl, "readdb", "clusters", "--json")
	var rep clustersReport
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || len(rep.Results) != 1 || len(rep.Clusters) != 3 || rep.Clusters[2].Samples != 4 {
		t.Errorf("readdb clusters --json: exit %d, %v: %s", code, err, stdout)
	}
	// Bad settings of the dynamic schedule are usage errors naming them.
	bad := []string{config.EnvName(config.DynamicOtherMax) + "=100d"}
	_, stderr, code = runInProcess(t, bad, "--crawl", crawl, "updatedb", "--schedule", "dynamic", "20260101000000")
	if code != exitUsage || !strings.Contains(stderr, "schedule") {
		t.Errorf("dynamic other.max beyond maxInterval: exit %d %s", code, stderr)
	}
}
