package fetcher

import (
	"cmp"
	"container/heap"
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"
)

// The two-level queue: every server (host) has a queue of URLs ordered by
// the policy; servers with URLs are either ready (their politeness delay
// has passed; a heap ordered by the policy's rank), waiting (a heap
// ordered by the time of their next turn), or busy (a worker holds them:
// at most one worker, so at most one connection, per server). A worker
// acquires the best ready server, fetches URLs from it over one
// connection, and releases it; the server then waits for its next turn.

// serverState is where a server is in the two-level queue.
type serverState uint8

const (
	stIdle    serverState = iota // no URLs queued, in no heap
	stReady                      // in the ready heap
	stWaiting                    // in the waiting heap
	stBusy                       // held by a worker
)

// fateKind says whether a server still takes URLs.
type fateKind uint8

const (
	fateNone    fateKind = iota
	fateDropped          // its URLs are skipped for the round (fateMsg says why)
	fateFailed           // its URLs all get the same result (fateCode, fateMsg)
)

// item is a queued URL.
type item struct {
	req Request
	u   *url.URL
	seq uint64
}

// urlQueue is a server's URL queue, a heap ordered by the policy, then by
// arrival.
type urlQueue struct {
	items  []*item
	policy Policy
	// scratch is sumTop's candidate heap, kept to spare allocations.
	scratch []int32
}

func (q *urlQueue) Len() int { return len(q.items) }
func (q *urlQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if q.policy.LessURL(&a.req, &b.req) {
		return true
	}
	if q.policy.LessURL(&b.req, &a.req) {
		return false
	}
	return a.seq < b.seq
}
func (q *urlQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }

// sumTop returns the sum of the Priorities of the first n items in heap
// order. It walks the heap best-first with a candidate heap of the
// children of the items taken so far (at most n+1 of them), so it costs
// O(n log n) whatever the queue's length.
func (q *urlQueue) sumTop(n int) float64 {
	if n <= 0 || len(q.items) == 0 {
		return 0
	}
	if n >= len(q.items) {
		sum := 0.0
		for _, it := range q.items {
			sum += it.req.Priority
		}
		return sum
	}
	c := append(q.scratch[:0], 0)
	less := func(a, b int32) bool { return q.Less(int(a), int(b)) }
	sum := 0.0
	for taken := 0; taken < n && len(c) > 0; taken++ {
		top := c[0]
		sum += q.items[top].req.Priority
		// Replace the top by its first child (or the last candidate) and
		// sift down; then push the second child.
		l, r := 2*top+1, 2*top+2
		if int(l) < len(q.items) {
			c[0] = l
		} else {
			c[0] = c[len(c)-1]
			c = c[:len(c)-1]
		}
		siftDown(c, 0, less)
		if int(r) < len(q.items) {
			c = append(c, r)
			siftUp(c, len(c)-1, less)
		}
	}
	q.scratch = c
	return sum
}

// siftDown and siftUp restore a binary min-heap of indices under less.
func siftDown(h []int32, i int, less func(a, b int32) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func siftUp(h []int32, i int, less func(a, b int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}
func (q *urlQueue) Push(x any) { q.items = append(q.items, x.(*item)) }
func (q *urlQueue) Pop() any {
	n := len(q.items)
	it := q.items[n-1]
	q.items[n-1] = nil
	q.items = q.items[:n-1]
	return it
}

// server is one host's state in a run.
type server struct {
	host  string
	state serverState
	queue urlQueue
	// next is the earliest start of the next request (wall clock).
	next time.Time
	// delay is the politeness delay: ServerDelay, or a longer
	// robots.txt Crawl-delay.
	delay      time.Duration
	crawlDelay time.Duration
	robots     map[string]*robotsRules // by origin (scheme://host:port)
	addrs      map[string][]netip.Addr // resolved names
	fate       fateKind
	fateCode   Code
	fateMsg    string
	stats      ServerStats
	connReqs   int // requests on the current connection
	// lastEnd is when the last request to the server ended, for the
	// delay between connections (DelayBetweenConnections).
	lastEnd time.Time
	// failStreak counts exceptions since the last response that was not
	// one; the backoff doubles with it.
	failStreak int
	transport  *http.Transport
	origin     string // scheme://host:port of the last request

	rank  float64 // policy rank when it became ready
	rseq  uint64  // order in which it became ready
	index int     // heap index
	// w is W(s), the serial time of the server's queue, kept up to date
	// (rew) so that the run's sum is O(1); lindex is its index in the
	// scheduler's long heap (-1 if not in it).
	w      time.Duration
	lindex int
}

// info is what the policy knows of s, with the estimates P and T. Caller
// holds mu.
func (sc *scheduler) info(s *server) ServerInfo {
	si := ServerInfo{Host: s.host, Queued: s.queue.Len(), Delay: s.delay, Stats: s.stats, queue: &s.queue,
		Serial: s.w, Remaining: sc.remainingTime()}
	if s.queue.Len() > 0 {
		r := s.queue.items[0].req
		si.Head = &r
	}
	e := sc.estimates()
	req, _ := sc.delays(s)
	si.Session = sessionEstimate(s.stats, si.Queued, req, e)
	si.Time = timeEstimate(s.stats, si.Session, req, e)
	return si
}

// estimates returns the estimate with the run's means. Caller holds mu.
func (sc *scheduler) estimates() estimate {
	e := sc.est
	if sc.nConnect > 0 {
		e.meanConnect = time.Duration(sc.sumConnect / float64(sc.nConnect))
	}
	if sc.nResponse > 0 {
		e.meanResponse = time.Duration(sc.sumResponse / float64(sc.nResponse))
	}
	return e
}

// delays returns the politeness delay between two requests of a session
// of s and the one between two of its connections: (delay, 0), or with
// DelayBetweenConnections (Crawl-delay, delay). Caller holds mu.
func (sc *scheduler) delays(s *server) (req, conn time.Duration) {
	if sc.est.perConnection {
		return s.crawlDelay, s.delay
	}
	return s.delay, 0
}

// rew recomputes W(s) after its queue, delay or measurements changed,
// and the run's sum of W with it, in O(1) (O(log n) when s is ready, to
// fix its place in the long heap). Caller holds mu.
func (sc *scheduler) rew(s *server) {
	var w time.Duration
	if s.fate == fateNone {
		req, conn := sc.delays(s)
		w = serialEstimate(s.stats, s.queue.Len(), req, conn, sc.estimates())
	}
	sc.sumW += w - s.w
	s.w = w
	if s.lindex >= 0 {
		heap.Fix(&sc.long, s.lindex)
	}
}

// remainingTime is the run's estimated remaining crawl time: the sum of
// W over the servers spread over the connections (0 when the number of
// connections is not known). Caller holds mu.
func (sc *scheduler) remainingTime() time.Duration {
	if sc.est.conns <= 0 {
		return 0
	}
	return sc.sumW / time.Duration(sc.est.conns)
}

// urgent reports whether the makespan guard puts s first: the policy
// takes the guard and W(s) is at least the remaining crawl time. Caller
// holds mu.
func (sc *scheduler) urgent(s *server) bool {
	return sc.guard && sc.est.conns > 0 && s.w > 0 && s.w >= sc.remainingTime()
}

// longHeap orders the ready servers of a guarded policy by W, longest
// first, then first ready.
type longHeap []*server

func (h longHeap) Len() int { return len(h) }
func (h longHeap) Less(i, j int) bool {
	if h[i].w != h[j].w {
		return h[i].w > h[j].w
	}
	return h[i].rseq < h[j].rseq
}
func (h longHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].lindex = i; h[j].lindex = j }
func (h *longHeap) Push(x any)   { s := x.(*server); s.lindex = len(*h); *h = append(*h, s) }
func (h *longHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.lindex = -1
	return s
}

// readyHeap orders ready servers: highest rank first, then first ready.
type readyHeap []*server

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank > h[j].rank
	}
	return h[i].rseq < h[j].rseq
}
func (h readyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *readyHeap) Push(x any)   { s := x.(*server); s.index = len(*h); *h = append(*h, s) }
func (h *readyHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}

// waitHeap orders waiting servers by their next turn.
type waitHeap []*server

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h waitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitHeap) Push(x any)        { s := x.(*server); s.index = len(*h); *h = append(*h, s) }
func (h *waitHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}

// scheduler is the two-level queue of one run. Every field of every
// server is guarded by mu.
type scheduler struct {
	mu      sync.Mutex
	closed  *sync.Cond // broadcast when a connection closes
	policy  Policy
	delay   time.Duration // ServerDelay
	servers map[string]*server
	order   []*server // in order of first appearance
	ready   readyHeap
	waiting waitHeap
	// guard is set when the policy takes the makespan guard; long then
	// holds the ready servers by W, and sumW is the sum of every
	// server's W.
	guard bool
	long  longHeap
	sumW  time.Duration
	busy  int
	seq   uint64
	rseq  uint64
	seen  map[string]struct{} // every URL queued in the run
	wake  chan struct{}       // closed (and replaced) when servers change
	// est holds the options the estimates need; sumConnect and
	// sumResponse add up the smoothed times of the nConnect and
	// nResponse servers that have one, for the run's means.
	est                     estimate
	sumConnect, sumResponse float64
	nConnect, nResponse     int
	// keys maps host names to server keys in QueueByIP mode, and
	// hostAddrs to the addresses they resolved to then.
	keys      map[string]string
	hostAddrs map[string][]netip.Addr
}

func newScheduler(p Policy, delay time.Duration) *scheduler {
	s := &scheduler{policy: p, delay: delay, servers: map[string]*server{},
		seen: map[string]struct{}{}, wake: make(chan struct{}), keys: map[string]string{},
		hostAddrs: map[string][]netip.Addr{}}
	s.closed = sync.NewCond(&s.mu)
	if g, ok := p.(MakespanGuard); ok && g.MakespanGuard() {
		s.guard = true
	}
	return s
}

// serverKey returns the server key of host (QueueByIP) and whether it is
// known.
func (sc *scheduler) serverKey(host string) (string, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	k, ok := sc.keys[host]
	return k, ok
}

// setServerKey records the server key of host (QueueByIP) and the
// addresses host resolved to (nil if it did not).
func (sc *scheduler) setServerKey(host, key string, addrs []netip.Addr) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.keys[host] = key
	if addrs != nil {
		sc.hostAddrs[host] = addrs
	}
}

// updateMean replaces a server's old smoothed time by cur in a run sum.
func updateMean(sum *float64, n *int, old, cur time.Duration) {
	if old > 0 {
		*sum -= float64(old)
	} else {
		*n++
	}
	*sum += float64(cur)
}

// serverFor returns the server of host, creating it. Caller holds mu.
func (sc *scheduler) serverFor(host string) *server {
	s := sc.servers[host]
	if s == nil {
		s = &server{host: host, delay: sc.delay, index: -1, lindex: -1, queue: urlQueue{policy: sc.policy}}
		sc.servers[host] = s
		sc.order = append(sc.order, s)
	}
	return s
}

// add queues a fetch-list URL before the run starts. It reports false for
// a URL already queued.
func (sc *scheduler) add(req Request, u *url.URL, host string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if _, dup := sc.seen[req.URL]; dup {
		return false
	}
	sc.seen[req.URL] = struct{}{}
	s := sc.serverFor(host)
	sc.seq++
	heap.Push(&s.queue, &item{req: req, u: u, seq: sc.seq})
	sc.rew(s)
	return true
}

// start makes every server with URLs ready, in order of first appearance.
func (sc *scheduler) start() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.order {
		if s.state == stIdle && s.queue.Len() > 0 {
			sc.schedule(s, time.Now())
		}
	}
}

// schedule puts an idle server with URLs into the ready or waiting heap.
// Caller holds mu.
func (sc *scheduler) schedule(s *server, now time.Time) {
	if s.next.After(now) {
		s.state = stWaiting
		heap.Push(&sc.waiting, s)
		return
	}
	s.state = stReady
	s.rank = sc.policy.RankServer(sc.info(s))
	sc.rseq++
	s.rseq = sc.rseq
	heap.Push(&sc.ready, s)
	if sc.guard {
		heap.Push(&sc.long, s)
	}
}

// broadcast wakes the workers waiting in acquire. Caller holds mu.
func (sc *scheduler) broadcast() {
	close(sc.wake)
	sc.wake = make(chan struct{})
}

// acquire blocks until a server is ready and returns it, held by the
// caller; nil when there is no more work (or ctx is done).
func (sc *scheduler) acquire(ctx context.Context) *server {
	for {
		if ctx.Err() != nil {
			return nil
		}
		sc.mu.Lock()
		now := time.Now()
		sc.promote(now)
		if sc.ready.Len() > 0 {
			// The makespan guard first: the ready server with the
			// longest W if it is urgent, else the best ranked.
			s := sc.ready[0]
			if sc.long.Len() > 0 && sc.urgent(sc.long[0]) {
				s = sc.long[0]
			}
			heap.Remove(&sc.ready, s.index)
			if s.lindex >= 0 {
				heap.Remove(&sc.long, s.lindex)
			}
			s.state = stBusy
			sc.busy++
			sc.mu.Unlock()
			return s
		}
		if sc.busy == 0 && sc.waiting.Len() == 0 {
			sc.mu.Unlock()
			return nil
		}
		var timer *time.Timer
		var tc <-chan time.Time
		if sc.waiting.Len() > 0 {
			timer = time.NewTimer(sc.waiting[0].next.Sub(now))
			tc = timer.C
		}
		wake := sc.wake
		sc.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-tc:
		case <-wake:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// promote moves the waiting servers whose turn has come to the ready
// heap, ranking them. Caller holds mu.
func (sc *scheduler) promote(now time.Time) int {
	n := 0
	for sc.waiting.Len() > 0 && !sc.waiting[0].next.After(now) {
		s := heap.Pop(&sc.waiting).(*server)
		sc.schedule(s, now)
		n++
	}
	return n
}

// keep reports whether a held server whose session ended should stay
// with its worker for another session: it still has URLs, its next turn
// is at most the hold time away, and no ready server ranks above it (a
// tie keeps it, which spares a connection).
func (sc *scheduler) keep(s *server) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if s.fate != fateNone || s.queue.Len() == 0 {
		return false
	}
	now := time.Now()
	if s.next.Sub(now) > sc.est.hold {
		return false
	}
	if sc.promote(now) > 0 {
		sc.broadcast()
	}
	if sc.ready.Len() == 0 {
		return true
	}
	if sc.guard {
		// The makespan guard first: an urgent server is kept unless a
		// ready one is longer; an urgent ready server takes over.
		topUrgent := sc.long.Len() > 0 && sc.urgent(sc.long[0])
		if sc.urgent(s) {
			return !topUrgent || s.w >= sc.long[0].w
		}
		if topUrgent {
			return false
		}
	}
	return sc.policy.RankServer(sc.info(s)) >= sc.ready[0].rank
}

// release hands a server back after a session.
func (sc *scheduler) release(s *server) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.busy--
	s.state = stIdle
	if s.fate == fateNone && s.queue.Len() > 0 {
		sc.schedule(s, time.Now())
	} else {
		s.transport = nil
	}
	sc.broadcast()
}

// pop takes the next URL of a held server (nil if none).
func (sc *scheduler) pop(s *server) *item {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if s.queue.Len() == 0 {
		return nil
	}
	it := heap.Pop(&s.queue).(*item)
	sc.rew(s)
	return it
}

// unpop puts back a URL taken from a held server.
func (sc *scheduler) unpop(s *server, it *item) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	heap.Push(&s.queue, it)
	sc.rew(s)
}

// enqueueOutcome says what became of a redirect target.
type enqueueOutcome uint8

const (
	enqueued enqueueOutcome = iota
	enqueueSeen
	enqueueDropped
	enqueueFailed
)

// enqueue queues a URL found during the run (a redirect target) on its
// server. A URL queued before in the run is not queued again. For a
// server that failed or was dropped, it returns the code and message of
// the URL's result (CodeSkipped for a dropped server).
func (sc *scheduler) enqueue(req Request, u *url.URL, host string) (enqueueOutcome, Code, string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if _, dup := sc.seen[req.URL]; dup {
		return enqueueSeen, 0, ""
	}
	sc.seen[req.URL] = struct{}{}
	s := sc.serverFor(host)
	switch s.fate {
	case fateDropped:
		return enqueueDropped, CodeSkipped, s.fateMsg
	case fateFailed:
		return enqueueFailed, s.fateCode, s.fateMsg
	}
	sc.seq++
	heap.Push(&s.queue, &item{req: req, u: u, seq: sc.seq})
	sc.rew(s)
	if s.state == stIdle {
		sc.schedule(s, time.Now())
		sc.broadcast()
	}
	return enqueued, 0, ""
}

// drop leaves a held server's remaining URLs unfetched for the run, msg
// saying why, and returns them in the order they were queued; a URL
// queued for it later is dropped too (enqueue).
func (sc *scheduler) drop(s *server, msg string) []*item {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	s.fate, s.fateCode, s.fateMsg = fateDropped, CodeSkipped, msg
	items := sc.take(s)
	sortBySeq(items)
	return items
}

// sortBySeq sorts items in the order they were queued.
func sortBySeq(items []*item) {
	slices.SortFunc(items, func(a, b *item) int { return cmp.Compare(a.seq, b.seq) })
}

// fail ends a held server: its remaining URLs, returned, and any URL
// queued for it later get the result (code, msg).
func (sc *scheduler) fail(s *server, code Code, msg string) []*item {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	s.fate, s.fateCode, s.fateMsg = fateFailed, code, msg
	return sc.take(s)
}

// take empties s's queue and returns the URLs it held. sc.mu is held.
func (sc *scheduler) take(s *server) []*item {
	items := s.queue.items
	s.queue.items = nil
	sc.rew(s)
	return items
}

// remaining takes the URLs still queued when the run ends and returns
// them, server by server in order of first appearance, each server's in
// the order they were queued.
func (sc *scheduler) remaining() []*item {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []*item
	for _, s := range sc.order {
		items := sc.take(s)
		sortBySeq(items)
		out = append(out, items...)
	}
	return out
}

// queued counts the URLs queued and the servers busy, for progress.
func (sc *scheduler) load() (queued, busy, servers int) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.order {
		queued += s.queue.Len()
	}
	return queued, sc.busy, len(sc.order)
}

// turn returns how long a held server must wait before its next request.
func (sc *scheduler) turn(s *server) time.Duration {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return time.Until(s.next)
}

// sessionLimit asks the policy how many URLs a session of s may fetch.
func (sc *scheduler) sessionLimit(s *server) int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.policy.SessionLimit(sc.info(s))
}

// connected records a new connection to s that took d to set up.
func (sc *scheduler) connected(s *server, d time.Duration) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	s.stats.Connections++
	s.stats.OpenConnections++
	old := s.stats.ConnectTime
	s.stats.ConnectTime = max(1, time.Duration(smooth(float64(old), float64(d))))
	updateMean(&sc.sumConnect, &sc.nConnect, old, s.stats.ConnectTime)
	s.connReqs = 0
}

// disconnected records that a connection to s closed.
func (sc *scheduler) disconnected(s *server) {
	sc.mu.Lock()
	s.stats.OpenConnections--
	if sc.est.perConnection && !s.lastEnd.IsZero() {
		// The delay runs between connections: from the end of this
		// one's last request.
		if t := s.lastEnd.Add(s.delay); t.After(s.next) {
			s.next = t
		}
	}
	sc.mu.Unlock()
	sc.closed.Broadcast()
}

// waitClosed waits until s has no open connection, at most d.
func (sc *scheduler) waitClosed(s *server, d time.Duration) bool {
	t := time.AfterFunc(d, func() {
		// Taking the lock orders the broadcast after the waiter's check.
		sc.mu.Lock()
		sc.mu.Unlock()
		sc.closed.Broadcast()
	})
	defer t.Stop()
	deadline := time.Now().Add(d)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for s.stats.OpenConnections > 0 {
		if !time.Now().Before(deadline) {
			return false
		}
		sc.closed.Wait()
	}
	return true
}

// maxBackoff caps the extra delay after exceptions.
const maxBackoff = 10 * time.Minute

// answered records a response (or an exception) from s, which took d,
// read n body bytes, and ended its connection if serverClosed (the
// server said so: Connection: close or HTTP/1.0); it sets the server's
// next turn. It returns the server's exception count.
func (sc *scheduler) answered(s *server, d time.Duration, n int64, keepAlive, serverClosed, exception bool, backoff time.Duration) int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	now := time.Now()
	if d > 0 {
		// An exception that took time (a timeout) counts too: a slow or
		// hanging server must look slow.
		old := s.stats.ResponseTime
		s.stats.ResponseTime = max(1, time.Duration(smooth(float64(old), float64(d))))
		updateMean(&sc.sumResponse, &sc.nResponse, old, s.stats.ResponseTime)
	}
	if exception {
		s.stats.Exceptions++
		s.failStreak++
	} else {
		s.failStreak = 0
		s.stats.Requests++
		s.connReqs++
		s.stats.KeepAlive = keepAlive
		if serverClosed {
			// The server ended the connection: learn how many requests
			// it allows per connection (1 for HTTP/1.0 servers).
			s.stats.RequestsPerConnection = smooth(s.stats.RequestsPerConnection, float64(s.connReqs))
		}
	}
	s.stats.Bytes += n
	s.lastEnd = now
	req, conn := sc.delays(s)
	if conn > 0 && (serverClosed || s.stats.OpenConnections == 0) {
		// The connection ended with this request (a close from either
		// side may be recorded before this answer): the delay between
		// connections runs from now.
		req = max(req, conn)
	}
	s.next = now.Add(req)
	if exception && backoff > 0 {
		extra := backoff << min(s.failStreak-1, 20)
		s.next = s.next.Add(min(extra, maxBackoff))
	}
	sc.rew(s)
	return s.stats.Exceptions
}

// waitAtLeast puts s's next turn at least d from now (a Retry-After).
func (sc *scheduler) waitAtLeast(s *server, d time.Duration) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if t := time.Now().Add(d); t.After(s.next) {
		s.next = t
		sc.rew(s)
	}
}

// setCrawlDelay sets a server's robots.txt Crawl-delay; the politeness
// delay becomes the longer of it and ServerDelay.
func (sc *scheduler) setCrawlDelay(s *server, d time.Duration) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	// Hosts sharing the server (QueueByIP) may ask for different delays:
	// the longest wins.
	old, _ := sc.delays(s)
	s.crawlDelay = max(s.crawlDelay, d)
	d = s.crawlDelay
	s.delay = max(sc.delay, d)
	// The turn set by the robots.txt request counted the old delay.
	if cur, _ := sc.delays(s); !s.next.IsZero() && cur > old {
		s.next = s.next.Add(cur - old)
	}
	sc.rew(s)
}

// robotsRules returns the cached rules of an origin of s (nil if none).
func (sc *scheduler) robotsRules(s *server, origin string) *robotsRules {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return s.robots[origin]
}

// setRobots caches the rules of an origin of s.
func (sc *scheduler) setRobots(s *server, origin string, r *robotsRules) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if s.robots == nil {
		s.robots = map[string]*robotsRules{}
	}
	s.robots[origin] = r
}

func (sc *scheduler) cachedAddrs(s *server, host string) ([]netip.Addr, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if a, ok := s.addrs[host]; ok {
		return a, ok
	}
	a, ok := sc.hostAddrs[host]
	return a, ok
}

func (sc *scheduler) cacheAddrs(s *server, host string, addrs []netip.Addr) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if s.addrs == nil {
		s.addrs = map[string][]netip.Addr{}
	}
	s.addrs[host] = addrs
}
