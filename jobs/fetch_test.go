package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// fetchWeb is a served synthetic web for the fetch tests.
type fetchWeb struct {
	web *simweb.Web
	srv *simweb.Server
	now time.Time // the simulated time of the round
}

// serveFetchWeb serves a small web with failing hosts, traps and bombs,
// its clock at epoch + 1 day.
func serveFetchWeb(t testing.TB, seed uint64, hosts, pages int) *fetchWeb {
	t.Helper()
	c := simweb.DefaultConfig()
	c.Seed, c.Hosts, c.Pages = seed, hosts, pages
	c.Hazards = simweb.HazardFailingHosts | simweb.HazardTraps | simweb.HazardBombs
	w, err := simweb.New(c)
	if err != nil {
		t.Fatal(err)
	}
	now := c.Epoch.AddDate(0, 0, 1)
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0", Start: now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AccessLogLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &fetchWeb{web: w, srv: srv, now: now}
}

// truth returns, for every served URL of the web, its page id.
func (fw *fetchWeb) pages() map[string]int {
	m := map[string]int{}
	for id := range fw.web.NumPages() {
		m[fw.srv.URL(id)] = id
	}
	return m
}

// role is the role of page id's host.
func (fw *fetchWeb) role(id int) simweb.Role { return fw.web.Host(fw.web.Page(id).Host).Role }

// generateAll injects urls and generates a fetch list of all of them in
// parts fetch-list parts.
func generateAll(t testing.TB, env Env, urls []string, now time.Time, parts int) *GenerateResult {
	t.Helper()
	p := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, p, strings.Join(urls, "\n")+"\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{p}, Now: now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	gen, err := Generate(context.Background(), env, GenerateOptions{Now: now, NumFetchers: parts, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

// fetchOpts are the fetch options of the tests: the web's DNS, private
// addresses allowed, no politeness delay, short timeouts.
func (fw *fetchWeb) fetchOpts(seg string) FetchOptions {
	return FetchOptions{Segment: seg, Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true,
		DNSServers: []string{fw.srv.DNSAddr()}, ConnectTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second,
		MaxConnections: 8, NoExceptionLimit: true, Now: fw.now, NoProgressLog: true}
}

// readFetch reads a segment's crawl_fetch by URL, failing on a URL listed
// twice, and checks that each part is sorted by URL.
func readFetch(t testing.TB, seg string) (map[string]segment.Fetch, int) {
	t.Helper()
	dir := filepath.Join(seg, segment.DirFetch)
	files, err := parquetio.PartFiles(storage.NewLocal(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]segment.Fetch{}
	for _, f := range files {
		rows, err := parquetio.ReadAll[segment.Fetch](storage.NewLocal(), f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(rows, func(a, b segment.Fetch) int { return strings.Compare(a.URL, b.URL) }) {
			t.Errorf("%s is not sorted by URL", f)
		}
		for _, r := range rows {
			if _, dup := out[r.URL]; dup {
				t.Errorf("crawl_fetch lists %s twice", r.URL)
			}
			out[r.URL] = r
		}
	}
	return out, len(files)
}

// TestFetchJob runs inject, generate and fetch over a synthetic web with
// failing hosts, traps, bombs, a host that resets and one that does not
// resolve, and checks crawl_fetch and content against the web's truth and
// access log, then that updatedb takes the result.
func TestFetchJob(t *testing.T) {
	fw := serveFetchWeb(t, 17, 12, 240)
	env := testEnv(t)
	truth := fw.pages()
	var urls []string
	for u, id := range truth {
		switch fw.role(id) {
		case simweb.RoleBlackhole, simweb.RoleTrickle, simweb.RoleSlowHeaders:
			continue // the hostile tests have them
		}
		urls = append(urls, u)
	}
	slices.Sort(urls)
	gen := generateAll(t, env, urls, fw.now, 3)
	fl := map[string]segment.Generate{}
	for _, rows := range fetchList(t, gen.Segment) {
		for _, d := range rows {
			fl[d.URL] = d
		}
	}
	began := time.Now()
	res, err := Fetch(context.Background(), env, fw.fetchOpts(gen.Segment))
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(began)
	if err := fw.srv.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	fetched, nparts := readFetch(t, gen.Segment)
	if want := len(fetchList(t, gen.Segment)); nparts != want {
		t.Errorf("crawl_fetch has %d parts, the fetch list %d", nparts, want)
	}
	contents := map[string]segment.Content{}
	for _, c := range readParts[segment.Content](t, filepath.Join(gen.Segment, segment.DirContent)) {
		contents[c.URL] = c
	}
	requested := map[string]int{}
	for _, a := range fw.srv.AccessLog().Entries() {
		requested[a.Host+a.Path]++
	}

	var nSuccess, nAbsent, nSkipped int64
	seen := map[string]int{}
	for u, d := range fl {
		id, ok := truth[u]
		if !ok {
			t.Fatalf("fetch list URL %s is not in the web", u)
		}
		p := fw.web.Page(id)
		host := fw.web.Host(p.Host)
		f, got := fetched[u]
		if !got {
			nAbsent++
		}
		if host.Role == simweb.RoleFlaky {
			continue
		}
		var want crawldb.Status
		switch {
		case host.Role == simweb.RoleDown:
			if !got || f.Status != crawldb.StatusFetchSkipped || !strings.Contains(f.Message, "robots.txt") {
				t.Errorf("%s (robots.txt 503): %v %q, want a fetch_skipped row naming robots.txt", u, f.Status, f.Message)
			}
			seen["deferred"]++
			nSkipped++
			continue
		case !got:
			t.Errorf("%s (%s, %d): no crawl_fetch row", u, p.Kind, p.Status)
			continue
		case host.Role == simweb.RoleUnresolvable, host.Role == simweb.RoleReset:
			want = crawldb.StatusFetchRetry
		case !p.RobotsAllowed:
			want = crawldb.StatusFetchRobotsDenied
			if requested[host.Name+p.Path] > 0 {
				t.Errorf("%s is disallowed by robots.txt but was requested", u)
			}
			if !strings.Contains(f.Message, "robots") {
				t.Errorf("%s: robots denied with message %q", u, f.Message)
			}
		case p.Status == 200:
			want = crawldb.StatusFetchSuccess
		case p.Status == 404:
			want = crawldb.StatusFetchGone
		case p.Status == 301:
			want = crawldb.StatusFetchRedirPerm
		case p.Status == 302:
			want = crawldb.StatusFetchRedirTemp
		case p.Status == 500:
			want = crawldb.StatusFetchRetry
		default:
			t.Errorf("%s: truth status %d not covered", u, p.Status)
			continue
		}
		seen[want.String()]++
		if f.Status != want {
			t.Errorf("%s (%s, %d, %s): %v %q, want %v", u, p.Kind, p.Status, host.Role, f.Status, f.Message, want)
		}
		if !reflect.DeepEqual(canonical(f.Datum), canonical(d)) {
			t.Errorf("%s: crawl_fetch datum %+v, fetch list %+v", u, f.Datum, d)
		}
		if f.FetchTime.Before(fw.now) || f.FetchTime.After(fw.now.Add(elapsed+time.Second)) {
			t.Errorf("%s: fetch time %v, want within %v of %v", u, f.FetchTime, elapsed, fw.now)
		}
		if (want == crawldb.StatusFetchRedirPerm || want == crawldb.StatusFetchRedirTemp) && f.RedirectURL != fw.srv.URL(p.Target) {
			t.Errorf("%s: redirect to %q, want %q", u, f.RedirectURL, fw.srv.URL(p.Target))
		}
		c, hasContent := contents[u]
		if hasContent != (f.Status == crawldb.StatusFetchSuccess) {
			t.Errorf("%s: %v with content %v", u, f.Status, hasContent)
		}
		if hasContent {
			nSuccess++
			if len(c.Body) == 0 || c.Headers["Content-Type"] == "" || c.ContentType != f.ContentType || !c.FetchTime.Equal(f.FetchTime) {
				t.Errorf("%s: content %d bytes, headers %v, type %q (fetch %q)", u, len(c.Body), c.Headers, c.ContentType, f.ContentType)
			}
			if c.Truncated != (p.Kind == simweb.KindHuge || p.Kind == simweb.KindBomb) {
				t.Errorf("%s (%s): truncated %v", u, p.Kind, c.Truncated)
			}
		}
	}
	for _, k := range []string{"fetch_success", "fetch_gone", "fetch_redir_perm", "fetch_redir_temp", "fetch_retry", "deferred"} {
		if seen[k] == 0 {
			t.Errorf("no %s case in the web: pick another seed", k)
		}
	}
	// No silent drops: every URL of the fetch list has a row.
	if nAbsent != 0 {
		t.Errorf("%d fetch-list URLs have no crawl_fetch row", nAbsent)
	}
	if int64(len(fetched)) != res.Fetched+res.NotModified+res.Redirects+res.Gone+res.Retry+res.RobotsDenied+res.Skipped+res.Refused {
		t.Errorf("%d crawl_fetch rows, result counts %+v", len(fetched), res)
	}
	if res.Unfetched != res.Skipped || res.Skipped < nSkipped || res.Fetched != int64(len(contents)) {
		t.Errorf("result: unfetched %d, skipped %d (robots.txt unavailable %d), fetched %d (content rows %d)",
			res.Unfetched, res.Skipped, nSkipped, res.Fetched, len(contents))
	}
	t.Logf("cases %v; result %+v", seen, *res)

	// A second fetch of the segment is refused.
	if _, err := Fetch(context.Background(), env, fw.fetchOpts(gen.Segment)); err == nil || !strings.Contains(err.Error(), "already fetched") {
		t.Errorf("second fetch: %v", err)
	}

	// updatedb takes the fetch: statuses, retries, redirect targets.
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}, Now: fw.now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	for u, f := range fetched {
		d, ok := db[u]
		if !ok {
			t.Errorf("%s not in the CrawlDB after updatedb", u)
			continue
		}
		var want crawldb.Status
		switch f.Status {
		case crawldb.StatusFetchSuccess:
			want = crawldb.StatusDBFetched
		case crawldb.StatusFetchGone:
			want = crawldb.StatusDBGone
		case crawldb.StatusFetchRedirPerm:
			want = crawldb.StatusDBRedirPerm
		case crawldb.StatusFetchRedirTemp:
			want = crawldb.StatusDBRedirTemp
		case crawldb.StatusFetchRetry:
			want = crawldb.StatusDBUnfetched
		case crawldb.StatusFetchRobotsDenied:
			want = crawldb.StatusDBGone
			if d.Metadata[crawldb.ProtocolStatusKey] != "robots_denied" {
				t.Errorf("%s: robots-denied row lacks its reason: %v", u, d.Metadata)
			}
		case crawldb.StatusFetchSkipped, crawldb.StatusFetchRefused:
			want = crawldb.StatusDBUnfetched // the row as it was
		}
		if d.Status != want {
			t.Errorf("%s: %v after %v, want %v", u, d.Status, f.Status, want)
		}
		if f.Status == crawldb.StatusFetchSuccess && (d.ETag != f.ETag || d.LastModified != f.LastModified) {
			t.Errorf("%s: validators %q %q not stored (%q %q)", u, d.ETag, d.LastModified, f.ETag, f.LastModified)
		}
		if f.RedirectURL != "" {
			if _, ok := db[f.RedirectURL]; !ok {
				t.Errorf("redirect target %s of %s not in the CrawlDB", f.RedirectURL, u)
			}
		}
	}
}

// TestFetchNotModified: a second round over pages with validators sends
// conditional requests and records fetch_notmodified; a page that changed
// is fetched again.
func TestFetchNotModified(t *testing.T) {
	fw := serveFetchWeb(t, 1, 6, 80)
	env := testEnv(t)
	var urls []string
	for id := range fw.web.NumPages() {
		p := fw.web.Page(id)
		if p.Kind.IsContent() && p.RobotsAllowed && fw.role(id) == simweb.RoleNormal &&
			fw.web.Host(p.Host).Validators == simweb.ValidatorsBoth {
			urls = append(urls, fw.srv.URL(id))
		}
	}
	if len(urls) < 10 {
		t.Fatalf("%d pages with validators: pick another seed", len(urls))
	}
	gen := generateAll(t, env, urls, fw.now, 2)
	if _, err := Fetch(context.Background(), env, fw.fetchOpts(gen.Segment)); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}, Now: fw.now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	// Thirty days later every page is due again (the default schedule)
	// and some have changed.
	later := fw.now.AddDate(0, 0, 31)
	if err := fw.srv.SetClock(later, 0); err != nil {
		t.Fatal(err)
	}
	gen2, err := Generate(context.Background(), env, GenerateOptions{Now: later, NumFetchers: 2, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	seq := fw.srv.AccessLog().Len()
	o := fw.fetchOpts(gen2.Segment)
	o.Now = later
	res, err := Fetch(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	fetched, _ := readFetch(t, gen2.Segment)
	changed := 0
	for _, u := range urls {
		f := fetched[u]
		id := fw.pages()[u]
		wantChanged := fw.web.Version(id, later) != fw.web.Version(id, fw.now)
		want := crawldb.StatusFetchNotModified
		if wantChanged {
			want = crawldb.StatusFetchSuccess
			changed++
		}
		if f.Status != want {
			t.Errorf("%s (changed %v): %v, want %v", u, wantChanged, f.Status, want)
		}
	}
	for _, a := range fw.srv.AccessLog().Since(seq) {
		if a.Path != "/robots.txt" && !a.Conditional {
			t.Errorf("%s%s: not a conditional request", a.Host, a.Path)
		}
	}
	if res.NotModified == 0 || changed == 0 {
		t.Errorf("%d not modified, %d changed: want both", res.NotModified, changed)
	}
}

// TestFetchTimeLimit: what the time limit leaves is absent from
// crawl_fetch, and counted as unfetched.
func TestFetchTimeLimit(t *testing.T) {
	fw := serveFetchWeb(t, 1, 3, 120)
	env := testEnv(t)
	var urls []string
	for id := range fw.web.NumPages() {
		if p := fw.web.Page(id); p.Host == 0 && p.Kind.IsContent() && p.RobotsAllowed {
			urls = append(urls, fw.srv.URL(id))
		}
	}
	if len(urls) < 15 {
		t.Fatalf("host 0 has %d pages: pick another seed", len(urls))
	}
	gen := generateAll(t, env, urls, fw.now, 1)
	o := fw.fetchOpts(gen.Segment)
	o.ServerDelay, o.NoServerDelay = 100*time.Millisecond, false
	o.TimeLimit = 800 * time.Millisecond
	res, err := Fetch(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	fetched, _ := readFetch(t, gen.Segment)
	if res.Unfetched == 0 || len(fetched) == 0 {
		t.Fatalf("%d fetched, %d unfetched: want both", len(fetched), res.Unfetched)
	}
	// Every URL has a row: fetched, or skipped at the time limit.
	if len(fetched) != len(urls) {
		t.Errorf("%d rows for %d URLs", len(fetched), len(urls))
	}
	var skipped int64
	for u, f := range fetched {
		switch {
		case f.Status == crawldb.StatusFetchSkipped && f.Message == "skipped: fetch time limit reached":
			skipped++
		case f.Status != crawldb.StatusFetchSuccess:
			t.Errorf("%s: %v %q", u, f.Status, f.Message)
		}
	}
	if skipped != res.Unfetched || skipped != res.Skipped {
		t.Errorf("%d skipped rows, result: %d unfetched, %d skipped", skipped, res.Unfetched, res.Skipped)
	}
}

// TestFetchOptionsChecked: no agent, no segment, an unfetched segment and
// a bad DNS server are errors before any work.
func TestFetchOptionsChecked(t *testing.T) {
	env := testEnv(t)
	gen := generateAll(t, env, []string{"http://example.com/"}, genNow(), 1)
	cases := []FetchOptions{
		{Segment: gen.Segment},
		{Segment: gen.Segment, Agent: " "},
		{Agent: "x"},
		{Segment: filepath.Join(env.Crawl, "segments", "nosuch"), Agent: "x"},
		{Segment: gen.Segment, Agent: "x", DNSServers: []string{"dns.example.com"}},
	}
	for _, o := range cases {
		if _, err := Fetch(context.Background(), env, o); err == nil {
			t.Errorf("Fetch(%+v) succeeded", o)
		}
	}
	if dirExists(filepath.Join(gen.Segment, segment.DirFetch)) {
		t.Error("a failed fetch left crawl_fetch")
	}
	// content left by an interrupted publish is removed, and the fetch
	// runs (the URL is private: refused, fetch_gone).
	writeFile(t, filepath.Join(gen.Segment, segment.DirContent, "part-m-00000.parquet"), "junk")
	res, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "x",
		DNSServers: []string{"127.0.0.1:9"}, ConnectTimeout: 500 * time.Millisecond, NoProgressLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retry != 1 {
		t.Errorf("result %+v, want one fetch_retry (no DNS server)", res)
	}
}

// streamingMapOnly runs a map-only job as Hadoop Streaming would: each
// task rebuilt from the Registry with its split manifest on stdin and its
// own work output directory, then PublishStreaming.
func streamingMapOnly(t *testing.T, res mapreduce.Resolver) mapreduce.Runner {
	reg := Registry()
	return mapreduce.RunnerFunc(func(ctx context.Context, spec mapreduce.Spec) (*mapreduce.Result, error) {
		name := spec.JobName()
		conf, err := mapreduce.SpecConf(spec)
		if err != nil {
			return nil, err
		}
		enc := mapreduce.EncodeConf(conf)
		job, err := reg[name](conf)
		if err != nil {
			return nil, err
		}
		splits, err := mapreduce.Splits(ctx, res, job)
		if err != nil {
			return nil, err
		}
		counters := &mapreduce.Counters{}
		var dirs []string
		for i, sp := range splits {
			dir := t.TempDir()
			env := func(k string) string {
				switch k {
				case mapreduce.EnvJobName:
					return name
				case mapreduce.EnvJobConf:
					return enc
				case mapreduce.EnvTaskPartition:
					return strconv.Itoa(i)
				case mapreduce.EnvTaskAttempt:
					return fmt.Sprintf("attempt_x_m_%06d_0", i)
				case mapreduce.EnvTaskOutputDir:
					return dir
				case mapreduce.EnvJobReduces:
					return "0"
				}
				return ""
			}
			var out, errb bytes.Buffer
			in := strings.NewReader(fmt.Sprintf("%d\t%s\n", i*100, sp))
			if err := mapreduce.RunStreamingTask(ctx, reg, "map", env, in, &out, &errb,
				mapreduce.WithStorage(res), mapreduce.WithTempDir(t.TempDir())); err != nil {
				return nil, fmt.Errorf("map %d: %w\n%s", i, err, errb.String())
			}
			if err := mapreduce.ParseCounterLines(&errb, counters); err != nil {
				return nil, err
			}
			dirs = append(dirs, dir)
		}
		if err := mapreduce.PublishStreaming(ctx, res, job, dirs, counters); err != nil {
			return nil, err
		}
		return &mapreduce.Result{Counters: counters}, nil
	})
}

// TestFetchStreamingEqualsLocal: the fetch job rebuilt from its Conf and
// run as Streaming map tasks writes the same crawl_fetch (but for fetch
// times) and content as the local runner.
func TestFetchStreamingEqualsLocal(t *testing.T) {
	fw := serveFetchWeb(t, 2, 6, 90)
	env := testEnv(t)
	var urls []string
	for u, id := range fw.pages() {
		if fw.role(id) != simweb.RoleFlaky && fw.role(id) != simweb.RoleBlackhole && fw.role(id) != simweb.RoleTrickle && fw.role(id) != simweb.RoleSlowHeaders {
			urls = append(urls, u)
		}
	}
	gen := generateAll(t, env, urls, fw.now, 3)
	type row struct {
		status          crawldb.Status
		http            int32
		redirect, ctype string
		body            []byte
	}
	collect := func() map[string]row {
		fetched, _ := readFetch(t, gen.Segment)
		out := map[string]row{}
		for u, f := range fetched {
			out[u] = row{status: f.Status, http: f.HTTPStatus, redirect: f.RedirectURL, ctype: f.ContentType}
		}
		for _, c := range readParts[segment.Content](t, filepath.Join(gen.Segment, segment.DirContent)) {
			r := out[c.URL]
			r.body = c.Body
			out[c.URL] = r
		}
		return out
	}
	senv := env
	senv.Runner = streamingMapOnly(t, env.Storage)
	if _, err := Fetch(context.Background(), senv, fw.fetchOpts(gen.Segment)); err != nil {
		t.Fatal(err)
	}
	streamed := collect()
	for _, d := range []string{segment.DirFetch, segment.DirContent} {
		if err := os.RemoveAll(filepath.Join(gen.Segment, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Fetch(context.Background(), env, fw.fetchOpts(gen.Segment)); err != nil {
		t.Fatal(err)
	}
	local := collect()
	if len(local) == 0 || !reflect.DeepEqual(local, streamed) {
		t.Errorf("streamed fetch differs from local: %d and %d rows", len(streamed), len(local))
		for u, r := range local {
			if s := streamed[u]; !reflect.DeepEqual(r, s) {
				t.Logf("%s: local %v %d, streamed %v %d", u, r.status, len(r.body), s.status, len(s.body))
			}
		}
	}
}

// BenchmarkFetchJob measures the fetch job on the local runner: a fetch
// list of every allowed content page of a 100-host simweb (no latency, no
// politeness delay) in 2 parts, 64 connections each.
func BenchmarkFetchJob(b *testing.B) { benchmarkFetchJob(b, nil) }

// benchmarkFetchJob is BenchmarkFetchJob with the fetch's WARC options
// wo (nil: no WARC files).
func benchmarkFetchJob(b *testing.B, wo *WARCOptions) {
	c := simweb.DefaultConfig()
	c.Seed, c.Hosts, c.Pages, c.Hazards = 1, 100, 5000, 0
	w, err := simweb.New(c)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AccessLogLimit: 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	fw := &fetchWeb{web: w, srv: srv, now: c.Epoch}
	var urls []string
	for id := range w.NumPages() {
		if p := w.Page(id); p.Kind.IsContent() && p.RobotsAllowed {
			urls = append(urls, srv.URL(id))
		}
	}
	env := testEnv(b)
	env.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	localRunner(env).Log = env.Log
	gen := generateAll(b, env, urls, fw.now, 2)
	o := fw.fetchOpts(gen.Segment)
	o.MaxConnections = 64
	o.WARC = wo
	var pages int64
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		for _, d := range []string{segment.DirFetch, segment.DirContent, segment.DirWARC} {
			if err := os.RemoveAll(filepath.Join(gen.Segment, d)); err != nil {
				b.Fatal(err)
			}
		}
		res, err := Fetch(context.Background(), env, o)
		if err != nil {
			b.Fatal(err)
		}
		pages += res.Fetched
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
	if pages > 0 {
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(pages), "cpu-µs/page")
	}
}

// TestFetchLargePart: a part of thousands of rows (several read batches)
// is fetched whole, each crawl_fetch row carrying its own fetch-list datum
// intact. (No server: the name servers do not answer, so every URL is a
// quick fetch_retry.)
func TestFetchLargePart(t *testing.T) {
	env := testEnv(t)
	var urls []string
	for i := range 5000 {
		urls = append(urls, fmt.Sprintf("http://h%02d.example.test/dir%d/page-%d.html?q=%d", i%40, i%7, i, i*i))
	}
	gen := generateAll(t, env, urls, genNow(), 1)
	fl := map[string]segment.Generate{}
	for _, rows := range fetchList(t, gen.Segment) {
		for _, d := range rows {
			fl[d.URL] = d
		}
	}
	res, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "trawl-test",
		DNSServers: []string{"127.0.0.1:9"}, ConnectTimeout: 500 * time.Millisecond, NoProgressLog: true})
	if err != nil {
		t.Fatal(err)
	}
	fetched, _ := readFetch(t, gen.Segment)
	if len(fetched) != len(urls) || res.Retry != int64(len(urls)) {
		t.Fatalf("%d rows, %d retries for %d URLs", len(fetched), res.Retry, len(urls))
	}
	for u, f := range fetched {
		if !reflect.DeepEqual(canonical(f.Datum), canonical(fl[u])) {
			t.Fatalf("%s: datum %+v, fetch list %+v", u, f.Datum, fl[u])
		}
	}
}

// TestFetchRetryAfter: the fetch job passes fetcher.maxRetryAfter to its
// fetcher and reports the Retry-After answers: one host answering 429
// with Retry-After 1 is waited for and counted; one asking for more than
// the cap has its other URL left for a later round.
func TestFetchRetryAfter(t *testing.T) {
	var asked atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/away":
			w.Header().Set("Retry-After", "600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case asked.Add(1) == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><title>ok</title></html>")
		}
	})
	// Two hosts: the same handler on two loopback addresses.
	var bases []string
	for _, ip := range []string{"127.0.4.1", "127.0.4.2"} {
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: handler}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		bases = append(bases, "http://"+l.Addr().String())
	}
	env := testEnv(t)
	urls := []string{bases[0] + "/a", bases[0] + "/b", bases[1] + "/away", bases[1] + "/later"}
	gen := generateAll(t, env, urls, genNow(), 1)
	res, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "trawl-test",
		NoServerDelay: true, AllowPrivate: true, MaxRetryAfter: 30 * time.Second, NoExceptionLimit: true,
		ConnectTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, NoProgressLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.RetryAfter != 1 || res.RetryAfterSkipped != 1 || res.RetryAfterHosts != 2 {
		t.Errorf("RetryAfter %d, RetryAfterSkipped %d, RetryAfterHosts %d; want 1, 1, 2",
			res.RetryAfter, res.RetryAfterSkipped, res.RetryAfterHosts)
	}
	fetched, _ := readFetch(t, gen.Segment)
	want := map[string]crawldb.Status{
		urls[0]: crawldb.StatusFetchRetry, urls[1]: crawldb.StatusFetchSuccess,
		urls[2]: crawldb.StatusFetchRetry, urls[3]: crawldb.StatusFetchSkipped,
	}
	// The two URLs of the busy host are fetched in either order: one got
	// the 429.
	if fetched[urls[0]].Status == crawldb.StatusFetchSuccess {
		want[urls[0]], want[urls[1]] = crawldb.StatusFetchSuccess, crawldb.StatusFetchRetry
	}
	for u, st := range want {
		if got := fetched[u].Status; got != st {
			t.Errorf("%s: %v (%s), want %v", u, got, fetched[u].Message, st)
		}
	}
}

// TestFetchContentTypes: by default (fetcher.contentTypes: what the
// parser parses) an image is recorded fetch_success without a content
// row, and a parsing fetch parses the HTML and PDF pages; "*/*" stores
// the image too.
func TestFetchContentTypes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n...."))
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><title>home</title><img src="/logo.png"></html>`)
		}
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		types  []string
		stored int
	}{{nil, 1}, {[]string{"*/*"}, 2}} {
		env := testEnv(t)
		urls := []string{srv.URL + "/", srv.URL + "/logo.png"}
		gen := generateAll(t, env, urls, genNow(), 1)
		res, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "trawl-test",
			NoServerDelay: true, AllowPrivate: true, ContentTypes: c.types, NoProgressLog: true})
		if err != nil {
			t.Fatal(err)
		}
		fetched, _ := readFetch(t, gen.Segment)
		for _, u := range urls {
			if fetched[u].Status != crawldb.StatusFetchSuccess {
				t.Errorf("%v: %s: %v %s", c.types, u, fetched[u].Status, fetched[u].Message)
			}
		}
		content := readParts[segment.Content](t, filepath.Join(gen.Segment, segment.DirContent))
		if len(content) != c.stored {
			t.Errorf("%v: %d content rows, want %d", c.types, len(content), c.stored)
		}
		refused := res.Counters.Get(JobFetch, "content_type_not_stored")
		if c.stored == 1 && (refused != 1 || fetched[urls[1]].Message != "content not stored: image/png is not a stored content type") {
			t.Errorf("default types: %d refused, message %q", refused, fetched[urls[1]].Message)
		}
	}
}
