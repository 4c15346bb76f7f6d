package jobs

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/trawl/trawl/simweb"
)

// TestFetchSchedulingOptions: the fetcher's policy, queue mode and
// keep-alive options reach every task: with keep-alive off no connection
// serves two requests; by IP (every simweb host is on one address here)
// no two requests of the task overlap; and every policy fetches the same
// pages.
func TestFetchSchedulingOptions(t *testing.T) {
	fw := serveFetchWeb(t, 17, 8, 120)
	var urls []string
	for u, id := range fw.pages() {
		if fw.role(id) == simweb.RoleNormal && fw.web.Page(id).Kind.IsContent() && fw.web.Page(id).RobotsAllowed {
			urls = append(urls, u)
		}
	}
	slices.Sort(urls)
	var fetched []int64
	for _, c := range []struct {
		policy, mode string
		noKeepAlive  bool
		politeness   string
	}{
		{"breadth-first", "host", true, ""},
		{"performance", "ip", false, ""},
		{"quality", "", false, ""},
		{"capacity", "host", false, ""},
		{"capacity", "host", false, "connection"},
	} {
		env := testEnv(t)
		parts := 2
		if c.mode == "ip" {
			// Politeness by IP holds within a task: generate partitions
			// by host, so one part keeps all the hosts in one fetcher.
			parts = 1
		}
		gen := generateAll(t, env, urls, fw.now, parts)
		mark := fw.srv.AccessLog().Len()
		o := fw.fetchOpts(gen.Segment)
		o.Policy, o.QueueMode, o.DisableKeepAlive = c.policy, c.mode, c.noKeepAlive
		if c.politeness != "" {
			// With a delay between requests a connection serves one
			// request (robots.txt redirects aside); between connections
			// a session goes on over its connection.
			o.Politeness, o.ServerDelay, o.NoServerDelay = c.politeness, 100*time.Millisecond, false
		}
		res, err := Fetch(context.Background(), env, o)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		fetched = append(fetched, res.Fetched)
		t.Logf("%+v: %d fetched in %v", c, res.Fetched, res.Duration)
		es := fw.srv.AccessLog().Since(mark)
		if c.noKeepAlive {
			for h, hs := range simweb.Stats(es) {
				if hs.MaxPerConn != 1 {
					t.Errorf("%+v: %s: %d requests on a connection", c, h, hs.MaxPerConn)
				}
			}
		}
		if c.politeness == "connection" {
			reqs, conns := 0, 0
			for _, hs := range simweb.Stats(es) {
				reqs, conns = reqs+hs.Requests, conns+hs.Connections
			}
			t.Logf("%+v: %d requests over %d connections", c, reqs, conns)
			if reqs < 2*conns {
				t.Errorf("%+v: with a delay between connections, %d requests over %d connections; want sessions of several requests", c, reqs, conns)
			}
		}
		if c.mode == "ip" {
			sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
			for i := 1; i < len(es); i++ {
				if es[i].Start.Before(es[i-1].End) {
					t.Errorf("%+v: %s%s and %s%s overlap", c, es[i-1].Host, es[i-1].Path, es[i].Host, es[i].Path)
				}
			}
		}
	}
	for _, n := range fetched {
		if n != fetched[0] || n < int64(len(urls))/2 {
			t.Errorf("pages fetched per run %v of %d URLs", fetched, len(urls))
			break
		}
	}
	// Unknown names are errors before any work.
	env := testEnv(t)
	gen := generateAll(t, env, urls[:1], fw.now, 1)
	for _, o := range []FetchOptions{{Policy: "fastest"}, {QueueMode: "domain"}, {Politeness: "session"}, {ThroughputThreshold: -1}} {
		o.Segment, o.Agent = gen.Segment, "x"
		if _, err := Fetch(context.Background(), env, o); err == nil {
			t.Errorf("Fetch with %+v succeeded", o)
		}
	}
}
