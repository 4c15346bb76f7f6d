package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/warc/warctest"
)

// checkSegmentWARC reads the WARC files and indexes of dir back with the
// independent reader (warctest: every record, digest and index offset
// checked) and checks them against the segment seg: with requests (a
// fetch's files), one response record per crawl_fetch row with a
// response, linked to its request; without (an export's), one per content
// row; each content row's body the payload of its URL's record, no URL
// written twice.
func checkSegmentWARC(t *testing.T, seg, dir string, requests bool) {
	t.Helper()
	d := warctest.CheckDir(t, dir)
	seen := map[string]int{}
	ids := map[string]warctest.Record{}
	for _, recs := range d.Files {
		for _, r := range recs {
			ids[r.ID] = r
			if r.Type == "response" {
				seen[r.TargetURI]++
			}
		}
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d response records", u, n)
		}
	}
	resp := d.Responses()
	want := 0
	content := readStage[segment.Content](t, filepath.Join(seg, segment.DirContent))
	stored := map[string]bool{}
	for _, c := range content {
		stored[c.URL] = true
	}
	if requests {
		for _, f := range readFetchRows(t, seg) {
			if f.HTTPStatus == 0 {
				continue
			}
			if f.Status == crawldb.StatusFetchSuccess && !stored[f.URL] {
				// A page of a type not stored (fetcher.contentTypes):
				// its body was not downloaded, so it is not archived.
				if _, ok := resp[f.URL]; ok {
					t.Errorf("%s: archived, though its body was not downloaded (%s)", f.URL, f.Message)
				}
				continue
			}
			want++
			r, ok := resp[f.URL]
			switch {
			case !ok:
				t.Errorf("%s (%v, HTTP %d): no response record", f.URL, f.Status, f.HTTPStatus)
			case r.Status != int(f.HTTPStatus):
				t.Errorf("%s: response record status %d, crawl_fetch %d", f.URL, r.Status, f.HTTPStatus)
			case ids[r.ConcurrentTo].Type != "request" || ids[r.ConcurrentTo].ConcurrentTo != r.ID:
				t.Errorf("%s: response not linked to a request", f.URL)
			}
		}
	}
	if !requests {
		want = len(content)
	}
	if len(resp) != want || want == 0 {
		t.Errorf("%d response records, want %d", len(resp), want)
	}
	for _, c := range content {
		if r := resp[c.URL]; !bytes.Equal(r.Payload, c.Body) || r.Status != 200 {
			t.Errorf("%s: record status %d with %d payload bytes; content has %d", c.URL, r.Status, len(r.Payload), len(c.Body))
		}
	}
}

// TestWARCCommands runs the binary: fetch --warc archives the fetch in
// SEGMENT/warc; warc export refuses to overwrite it, writes to --out,
// refuses that again, and replaces it with --force.
func TestWARCCommands(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv, seeds := slowWeb(t, r.dir, 2, 30)
	crawl := filepath.Join(r.dir, "crawl")
	g := []string{"--log-level", "warn", "--crawl", crawl}
	r.ok(append(g, "inject", seeds)...)
	r.ok(append(g, "generate", "--num-fetchers", "2")...)
	r.ok(fetchArgs(srv, crawl, "0s", "--warc", "--warc-prefix", "e2e")...)
	seg := segmentsOf(t, crawl)[0]
	inSeg := filepath.Join(seg, segment.DirWARC)
	checkSegmentWARC(t, seg, inSeg, true)
	names, _ := filepath.Glob(filepath.Join(inSeg, "e2e-*.warc.gz"))
	if len(names) != 2 {
		t.Errorf("WARC files %v: want one per fetch task, named by --warc-prefix", names)
	}

	if res := r.run(append(g, "warc", "export", filepath.Base(seg))...); res.code == 0 || !strings.Contains(res.stderr, "already exists") {
		t.Errorf("export over the fetch's WARC files: %s", res)
	}
	checkSegmentWARC(t, seg, inSeg, true)
	out := filepath.Join(r.dir, "archive")
	res := r.ok(append(g, "warc", "export", "--out", out, filepath.Base(seg))...)
	if !strings.Contains(res.stdout, "responses:\t") {
		t.Errorf("export printed:\n%s", res.stdout)
	}
	checkSegmentWARC(t, seg, out, false)
	if res := r.run(append(g, "warc", "export", "--out", out, seg)...); res.code == 0 {
		t.Errorf("a second export to %s: %s", out, res)
	}
	r.ok(append(g, "warc", "export", "--force", "--out", out, seg)...)
	checkSegmentWARC(t, seg, out, false)
	if j := junk(t, r.dir); len(j) > 0 {
		t.Errorf("left behind: %v", j)
	}
	for _, cmd := range [][]string{{"warc", "--help"}, {"warc", "export", "--help"}} {
		if res := r.ok(cmd...); !strings.Contains(res.stdout, "Examples:") {
			t.Errorf("trawl %s has no examples", strings.Join(cmd, " "))
		}
	}
}

// TestWARCKilledFetch kills fetch --warc with SIGKILL after its tasks
// wrote their WARC files and at each step of publishing (content, then
// warc, then crawl_fetch): no WARC file is published before the fetch
// is, and the plain retry writes each response once.
func TestWARCKilledFetch(t *testing.T) {
	r := newRunner(t)
	r.bin = plainBinPath
	srv, seeds := slowWeb(t, r.dir, 2, 25)
	generated := filepath.Join(r.dir, "generated")
	g := []string{"--log-level", "warn", "--crawl", generated}
	r.ok(append(g, "inject", seeds)...)
	r.ok(append(g, "generate", "--num-fetchers", "2")...)
	for _, point := range []string{"fetch:tasks-done", "fetch:publish-ready", "fetch:published-1", "fetch:published-2"} {
		t.Run(point, func(t *testing.T) {
			crawl := filepath.Join(t.TempDir(), "crawl")
			copyDir(t, generated, crawl)
			seg := segmentsOf(t, crawl)[0]
			killAt(t, r, point, fetchArgs(srv, crawl, "0s", "--warc")...)
			staged, _ := filepath.Glob(filepath.Join(seg, "_temporary", "*", segment.DirWARC, "*.warc.gz"))
			_, err := os.Stat(filepath.Join(seg, segment.DirWARC))
			switch point {
			case "fetch:published-2": // warc published, crawl_fetch not: the fetch is not done
				st, ierr := segment.Inspect(storage.NewLocal(), seg)
				if err != nil || ierr != nil || st.State != segment.StateGenerated || !strings.Contains(strings.Join(st.Partial, " "), segment.DirWARC) {
					t.Fatalf("after the kill: %v %v, status %+v", err, ierr, st)
				}
			default:
				if !os.IsNotExist(err) {
					t.Fatalf("WARC files published before the fetch: %v", err)
				}
				if len(staged) == 0 {
					t.Fatal("no WARC file written in the staging directory before the kill")
				}
			}
			retryOK(t, r, fetchArgs(srv, crawl, "0s", "--warc")...)
			checkSegmentWARC(t, seg, filepath.Join(seg, segment.DirWARC), true)
			rows := readFetchRows(t, seg)
			if len(rows) == 0 || rows[0].Status == crawldb.StatusInjected {
				t.Errorf("crawl_fetch after the retry: %d rows", len(rows))
			}
			if j := junk(t, crawl); len(j) > 0 {
				t.Errorf("left behind after the retry: %v", j)
			}
		})
	}
}

// TestWARCHadoopEngine runs fetch --warc and warc export under --engine
// hadoop with the Hadoop Streaming emulator: each map task writes its
// own files, and they validate as the local engine's do.
func TestWARCHadoopEngine(t *testing.T) {
	t.Parallel()
	home := fakeHadoopHome(t)
	r := newRunner(t)
	r.bin = plainBinPath
	r.env = []string{"HADOOP_HOME=" + home, "STREAMEMU_STATE=" + filepath.Join(r.dir, "emu")}
	srv, seeds := slowWeb(t, r.dir, 3, 20)
	crawl := filepath.Join(r.dir, "crawl")
	g := []string{"--log-level", "warn", "--engine", "hadoop", "--crawl", crawl}
	r.ok(append(g, "inject", seeds)...)
	r.ok(append(g, "generate", "--num-fetchers", "3")...)
	r.ok(append(fetchArgs(srv, crawl, "0s", "--warc"), "--engine", "hadoop")...)
	seg := segmentsOf(t, crawl)[0]
	checkSegmentWARC(t, seg, filepath.Join(seg, segment.DirWARC), true)
	parts, _ := filepath.Glob(filepath.Join(seg, segment.DirGenerate, "part-*.parquet"))
	if names, _ := filepath.Glob(filepath.Join(seg, segment.DirWARC, "*.warc.gz")); len(names) != len(parts) || len(parts) < 2 {
		t.Errorf("%d WARC files, want one per map task (%d)", len(names), len(parts))
	}
	out := filepath.Join(r.dir, "archive")
	r.ok(append(g, "warc", "export", "--out", out, seg)...)
	checkSegmentWARC(t, seg, out, false)
}

// TestWARCCrawl: crawl --warc archives its round's fetch (parsed in the
// fetch job, crawl's default) in the segment.
func TestWARCCrawl(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv, seeds := slowWeb(t, r.dir, 2, 20)
	crawl := filepath.Join(r.dir, "crawl")
	r.ok(crawlArgs(srv, crawl, "--seeds", seeds, "--rounds", "1", "--warc")...)
	segs := segmentsOf(t, crawl)
	if len(segs) != 1 {
		t.Fatalf("segments %v, want 1", segs)
	}
	checkSegmentWARC(t, segs[0], filepath.Join(segs[0], segment.DirWARC), true)
}

// TestWARCUsageErrors: bad arguments and settings are usage errors that
// write nothing; a segment that does not exist is a failure.
func TestWARCUsageErrors(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	for _, args := range [][]string{
		{"--crawl", crawl, "warc", "export"},
		{"--crawl", crawl, "warc", "export", "--warc-max-file-size", "0", "20261121103000"},
		{"--crawl", crawl, "warc", "export", "--warc-prefix", "a/b", "20261121103000"},
		{"--crawl", crawl, "fetch", "--agent", "x", "--warc", "--warc-max-file-size", "0"},
	} {
		if res := r.run(args...); res.code != exitUsage {
			t.Errorf("trawl %s: %s; want exit %d", strings.Join(args, " "), res, exitUsage)
		}
	}
	res := r.run("--crawl", crawl, "warc", "export", "--out", filepath.Join(r.dir, "out"), "20261121103000")
	if res.code == exitOK || !strings.Contains(res.stderr, "20261121103000") {
		t.Errorf("export of a missing segment: %s", res)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a failed export created its output: %v", err)
	}
}
