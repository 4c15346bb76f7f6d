package fetcher

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// TestHostileHosts: simweb's hosts that never answer, trickle the body or
// the whole response at a byte a second, or reset every connection cost
// one request each (their robots.txt), bounded by the read timeout; all
// their URLs are recorded fetch_retry, and the other hosts are fetched
// meanwhile.
func TestHostileHosts(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(9, 6, 90, simweb.HazardHostileLinks), 0)
	hostile := map[simweb.Role]string{}
	var reqs []Request
	for h := range w.NumHosts() {
		info := w.Host(h)
		switch info.Role {
		case simweb.RoleBlackhole, simweb.RoleTrickle, simweb.RoleSlowHeaders, simweb.RoleReset:
			hostile[info.Role] = info.Name
			home := srv.URL(info.Home)
			for _, p := range []string{"", "a.html", "b/c.html"} {
				reqs = append(reqs, Request{URL: home + p, ID: len(reqs)})
			}
		}
	}
	if len(hostile) != 4 {
		t.Fatalf("hostile hosts: %v", hostile)
	}
	var normal []string
	for h := range 6 {
		for _, id := range hostPages(w, h) {
			u := srv.URL(id)
			normal = append(normal, u)
			reqs = append(reqs, Request{URL: u, ID: len(reqs)})
		}
	}
	o := testOptions(t, srv)
	o.ReadTimeout = time.Second
	o.ConnectTimeout = time.Second
	o.MaxConnections = 8
	res, st := fetchAll(t, o, reqs)
	waitIdle(t, srv)

	for _, q := range reqs[:12] {
		r := res[q.URL]
		if r == nil || r.Status != crawldb.StatusFetchRetry || r.Message == "" {
			t.Errorf("%s: %s, want fetch_retry with a message", q.URL, summary(r))
			continue
		}
		t.Logf("%s: %s", q.URL, r.Message)
	}
	for _, u := range normal {
		if r := res[u]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("%s: %s", u, summary(r))
		}
	}
	stats := simweb.Stats(srv.AccessLog().Entries())
	for role, name := range hostile {
		if n := stats[name].Requests; n != 1 {
			t.Errorf("%s (%s): %d requests, want 1 (robots.txt)", name, role, n)
		}
	}
	if r := res[reqs[0].URL]; r != nil && !strings.Contains(r.Message, "within") && !strings.Contains(r.Message, "reset") {
		t.Logf("first hostile message: %s", r.Message)
	}
	if st.Retry != 12 {
		t.Errorf("%d fetch_retry, want 12", st.Retry)
	}
}

// TestHostilePages: pages that hang, trickle or reset on a host whose
// robots.txt is fine are each a fetch_retry bounded by the read timeout,
// and the host's other pages are still fetched.
func TestHostilePages(t *testing.T) {
	rec := newRecorder(t, "127.0.4.1", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow:\n")
		case "/hang":
			<-r.Context().Done()
		case "/trickle":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			for range 100 {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				rc.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		case "/reset":
			if c, _, err := rc.Hijack(); err == nil {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		case "/short":
			// Promises more than it sends, then closes.
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, "only a little")
			if c, _, err := rc.Hijack(); err == nil {
				c.Close()
			}
		default:
			site("")(w, r)
		}
	})
	paths := []string{"/hang", "/ok1", "/trickle", "/ok2", "/reset", "/ok3", "/short", "/ok4"}
	var urls []string
	for _, p := range paths {
		urls = append(urls, rec.base+p)
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, ReadTimeout: time.Second,
		NoExceptionBackoff: true, Log: testLog(), NoProgressLog: true}
	res, _ := fetchAll(t, o, requests(urls...))
	for _, p := range paths {
		r := res[rec.base+p]
		want := crawldb.StatusFetchSuccess
		if !strings.HasPrefix(p, "/ok") {
			want = crawldb.StatusFetchRetry
		}
		if r == nil || r.Status != want {
			t.Errorf("%s: %s, want %v", p, summary(r), want)
			continue
		}
		if want == crawldb.StatusFetchRetry {
			if r.Code != CodeException {
				t.Errorf("%s: code %v, want exception", p, r.Code)
			}
			if r.Elapsed > 3*time.Second {
				t.Errorf("%s took %v with a 1s read timeout", p, r.Elapsed)
			}
			t.Logf("%s: %s", p, r.Message)
		}
	}
	for _, p := range []string{"/hang", "/trickle"} {
		if r := res[rec.base+p]; r != nil && !strings.Contains(r.Message, "within 1s") {
			t.Errorf("%s: message %q does not name the read timeout", p, r.Message)
		}
	}
}

// chainHead finds the longest chain of redirect pages (KindRedirect
// pointing at KindRedirect) and returns its first page and length.
func chainHead(w *simweb.Web) (int, int) {
	targeted := map[int]bool{}
	for id := range w.NumPages() {
		if p := w.Page(id); p.Kind == simweb.KindRedirect {
			targeted[p.Target] = true
		}
	}
	best, bestLen := -1, 0
	for id := range w.NumPages() {
		p := w.Page(id)
		if p.Kind != simweb.KindRedirect || targeted[id] {
			continue
		}
		n := 0
		for cur := id; w.Page(cur).Kind == simweb.KindRedirect && n < 100; cur = w.Page(cur).Target {
			n++
		}
		if n > bestLen {
			best, bestLen = id, n
		}
	}
	return best, bestLen
}

// TestFollowRedirects: with FollowRedirects N the targets are fetched as
// requests of their own, up to N hops; a redirect loop and a long chain
// stay bounded, and no URL is requested twice.
func TestFollowRedirects(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(4, 8, 200, simweb.HazardTraps), 0)
	head, n := chainHead(w)
	if n < 5 {
		t.Fatalf("longest redirect chain has %d hops", n)
	}
	loop := -1
	for id := range w.NumPages() {
		if w.Page(id).Kind == simweb.KindLoop && w.Page(id).RobotsAllowed {
			loop = id
			break
		}
	}
	single := -1
	for id := range w.NumPages() {
		p := w.Page(id)
		if p.Kind == simweb.KindRedirect && p.RobotsAllowed && w.Page(p.Target).Kind.IsContent() && w.Page(p.Target).RobotsAllowed && id != head {
			single = id
			break
		}
	}
	if loop < 0 || single < 0 {
		t.Fatalf("no loop (%d) or single redirect (%d)", loop, single)
	}
	const follow = 3
	o := testOptions(t, srv)
	o.FollowRedirects = follow
	res, _ := fetchAll(t, o, requests(srv.URL(head), srv.URL(loop), srv.URL(single)))
	waitIdle(t, srv)

	// The chain: the head and 3 hops fetched; the last one's target is
	// recorded, not fetched.
	cur := head
	for hop := 0; hop <= follow; hop++ {
		u := srv.URL(cur)
		r := res[u]
		if r == nil || !r.Code.IsRedirect() || r.Request.Hops != hop {
			t.Fatalf("chain hop %d (%s): %s", hop, u, summary(r))
		}
		if hop > 0 && (r.Request.ID != -1 || r.Request.From == "") {
			t.Errorf("chain hop %d: request %+v", hop, r.Request)
		}
		cur = w.Page(cur).Target
		if r.RedirectURL != srv.URL(cur) {
			t.Errorf("chain hop %d: redirect %q, want %q", hop, r.RedirectURL, srv.URL(cur))
		}
	}
	if r := res[srv.URL(cur)]; r != nil {
		t.Errorf("chain: hop %d was fetched: %s", follow+1, summary(r))
	}
	// The single redirect's target is fetched.
	target := srv.URL(w.Page(single).Target)
	if r := res[target]; r == nil || r.Status != crawldb.StatusFetchSuccess || r.Request.From != srv.URL(single) {
		t.Errorf("redirect target %s: %s", target, summary(r))
	}
	// Nothing was requested twice.
	for k, as := range accessByPath(srv) {
		if len(as) > 1 {
			t.Errorf("%s requested %d times", k, len(as))
		}
	}
	// Without following, only the given URLs get results.
	o.FollowRedirects = 0
	res, _ = fetchAll(t, o, requests(srv.URL(head), srv.URL(loop), srv.URL(single)))
	if len(res) != 3 {
		t.Errorf("without following: %d results, want 3", len(res))
	}
}

// BenchmarkFetch measures the fetcher's throughput against simweb with no
// politeness delay and no server latency: pages per second over 64
// connections, next to a bare net/http client getting the same URLs with
// as many concurrent requests (the "raw" sub-benchmark).
func BenchmarkFetch(b *testing.B) {
	w, srv := serveWeb(b, smallWeb(1, 100, 5000, 0), 0)
	var reqs []Request
	for id := range w.NumPages() {
		if p := w.Page(id); p.Kind.IsContent() && p.RobotsAllowed {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs)})
		}
	}
	b.Run("fetcher", func(b *testing.B) {
		o := testOptions(b, srv)
		o.MaxConnections = 64
		o.Log = testLog()
		benchFetch(b, o, reqs)
	})
	b.Run("raw", func(b *testing.B) {
		// The same URLs, dialled straight at the server (no DNS, no
		// robots.txt, no politeness), 64 at a time.
		addr := srv.HTTPAddr()
		c := rawClient(addr)
		// Interleave the hosts, so that the 64 requests in flight go to
		// different hosts, as the fetcher's do.
		byHost := map[string][]Request{}
		var hosts []string
		for _, q := range reqs {
			h := mustURL(b, q.URL).Host
			if byHost[h] == nil {
				hosts = append(hosts, h)
			}
			byHost[h] = append(byHost[h], q)
		}
		var mixed []Request
		for i := 0; len(mixed) < len(reqs); i++ {
			for _, h := range hosts {
				if i < len(byHost[h]) {
					mixed = append(mixed, byHost[h][i])
				}
			}
		}
		var pages int64
		b.ResetTimer()
		for range b.N {
			pages += rawFetch(b, c, mixed, 64)
		}
		b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
	})
}

// rawClient is a plain net/http client that connects every host name to
// addr (the simweb listener), keeping connections alive.
func rawClient(addr string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 64,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}}
}

// rawFetch GETs every request with n workers and returns the 200s.
func rawFetch(b *testing.B, c *http.Client, reqs []Request, n int) int64 {
	next := make(chan string)
	done := make(chan int64)
	for range n {
		go func() {
			var ok int64
			for u := range next {
				resp, err := c.Get(u)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ok++
				}
			}
			done <- ok
		}()
	}
	for _, q := range reqs {
		next <- q.URL
	}
	close(next)
	var total int64
	for range n {
		total += <-done
	}
	if total == 0 {
		b.Fatal("the raw client fetched nothing")
	}
	return total
}
