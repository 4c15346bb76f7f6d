package simweb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// serve starts a server for a test and closes it at the end.
func serve(t testing.TB, w *Web, opts ServeOptions) *Server {
	t.Helper()
	s, err := w.Serve(context.Background(), opts)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// client returns an HTTP client that connects every host name to the
// server's main listener (as a crawler resolving through the server's DNS
// would), keeps connections alive and does not follow redirects.
func client(s *Server) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if s.Addressing().IPPerHost {
				return d.DialContext(ctx, network, addr)
			}
			return d.DialContext(ctx, network, s.HTTPAddr())
		},
		MaxIdleConnsPerHost: 4,
		DisableCompression:  true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func get(t testing.TB, c *http.Client, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: body: %v", u, err)
	}
	return resp, body
}

// idle waits until the server has logged every finished request.
func idle(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

// findHost returns the first regular host matching ok.
func findHost(t testing.TB, w *Web, ok func(h *host) bool) int {
	t.Helper()
	for i := range w.regular {
		if ok(&w.hosts[i]) {
			return i
		}
	}
	t.Fatal("no host with the wanted behaviour")
	return -1
}

// findPage returns the first page matching ok.
func findPage(t testing.TB, w *Web, ok func(id int32, p *page) bool) int32 {
	t.Helper()
	for id := range int32(len(w.pages)) {
		if ok(id, &w.pages[id]) {
			return id
		}
	}
	t.Fatal("no page with the wanted properties")
	return -1
}

func healthy(w *Web, p *page) bool {
	r := w.hosts[p.host].role
	return p.host < int32(w.regular) && (r == RoleNormal) && p.flags&flagBroken == 0
}

// TestServeContent fetches every URL of the web's healthy hosts and checks
// status, headers and body against the web.
func TestServeContent(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{Start: w.cfg.Epoch.AddDate(0, 2, 0)})
	c := client(s)
	sim := s.Now()
	r := w.newRenderer()
	checked := map[Kind]int{}
	for id := range int32(len(w.pages)) {
		p := &w.pages[id]
		if !healthy(w, p) || p.kind == KindHuge || p.kind == KindBomb {
			continue
		}
		u := s.URL(int(id))
		resp, body := get(t, c, u)
		checked[p.kind]++
		switch p.kind {
		case KindHome, KindDirectory, KindLeaf, KindDocument:
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d", u, resp.StatusCode)
			}
			v := w.Version(int(id), sim)
			want, _ := r.body(id, v, s.Addressing())
			if id%50 == 0 {
				if b, err := w.Body(int(id), v, s.Addressing()); err != nil || !bytes.Equal(b, want) {
					t.Fatalf("Body(%d, %d): %v", id, v, err)
				}
			}
			if !bytes.Equal(body, want) {
				t.Fatalf("%s: body differs from version %d", u, v)
			}
			ct := resp.Header.Get("Content-Type")
			if p.kind == KindDocument && ct != "application/pdf" {
				t.Fatalf("%s: Content-Type %q", u, ct)
			}
			if p.kind != KindDocument && (strings.Contains(ct, "charset=") != (p.flags&flagCharsetHead != 0) || !strings.HasPrefix(ct, "text/html")) {
				t.Fatalf("%s: Content-Type %q, flags %b", u, ct, p.flags)
			}
			h := &w.hosts[p.host]
			hasLM, hasET := resp.Header.Get("Last-Modified") != "", resp.Header.Get("ETag") != ""
			wantLM := h.validators != ValidatorsETag && h.validators != ValidatorsNone
			wantET := h.validators != ValidatorsLastMod && h.validators != ValidatorsNone
			if hasLM != wantLM || hasET != wantET {
				t.Fatalf("%s: validators %v, Last-Modified %v, ETag %v", u, h.validators, hasLM, hasET)
			}
			if hasLM {
				lm, err := http.ParseTime(resp.Header.Get("Last-Modified"))
				if err != nil || !lm.Equal(w.LastModified(int(id), sim).Truncate(time.Second)) {
					t.Fatalf("%s: Last-Modified %q, want %v", u, resp.Header.Get("Last-Modified"), w.LastModified(int(id), sim))
				}
			}
		case KindRedirect, KindLoop:
			loc, err := resp.Location()
			if err != nil || resp.StatusCode != int(p.status) || loc.String() != s.URL(int(p.target)) {
				t.Fatalf("%s: %d to %v (%v), want %d to %s", u, resp.StatusCode, loc, err, p.status, s.URL(int(p.target)))
			}
		case KindMissing:
			if resp.StatusCode != 404 {
				t.Fatalf("%s: status %d, want 404", u, resp.StatusCode)
			}
		case KindTrap:
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte("Next month")) {
				t.Fatalf("%s: status %d, body %q", u, resp.StatusCode, body)
			}
		}
		if resp.Header.Get("Date") == "" || resp.Header.Get("Server") != serverName {
			t.Fatalf("%s: headers %v", u, resp.Header)
		}
	}
	t.Logf("checked %v", checked)
	if _, err := w.Body(int(w.special.loop), 0, Addressing{}); err == nil {
		t.Error("Body of a redirect succeeded")
	}
	if checked[KindLeaf] == 0 || checked[KindRedirect] == 0 || checked[KindMissing] == 0 || checked[KindDocument] == 0 {
		t.Errorf("too few kinds checked: %v", checked)
	}
	// Images, unknown paths, unknown hosts, other methods.
	hi := findHost(t, w, func(h *host) bool { return h.role == RoleNormal })
	base := "http://" + w.authority(int32(hi), s.Addressing())
	resp, body := get(t, c, base+"/img/0.png")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("image: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, p := range []string{"/img/99999.png", "/img/01.png", "/nope.html", "/calendar/2026/01/"} {
		if w.special.trap >= 0 && w.pages[w.special.trap].host == int32(hi) && strings.HasPrefix(p, "/calendar/") {
			continue
		}
		if resp, _ := get(t, c, base+p); resp.StatusCode != 404 {
			t.Errorf("%s: status %d, want 404", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader("x"))
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("POST: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	req, _ = http.NewRequest(http.MethodHead, base+"/", nil)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, _ := get(t, c, "http://nosuch.sim.test:"+fmt.Sprint(s.Addressing().Port)+"/"); resp.StatusCode != 404 {
		t.Errorf("unknown host: status %d", resp.StatusCode)
	}
}

// TestKeepAliveCap checks that a host closes the connection after its
// number of requests, and that HTTP/1.0 hosts close after every response.
func TestKeepAliveCap(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	c := client(s)
	hi := findHost(t, w, func(h *host) bool { return h.role == RoleNormal && h.keepAlive >= 2 && h.keepAlive <= 5 })
	h := &w.hosts[hi]
	var reused, fresh int
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			reused++
		} else {
			fresh++
		}
	}}
	n := 3 * h.keepAlive
	for range n {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, s.URL(int(h.home)), nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if fresh != 3 || reused != n-3 {
		t.Errorf("%s (keep-alive %d): %d fresh connections, %d reused, want 3 and %d", h.name, h.keepAlive, fresh, reused, n-3)
	}
	idle(t, s)
	st := Stats(s.AccessLog().Entries())[h.name]
	if st.Requests != n || st.Connections != 3 || st.MaxPerConn != h.keepAlive {
		t.Errorf("%s: stats %+v, want %d requests on 3 connections of %d", h.name, st, n, h.keepAlive)
	}

	// HTTP/1.0 host.
	hi = findHost(t, w, func(h *host) bool { return h.role == RoleHTTP10 })
	h = &w.hosts[hi]
	for k := range 3 {
		resp, body := get(t, c, s.URL(int(h.home)))
		if resp.ProtoMajor != 1 || resp.ProtoMinor != 0 || !resp.Close || resp.StatusCode != 200 {
			t.Fatalf("%s: %s, close %v, status %d", h.name, resp.Proto, resp.Close, resp.StatusCode)
		}
		want, _ := w.newRenderer().body(h.home, 0, s.Addressing())
		if !bytes.Equal(body, want) {
			t.Fatalf("%s: request %d: body differs", h.name, k)
		}
	}
	idle(t, s)
	st = Stats(s.AccessLog().Entries())[h.name]
	if st.Requests != 3 || st.Connections != 3 || st.MaxPerConn != 1 {
		t.Errorf("HTTP/1.0 host %s: %+v", h.name, st)
	}
	// A 404 and a conditional request on the HTTP/1.0 host.
	if resp, _ := get(t, c, "http://"+w.authority(int32(hi), s.Addressing())+"/nope"); resp.StatusCode != 404 || resp.ProtoMinor != 0 {
		t.Errorf("HTTP/1.0 404: %d %s", resp.StatusCode, resp.Proto)
	}
}

// TestConditionalGET checks ETag and Last-Modified validation and that a
// change of version (by moving the clock) invalidates them.
func TestConditionalGET(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	c := client(s)
	id := findPage(t, w, func(id int32, p *page) bool {
		return healthy(w, p) && p.kind == KindLeaf && p.rate > 0.1 && w.hosts[p.host].validators == ValidatorsBoth
	})
	u := s.URL(int(id))
	resp, _ := get(t, c, u)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" || lm == "" {
		t.Fatalf("no validators: %v", resp.Header)
	}
	for _, hdr := range [][]string{
		{"If-None-Match", etag},
		{"If-None-Match", `"other", ` + strings.TrimPrefix(etag, "W/")},
		{"If-None-Match", "*"},
		{"If-Modified-Since", lm},
		{"If-Modified-Since", s.Now().Format(http.TimeFormat)},
	} {
		if resp, body := get(t, c, u, hdr...); resp.StatusCode != 304 || len(body) != 0 || resp.Header.Get("ETag") != etag {
			t.Errorf("%s: %q: status %d, %d bytes", hdr[0], hdr[1], resp.StatusCode, len(body))
		}
	}
	for _, hdr := range [][]string{
		{"If-None-Match", `"other"`},
		{"If-Modified-Since", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)},
		{"If-None-Match", `"other"`, "If-Modified-Since", lm}, // If-None-Match wins
	} {
		if resp, _ := get(t, c, u, hdr...); resp.StatusCode != 200 {
			t.Errorf("%v: status %d, want 200", hdr, resp.StatusCode)
		}
	}
	// After the next change the old validators no longer match.
	next := w.ChangeTimes(int(id), s.Now(), s.Now().AddDate(1, 0, 0))
	if len(next) == 0 {
		t.Fatal("page does not change within a year")
	}
	if err := s.SetClock(next[0].Add(time.Second), 0); err != nil {
		t.Fatal(err)
	}
	resp, _ = get(t, c, u, "If-None-Match", etag)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
		t.Errorf("after a change: status %d, ETag %q (old %q)", resp.StatusCode, resp.Header.Get("ETag"), etag)
	}
	if resp, _ := get(t, c, u, "If-Modified-Since", lm); resp.StatusCode != 200 {
		t.Errorf("after a change, If-Modified-Since the old date: status %d", resp.StatusCode)
	}
	// A host that ignores conditional requests.
	id = findPage(t, w, func(id int32, p *page) bool {
		return healthy(w, p) && p.kind == KindLeaf && w.hosts[p.host].validators == ValidatorsIgnored
	})
	resp, _ = get(t, c, s.URL(int(id)))
	if resp, _ := get(t, c, s.URL(int(id)), "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != 200 {
		t.Errorf("host ignoring validators answered %d", resp.StatusCode)
	}
	idle(t, s)
	entries := s.AccessLog().Entries()
	cond := 0
	for _, e := range entries {
		if e.Conditional {
			cond++
		}
	}
	if cond < 8 {
		t.Errorf("access log marks %d conditional requests", cond)
	}
}

// TestRobotsAndFailures checks robots.txt as served and the failing hosts.
func TestRobotsAndFailures(t *testing.T) {
	w := newWeb(t, Config{Seed: 9, Hosts: 200, Pages: 8000, Hazards: HazardsDefault})
	s := serve(t, w, ServeOptions{})
	c := client(s)
	seen := map[int]int{}
	for hi := range w.regular {
		h := &w.hosts[hi]
		if h.role == RoleSlow || h.role == RoleFlaky {
			continue
		}
		base := "http://" + w.authority(int32(hi), s.Addressing())
		resp, body := get(t, c, base+"/robots.txt")
		seen[resp.StatusCode]++
		if resp.StatusCode != h.robots.status {
			t.Fatalf("%s: robots.txt status %d, want %d", h.name, resp.StatusCode, h.robots.status)
		}
		switch resp.StatusCode {
		case 200:
			if string(body) != h.robots.body || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Fatalf("%s: robots.txt %q, want %q", h.name, body, h.robots.body)
			}
		case 301:
			if loc := resp.Header.Get("Location"); loc != robotsTarget {
				t.Fatalf("%s: robots.txt redirects to %q", h.name, loc)
			}
			if _, b := get(t, c, base+robotsTarget); string(b) != h.robots.body {
				t.Fatalf("%s: %s is %q", h.name, robotsTarget, b)
			}
		case 503:
			if h.role != RoleDown || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("%s: robots 503 on a %v host", h.name, h.role)
			}
		}
	}
	if seen[200] == 0 || seen[404] == 0 || seen[301] == 0 || seen[503] == 0 {
		t.Errorf("robots statuses seen: %v", seen)
	}
	// Down host: 503 everywhere.
	hi := findHost(t, w, func(h *host) bool { return h.role == RoleDown })
	if resp, _ := get(t, c, s.URL(int(w.hosts[hi].home))); resp.StatusCode != 503 || resp.Header.Get("Retry-After") != retryAfter {
		t.Errorf("down host: %d", resp.StatusCode)
	}
	// Broken pages: 500.
	id := findPage(t, w, func(id int32, p *page) bool { return p.flags&flagBroken != 0 })
	if resp, _ := get(t, c, s.URL(int(id))); resp.StatusCode != 500 {
		t.Errorf("broken page: %d", resp.StatusCode)
	}
	// Flaky host: on an outage day 503; on a good day some requests reset.
	hi = findHost(t, w, func(h *host) bool { return h.role == RoleFlaky })
	h := &w.hosts[hi]
	var outageDay, goodDay = -1, -1
	for d := 0; d < 100 && (outageDay < 0 || goodDay < 0); d++ {
		if unit(hash3(w.cfg.Seed, sFailure, uint64(hi), uint64(d))) < outageShare {
			outageDay = max(outageDay, d)
		} else if goodDay < 0 {
			goodDay = d
		}
	}
	s.SetClock(w.cfg.Epoch.Add(time.Duration(outageDay)*24*time.Hour+time.Hour), 0)
	if resp, _ := get(t, c, s.URL(int(h.home))); resp.StatusCode != 503 {
		t.Errorf("flaky host on an outage day: %d", resp.StatusCode)
	}
	s.SetClock(w.cfg.Epoch.Add(time.Duration(goodDay)*24*time.Hour+time.Hour), 0)
	resets, oks := 0, 0
	for _, id := range h.rank {
		_, err := c.Get(s.URL(int(id)))
		switch {
		case err == nil:
			oks++
		case isReset(err):
			resets++
		default:
			t.Fatalf("flaky host: %v", err)
		}
	}
	t.Logf("flaky host %s on a good day: %d ok, %d reset", h.name, oks, resets)
	if oks == 0 || (resets == 0 && len(h.rank) >= 60) {
		t.Errorf("flaky host: %d ok, %d reset of %d", oks, resets, len(h.rank))
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF"))
}

// TestRedirectLimits checks that the loop and the chain defeat a client
// that follows redirects.
func TestRedirectLimits(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	c := client(s)
	c.CheckRedirect = nil // Go's default: at most 10 redirects
	for _, id := range []int32{w.special.loop, w.special.chain} {
		_, err := c.Get(s.URL(int(id)))
		if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
			t.Errorf("%s: err = %v, want too many redirects", w.pages[id].path, err)
		}
	}
	// A relative Location resolves to the target.
	id := findPage(t, w, func(id int32, p *page) bool { return p.flags&flagRelLocation != 0 && healthy(w, p) })
	resp, _ := get(t, client(s), s.URL(int(id)))
	if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "http") || !strings.HasPrefix(loc, "/") {
		t.Errorf("relative Location %q", loc)
	}
	resp, err := c.Get(s.URL(int(id)))
	if err != nil || resp.StatusCode != 200 || resp.Request.URL.String() != s.URL(int(w.pages[id].target)) {
		t.Errorf("following %s: %v, %v", s.URL(int(id)), resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestClockControl drives the simulated clock over the control endpoint.
func TestClockControl(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	c := &http.Client{Timeout: 10 * time.Second}
	ctl := "http://" + s.HTTPAddr() + "/_simweb/clock"
	var st struct {
		Now      string  `json:"now"`
		Speed    float64 `json:"speed"`
		External bool    `json:"external"`
	}
	decode := func(resp *http.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%d: %s", resp.StatusCode, b)
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
	}
	decode(c.Get(ctl))
	if st.Now != w.cfg.Epoch.Format(time.RFC3339Nano) || st.Speed != 0 {
		t.Fatalf("initial clock %+v", st)
	}
	target := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	decode(c.Post(ctl+"?t="+url.QueryEscape(target.Format(time.RFC3339)), "", nil))
	if !s.Now().Equal(target) || st.Now != target.Format(time.RFC3339Nano) {
		t.Fatalf("after POST: %v, %+v", s.Now(), st)
	}
	decode(c.Post(ctl+"?advance=1.5d", "", nil))
	if want := target.Add(36 * time.Hour); !s.Now().Equal(want) {
		t.Fatalf("after advance: %v, want %v", s.Now(), want)
	}
	for _, bad := range []string{"?t=yesterday", "?advance=soon", "?speed=-1"} {
		resp, err := c.Post(ctl+bad, "", nil)
		if err != nil || resp.StatusCode != 400 {
			t.Errorf("POST %s: %v %v", bad, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	// The control host name works too, and the access log is served.
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.HTTPAddr()+"/_simweb/accesslog", nil)
	req.Host = ControlHost
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(bytes.Split(bytes.TrimSpace(b), []byte("\n"))) < 5 {
		t.Errorf("access log over HTTP: %d, %q", resp.StatusCode, b)
	}
	resp, err = c.Get("http://" + s.HTTPAddr() + "/_simweb/seeds")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := strings.Fields(string(b)); len(got) != w.regular || got[0] != s.Seeds()[0] {
		t.Errorf("seeds: %d lines, first %q", len(got), got[0])
	}
	// A running clock.
	if err := s.SetClock(target, 3600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond) // any real time passing moves it 3600 times as far
	if !s.Now().After(target) {
		t.Errorf("clock at speed 3600 did not move: %v", s.Now())
	}
	// An external clock cannot be set.
	ext := serve(t, w, ServeOptions{Clock: func() time.Time { return target }})
	resp, err = c.Post("http://"+ext.HTTPAddr()+"/_simweb/clock?t=2026-01-01T00:00:00Z", "", nil)
	if err != nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("setting an external clock: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if !ext.Now().Equal(target) || ext.SetClock(target, 0) == nil {
		t.Errorf("external clock: %v", ext.Now())
	}
}

// TestAccessLog checks the recorded fields, the JSON-lines stream, the
// Parquet export and the bound.
func TestAccessLog(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	var jsonl bytes.Buffer
	var mu sync.Mutex
	s, err := w.Serve(context.Background(), ServeOptions{AccessLogLimit: 10, AccessLogJSONL: lockedWriter{&mu, &jsonl}})
	if err != nil {
		t.Fatal(err)
	}
	c := client(s)
	hi := findHost(t, w, func(h *host) bool { return h.role == RoleNormal && h.content >= 20 })
	h := &w.hosts[hi]
	for _, id := range h.rank[:15] {
		req, _ := http.NewRequest(http.MethodGet, s.URL(int(id)), nil)
		req.Header.Set("User-Agent", "trawl-test/1.0")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	log := s.AccessLog()
	es := log.Entries()
	if len(es) != 10 || log.Len() != 15 || log.Dropped() != 5 || es[0].Seq != 6 || es[9].Seq != 15 {
		t.Fatalf("bounded log: %d entries, len %d, dropped %d, seqs %d..%d", len(es), log.Len(), log.Dropped(), es[0].Seq, es[len(es)-1].Seq)
	}
	if got := log.Since(12); len(got) != 3 || got[0].Seq != 13 {
		t.Fatalf("Since(12): %d entries", len(got))
	}
	for i, e := range es {
		id := h.rank[5+i]
		if e.Host != h.name || e.Path != w.pages[id].path || e.Method != "GET" || e.Status != 200 || e.Page != id ||
			e.Version != 0 || e.UserAgent != "trawl-test/1.0" || e.Conn == 0 || e.ConnRequest < 1 || e.Bytes <= 0 ||
			e.End.Before(e.Start) || !e.Sim.Equal(w.cfg.Epoch) || !strings.HasPrefix(e.Remote, "127.0.0.1:") {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	lines := strings.Split(strings.TrimSpace(jsonl.String()), "\n")
	mu.Unlock()
	if len(lines) != 15 {
		t.Fatalf("JSON lines: %d", len(lines))
	}
	var a Access
	if err := json.Unmarshal([]byte(lines[14]), &a); err != nil || a.Seq != 15 || a.Path != es[9].Path {
		t.Fatalf("last JSON line %q: %+v %v", lines[14], a, err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := log.WriteParquet(&buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "access.parquet")
	fsys := storage.NewLocal()
	if err := storage.WriteFileAtomic(fsys, p, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[Access](fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || rows[3].Path != es[3].Path || !rows[3].Start.Equal(es[3].Start.Truncate(time.Microsecond)) {
		t.Fatalf("Parquet access log: %d rows, %+v", len(rows), rows[3])
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestStats(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s, e int) (time.Time, time.Time) {
		return t0.Add(time.Duration(s) * time.Millisecond), t0.Add(time.Duration(e) * time.Millisecond)
	}
	mk := func(host string, conn uint64, s, e int) Access {
		a := Access{Host: host, Conn: conn}
		a.Start, a.End = at(s, e)
		return a
	}
	st := Stats([]Access{
		mk("a", 1, 0, 100), mk("a", 1, 300, 350), mk("a", 2, 320, 400), mk("a", 2, 1000, 1100),
		mk("b", 3, 0, 10), mk("", 4, 0, 10),
	})
	a := st["a"]
	if a.Requests != 4 || a.Connections != 2 || a.MaxConcurrent != 2 || a.MinGap != 0 || a.MaxPerConn != 2 {
		t.Errorf("a: %+v", a)
	}
	if b := st["b"]; b.Requests != 1 || b.MinGap != -1 || b.MaxConcurrent != 1 {
		t.Errorf("b: %+v", b)
	}
	if len(st) != 2 {
		t.Errorf("hosts: %v", st)
	}
	st = Stats([]Access{mk("c", 1, 0, 100), mk("c", 1, 1100, 1200), mk("c", 1, 2500, 2600)})
	if c := st["c"]; c.MinGap != time.Second || c.MaxConcurrent != 1 {
		t.Errorf("c: %+v", c)
	}
}

func TestServeRejectsNonLoopback(t *testing.T) {
	w := newWeb(t, Config{Seed: 1, Hosts: 2, Pages: 4})
	for _, o := range []ServeOptions{{HTTPAddr: "0.0.0.0:0"}, {HTTPAddr: ":0"}, {DNSAddr: "8.8.8.8:53"}, {HTTPAddr: "localhost:0"}, {Latency: -1}} {
		if s, err := w.Serve(context.Background(), o); err == nil {
			s.Close()
			t.Errorf("Serve(%+v) succeeded", o)
		}
	}
}

func TestServeStopsWithContext(t *testing.T) {
	w := newWeb(t, Config{Seed: 1, Hosts: 2, Pages: 4})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := w.Serve(ctx, ServeOptions{DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Close waits for the shutdown the context started.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", s.HTTPAddr(), time.Second); err == nil {
		t.Error("listener still accepting after the context ended")
	}
}

func BenchmarkServe(b *testing.B) {
	w := newWeb(b, Config{Seed: 1, Hosts: 100, Pages: 5000})
	s := serve(b, w, ServeOptions{AccessLogLimit: 1 << 16})
	var urls []string
	for id := range w.pages {
		if p := &w.pages[id]; p.kind.IsContent() && healthy(w, p) && w.hosts[p.host].keepAlive == 0 {
			urls = append(urls, s.URL(id))
		}
	}
	c := client(s)
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	var bytesRead int64
	var mu sync.Mutex
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		var n int64
		for pb.Next() {
			resp, err := c.Get(urls[i%len(urls)])
			if err != nil {
				b.Error(err)
				return
			}
			k, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			n += k
			i += 7
		}
		mu.Lock()
		bytesRead += n
		mu.Unlock()
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(bytesRead)/float64(b.N), "bytes/req")
}

// TestConnectLatency checks that a connection's cost is added to its first
// response only, and to every response of an HTTP/1.0 host.
func TestConnectLatency(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{Latency: 0.1, ConnectLatency: 3})
	c := client(s)
	ka := findHost(t, w, func(h *host) bool { return h.role == RoleNormal && h.keepAlive >= 3 })
	h10 := findHost(t, w, func(h *host) bool { return h.role == RoleHTTP10 })
	for _, hi := range []int{ka, h10} {
		for range 3 {
			get(t, c, s.URL(int(w.hosts[hi].home)))
		}
	}
	idle(t, s)
	n := 0
	for _, a := range s.AccessLog().Entries() {
		var h *host
		switch a.Host {
		case w.hosts[ka].name:
			h = &w.hosts[ka]
		case w.hosts[h10].name:
			h = &w.hosts[h10]
		default:
			continue
		}
		n++
		base := float64(h.latency) * 0.1
		lo, hi := 0.7*base, 1.3*base
		if a.ConnRequest == 1 {
			lo, hi = 0.7*4*base, 1.3*4*base
		}
		if d := float64(a.Delay); d < lo || d > hi {
			t.Errorf("%s request %d on its connection: delay %v, want in [%v, %v]", a.Host, a.ConnRequest, a.Delay, time.Duration(lo), time.Duration(hi))
		}
		if a.Host == w.hosts[h10].name && a.ConnRequest != 1 {
			t.Errorf("HTTP/1.0 host answered request %d on one connection", a.ConnRequest)
		}
	}
	if n != 6 {
		t.Fatalf("%d access-log entries for the two hosts, want 6", n)
	}
	if _, err := w.Serve(context.Background(), ServeOptions{ConnectLatency: -1}); err == nil {
		t.Error("negative ConnectLatency accepted")
	}
}
