package resolver

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Resolver is the cached asynchronous resolver (see the package doc). It
// implements fetcher.Resolver and fetcher.Prefetcher and is safe for
// concurrent use. Close it when done.
type Resolver struct {
	cfg Config
	cl  *client
	ctr counters

	ctx    context.Context // ends at Close; resolutions run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine of the resolver

	mu      sync.Mutex
	cache   *cache
	flights map[string]*flight
	closed  bool

	prefetchq   chan string
	prefetchSem chan struct{}
	closeOnce   sync.Once
}

// flight is one resolution of a name, which every lookup of the name
// arriving meanwhile waits for.
type flight struct {
	done  chan struct{}
	addrs []netip.Addr
	err   *Error
}

// New returns a Resolver with cfg (zero fields take their defaults): it
// opens its UDP sockets and starts its goroutines.
func New(cfg Config) (*Resolver, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Resolver{cfg: c, flights: map[string]*flight{},
		prefetchq:   make(chan string, c.PrefetchBacklog),
		prefetchSem: make(chan struct{}, c.PrefetchConcurrency)}
	r.cache = newCache(max(c.CacheSize, 0))
	if r.cl, err = newClient(&r.cfg, &r.ctr); err != nil {
		return nil, err
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.cl.start(r.ctx, &r.wg)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.prefetcher()
	}()
	return r, nil
}

// Servers returns the upstream name servers, as host:port.
func (r *Resolver) Servers() []string { return slices.Clone(r.cfg.Servers) }

// Close stops the resolver: lookups waiting fail with ErrClosed, the
// goroutines end and the sockets are closed before it returns. Later
// lookups fail with ErrClosed. Close is idempotent.
func (r *Resolver) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.cancel()
		r.cl.close()
		r.wg.Wait()
	})
	return nil
}

// literal returns the addresses of an IP literal or of localhost.
func (r *Resolver) literal(host string) ([]netip.Addr, bool) {
	h := strings.TrimSuffix(host, ".")
	if strings.IndexByte(h, ':') >= 0 || (h != "" && h[len(h)-1] >= '0' && h[len(h)-1] <= '9') {
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			return []netip.Addr{a.Unmap()}, true
		}
	}
	if strings.EqualFold(h, "localhost") || (len(h) > 10 && strings.EqualFold(h[len(h)-10:], ".localhost")) {
		addrs := []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
		if r.cfg.IPv6 {
			addrs = append(addrs, netip.IPv6Loopback())
		}
		return addrs, true
	}
	return nil, false
}

// cacheKey returns the cache key of host: lower case, no final dot.
func cacheKey(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// validName reports whether key can be asked.
func validName(key string) bool {
	if key == "" || len(key) > 253 {
		return false
	}
	_, ok := dns.IsDomainName(key)
	return ok
}

// LookupNetIP returns host's addresses (IPv4 first). The slice is the
// caller's. A failure is an *Error.
func (r *Resolver) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if addrs, ok := r.literal(host); ok {
		r.ctr.literals.Add(1)
		return addrs, nil
	}
	key := cacheKey(host)
	r.ctr.lookups.Add(1)
	now := r.cfg.Now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, &Error{Host: host, Err: ErrClosed}
	}
	if e := r.cache.get(key); e != nil {
		if e.err != nil {
			if now.Before(e.expires) {
				err := e.err.Err
				r.mu.Unlock()
				r.ctr.negHits.Add(1)
				return nil, &Error{Host: host, Err: err, Cached: true}
			}
			r.cache.remove(key) // an expired failure: ask again
		} else {
			addrs := e.addrs
			if !now.Before(e.expires) {
				r.ctr.stale.Add(1)
				if !e.refreshing && r.flights[key] == nil {
					e.refreshing = true
					r.ctr.refreshes.Add(1)
					r.startFlight(key, true, nil)
				}
			}
			r.mu.Unlock()
			r.ctr.hits.Add(1)
			return slices.Clone(addrs), nil
		}
	}
	f := r.flights[key]
	if f != nil {
		r.ctr.coalesced.Add(1)
	} else {
		if !validName(key) {
			r.mu.Unlock()
			return nil, &Error{Host: host, Err: ErrBadName}
		}
		r.ctr.misses.Add(1)
		f = r.startFlight(key, false, nil)
	}
	r.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, &Error{Host: host, Err: ctx.Err()}
	case <-r.ctx.Done():
		return nil, &Error{Host: host, Err: ErrClosed}
	}
	if f.err != nil {
		return nil, f.err
	}
	return slices.Clone(f.addrs), nil
}

// startFlight starts resolving key (r.mu held, r not closed); done, if
// not nil, is called when the resolution ends.
func (r *Resolver) startFlight(key string, refresh bool, done func()) *flight {
	f := &flight{done: make(chan struct{})}
	r.flights[key] = f
	r.ctr.resolving.Add(1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if done != nil {
			defer done()
		}
		r.runFlight(key, f, refresh)
	}()
	return f
}

// runFlight resolves key, caches the outcome and wakes the waiters.
func (r *Resolver) runFlight(key string, f *flight, refresh bool) {
	start := time.Now()
	addrs, err := r.resolveName(r.ctx, key)
	closed := r.ctx.Err() != nil
	var e *Error
	switch {
	case err != nil && closed:
		e = &Error{Host: key, Err: ErrClosed}
	case err != nil:
		e = &Error{Host: key, Err: err}
		r.ctr.errors.Add(1)
	}
	if !closed {
		r.ctr.latency.observe(time.Since(start))
	}
	now := r.cfg.Now()
	r.mu.Lock()
	delete(r.flights, key)
	if !closed {
		neg := r.cfg.NegativeTTL
		old := r.cache.peek(key)
		switch {
		case e == nil:
			r.cache.put(key, addrs, nil, now.Add(r.cfg.RefreshPeriod))
		case refresh && old != nil && old.err == nil && !e.NotFound():
			// A refresh that failed for want of an answer keeps the old
			// one, and is tried again after the negative TTL.
			old.refreshing = false
			old.expires = now.Add(max(neg, 0))
		case neg > 0:
			r.cache.put(key, nil, e, now.Add(neg))
		default:
			r.cache.remove(key)
		}
	}
	r.mu.Unlock()
	r.ctr.resolving.Add(-1)
	f.addrs, f.err = addrs, e
	close(f.done)
}

// resolveName resolves key's A records (and AAAA with IPv6, in parallel).
func (r *Resolver) resolveName(ctx context.Context, key string) ([]netip.Addr, error) {
	name := key + "."
	if !r.cfg.IPv6 {
		return r.resolveType(ctx, name, dns.TypeA)
	}
	var a6 []netip.Addr
	var err6 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		a6, err6 = r.resolveType(ctx, name, dns.TypeAAAA)
	}()
	a4, err4 := r.resolveType(ctx, name, dns.TypeA)
	<-done
	if addrs := append(a4, a6...); len(addrs) > 0 {
		return addrs, nil
	}
	if errors.Is(err4, ErrNoAddress) && err6 != nil {
		return nil, err6
	}
	return nil, err4
}

// resolveType resolves name's qtype records, following CNAMEs.
func (r *Resolver) resolveType(ctx context.Context, name string, qtype uint16) ([]netip.Addr, error) {
	var visited map[string]bool
	links := 0
	target := name
	for {
		m, err := r.cl.ask(ctx, target, qtype)
		if err != nil {
			return nil, err
		}
		if m.Rcode == dns.RcodeNameError {
			if target != name {
				return nil, fmt.Errorf("%w (NXDOMAIN for %s, a CNAME target)", ErrNotFound, strings.TrimSuffix(target, "."))
			}
			return nil, fmt.Errorf("%w (NXDOMAIN)", ErrNotFound)
		}
		cur := target
		for {
			if addrs := addrsOf(m, cur, qtype); len(addrs) > 0 {
				return addrs, nil
			}
			next := cnameOf(m, cur)
			if next == "" {
				break
			}
			links++
			if links > r.cfg.MaxCNAME {
				return nil, fmt.Errorf("%w: more than %d links", ErrCNAME, r.cfg.MaxCNAME)
			}
			if visited == nil {
				visited = map[string]bool{name: true}
			}
			if visited[next] {
				return nil, fmt.Errorf("%w: a loop through %s", ErrCNAME, strings.TrimSuffix(next, "."))
			}
			visited[next] = true
			cur = next
		}
		if cur == target {
			return nil, fmt.Errorf("%w for %s (%s)", ErrNoAddress, strings.TrimSuffix(cur, "."), dns.TypeToString[qtype])
		}
		target = cur // the answer stops at a CNAME: ask for its target
	}
}

// addrsOf returns the qtype addresses of owner in m's answer.
func addrsOf(m *dns.Msg, owner string, qtype uint16) []netip.Addr {
	var out []netip.Addr
	for _, rr := range m.Answer {
		if !strings.EqualFold(rr.Header().Name, owner) {
			continue
		}
		switch v := rr.(type) {
		case *dns.A:
			if a, ok := netip.AddrFromSlice(v.A.To4()); ok && qtype == dns.TypeA {
				out = append(out, a)
			}
		case *dns.AAAA:
			if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok && qtype == dns.TypeAAAA {
				out = append(out, a.Unmap())
			}
		}
	}
	return out
}

// cnameOf returns the lower-case target of owner's CNAME in m's answer.
func cnameOf(m *dns.Msg, owner string) string {
	for _, rr := range m.Answer {
		if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, owner) {
			return strings.ToLower(dns.Fqdn(c.Target))
		}
	}
	return ""
}

// Prefetch queues hosts for resolution and returns at once: names cached
// or being resolved are skipped, IP literals and invalid names ignored,
// and names beyond the backlog dropped (counted in Stats).
func (r *Resolver) Prefetch(ctx context.Context, hosts []string) {
	now := r.cfg.Now()
	for _, h := range hosts {
		if ctx.Err() != nil {
			return
		}
		if _, ok := r.literal(h); ok {
			continue
		}
		key := cacheKey(h)
		if !validName(key) {
			continue
		}
		r.mu.Lock()
		skip := r.closed || r.known(key, now)
		r.mu.Unlock()
		if skip {
			continue
		}
		select {
		case r.prefetchq <- key:
			r.ctr.prefetched.Add(1)
		default:
			r.ctr.prefetchDropped.Add(1)
		}
	}
}

// known reports whether key has a fresh cache entry or a resolution
// running (r.mu held).
func (r *Resolver) known(key string, now time.Time) bool {
	if r.flights[key] != nil {
		return true
	}
	e := r.cache.peek(key)
	return e != nil && (e.err == nil || now.Before(e.expires))
}

// prefetcher turns queued names into resolutions, at most
// PrefetchConcurrency at once.
func (r *Resolver) prefetcher() {
	release := func() { <-r.prefetchSem }
	for {
		var key string
		select {
		case <-r.ctx.Done():
			return
		case key = <-r.prefetchq:
		}
		select {
		case r.prefetchSem <- struct{}{}:
		case <-r.ctx.Done():
			return
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return
		}
		if r.known(key, r.cfg.Now()) {
			r.mu.Unlock()
			release()
			continue
		}
		r.startFlight(key, false, release)
		r.mu.Unlock()
	}
}

// Stats returns a snapshot of the counters.
func (r *Resolver) Stats() Stats {
	c := &r.ctr
	ps := c.latency.percentiles(0.5, 0.9, 0.99)
	r.mu.Lock()
	entries, evictions := r.cache.len(), r.cache.evictions
	r.mu.Unlock()
	return Stats{
		Lookups: c.lookups.Load(), Hits: c.hits.Load(), Stale: c.stale.Load(), NegativeHits: c.negHits.Load(),
		Misses: c.misses.Load(), Coalesced: c.coalesced.Load(), Literals: c.literals.Load(),
		Refreshes: c.refreshes.Load(), Resolving: c.resolving.Load(), InFlight: c.inFlight.Load(),
		Queries: c.queries.Load(), TCP: c.tcp.Load(), Truncated: c.truncated.Load(),
		Timeouts: c.timeouts.Load(), Retries: c.retries.Load(), Errors: c.errors.Load(),
		Ignored: c.ignored.Load(), Prefetched: c.prefetched.Load(), PrefetchDropped: c.prefetchDropped.Load(),
		Entries: int64(entries), Evictions: evictions,
		P50: ps[0], P90: ps[1], P99: ps[2],
	}
}
