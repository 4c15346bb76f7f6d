package resolver

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// server is a real miekg/dns server on loopback (UDP, and TCP on the same
// port) that counts the queries it gets by name.
type server struct {
	addr string
	mu   sync.Mutex
	seen map[string]int // "name type net" -> queries
	all  atomic.Int64
}

// startServer serves handler on 127.0.0.1 over UDP and TCP.
func startServer(t testing.TB, handler func(s *server, w dns.ResponseWriter, m *dns.Msg)) *server {
	t.Helper()
	var pc net.PacketConn
	var l net.Listener
	var err error
	for range 20 { // the TCP port of a free UDP port may be taken
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: pc.LocalAddr().String(), seen: map[string]int{}}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, m *dns.Msg) {
		s.all.Add(1)
		if len(m.Question) == 1 {
			q := m.Question[0]
			s.mu.Lock()
			s.seen[strings.ToLower(q.Name)+" "+dns.TypeToString[q.Qtype]+" "+w.RemoteAddr().Network()]++
			s.mu.Unlock()
		}
		handler(s, w, m)
	})
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: l, Handler: h}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// queries returns the queries seen for name ("a.test.") and type over
// network ("udp" or "tcp").
func (s *server) queries(name, qtype, network string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name+" "+qtype+" "+network]
}

// zone is a small test zone (see zoneHandler).
type zone struct {
	// version changes the address of "v.test." (for refresh tests);
	// vFail makes it SERVFAIL, vGone NXDOMAIN.
	version      atomic.Int32
	vFail, vGone atomic.Bool
	// gate, if not nil, holds answers for "slow.test." until closed.
	gate chan struct{}
	// dropFirst makes the server ignore the first query of each name
	// starting with "flaky".
	dropped sync.Map
}

// handle answers the zone:
//
//	a.test        A 10.0.0.1
//	multi.test    A 10.0.0.2, 10.0.0.3
//	v.test        A 10.1.0.<version>
//	v6.test       AAAA 2001:db8::1 (no A)
//	dual.test     A 10.0.0.9, AAAA 2001:db8::9
//	alias.test    CNAME a.test, with a.test's A in the same answer
//	chain1.test   CNAME chain2.test (alone); chain2.test CNAME a.test (alone)
//	loop1.test    CNAME loop2.test; loop2.test CNAME loop1.test
//	longN.test    CNAME long(N+1).test ... long20.test A 10.0.0.20
//	big.test      60 A records; truncated (TC, no answer) over UDP
//	servfail.test SERVFAIL
//	slow.test     A 10.0.0.5, after gate is closed
//	flaky*.test   A 10.0.0.7, the first query of each name is dropped
//	other names   NXDOMAIN
func (z *zone) handle(_ *server, w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	a := func(owner, ip string) dns.RR {
		return &dns.A{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5},
			A: net.ParseIP(ip).To4()}
	}
	aaaa := func(owner, ip string) dns.RR {
		return &dns.AAAA{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 5},
			AAAA: net.ParseIP(ip)}
	}
	cname := func(owner, target string) dns.RR {
		return &dns.CNAME{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 5},
			Target: target}
	}
	isA, isAAAA := q.Qtype == dns.TypeA, q.Qtype == dns.TypeAAAA
	switch {
	case name == "v.test." && z.vFail.Load():
		m.Rcode = dns.RcodeServerFailure
	case name == "v.test." && z.vGone.Load():
		m.Rcode = dns.RcodeNameError
	case name == "a.test." && isA:
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.1"))
	case name == "multi.test." && isA:
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.2"), a(q.Name, "10.0.0.3"))
	case name == "v.test." && isA:
		m.Answer = append(m.Answer, a(q.Name, netip.AddrFrom4([4]byte{10, 1, 0, byte(z.version.Load())}).String()))
	case name == "v6.test." && isAAAA:
		m.Answer = append(m.Answer, aaaa(q.Name, "2001:db8::1"))
	case name == "dual.test." && isA:
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.9"))
	case name == "dual.test." && isAAAA:
		m.Answer = append(m.Answer, aaaa(q.Name, "2001:db8::9"))
	case name == "alias.test.":
		m.Answer = append(m.Answer, cname(q.Name, "a.test."))
		if isA {
			m.Answer = append(m.Answer, a("a.test.", "10.0.0.1"))
		}
	case name == "chain1.test.":
		m.Answer = append(m.Answer, cname(q.Name, "chain2.test."))
	case name == "chain2.test.":
		m.Answer = append(m.Answer, cname(q.Name, "A.test."))
	case name == "loop1.test.":
		m.Answer = append(m.Answer, cname(q.Name, "loop2.test."), cname("loop2.test.", "loop1.test."))
	case name == "loop2.test.":
		m.Answer = append(m.Answer, cname(q.Name, "loop1.test."))
	case strings.HasPrefix(name, "long") && name != "long20.test.":
		var n int
		for _, c := range strings.TrimSuffix(strings.TrimPrefix(name, "long"), ".test.") {
			n = n*10 + int(c-'0')
		}
		m.Answer = append(m.Answer, cname(q.Name, "long"+itoa(n+1)+".test."))
	case name == "long20.test." && isA:
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.20"))
	case name == "big.test." && isA:
		if w.RemoteAddr().Network() == "udp" {
			m.Truncated = true
			break
		}
		for i := range 60 {
			m.Answer = append(m.Answer, a(q.Name, netip.AddrFrom4([4]byte{10, 2, 0, byte(i + 1)}).String()))
		}
	case name == "servfail.test.":
		m.Rcode = dns.RcodeServerFailure
	case name == "slow.test." && isA:
		if z.gate != nil {
			<-z.gate
		}
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.5"))
	case strings.HasPrefix(name, "flaky") && isA:
		if _, seen := z.dropped.LoadOrStore(name, true); !seen {
			return // dropped
		}
		m.Answer = append(m.Answer, a(q.Name, "10.0.0.7"))
	case name == "a.test." || name == "multi.test." || name == "v.test." || name == "v6.test." ||
		name == "long20.test." || name == "big.test." || name == "slow.test." || strings.HasPrefix(name, "flaky"):
		// NODATA
	default:
		m.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(m)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// blackhole is a UDP socket that reads queries and never answers; it
// counts them.
type blackhole struct {
	addr string
	n    atomic.Int64
}

func startBlackhole(t testing.TB) *blackhole {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{addr: pc.LocalAddr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			b.n.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return b
}

// rawServer is a UDP socket whose replies a function writes.
func startRaw(t testing.TB, answer func(pc net.PacketConn, from net.Addr, query []byte)) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			answer(pc, from, append([]byte(nil), buf[:n]...))
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String()
}

// clock is a settable clock for Config.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newResolver makes a Resolver closed at the test's end (TestMain then
// checks that no goroutine of the package is left).
func newResolver(t testing.TB, cfg Config) *Resolver {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestMain(m *testing.M) {
	code := m.Run()
	if g := leaked(); g != "" && code == 0 {
		fmt.Fprintf(os.Stderr, "goroutines of the resolver left after the tests:\n%s", g)
		code = 1
	}
	os.Exit(code)
}

// leaked returns the stacks of goroutines running the package's non-test
// code, waiting a little for those that are just returning.
func leaked() string {
	var left string
	for range 200 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		left = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			for _, line := range strings.Split(g, "\n") {
				line = strings.TrimSpace(line)
				if strings.Contains(line, "/resolver/") && !strings.Contains(line, "_test.go") && strings.HasPrefix(line, "/") {
					left += g + "\n\n"
					break
				}
			}
		}
		if left == "" {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return left
}

// waitFor polls cond until it holds; it gives up after a minute (a
// guard against hanging, not a timing assertion).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }
