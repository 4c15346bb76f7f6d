package simweb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// ServeOptions configures Serve.
type ServeOptions struct {
	// HTTPAddr is the main HTTP listener's address (default
	// "127.0.0.1:0"). It serves every host by Host header, and the control
	// endpoints. It must be a loopback address.
	HTTPAddr string
	// DNSAddr is the DNS server's address, UDP and TCP on the same port
	// ("" for no DNS server; "127.0.0.1:0" picks a port). Loopback only.
	DNSAddr string
	// IPPerHost also serves each host on its own loopback address
	// 127.0.x.y, on the port of HTTPAddr; URLs then name hosts by address,
	// and DNS answers with it. Linux routes all of 127.0.0.0/8 to the
	// loopback interface, so no setup is needed.
	IPPerHost bool
	// Latency scales every host's latency (0: none, 1: as generated).
	// Slow hosts stay slow whatever the scale: that is their hazard.
	Latency float64
	// ConnectLatency is what opening a connection costs, as a multiple of
	// the host's (scaled) latency: the first response on every connection
	// is delayed by that much more, as TCP's and TLS's handshakes delay a
	// real server's first response by a round trip or more each (0: none,
	// loopback's own cost only). It is what HTTP keep-alive saves: a
	// client that reuses connections pays it once per connection, one
	// that does not (and every request to an HTTP/1.0 host) pays it per
	// request.
	ConnectLatency float64
	// Start is the simulated time when serving starts (default the
	// epoch); Speed the simulated seconds per real second (default 0: the
	// clock stands still until set). The control endpoint
	// POST /_simweb/clock changes both.
	Start time.Time
	Speed float64
	// Clock, if set, is the simulated clock instead (and the control
	// endpoint cannot set it).
	Clock func() time.Time
	// AccessLogLimit is the number of access-log entries kept in memory
	// (default DefaultAccessLogLimit); DNS queries are kept the same way.
	AccessLogLimit int
	// AccessLogJSONL, if set, receives every access-log entry as a JSON
	// line (flushed on Close).
	AccessLogJSONL io.Writer
	// Logger receives server errors (default slog.Default()).
	Logger *slog.Logger
}

// Server serves a Web over HTTP (and DNS) on loopback. Close stops it.
type Server struct {
	web    *Web
	opts   ServeOptions
	addr   Addressing
	log    *slog.Logger
	clock  simClock
	access *AccessLog
	dnsLog *dnsLog

	httpSrv   *http.Server
	listeners []net.Listener
	mainAddr  string
	dnsAddr   string
	dnsSrvs   []*dns.Server
	ipHost    map[netip.Addr]int32
	connSeq   atomic.Uint64
	inflight  atomic.Int64 // requests in handlers
	renderers sync.Pool
	bomb      func() (*gzipBomb, error)

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Serve starts serving w: an HTTP listener for all hosts (and, with
// IPPerHost, one per host), and a DNS server if DNSAddr is set. It returns
// once every listener is bound. The server stops when ctx is done or Close
// is called.
func (w *Web) Serve(ctx context.Context, opts ServeOptions) (*Server, error) {
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Start.IsZero() {
		opts.Start = w.cfg.Epoch
	}
	if opts.Latency < 0 {
		return nil, fmt.Errorf("simweb: serve: Latency = %v, want >= 0", opts.Latency)
	}
	if opts.ConnectLatency < 0 {
		return nil, fmt.Errorf("simweb: serve: ConnectLatency = %v, want >= 0", opts.ConnectLatency)
	}
	for _, a := range []string{opts.HTTPAddr, opts.DNSAddr} {
		if a == "" {
			continue
		}
		if err := checkLoopback(a); err != nil {
			return nil, err
		}
	}
	s := &Server{web: w, opts: opts, log: opts.Logger,
		access: newAccessLog(opts.AccessLogLimit, opts.AccessLogJSONL),
		dnsLog: newDNSLog(opts.AccessLogLimit),
		ipHost: make(map[netip.Addr]int32)}
	s.clock.set(opts.Start, opts.Speed)
	s.clock.external = opts.Clock
	s.renderers.New = func() any { return w.newRenderer() }
	s.bomb = sync.OnceValues(func() (*gzipBomb, error) { return newGzipBomb(bombChunks) })
	for i := range w.hosts {
		if w.hosts[i].role != RoleUnresolvable {
			s.ipHost[w.hosts[i].ip] = int32(i)
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.listen(); err != nil {
		s.cancel()
		return nil, err
	}
	s.httpSrv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnContext:       s.connContext,
		ErrorLog:          log.New(slogWriter{s.log}, "", 0),
	}
	for _, l := range s.listeners {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.httpSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("simweb: http listener stopped", "addr", l.Addr().String(), "err", err)
			}
		}()
	}
	if opts.DNSAddr != "" {
		if err := s.startDNS(opts.DNSAddr); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
			go s.Close()
		case <-s.ctx.Done():
		}
	}()
	return s, nil
}

// checkLoopback rejects addresses that are not loopback IPs.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("simweb: address %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("simweb: address %q is not a loopback IP address (simweb only listens on 127.0.0.0/8 or ::1)", addr)
	}
	return nil
}

// listen binds the main listener and, with IPPerHost, one listener per
// served host on the same port, retrying with a new port if the port is
// taken on some host address (only when HTTPAddr asked for any port).
func (s *Server) listen() error {
	_, portStr, _ := net.SplitHostPort(s.opts.HTTPAddr)
	anyPort := portStr == "0"
	for attempt := 0; ; attempt++ {
		main, err := net.Listen("tcp", s.opts.HTTPAddr)
		if err != nil {
			return fmt.Errorf("simweb: listen %s: %w", s.opts.HTTPAddr, err)
		}
		port := main.Addr().(*net.TCPAddr).Port
		ls := []net.Listener{main}
		var bindErr error
		if s.opts.IPPerHost {
			for i := range s.web.hosts {
				h := &s.web.hosts[i]
				if h.role == RoleUnresolvable {
					continue
				}
				l, err := net.Listen("tcp", netip.AddrPortFrom(h.ip, uint16(port)).String())
				if err != nil {
					bindErr = fmt.Errorf("simweb: listen on %s for %s: %w", h.ip, h.name, err)
					break
				}
				ls = append(ls, l)
			}
		}
		if bindErr == nil {
			s.listeners = ls
			s.mainAddr = main.Addr().String()
			s.addr = Addressing{Port: port, IPPerHost: s.opts.IPPerHost}
			return nil
		}
		for _, l := range ls {
			l.Close()
		}
		if !anyPort || attempt >= 8 || !errors.Is(bindErr, syscall.EADDRINUSE) {
			return bindErr
		}
	}
}

// connInfo is what the server knows about one connection.
type connInfo struct {
	id     uint64
	reqs   atomic.Int32
	local  netip.AddrPort
	remote string
	conn   net.Conn
}

type connKey struct{}

func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	ci := &connInfo{id: s.connSeq.Add(1), remote: c.RemoteAddr().String(), conn: c}
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		ci.local = a.AddrPort()
	}
	return context.WithValue(ctx, connKey{}, ci)
}

// HTTPAddr is the main HTTP listener's address (127.0.0.1:port).
func (s *Server) HTTPAddr() string { return s.mainAddr }

// DNSAddr is the DNS server's address ("" if none).
func (s *Server) DNSAddr() string { return s.dnsAddr }

// Addressing is how this server's URLs name hosts.
func (s *Server) Addressing() Addressing { return s.addr }

// Web is the web being served.
func (s *Server) Web() *Web { return s.web }

// URL is page id's URL as served.
func (s *Server) URL(id int) string { return s.web.URL(id, s.addr) }

// Seeds are the home pages of the regular hosts as served.
func (s *Server) Seeds() []string { return s.web.Seeds(s.addr) }

// HostAddr is the address to connect to for host index i: its own
// 127.0.x.y:port with IPPerHost, else the main listener.
func (s *Server) HostAddr(i int) string {
	if s.addr.IPPerHost {
		return netip.AddrPortFrom(s.web.hosts[i].ip, uint16(s.addr.Port)).String()
	}
	return s.mainAddr
}

// AccessLog is the log of HTTP requests. A request is logged when its
// handler finishes, which can be just after the client has read the whole
// response: call WaitIdle before reading the log to see every request a
// client has completed.
func (s *Server) AccessLog() *AccessLog { return s.access }

// WaitIdle waits until no request is being handled (idle keep-alive
// connections do not count), or until ctx is done.
func (s *Server) WaitIdle(ctx context.Context) error {
	for s.inflight.Load() > 0 {
		t := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("simweb: wait idle: %d requests in flight: %w", s.inflight.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Now is the current simulated time.
func (s *Server) Now() time.Time { return s.clock.now() }

// SetClock sets the simulated time to t, from which it advances at speed
// simulated seconds per real second (0: stands still). It fails if
// ServeOptions.Clock is set.
func (s *Server) SetClock(t time.Time, speed float64) error {
	if s.clock.external != nil {
		return errors.New("simweb: the clock is external (ServeOptions.Clock)")
	}
	if speed < 0 {
		return fmt.Errorf("simweb: clock speed %v, want >= 0", speed)
	}
	s.clock.set(t, speed)
	return nil
}

// Close stops the listeners and the DNS server, ends requests in progress
// (blackholes and trickles included), flushes the JSON-lines access log and
// waits for everything to finish.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		var errs []error
		if s.httpSrv != nil {
			if err := s.httpSrv.Close(); err != nil {
				errs = append(errs, fmt.Errorf("simweb: close http: %w", err))
			}
		} else {
			for _, l := range s.listeners {
				l.Close()
			}
		}
		for _, d := range s.dnsSrvs {
			if err := d.Shutdown(); err != nil {
				errs = append(errs, fmt.Errorf("simweb: close dns: %w", err))
			}
		}
		s.wg.Wait()
		// http.Server.Close does not wait for handlers, whose access-log
		// entries are added as they return; every one of them is ending
		// now (its context and connection are closed), so wait for them,
		// boundedly, before the log is read or flushed.
		for deadline := time.Now().Add(10 * time.Second); s.inflight.Load() > 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if err := s.access.flush(); err != nil {
			errs = append(errs, err)
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// sleep waits d, or until the server closes or ctx is done; it reports
// whether the full time passed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return false
	}
}

// simClock is the simulated clock: base at realBase, advancing at speed.
type simClock struct {
	mu       sync.Mutex
	base     time.Time
	realBase time.Time
	speed    float64
	external func() time.Time
}

func (c *simClock) set(t time.Time, speed float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.realBase, c.speed = t.UTC(), time.Now(), speed
}

func (c *simClock) now() time.Time {
	if c.external != nil {
		return c.external().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.speed == 0 {
		return c.base
	}
	return c.base.Add(time.Duration(float64(time.Since(c.realBase)) * c.speed))
}

func (c *simClock) speedNow() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.speed
}

// slogWriter sends net/http's error log lines to slog at debug level
// (hostile hosts make clients hang up on purpose).
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug("simweb: http: " + string(trimNewline(p)))
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
