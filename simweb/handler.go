package simweb

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Server behaviour knobs.
const (
	slowBytesPerSec = 16 << 10 // body rate of slow hosts
	outageShare     = 0.25     // simulated days a flaky host is down
	flakyResetShare = 0.05     // requests a flaky host resets on a good day
	retryAfter      = "3600"
	serverName      = "simweb"
)

// response is what a request gets, built before it is written.
type response struct {
	status  int
	header  http.Header
	body    []byte
	stream  func(ctx context.Context, w io.Writer) error // instead of body
	length  int64                                        // Content-Length, -1 if unknown
	page    int32
	version int32
	outcome string
	reset   bool
	release func() // returns the renderer holding body
}

func newResponse(status int) *response {
	return &response{status: status, header: make(http.Header), length: -1, page: -1, version: -1}
}

func (r *response) setBody(contentType string, body []byte) *response {
	if contentType != "" {
		r.header.Set("Content-Type", contentType)
	}
	r.body = body
	r.length = int64(len(body))
	return r
}

// countingWriter counts the status and body bytes written.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the Flusher and Hijacker.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// ServeHTTP answers one request for any host of the web: it resolves the
// host (or a control endpoint), lets a hostile host misbehave, checks the
// method, waits the host's latency, then builds and writes the response.
// Every request is logged in the access log.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	ci, _ := r.Context().Value(connKey{}).(*connInfo)
	if ci == nil {
		ci = &connInfo{}
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	n := ci.reqs.Add(1)
	sim := s.clock.now()
	cw := &countingWriter{ResponseWriter: rw}
	a := newAccess(r, ci, n, sim)
	defer s.logAccess(&a, cw)
	defer s.recoverPanic(r, &a)

	hi := s.hostFor(ci, r.Host)
	if hi < 0 {
		s.noHost(cw, r)
		return
	}
	h := &s.web.hosts[hi]
	a.Host = h.name
	if h.keepAlive > 0 && int(n) >= h.keepAlive {
		cw.Header().Set("Connection", "close")
	}
	cw.Header().Set("Server", serverName)
	switch h.role {
	case RoleBlackhole, RoleTrickle, RoleSlowHeaders, RoleReset:
		s.hostile(cw, r, h, &a)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		cw.Header().Set("Allow", "GET, HEAD")
		http.Error(cw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.wait(r, h, ci.id, n, &a) {
		a.Outcome = "aborted"
		return
	}
	s.answer(cw, r, hi, sim, &a)
}

// newAccess starts the access-log entry of request r, the n-th on
// connection ci, answered at simulated time sim.
func newAccess(r *http.Request, ci *connInfo, n int32, sim time.Time) Access {
	return Access{
		Start: time.Now(), Sim: sim, HostHeader: r.Host, Method: r.Method, Path: r.RequestURI,
		Conn: ci.id, ConnRequest: n, Remote: ci.remote, Local: ci.local.String(), UserAgent: r.UserAgent(),
		Conditional: r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "",
		Page:        -1, Version: -1, Status: -1,
	}
}

// logAccess completes a (deferred to the end of the request) with what
// cw wrote, unless the handler set the status itself, and logs it.
func (s *Server) logAccess(a *Access, cw *countingWriter) {
	a.End = time.Now()
	if a.Status < 0 {
		a.Status, a.Bytes = int32(cw.status), cw.n
	}
	s.access.add(*a)
}

// recoverPanic, deferred, turns a panic of the handler into an aborted
// response and an access-log outcome. A bug must not take the server
// down; net/http would recover too, but the access log should say what
// happened.
func (s *Server) recoverPanic(r *http.Request, a *Access) {
	if p := recover(); p != nil {
		s.log.Error("simweb: panic serving request", "host", r.Host, "path", r.URL.Path, "panic", p)
		a.Outcome = "panic"
		panic(http.ErrAbortHandler)
	}
}

// noHost answers a request for no host of the web: the control endpoints
// under /_simweb, else 404.
func (s *Server) noHost(cw *countingWriter, r *http.Request) {
	if r.URL.Path == "/_simweb" || strings.HasPrefix(r.URL.Path, "/_simweb/") {
		s.control(cw, r)
		return
	}
	http.Error(cw, "simweb: no such host "+r.Host, http.StatusNotFound)
}

// wait delays the n-th request on connection conn to host h by the host's
// latency (scaled by ServeOptions.Latency, except on slow hosts), plus the
// connection's cost on its first request, with ±30% jitter, and records
// the delay in a. It reports false if the request or the server ended
// first.
func (s *Server) wait(r *http.Request, h *host, conn uint64, n int32, a *Access) bool {
	delay := time.Duration(float64(h.latency) * s.opts.Latency)
	if h.role == RoleSlow {
		delay = h.latency
	}
	if n == 1 {
		// The connection's handshakes (ServeOptions.ConnectLatency).
		delay += time.Duration(float64(h.latency) * s.opts.Latency * s.opts.ConnectLatency)
	}
	if delay <= 0 {
		return true
	}
	// ±30% jitter, a function of the connection and request number.
	j := unit(hash3(s.web.cfg.Seed, sFailure, conn, uint64(n)))
	delay = time.Duration(float64(delay) * (0.7 + 0.6*j))
	a.Delay = delay
	return s.sleep(r.Context(), delay)
}

// answer builds the response of host hi at simulated time sim and sends
// it: a reset, an HTTP/1.0 response, or through net/http (throttled on
// slow hosts).
func (s *Server) answer(cw *countingWriter, r *http.Request, hi int32, sim time.Time, a *Access) {
	h := &s.web.hosts[hi]
	resp := s.respond(hi, r, sim)
	if resp.release != nil {
		defer resp.release()
	}
	a.Page, a.Version = resp.page, resp.version
	if resp.outcome != "" {
		a.Outcome = resp.outcome
	}
	switch {
	case resp.reset:
		a.Outcome, a.Status = "reset", 0
		if err := resetConn(cw); err != nil {
			s.log.Debug("simweb: reset", "host", h.name, "err", err)
		}
	case h.role == RoleHTTP10:
		s.writeHTTP10(cw, r, resp, h, a)
	default:
		s.write(cw, r, resp, h.role == RoleSlow, a)
	}
}

// hostFor finds the host a request is for: with IPPerHost by the local
// address it came in on, else by the Host header (a name, or a host's
// IP literal). -1 if none.
func (s *Server) hostFor(ci *connInfo, hostHeader string) int32 {
	if s.addr.IPPerHost && ci.local.IsValid() {
		if hi, ok := s.ipHost[ci.local.Addr()]; ok {
			return hi
		}
	}
	name := canonicalHost(hostHeader)
	if hi, ok := s.web.byName[name]; ok {
		return hi
	}
	if ip, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		if hi, ok := s.ipHost[ip]; ok {
			return hi
		}
	}
	return -1
}

// write sends resp through net/http.
func (s *Server) write(cw *countingWriter, r *http.Request, resp *response, slow bool, a *Access) {
	hdr := cw.Header()
	for k, v := range resp.header {
		hdr[k] = v
	}
	if resp.length >= 0 && resp.status != http.StatusNotModified {
		hdr.Set("Content-Length", strconv.FormatInt(resp.length, 10))
	}
	cw.WriteHeader(resp.status)
	if r.Method == http.MethodHead || resp.status == http.StatusNotModified {
		return
	}
	var err error
	switch {
	case resp.stream != nil:
		err = resp.stream(r.Context(), cw)
	case slow:
		err = s.throttle(r.Context(), cw, resp.body, slowBytesPerSec)
	default:
		_, err = cw.Write(resp.body)
	}
	if err != nil {
		a.Outcome = "aborted"
	}
}

// throttle writes body at about rate bytes per second.
func (s *Server) throttle(ctx context.Context, cw *countingWriter, body []byte, rate int) error {
	const chunk = 1024
	rc := http.NewResponseController(cw)
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := cw.Write(body[:n]); err != nil {
			return err
		}
		_ = rc.Flush()
		body = body[n:]
		if len(body) > 0 && !s.sleep(ctx, time.Duration(n)*time.Second/time.Duration(rate)) {
			return context.Canceled
		}
	}
	return nil
}

// writeHTTP10 answers like an HTTP/1.0 server: "HTTP/1.0" status line,
// Connection: close, the connection closed after the response, and on
// half of these hosts no Content-Length (the body ends at the close).
func (s *Server) writeHTTP10(cw *countingWriter, r *http.Request, resp *response, h *host, a *Access) {
	conn, brw, err := http.NewResponseController(cw).Hijack()
	if err != nil {
		s.write(cw, r, resp, false, a)
		return
	}
	defer conn.Close()
	a.Outcome = "http10"
	a.Status = int32(resp.status)
	bw := brw.Writer
	fmt.Fprintf(bw, "HTTP/1.0 %d %s\r\n", resp.status, http.StatusText(resp.status))
	fmt.Fprintf(bw, "Date: %s\r\nServer: %s (HTTP/1.0)\r\n", time.Now().UTC().Format(http.TimeFormat), serverName)
	keys := make([]string, 0, len(resp.header))
	for k := range resp.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range resp.header[k] {
			fmt.Fprintf(bw, "%s: %s\r\n", k, v)
		}
	}
	omitLength := hashString(h.name)&1 == 0
	body := resp.body
	if resp.stream != nil {
		var sb strings.Builder
		_ = resp.stream(context.Background(), &sb) // only small streams reach HTTP/1.0 hosts
		body = []byte(sb.String())
	}
	if !omitLength && resp.status != http.StatusNotModified {
		fmt.Fprintf(bw, "Content-Length: %d\r\n", len(body))
	}
	bw.WriteString("Connection: close\r\n\r\n")
	if r.Method != http.MethodHead && resp.status != http.StatusNotModified {
		n, _ := bw.Write(body)
		a.Bytes = int64(n)
	}
	if err := bw.Flush(); err != nil {
		a.Outcome = "aborted"
	}
}

func hashString(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64()
}

// resetConn makes the kernel send RST: linger 0, then close.
func resetConn(w http.ResponseWriter) error {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return fmt.Errorf("hijack: %w", err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return conn.Close()
}

// respond builds the response for a GET or HEAD to host hi at simulated
// time sim.
func (s *Server) respond(hi int32, r *http.Request, sim time.Time) *response {
	w := s.web
	h := &w.hosts[hi]
	path := r.URL.Path
	switch h.role {
	case RoleDown:
		resp := newResponse(http.StatusServiceUnavailable).setBody("text/html", []byte(errorPage(503)))
		resp.header.Set("Retry-After", retryAfter)
		return resp
	case RoleFlaky:
		day := uint64(max(int64(sim.Sub(w.cfg.Epoch)/(24*time.Hour)), 0))
		if unit(hash3(w.cfg.Seed, sFailure, uint64(hi), day)) < outageShare {
			resp := newResponse(http.StatusServiceUnavailable).setBody("text/html", []byte(errorPage(503)))
			resp.header.Set("Retry-After", retryAfter)
			resp.outcome = "outage"
			return resp
		}
		if path != "/robots.txt" && unit(hash4(w.cfg.Seed, sFailure, uint64(hi), hashString(path), day)) < flakyResetShare {
			return &response{reset: true, page: -1, version: -1}
		}
	}
	switch {
	case path == "/robots.txt":
		return s.robots(h)
	case path == robotsTarget && h.robots.status == http.StatusMovedPermanently:
		return newResponse(http.StatusOK).setBody("text/plain; charset=utf-8", []byte(h.robots.body))
	case strings.HasPrefix(path, "/img/"):
		return s.image(hi, path)
	case w.special.trap >= 0 && w.pages[w.special.trap].host == hi && strings.HasPrefix(path, "/calendar/"):
		return s.trap(hi, path, sim)
	}
	id, ok := h.paths[path]
	if !ok {
		return newResponse(http.StatusNotFound).setBody("text/html", []byte(errorPage(404)))
	}
	p := &w.pages[id]
	switch p.kind {
	case KindHome, KindDirectory, KindLeaf, KindDocument:
		if p.flags&flagBroken != 0 {
			return newResponse(http.StatusInternalServerError).setBody("text/html", []byte(errorPage(500)))
		}
		return s.content(id, r, sim)
	case KindRedirect, KindLoop:
		resp := newResponse(int(p.status))
		t := &w.pages[p.target]
		loc := w.URL(int(p.target), s.addr)
		if p.flags&flagRelLocation != 0 && t.host == p.host {
			loc = t.path
		}
		resp.header.Set("Location", loc)
		resp.setBody("text/html", []byte(`<!DOCTYPE html><html><head><title>Moved</title></head><body><p>Moved to <a href="`+loc+`">`+loc+"</a></p></body></html>\n"))
		resp.page = id
		return resp
	case KindHuge:
		resp := s.huge(id)
		resp.page = id
		return resp
	case KindBomb:
		resp := s.gzipBomb()
		resp.page = id
		return resp
	}
	resp := newResponse(http.StatusNotFound).setBody("text/html", []byte(errorPage(404)))
	resp.page = id
	return resp
}

func errorPage(code int) string {
	t := strconv.Itoa(code) + " " + http.StatusText(code)
	return "<!DOCTYPE html><html><head><title>" + t + "</title></head><body><h1>" + t + "</h1></body></html>\n"
}

// content answers a content page: its version at sim, validators,
// conditional requests.
func (s *Server) content(id int32, r *http.Request, sim time.Time) *response {
	w := s.web
	p := &w.pages[id]
	h := &w.hosts[p.host]
	v, lm := w.version(id, sim)
	lm = lm.Truncate(time.Second)
	etag := fmt.Sprintf(`"%016x"`, hash3(w.cfg.Seed, sRender, uint64(id), uint64(v)+1<<40))
	if h.weakETag {
		etag = "W/" + etag
	}
	sendLM := h.validators == ValidatorsBoth || h.validators == ValidatorsLastMod || h.validators == ValidatorsIgnored
	sendETag := h.validators == ValidatorsBoth || h.validators == ValidatorsETag || h.validators == ValidatorsIgnored
	resp := newResponse(http.StatusOK)
	resp.page, resp.version = id, int32(v)
	if sendLM {
		resp.header.Set("Last-Modified", lm.UTC().Format(http.TimeFormat))
	}
	if sendETag {
		resp.header.Set("ETag", etag)
	}
	if h.validators != ValidatorsIgnored {
		inm := r.Header.Get("If-None-Match")
		switch {
		case inm != "":
			if sendETag && etagMatch(inm, etag) {
				resp.status = http.StatusNotModified
				return resp
			}
		case sendLM:
			if ims := r.Header.Get("If-Modified-Since"); ims != "" {
				if t, err := http.ParseTime(ims); err == nil && !lm.After(t) {
					resp.status = http.StatusNotModified
					return resp
				}
			}
		}
	}
	rd := s.renderers.Get().(*renderer)
	body, _ := rd.body(id, v, s.addr)
	resp.release = func() { s.renderers.Put(rd) }
	ct := p.contentType()
	if p.kind != KindDocument && p.flags&flagCharsetHead != 0 {
		ct += "; charset=" + charsetName(p.enc)
	}
	return resp.setBody(ct, body)
}

// etagMatch applies the weak comparison of If-None-Match (RFC 9110 13.1.2).
func etagMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// robots answers /robots.txt.
func (s *Server) robots(h *host) *response {
	switch h.robots.status {
	case http.StatusOK:
		return newResponse(http.StatusOK).setBody("text/plain; charset=utf-8", []byte(h.robots.body))
	case http.StatusMovedPermanently:
		resp := newResponse(http.StatusMovedPermanently).setBody("text/html", []byte(errorPage(301)))
		resp.header.Set("Location", robotsTarget)
		return resp
	}
	return newResponse(h.robots.status).setBody("text/html", []byte(errorPage(h.robots.status)))
}

// hostile serves the hostile hosts.
func (s *Server) hostile(cw *countingWriter, r *http.Request, h *host, a *Access) {
	rc := http.NewResponseController(cw)
	switch h.role {
	case RoleBlackhole:
		a.Outcome, a.Status = "blackhole", 0
		select {
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		// Close without a word: returning would make net/http send 200.
		if conn, _, err := rc.Hijack(); err == nil {
			conn.Close()
		}
	case RoleReset:
		a.Outcome, a.Status = "reset", 0
		if err := resetConn(cw); err != nil {
			s.log.Debug("simweb: reset", "host", h.name, "err", err)
		}
	case RoleTrickle:
		a.Outcome = "trickle"
		body := trickleBody(h.name)
		cw.Header().Set("Content-Type", "text/html")
		cw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		cw.WriteHeader(http.StatusOK)
		_ = rc.Flush()
		if r.Method == http.MethodHead {
			return
		}
		for i := range len(body) {
			if !s.sleep(r.Context(), time.Second) {
				a.Outcome = "aborted"
				return
			}
			if _, err := cw.Write([]byte{body[i]}); err != nil {
				a.Outcome = "aborted"
				return
			}
			_ = rc.Flush()
		}
	case RoleSlowHeaders:
		a.Outcome = "slowheaders"
		conn, _, err := rc.Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		body := trickleBody(h.name)
		raw := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		a.Status = 200
		for i := range len(raw) {
			if _, err := conn.Write([]byte{raw[i]}); err != nil {
				a.Outcome = "aborted"
				return
			}
			if !s.sleep(context.Background(), time.Second) {
				a.Outcome = "aborted"
				return
			}
		}
		a.Bytes = int64(len(body))
	}
}

func trickleBody(name string) string {
	return "<!DOCTYPE html><html><head><title>" + name + "</title></head><body><p>This page arrives one byte per second.</p></body></html>\n"
}
