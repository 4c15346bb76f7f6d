package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// writeParts writes rows as a published job output directory: part files
// of at most per rows each, then _SUCCESS.
func writeParts[T any](t *testing.T, dir string, rows []T, per int) {
	t.Helper()
	fsys := storage.NewLocal()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, part := 0, 0; i < len(rows) || part == 0; part++ {
		end := min(i+per, len(rows))
		p := filepath.Join(dir, "part-r-"+pad5(part)+".parquet")
		if err := parquetio.WriteFile(fsys, p, rows[i:end]); err != nil {
			t.Fatal(err)
		}
		i = end
	}
	writeTestFile(t, filepath.Join(dir, "_SUCCESS"), "")
}

func pad5(n int) string { return fmt.Sprintf("%05d", n) }

func TestReadseg(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	seg := filepath.Join(crawl, "segments", "20261121103000")
	now := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	gen := []segment.Generate{
		{URL: "http://a.test/", Host: "a.test", Status: crawldb.StatusDBUnfetched, FetchTime: now, Score: 1},
		{URL: "http://a.test/x", Host: "a.test", Status: crawldb.StatusDBUnfetched, FetchTime: now, Score: 0.5},
		{URL: "http://b.test/", Host: "b.test", Status: crawldb.StatusDBFetched, FetchTime: now, Score: 2},
	}
	writeParts(t, filepath.Join(seg, segment.DirGenerate), gen, 2)
	fetch := []segment.Fetch{
		{URL: "http://a.test/", Status: crawldb.StatusFetchSuccess, FetchTime: now, HTTPStatus: 200, ContentType: "text/html", Datum: gen[0]},
		{URL: "http://b.test/", Status: crawldb.StatusFetchGone, FetchTime: now, HTTPStatus: 404, Datum: gen[2]},
	}
	writeParts(t, filepath.Join(seg, segment.DirFetch), fetch, 10)
	// A second segment, merged, with an empty fetch list.
	seg2 := filepath.Join(crawl, "segments", "20261122103000")
	writeParts[segment.Generate](t, filepath.Join(seg2, segment.DirGenerate), nil, 10)
	writeTestFile(t, filepath.Join(seg2, jobs.UpdatedMarker), "")

	res := r.ok("--crawl", crawl, "readseg", "list")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("readseg list:\n%s", res.stdout)
	}
	if f := strings.Fields(lines[1]); f[0] != "20261121103000" || f[1] != "3" || f[2] != "2" || f[3] != "-" || f[4] != "fetched" {
		t.Errorf("first segment line: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "20261122103000" || f[1] != "0" || f[2] != "-" || f[4] != "merged" {
		t.Errorf("second segment line: %q", lines[2])
	}
	// By name, by path.
	res = r.ok("--crawl", crawl, "readseg", "list", "20261122103000", seg)
	if n := len(strings.Split(strings.TrimSpace(res.stdout), "\n")); n != 3 {
		t.Errorf("readseg list by name and path:\n%s", res.stdout)
	}
	res = r.fails(exitFailure, "--crawl", crawl, "readseg", "list", "20990101000000")
	assertCleanError(t, res, "20990101000000", "does not exist")

	// dump: every stage present, as JSON lines with the stage's name.
	res = r.ok("--crawl", crawl, "readseg", "dump", "20261121103000")
	lines = strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 5 {
		t.Fatalf("dump:\n%s", res.stdout)
	}
	var first, last map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[4]), &last); err != nil {
		t.Fatal(err)
	}
	if first["dir"] != "crawl_generate" || first["url"] != "http://a.test/" || first["status"] != "db_unfetched" || first["fetch_time"] != "2026-11-21T10:30:00Z" {
		t.Errorf("first record: %v", first)
	}
	if last["dir"] != "crawl_fetch" || last["status"] != "fetch_gone" || last["http_status"] != float64(404) {
		t.Errorf("last record: %v", last)
	}
	if d, ok := last["datum"].(map[string]any); !ok || d["url"] != "http://b.test/" || d["status"] != "db_fetched" {
		t.Errorf("nested datum: %v", last["datum"])
	}
	out := filepath.Join(r.dir, "fetch.jsonl")
	r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--limit", "1", "--output", out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 1 || !strings.Contains(string(data), `"dir":"crawl_fetch"`) {
		t.Errorf("dump --dir crawl_fetch --limit 1:\n%s", data)
	}
	res = r.fails(exitUsage, "--crawl", crawl, "readseg", "dump", seg, "--dir", "nonsense")
	assertCleanError(t, res, "nonsense")
	// A stage that is asked for but missing is an error naming it.
	res = r.fails(exitFailure, "--crawl", crawl, "readseg", "dump", seg, "--dir", "parse_data")
	assertCleanError(t, res, "parse_data")
}
