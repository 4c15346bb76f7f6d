package main

import (
	"slices"
	"time"

	"github.com/trawl/trawl/simweb"
)

// serverTime is what a fetch's requests cost the servers, from the access
// log: the time each request held its connection on the server side (from
// its headers to the end of its response: the host's latency and the
// transfer). Any schedule of the same requests over the same number of
// connections needs at least this much connection time, whatever it does
// between requests.
type serverTime struct {
	total time.Duration // summed over all requests
	// hosts holds, per host, its summed request time and its pages
	// answered 200.
	hosts []hostTime
}

type hostTime struct {
	busy  time.Duration
	reqs  int
	pages int
}

// serverTimeOf sums the request times of a fetch's access-log entries.
func serverTimeOf(entries []simweb.Access) serverTime {
	by := map[string]*hostTime{}
	var st serverTime
	for _, a := range entries {
		if a.Host == "" {
			continue
		}
		h := by[a.Host]
		if h == nil {
			h = &hostTime{}
			by[a.Host] = h
		}
		d := max(a.End.Sub(a.Start), 0)
		h.busy += d
		h.reqs++
		st.total += d
		if a.Status == 200 && a.Path != "/robots.txt" && a.Path != robotsMainPath {
			h.pages++
		}
	}
	for _, h := range by {
		st.hosts = append(st.hosts, *h)
	}
	slices.SortFunc(st.hosts, func(a, b hostTime) int { return cmpFloat(perPage(a), perPage(b)) })
	return st
}

// perPage is a host's request time per page answered 200 (its robots.txt
// and other requests included).
func perPage(h hostTime) float64 {
	if h.pages == 0 {
		return float64(h.busy) * 1e12
	}
	return float64(h.busy) / float64(h.pages)
}

// makespanBound is a lower bound on the crawl time of any schedule of the
// same requests over conns connections, one per host: the connections
// must carry the total request time, and each host's requests run one
// after another: max(total/conns, longest host).
func (st serverTime) makespanBound(conns int) time.Duration {
	return max(st.total/time.Duration(max(conns, 1)), st.longestHost())
}

// longestHost is the largest summed request time of one host.
func (st serverTime) longestHost() time.Duration {
	var b time.Duration
	for _, h := range st.hosts {
		b = max(b, h.busy)
	}
	return b
}

// pagesBound is an upper bound on the pages answered 200 that any
// schedule over conns connections, one per host, can have by time t,
// knowing every host's speed in advance: the connections carry at most
// conns·t of request time, each host at most t of its own, and the
// cheapest pages per second of request time come first (a host's pages
// cost its request time per page, robots.txt and failures included). It
// relaxes the problem (hosts can be split, no gaps between requests), so
// no schedule does better.
func (st serverTime) pagesBound(conns int, t time.Duration) float64 {
	budget := float64(conns) * float64(t)
	got := 0.0
	for _, h := range st.hosts { // cheapest per page first
		if h.pages == 0 || budget <= 0 {
			continue
		}
		cost := perPage(h)
		use := min(float64(h.busy), float64(t), budget)
		got += use / cost
		budget -= use
	}
	return got
}

// pagesAt is the number of pages answered 200 by time t of a run's curve.
func (r policyRun) pagesAt(t time.Duration) int64 {
	var n int64
	for _, p := range r.curve {
		if p.t > t {
			break
		}
		n = p.pages
	}
	return n
}
