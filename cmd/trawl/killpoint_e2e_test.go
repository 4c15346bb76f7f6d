package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/segment"
)

// killAt runs trawl with TRAWL_KILL_AT=point and checks that it died
// there (a point name that is never reached fails the test).
func killAt(t *testing.T, r *runner, point string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, args...)
	cmd.Env = append(cmd.Env, killpoint.EnvVar+"="+point)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "killed at "+point) {
		t.Fatalf("trawl %s with %s=%s: %v, not killed there\n%s", strings.Join(args, " "), killpoint.EnvVar, point, err, stderr.String())
	}
}

// retryOK runs a plain retry: exit 0, or 1 when the killed run had
// finished the work (nothing left to do).
func retryOK(t *testing.T, r *runner, args ...string) {
	t.Helper()
	if res := r.run(args...); res.code != exitOK && res.code != exitNothingToDo {
		t.Fatalf("retry trawl %s: %s", strings.Join(args, " "), res)
	}
}

// segmentsOf lists a crawl's segment directories, sorted.
func segmentsOf(t *testing.T, crawl string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(crawl, "segments", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(segs)
	return segs
}

// TestKillPoints kills every job with SIGKILL at each boundary of its
// phases (after its tasks, before and between the renames that publish
// its outputs, around the CrawlDB install and the segment markers), then
// runs the plain retry a cron script would run, with no --force. The one
// invariant: right after the kill the CrawlDB is what it was or what one
// clean run gives; after the retry it is what one clean run gives, the
// segment's outputs are whole (one crawl_fetch row per URL), and nothing
// of the killed run is left in the crawl directory.
func TestKillPoints(t *testing.T) {
	r := newRunner(t)
	r.bin = plainBinPath
	g := []string{"--log-level", "warn"}
	srv, seeds := slowWeb(t, r.dir, 3, 30)

	// The starting states, each copied afresh for every kill.
	dbOnly := filepath.Join(r.dir, "pristine-db")
	r.ok(append(g, "--crawl", dbOnly, "inject", seeds, "--now", "2026-01-01T00:00:00Z")...)
	writeTestFile(t, filepath.Join(r.dir, "more.txt"), "http://more.test/a\nhttp://more.test/b\n"+srv.URL(0)+"\tscore=2\n")
	generated := filepath.Join(r.dir, "pristine-generated")
	copyDir(t, dbOnly, generated)
	r.ok(append(g, "--crawl", generated, "generate", "--now", "2026-01-02T00:00:00Z")...)
	fetched := filepath.Join(r.dir, "pristine-fetched")
	copyDir(t, generated, fetched)
	fetch := func(crawl string) []string {
		return append(g, "--crawl", crawl, "fetch", "--allow-private", "--dns-server", srv.DNSAddr(), "--agent", "trawl-e2e", "--server-delay", "0s")
	}
	r.ok(fetch(fetched)...)
	toMerge := filepath.Join(r.dir, "pristine-tomerge")
	buildFetchedCrawl(t, r, toMerge, 20, 20)

	type kase struct {
		name     string
		pristine string
		points   []string
		run      func(crawl string) []string
		retry    func(crawl string) [][]string
		// after checks the crawl after the retry.
		after func(t *testing.T, crawl string)
	}
	injectRun := func(crawl string) []string {
		return append(g, "--crawl", crawl, "inject", filepath.Join(r.dir, "more.txt"), "--now", "2026-01-03T00:00:00Z")
	}
	updateRun := func(crawl string) []string {
		return append(g, "--crawl", crawl, "updatedb", "--now", "2026-01-02T12:00:00Z", segmentsOf(t, crawl)[0])
	}
	// A topN of 50 is above the CrawlDB's rows (every page of the web's
	// ordinary hosts, about 30): it cuts nothing, and generate runs one
	// job. A topN of 10 cuts, in a second job (generate-topn).
	generateRun := func(crawl string) []string {
		return append(g, "--crawl", crawl, "generate", "--now", "2026-01-02T00:00:00Z", "--topN", "50")
	}
	cutRun := func(crawl string) []string {
		return append(g, "--crawl", crawl, "generate", "--now", "2026-01-02T00:00:00Z", "--topN", "10")
	}
	parseRun := func(crawl string) []string { return append(g, "--crawl", crawl, "parse") }

	// The clean results to compare with.
	clean := func(pristine string, run func(string) []string) string {
		dir := filepath.Join(r.dir, "clean-"+filepath.Base(pristine))
		copyDir(t, pristine, dir)
		r.ok(run(dir)...)
		return dir
	}
	injectClean := dbDigest(t, r, clean(dbOnly, injectRun))
	updateClean := dbDigest(t, r, clean(toMerge, updateRun))
	genDir := clean(dbOnly, generateRun)
	genClean := urlsOf(readGenerate(t, segmentsOf(t, genDir)[0]))
	cutDir := filepath.Join(r.dir, "clean-cut")
	copyDir(t, dbOnly, cutDir)
	r.ok(cutRun(cutDir)...)
	cutClean := urlsOf(readGenerate(t, segmentsOf(t, cutDir)[0]))
	if len(cutClean) != 10 || len(genClean) <= 10 {
		t.Fatalf("clean generates selected %d URLs with topN 10 and %d with topN 50: the CrawlDB is not the size this test needs",
			len(cutClean), len(genClean))
	}

	engine := func(job string, outputs int) []string {
		p := []string{job + ":tasks-done", job + ":publish-ready"}
		for i := 1; i <= outputs; i++ {
			p = append(p, fmt.Sprintf("%s:published-%d", job, i))
		}
		return p
	}
	// point is the kill point of the subtest running (they run one at a
	// time), for the checks that depend on it.
	var point string
	cases := []kase{
		{name: "inject", pristine: dbOnly, run: injectRun,
			points: append(append([]string{"inject:map-done"}, engine("inject", 1)...), "install:current-moved", "install:new-current"),
			retry:  func(crawl string) [][]string { return [][]string{injectRun(crawl)} },
			after: func(t *testing.T, crawl string) {
				if got := dbDigest(t, r, crawl); got != injectClean {
					t.Error("the CrawlDB after the retry differs from one clean inject")
				}
			}},
		{name: "updatedb", pristine: toMerge, run: updateRun,
			points: append(append([]string{"updatedb:map-done"}, engine("updatedb", 1)...),
				"updatedb:before-install", "install:current-moved", "install:new-current", "updatedb:installed"),
			retry: func(crawl string) [][]string { return [][]string{updateRun(crawl)} },
			after: func(t *testing.T, crawl string) {
				if got := dbDigest(t, r, crawl); got != updateClean {
					t.Error("the CrawlDB after the retry differs from one clean updatedb: merged twice, or not at all")
				}
				if _, err := os.Stat(filepath.Join(segmentsOf(t, crawl)[0], segment.MergedMarker)); err != nil {
					t.Errorf("segment not marked merged: %v", err)
				}
			}},
		{name: "generate", pristine: dbOnly, run: generateRun,
			points: append([]string{"generate-select:map-done"}, engine("generate-select", 1)...),
			// A generate killed after publishing its fetch list leaves
			// empty staging directories in the segment, which the fetch
			// (holding the segment's lock) removes.
			retry: func(crawl string) [][]string { return [][]string{generateRun(crawl), fetch(crawl)} },
			after: func(t *testing.T, crawl string) {
				segs := segmentsOf(t, crawl)
				if len(segs) != 1 {
					t.Fatalf("segments after the retry: %v", segs)
				}
				if got := urlsOf(readGenerate(t, segs[0])); strings.Join(got, " ") != strings.Join(genClean, " ") {
					t.Errorf("the retry's fetch list (%d URLs) differs from one clean generate (%d)", len(got), len(genClean))
				}
			}},
		{name: "generate-cut", pristine: dbOnly, run: cutRun,
			points: append(append([]string{"generate-select:map-done"}, engine("generate-select", 2)...), engine("generate-topn", 1)...),
			retry:  func(crawl string) [][]string { return [][]string{cutRun(crawl), fetch(crawl)} },
			after: func(t *testing.T, crawl string) {
				// Killed once its fetch list was published, the first
				// generate's segment is whole, and pending: the retry
				// selects the next 10 URLs into a second one, and the
				// fetch the newest. The first keeps the empty staging
				// directory the kill left until its own fetch, which
				// holds its lock, removes it (below). Killed before, the
				// retry's segment is the only one.
				segs := segmentsOf(t, crawl)
				if len(segs) == 0 || len(segs) > 2 {
					t.Fatalf("segments after the retry: %v", segs)
				}
				first := urlsOf(readGenerate(t, segs[0]))
				if strings.Join(first, " ") != strings.Join(cutClean, " ") {
					t.Errorf("the first fetch list (%d URLs) differs from one clean generate's (%d)", len(first), len(cutClean))
				}
				if len(segs) == 2 {
					if point != "generate-topn:published-1" {
						t.Errorf("killed at %s, before the fetch list was published, and the retry left 2 segments", point)
					}
					second := urlsOf(readGenerate(t, segs[1]))
					if len(second) == 0 {
						t.Error("the second segment's fetch list is empty")
					}
					for _, u := range second {
						if slices.Contains(first, u) {
							t.Errorf("%s is in both fetch lists", u)
						}
					}
					r.ok(append(fetch(crawl), segs[0])...)
				}
			}},
		{name: "fetch", pristine: generated, run: fetch,
			points: engine("fetch", 2),
			retry:  func(crawl string) [][]string { return [][]string{fetch(crawl), parseRun(crawl)} },
			after: func(t *testing.T, crawl string) {
				seg := segmentsOf(t, crawl)[0]
				rows := readFetchRows(t, seg)
				success := 0
				for _, f := range rows {
					if f.Status == crawldb.StatusFetchSuccess {
						success++
					}
				}
				if want := len(readGenerate(t, seg)); len(rows) != want || success == 0 {
					t.Errorf("crawl_fetch: %d rows (%d fetched) for %d URLs", len(rows), success, want)
				}
				if n := len(readStage[segment.Content](t, filepath.Join(seg, segment.DirContent))); n != success {
					t.Errorf("%d content rows for %d fetched pages", n, success)
				}
			}},
		// A fetch that parses publishes five outputs, crawl_fetch last:
		// killed anywhere, the retry fetches again (or finds the segment
		// fetched and parsed) and updatedb merges it, with a parse_data row
		// per page.
		{name: "fetch-parse", pristine: generated, run: func(crawl string) []string { return append(fetch(crawl), "--parse") },
			points: engine("fetch", 5),
			retry: func(crawl string) [][]string {
				return [][]string{append(fetch(crawl), "--parse"), append(g, "--crawl", crawl, "updatedb", segmentsOf(t, crawl)[0])}
			},
			after: func(t *testing.T, crawl string) {
				seg := segmentsOf(t, crawl)[0]
				content := len(readStage[segment.Content](t, filepath.Join(seg, segment.DirContent)))
				data := len(readStage[segment.ParseData](t, filepath.Join(seg, segment.DirParseData)))
				if data != content || content == 0 {
					t.Errorf("%d parse_data rows for %d pages", data, content)
				}
				rows, links := 0, 0
				for _, u := range readStage[segment.ParseUpdate](t, filepath.Join(seg, segment.DirCrawlParse)) {
					rows++
					links += len(u.Linked())
				}
				if rows != content || links == 0 {
					t.Errorf("%d crawl_parse rows (%d links) for %d pages", rows, links, content)
				}
			}},
		{name: "parse", pristine: fetched, run: parseRun,
			// Parse joins in its map tasks (map-only, as fetch): no
			// map-done point.
			points: engine("parse", 3),
			retry: func(crawl string) [][]string {
				return [][]string{parseRun(crawl), append(g, "--crawl", crawl, "updatedb", segmentsOf(t, crawl)[0])}
			},
			after: func(t *testing.T, crawl string) {
				seg := segmentsOf(t, crawl)[0]
				content := len(readStage[segment.Content](t, filepath.Join(seg, segment.DirContent)))
				data := len(readStage[segment.ParseData](t, filepath.Join(seg, segment.DirParseData)))
				if data != content || content == 0 {
					t.Errorf("%d parse_data rows for %d pages", data, content)
				}
			}},
	}
	for _, c := range cases {
		before := dbDigest(t, r, c.pristine)
		for _, p := range c.points {
			t.Run(c.name+"/"+p, func(t *testing.T) {
				point = p
				crawl := filepath.Join(t.TempDir(), "crawl")
				copyDir(t, c.pristine, crawl)
				killAt(t, r, point, c.run(crawl)...)
				got := dbDigest(t, r, crawl)
				switch c.name {
				case "inject":
					if got != before && got != injectClean {
						t.Fatal("after the kill the CrawlDB is neither the old nor the new one")
					}
				case "updatedb":
					if got != before && got != updateClean {
						t.Fatal("after the kill the CrawlDB is neither the old nor the new one")
					}
				default:
					if got != before {
						t.Fatalf("%s changed the CrawlDB", c.name)
					}
				}
				for _, args := range c.retry(crawl) {
					retryOK(t, r, args...)
				}
				c.after(t, crawl)
				if j := junk(t, crawl); len(j) > 0 {
					t.Errorf("left behind after the retry: %v", j)
				}
			})
		}
	}
}

// urlsOf returns the URLs of a fetch list, sorted.
func urlsOf(rows []segment.Generate) []string {
	out := make([]string, 0, len(rows))
	for _, d := range rows {
		out = append(out, d.URL)
	}
	sort.Strings(out)
	return out
}
