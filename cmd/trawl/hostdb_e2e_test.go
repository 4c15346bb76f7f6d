//go:build unix

package main

import (
	"encoding/csv"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl/trawl/simweb"
)

// copyTree copies the directory tree src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hostDump runs readhostdb dump --format json and returns its rows by
// host.
func hostDump(t *testing.T, r *runner, crawl string, extra ...string) map[string]map[string]any {
	t.Helper()
	res := r.ok(append([]string{"--crawl", crawl, "readhostdb", "dump", "--format", "json"}, extra...)...)
	out := map[string]map[string]any{}
	dec := json.NewDecoder(strings.NewReader(res.stdout))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("readhostdb dump: %v\n%.500s", err, res.stdout)
		}
		out[m["host"].(string)] = m
	}
	return out
}

// TestHostDbCommands crawls a synthetic web with failing hosts, plus a
// host that refuses every connection and one whose name does not resolve,
// for one round with --hostdb; reads the HostDb with readhostdb (stats,
// dump as CSV and JSON, --host); rebuilds it from scratch with
// updatehostdb --dir on the local engine and under --engine hadoop (the
// Streaming emulator), which must agree row for row; and generates with
// --max-failure-streak and --skip-dns-failed on both engines, which skip
// the same hosts and URLs.
func TestHostDbCommands(t *testing.T) {
	t.Parallel()
	home := fakeHadoopHome(t)
	r := newRunner(t)
	r.bin = plainBinPath // task processes: data races are the unit tests' business
	srv, seeds := serveWeb(t, r.dir, simweb.Config{Seed: 4, Hosts: 8, Pages: 120, Hazards: simweb.HazardFailingHosts})
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	b, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, seeds, string(b)+refused+"/\n"+refused+"/a.html\n"+refused+"/b.html\nhttp://nosuch."+simweb.Domain+"/\n")
	crawl := filepath.Join(r.dir, "crawl")
	res := r.ok(crawlArgs(srv, crawl, "--seeds", seeds, "--rounds", "1", "--now", "2026-01-05T00:00:00Z", "--hostdb")...)
	if !regexp.MustCompile(`hostdb +\d+ hosts, \d+ with a failure streak`).MatchString(res.stdout) {
		t.Fatalf("crawl --hostdb:\n%s", res.stdout)
	}

	stats := r.ok("--crawl", crawl, "readhostdb", "stats").stdout
	for _, w := range []string{"version:\t", "hosts:\t", "db_unfetched:\t", "db_fetched:\t", "failed fetches:\t",
		"hosts whose last fetch failed on DNS:\t1\n"} {
		if !strings.Contains(stats, w) {
			t.Errorf("readhostdb stats lacks %q:\n%s", w, stats)
		}
	}
	rows := hostDump(t, r, crawl)
	rh := rows["127.0.0.2"]
	if rh == nil || rh["failure_streak"] != 3.0 || rh["db_unfetched"] != 3.0 || rh["robots_failed"] != true || rh["last_fetch"] == "" {
		t.Errorf("the refusing host: %v", rh)
	}
	if nd := rows["nosuch."+simweb.Domain]; nd == nil || nd["dns_failures"] != 1.0 || nd["last_dns_failure"] == "" {
		t.Errorf("the host without DNS: %v", nd)
	}
	if one := hostDump(t, r, crawl, "--host", "127.0.0.2"); len(one) != 1 || one["127.0.0.2"]["failures"] != rh["failures"] {
		t.Errorf("readhostdb dump --host: %v", one)
	}
	dump := r.ok("--crawl", crawl, "readhostdb", "dump").stdout
	recs, err := csv.NewReader(strings.NewReader(dump)).ReadAll()
	if err != nil || len(recs) != len(rows)+1 || strings.Join(recs[0], ",") != strings.Join(hostColumns, ",") {
		t.Fatalf("readhostdb dump csv (%d hosts): %v\n%.500s", len(rows), err, dump)
	}
	r.fails(exitNothingToDo, "--crawl", crawl, "readhostdb", "dump", "--host", "nowhere.example")
	r.fails(exitUsage, "--crawl", crawl, "readhostdb", "dump", "--format", "xml")
	r.fails(exitUsage, "--crawl", crawl, "updatehostdb", "--dir", "20260105000000")

	// From scratch, on both engines: the same HostDb as the crawl's.
	hcrawl := filepath.Join(r.dir, "crawl-hadoop")
	copyTree(t, crawl, hcrawl)
	for _, c := range []string{crawl, hcrawl} {
		if err := os.RemoveAll(filepath.Join(c, "hostdb")); err != nil {
			t.Fatal(err)
		}
	}
	hadoop := *r
	invLog := filepath.Join(r.dir, "invocations.jsonl")
	hadoop.env = append(append([]string(nil), r.env...), "HADOOP_HOME="+home, "STREAMEMU_STATE="+filepath.Join(r.dir, "emu"),
		"STREAMEMU_LOG="+invLog)
	r.ok("--log-level", "warn", "--crawl", crawl, "updatehostdb", "--dir")
	hres := hadoop.ok("--log-level", "warn", "--engine", "hadoop", "--crawl", hcrawl, "updatehostdb", "--dir")
	if !strings.Contains(hres.stdout, "HostDb hosts:\t"+strconv.Itoa(len(rows))+"\n") {
		t.Errorf("updatehostdb under hadoop:\n%s", hres.stdout)
	}
	local, hrows := hostDump(t, r, crawl), hostDump(t, r, hcrawl)
	for _, got := range []map[string]map[string]any{local, hrows} {
		if len(got) != len(rows) {
			t.Errorf("%d hosts, the crawl's HostDb has %d", len(got), len(rows))
		}
		for h, want := range rows {
			g, _ := json.Marshal(got[h])
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("host %s:\n got %s\nwant %s", h, g, w)
			}
		}
	}

	// generate with the HostDb, on both engines.
	skip := regexp.MustCompile(`generate: HostDb version \S+: skipped (\d+ hosts, \d+ URLs for their failure streak \(generate.hostdb.maxFailureStreak 2\), \d+ for failed DNS)`)
	gen := func(rr *runner, c string, extra ...string) string {
		t.Helper()
		res := rr.ok(append([]string{"--log-level", "warn", "--crawl", c}, append(extra, "generate", "--now", "+60d",
			"--max-failure-streak", "2", "--skip-dns-failed", "--num-fetchers", "2")...)...)
		m := skip.FindStringSubmatch(res.stderr)
		if m == nil {
			t.Fatalf("generate printed no HostDb line:\n%s", res.stderr)
		}
		return m[1]
	}
	lgen, hgen := gen(r, crawl), gen(&hadoop, hcrawl, "--engine", "hadoop")
	if lgen != hgen || strings.HasPrefix(lgen, "0 hosts") || !strings.HasSuffix(lgen, ", 1 for failed DNS") {
		t.Errorf("generate with the HostDb: local %q, hadoop %q", lgen, hgen)
	}
	t.Logf("generate skipped %s", lgen)
	ran := map[string]int{}
	for _, inv := range invocations(t, invLog) {
		if inv.Exit != 0 {
			t.Errorf("hadoop jar of %s exited %d", inv.TrawlJob, inv.Exit)
		}
		ran[inv.TrawlJob]++
	}
	if ran["updatehostdb"] != 1 || ran["generate-select"] != 1 {
		t.Errorf("jobs run by the emulator: %v", ran)
	}

	// A crawl without a HostDb: readhostdb says how to make one, and
	// generate with the settings skips nothing and says why.
	bare := filepath.Join(r.dir, "bare")
	r.ok("--log-level", "warn", "--crawl", bare, "inject", seeds)
	if res := r.run("--crawl", bare, "readhostdb", "stats"); res.code == 0 {
		t.Errorf("readhostdb stats without a HostDb: %s", res)
	} else {
		assertCleanError(t, res, "is not a HostDb", "run updatehostdb first")
	}
	if res := r.ok("--log-level", "warn", "--crawl", bare, "generate", "--max-failure-streak", "1"); !strings.Contains(res.stderr, "no HostDb in ") {
		t.Errorf("generate without a HostDb: %s", res)
	}

	for _, cmd := range [][]string{{"updatehostdb"}, {"readhostdb"}, {"readhostdb", "dump"}, {"readhostdb", "stats"}} {
		if h := r.ok(append(cmd, "--help")...).stdout; !strings.Contains(h, "Examples:") {
			t.Errorf("%s --help has no examples:\n%s", cmd, h)
		}
	}
}
