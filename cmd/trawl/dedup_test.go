package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
)

// TestDedupCommand runs inject, generate, a simulated fetch and parse (the
// synthetic web has no duplicate pages, so the test gives pages the same
// content) and updatedb, then trawl dedup: its printed counts, readdb stats
// and readdb url must show the duplicates, and a second run must change
// nothing.
func TestDedupCommand(t *testing.T) {
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	var seeds strings.Builder
	for h := range 3 {
		for _, p := range []string{"/", "/a", "/copy-of-a", "/b", "/c"} {
			fmt.Fprintf(&seeds, "http://h%d.sim.test%s\n", h, p)
		}
	}
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), seeds.String())
	r.ok("--log-level", "warn", "--crawl", crawl, "inject", "seeds.txt", "--now", "2026-01-01T00:00:00Z")
	seg := strings.TrimSpace(r.ok("--log-level", "warn", "--crawl", crawl, "generate", "--now", "2026-01-02T00:00:00Z").stdout)
	// Per host: / and /b differ; /a and /copy-of-a have one content, and
	// /c the same as every other host's /c. /b is not parsed (no
	// signature).
	writeFetchParse(t, seg, time.Date(2026, 1, 2, 6, 0, 0, 0, time.UTC), func(d segment.Generate) (fetchOutcome, bool) {
		o := fetchOutcome{status: crawldb.StatusFetchSuccess, http: 200}
		host, path, _ := strings.Cut(strings.TrimPrefix(d.URL, "http://"), "/")
		switch path {
		case "a", "copy-of-a":
			o.signature = host + " a"
		case "c":
			o.signature = "c"
		case "":
			o.signature = d.URL
		}
		return o, true
	})
	r.ok("--log-level", "warn", "--crawl", crawl, "updatedb", "--now", "2026-01-02T12:00:00Z", seg)

	// 15 rows; groups: each host's a (3) and every host's c (1); marked:
	// each host's /copy-of-a (the longer URL) and two of the three /c
	// (equal lengths: h0 sorts first).
	res := r.ok("--log-level", "warn", "--crawl", crawl, "dedup")
	for _, want := range []string{"rows read:\t15\n", "groups with duplicates:\t4\n", "rows marked db_duplicate:\t5\n"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("dedup output lacks %q:\n%s", want, res.stdout)
		}
	}
	rep := statsJSON(t, r, crawl)
	if rep.Total != 15 || rep.Status["db_duplicate"] != 5 || rep.Status["db_fetched"] != 10 {
		t.Errorf("readdb stats after dedup: %d rows, %v", rep.Total, rep.Status)
	}
	if stats := r.ok("--crawl", crawl, "readdb", "stats").stdout; !strings.Contains(stats, "(db_duplicate):\t5") {
		t.Errorf("readdb stats does not show 5 db_duplicate:\n%s", stats)
	}
	for url, want := range map[string]string{
		"http://h1.sim.test/a": "db_fetched", "http://h1.sim.test/copy-of-a": "db_duplicate",
		"http://h0.sim.test/c": "db_fetched", "http://h2.sim.test/c": "db_duplicate", "http://h2.sim.test/b": "db_fetched",
	} {
		if got := datumJSON(t, r, crawl, url)["status"]; got != want {
			t.Errorf("%s: %v, want %s", url, got, want)
		}
	}

	// Again: nothing to mark, the CrawlDB as it was.
	before := dbDigest(t, r, crawl)
	res = r.ok("--log-level", "warn", "--crawl", crawl, "dedup", "--group", "host")
	if !strings.Contains(res.stdout, "groups with duplicates:\t0\n") || !strings.Contains(res.stdout, "rows marked db_duplicate:\t0\n") {
		t.Errorf("second dedup:\n%s", res.stdout)
	}
	if dbDigest(t, r, crawl) != before {
		t.Error("the second dedup changed the CrawlDB")
	}
	assertCleanError(t, r.fails(exitUsage, "--crawl", crawl, "dedup", "--group", "planet"), `group "planet"`)
	assertCleanError(t, r.fails(exitFailure, "--crawl", filepath.Join(r.dir, "none"), "dedup"), "no CrawlDB")
}
