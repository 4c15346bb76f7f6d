//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
)

// segmentDump returns a segment's records as readseg dump prints them,
// sorted, by part.
func segmentDump(t *testing.T, r *runner, seg string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, p := range segment.RecordDirs() {
		res := r.ok("readseg", "dump", seg, "--dir", p)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		if len(lines) == 1 && lines[0] == "" {
			lines = nil
		}
		slices.Sort(lines)
		out[p] = lines
	}
	return out
}

// newSegments lists the segment directories (named as segments are) in
// dir.
func newSegments(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := time.Parse(segment.NameLayout, e.Name()); err == nil && e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// TestMergeCommands runs mergesegs and mergedb with the real binary on
// two crawls of a synthetic web: the merged segment reads as an ordinary
// one (readseg list and dump, updatedb --remerge), slices stay within
// their size, an unparsed merge is parsed and updated by the ordinary
// commands, an existing CrawlDB is refused without --force, the
// --engine hadoop runs (through the Hadoop Streaming emulator) write what
// the local engine writes, and SIGKILLs at the merges' publishing points
// leave nothing later jobs would take, with a plain rerun finishing.
func TestMergeCommands(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	r.bin = plainBinPath // the Hadoop tasks are many processes
	srv, seeds := serveWeb(t, r.dir, simweb.Config{Seed: 4, Hosts: 8, Pages: 150, Hazards: simweb.HazardTraps})
	half := filepath.Join(r.dir, "half.txt")
	writeTestFile(t, half, strings.Join(srv.Seeds()[:4], "\n")+"\n")
	a, b := filepath.Join(r.dir, "A"), filepath.Join(r.dir, "B")
	r.ok(crawlArgs(srv, a, "--seeds", seeds, "--rounds", "3", "--now", "2026-01-05T00:00:00Z", "--topN", "60")...)
	r.ok(crawlArgs(srv, b, "--seeds", half, "--rounds", "2", "--now", "2026-01-09T00:00:00Z")...)
	now := []string{"--now", "2026-02-01T00:00:00Z"}

	// mergesegs: one new segment, an ordinary merged one.
	m := filepath.Join(r.dir, "M")
	res := r.ok(append([]string{"--crawl", a, "mergesegs", filepath.Join(m, "segments"), "--dir", filepath.Join(a, "segments")}, now...)...)
	if !strings.Contains(res.stdout, "new segment:") || !strings.Contains(res.stdout, "crawl_fetch rows:") {
		t.Errorf("mergesegs printed:\n%s", res.stdout)
	}
	merged := newSegments(t, filepath.Join(m, "segments"))
	if len(merged) != 1 || filepath.Base(merged[0]) != "20260201000000" {
		t.Fatalf("merged segments %v", merged)
	}
	list := r.ok("--crawl", m, "readseg", "list").stdout
	if !strings.Contains(list, "20260201000000") || !strings.Contains(list, "merged") {
		t.Errorf("readseg list:\n%s", list)
	}
	local := segmentDump(t, r, merged[0])
	if len(local[segment.DirFetch]) == 0 || len(local[segment.DirContent]) == 0 {
		t.Fatalf("empty merge: %d fetches", len(local[segment.DirFetch]))
	}
	// updatedb takes it as an ordinary segment (merged already: --remerge).
	r.fails(exitNothingToDo, "--crawl", a, "updatedb", merged[0], "--schedule", "default")
	r.ok("--crawl", a, "updatedb", "--remerge", merged[0], "--schedule", "default")

	// Slices of at most 25 URLs, holding the same rows.
	sl := filepath.Join(r.dir, "S")
	r.ok(append([]string{"--crawl", a, "mergesegs", sl, "--slice", "25", "--dir", filepath.Join(a, "segments")}, now...)...)
	union := map[string][]string{}
	for _, s := range newSegments(t, sl) {
		urls := map[string]bool{}
		for p, rows := range segmentDump(t, r, s) {
			union[p] = append(union[p], rows...)
			if p == segment.DirFetch || p == segment.DirGenerate {
				for _, l := range rows {
					var rec struct {
						URL string `json:"url"`
					}
					if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.URL == "" {
						t.Fatalf("readseg dump line %q: %v", l, err)
					}
					urls[rec.URL] = true
				}
			}
		}
		if len(urls) > 25 {
			t.Errorf("slice %s holds %d URLs", s, len(urls))
		}
	}
	for p := range union {
		slices.Sort(union[p])
		if !slices.Equal(union[p], local[p]) {
			t.Errorf("slices' %s: %d rows, one segment's %d", p, len(union[p]), len(local[p]))
		}
	}

	// The same merge under --engine hadoop.
	home := fakeHadoopHome(t)
	hr := *r
	invLog := filepath.Join(r.dir, "invocations.jsonl")
	hr.env = append(slices.Clone(r.env), "HADOOP_HOME="+home, "STREAMEMU_STATE="+filepath.Join(r.dir, "emu"), "STREAMEMU_LOG="+invLog)
	h := filepath.Join(r.dir, "H")
	hr.ok(append([]string{"--engine", "hadoop", "--crawl", a, "mergesegs", filepath.Join(h, "segments"),
		"--dir", filepath.Join(a, "segments")}, now...)...)
	hseg := newSegments(t, filepath.Join(h, "segments"))
	if len(hseg) != 1 {
		t.Fatalf("hadoop merge made %v", hseg)
	}
	if got := segmentDump(t, r, hseg[0]); !reflect.DeepEqual(got, local) {
		for _, p := range segment.RecordDirs() {
			if !slices.Equal(got[p], local[p]) {
				t.Errorf("%s differs under --engine hadoop: %d rows, local %d", p, len(got[p]), len(local[p]))
			}
		}
	}

	hsl := filepath.Join(r.dir, "HS")
	hr.ok(append([]string{"--engine", "hadoop", "--crawl", a, "mergesegs", hsl, "--slice", "25",
		"--dir", filepath.Join(a, "segments")}, now...)...)
	if got, want := newSegments(t, hsl), newSegments(t, sl); len(got) != len(want) {
		t.Errorf("hadoop slices %v, local %v", got, want)
	} else {
		for i := range got {
			if !reflect.DeepEqual(segmentDump(t, r, got[i]), segmentDump(t, r, want[i])) {
				t.Errorf("slice %s differs under --engine hadoop", got[i])
			}
		}
	}

	// mergedb: local, refused, forced, under hadoop.
	md := filepath.Join(r.dir, "MD")
	out := r.ok("mergedb", filepath.Join(md, "crawldb"), filepath.Join(a, "crawldb"), filepath.Join(b, "crawldb")).stdout
	if !strings.Contains(out, "URLs:") {
		t.Errorf("mergedb printed:\n%s", out)
	}
	want := dumpRows(t, r, md)
	rowsA, rowsB := dumpRows(t, r, a), dumpRows(t, r, b)
	for u := range rowsB {
		rowsA[u] = nil
	}
	if len(want) != len(rowsA) || len(want) == 0 {
		t.Errorf("mergedb: %d URLs, want %d", len(want), len(rowsA))
	}
	res = r.fails(exitUsage, "mergedb", filepath.Join(md, "crawldb"), filepath.Join(b, "crawldb"))
	assertCleanError(t, res, "--force")
	r.ok("mergedb", "--force", filepath.Join(md, "crawldb"), filepath.Join(a, "crawldb"), filepath.Join(b, "crawldb"))
	if got := dumpRows(t, r, md); !reflect.DeepEqual(got, want) {
		t.Error("mergedb --force of the same inputs gave another CrawlDB")
	}
	hd := filepath.Join(r.dir, "HD")
	hr.ok("--engine", "hadoop", "mergedb", filepath.Join(hd, "crawldb"), filepath.Join(a, "crawldb"), filepath.Join(b, "crawldb"))
	if got := dumpRows(t, r, hd); !reflect.DeepEqual(got, want) {
		t.Errorf("mergedb under --engine hadoop: %d URLs differ from the local engine's %d", len(got), len(want))
	}

	ran := map[string]int{}
	for _, inv := range invocations(t, invLog) {
		if inv.Exit != 0 {
			t.Errorf("hadoop jar of %s exited %d", inv.TrawlJob, inv.Exit)
		}
		ran[inv.TrawlJob]++
	}
	if !reflect.DeepEqual(ran, map[string]int{"mergesegs": 2, "mergedb": 1}) {
		t.Errorf("jobs through hadoop jar: %v", ran)
	}

	// An unparsed segment merged is parsed and updated as any other.
	c := filepath.Join(r.dir, "C")
	r.ok("--crawl", c, "inject", half, "--now", "2026-01-05T00:00:00Z")
	r.ok("--crawl", c, "generate", "--now", "2026-01-05T00:00:00Z", "--schedule", "default")
	r.ok("--log-level", "warn", "--crawl", c, "fetch", "--allow-private", "--dns-server", srv.DNSAddr(), "--agent", "trawl-e2e",
		"--server-delay", "20ms")
	cm := filepath.Join(c, "merged")
	r.ok(append([]string{"--crawl", c, "mergesegs", cm, "--dir", filepath.Join(c, "segments")}, now...)...)
	cseg := newSegments(t, cm)
	if len(cseg) != 1 {
		t.Fatalf("merge of the unparsed segment: %v", cseg)
	}
	if l := r.ok("readseg", "list", cseg[0]).stdout; !strings.Contains(l, "fetched") {
		t.Errorf("the unparsed merge is not listed as fetched:\n%s", l)
	}
	r.ok("--crawl", c, "parse", cseg[0])
	r.ok("--crawl", c, "updatedb", cseg[0], "--schedule", "default")
	if l := r.ok("readseg", "list", cseg[0]).stdout; !strings.Contains(l, "merged") {
		t.Errorf("after parse and updatedb:\n%s", l)
	}

	// Segments merged into a CrawlDB and one that is not cannot be merged.
	res = r.fails(exitFailure, "mergesegs", filepath.Join(r.dir, "mixed"), segmentsOf(t, a)[0], segmentsOf(t, c)[0])
	assertCleanError(t, res, "updatedb the others first")
	if segs := newSegments(t, filepath.Join(r.dir, "mixed")); len(segs) != 0 {
		t.Errorf("the refused merge made %v", segs)
	}

	// Kills: nothing published that later jobs would take; a rerun
	// finishes.
	for _, point := range []string{"mergesegs:publish-ready", "mergesegs:published-3", "mergesegs:before-publish"} {
		k := filepath.Join(r.dir, "K-"+strings.ReplaceAll(point, ":", "-"))
		args := append([]string{"--crawl", a, "mergesegs", k, "--dir", filepath.Join(a, "segments")}, now...)
		killAt(t, r, point, args...)
		if segs := newSegments(t, k); len(segs) != 0 {
			t.Errorf("%s: the killed merge published %v", point, segs)
		}
		r.ok(args...)
		segs := newSegments(t, k)
		if len(segs) != 1 {
			t.Fatalf("%s: rerun made %v", point, segs)
		}
		if got := segmentDump(t, r, segs[0]); !reflect.DeepEqual(got, local) {
			t.Errorf("%s: the rerun's merge differs", point)
		}
		if ents, _ := os.ReadDir(k); len(ents) != 1 {
			t.Errorf("%s: left %v", point, ents)
		}
	}
	// Killed between the renames of its slices: the rerun finishes the
	// publishing, with the slices the killed run named, and merges
	// nothing again.
	ks := filepath.Join(r.dir, "KS")
	sargs := append([]string{"--crawl", a, "mergesegs", ks, "--slice", "25", "--dir", filepath.Join(a, "segments")}, now...)
	killAt(t, r, "mergesegs:renamed-1", sargs...)
	if segs := newSegments(t, ks); len(segs) != 1 {
		t.Errorf("killed after the first slice's rename: %v", segs)
	}
	res = r.ok(sargs...)
	if !strings.Contains(res.stdout, "new segment:") {
		t.Errorf("the rerun printed:\n%s", res.stdout)
	}
	gotSl, wantSl := newSegments(t, ks), newSegments(t, sl)
	if len(gotSl) != len(wantSl) {
		t.Fatalf("after the rerun: %v, want slices like %v", gotSl, wantSl)
	}
	for i := range gotSl {
		if filepath.Base(gotSl[i]) != filepath.Base(wantSl[i]) || !reflect.DeepEqual(segmentDump(t, r, gotSl[i]), segmentDump(t, r, wantSl[i])) {
			t.Errorf("slice %s differs from %s", gotSl[i], wantSl[i])
		}
	}
	if ents, _ := os.ReadDir(ks); len(ents) != len(wantSl) {
		t.Errorf("left in %s: %v", ks, ents)
	}

	for _, point := range []string{"mergedb:publish-ready", "mergedb:before-install"} {
		k := filepath.Join(r.dir, "KD-"+strings.ReplaceAll(point, ":", "-"))
		args := []string{"mergedb", filepath.Join(k, "crawldb"), filepath.Join(a, "crawldb"), filepath.Join(b, "crawldb")}
		killAt(t, r, point, args...)
		if _, err := os.Stat(filepath.Join(k, "crawldb", crawldb.CurrentName)); err == nil {
			t.Errorf("%s: the killed mergedb installed a CrawlDB", point)
		}
		if res := r.run("--crawl", k, "readdb", "stats"); res.code == exitOK {
			t.Errorf("%s: readdb reads the killed merge's CrawlDB:\n%s", point, res.stdout)
		}
		r.ok(args...)
		if got := dumpRows(t, r, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the rerun's CrawlDB differs", point)
		}
	}
}
