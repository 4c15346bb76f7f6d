package fetcher

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// nameURL is page id's URL by host name (resolved by simweb's DNS, which
// answers each host's own address with IPPerHost, else the main
// listener's).
func nameURL(w *simweb.Web, srv *simweb.Server, id int) string {
	p := w.Page(id)
	return "http://" + w.Host(p.Host).Name + ":" + strconv.Itoa(srv.Addressing().Port) + p.Path
}

// TestQueueByIP: with QueueByIP, hosts that resolve to one address are
// one server: one request at a time over all of them, each the politeness
// delay after the previous one ended; hosts on addresses of their own are
// servers of their own. QueueByHost makes a server of every host.
func TestQueueByIP(t *testing.T) {
	const delay = 30 * time.Millisecond
	for _, ipPerHost := range []bool{false, true} {
		t.Run(fmt.Sprintf("ipPerHost=%v", ipPerHost), func(t *testing.T) {
			w, srv := serveWebWith(t, smallWeb(11, 6, 90, 0), simweb.ServeOptions{IPPerHost: ipPerHost})
			var reqs []Request
			hosts := 0
			for h := 0; h < 6 && hosts < 4; h++ {
				ids := hostPages(w, h)
				if len(ids) < 3 {
					continue
				}
				hosts++
				for _, id := range ids[:3] {
					reqs = append(reqs, Request{URL: nameURL(w, srv, id), ID: len(reqs)})
				}
			}
			for _, mode := range []QueueMode{QueueByIP, QueueByHost} {
				mark := srv.AccessLog().Len()
				o := testOptions(t, srv)
				o.QueueMode = mode
				o.ServerDelay, o.NoServerDelay = delay, false
				o.MaxConnections = 8
				res, st := fetchAll(t, o, reqs)
				waitIdle(t, srv)
				for _, q := range reqs {
					if r := res[q.URL]; r == nil || r.Status != crawldb.StatusFetchSuccess {
						t.Errorf("%v: %s: %s", mode, q.URL, summary(r))
					}
				}
				wantServers := hosts
				if mode == QueueByIP && !ipPerHost {
					wantServers = 1
				}
				if st.Servers != wantServers {
					t.Errorf("%v: %d servers, want %d", mode, st.Servers, wantServers)
				}
				if mode != QueueByIP || ipPerHost {
					continue
				}
				// One address: the requests to all hosts never overlap and
				// are the delay apart.
				es := srv.AccessLog().Since(mark)
				sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
				if len(es) != len(reqs)+hosts {
					t.Errorf("%d requests, want %d pages and %d robots.txt", len(es), len(reqs), hosts)
				}
				for i := 1; i < len(es); i++ {
					if gap := es[i].Start.Sub(es[i-1].End); gap < delay {
						t.Errorf("%s%s started %v after %s%s ended, want at least %v",
							es[i].Host, es[i].Path, gap, es[i-1].Host, es[i-1].Path, delay)
					}
				}
			}
		})
	}
}

// TestKeepAliveOff: with DisableKeepAlive every request has a connection
// of its own, and the run still fetches everything.
func TestKeepAliveOff(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(4, 6, 120, 0), 0)
	var reqs []Request
	for h := range 6 {
		for _, id := range hostPages(w, h) {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs)})
		}
	}
	for _, p := range []Policy{BreadthFirst{}, Performance{}} {
		mark := srv.AccessLog().Len()
		o := testOptions(t, srv)
		o.DisableKeepAlive = true
		o.MaxConnections = 4
		o.Policy = p
		res, st := fetchAll(t, o, reqs)
		waitIdle(t, srv)
		if st.Success != int64(len(reqs)) || len(res) != len(reqs) {
			t.Errorf("%s: %d of %d fetched", p.Name(), st.Success, len(reqs))
		}
		for h, hs := range simweb.Stats(srv.AccessLog().Since(mark)) {
			if hs.MaxPerConn != 1 {
				t.Errorf("%s: %s: %d requests on one connection with keep-alive off", p.Name(), h, hs.MaxPerConn)
			}
		}
		if st.Connections != st.Requests+st.RobotsRequests {
			t.Errorf("%s: %d connections for %d requests", p.Name(), st.Connections, st.Requests+st.RobotsRequests)
		}
	}
}

// TestCloseKeepsWorker: a server that closes the connection after every
// response (HTTP/1.0 style), with no politeness delay, is reconnected by
// the same worker while it is still the best choice, rather than sent to
// the back of the queue: with one connection and breadth-first, its URLs
// are all fetched before the next server's.
func TestCloseKeepsWorker(t *testing.T) {
	closing := newRecorder(t, "127.0.5.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		site("")(w, r)
	})
	other := newRecorder(t, "127.0.5.2", site(""))
	var urls []string
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", closing.base, i), fmt.Sprintf("%s/p%d.html", other.base, i))
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, MaxConnections: 1,
		Log: testLog(), NoProgressLog: true}
	res, st := fetchAll(t, o, requests(urls...))
	if st.Success != 10 || len(res) != 10 {
		t.Fatalf("%d of 10 fetched", st.Success)
	}
	var lastClosing, firstOther time.Time
	for _, h := range closing.requests() {
		lastClosing = h.start
	}
	firstOther = other.requests()[0].start
	if !lastClosing.Before(firstOther) {
		t.Errorf("the closing server's URLs were interleaved with the other server's")
	}
	if st.Connections < 6 {
		t.Errorf("%d connections: the closing server should need one per request (6)", st.Connections)
	}
}

// TestPriorityOrder: quality and capacity fetch a server's URLs by
// Priority, highest first; breadth-first in list order.
func TestPriorityOrder(t *testing.T) {
	rec := newRecorder(t, "127.0.5.3", site(""))
	rng := rand.New(rand.NewPCG(5, 6))
	prios := rng.Perm(12)
	var reqs []Request
	for i, p := range prios {
		reqs = append(reqs, Request{URL: fmt.Sprintf("%s/p%02d.html", rec.base, p), ID: i, Priority: float64(p)})
	}
	for _, p := range []Policy{Quality{}, Capacity{}, BreadthFirst{}} {
		before := len(rec.requests())
		o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, Policy: p, Log: testLog(), NoProgressLog: true}
		fetchAll(t, o, reqs)
		var got []string
		for _, h := range rec.requests()[before:] {
			if h.path != "/robots.txt" {
				got = append(got, h.path)
			}
		}
		var want []string
		for _, q := range reqs {
			want = append(want, strings.TrimPrefix(q.URL, rec.base))
		}
		if p.Name() != "breadth-first" {
			slices.Sort(want)
			slices.Reverse(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: fetched %v, want %v", p.Name(), got, want)
		}
	}
}

// TestThroughputThreshold: a run whose throughput stays below the
// threshold ends cleanly: the fast host's URLs are fetched, the slow
// host's not yet fetched are skipped (saying why), and the stats say
// why.
func TestThroughputThreshold(t *testing.T) {
	fast := newRecorder(t, "127.0.5.4", site(""))
	slow := newRecorder(t, "127.0.5.5", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
		site("")(w, r)
	})
	var urls []string
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", fast.base, i))
	}
	for i := range 20 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", slow.base, i))
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, ReadTimeout: 5 * time.Second,
		ThroughputThreshold: 10, ThroughputCheckAfter: 300 * time.Millisecond, ThroughputInterval: 200 * time.Millisecond,
		ThroughputRetries: 3, Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)
	if !st.ThroughputTooLow || st.DeadlineReached {
		t.Errorf("ThroughputTooLow %v, DeadlineReached %v; want true, false", st.ThroughputTooLow, st.DeadlineReached)
	}
	for _, u := range urls[:5] {
		if r := res[u]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("fast host: %s: %s", u, summary(r))
		}
	}
	if st.Unfetched == 0 || st.Unfetched != st.Skipped || len(res) != len(urls) {
		t.Errorf("%d results, %d unfetched, %d skipped of %d URLs", len(res), st.Unfetched, st.Skipped, len(urls))
	}
	for u, r := range res {
		if strings.HasPrefix(u, slow.base) && r.Status != crawldb.StatusFetchSuccess {
			// An abandoned request is skipped, not a failure.
			checkSkipped(t, u, r, "skipped: throughput below the threshold")
		}
	}
}

// TestPrefetchRedirectTargets: a redirect target on a host new to the
// run is given to the Prefetcher before it is queued.
func TestPrefetchRedirectTargets(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(5, 3, 30, 0), 0)
	target := srv.URL(w.Host(1).Home)
	rec := newRecorder(t, "127.0.5.6", func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(rw, r, target, http.StatusMovedPermanently)
			return
		}
		site("")(rw, r)
	})
	for _, mode := range []QueueMode{QueueByHost, QueueByIP} {
		o := testOptions(t, srv)
		pf := &prefetching{Resolver: o.Resolver}
		o.Resolver = pf
		o.FollowRedirects = 1
		o.QueueMode = mode
		res, _ := fetchAll(t, o, requests(rec.base+"/moved", rec.base+"/x.html"))
		if want := []string{w.Host(1).Name}; !slices.Equal(pf.names, want) {
			t.Errorf("%v: prefetched %v, want %v", mode, pf.names, want)
		}
		if r := res[target]; r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Errorf("%v: redirect target %s: %s", mode, target, summary(r))
		}
	}
}

// TestBadInputEveryPolicy: under every policy, hosts that never answer,
// trickle, answer headers a byte a second, reset every connection or do
// not resolve cost a bounded time and get fetch_retry; a redirect loop
// stays bounded with no URL requested twice; and every page of the
// normal hosts is fetched.
func TestBadInputEveryPolicy(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(9, 6, 150, simweb.HazardHostileLinks|simweb.HazardTraps), 0)
	var bad, normal []string
	for h := range w.NumHosts() {
		info := w.Host(h)
		switch info.Role {
		case simweb.RoleBlackhole, simweb.RoleTrickle, simweb.RoleSlowHeaders, simweb.RoleReset, simweb.RoleUnresolvable:
			home := srv.URL(info.Home)
			bad = append(bad, home, home+"a.html")
		case simweb.RoleNormal:
			for _, id := range hostPages(w, h) {
				normal = append(normal, srv.URL(id))
			}
		}
	}
	loop := -1
	for id := range w.NumPages() {
		if w.Page(id).Kind == simweb.KindLoop && w.Page(id).RobotsAllowed {
			loop = id
			break
		}
	}
	if len(bad) != 10 || loop < 0 {
		t.Fatalf("%d bad URLs, loop page %d: pick another seed", len(bad), loop)
	}
	for _, name := range PolicyNames() {
		t.Run(name, func(t *testing.T) {
			mark := srv.AccessLog().Len()
			reqs := requests(append(append(slices.Clone(bad), srv.URL(loop)), normal...)...)
			o := testOptions(t, srv)
			o.Policy, _ = PolicyByName(name)
			o.ReadTimeout, o.ConnectTimeout = time.Second, time.Second
			o.MaxConnections = 8
			o.FollowRedirects = 4
			began := time.Now()
			res, st := fetchAll(t, o, reqs)
			waitIdle(t, srv)
			for _, u := range bad {
				if r := res[u]; r == nil || r.Status != crawldb.StatusFetchRetry || r.Message == "" {
					t.Errorf("%s: %s, want fetch_retry with a message", u, summary(r))
				}
			}
			for _, u := range normal {
				if r := res[u]; r == nil || r.Status != crawldb.StatusFetchSuccess {
					t.Errorf("%s: %s", u, summary(r))
				}
			}
			if r := res[srv.URL(loop)]; r == nil || !r.Code.IsRedirect() {
				t.Errorf("loop %s: %s", srv.URL(loop), summary(r))
			}
			byPath := map[string]int{}
			for _, a := range srv.AccessLog().Since(mark) {
				byPath[a.Host+" "+a.Path]++
			}
			for k, as := range byPath {
				if as > 1 {
					t.Errorf("%s requested %d times", k, as)
				}
			}
			if st.Unfetched != 0 {
				t.Errorf("%d URLs unfetched", st.Unfetched)
			}
			t.Logf("%s: %d results in %v", name, len(res), time.Since(began).Round(time.Millisecond))
		})
	}
}

// BenchmarkFetchPolicy: the fetcher's throughput against simweb (no
// politeness delay, server latency as generated) under each policy.
func BenchmarkFetchPolicy(b *testing.B) {
	w, srv := serveWeb(b, smallWeb(1, 100, 3000, 0), 0.05)
	var reqs []Request
	for id := range w.NumPages() {
		if p := w.Page(id); p.Kind.IsContent() && p.RobotsAllowed {
			reqs = append(reqs, Request{URL: srv.URL(id), ID: len(reqs), Priority: p.PageRank})
		}
	}
	for _, name := range PolicyNames() {
		b.Run(name, func(b *testing.B) {
			o := testOptions(b, srv)
			o.MaxConnections = 32
			o.Policy, _ = PolicyByName(name)
			benchFetch(b, o, reqs)
		})
	}
}
