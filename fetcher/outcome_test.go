package fetcher

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// counters collects the counters of a run.
type counters struct{ m sync.Map } // name → *atomic.Int64

func (c *counters) count(name string, n int64) {
	v, _ := c.m.LoadOrStore(name, new(atomic.Int64))
	v.(*atomic.Int64).Add(n)
}

func (c *counters) get(name string) int64 {
	if v, ok := c.m.Load(name); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// TestSkippedResults: the URLs of a host whose robots.txt answers 503
// and of one whose Crawl-delay is above the cap get skipped results
// saying why, and so do the redirect targets the fetcher queues on them
// (Request.ID -1); no page of theirs is requested, and every request has
// exactly one result.
func TestSkippedResults(t *testing.T) {
	down := newRecorder(t, "127.0.7.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		site("")(w, r)
	})
	lazy := newRecorder(t, "127.0.7.2", site("User-agent: *\nCrawl-delay: 3600\n"))
	var ok *recorder
	ok = newRecorder(t, "127.0.7.3", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-down":
			http.Redirect(w, r, down.base+"/target.html", http.StatusFound)
		case "/to-lazy":
			http.Redirect(w, r, lazy.base+"/target.html", http.StatusFound)
		default:
			site("")(w, r)
		}
	})
	var urls []string
	for i := range 3 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", down.base, i), fmt.Sprintf("%s/p%d.html", lazy.base, i),
			fmt.Sprintf("%s/p%d.html", ok.base, i))
	}
	urls = append(urls, ok.base+"/to-down", ok.base+"/to-lazy")
	var ctr counters
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, FollowRedirects: 1,
		Log: testLog(), NoProgressLog: true, Count: ctr.count}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)

	const (
		downMsg = "skipped: robots.txt unavailable (HTTP 503)"
		lazyMsg = "skipped: Crawl-delay 3600s above the cap 30s"
	)
	for i := range 3 {
		u := fmt.Sprintf("%s/p%d.html", down.base, i)
		checkSkipped(t, u, res[u], downMsg)
		u = fmt.Sprintf("%s/p%d.html", lazy.base, i)
		checkSkipped(t, u, res[u], lazyMsg)
		u = fmt.Sprintf("%s/p%d.html", ok.base, i)
		if r := res[u]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("%s: %s", u, summary(r))
		}
	}
	for from, c := range map[string]struct{ target, msg string }{
		ok.base + "/to-down": {down.base + "/target.html", downMsg},
		ok.base + "/to-lazy": {lazy.base + "/target.html", lazyMsg},
	} {
		if r := res[from]; r == nil || r.Code != CodeTempMoved || r.RedirectURL != c.target {
			t.Errorf("%s: %s, want a redirect to %s", from, summary(r), c.target)
		}
		r := res[c.target]
		checkSkipped(t, c.target, r, c.msg)
		if r != nil && (r.Request.ID != -1 || r.Request.Hops != 1 || r.Request.From != from) {
			t.Errorf("%s: request %+v, want ID -1, 1 hop, from %s", c.target, r.Request, from)
		}
	}
	if len(res) != len(urls)+2 {
		t.Errorf("%d results, want %d (the requests and 2 redirect targets)", len(res), len(urls)+2)
	}
	if n, m := down.pages(), lazy.pages(); n != 0 || m != 0 {
		t.Errorf("pages requested on skipped hosts: %d and %d, want none", n, m)
	}
	if st.Skipped != 8 || st.Unfetched != 8 || st.Success != 3 || st.Redirects != 2 || st.Retry != 0 || st.Gone != 0 {
		t.Errorf("stats %+v, want 8 skipped and unfetched, 3 successes, 2 redirects, no retry or gone", *st)
	}
	for name, want := range map[string]int64{
		"fetch_skipped": 8, "code_skipped": 8, CounterUnfetched: 8, "fetch_retry": 0,
		CounterRobotsDeferred: 1, CounterCrawlDelayTooLong: 1,
	} {
		if got := ctr.get(name); got != want {
			t.Errorf("counter %s = %d, want %d", name, got, want)
		}
	}
}

// TestRefusedPolicy: the address guard's refusals are fetch_refused, not
// fetch_gone, with a message naming the setting: a robots.txt that
// redirects to a private address refuses all its host's URLs; a page
// whose connection is refused is refused; a redirect target on a
// refused host is refused (ID -1). One warning sums them up. (The test
// makes some loopback addresses look public to the guard.)
func TestRefusedPolicy(t *testing.T) {
	private := newRecorder(t, "127.0.6.2", site(""))
	pub := newRecorder(t, "127.0.6.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, private.base+"/robots.txt", http.StatusMovedPermanently)
			return
		}
		site("")(w, r)
	})
	flip := newRecorder(t, "127.0.6.3", site(""))
	linker := newRecorder(t, "127.0.6.4", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, private.base+"/x.html", http.StatusMovedPermanently)
			return
		}
		site("")(w, r)
	})
	pubAddr, flipAddr, linkerAddr := mustAddr(t, "127.0.6.1"), mustAddr(t, "127.0.6.3"), mustAddr(t, "127.0.6.4")
	var flipDials atomic.Int64
	logs := &logBuffer{}
	var ctr counters
	o := Options{Agent: "trawl-test", NoServerDelay: true, FollowRedirects: 1, DisableKeepAlive: true,
		Log: logs.logger(), NoProgressLog: true, Count: ctr.count}
	o.privateAddr = func(a netip.Addr) bool {
		switch a {
		case pubAddr, linkerAddr:
			return false
		case flipAddr:
			// Public for robots.txt (the first connection), private
			// after: the pages' connections are refused.
			return flipDials.Add(1) > 1
		}
		return true
	}
	urls := []string{pub.base + "/a.html", pub.base + "/b.html", flip.base + "/a.html", flip.base + "/b.html",
		linker.base + "/go", linker.base + "/ok.html"}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)

	const setting = "(set allow-private to crawl it)"
	for _, u := range urls[:2] {
		want := "refused to follow the robots.txt redirect to " + private.base + "/robots.txt: 127.0.6.2 is a private, loopback or link-local address " + setting
		if r := res[u]; r == nil || r.Code != CodeRefused || r.Status != crawldb.StatusFetchRefused || r.Message != want {
			t.Errorf("%s (robots.txt redirects to a private address): %s, want refused %q", u, summary(r), want)
		}
	}
	for _, u := range urls[2:4] {
		want := "refused to connect to 127.0.6.3: a private, loopback or link-local address " + setting
		if r := res[u]; r == nil || r.Code != CodeRefused || r.Status != crawldb.StatusFetchRefused || r.Message != want {
			t.Errorf("%s (page connection refused): %s, want refused %q", u, summary(r), want)
		}
	}
	target := private.base + "/x.html"
	if r := res[target]; r == nil || r.Code != CodeRefused || r.Status != crawldb.StatusFetchRefused ||
		r.Request.ID != -1 || !strings.HasSuffix(r.Message, setting) {
		t.Errorf("redirect target %s: %s, want refused with ID -1", target, summary(r))
	}
	if r := res[linker.base+"/ok.html"]; r == nil || r.Status != crawldb.StatusFetchSuccess {
		t.Errorf("public host: %s", summary(r))
	}
	if n := len(private.requests()); n != 0 {
		t.Errorf("the private address got %d requests", n)
	}
	if n := pub.pages(); n != 0 {
		t.Errorf("the host whose robots.txt redirects to a private address got %d page requests", n)
	}
	if st.Refused != 5 || st.Gone != 0 || st.Skipped != 0 {
		t.Errorf("stats: %d refused, %d gone, %d skipped; want 5, 0, 0", st.Refused, st.Gone, st.Skipped)
	}
	for name, want := range map[string]int64{"fetch_refused": 5, CounterRefusedURLs: 5, CounterRefused: 3, "fetch_gone": 0} {
		if got := ctr.get(name); got != want {
			t.Errorf("counter %s = %d, want %d", name, got, want)
		}
	}
	warns := logs.lines(slog.LevelWarn)
	if len(warns) != 1 || !strings.Contains(warns[0], "urls=5") || !strings.Contains(warns[0], "hosts=3") ||
		!strings.Contains(warns[0], "--allow-private") || !strings.Contains(warns[0], "fetcher.allowPrivate") {
		t.Errorf("warnings %q, want one with urls=5 hosts=3 naming --allow-private and fetcher.allowPrivate", warns)
	}
}

// TestStop: closing Options.Stop ends the run gracefully: Run returns
// promptly without an error and with Stats.Stopped, a request in flight
// is cut, and every request (redirect targets included) has exactly one
// result, those not fetched skipped with the interrupt's message.
func TestStop(t *testing.T) {
	slow := newRecorder(t, "127.0.8.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		if strings.HasPrefix(r.URL.Path, "/r") {
			http.Redirect(w, r, "/t"+strings.TrimPrefix(r.URL.Path, "/r"), http.StatusFound)
			return
		}
		site("")(w, r)
	})
	// A host whose pages hang until the client goes away: its request is
	// in flight when the run stops.
	var hanging atomic.Int64
	hang := newRecorder(t, "127.0.8.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			hanging.Add(1)
			<-r.Context().Done()
			return
		}
		site("")(w, r)
	})
	var urls []string
	for i := range 60 {
		p := "p"
		if i%3 == 0 {
			p = "r" // redirects to /t<i>.html, a target the fetcher queues
		}
		urls = append(urls, fmt.Sprintf("%s/%s%d.html", slow.base, p, i))
	}
	urls = append(urls, hang.base+"/a.html", hang.base+"/b.html")
	stop := make(chan struct{})
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, FollowRedirects: 1,
		ReadTimeout: time.Minute, Stop: stop, Log: testLog(), NoProgressLog: true}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	reqs := requests(urls...)
	var mu sync.Mutex
	res := map[string]*Result{}
	type outcome struct {
		st  *Stats
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var once sync.Once
		st, err := f.Run(context.Background(), reqs, func(r *Result) error {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := res[r.Request.URL]; dup {
				t.Errorf("%s reported twice", r.Request.URL)
			}
			res[r.Request.URL] = r
			if len(res) >= 3 && hanging.Load() > 0 {
				once.Do(func() { close(stop) })
			}
			return nil
		})
		done <- outcome{st, err}
	}()
	var out outcome
	select {
	case out = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s of the stop")
	}
	if out.err != nil {
		t.Fatalf("Run: %v, want no error", out.err)
	}
	st := out.st
	if !st.Stopped || st.DeadlineReached || st.ThroughputTooLow {
		t.Errorf("Stopped %v, DeadlineReached %v, ThroughputTooLow %v; want true, false, false", st.Stopped, st.DeadlineReached, st.ThroughputTooLow)
	}
	mu.Lock()
	defer mu.Unlock()
	checkAllReported(t, reqs, res)
	fetched, skipped := 0, 0
	for u, r := range res {
		switch {
		case r.Code == CodeSkipped:
			skipped++
			checkSkipped(t, u, r, "skipped: fetch stopped by an interrupt")
		case strings.HasPrefix(u, hang.base):
			t.Errorf("%s (hanging): %s, want skipped", u, summary(r))
		default:
			fetched++
			if r.Code.IsRedirect() && r.Request.Hops == 0 && res[r.RedirectURL] == nil {
				t.Errorf("%s redirects to %s, which has no result", u, r.RedirectURL)
			}
		}
	}
	if fetched < 3 || skipped == 0 {
		t.Errorf("%d fetched, %d skipped; want at least 3 fetched and some skipped", fetched, skipped)
	}
	if st.Skipped != int64(skipped) || st.Unfetched != st.Skipped {
		t.Errorf("Skipped %d, Unfetched %d; want %d", st.Skipped, st.Unfetched, skipped)
	}
	if hanging.Load() == 0 {
		t.Error("no request of the hanging host was in flight")
	}
}

// TestStopBeforeRun: a run whose Stop is already closed fetches nothing
// and skips every URL.
func TestStopBeforeRun(t *testing.T) {
	rec := newRecorder(t, "127.0.8.3", site(""))
	stop := make(chan struct{})
	close(stop)
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, Stop: stop, Log: testLog(), NoProgressLog: true}
	reqs := requests(rec.base+"/a.html", rec.base+"/b.html", "ftp://example.com/x")
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)
	for _, q := range reqs[:2] {
		checkSkipped(t, q.URL, res[q.URL], "skipped: fetch stopped by an interrupt")
	}
	if r := res[reqs[2].URL]; r == nil || r.Status != crawldb.StatusFetchGone {
		t.Errorf("malformed URL: %s, want fetch_gone", summary(r))
	}
	if !st.Stopped || st.Skipped != 2 || st.Requests != 0 || len(rec.requests()) != 0 {
		t.Errorf("Stopped %v, %d skipped, %d requests (%d seen); want true, 2, 0", st.Stopped, st.Skipped, st.Requests, len(rec.requests()))
	}
}

// TestAbortReportsNothingMore: when ctx is cancelled Run returns its
// error and emits no skipped results; Stats.Unfetched counts the URLs
// left without a result.
func TestAbortReportsNothingMore(t *testing.T) {
	rec := newRecorder(t, "127.0.8.4", site(""))
	var urls []string
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", rec.base, i))
	}
	// After robots.txt, the host's next turn is an hour away: only the
	// cancellation ends the run.
	o := Options{Agent: "trawl-test", ServerDelay: time.Hour, AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	var mu sync.Mutex
	var got []*Result
	st, err := f.Run(ctx, requests(urls...), func(r *Result) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("Run: %v, want the context's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if r.Code == CodeSkipped {
			t.Errorf("%s: skipped result after an abort", r.Request.URL)
		}
	}
	if st.Skipped != 0 || st.Unfetched != int64(len(urls)-len(got)) {
		t.Errorf("%d results, Skipped %d, Unfetched %d; want Unfetched %d", len(got), st.Skipped, st.Unfetched, len(urls)-len(got))
	}
}

// TestStallTimeout: every server hangs once its robots.txt is served, with
// a read timeout far longer than the stall timeout. No result comes, so
// the stall timeout ends the run: Run returns (no error), Stats.Stalled is
// set, and every URL has a skipped result saying why.
func TestStallTimeout(t *testing.T) {
	hang := newRecorder(t, "127.0.8.3", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			<-r.Context().Done()
			return
		}
		site("")(w, r)
	})
	var urls []string
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", hang.base, i))
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, ReadTimeout: time.Hour,
		StallTimeout: 300 * time.Millisecond, Log: testLog(), NoProgressLog: true}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	reqs := requests(urls...)
	var mu sync.Mutex
	res := map[string]*Result{}
	type outcome struct {
		st  *Stats
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		st, err := f.Run(context.Background(), reqs, func(r *Result) error {
			mu.Lock()
			defer mu.Unlock()
			res[r.Request.URL] = r
			return nil
		})
		done <- outcome{st, err}
	}()
	var out outcome
	select {
	case out = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return: the stall timeout did not end it")
	}
	if out.err != nil || !out.st.Stalled || out.st.DeadlineReached || out.st.Stopped {
		t.Fatalf("Run: %v, stats %+v; want no error and Stalled only", out.err, out.st)
	}
	mu.Lock()
	defer mu.Unlock()
	checkAllReported(t, reqs, res)
	for u, r := range res {
		checkSkipped(t, u, r, "skipped: the fetch made no progress for the stall timeout (hung requests abandoned)")
	}
}
