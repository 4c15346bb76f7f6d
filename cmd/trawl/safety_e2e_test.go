package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// slowWeb serves a small synthetic web and returns a seed file listing
// every page of it, so that one fetch list holds many URLs on few hosts:
// with a server delay of delay, its fetch takes about pages/hosts × delay.
func slowWeb(t *testing.T, dir string, hosts, pages int) (*simweb.Server, string) {
	t.Helper()
	srv, _ := serveWeb(t, dir, simweb.Config{Seed: 5, Hosts: hosts, Pages: pages})
	web := srv.Web()
	// Every page of the ordinary hosts (the web's hostile hosts, a
	// blackhole among them, exist whatever the hazards).
	var b strings.Builder
	for id := 0; id < web.NumPages(); id++ {
		if web.Host(int(web.Page(id).Host)).Role == simweb.RoleNormal {
			fmt.Fprintln(&b, srv.URL(id))
		}
	}
	seeds := filepath.Join(dir, "all.txt")
	writeTestFile(t, seeds, b.String())
	return srv, seeds
}

// fetchArgs are the flags of a fetch of srv.
func fetchArgs(srv *simweb.Server, crawl string, delay string, extra ...string) []string {
	return append([]string{"--log-level", "warn", "--crawl", crawl, "fetch", "--allow-private", "--dns-server", srv.DNSAddr(),
		"--agent", "trawl-e2e", "--server-delay", delay}, extra...)
}

// readFetchRows reads a segment's crawl_fetch.
func readFetchRows(t *testing.T, seg string) []segment.Fetch {
	t.Helper()
	return readStage[segment.Fetch](t, filepath.Join(seg, segment.DirFetch))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// junk lists what a job must not leave behind under dir: lock files,
// staging directories, temporary files, scratch directories.
func junk(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := d.Name()
		switch {
		case name == crawldb.LockFile, name == "_temporary", strings.Contains(name, ".tmp-"),
			d.Type().IsRegular() && strings.HasPrefix(rel, "tmp"+string(filepath.Separator)):
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFetchTwiceAtOnce runs two fetches of one segment at once (two cron
// runs): the second exits 4 at once naming the first, which completes
// with a crawl_fetch row per URL and a content row per fetched page.
func TestFetchTwiceAtOnce(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv, seeds := slowWeb(t, r.dir, 2, 40)
	crawl := filepath.Join(r.dir, "crawl")
	r.ok("--log-level", "warn", "--crawl", crawl, "inject", seeds)
	seg := strings.TrimSpace(r.ok("--log-level", "warn", "--crawl", crawl, "generate").stdout)
	listed := len(readGenerate(t, seg))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first := r.cmd(ctx, fetchArgs(srv, crawl, "100ms", filepath.Base(seg))...)
	var stderr bytes.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first fetch's first request", time.Minute, func() bool { return srv.AccessLog().Len() > 0 })
	before := srv.AccessLog().Len()
	start := time.Now()
	res := r.fails(exitLocked, fetchArgs(srv, crawl, "100ms", filepath.Base(seg))...)
	took := time.Since(start)
	assertCleanError(t, res, "segment", "locked", `"fetch"`, "running")
	if err := first.Wait(); err != nil {
		t.Fatalf("the first fetch: %v\n%s", err, stderr.String())
	}
	t.Logf("the second fetch exited 4 after %v", took.Round(time.Millisecond))

	rows := readFetchRows(t, seg)
	byURL := map[string]int{}
	success := 0
	for _, f := range rows {
		byURL[f.URL]++
		if f.Status == crawldb.StatusFetchSuccess {
			success++
		}
	}
	for _, d := range readGenerate(t, seg) {
		if byURL[d.URL] != 1 {
			t.Errorf("%s: %d crawl_fetch rows, want 1", d.URL, byURL[d.URL])
		}
	}
	contents := readStage[segment.Content](t, filepath.Join(seg, segment.DirContent))
	if len(contents) != success || success == 0 {
		t.Errorf("%d content rows for %d fetched pages", len(contents), success)
	}
	// Each page was requested once: the second fetch sent nothing.
	if n := srv.AccessLog().Len() - before; n > int64(listed+2*2) { // + robots.txt per host
		t.Errorf("%d requests after the second fetch started, for %d URLs", n, listed)
	}
	if j := junk(t, crawl); len(j) > 0 {
		t.Errorf("left behind: %v", j)
	}
}

// TestFetchKilledRerun kills a fetch with SIGKILL mid-way, then reruns it
// with no --force: the rerun completes, and nothing of the killed run
// stays in the crawl directory or in $TMPDIR.
func TestFetchKilledRerun(t *testing.T) {
	r := newRunner(t)
	r.bin = plainBinPath
	tmp := filepath.Join(r.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	r.env = []string{"TMPDIR=" + tmp}
	srv, seeds := slowWeb(t, r.dir, 2, 40)
	crawl := filepath.Join(r.dir, "crawl")
	r.ok("--log-level", "warn", "--crawl", crawl, "inject", seeds)
	seg := strings.TrimSpace(r.ok("--log-level", "warn", "--crawl", crawl, "generate").stdout)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, fetchArgs(srv, crawl, "100ms", filepath.Base(seg))...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ten requests", time.Minute, func() bool { return srv.AccessLog().Len() >= 10 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(seg, segment.DirFetch)); err == nil {
		t.Fatal("the fetch had published before the kill")
	}
	t.Logf("the killed run left: %v", junk(t, r.dir))

	r.ok(fetchArgs(srv, crawl, "0s", filepath.Base(seg))...)
	if got, want := len(readFetchRows(t, seg)), len(readGenerate(t, seg)); got != want {
		t.Errorf("the rerun wrote %d crawl_fetch rows for %d URLs", got, want)
	}
	if j := junk(t, r.dir); len(j) > 0 {
		t.Errorf("left behind after the rerun: %v", j)
	}
}

// TestCrawlInterruptKeepsFetched sends SIGINT three seconds into a fetch
// that would take about half a minute: trawl exits 130 within seconds,
// the pages fetched so far are published in the segment (the rest
// recorded as skipped), and the next crawl parses and merges them before
// it generates anything new.
func TestCrawlInterruptKeepsFetched(t *testing.T) {
	r := newRunner(t)
	r.bin = plainBinPath
	srv, seeds := slowWeb(t, r.dir, 2, 60)
	crawl := filepath.Join(r.dir, "crawl")
	args := []string{"--log-level", "warn", "--crawl", crawl, "crawl", "--schedule", "default", "--allow-private",
		"--dns-server", srv.DNSAddr(), "--agent", "trawl-e2e", "--server-delay", "1s", "--rounds", "1"}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, append(args, "--seeds", seeds)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first page request", time.Minute, func() bool { return srv.AccessLog().Len() > 2 })
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	_ = cmd.Wait()
	took := time.Since(sent)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout.String(), stderr.String())
	}
	if took > 20*time.Second {
		t.Errorf("trawl took %v to exit after SIGINT", took)
	}
	t.Logf("exited 130 %v after SIGINT", took.Round(time.Millisecond))
	segs, _ := filepath.Glob(filepath.Join(crawl, "segments", "*"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	seg := segs[0]
	fetched := map[string]bool{}
	skipped := 0
	for _, f := range readFetchRows(t, seg) {
		switch f.Status {
		case crawldb.StatusFetchSuccess:
			fetched[f.URL] = true
		case crawldb.StatusFetchSkipped:
			if !strings.Contains(f.Message, "interrupt") {
				t.Errorf("%s skipped: %q", f.URL, f.Message)
			}
			skipped++
		}
	}
	if len(fetched) == 0 || skipped == 0 {
		t.Fatalf("%d pages fetched, %d skipped: want both", len(fetched), skipped)
	}
	if _, err := os.Stat(filepath.Join(seg, jobs.UpdatedMarker)); err == nil {
		t.Fatal("the interrupted crawl merged the segment")
	}

	// The next crawl parses and merges the kept pages first.
	res := r.ok(args...)
	if !strings.Contains(res.stdout, "(resumed)") {
		t.Errorf("the next crawl did not resume the interrupted round:\n%s", res.stdout)
	}
	rows := dumpRows(t, r, crawl)
	for u := range fetched {
		if m := rows[u]; m == nil || m["status"] != "db_fetched" {
			t.Errorf("%s, fetched before the interrupt: %v", u, m["status"])
		}
	}
	if j := junk(t, crawl); len(j) > 0 {
		t.Errorf("left behind: %v", j)
	}
}

// TestCrawlPrivateRefusedThenAllowed crawls loopback seeds without
// --allow-private: the fetcher refuses them, which is no verdict on the
// pages (they stay db_unfetched, and the output says which flag allows
// them), so the rerun with --allow-private fetches them.
func TestCrawlPrivateRefusedThenAllowed(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	srv, seeds := serveWeb(t, r.dir, simweb.Config{Seed: 2, Hosts: 5, Pages: 40})
	crawl := filepath.Join(r.dir, "crawl")
	args := []string{"--log-level", "warn", "--crawl", crawl, "crawl", "--schedule", "default",
		"--dns-server", srv.DNSAddr(), "--agent", "trawl-e2e", "--server-delay", "0s", "--rounds", "1"}
	before := srv.AccessLog().Len()
	res := r.ok(append(args, "--seeds", seeds)...)
	if n := srv.AccessLog().Len() - before; n != 0 {
		t.Errorf("the crawl without --allow-private made %d requests", n)
	}
	if !strings.Contains(res.stdout+res.stderr, "--allow-private") {
		t.Errorf("nothing says how to allow the refused URLs:\n%s\n%s", res.stdout, res.stderr)
	}
	rows := dumpRows(t, r, crawl)
	for _, u := range srv.Seeds() {
		if m := rows[u]; m == nil || m["status"] != "db_unfetched" {
			t.Errorf("seed %s after a refused fetch: %v", u, m["status"])
		}
	}
	res = r.ok(append(args, "--allow-private")...)
	rows = dumpRows(t, r, crawl)
	for _, u := range srv.Seeds() {
		if m := rows[u]; m == nil || m["status"] != "db_fetched" {
			t.Errorf("seed %s after the crawl with --allow-private: %v\n%s", u, m["status"], res.stdout)
		}
	}
}

// readStage reads every part of a published job output directory.
func readStage[T any](t *testing.T, dir string) []T {
	t.Helper()
	fsys := storage.NewLocal()
	parts, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, p := range parts {
		rows, err := parquetio.ReadAll[T](fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	return out
}
