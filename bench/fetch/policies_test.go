package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/simweb"
)

// TestQualityCurve: the curve counts 200s and each listed page's quality
// once, in order of response, from the first request (robots.txt
// included); the metrics read it as documented.
func TestQualityCurve(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	entries := []simweb.Access{
		{Host: "h", Path: "/robots.txt", Start: at(0), End: at(100), Status: 200, Page: -1},
		{Host: "h", Path: "/c", Start: at(300), End: at(400), Status: 200, Page: 3},
		{Host: "h", Path: "/a", Start: at(100), End: at(200), Status: 200, Page: 1},
		{Host: "h", Path: "/gone", Start: at(400), End: at(500), Status: 404, Page: 2},
		{Host: "h", Path: "/a", Start: at(500), End: at(600), Status: 200, Page: 1},  // again: no new quality
		{Host: "h", Path: "/x", Start: at(700), End: at(1000), Status: 200, Page: 9}, // not in the list
		{Host: "", Path: "/_simweb/clock", Start: at(0), End: at(2000), Status: 200}, // control: ignored
	}
	quality := map[int]float64{1: 6, 2: 1, 3: 3, 9: 100}
	inList := map[int]bool{1: true, 2: true, 3: true}
	crawl, curve := qualityCurve(entries, quality, inList, 10)
	if crawl != time.Second {
		t.Errorf("crawl time %v, want 1s (first request to last response)", crawl)
	}
	want := []curvePoint{
		{200 * time.Millisecond, 1, 0.6},
		{400 * time.Millisecond, 2, 0.9},
		{500 * time.Millisecond, 2, 1.0},
		{600 * time.Millisecond, 3, 1.0},
		{1000 * time.Millisecond, 4, 1.0},
	}
	if len(curve) != len(want) {
		t.Fatalf("curve %v, want %v", curve, want)
	}
	for i := range want {
		if curve[i].t != want[i].t || curve[i].pages != want[i].pages || math.Abs(curve[i].share-want[i].share) > 1e-12 {
			t.Errorf("point %d: %+v, want %+v", i, curve[i], want[i])
		}
	}
	r := policyRun{crawl: crawl, curve: curve, srv: served{ok: 4}}
	if got := r.timeTo(0.8); math.Abs(got-0.4) > 1e-12 {
		t.Errorf("time to 80%%: %v, want 0.4", got)
	}
	// Area: 0 until 0.2, 0.6 to 0.4, 0.9 to 0.5, then 1.
	if got, want := r.auc(), 0.6*0.2+0.9*0.1+1*0.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("AUC %v, want %v", got, want)
	}
	if got := r.rate90(); math.Abs(got-4) > 1e-9 { // 4 pages (>= 3.6) at 1 s
		t.Errorf("rate to 90%% of the pages: %v, want 4", got)
	}
}

// TestQualities: PageRank comes from the truth; Zipf(1) gives each id
// one of 1, 1/2, ..., 1/n, reproducibly.
func TestQualities(t *testing.T) {
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages = 2, 10, 200
	w, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{0, 3, 5, 7, 11}
	pr, err := qualities(w, ids, "pagerank", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if pr[id] != w.Page(id).PageRank {
			t.Errorf("page %d: quality %v, PageRank %v", id, pr[id], w.Page(id).PageRank)
		}
	}
	z1, _ := qualities(w, ids, "zipf", 1)
	z2, _ := qualities(w, ids, "zipf", 1)
	seen := map[float64]bool{}
	for _, id := range ids {
		if z1[id] != z2[id] {
			t.Errorf("zipf not reproducible for page %d", id)
		}
		seen[z1[id]] = true
	}
	for k := 1; k <= len(ids); k++ {
		if !seen[1/float64(k)] {
			t.Errorf("zipf qualities %v lack 1/%d", z1, k)
		}
	}
	if _, err := qualities(w, ids, "bogus", 1); err == nil {
		t.Error("an unknown model gave no error")
	}
}

// TestWgetLists: every URL lands in exactly one list, each host's URLs in
// one list and in order, and the busiest host alone when there are enough
// lists.
func TestWgetLists(t *testing.T) {
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = 3, 20, 600, simweb.HazardsNone
	e, err := serveWeb(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir(), cfg,
		simweb.ServeOptions{IPPerHost: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	set := selectURLs(e.web, e.srv)
	files, err := e.wgetLists(set.urls, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Fatalf("%d lists, want 8", len(files))
	}
	listOf := map[int]int{}
	pos := map[string]int{}
	for i, u := range set.urls {
		pos[u] = i
	}
	total := 0
	for i, f := range files {
		if filepath.Dir(f) != e.dir {
			t.Errorf("list %s outside the work directory", f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		last := map[int]int{}
		for _, u := range strings.Fields(string(data)) {
			total++
			h, ok := e.hostOf(u)
			if !ok {
				t.Fatalf("%s: no host", u)
			}
			if l, seen := listOf[h]; seen && l != i {
				t.Errorf("host %d split over lists %d and %d", h, l, i)
			}
			listOf[h] = i
			if p, seen := last[h]; seen && pos[u] < p {
				t.Errorf("%s out of order", u)
			}
			last[h] = pos[u]
		}
	}
	if total != len(set.urls) {
		t.Errorf("%d URLs in the lists, want %d", total, len(set.urls))
	}
}
