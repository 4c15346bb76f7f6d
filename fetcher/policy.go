package fetcher

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Policy decides the order of work in a fetcher's two-level queue: which
// waiting URL of a server goes first, which ready server gets the next
// free connection, and how many URLs a connection fetches before its
// server is ranked again. A policy sees servers only when they are ready
// (their politeness delay has passed) and not being served, and is called
// under the scheduler's lock: it must be quick and must not call back
// into the fetcher.
//
// BreadthFirst, Performance, Quality and Capacity are the four policies
// of the crawl scheduling paper (see the package doc); PolicyByName finds
// them by name.
type Policy interface {
	// Name identifies the policy in logs.
	Name() string
	// LessURL reports whether a should be fetched before b; both wait in
	// the same server's queue. URLs that neither precedes keep their
	// arrival order (the fetch list's, then redirect targets').
	LessURL(a, b *Request) bool
	// RankServer scores a server as it becomes ready; a higher score is
	// served first, and equal scores in the order they became ready.
	RankServer(s ServerInfo) float64
	// SessionLimit is the most URLs one connection fetches from s before
	// the server is ranked again (0: no limit; the session also ends when
	// the server closes the connection, its queue is empty, or its next
	// turn is further away than Options.HoldConnection). A server that is
	// still ranked at least as high as every ready server when its
	// session ends keeps its worker (and its connection, if open).
	SessionLimit(s ServerInfo) int
}

// ServerInfo is what a Policy knows of a server. It is valid only during
// the Policy call it is given to.
type ServerInfo struct {
	// Host is the server's key: the host name in lower case, without
	// port (politeness is per host, whatever the scheme or port), or with
	// Options.QueueMode QueueByIP the address its hosts resolve to.
	Host string
	// Queued is the number of URLs waiting in the server's queue.
	Queued int
	// Head is the URL the server would fetch next (nil if none).
	Head *Request
	// Delay is the server's politeness delay (ServerDelay, or robots.txt
	// Crawl-delay when longer).
	Delay time.Duration
	// Stats are the server's measurements so far in this run.
	Stats ServerStats
	// Session is P(s,i), the number of URLs the next connection to the
	// server is expected to fetch, and Time is T(s,i), the time that
	// connection is expected to take (see the package doc for both).
	Session int
	Time    time.Duration
	// Serial is W(s), the time the server's queued URLs take one after
	// another, and Remaining the run's estimated remaining crawl time;
	// a policy that implements MakespanGuard serves a server whose Serial
	// is at least Remaining first (see the package doc). Both are 0 in a
	// ServerInfo made by hand, and Remaining is 0 when the scheduler does
	// not know the number of connections.
	Serial    time.Duration
	Remaining time.Duration

	queue *urlQueue // the server's queue (nil in a ServerInfo made by hand)
}

// SumPriorities returns the sum of the Priorities of the next n URLs the
// server would fetch, in the policy's URL order (with Capacity: its n
// best URLs). It walks the top of the server's heap in order, so it costs
// O(n log n) whatever the queue's length. It is 0 for a ServerInfo not
// made by the fetcher.
func (s ServerInfo) SumPriorities(n int) float64 {
	if s.queue == nil {
		return 0
	}
	return s.queue.sumTop(n)
}

// ServerStats are one server's measurements in a run. Smoothed values
// follow the crawl scheduling paper: new = 0.8·old + 0.2·measured, the
// first measurement taken as is.
type ServerStats struct {
	// Connections is the number of connections opened to the server;
	// OpenConnections how many are open now.
	Connections     int
	OpenConnections int
	// Requests counts requests that got a response (robots.txt
	// included); Exceptions those that failed with an exception.
	Requests   int
	Exceptions int
	// RequestsPerConnection is the smoothed number of requests a
	// connection served before the server closed it (Connection: close,
	// or an HTTP/1.0 response); 0 until the server closed one.
	RequestsPerConnection float64
	// ConnectTime is the smoothed time to resolve and connect;
	// ResponseTime the smoothed time from sending a request to having its
	// body, or to its failure for an exception that took time (a read
	// timeout counts the timeout).
	ConnectTime  time.Duration
	ResponseTime time.Duration
	// KeepAlive is true when the last response allowed the connection to
	// be reused (HTTP/1.1 without Connection: close).
	KeepAlive bool
	// Bytes counts body bytes read from the network.
	Bytes int64
}

// smooth is the paper's exponential smoothing (0.8·old + 0.2·new); the
// first sample (old == 0) is taken as is.
func smooth(old, sample float64) float64 {
	if old == 0 {
		return sample
	}
	return 0.8*old + 0.2*sample
}

// Constants of the session estimates P(s,i) and T(s,i).
const (
	// DefaultRequestsPerConnection is P for a server that has not closed
	// a connection yet (the paper's 50).
	DefaultRequestsPerConnection = 50
	// DefaultTimeEstimate is the connect and the response time assumed for
	// a server not measured yet while no server of the run is measured.
	DefaultTimeEstimate = 100 * time.Millisecond
	// KeepAliveGain is the paper's p = 1.2: the speed-up of fetching the
	// pages of a session over one kept-alive HTTP/1.1 connection.
	KeepAliveGain = 1.2
)

// estimate holds what the scheduler knows beyond a server's own
// measurements, for P and T.
type estimate struct {
	meanConnect, meanResponse time.Duration // the run's means (0: none measured)
	hold                      time.Duration // Options.HoldConnection
	keepAliveOff              bool
	// perConnection is set with DelayBetweenConnections.
	perConnection bool
	// conns is Options.MaxConnections, for the remaining crawl time of
	// the makespan guard (0: no guard).
	conns int
}

// MakespanGuard is implemented by the policies that put the makespan
// guard above their ranking: a ready server whose serial time W(s) is at
// least the run's estimated remaining crawl time is served before any
// other, the one with the largest W(s) first (see the package doc).
// Performance, Quality and Capacity implement it; BreadthFirst does not.
type MakespanGuard interface {
	// MakespanGuard reports whether the guard applies.
	MakespanGuard() bool
}

// serialEstimate is W(s) = n·(d + r) + (k−1)·D: the time the server's n
// queued URLs take one after another, with d the politeness delay between
// its requests, r its smoothed response time (the run's mean, or
// DefaultTimeEstimate, while unmeasured), D the delay between its
// connections (DelayBetweenConnections; else 0) and k = ⌈n/P⌉ the
// connections they need.
func serialEstimate(st ServerStats, queued int, reqDelay, connDelay time.Duration, e estimate) time.Duration {
	if queued <= 0 {
		return 0
	}
	r := st.ResponseTime
	if r <= 0 {
		r = cmp0(e.meanResponse, DefaultTimeEstimate)
	}
	w := time.Duration(queued) * (reqDelay + r)
	if connDelay > 0 {
		p := sessionEstimate(st, queued, reqDelay, e)
		w += time.Duration((queued+p-1)/p-1) * connDelay
	}
	return w
}

// sessionEstimate is P(s,i): min(RequestsPerConnection learnt, or 50,
// queued URLs), at least 1; 1 with keep-alive off or when the politeness
// delay is longer than the worker holds a connection.
func sessionEstimate(st ServerStats, queued int, delay time.Duration, e estimate) int {
	p := DefaultRequestsPerConnection
	if st.RequestsPerConnection > 0 {
		p = max(1, int(math.Round(st.RequestsPerConnection)))
	}
	if e.keepAliveOff || delay > e.hold {
		p = 1
	}
	return max(1, min(p, queued))
}

// timeEstimate is T(s,i) for a session of p URLs (see the package doc):
// 2·ConnectTime + p·ResponseTime/g + (p−1)·Delay, g = KeepAliveGain when
// p > 1 (else 1), divided by the share of the server's requests that did
// not fail, (Requests+1)/(Requests+Exceptions+1). Unmeasured times take
// the run's mean, or DefaultTimeEstimate.
func timeEstimate(st ServerStats, p int, delay time.Duration, e estimate) time.Duration {
	c, r := st.ConnectTime, st.ResponseTime
	if c <= 0 {
		c = cmp0(e.meanConnect, DefaultTimeEstimate)
	}
	if r <= 0 {
		r = cmp0(e.meanResponse, DefaultTimeEstimate)
	}
	gain := 1.0
	if p > 1 {
		gain = KeepAliveGain
	}
	t := 2*float64(c) + float64(p)*float64(r)/gain + float64(p-1)*float64(delay)
	ok := float64(st.Requests+1) / float64(st.Requests+st.Exceptions+1)
	return time.Duration(t / ok)
}

// cmp0 returns d, or def when d is not positive.
func cmp0(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// BreadthFirst is the baseline policy (the paper's breadth-first, and
// what Nutch's fetcher does): each server's URLs in fetch-list order,
// servers in the order they become ready, no limit on a session.
type BreadthFirst struct{}

// Name implements Policy.
func (BreadthFirst) Name() string { return "breadth-first" }

// LessURL implements Policy: arrival order.
func (BreadthFirst) LessURL(a, b *Request) bool { return false }

// RankServer implements Policy: all equal, so first ready, first served.
func (BreadthFirst) RankServer(ServerInfo) float64 { return 0 }

// SessionLimit implements Policy: no limit.
func (BreadthFirst) SessionLimit(ServerInfo) int { return 0 }

// Performance is the paper's performance-first policy: servers by
// R(s,i) = P(s,i)/T(s,i), the pages per second a connection to them is
// expected to yield; URLs in arrival order; a session fetches at most P.
type Performance struct{}

// Name implements Policy.
func (Performance) Name() string { return "performance" }

// LessURL implements Policy: arrival order.
func (Performance) LessURL(a, b *Request) bool { return false }

// RankServer implements Policy: R = P/T, in pages per second.
func (Performance) RankServer(s ServerInfo) float64 {
	return float64(s.Session) / max(s.Time.Seconds(), 1e-9)
}

// SessionLimit implements Policy: P.
func (Performance) SessionLimit(s ServerInfo) int { return max(1, s.Session) }

// MakespanGuard implements MakespanGuard: the guard applies.
func (Performance) MakespanGuard() bool { return true }

// Quality is the paper's quality-first policy: URLs by Priority, highest
// first; servers by the Priority of their best URL; a session fetches at
// most P, so that servers are ranked again as their best URLs go.
type Quality struct{}

// Name implements Policy.
func (Quality) Name() string { return "quality" }

// LessURL implements Policy: higher Priority first.
func (Quality) LessURL(a, b *Request) bool { return a.Priority > b.Priority }

// RankServer implements Policy: the Priority of the best URL.
func (Quality) RankServer(s ServerInfo) float64 {
	if s.Head == nil {
		return math.Inf(-1)
	}
	return s.Head.Priority
}

// SessionLimit implements Policy: P.
func (Quality) SessionLimit(s ServerInfo) int { return max(1, s.Session) }

// MakespanGuard implements MakespanGuard: the guard applies.
func (Quality) MakespanGuard() bool { return true }

// Capacity is the paper's crawl-capacity policy: servers by
// C(s,i) = (sum of the Priorities of the P(s,i) best URLs)/T(s,i), the
// quality per second a connection to them is expected to yield; URLs by
// Priority, highest first; a session fetches at most P.
type Capacity struct{}

// Name implements Policy.
func (Capacity) Name() string { return "capacity" }

// LessURL implements Policy: higher Priority first.
func (Capacity) LessURL(a, b *Request) bool { return a.Priority > b.Priority }

// RankServer implements Policy: C = sum of the P best Priorities / T.
func (Capacity) RankServer(s ServerInfo) float64 {
	return s.SumPriorities(s.Session) / max(s.Time.Seconds(), 1e-9)
}

// SessionLimit implements Policy: P.
func (Capacity) SessionLimit(s ServerInfo) int { return max(1, s.Session) }

// MakespanGuard implements MakespanGuard: the guard applies.
func (Capacity) MakespanGuard() bool { return true }

// PolicyNames lists the names PolicyByName knows, the default first.
func PolicyNames() []string {
	return []string{"breadth-first", "performance", "quality", "capacity"}
}

// PolicyByName returns the policy called name (see PolicyNames; "" is
// the default, breadth-first).
func PolicyByName(name string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "breadth-first":
		return BreadthFirst{}, nil
	case "performance":
		return Performance{}, nil
	case "quality":
		return Quality{}, nil
	case "capacity":
		return Capacity{}, nil
	}
	return nil, fmt.Errorf("fetcher: unknown policy %q (want one of %s)", name, strings.Join(PolicyNames(), ", "))
}
