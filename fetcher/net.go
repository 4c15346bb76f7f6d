package fetcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Resolver resolves a host name to its addresses. The fetcher's dialer
// calls it once per server and connection attempt, with a context bounded
// by the connect timeout; an implementation may cache (the cached
// asynchronous resolver of package resolver does). *resolver.Resolver and
// SystemResolver implement it.
type Resolver interface {
	LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error)
}

// Prefetcher is a Resolver that can start resolving names before they are
// needed (the asynchronous resolver of the crawl scheduling papers: names
// are submitted as soon as they are known). At the start of a run the
// fetcher passes every server's host name, in the order the servers first
// appear in the requests; Prefetch must not block for long.
type Prefetcher interface {
	Resolver
	Prefetch(ctx context.Context, hosts []string)
}

// SystemResolver resolves with the Go resolver (/etc/hosts and the name
// servers of /etc/resolv.conf). R nil means net.DefaultResolver.
type SystemResolver struct{ R *net.Resolver }

// LookupNetIP implements Resolver.
func (s SystemResolver) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	r := s.R
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// nonPublic are the special-purpose ranges refused without AllowPrivate,
// beyond what netip.Addr's predicates cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"), // documentation
}

// PrivateAddr reports whether a is not a public unicast address: private
// (10/8, 172.16/12, 192.168/16, fc00::/7), loopback, link-local (which
// holds the cloud metadata address 169.254.169.254), unspecified,
// multicast, or one of a few other special-purpose ranges (CGNAT
// 100.64/10, 0/8, 198.18/15, 240/4, documentation). IPv4-mapped IPv6
// addresses are judged as IPv4.
func PrivateAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// RefusedError is returned by the dialer when every address of a host is
// private and private addresses are not allowed.
type RefusedError struct {
	Host string
	Addr netip.Addr
}

func (e *RefusedError) Error() string {
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("refused to connect to %s: a private, loopback or link-local address (set allow-private to crawl it)", e.Addr)
	}
	return fmt.Sprintf("refused to connect to %s: it resolves to %s, a private, loopback or link-local address (set allow-private to crawl it)", e.Host, e.Addr)
}

// reason says why the host was refused, without naming the refusal.
func (e *RefusedError) reason() string {
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("%s is a private, loopback or link-local address (set allow-private to crawl it)", e.Addr)
	}
	return fmt.Sprintf("%s resolves to %s, a private, loopback or link-local address (set allow-private to crawl it)", e.Host, e.Addr)
}

// DNSError wraps a name resolution failure of the dialer.
type DNSError struct {
	Host string
	Err  error
}

func (e *DNSError) Error() string { return fmt.Sprintf("resolve %s: %v", e.Host, e.Err) }
func (e *DNSError) Unwrap() error { return e.Err }

// trackedConn is a connection the fetcher accounts for: it is counted
// open from its dial until its first Close.
type trackedConn struct {
	net.Conn
	once    sync.Once
	onClose func()
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.onClose)
	return err
}

// connAccount counts the fetcher's open connections.
type connAccount struct {
	mu      sync.Mutex
	cond    *sync.Cond
	open    int
	maxOpen int
	dialed  int64
}

func newConnAccount() *connAccount {
	a := &connAccount{}
	a.cond = sync.NewCond(&a.mu)
	return a
}

func (a *connAccount) opened() {
	a.mu.Lock()
	a.open++
	a.dialed++
	a.maxOpen = max(a.maxOpen, a.open)
	a.mu.Unlock()
}

func (a *connAccount) closed() {
	a.mu.Lock()
	a.open--
	a.mu.Unlock()
	a.cond.Broadcast()
}

// dial connects to addr (host:port) for server s: it resolves the host
// (once per server and run; IP literals need no resolution), refuses
// private addresses unless allowed, and tries the addresses in order,
// each within the connect timeout.
func (r *run) dial(ctx context.Context, s *server, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	began := time.Now()
	addrs, err := r.lookup(ctx, s, host)
	if err != nil {
		return nil, err
	}
	var allowed []netip.Addr
	for _, a := range addrs {
		if !r.o.refuses(a) {
			allowed = append(allowed, a)
		}
	}
	if len(allowed) == 0 {
		return nil, &RefusedError{Host: host, Addr: addrs[0]}
	}
	d := net.Dialer{Timeout: r.o.ConnectTimeout, KeepAlive: 30 * time.Second}
	var first error
	for _, a := range allowed {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err != nil {
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		r.conns.opened()
		r.sched.connected(s, time.Since(began))
		r.o.Count(CounterConnections, 1)
		return &trackedConn{Conn: c, onClose: func() {
			r.sched.disconnected(s)
			r.conns.closed()
		}}, nil
	}
	return nil, first
}

// lookup resolves host for server s, remembering the answer for the run.
func (r *run) lookup(ctx context.Context, s *server, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if addrs, ok := r.sched.cachedAddrs(s, host); ok {
		return addrs, nil
	}
	lctx, cancel := context.WithTimeout(ctx, r.o.ConnectTimeout)
	defer cancel()
	addrs, err := r.o.Resolver.LookupNetIP(lctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		r.o.Count(CounterDNSFailures, 1)
		return nil, &DNSError{Host: host, Err: err}
	}
	r.sched.cacheAddrs(s, host, addrs)
	return addrs, nil
}
