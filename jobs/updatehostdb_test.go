package jobs

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/hostdb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// failingHosts starts the hosts of the HostDb tests on loopback: refused,
// an address whose port has no listener (every connection refused), and
// down, an HTTP server that answers 503 to everything, robots.txt too.
// It returns their origins (http://IP:port).
func failingHosts(t *testing.T) (refused, down string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	refused = "http://" + l.Addr().String()
	l.Close()
	l, err = net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return refused, "http://" + l.Addr().String()
}

// hostDbRows reads the crawl's HostDb by host.
func hostDbRows(t *testing.T, env Env) (map[string]hostdb.Host, string) {
	t.Helper()
	r, err := hostdb.Open(storage.NewLocal(), filepath.Join(env.Crawl, "hostdb"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]hostdb.Host{}
	for h, err := range r.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[h.Host]; dup {
			t.Errorf("host %s twice", h.Host)
		}
		out[h.Host] = h
	}
	return out, r.Version()
}

// listHosts counts the URLs of a segment's fetch list by host.
func listHosts(t *testing.T, env Env, name string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, rows := range fetchList(t, filepath.Join(env.Crawl, "segments", name)) {
		for _, r := range rows {
			out[urlutil.Host(r.URL)]++
		}
	}
	return out
}

// TestHostDbCrawlAndGenerate: a crawl round against the synthetic web plus
// a host that refuses every connection, one that answers 503 to
// everything and one whose name does not resolve, with the HostDb kept;
// the HostDb counts each host's URLs by status and the failing hosts'
// streaks, robots.txt and DNS failures; updating it again with the same
// segment changes nothing; and generate with generate.hostdb skips the
// failing hosts' URLs, counted by reason, where generate without it
// selects them.
func TestHostDbCrawlAndGenerate(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	srv, seeds := crawlWeb(t, dir)
	refused, down := failingHosts(t)
	noDNS := "http://nosuch." + simweb.Domain
	b, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	extra := []string{refused + "/", refused + "/a.html", refused + "/b.html", down + "/", down + "/x.html", noDNS + "/"}
	writeFile(t, seeds, string(b)+strings.Join(extra, "\n")+"\n")
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o := testCrawlOptions(srv, seeds, 1, t0)
	o.HostDb = true
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	rr := res.Rounds[0]
	if !slices.Contains(rr.Stages, "updatehostdb") || rr.UpdateHostDb == nil {
		t.Fatalf("stages %v", rr.Stages)
	}
	hosts, version := hostDbRows(t, env)
	if version == "" || version != rr.UpdateHostDb.Version {
		t.Errorf("version %q, result %q", version, rr.UpdateHostDb.Version)
	}

	// The per-status counts are the CrawlDB's.
	want := map[string][]int64{}
	for _, d := range dbRows(t, env) {
		c := want[d.Host]
		if c == nil {
			c = make([]int64, len(hostdb.StatusColumns))
			want[d.Host] = c
		}
		c[statusColumn(d.Status)]++
	}
	if len(hosts) != len(want) {
		t.Errorf("%d hosts in the HostDb, %d in the CrawlDB", len(hosts), len(want))
	}
	for host, c := range want {
		if got := hosts[host].StatusCounts(); !slices.Equal(got, c) {
			t.Errorf("%s: counts %v, want %v", host, got, c)
		}
	}

	hRefused, hDown, hNoDNS := hosts[urlutil.Host(refused+"/")], hosts[urlutil.Host(down+"/")], hosts[urlutil.Host(noDNS+"/")]
	if hRefused.FailureStreak != 3 || hRefused.Failures != 3 || hRefused.Successes != 0 || !hRefused.RobotsFailed ||
		hRefused.RobotsFailures != 3 || hRefused.DNSFailures != 0 || hRefused.Unfetched != 3 || hRefused.LastFetch.IsZero() {
		t.Errorf("refusing host: %+v", hRefused)
	}
	if hDown.FailureStreak != 2 || hDown.Failures != 2 || !hDown.RobotsFailed || hDown.RobotsFailures != 2 {
		t.Errorf("503 host: %+v", hDown)
	}
	if hNoDNS.FailureStreak != 1 || hNoDNS.DNSFailures != 1 || !hNoDNS.DNSFailed() || hNoDNS.RobotsFailed ||
		hNoDNS.LastDNSFailure.IsZero() {
		t.Errorf("host without DNS: %+v", hNoDNS)
	}
	var healthy int
	for host, h := range hosts {
		if !strings.HasSuffix(host, simweb.Domain) || host == urlutil.Host(noDNS+"/") || h.Successes == 0 {
			continue
		}
		healthy++
		if h.LastSuccess.IsZero() || h.DNSFailed() || h.LastFetch.Before(h.LastSuccess) {
			t.Errorf("healthy host %s: %+v", host, h)
		}
		if urlutil.Host(h.Homepage) != host || !isHomepage(h.Homepage) {
			t.Errorf("host %s: homepage %q", host, h.Homepage)
		}
	}
	if healthy == 0 {
		t.Fatal("no healthy host in the HostDb")
	}

	// The same segment again: nothing is counted twice.
	again, err := UpdateHostDb(context.Background(), env, UpdateHostDbOptions{Segments: []string{rr.Segment}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Counted == 0 {
		t.Errorf("the segment's fetches were not recognized as counted: %+v", again)
	}
	hosts2, version := hostDbRows(t, env)
	if hosts2[hRefused.Host].FailureStreak != 3 || hosts2[hDown.Host].Failures != 2 || version != again.Version {
		t.Errorf("after a second update (version %s): %+v / %+v", version, hosts2[hRefused.Host], hosts2[hDown.Host])
	}

	// generate with the HostDb: the failing hosts' URLs are skipped.
	g := o.Generate
	g.Now = t0.AddDate(0, 1, 0)
	g.HostDbMaxFailureStreak = 2
	g.HostDbSkipDNSFailed = true
	on, err := Generate(context.Background(), env, g)
	if err != nil {
		t.Fatal(err)
	}
	if on.HostDbHosts != 3 || on.HostDbFailing != 5 || on.HostDbDNSFailed != 1 || on.HostDbVersion != version {
		t.Errorf("generate with the HostDb: %d hosts, %d URLs for streaks, %d for DNS, version %q",
			on.HostDbHosts, on.HostDbFailing, on.HostDbDNSFailed, on.HostDbVersion)
	}
	if n := on.Counters.Get(JobGenerateSelect, ctrHostFailing); n != 5 {
		t.Errorf("counter %s = %d", ctrHostFailing, n)
	}
	failing := []string{hRefused.Host, hDown.Host, hNoDNS.Host}
	listOn := listHosts(t, env, on.Name)
	for _, h := range failing {
		if listOn[h] > 0 {
			t.Errorf("generate with the HostDb selected %d URLs of %s", listOn[h], h)
		}
	}
	if _, err := os.Stat(filepath.Join(env.Crawl, "segments", on.Name, hostSkipFile)); !os.IsNotExist(err) {
		t.Errorf("the side file is left in the segment: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(env.Crawl, "segments", on.Name)); err != nil {
		t.Fatal(err)
	}

	// Without it, generate is unchanged: they are selected.
	g.HostDbMaxFailureStreak, g.HostDbSkipDNSFailed = 0, false
	off, err := Generate(context.Background(), env, g)
	if err != nil {
		t.Fatal(err)
	}
	if off.HostDbVersion != "" || off.HostDbHosts != 0 || off.Selected != on.Selected+6 {
		t.Errorf("generate without the HostDb: %+v (with it %d selected)", off, on.Selected)
	}
	listOff := listHosts(t, env, off.Name)
	for _, h := range failing {
		if listOff[h] == 0 {
			t.Errorf("generate without the HostDb selected no URL of %s", h)
		}
	}

	// A streak above every host's skips nothing, and says so.
	if err := os.RemoveAll(filepath.Join(env.Crawl, "segments", off.Name)); err != nil {
		t.Fatal(err)
	}
	g.HostDbMaxFailureStreak = 4
	high, err := Generate(context.Background(), env, g)
	if err != nil {
		t.Fatal(err)
	}
	if high.HostDbVersion != version || high.HostDbHosts != 0 || high.Selected != off.Selected {
		t.Errorf("generate with a streak of 4: %+v", high)
	}
}

// TestUpdateHostDbFailureKeepsVersion: an updatehostdb that fails on a
// corrupt crawl_fetch part leaves the previous HostDb version in place,
// with no temporary directory, and the HostDb lock free.
func TestUpdateHostDbFailureKeepsVersion(t *testing.T) {
	env := testEnv(t)
	ctx := context.Background()
	writeDB(t, env, []crawldb.Datum{
		{URL: "http://a.test/", Host: "a.test", Status: crawldb.StatusDBFetched},
		{URL: "http://a.test/x", Host: "a.test", Status: crawldb.StatusDBUnfetched},
		{URL: "http://b.test/y", Host: "b.test", Status: crawldb.StatusDBGone},
	}, 2)
	t1 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	seg := filepath.Join(env.Crawl, "segments", "20260201100000")
	writeSegmentStage(t, seg, segment.DirGenerate, []segment.Generate{{URL: "http://a.test/"}})
	writeSegmentStage(t, seg, segment.DirFetch, []segment.Fetch{
		{URL: "http://b.test/y", Status: crawldb.StatusFetchRetry, FetchTime: t1, Message: "exception: connection refused"},
		{URL: "http://b.test/z", Status: crawldb.StatusFetchRetry, FetchTime: t1.Add(time.Second), Message: "exception: http 503 Service Unavailable"},
		{URL: "http://a.test/", Status: crawldb.StatusFetchSuccess, FetchTime: t1, HTTPStatus: 200},
		{URL: "http://a.test/q", Status: crawldb.StatusFetchSkipped, FetchTime: t1, Message: "skipped: fetch time limit reached"},
	})
	res, err := UpdateHostDb(ctx, env, UpdateHostDbOptions{Segments: []string{seg}, Now: t1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hosts != 2 || res.Failing != 1 || res.Ignored != 1 || res.URLs != 3 {
		t.Errorf("result %+v", res)
	}
	before, version := hostDbRows(t, env)
	if b := before["b.test"]; b.FailureStreak != 2 || b.Gone != 1 || b.Homepage != "" {
		t.Errorf("b.test: %+v", b)
	}
	if a := before["a.test"]; a.FailureStreak != 0 || a.Successes != 1 || a.Fetched != 1 || a.Unfetched != 1 || a.Homepage != "http://a.test/" {
		t.Errorf("a.test: %+v", a)
	}

	// A second segment whose crawl_fetch part is corrupt.
	seg2 := filepath.Join(env.Crawl, "segments", "20260202100000")
	writeSegmentStage(t, seg2, segment.DirGenerate, []segment.Generate{{URL: "http://a.test/"}})
	writeSegmentStage(t, seg2, segment.DirFetch, []segment.Fetch{
		{URL: "http://b.test/y", Status: crawldb.StatusFetchSuccess, FetchTime: t1.AddDate(0, 0, 1)},
	})
	parts, err := filepath.Glob(filepath.Join(seg2, segment.DirFetch, "*.parquet"))
	if err != nil || len(parts) == 0 {
		t.Fatal(parts, err)
	}
	if err := os.WriteFile(parts[0], []byte("PAR1 this is not a Parquet file PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateHostDb(ctx, env, UpdateHostDbOptions{Segments: []string{seg, seg2}, Now: t1.Add(time.Hour)}); err == nil {
		t.Fatal("updatehostdb read a corrupt crawl_fetch")
	}
	after, version2 := hostDbRows(t, env)
	if version2 != version || len(after) != len(before) || after["b.test"] != before["b.test"] || after["a.test"] != before["a.test"] {
		t.Errorf("a failed update changed the HostDb: %q %+v, was %q %+v", version2, after, version, before)
	}
	ents, err := os.ReadDir(filepath.Join(env.Crawl, "hostdb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), crawldb.TempPrefix) || e.Name() == hostdb.OldName {
			t.Errorf("left in the HostDb directory: %s", e.Name())
		}
	}
	// The lock is free: an update without the bad segment goes through.
	if _, err := UpdateHostDb(ctx, env, UpdateHostDbOptions{Segments: []string{seg}, Now: t1.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}

	// Bad input, with a clear error.
	if _, err := UpdateHostDb(ctx, env, UpdateHostDbOptions{Segments: []string{seg, seg}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a segment twice: %v", err)
	}
	unfetched := filepath.Join(env.Crawl, "segments", "20260203100000")
	writeSegmentStage(t, unfetched, segment.DirGenerate, []segment.Generate{{URL: "http://a.test/"}})
	if _, err := UpdateHostDb(ctx, env, UpdateHostDbOptions{Segments: []string{unfetched}}); err == nil || !strings.Contains(err.Error(), "not fetched") {
		t.Errorf("an unfetched segment: %v", err)
	}
	checkRoundTrip(t, updateHostDb{CrawlDB: "c/current", Fetches: []string{"s/crawl_fetch"}, Current: "h/current", Out: "h/tmp", Reduces: 2})
}

// TestClassifyFetch: what a crawl_fetch row says about its host, from the
// statuses and messages the fetcher writes.
func TestClassifyFetch(t *testing.T) {
	t1 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		status      crawldb.Status
		msg         string
		ok          bool
		kind        uint8
		dns, robots bool
	}{
		{crawldb.StatusFetchSuccess, "", true, evSuccess, false, false},
		{crawldb.StatusFetchGone, "notfound: http 404 Not Found", true, evSuccess, false, false},
		{crawldb.StatusFetchRedirPerm, "moved: http 301", true, evSuccess, false, false},
		{crawldb.StatusFetchRobotsDenied, "robots_denied: disallowed by robots.txt", true, evRobotsDenied, false, false},
		{crawldb.StatusFetchRetry, "exception: http 503 Service Unavailable", true, evFailure, false, false},
		{crawldb.StatusFetchRetry, "exception: resolve x.test: no such host", true, evFailure, true, false},
		{crawldb.StatusFetchRetry, "exception: robots.txt: resolve x.test: no such host", true, evFailure, true, false},
		{crawldb.StatusFetchRetry, "exception: robots.txt: connection refused", true, evFailure, false, true},
		{crawldb.StatusFetchSkipped, "skipped: robots.txt unavailable (HTTP 503)", true, evFailure, false, true},
		{crawldb.StatusFetchSkipped, "skipped: 10 exceptions on the host", false, 0, false, false},
		{crawldb.StatusFetchRefused, "refused: loopback address", false, 0, false, false},
	} {
		ev, ok := classifyFetch(&hostFetchRow{URL: "http://x.test/", Status: c.status, FetchTime: t1, Message: c.msg})
		if ok != c.ok || ok && (ev.Kind != c.kind || ev.DNS != c.dns || ev.Robots != c.robots) {
			t.Errorf("%v %q: %+v %v", c.status, c.msg, ev, ok)
		}
	}
	if _, ok := classifyFetch(&hostFetchRow{URL: "http://x.test/", Status: crawldb.StatusFetchSuccess}); ok {
		t.Error("a row without a fetch time counted")
	}
	for u, want := range map[string]bool{"http://a.test/": true, "https://a.test:8080/": true, "http://a.test/x": false,
		"http://a.test/?q=1": false, "http://a.test": false} {
		if isHomepage(u) != want {
			t.Errorf("isHomepage(%q) = %v", u, !want)
		}
	}
}

// TestCrawlHostDbNextRound: a crawl that keeps the HostDb runs
// updatehostdb after each round's updatedb, and the next round's generate
// skips the host that refused every connection in the first, and says so
// in the round's summary.
func TestCrawlHostDbNextRound(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	refused, _ := failingHosts(t)
	b, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, seeds, string(b)+refused+"/\n"+refused+"/a.html\n")
	o := testCrawlOptions(srv, seeds, 2, time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))
	o.RoundInterval = 31 * 24 * time.Hour // the failed URLs are due again
	o.HostDb = true
	o.Generate.HostDbMaxFailureStreak = 2
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 2 {
		t.Fatalf("%d rounds", len(res.Rounds))
	}
	r1, r2 := res.Rounds[0], res.Rounds[1]
	if r1.Generate.HostDbVersion != "" || r1.UpdateHostDb == nil || r1.UpdateHostDb.Failing != 1 {
		t.Errorf("round 1: generate read HostDb %q; updatehostdb %+v", r1.Generate.HostDbVersion, r1.UpdateHostDb)
	}
	if g := r2.Generate; g.HostDbVersion != r1.UpdateHostDb.Version || g.HostDbHosts != 1 || g.HostDbFailing != 2 {
		t.Errorf("round 2's generate: version %q (round 1 built %q), %d hosts, %d URLs skipped",
			g.HostDbVersion, r1.UpdateHostDb.Version, g.HostDbHosts, g.HostDbFailing)
	}
	if s := r2.Summary(); !strings.Contains(s, "skipped 1 hosts: 2 URLs for their failure streak") || !strings.Contains(s, "hostdb ") {
		t.Errorf("round 2's summary:\n%s", s)
	}
	for _, rr := range res.Rounds {
		if !slices.Contains(rr.Stages, "updatehostdb") {
			t.Errorf("round %d: stages %v", rr.Round, rr.Stages)
		}
	}
}
