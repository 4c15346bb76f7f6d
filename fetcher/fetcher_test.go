package fetcher

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// simPages lists the page ids of a web whose hosts have a server (not
// hostile, not unresolvable).
func simPages(w *simweb.Web) []int {
	var ids []int
	for id := range w.NumPages() {
		p := w.Page(id)
		switch w.Host(p.Host).Role {
		case simweb.RoleBlackhole, simweb.RoleTrickle, simweb.RoleSlowHeaders, simweb.RoleReset, simweb.RoleUnresolvable:
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// TestStatusesMatchSimweb fetches every URL of a web with failing hosts,
// traps and bombs and compares each result with the web's truth: 200 →
// fetch_success, 404 → fetch_gone, 301 → fetch_redir_perm and 302 →
// fetch_redir_temp with the target as RedirectURL, 500 → fetch_retry,
// robots-disallowed → fetch_robots_denied without a request (counted
// apart from fetch_gone), hosts whose robots.txt answers 503 →
// fetch_skipped without a page request. Every request gets exactly one
// result.
func TestStatusesMatchSimweb(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(17, 12, 360, simweb.HazardFailingHosts|simweb.HazardTraps|simweb.HazardBombs), 0)
	ids := simPages(w)
	var reqs []Request
	for i, id := range ids {
		reqs = append(reqs, Request{URL: srv.URL(id), ID: i})
	}
	o := testOptions(t, srv)
	o.NoExceptionLimit = true
	var counted sync.Map // counter name → *atomic.Int64
	o.Count = func(name string, n int64) {
		v, _ := counted.LoadOrStore(name, new(atomic.Int64))
		v.(*atomic.Int64).Add(n)
	}
	counter := func(name string) int64 {
		if v, ok := counted.Load(name); ok {
			return v.(*atomic.Int64).Load()
		}
		return 0
	}
	res, st := fetchAll(t, o, reqs)
	waitIdle(t, srv)
	access := accessByPath(srv)
	checkAllReported(t, reqs, res)
	if len(res) != len(reqs) {
		t.Errorf("%d results for %d requests", len(res), len(reqs))
	}
	byStatus := map[crawldb.Status]int64{}
	for _, r := range res {
		byStatus[r.Status]++
	}

	checked := map[string]int{}
	for i, id := range ids {
		p := w.Page(id)
		h := w.Host(p.Host)
		u := reqs[i].URL
		r := res[u]
		if r != nil && r.Request.ID != i {
			t.Errorf("%s: result has ID %d, want %d", u, r.Request.ID, i)
		}
		if r != nil && r.Time.IsZero() {
			t.Errorf("%s: no fetch time", u)
		}
		requested := len(access[h.Name+" "+p.Path])
		switch {
		case h.Role == simweb.RoleFlaky:
			continue // outage days and resets: anything goes
		case h.Role == simweb.RoleDown:
			checkSkipped(t, u, r, "skipped: robots.txt unavailable (HTTP 503)")
			if requested > 0 {
				t.Errorf("%s on a down host was requested", u)
			}
			checked["deferred"]++
			continue
		case r == nil:
			t.Errorf("%s (%s, status %d): no result", u, p.Kind, p.Status)
			continue
		case !p.RobotsAllowed:
			if r.Code != CodeRobotsDenied || r.Status != crawldb.StatusFetchRobotsDenied {
				t.Errorf("%s is disallowed by robots.txt: got %v/%v", u, r.Code, r.Status)
			}
			if requested > 0 {
				t.Errorf("%s is disallowed by robots.txt but was requested %d times", u, requested)
			}
			checked["robots_denied"]++
			continue
		}
		if requested != 1 {
			t.Errorf("%s requested %d times, want once", u, requested)
		}
		if r.HTTPStatus != p.Status {
			t.Errorf("%s (%s): HTTP status %d, truth %d", u, p.Kind, r.HTTPStatus, p.Status)
		}
		var want crawldb.Status
		switch p.Status {
		case 200:
			want = crawldb.StatusFetchSuccess
		case 301:
			want = crawldb.StatusFetchRedirPerm
		case 302:
			want = crawldb.StatusFetchRedirTemp
		case 404:
			want = crawldb.StatusFetchGone
		case 500, 503:
			want = crawldb.StatusFetchRetry
		default:
			t.Errorf("%s: truth status %d not covered by the test", u, p.Status)
			continue
		}
		if r.Status != want {
			t.Errorf("%s (%s, %d): status %v, want %v (%s)", u, p.Kind, p.Status, r.Status, want, r.Message)
		}
		checked[want.String()]++
		switch want {
		case crawldb.StatusFetchSuccess:
			if len(r.Body) == 0 || r.ContentType == "" {
				t.Errorf("%s: success without body (%d bytes) or content type %q", u, len(r.Body), r.ContentType)
			}
			if int64(len(r.Body)) > DefaultContentLimit {
				t.Errorf("%s: body of %d bytes exceeds the limit", u, len(r.Body))
			}
			if (p.Kind == simweb.KindHuge || p.Kind == simweb.KindBomb) != r.Truncated {
				t.Errorf("%s (%s): truncated = %v", u, p.Kind, r.Truncated)
			}
		case crawldb.StatusFetchRedirPerm, crawldb.StatusFetchRedirTemp:
			if target := srv.URL(p.Target); r.RedirectURL != target {
				t.Errorf("%s: redirect to %q, want %q", u, r.RedirectURL, target)
			}
		}
	}
	t.Logf("checked %v; stats %+v", checked, *st)
	// The stats and counters count each result once, robots-denied
	// results apart from gone ones.
	for _, c := range []struct {
		status  crawldb.Status
		stat    int64
		counter string
	}{
		{crawldb.StatusFetchSuccess, st.Success, ""},
		{crawldb.StatusFetchGone, st.Gone, ""},
		{crawldb.StatusFetchRetry, st.Retry, ""},
		{crawldb.StatusFetchRobotsDenied, st.RobotsDenied, CounterRobotsDenied},
		{crawldb.StatusFetchSkipped, st.Skipped, CounterUnfetched},
	} {
		if c.stat != byStatus[c.status] || counter(c.status.String()) != byStatus[c.status] {
			t.Errorf("%v: stats %d, counter %d, results %d", c.status, c.stat, counter(c.status.String()), byStatus[c.status])
		}
		if c.counter != "" && counter(c.counter) != byStatus[c.status] {
			t.Errorf("counter %s = %d, want %d", c.counter, counter(c.counter), byStatus[c.status])
		}
	}
	if st.Unfetched != st.Skipped {
		t.Errorf("Unfetched %d, Skipped %d: want them equal", st.Unfetched, st.Skipped)
	}
	for _, k := range []string{"fetch_success", "fetch_gone", "fetch_redir_perm", "fetch_redir_temp", "fetch_retry", "robots_denied", "deferred"} {
		if checked[k] == 0 {
			t.Errorf("the web had no %s case: pick another seed", k)
		}
	}
	// Every request carried the agent; no host saw two at once.
	for _, a := range srv.AccessLog().Entries() {
		if a.UserAgent != "trawl-test/"+Version {
			t.Fatalf("request %s%s with User-Agent %q", a.Host, a.Path, a.UserAgent)
		}
	}
	// (Without a politeness delay the server's log can show a new
	// connection's request starting before the handler of the previous
	// one has returned; TestPoliteness checks concurrency with a delay.)
	if st.MaxOpenConnections > o.MaxConnections {
		t.Errorf("%d connections open at once, limit %d", st.MaxOpenConnections, o.MaxConnections)
	}
}

// TestAgentRequired: no agent name, no fetcher.
func TestAgentRequired(t *testing.T) {
	for _, a := range []string{"", "  "} {
		if _, err := New(Options{Agent: a}); err == nil || !strings.Contains(err.Error(), "agent") {
			t.Errorf("New with agent %q: err = %v, want an error about the agent", a, err)
		}
	}
	if _, err := New(Options{Agent: "bot\r\nX-Injected: 1"}); err == nil {
		t.Error("an agent with a line break was accepted")
	}
}

// TestOptionsValidate: a zero field takes its default and a No... field
// says "none"; negative values, and a value beside its "none", are
// refused.
func TestOptionsValidate(t *testing.T) {
	f, err := New(Options{Agent: "bot"})
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Options(); o.ServerDelay != DefaultServerDelay || o.MaxCrawlDelay != DefaultMaxCrawlDelay ||
		o.MaxExceptionsPerHost != DefaultMaxExceptionsPerHost || o.ExceptionBackoff != DefaultExceptionBackoff ||
		o.ProgressInterval != DefaultProgressInterval {
		t.Errorf("zero options gave %+v, want the defaults", o)
	}
	f, err = New(Options{Agent: "bot", NoServerDelay: true, NoCrawlDelayCap: true, NoExceptionLimit: true,
		NoExceptionBackoff: true, NoProgressLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Options(); o.ServerDelay != 0 || o.MaxCrawlDelay != 0 || o.MaxExceptionsPerHost != 0 ||
		o.ExceptionBackoff != 0 || o.ProgressInterval != 0 {
		t.Errorf("options with every \"none\" gave %+v, want zeros", o)
	}
	for _, o := range []Options{
		{ServerDelay: -1}, {ServerDelay: time.Second, NoServerDelay: true},
		{MaxCrawlDelay: -1}, {MaxCrawlDelay: time.Second, NoCrawlDelayCap: true},
		{MaxExceptionsPerHost: -1}, {MaxExceptionsPerHost: 3, NoExceptionLimit: true},
		{ExceptionBackoff: -1}, {ExceptionBackoff: time.Second, NoExceptionBackoff: true},
		{ProgressInterval: -1}, {ProgressInterval: time.Second, NoProgressLog: true},
		{MaxConnections: -1}, {ConnectTimeout: -1}, {ReadTimeout: -1}, {ContentLimit: -1},
		{FollowRedirects: -1}, {HoldConnection: -1}, {ThroughputThreshold: -1}, {ThroughputCheckAfter: -1},
		{ThroughputRetries: -1}, {ThroughputInterval: -1}, {StallTimeout: -1},
		{QueueMode: 7}, {DelayBetween: 7},
	} {
		o.Agent = "bot"
		if err := o.Validate(); err == nil {
			t.Errorf("Validate accepted %+v", o)
		}
		if _, err := New(o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
}

// TestPrivateAddressRefused: names that resolve to loopback are refused
// (fetch_refused naming allow-private, no request) unless AllowPrivate;
// so are IP literals. The run logs one warning with the numbers of URLs
// and hosts, and counts the hosts.
func TestPrivateAddressRefused(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 3, 30, 0), 0)
	o := testOptions(t, srv)
	o.AllowPrivate = false
	logs := &logBuffer{}
	o.Log = logs.logger()
	var hostsRefused, urlsRefused atomic.Int64
	o.Count = func(name string, n int64) {
		switch name {
		case CounterRefused:
			hostsRefused.Add(n)
		case CounterRefusedURLs:
			urlsRefused.Add(n)
		}
	}
	home := srv.URL(w.Host(0).Home)
	lit := "http://" + srv.HTTPAddr() + "/"
	reqs := requests(home, home+"a.html", srv.URL(w.Host(1).Home), lit)
	res, st := fetchAll(t, o, reqs)
	waitIdle(t, srv)
	for u, r := range res {
		if r.Code != CodeRefused || r.Status != crawldb.StatusFetchRefused ||
			!strings.HasPrefix(r.Message, "refused to connect to ") || !strings.Contains(r.Message, "(set allow-private to crawl it)") {
			t.Errorf("%s: %s, want refused/fetch_refused naming allow-private", u, summary(r))
		}
	}
	checkAllReported(t, reqs, res)
	if len(res) != 4 || st.Refused != 4 || st.Gone != 0 {
		t.Errorf("%d results, %d refused, %d gone; want 4, 4, 0", len(res), st.Refused, st.Gone)
	}
	if hostsRefused.Load() != 3 || urlsRefused.Load() != 4 {
		t.Errorf("counters: %d hosts, %d URLs refused; want 3, 4", hostsRefused.Load(), urlsRefused.Load())
	}
	warns := logs.lines(slog.LevelWarn)
	if len(warns) != 1 || !strings.Contains(warns[0], "--allow-private") || !strings.Contains(warns[0], "fetcher.allowPrivate") ||
		!strings.Contains(warns[0], "urls=4") || !strings.Contains(warns[0], "hosts=3") {
		t.Errorf("warnings %q, want one naming --allow-private and fetcher.allowPrivate with urls=4 hosts=3", warns)
	}
	if n := len(srv.AccessLog().Entries()); n != 0 || st.Connections != 0 {
		t.Errorf("%d requests reached the server over %d connections, want none", n, st.Connections)
	}
	// Allowed, the same URLs are fetched.
	o.AllowPrivate = true
	res, _ = fetchAll(t, o, requests(home))
	if r := res[home]; r == nil || r.Status != crawldb.StatusFetchSuccess {
		t.Errorf("with AllowPrivate: %+v", r)
	}
}

func TestPrivateAddr(t *testing.T) {
	private := []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "::1",
		"fe80::1", "fc00::1", "0.0.0.0", "100.64.0.1", "::ffff:127.0.0.1", "224.0.0.1", "255.255.255.255"}
	public := []string{"8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "93.184.216.34"}
	for _, s := range private {
		if !PrivateAddr(mustAddr(t, s)) {
			t.Errorf("%s should be private", s)
		}
	}
	for _, s := range public {
		if PrivateAddr(mustAddr(t, s)) {
			t.Errorf("%s should be public", s)
		}
	}
}

// TestUnresolvableHost: a name the DNS server does not know gives
// fetch_retry with the DNS error, for every URL of the host.
func TestUnresolvableHost(t *testing.T) {
	_, srv := serveWeb(t, smallWeb(5, 3, 30, 0), 0)
	o := testOptions(t, srv)
	port := srv.Addressing().Port
	base := "http://nosuch-host.sim.test:" + itoa(port)
	res, _ := fetchAll(t, o, requests(base+"/", base+"/a.html"))
	for u, r := range res {
		if r.Status != crawldb.StatusFetchRetry || !strings.Contains(r.Message, "no such host") {
			t.Errorf("%s: %v %q, want fetch_retry with a DNS message", u, r.Status, r.Message)
		}
	}
	if len(res) != 2 {
		t.Errorf("%d results, want 2", len(res))
	}
}

// TestMalformedAndDuplicate: a URL that cannot be fetched is gone; a URL
// given twice is fetched once.
func TestMalformedAndDuplicate(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 3, 30, 0), 0)
	o := testOptions(t, srv)
	home := srv.URL(w.Host(0).Home)
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	var got []*Result
	_, err = f.Run(context.Background(), requests(home, "ftp://example.com/x", home, "http:///nohost"), func(r *Result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ok, gone := 0, 0
	for _, r := range got {
		switch r.Status {
		case crawldb.StatusFetchSuccess:
			ok++
			if r.Request.ID != 0 {
				t.Errorf("duplicate reported with ID %d, want the first one's", r.Request.ID)
			}
		case crawldb.StatusFetchGone:
			gone++
		}
	}
	if ok != 1 || gone != 2 || len(got) != 3 {
		t.Errorf("results: %d success, %d gone of %d; want 1, 2 of 3", ok, gone, len(got))
	}
}

// TestEmitErrorStops: an error from emit ends the run with that error.
func TestEmitErrorStops(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 3, 60, 0), 0)
	var reqs []Request
	for id := range 40 {
		reqs = append(reqs, Request{URL: srv.URL(id), ID: id})
	}
	_ = w
	f, err := New(testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	n := 0
	_, err = f.Run(context.Background(), reqs, func(*Result) error {
		n++
		if n == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("Run: %v, want %v", err, boom)
	}
	if n != 3 {
		t.Errorf("emit called %d times after its error, want it to stop at 3", n)
	}
}

// TestCancel: a cancelled context ends the run with its error.
func TestCancel(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 2, 40, 0), 0)
	o := testOptions(t, srv)
	o.ServerDelay, o.NoServerDelay = time.Hour, false // the second request of a host would wait forever
	var reqs []Request
	for id := range 10 {
		if w.Page(id).Host == 0 {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: id})
		}
	}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 2 {
		t.Fatalf("host 0 has %d of the first pages, want 2 or more", len(reqs))
	}
	// After robots.txt, the host's next turn is an hour away: only the
	// cancellation can end the run.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err = f.Run(ctx, reqs, func(*Result) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
}

func TestHTTPCode(t *testing.T) {
	cases := map[int]Code{200: CodeSuccess, 201: CodeException, 204: CodeException, 300: CodeMoved, 301: CodeMoved,
		302: CodeTempMoved, 303: CodeTempMoved, 304: CodeNotModified, 305: CodeMoved, 307: CodeTempMoved,
		308: CodeMoved, 400: CodeGone, 401: CodeAccessDenied, 403: CodeException, 404: CodeNotFound,
		410: CodeGone, 429: CodeException, 500: CodeException, 503: CodeException}
	for h, want := range cases {
		if got := HTTPCode(h); got != want {
			t.Errorf("HTTPCode(%d) = %v, want %v", h, got, want)
		}
	}
	statuses := map[Code]crawldb.Status{CodeSuccess: crawldb.StatusFetchSuccess, CodeMoved: crawldb.StatusFetchRedirPerm,
		CodeTempMoved: crawldb.StatusFetchRedirTemp, CodeNotModified: crawldb.StatusFetchNotModified,
		CodeGone: crawldb.StatusFetchGone, CodeNotFound: crawldb.StatusFetchGone, CodeAccessDenied: crawldb.StatusFetchGone,
		CodeRobotsDenied: crawldb.StatusFetchRobotsDenied, CodeException: crawldb.StatusFetchRetry, CodeRetry: crawldb.StatusFetchRetry,
		CodeFailed: crawldb.StatusFetchRetry, CodeSkipped: crawldb.StatusFetchSkipped, CodeRefused: crawldb.StatusFetchRefused}
	for c, want := range statuses {
		if got := c.FetchStatus(); got != want {
			t.Errorf("%v.FetchStatus() = %v, want %v", c, got, want)
		}
	}
	for c, want := range map[Code]string{CodeSkipped: "skipped", CodeRefused: "refused", CodeRobotsDenied: "robots_denied"} {
		if got := c.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(c), got, want)
		}
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// prefetching is a real resolver (DNS queries to simweb) that records the
// names it is asked to prefetch and resolves them ahead.
type prefetching struct {
	Resolver
	mu    sync.Mutex
	names []string
}

func (p *prefetching) Prefetch(ctx context.Context, hosts []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names = append(p.names, hosts...)
}

// TestPrefetch: a Resolver that is a Prefetcher gets every server's host
// name at the start of a run, in order of first appearance, IP literals
// left out.
func TestPrefetch(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 3, 30, 0), 0)
	o := testOptions(t, srv)
	pf := &prefetching{Resolver: o.Resolver}
	o.Resolver = pf
	urls := []string{srv.URL(w.Host(1).Home), srv.URL(w.Host(0).Home), "http://" + srv.HTTPAddr() + "/", srv.URL(w.Host(1).Home) + "x"}
	res, _ := fetchAll(t, o, requests(urls...))
	want := []string{w.Host(1).Name, w.Host(0).Name}
	if !slices.Equal(pf.names, want) {
		t.Errorf("prefetched %v, want %v", pf.names, want)
	}
	if r := res[urls[0]]; r == nil || r.Status != crawldb.StatusFetchSuccess {
		t.Errorf("%s: %s", urls[0], summary(r))
	}
}
