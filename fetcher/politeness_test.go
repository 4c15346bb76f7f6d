package fetcher

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// hostPages returns the ids of the content pages of host h.
func hostPages(w *simweb.Web, h int) []int {
	var ids []int
	for id := range w.NumPages() {
		if p := w.Page(id); p.Host == h && p.Kind.IsContent() && p.RobotsAllowed {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestPoliteness: with a server delay, every host sees one request at a
// time over one connection at a time, and the gap between the end of a
// request and the start of the next is at least the delay, robots.txt
// included.
func TestPoliteness(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(11, 6, 90, 0), 0)
	const delay = 200 * time.Millisecond
	var reqs []Request
	hosts := 0
	for h := 0; h < 6 && hosts < 4; h++ {
		ids := hostPages(w, h)
		if len(ids) < 3 {
			continue
		}
		hosts++
		for _, id := range ids[:min(len(ids), 6)] {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs)})
		}
	}
	if hosts < 3 {
		t.Fatalf("only %d hosts with 3 pages: pick another seed", hosts)
	}
	o := testOptions(t, srv)
	o.ServerDelay, o.NoServerDelay = delay, false
	o.MaxConnections = 8
	res, st := fetchAll(t, o, reqs)
	waitIdle(t, srv)
	for _, q := range reqs {
		if r := res[q.URL]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("%s: %+v", q.URL, r)
		}
	}
	stats := simweb.Stats(srv.AccessLog().Entries())
	if len(stats) != hosts {
		t.Errorf("%d hosts requested, want %d", len(stats), hosts)
	}
	for h, hs := range stats {
		if hs.MaxConcurrent != 1 {
			t.Errorf("%s: %d requests at once", h, hs.MaxConcurrent)
		}
		if hs.MinGap < delay {
			t.Errorf("%s: requests %v apart, want at least %v", h, hs.MinGap, delay)
		}
	}
	// One connection per host at a time: the spans of a host's
	// connections (first request start to last request end) do not
	// overlap.
	type span struct{ from, to time.Time }
	conns := map[string]map[uint64]*span{}
	for _, a := range srv.AccessLog().Entries() {
		if conns[a.Host] == nil {
			conns[a.Host] = map[uint64]*span{}
		}
		sp := conns[a.Host][a.Conn]
		if sp == nil {
			conns[a.Host][a.Conn] = &span{a.Start, a.End}
			continue
		}
		if a.Start.Before(sp.from) {
			sp.from = a.Start
		}
		if a.End.After(sp.to) {
			sp.to = a.End
		}
	}
	for h, cs := range conns {
		var spans []*span
		for _, sp := range cs {
			spans = append(spans, sp)
		}
		slices.SortFunc(spans, func(a, b *span) int { return a.from.Compare(b.from) })
		for i := 1; i < len(spans); i++ {
			if spans[i].from.Before(spans[i-1].to) {
				t.Errorf("%s: two connections in use at once", h)
			}
		}
	}
	if st.MaxOpenConnections > o.MaxConnections {
		t.Errorf("%d connections open at once, limit %d", st.MaxOpenConnections, o.MaxConnections)
	}
}

// TestCrawlDelay: a robots.txt Crawl-delay longer than the server delay
// spaces the requests; one above MaxCrawlDelay skips the host's URLs
// (fetch_skipped, saying why) with no page requested.
func TestCrawlDelay(t *testing.T) {
	slow := newRecorder(t, "127.0.2.1", site("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"))
	tooSlow := newRecorder(t, "127.0.2.2", site("User-agent: *\nCrawl-delay: 60\n"))
	other := newRecorder(t, "127.0.2.3", site(""))
	var urls []string
	for i := range 3 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", slow.base, i))
		urls = append(urls, fmt.Sprintf("%s/p%d.html", tooSlow.base, i))
		urls = append(urls, fmt.Sprintf("%s/p%d.html", other.base, i))
	}
	urls = append(urls, slow.base+"/private/x.html")
	o := Options{Agent: "trawl-test", ServerDelay: 50 * time.Millisecond, MaxCrawlDelay: 2 * time.Second,
		AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)

	if g := minGap(slow.requests()); g < time.Second {
		t.Errorf("Crawl-delay 1: requests %v apart", g)
	}
	if n := slow.pages(); n != 3 {
		t.Errorf("Crawl-delay host: %d pages requested, want 3", n)
	}
	if r := res[slow.base+"/private/x.html"]; r == nil || r.Code != CodeRobotsDenied {
		t.Errorf("disallowed URL: %+v", r)
	}
	if n := tooSlow.pages(); n != 0 {
		t.Errorf("Crawl-delay 60 > max 2s: %d pages requested, want none", n)
	}
	for i := range 3 {
		u := fmt.Sprintf("%s/p%d.html", tooSlow.base, i)
		checkSkipped(t, u, res[u], "skipped: Crawl-delay 60s above the cap 2s")
		if r := res[fmt.Sprintf("%s/p%d.html", other.base, i)]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("other host: %+v", r)
		}
	}
	if st.Unfetched != 3 || st.Skipped != 3 {
		t.Errorf("Unfetched %d, Skipped %d; want 3, 3", st.Unfetched, st.Skipped)
	}
	if g := minGap(other.requests()); g < o.ServerDelay {
		t.Errorf("server delay: requests %v apart", g)
	}
}

// TestKeepAlive: without a politeness delay, a worker fetches a host's
// URLs over one kept-alive connection, up to what the server allows;
// HTTP/1.0 hosts get a connection per request.
func TestKeepAlive(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(4, 12, 400, simweb.HazardFailingHosts), 0)
	var reqs []Request
	for h := range 12 {
		for _, id := range hostPages(w, h) {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs)})
		}
	}
	o := testOptions(t, srv)
	o.MaxConnections = 4
	_, st := fetchAll(t, o, reqs)
	waitIdle(t, srv)
	stats := simweb.Stats(srv.AccessLog().Entries())
	sawKeepAlive, sawHTTP10 := false, false
	for h := range 12 {
		info := w.Host(h)
		hs, ok := stats[info.Name]
		if !ok || hs.Requests < 4 {
			continue
		}
		switch info.Role {
		case simweb.RoleHTTP10:
			sawHTTP10 = true
			if hs.MaxPerConn != 1 {
				t.Errorf("%s (HTTP/1.0): %d requests on one connection", info.Name, hs.MaxPerConn)
			}
		case simweb.RoleNormal:
			sawKeepAlive = true
			if hs.MaxPerConn < 2 {
				t.Errorf("%s: one request per connection (%d requests, %d connections)", info.Name, hs.Requests, hs.Connections)
			}
			if info.KeepAlive > 0 && hs.MaxPerConn > info.KeepAlive {
				t.Errorf("%s: %d requests on a connection, the server allows %d", info.Name, hs.MaxPerConn, info.KeepAlive)
			}
		}
	}
	if !sawKeepAlive || !sawHTTP10 {
		t.Errorf("the web lacks a normal (%v) or HTTP/1.0 (%v) host with 4 requests: pick another seed", sawKeepAlive, sawHTTP10)
	}
	if st.MaxOpenConnections > o.MaxConnections {
		t.Errorf("%d connections open at once, limit %d", st.MaxOpenConnections, o.MaxConnections)
	}
}

// TestExceptionLimit: a host that answers 503 is dropped after
// MaxExceptionsPerHost exceptions, its other URLs skipped (saying why);
// the delay after each exception in a row doubles.
func TestExceptionLimit(t *testing.T) {
	bad := newRecorder(t, "127.0.2.4", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	var urls []string
	for i := range 10 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", bad.base, i))
	}
	const backoff = 100 * time.Millisecond
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, MaxExceptionsPerHost: 3,
		ExceptionBackoff: backoff, HoldConnection: time.Second, Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)
	if len(res) != 10 || st.Retry != 3 || st.Skipped != 7 {
		t.Errorf("%d results, %d retries, %d skipped; want 10, 3, 7", len(res), st.Retry, st.Skipped)
	}
	retries := 0
	for u, r := range res {
		if r.Code == CodeSkipped {
			checkSkipped(t, u, r, "skipped: 3 exceptions on the host")
			continue
		}
		retries++
		if r.Status != crawldb.StatusFetchRetry || r.HTTPStatus != 503 || r.Code != CodeException {
			t.Errorf("%s: %v %v %d", u, r.Status, r.Code, r.HTTPStatus)
		}
	}
	if retries != 3 {
		t.Errorf("%d retry results, want 3", retries)
	}
	if st.Unfetched != 7 {
		t.Errorf("Unfetched = %d, want 7", st.Unfetched)
	}
	var pages []hit
	for _, h := range bad.requests() {
		if h.path != "/robots.txt" {
			pages = append(pages, h)
		}
	}
	if len(pages) != 3 {
		t.Fatalf("%d page requests, want 3", len(pages))
	}
	for i := 1; i < len(pages); i++ {
		want := backoff << (i - 1)
		if gap := pages[i].start.Sub(pages[i-1].end); gap < want {
			t.Errorf("gap after exception %d: %v, want at least %v", i, gap, want)
		}
	}
}

// TestDeadline: at the deadline the fetcher stops; the URLs it did not
// fetch get skipped results saying so, and Run returns no error.
func TestDeadline(t *testing.T) {
	site := newRecorder(t, "127.0.2.5", site(""))
	var urls []string
	for i := range 40 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", site.base, i))
	}
	o := Options{Agent: "trawl-test", ServerDelay: 100 * time.Millisecond, AllowPrivate: true,
		Deadline: time.Now().Add(600 * time.Millisecond), Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)
	if !st.DeadlineReached || st.Stopped || st.ThroughputTooLow {
		t.Errorf("DeadlineReached %v, Stopped %v, ThroughputTooLow %v; want true, false, false", st.DeadlineReached, st.Stopped, st.ThroughputTooLow)
	}
	fetched := 0
	for u, r := range res {
		if r.Code == CodeSkipped {
			checkSkipped(t, u, r, "skipped: fetch time limit reached")
		} else {
			fetched++
		}
	}
	if fetched == 0 || fetched >= 40 || len(res) != 40 {
		t.Errorf("%d fetched of %d results, want some but not all 40 of 40", fetched, len(res))
	}
	if int64(fetched)+st.Unfetched != 40 || st.Unfetched != st.Skipped {
		t.Errorf("%d fetched + %d unfetched (%d skipped) != 40", fetched, st.Unfetched, st.Skipped)
	}
	if n := site.pages(); n < fetched {
		t.Errorf("%d fetched but only %d requests", fetched, n)
	}
}

// TestPolitenessPerConnection: with DelayBetweenConnections the server
// delay separates connections, not requests: a host's requests share
// kept-alive connections (up to what the server allows), and a host's
// next connection starts at least the delay after the last request of
// its previous one ended. With DelayBetweenRequests (the default) every
// request has a connection of its own, as before.
func TestPolitenessPerConnection(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 10, 300, 0), 0)
	const delay = 150 * time.Millisecond
	var reqs []Request
	multi := 0 // hosts that will need more than one connection
	for h := range 10 {
		ids := hostPages(w, h)
		if len(ids) < 3 {
			continue
		}
		if ka := w.Host(h).KeepAlive; ka > 0 && ka < len(ids)+1 {
			multi++
		}
		for _, id := range ids[:min(len(ids), 12)] {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs)})
		}
	}
	if multi == 0 {
		t.Fatal("no host with a keep-alive limit below its pages: pick another seed")
	}
	type span struct {
		from, to time.Time
		n        int
	}
	for _, mode := range []DelayBetween{DelayBetweenConnections, DelayBetweenRequests} {
		since := srv.AccessLog().Len()
		o := testOptions(t, srv)
		o.ServerDelay, o.NoServerDelay = delay, false
		o.MaxConnections = 8
		o.DelayBetween = mode
		res, _ := fetchAll(t, o, reqs)
		waitIdle(t, srv)
		for _, q := range reqs {
			if r := res[q.URL]; r == nil || r.Status != crawldb.StatusFetchSuccess {
				t.Errorf("%v: %s: %+v", mode, q.URL, r)
			}
		}
		entries := srv.AccessLog().Since(since)
		conns := map[string]map[uint64]*span{}
		for _, a := range entries {
			if conns[a.Host] == nil {
				conns[a.Host] = map[uint64]*span{}
			}
			sp := conns[a.Host][a.Conn]
			if sp == nil {
				sp = &span{from: a.Start, to: a.End}
				conns[a.Host][a.Conn] = sp
			}
			if a.Start.Before(sp.from) {
				sp.from = a.Start
			}
			if a.End.After(sp.to) {
				sp.to = a.End
			}
			sp.n++
		}
		shared, reconnected := 0, 0
		for h, hs := range simweb.Stats(entries) {
			if hs.MaxConcurrent != 1 {
				t.Errorf("%v: %s: %d requests at once", mode, h, hs.MaxConcurrent)
			}
			if mode == DelayBetweenRequests {
				if hs.MaxPerConn != 1 || hs.MinGap < delay {
					t.Errorf("request mode: %s: %d requests on a connection, %v apart; want 1, at least %v", h, hs.MaxPerConn, hs.MinGap, delay)
				}
				continue
			}
			if hs.MaxPerConn >= 2 {
				shared++
			}
			var spans []*span
			for _, sp := range conns[h] {
				spans = append(spans, sp)
			}
			slices.SortFunc(spans, func(a, b *span) int { return a.from.Compare(b.from) })
			for i := 1; i < len(spans); i++ {
				reconnected++
				if gap := spans[i].from.Sub(spans[i-1].to); gap < delay {
					t.Errorf("connection mode: %s: a connection %v after the previous one, want at least %v", h, gap, delay)
				}
			}
		}
		if mode == DelayBetweenConnections && (shared == 0 || reconnected == 0) {
			t.Errorf("connection mode: %d hosts with requests sharing a connection, %d reconnections; want both", shared, reconnected)
		}
	}
}

// TestCrawlDelayPerConnection: with DelayBetweenConnections a robots.txt
// Crawl-delay still separates every two requests (robots.txt included),
// though the requests share a connection.
func TestCrawlDelayPerConnection(t *testing.T) {
	slow := newRecorder(t, "127.0.2.6", site("User-agent: *\nCrawl-delay: 1\n"))
	var urls []string
	for i := range 3 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", slow.base, i))
	}
	o := Options{Agent: "trawl-test", ServerDelay: 50 * time.Millisecond, MaxCrawlDelay: 2 * time.Second,
		DelayBetween: DelayBetweenConnections, AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	res, _ := fetchAll(t, o, requests(urls...))
	for _, u := range urls {
		if r := res[u]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("%s: %+v", u, r)
		}
	}
	hs := slow.requests()
	if len(hs) != 4 {
		t.Errorf("%d requests, want robots.txt and 3 pages", len(hs))
	}
	if g := minGap(hs); g < time.Second {
		t.Errorf("Crawl-delay 1 between connections: requests %v apart", g)
	}
}

// TestRetryAfter: a 429 or 503 answer's Retry-After (seconds or an
// HTTP-date) holds back the host's next request that long, counted by
// host; one above MaxRetryAfter skips the host's remaining URLs for the
// round (fetch_skipped, saying why); other hosts are not held back.
func TestRetryAfter(t *testing.T) {
	// busy answers its first page request 429 with Retry-After: 1, then
	// 200s; dated answers 503 with an HTTP-date 1 s after its Date.
	var busyN, datedN atomic.Int32
	busy := newRecorder(t, "127.0.3.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" && busyN.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		site("")(w, r)
	})
	dated := newRecorder(t, "127.0.3.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" && datedN.Add(1) == 1 {
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			// An HTTP-date has whole seconds: 2 s after Date is at least
			// 1 s after now.
			w.Header().Set("Retry-After", now.Add(2*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		site("")(w, r)
	})
	// away asks for an hour: above the cap.
	away := newRecorder(t, "127.0.3.3", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	other := newRecorder(t, "127.0.3.4", site(""))
	var urls []string
	for i := range 3 {
		for _, rec := range []*recorder{busy, dated, away, other} {
			urls = append(urls, fmt.Sprintf("%s/p%d.html", rec.base, i))
		}
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, MaxRetryAfter: 10 * time.Second, NoExceptionBackoff: true,
		AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)

	for _, rec := range []*recorder{busy, dated} {
		hits := rec.requests()[1:] // after robots.txt
		if len(hits) != 3 {
			t.Fatalf("%s: %d page requests, want 3", rec.base, len(hits))
		}
		if g := hits[1].start.Sub(hits[0].end); g < time.Second {
			t.Errorf("%s: the request after the Retry-After answer came %v later, want at least 1s", rec.base, g)
		}
	}
	if r := res[busy.base+"/p0.html"]; r == nil || r.HTTPStatus != 429 || r.Status != crawldb.StatusFetchRetry ||
		r.RetryAfter != time.Second || !strings.Contains(r.Message, "Retry-After 1s") {
		t.Errorf("429: %s, want fetch_retry with Retry-After 1s", summary(r))
	}
	if n := away.pages(); n != 1 {
		t.Errorf("Retry-After 3600 > max 10s: %d pages requested, want 1", n)
	}
	for i := 1; i < 3; i++ {
		u := fmt.Sprintf("%s/p%d.html", away.base, i)
		checkSkipped(t, u, res[u], "skipped: Retry-After 3600s above the cap 10s")
	}
	for i := range 3 {
		if r := res[fmt.Sprintf("%s/p%d.html", other.base, i)]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("other host: %s", summary(r))
		}
	}
	host := func(rec *recorder) string { return strings.Split(strings.TrimPrefix(rec.base, "http://"), ":")[0] }
	want := map[string]int{host(busy): 1, host(dated): 1, host(away): 1}
	if !maps.Equal(st.RetryAfter, want) {
		t.Errorf("Stats.RetryAfter %v, want %v", st.RetryAfter, want)
	}
}

// TestRetryAfterValue: delay-seconds and HTTP-dates (relative to the
// response's Date when there is one); anything else is no wait.
func TestRetryAfterValue(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		value, date string
		want        time.Duration
	}{
		{"", "", 0},
		{"120", "", 2 * time.Minute},
		{" 5 ", "", 5 * time.Second},
		{"0", "", 0},
		{"-5", "", 0},
		{"1.5", "", 0},
		{"soon", "", 0},
		{"99999999999", "", 0},
		{"Fri, 27 Nov 2026 12:00:30 GMT", "", 30 * time.Second},
		{"Fri, 27 Nov 2026 12:00:30 GMT", "Fri, 27 Nov 2026 12:00:20 GMT", 10 * time.Second},
		{"Fri, 27 Nov 2026 11:00:00 GMT", "", 0},
		{"Friday, 27-Nov-26 12:01:00 GMT", "", time.Minute},
	} {
		h := http.Header{}
		if c.value != "" {
			h.Set("Retry-After", c.value)
		}
		if c.date != "" {
			h.Set("Date", c.date)
		}
		if got := retryAfter(h, now); got != c.want {
			t.Errorf("Retry-After %q, Date %q: %v, want %v", c.value, c.date, got, c.want)
		}
	}
}
