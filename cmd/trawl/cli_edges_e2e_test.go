package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestGlobalFlagsAtAnyLevel checks that the global options work before the
// command, after a command group's name and after its sub-command's, and
// that the last one given wins.
func TestGlobalFlagsAtAnyLevel(t *testing.T) {
	r := newRunner(t)
	seeds := filepath.Join(r.dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://a.example/\nhttp://b.example/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.ok("inject", "--crawl", "c1", seeds)
	want := r.ok("--crawl", "c1", "readdb", "stats").stdout
	if !strings.Contains(want, "2") {
		t.Fatalf("readdb stats of two URLs:\n%s", want)
	}
	for _, args := range [][]string{
		{"readdb", "--crawl", "c1", "stats"},
		{"readdb", "stats", "--crawl", "c1"},
		{"readdb", "-c", "c1", "--log-level", "warn", "stats"},
		{"--crawl", "nowhere", "readdb", "--crawl", "c1", "stats"},
		{"readdb", "--crawl", "nowhere", "stats", "--crawl", "c1"},
		{"readdb", "--log-format", "json", "--config", "", "stats", "--crawl=c1"},
	} {
		if got := r.ok(args...).stdout; got != want {
			t.Errorf("trawl %s:\n%s\nwant (as trawl --crawl c1 readdb stats):\n%s", strings.Join(args, " "), got, want)
		}
	}
	// The group level's --log-level reaches the sub-command's logger.
	if res := r.ok("readdb", "--log-level", "debug", "--crawl", "c1", "stats"); !strings.Contains(res.stderr, "level=DEBUG") {
		t.Errorf("readdb --log-level debug stats logged no debug line:\n%s", res.stderr)
	}
	res := r.fails(exitUsage, "readdb", "--no-such-flag", "stats")
	assertCleanError(t, res, "no-such-flag")
	// Every command group's help lists the global options.
	for _, group := range []string{"readdb", "readseg", "readlinkdb", "simweb", "eval"} {
		if out := r.ok(group, "--help").stdout; !strings.Contains(out, "--crawl DIR") {
			t.Errorf("trawl %s --help lacks the global options:\n%s", group, out)
		}
	}
}

// notModifiedSite serves three linked pages with an ETag, and answers 304
// to a request that has it.
func notModifiedSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conditional atomic.Int64
	pages := map[string]string{
		"/":   `<html><title>home</title><a href="/p1">one</a> <a href="/p2">two</a></html>`,
		"/p1": `<html><title>one</title><a href="/">home</a></html>`,
		"/p2": `<html><title>two</title><a href="/p1">one</a></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"v1-%d"`, len(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &conditional
}

// TestCrawlSummaryNotModified crawls a site twice, 40 simulated days apart:
// the second round's pages come back 304, and the round's and the crawl's
// summaries count them. The binary is run through a relative path, which
// the summary's next: hint repeats.
func TestCrawlSummaryNotModified(t *testing.T) {
	srv, conditional := notModifiedSite(t)
	r := newRunner(t)
	if err := os.MkdirAll(filepath.Join(r.dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "bin", "trawl"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	r.bin = filepath.Join("bin", "trawl") // relative to r.dir, where it runs
	seeds := filepath.Join(r.dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(srv.URL+"/\n"+srv.URL+"/p1\n"+srv.URL+"/p2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.ok("--crawl", "crawl", "crawl", "--seeds", seeds, "--rounds", "2", "--now", "2026-01-01",
		"--days-per-round", "40", "--agent", "testbot", "--allow-private", "--server-delay", "0")
	if conditional.Load() != 3 {
		t.Fatalf("%d conditional requests answered 304, want 3:\n%s", conditional.Load(), res)
	}
	for _, w := range []string{
		"3 ok, 0 failed (0 gone, 0 to retry), 0 robots denied, 0 not modified,",
		"0 ok, 0 failed (0 gone, 0 to retry), 0 robots denied, 3 not modified,",
		"the CrawlDB has 3 URLs, 3 fetched\n",
		"the CrawlDB has 3 URLs, 0 fetched, 3 not modified\n",
		"crawl: 2 rounds in ",
		": 3 pages fetched, 3 not modified, 0 failed, 0 new URLs\n",
		"next:    bin/trawl --crawl crawl readdb stats\n",
	} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("crawl summary lacks %q:\n%s", w, res.stdout)
		}
	}
}
