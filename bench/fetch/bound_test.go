package main

import (
	"math"
	"testing"
	"time"

	"github.com/trawl/trawl/simweb"
)

func TestServerTimeBounds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := func(host, path string, status int32, start, d time.Duration) simweb.Access {
		return simweb.Access{Host: host, Path: path, Status: status, Start: t0.Add(start), End: t0.Add(start + d)}
	}
	ms := time.Millisecond
	entries := []simweb.Access{
		// fast: robots + 3 pages of 10 ms each: 40 ms, 3 pages.
		req("fast", "/robots.txt", 200, 0, 10*ms), req("fast", "/a", 200, 10*ms, 10*ms),
		req("fast", "/b", 200, 20*ms, 10*ms), req("fast", "/c", 200, 30*ms, 10*ms),
		// slow: robots + 2 pages of 100 ms, one a 404: 300 ms, 1 page.
		req("slow", "/robots.txt", 200, 0, 100*ms), req("slow", "/a", 200, 100*ms, 100*ms),
		req("slow", "/b", 404, 200*ms, 100*ms),
		{Path: "/control", Start: t0, End: t0.Add(time.Second)}, // no host: not counted
	}
	st := serverTimeOf(entries)
	if st.total != 340*ms || len(st.hosts) != 2 {
		t.Fatalf("total %v, %d hosts", st.total, len(st.hosts))
	}
	if h := st.hosts[0]; h.busy != 40*ms || h.pages != 3 || h.reqs != 4 {
		t.Errorf("cheapest host first: %+v", h)
	}
	// One connection: the total; many: the longest host.
	if b := st.makespanBound(1); b != 340*ms {
		t.Errorf("bound over 1 connection %v", b)
	}
	if b := st.makespanBound(64); b != 300*ms {
		t.Errorf("bound over 64 connections %v", b)
	}
	// By 20 ms on one connection: 20 ms of the fast host's 13.3 ms pages.
	if got := st.pagesBound(1, 20*ms); math.Abs(got-1.5) > 1e-9 {
		t.Errorf("pages by 20 ms over 1 connection: %v, want 1.5", got)
	}
	// By 100 ms on 2 connections: all of fast (3 pages, 40 ms), then
	// 100 ms of slow's 300 ms per page.
	if got := st.pagesBound(2, 100*ms); math.Abs(got-(3+1.0/3)) > 1e-9 {
		t.Errorf("pages by 100 ms over 2 connections: %v, want 3.33", got)
	}
	r := policyRun{curve: []curvePoint{{t: 10 * ms, pages: 1}, {t: 30 * ms, pages: 2}, {t: 50 * ms, pages: 3}}}
	if r.pagesAt(29*ms) != 1 || r.pagesAt(30*ms) != 2 || r.pagesAt(time.Second) != 3 || r.pagesAt(0) != 0 {
		t.Error("pagesAt")
	}
}
