package fetcher

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/urlutil"
)

// Request is one URL to fetch.
type Request struct {
	// URL is an absolute http or https URL, normalized (urlutil).
	URL string
	// ETag and LastModified are the validators of the stored copy; when
	// set, the request is conditional (If-None-Match, If-Modified-Since)
	// and an unchanged page answers 304 (fetch_notmodified).
	ETag         string
	LastModified string
	// Priority is the URL's value for ranking policies (the CrawlDB
	// score in trawl); BreadthFirst ignores it.
	Priority float64
	// ID is the caller's handle for the URL, returned in its Result. The
	// fetcher sets -1 for the redirect targets it queues itself.
	ID int
	// Hops and From are set by the fetcher for a redirect target: the
	// number of redirects followed to reach it, and the URL that
	// redirected to it. Zero in the requests given to Run.
	Hops int
	From string
}

// Result is the outcome of one URL.
type Result struct {
	// Request is the request this result answers.
	Request Request
	// Code is the protocol outcome and Status the CrawlDB fetch status it
	// maps to (Code.FetchStatus).
	Code   Code
	Status crawldb.Status
	// HTTPStatus is the response's status code (0 without a response).
	HTTPStatus int
	// Message explains anything but a success: the protocol code, the
	// HTTP status or the error; for a skipped URL why it was skipped
	// ("skipped: fetch time limit reached"), for a refused one the
	// refusal and the setting that allows it.
	Message string
	// RedirectURL is a redirect's target, resolved against the URL and
	// normalized ("" if the Location header is missing or unusable).
	RedirectURL string
	// RetryAfter is the wait a 429 or 503 answer asked for in its
	// Retry-After header (0 without one); the run honours it within
	// Options.MaxRetryAfter before the server's next request.
	RetryAfter time.Duration
	// TypeRefused is set on a 200 answer whose media type
	// (ContentType) is not in Options.ContentTypes: the page was not
	// stored (Body is nil) and Message says so.
	TypeRefused bool
	// Header is the response's header as received (nil without a
	// response). ContentType is the media type, from the header or, when
	// it has none, sniffed from the body; ETag and LastModified are the
	// response's validators.
	Header       http.Header
	ContentType  string
	ETag         string
	LastModified string
	// Body is the page (successes only), decoded (gzip, deflate) and at
	// most Options.ContentLimit bytes; Truncated is true when the page
	// was longer (or its compressed stream was cut or corrupt).
	Body      []byte
	Truncated bool
	// Time is when the fetch ended (or the URL was skipped or refused),
	// by Options.Clock.
	Time time.Time
	// Elapsed is the request's wall time; WireBytes the body bytes read
	// from the network.
	Elapsed   time.Duration
	WireBytes int64
	// With Options.KeepExchange (and a response): RequestHeader is the
	// header of the request sent (Host is the URL's), RemoteIP the
	// server's address ("" if unknown), Proto the response's protocol
	// ("HTTP/1.1"), and Body is kept for every status, cut at the
	// content limit as a success's.
	RequestHeader http.Header
	RemoteIP      string
	Proto         string
}

// Stats summarize a run.
type Stats struct {
	// Results by fetch status, each result in one of them: Success
	// (fetch_success), NotModified, Redirects (perm and temp), Gone
	// (fetch_gone), Retry (fetch_retry), RobotsDenied
	// (fetch_robots_denied, no longer part of Gone), Skipped
	// (fetch_skipped) and Refused (fetch_refused).
	Success, NotModified, Redirects, Gone, Retry, RobotsDenied int64
	Skipped, Refused                                           int64
	// Unfetched counts the URLs given to Run (or queued as redirect
	// targets) that were not fetched: their server was dropped for the
	// round (robots.txt unavailable, Crawl-delay above the cap, too many
	// exceptions), or the run ended first (the Deadline, Stop, the
	// throughput threshold). Each of them gets a skipped result, so
	// Unfetched equals Skipped, unless the run is aborted (Run returns an
	// error: ctx ended or emit failed), when it also counts the URLs left
	// without a result.
	Unfetched int64
	// Requests counts page requests sent, RobotsRequests robots.txt
	// requests; Connections the connections opened, MaxOpenConnections
	// the most open at once.
	Requests           int64
	RobotsRequests     int64
	Connections        int64
	MaxOpenConnections int
	// Bytes counts body bytes read from the network.
	Bytes int64
	// RetryAfter counts, by host, the 429 and 503 answers whose
	// Retry-After header the run honoured (a wait within
	// Options.MaxRetryAfter) or that asked for more than the cap (the
	// host was then skipped for the round); nil if there were none.
	RetryAfter map[string]int
	// Servers is the number of servers seen: hosts, or addresses with
	// QueueByIP.
	Servers int
	// Duration is the run's wall time; DeadlineReached reports that
	// Options.Deadline ended it, ThroughputTooLow that
	// Options.ThroughputThreshold did, Stopped that Options.Stop did,
	// Stalled that Options.StallTimeout did.
	Duration         time.Duration
	DeadlineReached  bool
	ThroughputTooLow bool
	Stopped          bool
	Stalled          bool
}

// Counter names, as Options.Count receives them. Results are counted by
// fetch status name (fetch_success, fetch_retry, fetch_skipped, ...) and
// by protocol code (code_notfound, code_exception, code_skipped, ...).
// CounterRefused counts the servers refused by the address guard (a
// private address without Options.AllowPrivate), CounterRefusedURLs
// their URLs' results; CounterUnfetched counts the URLs not fetched (see
// Stats.Unfetched).
const (
	CounterRequests          = "requests"
	CounterRobotsRequests    = "robots_requests"
	CounterRobotsDenied      = "robots_denied"
	CounterRobotsUnparsable  = "robots_unparsable"
	CounterRobotsDeferred    = "hosts_robots_deferred"
	CounterUnreachable       = "hosts_unreachable"
	CounterRefused           = "hosts_refused_private"
	CounterRefusedURLs       = "urls_refused_private"
	CounterCrawlDelayTooLong = "hosts_crawl_delay_too_long"
	CounterExceptionDropped  = "hosts_dropped_exceptions"
	CounterExceptions        = "exceptions"
	CounterUnfetched         = "unfetched"
	CounterBytes             = "bytes"
	CounterTruncated         = "truncated"
	CounterConnections       = "connections"
	CounterDNSFailures       = "dns_failures"
	CounterRedirectsFollowed = "redirects_followed"
	CounterRedirectsSeen     = "redirects_already_queued"
	CounterMalformed         = "malformed_urls"
	CounterDuplicates        = "duplicate_urls"
	CounterThroughputStops   = "throughput_threshold_stops"
	CounterRetryAfter        = "retry_after_waits"
	CounterTypeRefused       = "content_type_not_stored"
	CounterRetryAfterTooLong = "hosts_retry_after_too_long"
)

// Fetcher fetches URLs politely: the two-level queue of servers and their
// URLs (see Policy), one connection per server at a time, robots.txt,
// politeness delays, timeouts and content limits. It is safe to Run
// several times, also at once; each run has its own queues, connections
// and robots.txt cache.
type Fetcher struct {
	o Options
}

// New checks o and returns a Fetcher.
func New(o Options) (*Fetcher, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Fetcher{o: o}, nil
}

// Options returns the fetcher's options with defaults filled in.
func (f *Fetcher) Options() Options { return f.o }

// errDeadline is the cause of a run's end at Options.Deadline,
// errThroughput at the throughput threshold, errStopped at Options.Stop;
// errReadTimeout of a request's at the read timeout.
var (
	errDeadline    = errors.New("fetch deadline reached")
	errReadTimeout = errors.New("read timeout")
	errThroughput  = errors.New("fetch throughput below the threshold")
	errStopped     = errors.New("fetch stopped")
	errStalled     = errors.New("fetch made no progress")
)

// runEnds are the causes that end a run early, each with the message of
// the skipped results of the URLs still queued.
var runEnds = []struct {
	err    error
	reason string
}{
	{errDeadline, "skipped: fetch time limit reached"},
	{errStopped, "skipped: fetch stopped by an interrupt"},
	{errThroughput, "skipped: throughput below the threshold"},
	{errStalled, "skipped: the fetch made no progress for the stall timeout (hung requests abandoned)"},
}

// runEnd returns the index in runEnds of the cause that ended a run, or -1.
func runEnd(cause error) int {
	for i, e := range runEnds {
		if errors.Is(cause, e.err) {
			return i
		}
	}
	return -1
}

// endReason is the message of the skipped results of URLs still queued
// when a run ends for cause.
func endReason(cause error) string {
	if i := runEnd(cause); i >= 0 {
		return runEnds[i].reason
	}
	return "skipped: the fetch ended first"
}

// run is one Run.
type run struct {
	o      Options
	agent  string
	ua     string
	header http.Header // every request's header (see requestHeader)
	sched  *scheduler
	conns  *connAccount
	cancel context.CancelCauseFunc

	emitMu  sync.Mutex
	emitFn  func(*Result) error
	emitErr error

	success, notModified, redirects, gone, retry, robotsDenied atomic.Int64
	skipped, refused, unreported                               atomic.Int64
	requests, robotsRequests, bytes                            atomic.Int64
	responses                                                  atomic.Int64 // results with an HTTP response
	lastResult                                                 atomic.Int64 // when the last result was emitted (Unix ns)

	// refusedHosts are the servers the address guard refused.
	refusedMu    sync.Mutex
	refusedHosts map[string]bool

	// retryAfter counts the Retry-After answers by host.
	retryAfterMu sync.Mutex
	retryAfter   map[string]int
}

// Run fetches reqs and calls emit once per result, from one goroutine at
// a time, in completion order. Every request gets exactly one result: a
// URL not fetched because its server was dropped for the round
// (robots.txt unavailable, Crawl-delay above the cap, too many
// exceptions) or because the run ended first (Options.Deadline,
// Options.Stop, the throughput threshold) gets a skipped result
// (CodeSkipped, fetch_skipped) whose Message says why; one the address
// guard refuses a refused result (CodeRefused, fetch_refused). Redirect
// targets the fetcher follows get results of their own (Request.ID -1),
// skipped ones included. Duplicate URLs in reqs are fetched once (the
// first one's ID is reported). An error from emit stops the run and is
// returned; so is ctx's error if ctx ends, which aborts the run: the URLs
// not fetched then get no result (Stats.Unfetched counts them). The
// Deadline and Stop are not errors. Network failures are results, never
// errors.
func (f *Fetcher) Run(ctx context.Context, reqs []Request, emit func(*Result) error) (*Stats, error) {
	began := time.Now()
	r := f.newRun(emit)
	runCtx, release := r.runContext(ctx)
	defer release()
	stopStop := r.watchStop(runCtx)
	r.plan(runCtx, reqs)
	r.work(runCtx, began)
	stopStop()
	r.settle(ctx, runCtx)
	st := r.stats(runCtx, began)
	r.logDone(st)
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("fetcher: %w", err)
	}
	return st, r.emitError()
}

// newRun returns the state of one Run with f's options, its scheduler
// set up for them; emit gets the results.
func (f *Fetcher) newRun(emit func(*Result) error) *run {
	o := f.o
	r := &run{o: o, agent: o.robotsAgent(), ua: o.userAgent(), sched: newScheduler(o.Policy, o.ServerDelay),
		conns: newConnAccount(), emitFn: emit, refusedHosts: map[string]bool{}}
	r.header = requestHeader(r.ua)
	r.sched.est = estimate{hold: o.HoldConnection, keepAliveOff: o.DisableKeepAlive, conns: o.MaxConnections,
		perConnection: o.DelayBetween == DelayBetweenConnections}
	return r
}

// runContext returns the run's context: ctx, which r.cancel ends with a
// cause, and Options.Deadline ends with errDeadline. The returned
// function releases it.
func (r *run) runContext(ctx context.Context) (context.Context, func()) {
	runCtx, cancel := context.WithCancelCause(ctx)
	r.cancel = cancel
	if r.o.Deadline.IsZero() {
		return runCtx, func() { cancel(nil) }
	}
	runCtx, cancelD := context.WithDeadlineCause(runCtx, r.o.Deadline, errDeadline)
	return runCtx, func() {
		cancelD()
		cancel(nil)
	}
}

// parsedReq is a request given to Run, with its parsed URL and host.
type parsedReq struct {
	q    Request
	u    *url.URL
	host string
}

// plan queues reqs: a malformed URL gets its result at once, the hosts
// are given to a Prefetcher (and resolved with QueueByIP), and the
// requests are queued by server, a duplicate URL once.
func (r *run) plan(ctx context.Context, reqs []Request) {
	targets, hosts := r.parseTargets(reqs)
	r.prefetch(ctx, hosts)
	if r.o.QueueMode == QueueByIP {
		r.resolveKeys(ctx, hosts)
	}
	for _, t := range targets {
		if !r.sched.add(t.q, t.u, r.keyFor(ctx, t.host)) {
			r.o.Count(CounterDuplicates, 1)
		}
	}
	r.sched.start()
	o := r.o
	o.Log.Info("fetching", "urls", len(reqs), "servers", len(r.sched.order), "connections", o.MaxConnections,
		"policy", o.Policy.Name(), "queue_mode", o.QueueMode, "politeness", o.DelayBetween, "keep_alive", !o.DisableKeepAlive,
		"server_delay", o.ServerDelay, "agent", r.ua)
}

// parseTargets parses the URLs of reqs, emitting a gone result for each
// malformed one, and returns the others with their hosts, each host once
// in the order first seen.
func (r *run) parseTargets(reqs []Request) (targets []parsedReq, hosts []string) {
	targets = make([]parsedReq, 0, len(reqs))
	hostSeen := map[string]bool{}
	for _, q := range reqs {
		q.Hops, q.From = 0, ""
		u, host, err := parseTarget(q.URL)
		if err != nil {
			r.o.Count(CounterMalformed, 1)
			r.emit(&Result{Request: q, Code: CodeGone, Status: CodeGone.FetchStatus(),
				Message: "gone: " + err.Error(), Time: r.o.Clock()})
			continue
		}
		targets = append(targets, parsedReq{q, u, host})
		if !hostSeen[host] {
			hostSeen[host] = true
			hosts = append(hosts, host)
		}
	}
	return targets, hosts
}

// prefetch gives the host names (not the IP literals) to the resolver,
// if it is a Prefetcher.
func (r *run) prefetch(ctx context.Context, hosts []string) {
	pf, ok := r.o.Resolver.(Prefetcher)
	if !ok {
		return
	}
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if !isIPLiteral(h) {
			names = append(names, h)
		}
	}
	pf.Prefetch(ctx, names)
}

// work runs the MaxConnections workers, with the progress log and the
// throughput and stall watchers, until they are all done.
func (r *run) work(ctx context.Context, began time.Time) {
	stopProgress := r.progress(began)
	stopWatch := r.watchThroughput(ctx)
	stopStall := r.watchStall(ctx)
	var wg sync.WaitGroup
	for range r.o.MaxConnections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(ctx)
		}()
	}
	wg.Wait()
	stopStall()
	stopWatch()
	stopProgress()
}

// settle deals with the URLs still queued once the workers are done: they
// are skipped, with the reason the run (runCtx) ended, unless the run was
// aborted (ctx ended or emit failed), when they are counted as left
// without a result. It then logs the refused servers.
func (r *run) settle(ctx, runCtx context.Context) {
	emitErr := r.emitError()
	left := r.sched.remaining()
	if ctx.Err() == nil && emitErr == nil {
		r.skipAll(left, endReason(context.Cause(runCtx)))
	} else if len(left) > 0 {
		r.unreported.Add(int64(len(left)))
		r.o.Count(CounterUnfetched, int64(len(left)))
	}
	r.warnRefused()
}

// emitError returns the error emit returned, if it did.
func (r *run) emitError() error {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	return r.emitErr
}

// stats returns the run's Stats; runCtx is the run's context, whose
// cause says what ended the run.
func (r *run) stats(runCtx context.Context, began time.Time) *Stats {
	st := &Stats{
		Success: r.success.Load(), NotModified: r.notModified.Load(), Redirects: r.redirects.Load(),
		Gone: r.gone.Load(), Retry: r.retry.Load(), RobotsDenied: r.robotsDenied.Load(),
		Skipped: r.skipped.Load(), Refused: r.refused.Load(), Unfetched: r.skipped.Load() + r.unreported.Load(),
		Requests: r.requests.Load(), RobotsRequests: r.robotsRequests.Load(),
		Bytes: r.bytes.Load(), Servers: len(r.sched.order), Duration: time.Since(began),
	}
	r.conns.mu.Lock()
	st.Connections, st.MaxOpenConnections = r.conns.dialed, r.conns.maxOpen
	r.conns.mu.Unlock()
	r.retryAfterMu.Lock()
	st.RetryAfter = maps.Clone(r.retryAfter)
	r.retryAfterMu.Unlock()
	cause := context.Cause(runCtx)
	st.DeadlineReached = errors.Is(cause, errDeadline)
	st.ThroughputTooLow = errors.Is(cause, errThroughput)
	st.Stopped = errors.Is(cause, errStopped)
	st.Stalled = errors.Is(cause, errStalled)
	return st
}

// logDone logs the run's summary.
func (r *run) logDone(st *Stats) {
	r.o.Log.Info("fetch done", "success", st.Success, "notmodified", st.NotModified, "redirects", st.Redirects,
		"gone", st.Gone, "retry", st.Retry, "robots_denied", st.RobotsDenied, "skipped", st.Skipped,
		"refused", st.Refused, "unfetched", st.Unfetched, "bytes", st.Bytes,
		"connections", st.Connections, "duration", st.Duration.Round(time.Millisecond), "deadline_reached", st.DeadlineReached,
		"throughput_too_low", st.ThroughputTooLow, "stopped", st.Stopped, "stalled", st.Stalled)
}

// watchStop ends the run (cause errStopped) when Options.Stop is closed,
// until the returned function is called.
func (r *run) watchStop(ctx context.Context) func() {
	if r.o.Stop == nil {
		return func() {}
	}
	select {
	case <-r.o.Stop:
		// Stopped before the run began: nothing starts.
		r.o.Log.Info("fetch stopped before it began: the URLs are skipped")
		r.cancel(errStopped)
		return func() {}
	default:
	}
	return background(func(done <-chan struct{}) {
		select {
		case <-r.o.Stop:
			r.o.Log.Info("fetch stopped: ending the run, the URLs not fetched are skipped")
			r.cancel(errStopped)
		case <-ctx.Done():
		case <-done:
		}
	})
}

// background runs fn in a goroutine until the returned function is
// called, which closes fn's done channel and waits for fn to return.
func background(fn func(done <-chan struct{})) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		fn(done)
	}()
	return func() { close(done); <-finished }
}

// watchStall ends the run (cause errStalled) when no result has been
// emitted for Options.StallTimeout, until the returned function is
// called.
func (r *run) watchStall(ctx context.Context) func() {
	limit := r.o.StallTimeout
	if limit <= 0 {
		return func() {}
	}
	r.lastResult.Store(time.Now().UnixNano())
	tick := min(max(limit/8, 10*time.Millisecond), time.Second)
	return background(func(done <-chan struct{}) {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				idle := time.Since(time.Unix(0, r.lastResult.Load()))
				if idle >= limit {
					r.o.Log.Warn("no request finished within the stall timeout: abandoning the requests in flight; the URLs not fetched are skipped",
						"stall_timeout", limit, "idle", idle.Round(time.Millisecond))
					r.cancel(errStalled)
					return
				}
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	})
}

// skip reports a URL not fetched, with msg ("skipped: ...") saying why.
func (r *run) skip(q Request, msg string) {
	r.emit(&Result{Request: q, Code: CodeSkipped, Status: CodeSkipped.FetchStatus(), Message: msg, Time: r.o.Clock()})
}

// skipAll reports the URLs of a dropped server.
func (r *run) skipAll(items []*item, msg string) {
	for _, it := range items {
		r.skip(it.req, msg)
	}
}

// refusedHost records a server refused by the address guard.
func (r *run) refusedHost(host string) {
	r.refusedMu.Lock()
	seen := r.refusedHosts[host]
	r.refusedHosts[host] = true
	r.refusedMu.Unlock()
	if !seen {
		r.o.Count(CounterRefused, 1)
	}
}

// warnRefused logs, once per run, how many URLs and servers the address
// guard refused.
func (r *run) warnRefused() {
	n := r.refused.Load()
	if n == 0 {
		return
	}
	r.refusedMu.Lock()
	hosts := len(r.refusedHosts)
	r.refusedMu.Unlock()
	r.o.Log.Warn("refused URLs whose hosts resolve to private, loopback or link-local addresses; "+
		"--allow-private (setting fetcher.allowPrivate) allows them", "urls", n, "hosts", hosts)
}

// parseTarget parses a URL to fetch and returns its server key.
func parseTarget(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("malformed URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("unsupported scheme %q in %s", u.Scheme, raw)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return nil, "", fmt.Errorf("no host in %s", raw)
	}
	return u, host, nil
}

// emit reports a result, counting it.
func (r *run) emit(res *Result) {
	if r.o.StallTimeout > 0 {
		r.lastResult.Store(time.Now().UnixNano())
	}
	if res.HTTPStatus > 0 {
		r.responses.Add(1)
	}
	switch res.Status {
	case crawldb.StatusFetchSuccess:
		r.success.Add(1)
	case crawldb.StatusFetchNotModified:
		r.notModified.Add(1)
	case crawldb.StatusFetchRedirPerm, crawldb.StatusFetchRedirTemp:
		r.redirects.Add(1)
	case crawldb.StatusFetchGone:
		r.gone.Add(1)
	case crawldb.StatusFetchRobotsDenied:
		r.robotsDenied.Add(1)
		r.o.Count(CounterRobotsDenied, 1)
	case crawldb.StatusFetchSkipped:
		r.skipped.Add(1)
		r.o.Count(CounterUnfetched, 1)
	case crawldb.StatusFetchRefused:
		r.refused.Add(1)
		r.o.Count(CounterRefusedURLs, 1)
	default:
		r.retry.Add(1)
	}
	if res.Truncated {
		r.o.Count(CounterTruncated, 1)
	}
	r.o.Count(res.Status.String(), 1)
	r.o.Count("code_"+res.Code.String(), 1)
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	if r.emitErr != nil {
		return
	}
	if err := r.emitFn(res); err != nil {
		r.emitErr = err
		r.cancel(err)
	}
}

// closeConns closes server s's connection and waits, up to two seconds,
// until it is closed. The transport takes a connection back into its idle
// pool in its own goroutine once a response body is read, which can be a
// moment after the body's Close returned: a connection not idle yet is
// not closed by CloseIdleConnections, so it is asked again until the
// connection is gone, or it would stay open beside the next server's.
func (r *run) closeConns(s *server) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.transport.CloseIdleConnections()
		if r.sched.waitClosed(s, 20*time.Millisecond) {
			return
		}
		if !time.Now().Before(deadline) {
			r.o.Log.Debug("a connection did not close in time", "host", s.host)
			return
		}
	}
}

// worker is one connection slot: it serves one server at a time.
func (r *run) worker(ctx context.Context) {
	for {
		s := r.sched.acquire(ctx)
		if s == nil {
			return
		}
		r.serve(ctx, s)
		if s.transport != nil {
			// Close the connection, so that a worker never holds more
			// than one: it closes as soon as the transport has it back.
			r.closeConns(s)
		}
		r.sched.release(s)
	}
}

// serve runs one session with server s: its URLs in policy order over
// one connection, until the queue is empty, the server closes the
// connection, the policy's session limit is reached, or the next turn is
// further away than HoldConnection.
func (r *run) serve(ctx context.Context, s *server) {
	limit := r.sched.sessionLimit(s)
	for served := 0; ctx.Err() == nil; {
		it := r.sched.pop(s)
		if it == nil {
			return
		}
		rules := allowAllRules
		if !r.o.IgnoreRobots {
			var ok bool
			rules, ok = r.robotsGate(ctx, s, it)
			if !ok || r.crawlDelayTooLong(s, it) {
				return
			}
		}
		if !rules.allowed(it.u) {
			r.emit(&Result{Request: it.req, Code: CodeRobotsDenied, Status: CodeRobotsDenied.FetchStatus(),
				Message: "robots_denied: disallowed by robots.txt", Time: r.o.Clock()})
			continue
		}
		if r.o.RobotsOnly {
			r.emit(&Result{Request: it.req, Code: CodeSkipped, Status: CodeSkipped.FetchStatus(),
				Message: RobotsOnlyAllowed, Time: r.o.Clock()})
			continue
		}
		if !r.waitTurn(ctx, s, false) {
			r.sched.unpop(s, it)
			return
		}
		res, connEnded, exceptions := r.fetchPage(ctx, s, it)
		if res == nil {
			r.sched.unpop(s, it) // abandoned: the run is ending
			return
		}
		r.emit(res)
		if res.Code.IsRedirect() && res.RedirectURL != "" && it.req.Hops < r.o.FollowRedirects && res.RedirectURL != it.req.URL {
			r.follow(ctx, it.req, res.RedirectURL)
		}
		if r.retryAfterTooLong(s, res) || r.tooManyExceptions(s, res, exceptions) {
			return
		}
		served++
		if connEnded || (limit > 0 && served >= limit) {
			if !r.renewSession(s, connEnded) {
				return
			}
			served, limit = 0, r.sched.sessionLimit(s)
		}
	}
}

// robotsGate gets the robots.txt rules for it, the item just popped from
// s. ok is false when the session ends there: it is put back when the
// rules are not to be had yet (not the server's turn, or the run is
// ending); when robots.txt is unavailable (a 5xx) s's URLs are skipped
// for the round, and when the server is unreachable or refused they fail
// with it.
func (r *run) robotsGate(ctx context.Context, s *server, it *item) (rules *robotsRules, ok bool) {
	rules, out, msg := r.robotsFor(ctx, s, it.u)
	switch out {
	case robotsWait, robotsAbandoned:
		r.sched.unpop(s, it)
		return nil, false
	case robotsDeferred:
		r.sched.unpop(s, it)
		skipMsg := "skipped: " + msg
		items := r.sched.drop(s, skipMsg)
		r.o.Log.Info("robots.txt unavailable: host deferred for the round", "host", s.host, "urls", len(items), "reason", msg)
		r.skipAll(items, skipMsg)
		return nil, false
	case robotsUnreachable, robotsRefused:
		r.failHost(s, it, out, msg)
		return nil, false
	}
	return rules, true
}

// failHost ends s for the round when its robots.txt could not be had (out
// is robotsUnreachable or robotsRefused, msg says why): it and the URLs
// still queued get an exception result, or a refused one.
func (r *run) failHost(s *server, it *item, out robotsOutcome, msg string) {
	code := CodeException
	fmsg := code.String() + ": " + msg
	if out == robotsRefused {
		// msg starts with "refused ...", and names the setting.
		code, fmsg = CodeRefused, msg
		r.refusedHost(s.host)
	} else {
		r.o.Count(CounterUnreachable, 1)
	}
	items := append([]*item{it}, r.sched.fail(s, code, fmsg)...)
	r.o.Log.Info("host failed", "host", s.host, "urls", len(items), "code", code, "reason", msg)
	for _, x := range items {
		r.emit(&Result{Request: x.req, Code: code, Status: code.FetchStatus(), Message: fmsg, Time: r.o.Clock()})
	}
}

// crawlDelayTooLong reports whether s's robots.txt Crawl-delay is above
// Options.MaxCrawlDelay; if so, it (just popped) is put back and s's URLs
// are skipped for the round.
func (r *run) crawlDelayTooLong(s *server, it *item) bool {
	cd := r.crawlDelay(s)
	if r.o.MaxCrawlDelay <= 0 || cd <= r.o.MaxCrawlDelay {
		return false
	}
	r.sched.unpop(s, it)
	msg := fmt.Sprintf("skipped: Crawl-delay %s above the cap %s", seconds(cd), seconds(r.o.MaxCrawlDelay))
	items := r.sched.drop(s, msg)
	r.o.Count(CounterCrawlDelayTooLong, 1)
	r.o.Log.Info("robots.txt Crawl-delay above the cap: host skipped for the round",
		"host", s.host, "crawl_delay", cd, "max", r.o.MaxCrawlDelay, "urls", len(items))
	r.skipAll(items, msg)
	return true
}

// retryAfterTooLong honours the Retry-After of res, a 429 or 503 answer
// from s: within Options.MaxRetryAfter, s's next request waits for it (it
// reports false); beyond the cap, s's URLs are skipped for the round (it
// reports true). Every such answer is counted by host.
func (r *run) retryAfterTooLong(s *server, res *Result) bool {
	if res.RetryAfter <= 0 {
		return false
	}
	r.retryAfterMu.Lock()
	if r.retryAfter == nil {
		r.retryAfter = map[string]int{}
	}
	r.retryAfter[s.host]++
	r.retryAfterMu.Unlock()
	if r.o.MaxRetryAfter > 0 && res.RetryAfter > r.o.MaxRetryAfter {
		msg := fmt.Sprintf("skipped: Retry-After %s above the cap %s", seconds(res.RetryAfter), seconds(r.o.MaxRetryAfter))
		items := r.sched.drop(s, msg)
		r.o.Count(CounterRetryAfterTooLong, 1)
		r.o.Log.Info("Retry-After above the cap: host skipped for the round",
			"host", s.host, "retry_after", res.RetryAfter, "max", r.o.MaxRetryAfter, "urls", len(items))
		r.skipAll(items, msg)
		return true
	}
	r.sched.waitAtLeast(s, res.RetryAfter)
	r.o.Count(CounterRetryAfter, 1)
	r.o.Log.Debug("Retry-After honoured", "host", s.host, "status", res.HTTPStatus, "wait", res.RetryAfter)
	return false
}

// tooManyExceptions reports whether res, an exception, brings s to
// Options.MaxExceptionsPerHost (exceptions is s's count); if so, s's
// URLs are skipped for the round.
func (r *run) tooManyExceptions(s *server, res *Result, exceptions int) bool {
	if !res.Code.IsException() || r.o.MaxExceptionsPerHost <= 0 || exceptions < r.o.MaxExceptionsPerHost {
		return false
	}
	msg := fmt.Sprintf("skipped: %d exceptions on the host", exceptions)
	items := r.sched.drop(s, msg)
	r.o.Count(CounterExceptionDropped, 1)
	r.o.Log.Info("too many exceptions: host dropped for the round", "host", s.host,
		"exceptions", exceptions, "urls", len(items), "last", res.Message)
	r.skipAll(items, msg)
	return true
}

// renewSession is called when a session with s is over (the connection
// ended, or the policy's session limit was reached). If s is still the
// best choice and its turn is near, this worker goes on with it (over the
// same connection if it is still open, else a new one, once the ended one
// is closed) rather than sending it to the back of the queue: renewSession
// then returns true.
func (r *run) renewSession(s *server, connEnded bool) bool {
	if !r.sched.keep(s) {
		return false
	}
	if connEnded && s.transport != nil {
		r.closeConns(s)
	}
	return true
}

// seconds formats a delay in seconds when it is a whole number of them
// ("60s", not "1m0s").
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

func (r *run) crawlDelay(s *server) time.Duration {
	r.sched.mu.Lock()
	defer r.sched.mu.Unlock()
	return s.crawlDelay
}

// follow queues a redirect target as a request of its own. A target on a
// host new to the run is given to a Prefetcher first.
func (r *run) follow(ctx context.Context, from Request, target string) {
	u, host, err := parseTarget(target)
	if err != nil {
		return
	}
	if pf, ok := r.o.Resolver.(Prefetcher); ok && !isIPLiteral(host) && !r.sched.knownHost(host) {
		pf.Prefetch(ctx, []string{host})
	}
	req := Request{URL: target, ID: -1, Priority: from.Priority, Hops: from.Hops + 1, From: from.URL}
	switch out, code, msg := r.sched.enqueue(req, u, r.keyFor(ctx, host)); out {
	case enqueued:
		r.o.Count(CounterRedirectsFollowed, 1)
	case enqueueSeen:
		r.o.Count(CounterRedirectsSeen, 1)
	case enqueueDropped:
		r.skip(req, msg)
	case enqueueFailed:
		r.emit(&Result{Request: req, Code: code, Status: code.FetchStatus(), Message: msg, Time: r.o.Clock()})
	}
}

// waitTurn waits until s may get its next request. Unless force, it
// gives up (false) when that is further away than HoldConnection; it
// returns false when ctx ends.
func (r *run) waitTurn(ctx context.Context, s *server, force bool) bool {
	d := r.sched.turn(s)
	if d <= 0 {
		return true
	}
	if !force && d > r.o.HoldConnection {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// response is one HTTP exchange as read.
type response struct {
	status       int
	header       http.Header
	body         body
	closed       bool // the connection ended with this response
	serverClosed bool // the server ended it (Connection: close, HTTP/1.0)
	keepAlive    bool
	typeRefused  bool // a 200 of a type not stored: the body was not read
	elapsed      time.Duration
	// With Options.KeepExchange: the request header sent, the server's
	// IP address and the response's protocol.
	reqHeader http.Header
	remoteIP  string
	proto     string
}

// do sends one GET for rawURL over s's connection and reads the body (at
// most limit bytes). It records the exchange in s's measurements and
// sets s's next turn.
func (r *run) do(ctx context.Context, s *server, rawURL string, hdr http.Header, limit int64, robots bool) (*response, error) {
	if s.transport == nil {
		s.transport = r.newTransport(s)
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A safety net: connecting is bounded by the dialer, reading by the
	// read timer below.
	safeCtx, cancelSafe := context.WithTimeout(reqCtx, 2*r.o.ConnectTimeout+r.o.ReadTimeout+time.Second)
	defer cancelSafe()
	var readTimer atomic.Pointer[time.Timer]
	defer func() {
		if t := readTimer.Load(); t != nil {
			t.Stop()
		}
	}()
	// With KeepExchange, where GotConn (called within RoundTrip) puts
	// the connection's remote address; nil otherwise, so that a fetch
	// without it allocates nothing more.
	var remote *net.Addr
	if r.o.KeepExchange {
		remote = new(net.Addr)
	}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		t := time.AfterFunc(r.o.ReadTimeout, func() { cancel(errReadTimeout) })
		if old := readTimer.Swap(t); old != nil {
			old.Stop()
		}
		if remote != nil && info.Conn != nil {
			*remote = info.Conn.RemoteAddr()
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(safeCtx, trace), http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", rawURL, err)
	}
	if origin := req.URL.Scheme + "://" + req.URL.Host; s.origin != origin {
		if s.origin != "" {
			// Another origin of the server (a scheme or port, or another
			// host with QueueByIP) needs its own connection: close the
			// idle one first, so that the server never has two.
			r.closeConns(s)
		}
		s.origin = origin
	}
	// The transport only reads a request's header, so requests without
	// headers of their own share the run's.
	req.Header = r.header
	if len(hdr) > 0 {
		req.Header = r.header.Clone()
		maps.Copy(req.Header, hdr)
	}
	if robots {
		r.robotsRequests.Add(1)
	} else {
		r.requests.Add(1)
		r.o.Count(CounterRequests, 1)
	}
	began := time.Now()
	resp, err := s.transport.RoundTrip(req)
	if err != nil {
		return nil, requestError(reqCtx, err, r.o.ReadTimeout)
	}
	if !robots && resp.StatusCode == http.StatusOK && r.o.types != nil {
		if mt := mediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/octet-stream" && !r.o.types.Match(mt) {
			return r.refuseBody(resp, began), nil
		}
	}
	b, err := readBody(resp.Body, resp.Header.Get("Content-Encoding"), resp.ContentLength, limit)
	resp.Body.Close()
	r.bytes.Add(b.wire)
	r.o.Count(CounterBytes, b.wire)
	if err != nil {
		return &response{status: resp.StatusCode, header: resp.Header, body: b, closed: true, elapsed: time.Since(began)},
			requestError(reqCtx, err, r.o.ReadTimeout)
	}
	out := &response{
		status: resp.StatusCode, header: resp.Header, body: b,
		closed:       resp.Close || b.truncated,
		serverClosed: resp.Close,
		keepAlive:    resp.ProtoAtLeast(1, 1) && !resp.Close,
		elapsed:      time.Since(began),
	}
	if r.o.KeepExchange {
		// A copy: the run's requests share their header.
		out.reqHeader, out.proto = req.Header.Clone(), resp.Proto
		if ta, ok := (*remote).(*net.TCPAddr); ok {
			out.remoteIP = ta.IP.String()
		}
	}
	return out, nil
}

// sniffedType is mt, or for application/octet-stream (a server that did
// not say) the type sniffed from body, as the parser decides.
func sniffedType(mt string, body []byte) string {
	if mt == "application/octet-stream" {
		return mediaType(http.DetectContentType(body))
	}
	return mt
}

// maxDrain is the most body bytes read of a page that is not stored, so
// that its connection can serve the next request; a longer body closes
// the connection instead.
const maxDrain = 16 << 10

// refuseBody ends a 200 answer whose type is not stored: its body is
// drained if short, else the connection is closed.
func (r *run) refuseBody(resp *http.Response, began time.Time) *response {
	n, _ := io.CopyN(io.Discard, resp.Body, maxDrain+1)
	resp.Body.Close()
	r.bytes.Add(n)
	r.o.Count(CounterBytes, n)
	closed := resp.Close || n > maxDrain
	return &response{
		status: resp.StatusCode, header: resp.Header, body: body{wire: n},
		closed: closed, serverClosed: resp.Close,
		keepAlive:   resp.ProtoAtLeast(1, 1) && !resp.Close,
		elapsed:     time.Since(began),
		typeRefused: true,
	}
}

// readTimeoutError is a request cut off by the read timeout.
type readTimeoutError struct{ d time.Duration }

func (e readTimeoutError) Error() string {
	return fmt.Sprintf("read timeout: no complete response within %v", e.d)
}

func (e readTimeoutError) Is(target error) bool { return target == errReadTimeout }

// requestError names why a request failed.
func requestError(ctx context.Context, err error, readTimeout time.Duration) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errReadTimeout) {
		return readTimeoutError{readTimeout}
	}
	if i := runEnd(cause); i >= 0 {
		return runEnds[i].err
	}
	return err
}

// requestHeader is the header of every request of a run with user agent
// ua (conditional requests add their validators to a copy).
func requestHeader(ua string) http.Header {
	return http.Header{
		"User-Agent":      {ua},
		"Accept":          {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		"Accept-Language": {"en-us,en-gb,en;q=0.7,*;q=0.3"},
		"Accept-Encoding": {"gzip, deflate"},
	}
}

// newTransport makes s's HTTP/1.1 transport: one connection at a time,
// dialed by the run's dialer, no transparent decompression (the body
// reader decodes within the content limit), no proxy, no HTTP/2.
func (r *run) newTransport(s *server) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return r.dial(ctx, s, network, addr)
		},
		TLSHandshakeTimeout:    r.o.ConnectTimeout,
		DisableCompression:     true,
		DisableKeepAlives:      r.o.DisableKeepAlive,
		MaxIdleConns:           1,
		MaxIdleConnsPerHost:    1,
		MaxConnsPerHost:        1,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
}

// fetchPage fetches one URL of s. It returns nil if the run ended during
// the request; connEnded when the connection cannot be reused; and the
// server's exception count.
func (r *run) fetchPage(ctx context.Context, s *server, it *item) (res *Result, connEnded bool, exceptions int) {
	var hdr http.Header
	if it.req.ETag != "" || it.req.LastModified != "" {
		hdr = http.Header{}
		if it.req.ETag != "" {
			hdr.Set("If-None-Match", it.req.ETag)
		}
		if it.req.LastModified != "" {
			hdr.Set("If-Modified-Since", it.req.LastModified)
		}
	}
	began := time.Now()
	resp, err := r.do(ctx, s, it.req.URL, hdr, r.o.ContentLimit, false)
	if err != nil && ctx.Err() != nil {
		return nil, true, 0
	}
	res = &Result{Request: it.req, Time: r.o.Clock()}
	var elapsed time.Duration
	var wire int64
	if resp != nil {
		elapsed, wire = resp.elapsed, resp.body.wire
		res.HTTPStatus, res.Header, res.Elapsed, res.WireBytes = resp.status, resp.header, resp.elapsed, wire
		res.RequestHeader, res.RemoteIP, res.Proto = resp.reqHeader, resp.remoteIP, resp.proto
	}
	if err != nil {
		var ref *RefusedError
		if errors.As(err, &ref) {
			res.Code = CodeRefused
			res.Message = ref.Error() // "refused ...", naming the setting
			r.refusedHost(s.host)
		} else {
			res.Code = CodeException
			res.Message = res.Code.String() + ": " + describe(err)
		}
		res.Status = res.Code.FetchStatus()
		if resp == nil && res.Code.IsException() {
			// What the failure cost (a timeout: the read timeout) makes
			// the server look as slow as it is.
			elapsed = time.Since(began)
		}
		exceptions = r.sched.answered(s, elapsed, wire, false, false, res.Code.IsException(), r.o.ExceptionBackoff)
		return res, true, exceptions
	}
	res.Code = HTTPCode(resp.status)
	res.Status = res.Code.FetchStatus()
	res.ETag = resp.header.Get("ETag")
	res.LastModified = resp.header.Get("Last-Modified")
	res.ContentType = mediaType(resp.header.Get("Content-Type"))
	switch {
	case res.Code == CodeSuccess:
		res.Body, res.Truncated = resp.body.data, resp.body.truncated
		if res.ContentType == "" {
			res.ContentType = mediaType(http.DetectContentType(res.Body))
		}
		if resp.body.decodeErr != nil {
			res.Message = "content decoding stopped: " + resp.body.decodeErr.Error()
		}
		if resp.typeRefused || (r.o.types != nil && !r.o.types.Match(sniffedType(res.ContentType, res.Body))) {
			res.Body, res.Truncated, res.TypeRefused = nil, false, true
			res.Message = "content not stored: " + res.ContentType + " is not a stored content type"
			r.o.Count(CounterTypeRefused, 1)
		}
	case res.Code.IsRedirect():
		loc := resp.header.Get("Location")
		target, lerr := urlutil.ResolveReference(it.req.URL, loc)
		switch {
		case loc == "":
			res.Message = res.Code.String() + ": " + httpStatusText(resp.status) + " without a Location"
		case lerr != nil:
			res.Message = res.Code.String() + ": " + httpStatusText(resp.status) + " to an unusable Location: " + lerr.Error()
		default:
			res.RedirectURL = target
			res.Message = res.Code.String() + ": " + httpStatusText(resp.status)
		}
	case res.Code != CodeNotModified:
		res.Message = res.Code.String() + ": " + httpStatusText(resp.status)
		if resp.status == http.StatusTooManyRequests || resp.status == http.StatusServiceUnavailable {
			res.RetryAfter = retryAfter(resp.header, time.Now())
			if res.RetryAfter > 0 {
				res.Message += ", Retry-After " + seconds(res.RetryAfter)
			}
		}
	}
	if r.o.KeepExchange && res.Code != CodeSuccess {
		res.Body, res.Truncated = resp.body.data, resp.body.truncated
	}
	exceptions = r.sched.answered(s, resp.elapsed, wire, resp.keepAlive, resp.serverClosed, res.Code.IsException(), r.o.ExceptionBackoff)
	return res, resp.closed, exceptions
}

// retryAfter is the wait a Retry-After header asks for (RFC 9110, section
// 10.2.3): delay-seconds, or an HTTP-date, taken relative to the
// response's Date header when it has one (so that a server's clock skew
// does not count) and to now otherwise. It is 0 without the header, for
// a value that is neither, or for a date already past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return max(at.Sub(now), 0)
}

// mediaType is the media type of a Content-Type value, lower case,
// without parameters ("" if none).
func mediaType(v string) string {
	// What mime.ParseMediaType returns as the type, valid or not, without
	// parsing (and allocating) the parameters.
	mt, _, _ := strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// httpStatusText is "http 404 Not Found".
func httpStatusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("http %d %s", code, t)
	}
	return fmt.Sprintf("http %d", code)
}

// describe makes a short message of a request error.
func describe(err error) string {
	var ref *RefusedError
	var dnsErr *DNSError
	switch {
	case errors.As(err, &ref):
		return ref.Error()
	case errors.Is(err, errReadTimeout):
		return err.Error()
	case errors.As(err, &dnsErr):
		return dnsErr.Error()
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout: " + shorten(err.Error())
	}
	return shorten(err.Error())
}

func shorten(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// progress logs a line every ProgressInterval until the returned function
// is called.
func (r *run) progress(began time.Time) func() {
	if r.o.NoProgressLog {
		return func() {}
	}
	return background(func(done <-chan struct{}) {
		t := time.NewTicker(r.o.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				queued, busy, servers := r.sched.load()
				el := time.Since(began).Seconds()
				ok := r.success.Load()
				r.o.Log.Info("fetch progress", "success", ok, "notmodified", r.notModified.Load(),
					"redirects", r.redirects.Load(), "gone", r.gone.Load(), "retry", r.retry.Load(),
					"bytes", r.bytes.Load(), "pages_per_s", fmt.Sprintf("%.1f", float64(ok)/max(el, 1e-9)),
					"queued", queued, "servers_busy", busy, "servers", servers)
			}
		}
	})
}
