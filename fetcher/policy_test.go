package fetcher

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPolicyByName(t *testing.T) {
	for _, n := range PolicyNames() {
		p, err := PolicyByName(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Name() != n {
			t.Errorf("PolicyByName(%q).Name() = %q", n, p.Name())
		}
	}
	if p, err := PolicyByName(""); err != nil || p.Name() != "breadth-first" {
		t.Errorf(`PolicyByName("") = %v, %v; want breadth-first`, p, err)
	}
	if _, err := PolicyByName("fastest"); err == nil {
		t.Error("an unknown policy is accepted")
	}
	for in, want := range map[string]QueueMode{"": QueueByHost, "host": QueueByHost, "ip": QueueByIP, "byIP": QueueByIP} {
		if m, err := ParseQueueMode(in); err != nil || m != want {
			t.Errorf("ParseQueueMode(%q) = %v, %v; want %v", in, m, err, want)
		}
	}
	if _, err := ParseQueueMode("domain"); err == nil {
		t.Error("queue mode domain is accepted")
	}
	for in, want := range map[string]DelayBetween{"": DelayBetweenRequests, "request": DelayBetweenRequests,
		"Connection": DelayBetweenConnections, "connections": DelayBetweenConnections} {
		if m, err := ParseDelayBetween(in); err != nil || m != want || (in != "" && !strings.HasPrefix(strings.ToLower(in), m.String())) {
			t.Errorf("ParseDelayBetween(%q) = %v, %v; want %v", in, m, err, want)
		}
	}
	if _, err := ParseDelayBetween("session"); err == nil {
		t.Error("politeness mode session is accepted")
	}
}

// TestEstimates checks P(s,i) and T(s,i) against the formula of the
// package doc.
func TestEstimates(t *testing.T) {
	ms := time.Millisecond
	e := estimate{}
	// P: 50 for a new server, the learnt value, the queue's length, 1
	// without keep-alive or when the delay is longer than the hold.
	cases := []struct {
		rpc    float64
		queued int
		delay  time.Duration
		e      estimate
		want   int
	}{
		{0, 1000, 0, e, 50},
		{0, 7, 0, e, 7},
		{9.6, 1000, 0, e, 10},
		{1, 1000, 0, e, 1},
		{0, 1000, 0, estimate{keepAliveOff: true}, 1},
		{0, 1000, time.Second, estimate{hold: 500 * ms}, 1},
		{0, 1000, time.Second, estimate{hold: 2 * time.Second}, 50},
		{0, 0, 0, e, 1},
	}
	for i, c := range cases {
		if got := sessionEstimate(ServerStats{RequestsPerConnection: c.rpc}, c.queued, c.delay, c.e); got != c.want {
			t.Errorf("case %d: P = %d, want %d", i, got, c.want)
		}
	}
	// T = 2c + P·r/1.2 + (P−1)·delay for P > 1; 2c + r for P = 1.
	st := ServerStats{ConnectTime: 10 * ms, ResponseTime: 12 * ms, Requests: 5}
	if got, want := timeEstimate(st, 10, 0, e), 20*ms+100*ms; !near(got, want) {
		t.Errorf("T(P=10) = %v, want %v", got, want)
	}
	if got, want := timeEstimate(st, 1, 0, e), 20*ms+12*ms; !near(got, want) {
		t.Errorf("T(P=1) = %v, want %v", got, want)
	}
	if got, want := timeEstimate(st, 10, 100*ms, e), 20*ms+100*ms+900*ms; !near(got, want) {
		t.Errorf("T(P=10, delay 100ms) = %v, want %v", got, want)
	}
	// Exceptions: 5 requests and 6 exceptions double T.
	bad := st
	bad.Exceptions = 6
	if got, want := timeEstimate(bad, 10, 0, e), 2*(20*ms+100*ms); !near(got, want) {
		t.Errorf("T with exceptions = %v, want %v", got, want)
	}
	// Unmeasured times: the run's means, else 100 ms.
	if got, want := timeEstimate(ServerStats{}, 1, 0, e), 300*ms; !near(got, want) {
		t.Errorf("T unmeasured = %v, want %v", got, want)
	}
	withMeans := estimate{meanConnect: 5 * ms, meanResponse: 30 * ms}
	if got, want := timeEstimate(ServerStats{}, 1, 0, withMeans), 40*ms; !near(got, want) {
		t.Errorf("T unmeasured with run means = %v, want %v", got, want)
	}
}

func near(a, b time.Duration) bool { return math.Abs(float64(a-b)) <= float64(time.Microsecond) }

// TestSumTop: the sum of the n first URLs in heap order equals the sum
// of the n first after sorting, for the priority and the arrival orders.
func TestSumTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Policy{Capacity{}, BreadthFirst{}} {
		for trial := range 200 {
			q := urlQueue{policy: p}
			n := rng.IntN(300)
			for i := range n {
				q.Push(&item{req: Request{Priority: math.Floor(rng.Float64() * 20)}, seq: uint64(i)})
			}
			heap.Init(&q)
			sorted := slices.Clone(q.items)
			slices.SortFunc(sorted, func(a, b *item) int {
				x, y := &urlQueue{items: []*item{a, b}, policy: p}, 0
				if x.Less(0, 1) {
					y = -1
				} else if x.Less(1, 0) {
					y = 1
				}
				return y
			})
			for _, k := range []int{0, 1, 2, 5, 50, n - 1, n, n + 3} {
				want := 0.0
				for _, it := range sorted[:max(0, min(k, n))] {
					want += it.req.Priority
				}
				if got := q.sumTop(k); got != want {
					t.Fatalf("%s trial %d: sumTop(%d) of %d = %v, want %v", p.Name(), trial, k, n, got, want)
				}
			}
		}
	}
}

// schedFixture is a scheduler with servers s0, s1, ... whose URLs have
// the given priorities, and stats set directly.
func schedFixture(t testing.TB, p Policy, prios [][]float64, stats []ServerStats) *scheduler {
	t.Helper()
	sc := newScheduler(p, 0)
	for h, ps := range prios {
		host := fmt.Sprintf("s%d.test", h)
		for i, pr := range ps {
			raw := fmt.Sprintf("http://%s/%d", host, i)
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			sc.add(Request{URL: raw, Priority: pr}, u, host)
		}
		if stats != nil {
			st := stats[h]
			sc.servers[host].stats = st
			if st.ConnectTime > 0 {
				updateMean(&sc.sumConnect, &sc.nConnect, 0, st.ConnectTime)
			}
			if st.ResponseTime > 0 {
				updateMean(&sc.sumResponse, &sc.nResponse, 0, st.ResponseTime)
			}
		}
		sc.rew(sc.servers[host])
	}
	sc.start()
	return sc
}

// acquireOrder acquires every server and returns their hosts in order.
func acquireOrder(sc *scheduler) []string {
	var out []string
	for range len(sc.order) {
		s := sc.acquire(context.Background())
		out = append(out, s.host)
	}
	return out
}

// urlOrder pops a held server's URLs and returns their priorities.
func urlOrder(sc *scheduler, s *server) []float64 {
	var out []float64
	for it := sc.pop(s); it != nil; it = sc.pop(s) {
		out = append(out, it.req.Priority)
	}
	return out
}

// TestPolicyOrder: each policy's server and URL order, with measurements
// set on the scheduler's servers.
func TestPolicyOrder(t *testing.T) {
	ms := time.Millisecond
	fast := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 10 * ms}
	slow := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 800 * ms}
	http10 := ServerStats{Connections: 10, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 10 * ms, RequestsPerConnection: 1}
	failing := fast
	failing.Exceptions = 30
	many := func(n int, p float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	// s0: slow, one very good URL. s1: fast, many fair URLs. s2: fast
	// but HTTP/1.0. s3: fast but failing. s4: fast, few poor URLs.
	prios := [][]float64{{0.1, 9, 0.2}, many(40, 1), many(40, 1), many(40, 1), {0.5, 0.1, 0.3}}
	stats := []ServerStats{slow, fast, http10, failing, fast}
	cases := []struct {
		p    Policy
		want []string
	}{
		{BreadthFirst{}, []string{"s0", "s1", "s2", "s3", "s4"}},
		// R = P/T: s1 (40 URLs over one fast connection, 119 pages/s)
		// first; s4 has 3 URLs (103/s); s2 pays a connection per URL
		// (71/s); the failing s3's T is stretched by its 30 exceptions
		// in 40 requests (32/s); s0's 800 ms responses last (1.5/s).
		{Performance{}, []string{"s1", "s4", "s2", "s3", "s0"}},
		// Best URL: s0's 9, then the 1s in order of arrival, s4's 0.5.
		{Quality{}, []string{"s0", "s1", "s2", "s3", "s4"}},
		// C = sum of the P best / T: s1's 40 in 337 ms (119/s), s2's 1
		// in 14 ms (71/s), failing s3's 40 in 1.26 s (31.8/s), s4's 0.9
		// in 29 ms (31.0/s); s0's 9.3, its best, spread over 800 ms
		// responses (4.6/s), last.
		{Capacity{}, []string{"s1", "s2", "s3", "s4", "s0"}},
	}
	for _, c := range cases {
		sc := schedFixture(t, c.p, prios, stats)
		var got []string
		for _, h := range acquireOrder(sc) {
			got = append(got, h[:2])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: servers in order %v, want %v", c.p.Name(), got, c.want)
			for _, s := range sc.order {
				i := sc.info(s)
				t.Logf("  %s P=%d T=%v rank=%.3f", s.host, i.Session, i.Time, c.p.RankServer(i))
			}
		}
		s0 := sc.servers["s0.test"]
		order := urlOrder(sc, s0)
		want := []float64{0.1, 9, 0.2}
		if _, byPrio := c.p.(Quality); byPrio {
			want = []float64{9, 0.2, 0.1}
		} else if _, byPrio := c.p.(Capacity); byPrio {
			want = []float64{9, 0.2, 0.1}
		}
		if !slices.Equal(order, want) {
			t.Errorf("%s: URLs in order %v, want %v", c.p.Name(), order, want)
		}
	}
}

// TestSlowServerLast: under performance and capacity a server measured
// slow is never ranked above fast ones, however many URLs it has; an
// unmeasured server is ranked by the run's means, between them.
func TestSlowServerLast(t *testing.T) {
	ms := time.Millisecond
	for _, p := range []Policy{Performance{}, Capacity{}} {
		prios := [][]float64{}
		stats := []ServerStats{}
		for i := range 10 {
			st := ServerStats{Connections: 1, Requests: 5, ConnectTime: ms, ResponseTime: time.Duration(i+1) * 20 * ms}
			if i == 0 {
				st.ResponseTime = 5 * time.Second // the slow one, first in the list
			}
			if i == 9 {
				st = ServerStats{} // not measured yet
			}
			prios = append(prios, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
			stats = append(stats, st)
		}
		sc := schedFixture(t, p, prios, stats)
		got := acquireOrder(sc)
		if got[len(got)-1] != "s0.test" {
			t.Errorf("%s: slow server not last: %v", p.Name(), got)
		}
		if i := slices.Index(got, "s9.test"); i == 0 || i == len(got)-1 {
			t.Errorf("%s: the unmeasured server is at %d of %v", p.Name(), i, got)
		}
	}
}

// sumWOf recomputes the run's sum of W from every server, for checking
// the incremental sum.
func sumWOf(sc *scheduler) time.Duration {
	var sum time.Duration
	for _, s := range sc.order {
		if s.fate == fateNone {
			req, conn := sc.delays(s)
			sum += serialEstimate(s.stats, s.queue.Len(), req, conn, sc.estimates())
		}
	}
	return sum
}

// TestMakespanGuard: under the ranking policies a server whose serial
// time W is at least the remaining crawl time (sum of W over the
// connections) goes first, the longest first; below that threshold, and
// under breadth-first, the policy's order stands.
func TestMakespanGuard(t *testing.T) {
	ms := time.Millisecond
	fast := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 20 * ms}
	slow := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 2 * time.Second}
	many := func(n int, p float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	// s0: slow, 15 poor URLs, W = 30 s. s1..s9: fast, 10 good URLs
	// each, W = 0.2 s. Sum 31.8 s.
	prios := [][]float64{many(15, 0.1)}
	stats := []ServerStats{slow}
	for range 9 {
		prios = append(prios, many(10, 1))
		stats = append(stats, fast)
	}
	for _, p := range []Policy{Performance{}, Quality{}, Capacity{}, BreadthFirst{}} {
		for _, c := range []struct {
			conns int
			first bool // s0 first
		}{
			{0, false}, // no guard without the connection count
			{1, false}, // 30 s < 31.8 s: not urgent
			{4, true},  // 30 s >= 7.95 s
			{64, true},
		} {
			sc := schedFixture(t, p, prios, stats)
			sc.est.conns = c.conns
			if got, want := sc.sumW, 31800*ms; got != want || sumWOf(sc) != want {
				t.Fatalf("sum of W = %v (recomputed %v), want %v", got, sumWOf(sc), want)
			}
			got := acquireOrder(sc)
			_, bf := p.(BreadthFirst)
			want := c.first && !bf
			if (got[0] == "s0.test") != want && !bf {
				t.Errorf("%s, %d connections: order %v; s0 first: %v, want %v", p.Name(), c.conns, got, got[0] == "s0.test", want)
			}
			if bf && got[0] != "s0.test" {
				t.Errorf("breadth-first, %d connections: order %v, want the fetch list's", c.conns, got)
			}
			if !bf && !c.first && got[len(got)-1] != "s0.test" {
				t.Errorf("%s, %d connections: the slow server is not last without the guard: %v", p.Name(), c.conns, got)
			}
		}
	}

	// Two urgent servers: the longest first, then the policy's order.
	prios2 := append([][]float64{many(5, 0.1), many(12, 0.1)}, prios[1:]...)
	stats2 := append([]ServerStats{slow, slow}, stats[1:]...)
	sc := schedFixture(t, Capacity{}, prios2, stats2)
	sc.est.conns = 8
	got := acquireOrder(sc)
	if got[0] != "s1.test" || got[1] != "s0.test" {
		t.Errorf("two urgent servers: order %v, want s1 (24 s) then s0 (10 s) first", got)
	}

	// keep: a held server that is not urgent gives way to an urgent
	// ready one; an urgent held one is kept.
	sc = schedFixture(t, Capacity{}, prios, stats)
	s := sc.acquire(context.Background()) // no connection count: s1
	if s.host == "s0.test" {
		t.Fatal("s0 acquired first without the guard")
	}
	if !sc.keep(s) {
		t.Error("the best server is not kept without the guard")
	}
	sc.mu.Lock()
	sc.est.conns = 4
	sc.mu.Unlock()
	if sc.keep(s) {
		t.Error("a server is kept while an urgent one is ready")
	}
	s0 := sc.acquire(context.Background())
	if s0.host != "s0.test" {
		t.Fatalf("acquired %s, want the urgent s0", s0.host)
	}
	if !sc.keep(s0) {
		t.Error("an urgent held server is not kept")
	}

	// The incremental sum follows pops, answers, delays, drops.
	it := sc.pop(s0)
	sc.answered(s0, time.Second, 100, true, false, false, 0)
	sc.setCrawlDelay(s0, 3*time.Second)
	sc.unpop(s0, it)
	sc.pop(s)
	sc.drop(s, "skipped: a test")
	if sc.sumW != sumWOf(sc) {
		t.Errorf("incremental sum of W %v, recomputed %v", sc.sumW, sumWOf(sc))
	}
}

// TestKeep: a held server whose session ended goes on with its worker
// only while no ready server ranks above it.
func TestKeep(t *testing.T) {
	ms := time.Millisecond
	fast := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 10 * ms}
	slow := ServerStats{Connections: 1, Requests: 10, ConnectTime: 2 * ms, ResponseTime: 500 * ms}
	sc := schedFixture(t, Performance{}, [][]float64{{1, 1, 1}, {1, 1, 1}}, []ServerStats{fast, slow})
	s := sc.acquire(context.Background())
	if s.host != "s0.test" {
		t.Fatalf("acquired %s first", s.host)
	}
	if !sc.keep(s) {
		t.Error("the best server is not kept")
	}
	// s0 becomes slow (an HTTP/1.0 server taking 2 s): s1 is better.
	sc.mu.Lock()
	s.stats.ResponseTime, s.stats.RequestsPerConnection = 2*time.Second, 1
	sc.mu.Unlock()
	if sc.keep(s) {
		t.Error("a server ranked below a ready one is kept")
	}
	// Its queue empty, a server is never kept.
	other := sc.acquire(context.Background())
	urlOrder(sc, other)
	if sc.keep(other) {
		t.Error("a server with no URLs is kept")
	}
	// Breadth-first: a tie keeps the holder.
	sc = schedFixture(t, BreadthFirst{}, [][]float64{{1, 1}, {1, 1}}, nil)
	if s := sc.acquire(context.Background()); !sc.keep(s) {
		t.Error("breadth-first: a tie does not keep the server")
	}
	// A turn further away than the hold time ends the session.
	sc = schedFixture(t, BreadthFirst{}, [][]float64{{1, 1}}, nil)
	s = sc.acquire(context.Background())
	sc.mu.Lock()
	s.next = time.Now().Add(time.Hour)
	sc.mu.Unlock()
	if sc.keep(s) {
		t.Error("a server an hour from its turn is kept")
	}
}

// BenchmarkAcquire: one scheduling step (acquire the best ready server,
// take a URL, record the answer, release it) with 10,000 servers of 20
// URLs each, for each policy.
func BenchmarkAcquire(b *testing.B) {
	for _, name := range PolicyNames() {
		b.Run(name, func(b *testing.B) {
			p, _ := PolicyByName(name)
			rng := rand.New(rand.NewPCG(3, 4))
			sc := newScheduler(p, 0)
			const servers, urls = 10000, 20
			for h := range servers {
				host := fmt.Sprintf("h%d.test", h)
				for i := range urls {
					raw := fmt.Sprintf("http://%s/%d", host, i)
					u, _ := url.Parse(raw)
					sc.add(Request{URL: raw, Priority: rng.Float64()}, u, host)
				}
				s := sc.servers[host]
				s.stats = ServerStats{Connections: 1, Requests: 1, ConnectTime: time.Duration(1+rng.IntN(50)) * time.Millisecond,
					ResponseTime: time.Duration(1+rng.IntN(500)) * time.Millisecond, RequestsPerConnection: float64(1 + rng.IntN(100))}
			}
			sc.start()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				s := sc.acquire(ctx)
				if s == nil {
					b.Fatal("no server")
				}
				it := sc.pop(s)
				sc.answered(s, time.Duration(1+i%300)*time.Millisecond, 1000, true, false, false, 0)
				if s.queue.Len() < urls/2 {
					sc.unpop(s, it) // keep the queues from running dry
				}
				sc.release(s)
			}
		})
	}
}

// BenchmarkSumTop: the sum of the 50 best priorities of one server's
// queue costs the same whatever the queue's length.
func BenchmarkSumTop(b *testing.B) {
	for _, n := range []int{100, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("queue=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(7, 8))
			q := urlQueue{policy: Capacity{}}
			for i := range n {
				q.Push(&item{req: Request{Priority: rng.Float64()}, seq: uint64(i)})
			}
			heap.Init(&q)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				q.sumTop(DefaultRequestsPerConnection)
			}
		})
	}
}
