package fetcher

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/simweb"
)

// testLog is a logger for tests: quiet unless -v.
func testLog() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// serveWeb generates and serves a web with DNS on loopback.
func serveWeb(t testing.TB, cfg simweb.Config, latency float64) (*simweb.Web, *simweb.Server) {
	t.Helper()
	return serveWebWith(t, cfg, simweb.ServeOptions{Latency: latency})
}

// serveWebWith generates and serves a web with o's Latency and
// IPPerHost, HTTP and DNS on loopback ports of their own, logging to
// testLog and keeping an access log.
func serveWebWith(t testing.TB, cfg simweb.Config, o simweb.ServeOptions) (*simweb.Web, *simweb.Server) {
	t.Helper()
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatalf("simweb.New: %v", err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{
		HTTPAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", Latency: o.Latency, IPPerHost: o.IPPerHost,
		Logger: testLog(), AccessLogLimit: 1 << 22,
	})
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return web, srv
}

// benchFetch runs a fetcher with o over reqs b.N times and reports pages
// fetched per second.
func benchFetch(b *testing.B, o Options, reqs []Request) {
	f, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	var pages int64
	b.ResetTimer()
	for range b.N {
		st, err := f.Run(b.Context(), reqs, func(*Result) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		pages += st.Success
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}

// smallWeb is a small web with the given hazards.
func smallWeb(seed uint64, hosts, pages int, h simweb.Hazard) simweb.Config {
	c := simweb.DefaultConfig()
	c.Seed, c.Hosts, c.Pages, c.Hazards = seed, hosts, pages, h
	return c
}

// testOptions are fetcher options for a simweb server: its DNS (through
// package resolver, as the fetch job resolves), private addresses allowed,
// no politeness delay or exception backoff, short timeouts.
func testOptions(t testing.TB, srv *simweb.Server) Options {
	t.Helper()
	res, err := resolver.New(resolver.Config{Servers: []string{srv.DNSAddr()}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	return Options{
		Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, Resolver: res,
		ConnectTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second,
		MaxConnections: 16, Log: testLog(), NoProgressLog: true, NoExceptionBackoff: true,
	}
}

// fetchAll runs a fetcher over urls and returns the results by URL
// (failing on a URL reported twice) and the stats.
func fetchAll(t testing.TB, o Options, reqs []Request) (map[string]*Result, *Stats) {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	out := map[string]*Result{}
	st, err := f.Run(context.Background(), reqs, func(r *Result) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := out[r.Request.URL]; dup {
			t.Errorf("%s reported twice", r.Request.URL)
		}
		out[r.Request.URL] = r
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out, st
}

// requests makes requests of URLs, with IDs in order.
func requests(urls ...string) []Request {
	out := make([]Request, len(urls))
	for i, u := range urls {
		out[i] = Request{URL: u, ID: i}
	}
	return out
}

// accessByURL groups the access log by absolute URL (http://host:port/path).
func accessByPath(srv *simweb.Server) map[string][]simweb.Access {
	m := map[string][]simweb.Access{}
	for _, a := range srv.AccessLog().Entries() {
		m[a.Host+" "+a.Path] = append(m[a.Host+" "+a.Path], a)
	}
	return m
}

// waitIdle waits until the server has answered everything.
func waitIdle(t testing.TB, srv *simweb.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitIdle(ctx); err != nil {
		t.Fatalf("WaitIdle: %v", err)
	}
}

func mustAddr(t testing.TB, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func itoa(n int) string { return strconv.Itoa(n) }

// hit is one request a recorder saw.
type hit struct {
	path        string
	start, end  time.Time
	ua          string
	conditional bool
}

// recorder is a real HTTP server on its own loopback address that records
// its requests; handle answers them.
type recorder struct {
	base string // http://127.0.x.y:port
	mu   sync.Mutex
	hits []hit
}

// newRecorder serves handle on ip (a 127/8 address) until the test ends.
func newRecorder(t testing.TB, ip string, handle http.HandlerFunc) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	rec := &recorder{base: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := hit{path: r.URL.RequestURI(), start: time.Now(), ua: r.UserAgent(),
			conditional: r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != ""}
		handle(w, r)
		h.end = time.Now()
		rec.mu.Lock()
		rec.hits = append(rec.hits, h)
		rec.mu.Unlock()
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return rec
}

// requests returns the recorded requests in order of start.
func (rec *recorder) requests() []hit {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := append([]hit(nil), rec.hits...)
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// pages counts the recorded requests other than robots.txt.
func (rec *recorder) pages() int {
	n := 0
	for _, h := range rec.requests() {
		if h.path != "/robots.txt" {
			n++
		}
	}
	return n
}

// minGap is the shortest time from the end of a request to the start of
// the next (-1 with fewer than two).
func minGap(hs []hit) time.Duration {
	gap := time.Duration(-1)
	for i := 1; i < len(hs); i++ {
		d := hs[i].start.Sub(hs[i-1].end)
		if gap < 0 || d < gap {
			gap = d
		}
	}
	return gap
}

// site answers robots.txt with robots (404 if empty) and every other path
// with a small HTML page.
func site(robots string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robots == "" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, robots)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><body><p>page "+r.URL.Path+"</p></body></html>")
	}
}

// checkSkipped fails unless r is a skipped result with the message msg
// and a fetch time.
func checkSkipped(t testing.TB, u string, r *Result, msg string) {
	t.Helper()
	if r == nil || r.Code != CodeSkipped || r.Status != crawldb.StatusFetchSkipped || r.Message != msg || r.Time.IsZero() {
		t.Errorf("%s: %s, want skipped/fetch_skipped %q with a time", u, summary(r), msg)
	}
}

// checkAllReported fails for every request without a result.
func checkAllReported(t testing.TB, reqs []Request, res map[string]*Result) {
	t.Helper()
	for _, q := range reqs {
		if res[q.URL] == nil {
			t.Errorf("%s: no result", q.URL)
		}
	}
}

// logBuffer collects a run's log lines (text format) for tests.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// logger logs to b, at Info level and above.
func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// lines returns the lines logged at level.
func (b *logBuffer) lines(level slog.Level) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, " level="+level.String()+" ") {
			out = append(out, l)
		}
	}
	return out
}
