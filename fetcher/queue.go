package fetcher

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// isIPLiteral reports whether a server's host is an IP address.
func isIPLiteral(host string) bool {
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// keyFor returns the server key of a host: the host itself, or with
// QueueByIP the address it resolves to (resolving it if it is new to the
// run).
func (r *run) keyFor(ctx context.Context, host string) string {
	if r.o.QueueMode != QueueByIP {
		return host
	}
	if k, ok := r.sched.serverKey(host); ok {
		return k
	}
	k, addrs := r.resolveKey(ctx, host)
	r.sched.setServerKey(host, k, addrs)
	return k
}

// resolveKeys resolves the server keys of hosts (QueueByIP), as many at
// once as the run has connections.
func (r *run) resolveKeys(ctx context.Context, hosts []string) {
	began := time.Now()
	next := make(chan string)
	var wg sync.WaitGroup
	for range min(r.o.MaxConnections, len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range next {
				k, addrs := r.resolveKey(ctx, h)
				r.sched.setServerKey(h, k, addrs)
			}
		}()
	}
	for _, h := range hosts {
		next <- h
	}
	close(next)
	wg.Wait()
	r.o.Log.Debug("resolved hosts for the queues by IP", "hosts", len(hosts), "duration", time.Since(began))
}

// resolveKey resolves host to its server key in QueueByIP mode: the
// lowest of the addresses the dialer may use (public, unless private
// addresses are allowed), so that the key does not depend on the order of
// a DNS answer and agrees with generate's partition by IP (the lowest
// address). A host that does not resolve, or resolves to refused
// addresses only, is a server of its own, which fails as in QueueByHost
// mode when it is dialed. The addresses are returned for the dialer's
// cache (nil if none).
func (r *run) resolveKey(ctx context.Context, host string) (string, []netip.Addr) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return a.Unmap().String(), nil
	}
	lctx, cancel := context.WithTimeout(ctx, r.o.ConnectTimeout)
	defer cancel()
	addrs, err := r.o.Resolver.LookupNetIP(lctx, host)
	if err != nil || len(addrs) == 0 {
		return host, nil
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	var key netip.Addr
	for _, a := range addrs {
		if !r.o.refuses(a) && (!key.IsValid() || a.Less(key)) {
			key = a
		}
	}
	if !key.IsValid() {
		return host, addrs
	}
	return key.String(), addrs
}

// sameServer reports whether u is on server s (for robots.txt redirects,
// which wait for the server's turn).
func (r *run) sameServer(u *url.URL, s *server) bool {
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if r.o.QueueMode != QueueByIP {
		return host == s.host
	}
	k, ok := r.sched.serverKey(host)
	if !ok && isIPLiteral(host) {
		k, ok = host, true
	}
	return ok && k == s.host
}

// knownHost reports whether host has been seen in the run.
func (sc *scheduler) knownHost(host string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	_, k := sc.keys[host]
	_, s := sc.servers[host]
	return k || s
}

// watchThroughput ends the run when its throughput stays below
// Options.ThroughputThreshold (see there) until the returned function is
// called. Rates are measured on Options.Clock.
func (r *run) watchThroughput(ctx context.Context) func() {
	o := r.o
	if o.ThroughputThreshold <= 0 {
		return func() {}
	}
	return background(func(done <-chan struct{}) {
		start := o.Clock()
		t := time.NewTicker(o.ThroughputInterval)
		defer t.Stop()
		lastTime, lastPages := start, r.responses.Load()
		low := 0
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now, pages := o.Clock(), r.responses.Load()
			el := now.Sub(lastTime).Seconds()
			rate := float64(pages-lastPages) / max(el, 1e-9)
			lastTime, lastPages = now, pages
			if now.Sub(start) < o.ThroughputCheckAfter {
				continue
			}
			if rate >= o.ThroughputThreshold {
				low = 0
				continue
			}
			low++
			o.Log.Debug("fetch throughput below the threshold", "pages_per_s", rate,
				"threshold", o.ThroughputThreshold, "low_checks", low, "retries", o.ThroughputRetries)
			if low >= o.ThroughputRetries {
				queued, _, _ := r.sched.load()
				o.Log.Warn("fetch throughput below the threshold: ending the fetch, the rest is left for the next round",
					"pages_per_s", rate, "threshold", o.ThroughputThreshold, "checks", low, "queued", queued)
				o.Count(CounterThroughputStops, 1)
				r.cancel(errThroughput)
				return
			}
		}
	})
}
