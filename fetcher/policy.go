package fetcher

import "time"

// Policy decides the order of work in a fetcher's two-level queue: which
// waiting URL of a server goes first, which ready server gets the next
// free connection, and how many URLs a connection fetches before its
// server goes back to the queue. A policy sees servers only when they are
// ready (their politeness delay has passed) and not being served, and is
// called under the scheduler's lock: it must be quick and must not call
// back into the fetcher.
//
// The high-performance scheduling policies of the next issue
// (performance-first, quality-first, crawl capacity) are Policies; the
// fetcher already keeps the measurements they rank by (ServerStats).
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
	// the server is queued again (0: no limit; the session also ends when
	// the server closes the connection, its queue is empty, or its next
	// turn is further away than Options.HoldConnection).
	SessionLimit(s ServerInfo) int
}

// ServerInfo is what a Policy knows of a server.
type ServerInfo struct {
	// Host is the server's key: the host name in lower case, without
	// port (politeness is per host, whatever the scheme or port).
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
	// connection served before the server closed it (0 until one closed).
	RequestsPerConnection float64
	// ConnectTime is the smoothed time to resolve and connect;
	// ResponseTime the smoothed time from sending a request to having its
	// body.
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
