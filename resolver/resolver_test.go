package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/trawl/trawl/simweb"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func mustLookup(t *testing.T, r *Resolver, host string, want ...string) {
	t.Helper()
	got, err := r.LookupNetIP(context.Background(), host)
	if err != nil {
		t.Fatalf("%s: %v", host, err)
	}
	if !slices.Equal(got, addrs(want...)) {
		t.Fatalf("%s: %v, want %v", host, got, want)
	}
}

func TestLookup(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}})
	mustLookup(t, r, "a.test", "10.0.0.1")
	mustLookup(t, r, "multi.test", "10.0.0.2", "10.0.0.3")
	// Case and a final dot do not matter: one cache entry.
	mustLookup(t, r, "A.Test.", "10.0.0.1")
	if n := s.queries("a.test.", "A", "udp"); n != 1 {
		t.Errorf("a.test asked %d times, want 1", n)
	}
	// IP literals and localhost: no query.
	before := s.all.Load()
	mustLookup(t, r, "192.0.2.7", "192.0.2.7")
	mustLookup(t, r, "[2001:db8::5]", "2001:db8::5")
	mustLookup(t, r, "::ffff:10.1.2.3", "10.1.2.3")
	mustLookup(t, r, "localhost", "127.0.0.1")
	mustLookup(t, r, "www.LOCALHOST.", "127.0.0.1")
	if s.all.Load() != before {
		t.Errorf("literals sent %d queries", s.all.Load()-before)
	}
	st := r.Stats()
	if st.Lookups != 3 || st.Hits != 1 || st.Misses != 2 || st.Literals != 5 || st.Queries != 2 {
		t.Errorf("stats %+v", st)
	}
	if st.P50 <= 0 || st.P99 < st.P50 {
		t.Errorf("percentiles %v %v", st.P50, st.P99)
	}
	// Not a domain name.
	_, err := r.LookupNetIP(context.Background(), "bad..name")
	if !errors.Is(err, ErrBadName) {
		t.Errorf("bad..name: %v", err)
	}
	_, err = r.LookupNetIP(context.Background(), strings.Repeat("x", 64)+".test")
	if !errors.Is(err, ErrBadName) {
		t.Errorf("a 64-byte label: %v", err)
	}
}

func TestIPv6(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r4 := newResolver(t, Config{Servers: []string{s.addr}})
	if _, err := r4.LookupNetIP(context.Background(), "v6.test"); !errors.Is(err, ErrNoAddress) {
		t.Errorf("v6.test without IPv6: %v, want ErrNoAddress", err)
	}
	mustLookup(t, r4, "dual.test", "10.0.0.9")
	r6 := newResolver(t, Config{Servers: []string{s.addr}, IPv6: true})
	mustLookup(t, r6, "v6.test", "2001:db8::1")
	mustLookup(t, r6, "dual.test", "10.0.0.9", "2001:db8::9")
	mustLookup(t, r6, "localhost", "127.0.0.1", "::1")
	_, err := r6.LookupNetIP(context.Background(), "nosuch.test")
	var e *Error
	if !errors.As(err, &e) || !e.NotFound() || !errors.Is(err, ErrNotFound) {
		t.Errorf("nosuch.test with IPv6: %v", err)
	}
}

func TestCacheHitMissEviction(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}, CacheSize: 2})
	mustLookup(t, r, "a.test", "10.0.0.1")                 // miss
	mustLookup(t, r, "multi.test", "10.0.0.2", "10.0.0.3") // miss
	mustLookup(t, r, "a.test", "10.0.0.1")                 // hit: a.test is now the most recent
	mustLookup(t, r, "alias.test", "10.0.0.1")             // miss: evicts multi.test
	mustLookup(t, r, "a.test", "10.0.0.1")                 // still cached
	mustLookup(t, r, "multi.test", "10.0.0.2", "10.0.0.3") // evicted: asked again
	if n := s.queries("multi.test.", "A", "udp"); n != 2 {
		t.Errorf("multi.test asked %d times, want 2 (evicted once)", n)
	}
	if n := s.queries("a.test.", "A", "udp"); n != 1 {
		t.Errorf("a.test asked %d times, want 1", n)
	}
	st := r.Stats()
	if st.Hits != 2 || st.Misses != 4 || st.Entries != 2 || st.Evictions != 2 {
		t.Errorf("stats %+v", st)
	}

	// No cache: every lookup asks.
	off := newResolver(t, Config{Servers: []string{s.addr}, CacheSize: -1})
	for range 3 {
		mustLookup(t, off, "v.test", "10.1.0.0")
	}
	if st := off.Stats(); st.Misses != 3 || st.Hits != 0 || st.Entries != 0 {
		t.Errorf("no cache: stats %+v", st)
	}
}

func TestRefreshAfterPeriod(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	clk := newClock()
	r := newResolver(t, Config{Servers: []string{s.addr}, Now: clk.Now})
	z.version.Store(1)
	mustLookup(t, r, "v.test", "10.1.0.1")
	z.version.Store(2)
	// Within the refresh period the TTL (5 s) is ignored.
	clk.advance(DefaultRefreshPeriod - time.Second)
	mustLookup(t, r, "v.test", "10.1.0.1")
	if n := s.queries("v.test.", "A", "udp"); n != 1 {
		t.Fatalf("v.test asked %d times within the refresh period", n)
	}
	// The first hit after it serves the old answer and refreshes.
	clk.advance(2 * time.Second)
	mustLookup(t, r, "v.test", "10.1.0.1")
	waitFor(t, "the refresh", func() bool { st := r.Stats(); return st.Refreshes == 1 && st.Resolving == 0 })
	mustLookup(t, r, "v.test", "10.1.0.2")
	if n := s.queries("v.test.", "A", "udp"); n != 2 {
		t.Errorf("v.test asked %d times, want 2", n)
	}
	st := r.Stats()
	if st.Stale != 1 || st.Hits != 3 || st.Misses != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestRefreshFailure: a refresh that gets no answer keeps the old one and
// is tried again after the negative TTL; one that finds the name gone
// replaces it.
func TestRefreshFailure(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	clk := newClock()
	r := newResolver(t, Config{Servers: []string{s.addr}, Now: clk.Now, NoRetries: true})
	z.version.Store(1)
	mustLookup(t, r, "v.test", "10.1.0.1")
	z.vFail.Store(true)
	clk.advance(DefaultRefreshPeriod)
	mustLookup(t, r, "v.test", "10.1.0.1") // stale, refresh fails
	waitFor(t, "the refresh", func() bool { return r.Stats().Resolving == 0 })
	mustLookup(t, r, "v.test", "10.1.0.1") // kept, no new refresh yet
	if st := r.Stats(); st.Refreshes != 1 || st.Errors != 1 {
		t.Fatalf("after a failed refresh: %+v", st)
	}
	clk.advance(DefaultNegativeTTL)
	z.vFail.Store(false)
	z.vGone.Store(true)
	mustLookup(t, r, "v.test", "10.1.0.1") // stale again: a second refresh
	waitFor(t, "the second refresh", func() bool { return r.Stats().Resolving == 0 })
	_, err := r.LookupNetIP(context.Background(), "v.test")
	var e *Error
	if !errors.As(err, &e) || !e.Cached || !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the name went away: %v, want a cached ErrNotFound", err)
	}
	if n := s.queries("v.test.", "A", "udp"); n != 3 {
		t.Errorf("v.test asked %d times, want 3", n)
	}
}

func TestNegativeCaching(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	clk := newClock()
	r := newResolver(t, Config{Servers: []string{s.addr}, Now: clk.Now, Timeout: time.Second})
	ctx := context.Background()
	for i := range 2 {
		_, err := r.LookupNetIP(ctx, "nosuch.test")
		var e *Error
		if !errors.As(err, &e) || !e.NotFound() || !errors.Is(err, ErrNotFound) || e.Cached != (i == 1) {
			t.Fatalf("lookup %d of nosuch.test: %v", i, err)
		}
		_, err = r.LookupNetIP(ctx, "servfail.test")
		if !errors.As(err, &e) || e.NotFound() || !e.Temporary() || !errors.Is(err, ErrServerFailure) {
			t.Fatalf("lookup %d of servfail.test: %v", i, err)
		}
		_, err = r.LookupNetIP(ctx, "v6.test") // NODATA
		if !errors.Is(err, ErrNoAddress) {
			t.Fatalf("lookup %d of v6.test: %v", i, err)
		}
	}
	if n := s.queries("nosuch.test.", "A", "udp"); n != 1 {
		t.Errorf("nosuch.test asked %d times, want 1 (NXDOMAIN is final and cached)", n)
	}
	if n := s.queries("servfail.test.", "A", "udp"); n != 1+DefaultRetries {
		t.Errorf("servfail.test asked %d times, want %d (retried, then cached)", n, 1+DefaultRetries)
	}
	if n := s.queries("v6.test.", "A", "udp"); n != 1 {
		t.Errorf("v6.test asked %d times, want 1", n)
	}
	if st := r.Stats(); st.NegativeHits != 3 || st.Errors != 3 {
		t.Errorf("stats %+v", st)
	}
	// After the negative TTL, asked again.
	clk.advance(DefaultNegativeTTL)
	if _, err := r.LookupNetIP(ctx, "nosuch.test"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if n := s.queries("nosuch.test.", "A", "udp"); n != 2 {
		t.Errorf("nosuch.test asked %d times after the negative TTL, want 2", n)
	}
	// Negative caching off.
	off := newResolver(t, Config{Servers: []string{s.addr}, NoNegativeCache: true})
	for range 2 {
		if _, err := off.LookupNetIP(ctx, "gone.test"); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
	if n := s.queries("gone.test.", "A", "udp"); n != 2 {
		t.Errorf("gone.test asked %d times without negative caching, want 2", n)
	}
}

// TestCoalescing: N concurrent lookups of one name make one query.
func TestCoalescing(t *testing.T) {
	z := &zone{gate: make(chan struct{})}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}, Timeout: time.Minute})
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.LookupNetIP(context.Background(), "slow.test")
			if err == nil && !slices.Equal(got, addrs("10.0.0.5")) {
				err = fmt.Errorf("got %v", got)
			}
			errs <- err
		}()
	}
	// A caller that gives up does not cancel the query for the others.
	ctx, cancel := context.WithCancel(context.Background())
	quit := make(chan error)
	go func() {
		_, err := r.LookupNetIP(ctx, "slow.test")
		quit <- err
	}()
	waitFor(t, "every lookup to wait", func() bool { st := r.Stats(); return st.Coalesced+st.Misses == n+1 })
	cancel()
	if err := <-quit; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled lookup: %v", err)
	}
	close(z.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if q := s.queries("slow.test.", "A", "udp"); q != 1 {
		t.Errorf("%d concurrent lookups made %d queries, want 1", n+1, q)
	}
	if st := r.Stats(); st.Misses != 1 || st.Coalesced != n {
		t.Errorf("stats %+v", st)
	}
}

// TestFailover: a server that never answers is skipped for the next.
func TestFailover(t *testing.T) {
	z := &zone{}
	good := startServer(t, z.handle)
	dead := startBlackhole(t)
	r := newResolver(t, Config{Servers: []string{dead.addr, good.addr}, Timeout: 200 * time.Millisecond})
	for _, h := range []string{"a.test", "alias.test", "multi.test", "v.test"} {
		if _, err := r.LookupNetIP(context.Background(), h); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	if dead.n.Load() == 0 {
		t.Error("the dead server was never tried (the test proves nothing)")
	}
	st := r.Stats()
	if st.Timeouts != dead.n.Load() || st.Retries != dead.n.Load() {
		t.Errorf("%d queries to the dead server, stats %+v", dead.n.Load(), st)
	}
}

// TestRetries: a query that gets no answer is sent again; all servers
// dead is a time-out error.
func TestRetries(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}, Timeout: 200 * time.Millisecond})
	mustLookup(t, r, "flaky1.test", "10.0.0.7")
	if st := r.Stats(); st.Retries != 1 || st.Timeouts != 1 || st.Queries != 2 {
		t.Errorf("stats %+v", st)
	}
	dead1, dead2 := startBlackhole(t), startBlackhole(t)
	rd := newResolver(t, Config{Servers: []string{dead1.addr, dead2.addr}, Timeout: 100 * time.Millisecond, Retries: 3})
	_, err := rd.LookupNetIP(context.Background(), "a.test")
	var e *Error
	if !errors.As(err, &e) || !e.Timeout() || !strings.Contains(err.Error(), "4 attempts") {
		t.Fatalf("dead servers: %v, want a time-out after 4 attempts", err)
	}
	if dead1.n.Load() != 2 || dead2.n.Load() != 2 {
		t.Errorf("queries to the dead servers: %d and %d, want 2 each", dead1.n.Load(), dead2.n.Load())
	}
	// Cached as a failure.
	if _, err := rd.LookupNetIP(context.Background(), "a.test"); !errors.As(err, &e) || !e.Cached || !e.Timeout() {
		t.Errorf("second lookup: %v", err)
	}
}

// TestTruncatedUsesTCP: a truncated UDP reply is asked again over TCP.
func TestTruncatedUsesTCP(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}})
	got, err := r.LookupNetIP(context.Background(), "big.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 || got[59] != netip.MustParseAddr("10.2.0.60") {
		t.Errorf("big.test: %d addresses %v", len(got), got)
	}
	if s.queries("big.test.", "A", "udp") != 1 || s.queries("big.test.", "A", "tcp") != 1 {
		t.Errorf("big.test: %d UDP and %d TCP queries", s.queries("big.test.", "A", "udp"), s.queries("big.test.", "A", "tcp"))
	}
	if st := r.Stats(); st.Truncated != 1 || st.TCP != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestCNAME(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}})
	mustLookup(t, r, "alias.test", "10.0.0.1")
	if n := s.queries("a.test.", "A", "udp"); n != 0 {
		t.Errorf("alias.test's answer held a.test, but a.test was asked %d times", n)
	}
	mustLookup(t, r, "chain1.test", "10.0.0.1")
	if s.queries("chain2.test.", "A", "udp") != 1 || s.queries("a.test.", "A", "udp") != 1 {
		t.Errorf("chain1.test: the chain was not followed with one query per link")
	}
	_, err := r.LookupNetIP(context.Background(), "loop1.test") // a loop within one answer
	if !errors.Is(err, ErrCNAME) || !strings.Contains(err.Error(), "loop") {
		t.Errorf("loop1.test: %v", err)
	}
	_, err = r.LookupNetIP(context.Background(), "loop2.test")
	if !errors.Is(err, ErrCNAME) {
		t.Errorf("loop2.test: %v", err)
	}
	mustLookup(t, r, "long13.test", "10.0.0.20") // 7 links, one query each
	_, err = r.LookupNetIP(context.Background(), "long1.test")
	if !errors.Is(err, ErrCNAME) || !strings.Contains(err.Error(), "more than 8") {
		t.Errorf("long1.test (19 links): %v", err)
	}
}

// garbage answers a query with seven replies that are not its answer.
func garbage(pc net.PacketConn, from net.Addr, q []byte) {
	var m dns.Msg
	if err := m.Unpack(q); err != nil {
		return
	}
	reply := func(mod func(r *dns.Msg)) {
		r := new(dns.Msg)
		r.SetReply(&m)
		r.Answer = append(r.Answer, &dns.A{Hdr: dns.RR_Header{Name: m.Question[0].Name, Rrtype: dns.TypeA,
			Class: dns.ClassINET}, A: net.IPv4(6, 6, 6, 6)})
		mod(r)
		b, _ := r.Pack()
		_, _ = pc.WriteTo(b, from)
	}
	_, _ = pc.WriteTo([]byte{1, 2, 3}, from)                                        // too short
	_, _ = pc.WriteTo(append(q[:2:2], make([]byte, 40)...), from)                   // the right id, then zeros
	_, _ = pc.WriteTo(append(q[:2:2], []byte(strings.Repeat("\xff", 90))...), from) // the right id, then junk
	reply(func(r *dns.Msg) { r.Id++ })                                              // a wrong id
	reply(func(r *dns.Msg) { r.Question[0].Name = "other.test." })                  // another question
	reply(func(r *dns.Msg) { r.Question[0].Qtype = dns.TypeAAAA })                  // another type
	reply(func(r *dns.Msg) { r.Response = false })                                  // not a response
}

// TestGarbageReplies: replies that are not answers are ignored; a server
// sending only those costs a time-out, with a clear error.
func TestGarbageReplies(t *testing.T) {
	addr := startRaw(t, garbage)
	r := newResolver(t, Config{Servers: []string{addr}, Timeout: 300 * time.Millisecond, NoRetries: true})
	_, err := r.LookupNetIP(context.Background(), "a.test")
	var e *Error
	if !errors.As(err, &e) || !e.Timeout() || !strings.Contains(err.Error(), "7 malformed or mismatched replies ignored") {
		t.Fatalf("garbage server: %v", err)
	}
	if st := r.Stats(); st.Ignored != 7 {
		t.Errorf("stats %+v", st)
	}

	// Garbage before the real answer does not hide it.
	z := &zone{}
	good := startServer(t, z.handle)
	noisy := startRaw(t, func(pc net.PacketConn, from net.Addr, q []byte) {
		garbage(pc, from, q)
		c, err := net.Dial("udp", good.addr)
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write(q)
		buf := make([]byte, 2048)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(buf); err == nil {
			_, _ = pc.WriteTo(buf[:n], from)
		}
	})
	r2 := newResolver(t, Config{Servers: []string{noisy}, Timeout: 5 * time.Second})
	mustLookup(t, r2, "multi.test", "10.0.0.2", "10.0.0.3")
}

// TestNeverAnswers: a server that never answers costs Timeout per
// attempt, and a caller's deadline ends its wait sooner.
func TestNeverAnswers(t *testing.T) {
	dead := startBlackhole(t)
	r := newResolver(t, Config{Servers: []string{dead.addr}, Timeout: 100 * time.Millisecond, Retries: 1})
	_, err := r.LookupNetIP(context.Background(), "a.test")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("%v, want ErrTimeout", err)
	}
	slow := newResolver(t, Config{Servers: []string{dead.addr}, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = slow.LookupNetIP(ctx, "a.test")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the caller's deadline", err)
	}
}

// TestRefused: a port nothing listens on fails fast (ICMP unreachable)
// rather than at the time-out, and the next server answers.
func TestRefused(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().String()
	pc.Close()
	r := newResolver(t, Config{Servers: []string{closed}, Timeout: time.Hour, NoRetries: true})
	_, err = r.LookupNetIP(context.Background(), "a.test")
	if !errors.Is(err, ErrServerFailure) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("closed port: %v", err)
	}
	z := &zone{}
	good := startServer(t, z.handle)
	r2 := newResolver(t, Config{Servers: []string{closed, good.addr}, Timeout: time.Hour})
	for _, h := range []string{"a.test", "multi.test", "alias.test"} {
		if _, err := r2.LookupNetIP(context.Background(), h); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
}

func TestPrefetch(t *testing.T) {
	z := &zone{}
	s := startServer(t, z.handle)
	r := newResolver(t, Config{Servers: []string{s.addr}})
	hosts := []string{"a.test", "multi.test", "alias.test", "10.9.9.9", "bad..name", "A.TEST", "nosuch.test"}
	r.Prefetch(context.Background(), hosts)
	waitFor(t, "the prefetches", func() bool { st := r.Stats(); return st.Entries == 4 && st.Resolving == 0 })
	mustLookup(t, r, "a.test", "10.0.0.1")
	mustLookup(t, r, "multi.test", "10.0.0.2", "10.0.0.3")
	mustLookup(t, r, "alias.test", "10.0.0.1")
	if _, err := r.LookupNetIP(context.Background(), "nosuch.test"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.Misses != 0 || st.Hits != 3 || st.NegativeHits != 1 || st.Prefetched < 4 {
		t.Errorf("stats %+v", st)
	}
	if n := s.queries("a.test.", "A", "udp"); n != 1 {
		t.Errorf("a.test asked %d times", n)
	}
	// Already cached: not queued again.
	before := st.Prefetched
	r.Prefetch(context.Background(), []string{"a.test", "multi.test"})
	if st := r.Stats(); st.Prefetched != before {
		t.Errorf("cached names prefetched again: %d -> %d", before, st.Prefetched)
	}
}

// TestPrefetchNeverBlocks: prefetching many names against a server that
// never answers returns at once (the rest are dropped), a lookup still
// gets its query out, and Close ends it all.
func TestPrefetchNeverBlocks(t *testing.T) {
	dead := startBlackhole(t)
	r := newResolver(t, Config{Servers: []string{dead.addr}, Timeout: time.Hour, PrefetchBacklog: 100, QueueSize: 16})
	hosts := make([]string, 5000)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d.test", i)
	}
	r.Prefetch(context.Background(), hosts)
	st := r.Stats()
	if st.Prefetched+st.PrefetchDropped != int64(len(hosts)) || st.PrefetchDropped == 0 {
		t.Errorf("stats %+v", st)
	}
	waitFor(t, "prefetch queries to reach the server", func() bool { return dead.n.Load() == 8 })
	if st := r.Stats(); st.Resolving != 8 {
		t.Errorf("%d resolutions, want 8 (QueueSize/2 prefetches)", st.Resolving)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error)
	go func() {
		_, err := r.LookupNetIP(ctx, "x.test")
		errc <- err
	}()
	waitFor(t, "the lookup's query to reach the server", func() bool { return dead.n.Load() == 9 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("lookup: %v", err)
	}
}

// TestClose: waiting lookups fail with ErrClosed, later ones too, and no
// goroutine is left (also checked by newResolver's cleanup).
func TestClose(t *testing.T) {
	dead := startBlackhole(t)
	r := newResolver(t, Config{Servers: []string{dead.addr}, Timeout: time.Hour})
	errs := make(chan error, 10)
	for i := range 10 {
		go func() {
			_, err := r.LookupNetIP(context.Background(), fmt.Sprintf("n%d.test", i%3))
			errs <- err
		}()
	}
	waitFor(t, "the lookups to wait", func() bool { st := r.Stats(); return st.Misses+st.Coalesced == 10 })
	r.Close()
	for range 10 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("waiting lookup: %v, want ErrClosed", err)
		}
	}
	if _, err := r.LookupNetIP(context.Background(), "a.test"); !errors.Is(err, ErrClosed) {
		t.Errorf("lookup after Close: %v", err)
	}
	r.Prefetch(context.Background(), []string{"a.test"}) // no effect, no panic
	r.Close()                                            // idempotent
	if g := leaked(); g != "" {
		t.Errorf("goroutines left:\n%s", g)
	}
}

// TestSimweb resolves the synthetic web's names with its DNS server.
func TestSimweb(t *testing.T) {
	c := simweb.DefaultConfig()
	c.Hosts, c.Pages, c.Hazards = 8, 40, 0
	w, err := simweb.New(c)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0", IPPerHost: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r := newResolver(t, Config{Servers: []string{srv.DNSAddr()}, Timeout: 200 * time.Millisecond, Retries: 1})
	var names []string
	for h := range 8 {
		names = append(names, w.Host(h).Name)
	}
	r.Prefetch(context.Background(), names[:4])
	for h, name := range names {
		got, err := r.LookupNetIP(context.Background(), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != 1 || got[0] != w.Host(h).IP {
			t.Errorf("%s: %v, want %v", name, got, w.Host(h).IP)
		}
	}
	for _, tc := range []struct {
		name string
		want error
	}{
		{"nosuch." + simweb.Domain, ErrNotFound},
		{simweb.DNSServfailName, ErrServerFailure},
		{simweb.DNSTimeoutName, ErrTimeout},
	} {
		if _, err := r.LookupNetIP(context.Background(), tc.name); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Every name was asked once (the prefetched ones included).
	asked := map[string]int{}
	for _, q := range srv.DNSLog() {
		asked[strings.ToLower(q.Name)]++
	}
	for _, name := range names {
		if asked[name+"."] != 1 {
			t.Errorf("%s asked %d times", name, asked[name+"."])
		}
	}
}

func TestParseServer(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1:53", "127.0.0.1:5353": "127.0.0.1:5353", "::1": "[::1]:53",
		"[::1]:5300": "[::1]:5300", " 10.0.0.1 ": "10.0.0.1:53", "[::1]": "[::1]:53",
	} {
		if got, err := ParseServer(in); err != nil || got != want {
			t.Errorf("ParseServer(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"dns.example.com", "dns.example.com:53", "127.0.0.1:0", "1.2.3.4:x", ""} {
		if _, err := ParseServer(in); err == nil {
			t.Errorf("ParseServer(%q) succeeded", in)
		}
	}
	if _, err := New(Config{Servers: []string{"dns.example.com"}}); err == nil {
		t.Error("New with a host name as server succeeded")
	}
}

func TestResolvConf(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/resolv.conf"
	if err := writeFile(path, "# test\nnameserver 127.0.0.1\nnameserver ::1\noptions ndots:1\n"); err != nil {
		t.Fatal(err)
	}
	r := newResolver(t, Config{ResolvConf: path})
	if got := r.Servers(); !slices.Equal(got, []string{"127.0.0.1:53", "[::1]:53"}) {
		t.Errorf("servers %v", got)
	}
	r2 := newResolver(t, Config{ResolvConf: dir + "/missing"})
	if got := r2.Servers(); !slices.Equal(got, []string{"127.0.0.1:53", "[::1]:53"}) {
		t.Errorf("servers without resolv.conf %v", got)
	}
}

// TestPrefetchConcurrencyDefault: a prefetch burst is bounded by
// DefaultPrefetchConcurrency, and by half the send queue when that is
// smaller; an explicit value is kept.
func TestPrefetchConcurrencyDefault(t *testing.T) {
	for _, c := range []struct {
		in   Config
		want int
	}{
		{Config{Servers: []string{"127.0.0.1:53"}}, DefaultPrefetchConcurrency},
		{Config{Servers: []string{"127.0.0.1:53"}, QueueSize: 16}, 8},
		{Config{Servers: []string{"127.0.0.1:53"}, QueueSize: 1}, 1},
		{Config{Servers: []string{"127.0.0.1:53"}, PrefetchConcurrency: 500}, 500},
	} {
		got, err := c.in.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if got.PrefetchConcurrency != c.want {
			t.Errorf("QueueSize %d, PrefetchConcurrency %d: default %d, want %d", c.in.QueueSize, c.in.PrefetchConcurrency, got.PrefetchConcurrency, c.want)
		}
	}
}
