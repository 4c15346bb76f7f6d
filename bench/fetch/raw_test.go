package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/trawl/trawl/simweb"
)

// TestRawFetchPolite: the raw limit fetches every URL of a small simweb
// through its DNS server, never more than one request per host at a time,
// on kept-alive connections, and counts the 200s the truth promises.
func TestRawFetchPolite(t *testing.T) {
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = 3, 20, 600, simweb.HazardTraps
	w, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := w.Serve(t.Context(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	set := selectURLs(w, srv)
	var want200 int64
	for id := range w.NumPages() {
		p := w.Page(id)
		if p.RobotsAllowed && p.Kind != simweb.KindHostile && p.Kind != simweb.KindUnresolvable && p.Status == http.StatusOK {
			want200++
		}
	}
	if len(set.urls) == 0 || want200 == 0 {
		t.Fatalf("empty URL set (%d URLs, %d 200s)", len(set.urls), want200)
	}

	const conns = 8
	obs := &inFlight{byHost: map[string]int{}}
	res, err := rawFetch(context.Background(), set.urls, srv.DNSAddr(), conns, "raw-test",
		func(rt http.RoundTripper) http.RoundTripper { obs.next = rt; return obs })
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Responses != int64(len(set.urls)) {
		t.Errorf("%d responses, %d errors (%s) for %d URLs", res.Responses, res.Errors, res.FirstError, len(set.urls))
	}
	if res.OK != want200 {
		t.Errorf("%d pages answered 200, the truth says %d", res.OK, want200)
	}
	if obs.maxHost != 1 || obs.maxAll > conns || obs.maxAll < 2 {
		t.Errorf("requests in flight: at most %d to one host (want 1), %d in all (want 2..%d)", obs.maxHost, obs.maxAll, conns)
	}
	if res.Lookups != res.Dials || res.Dials >= int64(len(set.urls)) {
		t.Errorf("%d dials, %d lookups for %d URLs: want one lookup per dial and connections kept alive", res.Dials, res.Lookups, len(set.urls))
	}

	if err := srv.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries := srv.AccessLog().Entries()
	if len(entries) != len(set.urls) {
		t.Errorf("the server saw %d requests, want %d", len(entries), len(set.urls))
	}
	// The server's view: a host's requests overlap only where the server
	// closed a connection after a response (it logs the end of a request
	// when its handler returns, which can be after the client has read
	// the response and sent the next request on a new connection).
	byHost := map[string][]simweb.Access{}
	lastOnConn := map[uint64]int32{}
	for _, e := range entries {
		if e.UserAgent != "raw-test" {
			t.Fatalf("%s%s: user agent %q", e.Host, e.Path, e.UserAgent)
		}
		byHost[e.Host] = append(byHost[e.Host], e)
		lastOnConn[e.Conn] = max(lastOnConn[e.Conn], e.ConnRequest)
	}
	hosts := len(byHost)
	for host, es := range byHost {
		slices.SortFunc(es, func(a, b simweb.Access) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(es); i++ {
			a, b := es[i-1], es[i]
			if b.Start.Before(a.End) && (a.Conn == b.Conn || a.ConnRequest != lastOnConn[a.Conn] || b.ConnRequest != 1) {
				t.Errorf("%s: %s and %s overlap on connections %d and %d", host, a.Path, b.Path, a.Conn, b.Conn)
			}
		}
	}
	if hosts < cfg.Hosts {
		t.Errorf("requests went to %d hosts, want %d", hosts, cfg.Hosts)
	}
}

// inFlight is a RoundTripper that counts the requests in flight (from the
// request to the body's Close), in all and per host.
type inFlight struct {
	next            http.RoundTripper
	mu              sync.Mutex
	byHost          map[string]int
	all             int
	maxHost, maxAll int
}

func (o *inFlight) add(host string, d int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byHost[host] += d
	o.all += d
	o.maxHost = max(o.maxHost, o.byHost[host])
	o.maxAll = max(o.maxAll, o.all)
}

// RoundTrip counts the request until its body is closed.
func (o *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	o.add(r.URL.Host, 1)
	resp, err := o.next.RoundTrip(r)
	if err != nil {
		o.add(r.URL.Host, -1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { o.add(r.URL.Host, -1) }}
	return resp, nil
}

// countedBody calls done once, on the first Close.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
