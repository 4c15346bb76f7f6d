package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/urlutil"
)

var tInject = time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)

func TestLines(t *testing.T) {
	long := strings.Repeat("x", maxSeedLine+10)
	in := "\xef\xbb\xbfhttp://a/\r\n\nb\n" + long + "\nlast"
	var got []seedLine
	for l, err := range lines(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	want := []seedLine{{no: 1, text: "http://a/"}, {no: 2, text: ""}, {no: 3, text: "b"}, {no: 4, tooLong: true}, {no: 5, text: "last"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lines = %+v\nwant %+v", got, want)
	}
}

func TestInjectReportsBadLinesAndMerges(t *testing.T) {
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds")
	writeFile(t, filepath.Join(seeds, "a.txt"), strings.Join([]string{
		"# seeds",
		"HTTP://Example.COM:80/a/../index.html\tscore=2.5\tlang=en",
		"http://example.com/daily\tfixedInterval=86400",
		"http://example.com/bad\tscore=high",             // line 4: bad number
		"not a url",                                      // line 5: no scheme
		"http://example.com/photo.JPG",                   // line 6: suffix filter
		"http://other.example/\tfetchInterval=3600\tx=1", // line 7
		"",
		"http://example.com/index.html\tscore=3", // line 9: duplicate of line 2, later wins
	}, "\n"))
	writeFile(t, filepath.Join(seeds, "b.txt"), "http://b.example/\n\tscore=1\n")
	writeFile(t, filepath.Join(seeds, ".hidden"), "http://hidden.example/\n")

	filters := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}
	res, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject, Filters: filters})
	if err != nil {
		t.Fatal(err)
	}
	if res.SeedFiles != 2 || res.Lines != 11 || res.Seeds != 5 || res.BadLines != 3 || res.Filtered != 1 {
		t.Errorf("files %d lines %d seeds %d bad %d filtered %d; want 2 11 5 3 1", res.SeedFiles, res.Lines, res.Seeds, res.BadLines, res.Filtered)
	}
	wantSamples := []string{"a.txt:4: score=", "a.txt:5: ", "a.txt:6: URL http://example.com/photo.JPG rejected by filter suffix", "b.txt:2: empty URL"}
	if len(res.BadLineSamples) != len(wantSamples) {
		t.Fatalf("samples %q", res.BadLineSamples)
	}
	for i, w := range wantSamples {
		if !strings.Contains(res.BadLineSamples[i], w) {
			t.Errorf("sample %d = %q, want it to contain %q", i, res.BadLineSamples[i], w)
		}
	}
	c := res.Counters
	for name, want := range map[string]int64{ctrBadSyntax: 2, ctrBadURL: 1, ctrFilteredBy + "suffix": 1, ctrDuplicate: 1, ctrInjected: 4} {
		if got := c.Get("inject", name); got != want {
			t.Errorf("counter %s = %d, want %d", name, got, want)
		}
	}
	if res.Injected != 4 || res.Total != 4 || res.Existing != 0 {
		t.Errorf("injected %d total %d existing %d", res.Injected, res.Total, res.Existing)
	}

	db := readDB(t, env)
	def := int32(30 * day)
	want := map[string]crawldb.Datum{
		"http://example.com/index.html": {URL: "http://example.com/index.html", Host: "example.com", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: def, Score: 3, ClusterID: -1, Source: crawldb.SourceAdaptive,
			Features: crawldb.Features{Depth: 1}},
		"http://example.com/daily": {URL: "http://example.com/daily", Host: "example.com", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: day, FixedInterval: true, Score: 1, ClusterID: -1, Source: crawldb.SourceInjected,
			Features: crawldb.Features{Depth: 1}},
		"http://other.example/": {URL: "http://other.example/", Host: "other.example", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: 3600, Score: 1, ClusterID: -1, Source: crawldb.SourceInjected,
			Metadata: map[string]string{"x": "1"}},
		"http://b.example/": {URL: "http://b.example/", Host: "b.example", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: def, Score: 1, ClusterID: -1, Source: crawldb.SourceAdaptive},
	}
	if !reflect.DeepEqual(db, want) {
		t.Errorf("CrawlDB:\n got %+v\nwant %+v", db, want)
	}
	if dirExists(filepath.Join(env.Crawl, "crawldb", crawldb.LockFile)) {
		t.Error("the lock was not released")
	}

	// Second inject: the existing URLs are kept, by default.
	writeFile(t, filepath.Join(seeds, "a.txt"), "http://example.com/index.html\tscore=9\tfetchInterval=60\tlang=de\nhttp://new.example/\n")
	os.Remove(filepath.Join(seeds, "b.txt"))
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Injected != 1 || res.Existing != 1 || res.Total != 5 {
		t.Errorf("keep: injected %d existing %d total %d", res.Injected, res.Existing, res.Total)
	}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, want["http://example.com/index.html"]) {
		t.Errorf("keep changed the row: %+v", got)
	}

	// Update: metadata overlaid, score and interval from the seed.
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(2 * time.Hour), Update: true})
	if err != nil {
		t.Fatal(err)
	}
	upd := want["http://example.com/index.html"]
	upd.Score, upd.FetchInterval, upd.Source, upd.Metadata = 9, 60, crawldb.SourceInjected, map[string]string{"lang": "de"}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, upd) || res.Updated != 2 {
		t.Errorf("update: updated %d row\n got %+v\nwant %+v", res.Updated, got, upd)
	}
	// Update without score or interval in the seed keeps them.
	writeFile(t, filepath.Join(seeds, "a.txt"), "http://example.com/index.html\tk=v\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Update: true}); err != nil {
		t.Fatal(err)
	}
	upd.Metadata = map[string]string{"lang": "de", "k": "v"}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, upd) {
		t.Errorf("update without score:\n got %+v\nwant %+v", got, upd)
	}

	// Overwrite: the injected datum replaces the row.
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(3 * time.Hour), Overwrite: true, Update: true})
	if err != nil {
		t.Fatal(err)
	}
	ow := crawldb.Datum{URL: "http://example.com/index.html", Host: "example.com", Status: crawldb.StatusDBUnfetched,
		FetchTime: tInject.Add(3 * time.Hour), FetchInterval: def, Score: 1, ClusterID: -1, Source: crawldb.SourceAdaptive,
		Features: crawldb.Features{Depth: 1}, Metadata: map[string]string{"k": "v"}}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, ow) || res.Overwritten != 1 {
		t.Errorf("overwrite: %d\n got %+v\nwant %+v", res.Overwritten, got, ow)
	}
	if n := len(readDB(t, env)); n != 5 {
		t.Errorf("CrawlDB has %d rows, want 5", n)
	}
}

func TestInjectFailureKeepsCrawlDB(t *testing.T) {
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, "http://a.example/\nhttp://b.example/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject}); err != nil {
		t.Fatal(err)
	}
	before := readDB(t, env)

	writeFile(t, seeds, "http://c.example/\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inject(ctx, env, InjectOptions{Seeds: []string{seeds}, Now: tInject, Overwrite: true}); err == nil {
		t.Fatal("inject with a cancelled context succeeded")
	}
	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Errorf("a failed inject changed the CrawlDB:\n%v\n%v", after, before)
	}
	entries, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	for _, e := range entries {
		if e.Name() != crawldb.CurrentName {
			t.Errorf("a failed inject left %s in the CrawlDB directory", e.Name())
		}
	}

	// Missing seeds: a clear error, nothing changed.
	_, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{filepath.Join(t.TempDir(), "nope.txt")}})
	if err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Errorf("missing seed file: %v", err)
	}
	// A held lock: refused, naming the holder.
	h, err := crawldb.Lock(storageLocal(), filepath.Join(env.Crawl, "crawldb"), "updatedb", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}})
	if !errors.Is(err, crawldb.ErrLocked) || !strings.Contains(err.Error(), "updatedb") {
		t.Errorf("inject under a held lock: %v", err)
	}
	h.Unlock()
	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Error("a refused inject changed the CrawlDB")
	}
}
