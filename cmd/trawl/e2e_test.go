package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// readGenerate reads a segment's fetch list.
func readGenerate(t *testing.T, seg string) []segment.Generate {
	t.Helper()
	fsys := storage.NewLocal()
	parts, err := parquetio.PartFiles(fsys, filepath.Join(seg, segment.DirGenerate))
	if err != nil {
		t.Fatal(err)
	}
	var out []segment.Generate
	for _, p := range parts {
		rows, err := parquetio.ReadAll[segment.Generate](fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// fetchOutcome says what the simulated fetcher and parser saw for a URL.
type fetchOutcome struct {
	status    crawldb.Status
	http      int32
	signature string   // content digest when fetched (empty: none)
	outlinks  []string // parsed outlinks
	redirect  string
}

// writeFetchParse writes a segment's crawl_fetch and crawl_parse as the
// fetcher and the parse job would: one Fetch per fetch-list URL with an
// outcome, and for each parsed page a signature update plus one linked
// update per outlink carrying its OPIC cash.
func writeFetchParse(t *testing.T, seg string, at time.Time, outcome func(d segment.Generate) (fetchOutcome, bool)) (fetched int) {
	t.Helper()
	var fetches []segment.Fetch
	var parses []segment.ParseUpdate
	for _, d := range readGenerate(t, seg) {
		o, ok := outcome(d)
		if !ok {
			continue
		}
		fetched++
		fetches = append(fetches, segment.Fetch{
			URL: d.URL, Status: o.status, FetchTime: at, HTTPStatus: o.http,
			ContentType: "text/html", RedirectURL: o.redirect, Datum: d,
		})
		if o.signature == "" {
			continue
		}
		sum := sha256.Sum256([]byte(o.signature))
		parses = append(parses, segment.ParseUpdate{
			URL: d.URL, Status: crawldb.StatusSignature, Signature: sum[:16], FetchTime: at,
			Features: crawldb.Features{Words: 100, Outlinks: int32(len(o.outlinks)), Bytes: 2048},
		})
		for _, l := range o.outlinks {
			parses = append(parses, segment.ParseUpdate{
				URL: l, Status: crawldb.StatusLinked, FromURL: d.URL, Anchor: "link",
				Score: jobs.OPICLinkCash(d.Score, len(o.outlinks)), FetchTime: at,
			})
		}
	}
	writeParts(t, filepath.Join(seg, segment.DirFetch), fetches, 1000)
	writeParts(t, filepath.Join(seg, segment.DirCrawlParse), parses, 1000)
	return fetched
}

// statsJSON runs readdb stats --json.
func statsJSON(t *testing.T, r *runner, crawl string) crawldb.StatsReport {
	t.Helper()
	res := r.ok("--crawl", crawl, "readdb", "stats", "--json")
	var rep crawldb.StatsReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("readdb stats --json: %v\n%s", err, res.stdout)
	}
	return rep
}

// datumJSON runs readdb url and decodes the row.
func datumJSON(t *testing.T, r *runner, crawl, url string) map[string]any {
	t.Helper()
	res := r.ok("--crawl", crawl, "readdb", "url", url)
	var m map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &m); err != nil {
		t.Fatalf("readdb url %s: %v\n%s", url, err, res.stdout)
	}
	return m
}

// TestPipeline runs inject → generate → (simulated fetch and parse) →
// updatedb → generate with the real binary and checks every reader.
func TestPipeline(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	writeTestFile(t, filepath.Join(r.dir, "seeds", "a.txt"), strings.Join([]string{
		"# seeds for the pipeline test", // 1
		"http://a.test/",                // 2
		"http://a.test/x",               // 3
		"",                              // 4
		"not a url",                     // 5
		"http://b.test/\tscore=2\tfetchInterval=3600", // 6
		"http://b.test/old\tscore=oops",               // 7
		"ftp://c.test/file",                           // 8
		"http://c.test/\tnote=first",                  // 9
		"HTTP://C.TEST:80/a/../page.html",             // 10
		"http://c.test/photo.JPG",                     // 11
	}, "\n")+"\n")
	writeTestFile(t, filepath.Join(r.dir, "seeds", "b.txt"), "http://d.test/\n")

	// inject: 6 good URLs, 4 bad lines reported with file:line.
	t0 := "2026-01-10T00:00:00Z"
	res := r.ok("--crawl", crawl, "inject", "seeds", "--now", t0)
	for _, at := range []string{"a.txt:5", "a.txt:7", "a.txt:8", "a.txt:11"} {
		if !strings.Contains(res.stderr, at) {
			t.Errorf("inject stderr does not report %s:\n%s", at, res.stderr)
		}
	}
	for _, at := range []string{"a.txt:2", "a.txt:6", "a.txt:10", "b.txt:1"} {
		if strings.Contains(res.stderr, at+" ") || strings.Contains(res.stderr, at+"\"") {
			t.Errorf("inject stderr reports good line %s:\n%s", at, res.stderr)
		}
	}
	if res.stdout != "" {
		t.Errorf("inject wrote to stdout: %q", res.stdout)
	}
	rep := statsJSON(t, r, crawl)
	if rep.Total != 6 || rep.Status["db_unfetched"] != 6 || rep.Hosts != 4 {
		t.Fatalf("stats after inject: %+v", rep)
	}
	if d := datumJSON(t, r, crawl, "http://c.test/page.html"); d["status"] != "db_unfetched" {
		t.Errorf("normalized seed: %v", d)
	}
	if d := datumJSON(t, r, crawl, "http://b.test/"); d["score"] != 2.0 || d["fetch_interval"] != 3600.0 {
		t.Errorf("seed fields: %v", d)
	}
	if d := datumJSON(t, r, crawl, "http://c.test/"); d["metadata"].(map[string]any)["note"] != "first" {
		t.Errorf("seed metadata: %v", d)
	}

	// generate: the segment path on stdout, 5 of 6 URLs (topN), listed by readseg.
	res = r.ok("--crawl", crawl, "generate", "--now", "2026-01-10T01:00:00Z", "--topN", "5", "--num-fetchers", "2")
	seg := strings.TrimSpace(res.stdout)
	if strings.Count(res.stdout, "\n") != 1 || !strings.HasPrefix(seg, filepath.Join(crawl, "segments")+string(filepath.Separator)) {
		t.Fatalf("generate stdout: %q", res.stdout)
	}
	gen := readGenerate(t, seg)
	if len(gen) != 5 {
		t.Fatalf("fetch list has %d URLs, want 5", len(gen))
	}
	list := r.ok("--crawl", crawl, "readseg", "list").stdout
	if !strings.Contains(list, filepath.Base(seg)) || !strings.Contains(strings.Fields(strings.Split(list, "\n")[1])[1], "5") {
		t.Errorf("readseg list:\n%s", list)
	}

	// generate again: the 5 are pending, the 6th is held back by topN? No:
	// it is due and not pending, so a second segment gets it; a third
	// generate finds nothing due and exits 1 without a segment.
	res = r.ok("--crawl", crawl, "generate", "--now", "2026-01-10T01:00:00Z")
	seg2 := strings.TrimSpace(res.stdout)
	if g2 := readGenerate(t, seg2); len(g2) != 1 {
		t.Fatalf("second fetch list: %d URLs, want 1", len(g2))
	}
	res = r.fails(exitNothingToDo, "--crawl", crawl, "generate", "--now", "2026-01-10T01:00:00Z")
	assertCleanError(t, res, "no URLs due")
	if res.stdout != "" {
		t.Errorf("generate with nothing due wrote %q", res.stdout)
	}
	if n := len(strings.Split(strings.TrimSpace(r.ok("--crawl", crawl, "readseg", "list").stdout), "\n")); n != 3 {
		t.Errorf("readseg list shows %d lines, want header + 2 segments", n)
	}

	// Fetch and parse the first segment: successes with links (one to a
	// new host), a gone page, a transient failure.
	fetchAt := time.Date(2026, 1, 10, 2, 0, 0, 0, time.UTC)
	outcomes := map[string]fetchOutcome{
		"http://a.test/":          {status: crawldb.StatusFetchSuccess, http: 200, signature: "a-v1", outlinks: []string{"http://a.test/x", "http://e.test/new"}},
		"http://a.test/x":         {status: crawldb.StatusFetchSuccess, http: 200, signature: "ax-v1"},
		"http://b.test/":          {status: crawldb.StatusFetchGone, http: 404},
		"http://c.test/":          {status: crawldb.StatusFetchRetry, http: 503},
		"http://c.test/page.html": {status: crawldb.StatusFetchSuccess, http: 200, signature: "c-v1", outlinks: []string{"http://e.test/new"}},
		"http://d.test/":          {status: crawldb.StatusFetchSuccess, http: 200, signature: "d-v1"},
	}
	writeFetchParse(t, seg, fetchAt, func(d segment.Generate) (fetchOutcome, bool) {
		o, ok := outcomes[d.URL]
		return o, ok
	})
	r.ok("--crawl", crawl, "updatedb", filepath.Base(seg), "--now", "2026-01-10T03:00:00Z")
	if _, err := os.Stat(filepath.Join(seg, jobs.UpdatedMarker)); err != nil {
		t.Errorf("segment not marked merged: %v", err)
	}
	rep = statsJSON(t, r, crawl)
	if rep.Total != 7 {
		t.Errorf("after updatedb: %d URLs, want 7 (e.test/new added)", rep.Total)
	}
	for _, g := range gen {
		d := datumJSON(t, r, crawl, g.URL)
		want := map[crawldb.Status]string{
			crawldb.StatusFetchSuccess: "db_fetched", crawldb.StatusFetchGone: "db_gone",
			crawldb.StatusFetchRetry: "db_unfetched",
		}[outcomes[g.URL].status]
		if d["status"] != want {
			t.Errorf("%s: status %v, want %s", g.URL, d["status"], want)
		}
		if outcomes[g.URL].status == crawldb.StatusFetchRetry && d["retries"] != 1.0 {
			t.Errorf("%s: retries %v, want 1", g.URL, d["retries"])
		}
	}
	if d := datumJSON(t, r, crawl, "http://e.test/new"); d["status"] != "db_unfetched" || d["score"].(float64) <= 0 {
		t.Errorf("page new from links: %v", d)
	}

	// The dumps agree with the stats, in every format.
	checkDumpsAgree(t, r, crawl, rep)

	// The merged segment no longer holds its URLs back: what is due now
	// (the new link target, the retry) is generated; the fetched pages are
	// not due for their interval.
	res = r.ok("--crawl", crawl, "generate", "--now", "2026-01-10T04:00:00Z")
	var urls []string
	for _, g := range readGenerate(t, strings.TrimSpace(res.stdout)) {
		urls = append(urls, g.URL)
	}
	sort.Strings(urls)
	if got := strings.Join(urls, " "); !strings.Contains(got, "http://e.test/new") || strings.Contains(got, "http://a.test/x") {
		t.Errorf("third fetch list: %s", got)
	}
}

// checkDumpsAgree dumps the CrawlDB as CSV, JSON lines and Parquet and
// checks that each has the stats' rows and status counts, and the same URLs.
func checkDumpsAgree(t *testing.T, r *runner, crawl string, rep crawldb.StatsReport) {
	t.Helper()
	res := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("csv dump: %v", err)
	}
	header := recs[0]
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("csv header has no %s: %v", name, header)
		return -1
	}
	urlCol, stCol := col("url"), col("status")
	csvURLs, csvStatus := []string{}, map[string]int64{}
	for _, rec := range recs[1:] {
		csvURLs = append(csvURLs, rec[urlCol])
		csvStatus[rec[stCol]]++
	}

	res = r.ok("--crawl", crawl, "readdb", "dump", "--format", "json")
	jsonURLs, jsonStatus := []string{}, map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("json dump line %q: %v", line, err)
		}
		jsonURLs = append(jsonURLs, m["url"].(string))
		jsonStatus[m["status"].(string)]++
	}

	pq := filepath.Join(r.dir, "dump.parquet")
	os.Remove(pq)
	r.ok("--crawl", crawl, "readdb", "dump", "--format", "parquet", "--output", pq)
	rows, err := parquetio.ReadAll[crawldb.Datum](storage.NewLocal(), pq)
	if err != nil {
		t.Fatal(err)
	}
	pqURLs, pqStatus := []string{}, map[string]int64{}
	for _, d := range rows {
		pqURLs = append(pqURLs, d.URL)
		pqStatus[d.Status.String()]++
	}

	for name, got := range map[string]struct {
		urls   []string
		status map[string]int64
	}{"csv": {csvURLs, csvStatus}, "json": {jsonURLs, jsonStatus}, "parquet": {pqURLs, pqStatus}} {
		if int64(len(got.urls)) != rep.Total {
			t.Errorf("%s dump: %d rows, stats say %d", name, len(got.urls), rep.Total)
		}
		if fmt.Sprint(got.status) != fmt.Sprint(rep.Status) {
			t.Errorf("%s dump: status counts %v, stats say %v", name, got.status, rep.Status)
		}
		if !sort.StringsAreSorted(got.urls) || strings.Join(got.urls, " ") != strings.Join(csvURLs, " ") {
			t.Errorf("%s dump: URLs %v differ from the CSV's %v (or are not in URL order)", name, got.urls, csvURLs)
		}
	}

	// Filters: --status and --regex and --limit.
	res = r.ok("--crawl", crawl, "readdb", "dump", "--format", "json", "--status", "db_fetched")
	if n := int64(strings.Count(res.stdout, "\n")); n != rep.Status["db_fetched"] {
		t.Errorf("dump --status db_fetched: %d rows, want %d", n, rep.Status["db_fetched"])
	}
	res = r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv", "--regex", `^http://a\.test/`, "--limit", "1")
	if n := strings.Count(res.stdout, "\n"); n != 2 || !strings.Contains(res.stdout, "http://a.test/") {
		t.Errorf("dump --regex --limit 1:\n%s", res.stdout)
	}
}
