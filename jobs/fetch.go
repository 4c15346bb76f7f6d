package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// FetchOptions configures Fetch. Zero durations and counts take the
// fetcher's defaults (see package fetcher); ServerDelay, MaxCrawlDelay and
// MaxExceptionsPerHost take a negative value for "none".
type FetchOptions struct {
	// Segment is the URI of the segment to fetch (its crawl_generate is
	// the fetch list).
	Segment string
	// Agent names the crawler (Nutch's http.agent.name); required.
	Agent string
	// ServerDelay is the politeness delay between requests to one host:
	// 0 means 5 s (Nutch's fetcher.server.delay), negative means none.
	ServerDelay time.Duration
	// MaxCrawlDelay caps robots.txt Crawl-delay: a host asking for more
	// is skipped for the round; 0 means 30 s (fetcher.max.crawl.delay),
	// negative means no cap.
	MaxCrawlDelay time.Duration
	// MaxConnections is the number of connections of each fetch task
	// (one per host at a time); 0 means 64.
	MaxConnections int
	// ConnectTimeout bounds resolving and connecting (0: 10 s);
	// ReadTimeout a whole response once connected (0: 30 s).
	ConnectTimeout time.Duration
	ReadTimeout    time.Duration
	// ContentLimit is the most body bytes kept per page, decoded (0:
	// 1 MiB); longer pages are cut and marked Content.Truncated.
	ContentLimit int64
	// FollowRedirects: 0 records redirects for the next round, as Nutch
	// does by default; N follows up to N redirects in a row within the
	// fetch (http.redirect.max).
	FollowRedirects int
	// TimeLimit, if positive, ends fetching that long after the job
	// started; what is not fetched by then stays due for the next round
	// (fetcher.timelimit.mins).
	TimeLimit time.Duration
	// AllowPrivate lets the fetcher connect to private, loopback and
	// link-local addresses (refused by default).
	AllowPrivate bool
	// DNSServers are the name servers to ask ("host:port" or "host");
	// empty means those of /etc/resolv.conf (/etc/hosts is not read).
	DNSServers []string
	// DNS configures the fetch tasks' cached asynchronous resolver
	// (package resolver; zero fields take its defaults). Its Servers
	// are DNSServers when those are given; Now and Log are not used.
	DNS resolver.Config
	// MaxExceptionsPerHost: after this many exceptions (network errors,
	// timeouts, 5xx, 403) a host's remaining URLs are left for the next
	// round (fetcher.max.exceptions.per.queue); 0 means 10, negative
	// means no limit (Nutch's default).
	MaxExceptionsPerHost int
	// Policy is the crawl scheduling policy's name (fetcher.PolicyNames;
	// "" means breadth-first).
	Policy string
	// QueueMode is "host" (or "") for politeness per host, "ip" for
	// politeness per IP address (fetcher.QueueByIP).
	QueueMode string
	// Politeness is "request" (or "") for the server delay between
	// requests, "connection" for it between connections
	// (fetcher.DelayBetween).
	Politeness string
	// DisableKeepAlive makes every request use a connection of its own.
	DisableKeepAlive bool
	// ThroughputThreshold, if positive, is the least pages per second a
	// task must keep: after ThroughputCheckAfter (0: 1 min), that many
	// low checks in a row, one a second, ThroughputRetries (0: 5), end
	// the task, leaving the rest for the next round
	// (fetcher.throughput.threshold.pages).
	ThroughputThreshold  float64
	ThroughputCheckAfter time.Duration
	ThroughputRetries    int
	// StallTimeout, if positive, ends a fetch task in which no request
	// finished for that long, keeping what it fetched
	// (fetcher.Options.StallTimeout).
	StallTimeout time.Duration
	// Now is the simulated time the fetch starts at: a fetch is recorded
	// at Now plus the time elapsed since the job started. Zero means the
	// wall clock.
	Now time.Time
	// ProgressInterval is the period of each task's progress log lines
	// (0: 10 s; negative: none). The engine's progress bar and counter
	// table go to Env.Runner.Progress.
	ProgressInterval time.Duration
}

// FetchResult reports a Fetch.
type FetchResult struct {
	// Segment is the fetched segment's URI.
	Segment string
	// Rows of crawl_fetch by status: Fetched (fetch_success), NotModified,
	// Redirects (perm and temp), Gone (fetch_gone), Retry (fetch_retry),
	// RobotsDenied (fetch_robots_denied), Skipped (fetch_skipped: left for
	// a later round) and Refused (fetch_refused: refused by trawl's own
	// policy, e.g. a private address without allow-private); Failed is
	// Retry plus Gone.
	Fetched, Failed, Redirects, NotModified, Gone, Retry, RobotsDenied int64
	Skipped, Refused                                                   int64
	// Unfetched counts fetch-list URLs left for a later round (each has a
	// fetch_skipped row): their host was skipped (robots.txt 5xx,
	// Crawl-delay above the cap, too many exceptions), or the time limit
	// or an interrupt came first.
	Unfetched int64
	// Interrupted says an interrupt ended the fetch early (see Interrupt);
	// what was fetched is published.
	Interrupted bool
	// Bytes counts body bytes read from the network.
	Bytes int64
	// Counters are the engine's and the job's counters (group "fetch").
	Counters *mapreduce.Counters
	// Duration is the job's wall time; PagesPerSecond is Fetched per
	// second of it.
	Duration       time.Duration
	PagesPerSecond float64
}

// JobFetch is the fetch job's name (and counter group).
const JobFetch = "fetch"

// Counter names of the fetch job, besides the fetcher's own (see the
// fetcher package's Counter constants and the status names).
const (
	ctrFetchListRows   = "fetch_list_rows"
	ctrFetchUnfetched  = "unfetched"
	ctrFetchTasks      = "tasks"
	ctrFetchContent    = "content_rows"
	ctrFetchRedirected = "redirect_targets_fetched"
	// ctrFetchInterrupted counts the tasks an interrupt ended early.
	ctrFetchInterrupted = "tasks_interrupted"
)

// Conf keys of the fetch job.
const (
	confFetchOut        = "fetch.out"
	confFetchContent    = "fetch.content"
	confFetchAgent      = "fetch.agent"
	confFetchDelay      = "fetch.serverDelay"
	confFetchMaxCrawl   = "fetch.maxCrawlDelay"
	confFetchConns      = "fetch.maxConnections"
	confFetchConnect    = "fetch.connectTimeout"
	confFetchRead       = "fetch.readTimeout"
	confFetchLimit      = "fetch.contentLimit"
	confFetchFollow     = "fetch.followRedirects"
	confFetchDeadline   = "fetch.deadline"
	confFetchPrivate    = "fetch.allowPrivate"
	confFetchDNS        = "fetch.dnsServers"
	confFetchResolver   = "fetch.resolver"
	confFetchExceptions = "fetch.maxExceptionsPerHost"
	confFetchStart      = "fetch.start"
	confFetchProgress   = "fetch.progressInterval"
	confFetchPolicy     = "fetch.policy"
	confFetchQueueMode  = "fetch.queueMode"
	confFetchPoliteness = "fetch.politeness"
	confFetchNoKeep     = "fetch.disableKeepAlive"
	confFetchTPThresh   = "fetch.throughputThreshold"
	confFetchTPAfter    = "fetch.throughputCheckAfter"
	confFetchTPRetries  = "fetch.throughputRetries"
	confFetchStall      = "fetch.stallTimeout"
)

// Fetch fetches a segment's fetch list (Nutch's Fetcher) and writes the
// segment's crawl_fetch (one segment.Fetch per URL reported, carrying the
// fetch-list datum) and content (one segment.Content per fetch_success,
// with the response headers and the decoded body).
//
// The engine job is map-only with one map task per fetch-list part
// (mapreduce.WholeFiles): generate puts each host in one part, so each
// task runs one fetcher (package fetcher) that owns its hosts' politeness.
// A task's map calls collect its part's rows; at the end of its input (the
// job's MapCleanup) it fetches them all with MaxConnections connections.
// crawl_fetch rows are sorted by URL within each part file; content rows
// are in the order pages arrived (sorting them would hold every body in
// memory). Redirect targets followed within the fetch (FollowRedirects)
// get crawl_fetch rows of their own, without a fetch-list datum.
//
// Every URL of the fetch list ends with a crawl_fetch row: fetched,
// failed with its reason, fetch_robots_denied, fetch_refused (trawl's own
// policy refused it, e.g. a private address without AllowPrivate), or
// fetch_skipped with the reason it was left for a later round (its host
// was skipped, the time limit or an interrupt came first); updatedb
// leaves the CrawlDB rows of skipped and refused URLs as they were, so
// they are due again. Fetch times are Now plus the time elapsed since the
// job started (simulated time in a simulated crawl).
//
// Fetch holds the segment's lock (segment.Lock) for its whole run, so a
// second fetch of the segment fails at once with an error matching
// crawldb.ErrLocked. Under the lock it removes what a killed run left
// (segment.Clean, and a content directory published without crawl_fetch);
// a segment whose crawl_fetch is published is not fetched again (an
// error). Fetch takes no CrawlDB lock: it reads and writes only the
// segment.
//
// With Env.Interrupt, the first interrupt ends the fetch as the time
// limit does: no new requests, the ones in flight cut, every URL not
// fetched recorded as skipped, and what was fetched published; Fetch then
// returns its result with an error matching ErrInterrupted.
func Fetch(ctx context.Context, env Env, o FetchOptions) (_ *FetchResult, err error) {
	start := time.Now()
	log := env.log().With("job", JobFetch)
	if o.Segment == "" {
		return nil, errors.New("fetch: no segment given")
	}
	// Check the options the way the tasks will use them.
	if _, err := fetcher.New(fetcher.Options{Agent: o.Agent}); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if err := o.resolverConfig().Validate(); err != nil {
		return nil, fmt.Errorf("fetch: DNS settings: %w", err)
	}
	if o.ContentLimit < 0 || o.MaxConnections < 0 || o.ConnectTimeout < 0 || o.ReadTimeout < 0 || o.FollowRedirects < 0 {
		return nil, fmt.Errorf("fetch: negative content limit, connections, timeout or redirect count")
	}
	if _, err := fetcher.PolicyByName(o.Policy); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if _, err := fetcher.ParseQueueMode(o.QueueMode); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if _, err := fetcher.ParseDelayBetween(o.Politeness); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if o.ThroughputThreshold < 0 || o.ThroughputCheckAfter < 0 || o.ThroughputRetries < 0 || o.StallTimeout < 0 {
		return nil, fmt.Errorf("fetch: negative throughput threshold, check delay or retries")
	}
	res := env.resolver()
	fsys, segPath, err := res.Resolve(o.Segment)
	if err != nil {
		return nil, fmt.Errorf("fetch: segment %s: %w", o.Segment, err)
	}
	genDir := path.Join(segPath, segment.DirGenerate)
	sl, st, err := env.takeSegment(fsys, segPath, JobFetch, log)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer env.unlock(sl, &err)
	switch {
	case st.State == segment.StateMerged:
		return nil, fmt.Errorf("fetch: segment %s is already fetched and merged into the CrawlDB", o.Segment)
	case st.State == segment.StateIncomplete:
		return nil, fmt.Errorf("fetch: segment %s has no published %s (was it generated?)", o.Segment, segment.DirGenerate)
	case st.State >= segment.StateFetched:
		return nil, fmt.Errorf("fetch: segment %s is already fetched (%s is published); remove %s and %s to fetch it again",
			o.Segment, segment.DirFetch, segment.DirFetch, segment.DirContent)
	}
	// What an interrupted fetch published in part (content without
	// crawl_fetch) goes; so does anything of a stage after it.
	if err := segment.RemoveOutputs(fsys, segPath, st.Partial, log); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	parts, rows, err := fetchListParts(fsys, genDir, storage.Join(o.Segment, segment.DirGenerate))
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}

	c := newConf()
	c.set(confIn, storage.Join(o.Segment, segment.DirGenerate))
	c.set(confFetchOut, storage.Join(o.Segment, segment.DirFetch))
	c.set(confFetchContent, storage.Join(o.Segment, segment.DirContent))
	c.set(confFetchAgent, o.Agent)
	c.setDuration(confFetchDelay, o.ServerDelay)
	c.setDuration(confFetchMaxCrawl, o.MaxCrawlDelay)
	c.setInt(confFetchConns, int64(o.MaxConnections))
	c.setDuration(confFetchConnect, o.ConnectTimeout)
	c.setDuration(confFetchRead, o.ReadTimeout)
	c.setInt(confFetchLimit, o.ContentLimit)
	c.setInt(confFetchFollow, int64(o.FollowRedirects))
	if o.TimeLimit > 0 {
		c.setTime(confFetchDeadline, start.Add(o.TimeLimit))
	}
	c.setBool(confFetchPrivate, o.AllowPrivate)
	c.setJSON(confFetchDNS, o.DNSServers)
	c.setJSON(confFetchResolver, o.resolverConfig())
	c.setInt(confFetchExceptions, int64(o.MaxExceptionsPerHost))
	c.setTime(confFetchStart, start)
	if !o.Now.IsZero() {
		c.setTime(confNow, o.Now)
	}
	c.setDuration(confFetchProgress, o.ProgressInterval)
	c.set(confFetchPolicy, o.Policy)
	c.set(confFetchQueueMode, o.QueueMode)
	c.set(confFetchPoliteness, o.Politeness)
	c.setBool(confFetchNoKeep, o.DisableKeepAlive)
	c.setFloat(confFetchTPThresh, o.ThroughputThreshold)
	c.setDuration(confFetchTPAfter, o.ThroughputCheckAfter)
	c.setInt(confFetchTPRetries, int64(o.ThroughputRetries))
	c.setDuration(confFetchStall, o.StallTimeout)
	if c.err != nil {
		return nil, fmt.Errorf("fetch: %w", c.err)
	}
	stop, release := env.Interrupt.begin()
	defer release()
	job, err := newFetchJob(c.m, stop)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	log.Info("fetch started", "segment", o.Segment, "urls", rows, "parts", len(parts), "agent", o.Agent)
	jr, err := env.execute(ctx, job.Name, job.Conf, job)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	g := func(name string) int64 { return jr.Counters.Get(JobFetch, name) }
	r := &FetchResult{
		Segment:      o.Segment,
		Counters:     jr.Counters,
		Fetched:      g(crawldb.StatusFetchSuccess.String()),
		NotModified:  g(crawldb.StatusFetchNotModified.String()),
		Redirects:    g(crawldb.StatusFetchRedirPerm.String()) + g(crawldb.StatusFetchRedirTemp.String()),
		Gone:         g(crawldb.StatusFetchGone.String()),
		Retry:        g(crawldb.StatusFetchRetry.String()),
		RobotsDenied: g(crawldb.StatusFetchRobotsDenied.String()),
		Skipped:      g(crawldb.StatusFetchSkipped.String()),
		Refused:      g(crawldb.StatusFetchRefused.String()),
		Unfetched:    g(ctrFetchUnfetched),
		Bytes:        g(fetcher.CounterBytes),
		Interrupted:  g(ctrFetchInterrupted) > 0,
		Duration:     time.Since(start),
	}
	r.Failed = r.Retry + r.Gone
	if s := r.Duration.Seconds(); s > 0 {
		r.PagesPerSecond = float64(r.Fetched) / s
	}
	if got := g(ctrFetchListRows); got != rows || g(ctrFetchTasks) != int64(len(parts)) {
		return r, fmt.Errorf("fetch: the tasks fetched %d rows in %d parts, but the fetch list has %d rows in %d parts (did %s change during the fetch?)",
			got, g(ctrFetchTasks), rows, len(parts), storage.Join(o.Segment, segment.DirGenerate))
	}
	log.Info("fetch done", "segment", o.Segment, "fetched", r.Fetched, "notmodified", r.NotModified,
		"redirects", r.Redirects, "gone", r.Gone, "retry", r.Retry, "robots_denied", r.RobotsDenied,
		"skipped", r.Skipped, "refused", r.Refused, "unfetched", r.Unfetched, "bytes", r.Bytes,
		"pages_per_s", fmt.Sprintf("%.1f", r.PagesPerSecond), "duration", r.Duration.Round(time.Millisecond))
	if r.Interrupted {
		return r, fmt.Errorf("fetch: %w: kept %d fetched pages in %s; the %d URLs not fetched are recorded as skipped and stay due",
			ErrInterrupted, r.Fetched, o.Segment, r.Unfetched)
	}
	return r, nil
}

// resolverConfig returns the resolver configuration of the fetch tasks:
// DNS with DNSServers, if given, as its servers.
func (o *FetchOptions) resolverConfig() resolver.Config {
	c := o.DNS
	if len(o.DNSServers) > 0 {
		c.Servers = o.DNSServers
	}
	return c
}

// fetchListParts reads the footer and first URL of each part of a fetch
// list (parts without rows are left out): the driver counts the rows the
// tasks must read, and checks that no two parts start with one URL.
func fetchListParts(fsys storage.FS, dir, uri string) (map[string]int64, int64, error) {
	files, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", uri, err)
	}
	parts := map[string]int64{}
	var total int64
	for _, p := range files {
		n, first, err := firstURL(fsys, p)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			continue
		}
		if _, dup := parts[first]; dup {
			return nil, 0, fmt.Errorf("%s: two parts start with %s: the fetch list is not partitioned by host", uri, first)
		}
		parts[first] = n
		total += n
	}
	return parts, total, nil
}

// firstURL returns the number of rows of a fetch-list part and its first
// URL.
func firstURL(fsys storage.FS, p string) (int64, string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return 0, "", err
	}
	r, err := parquetio.Open[urlHost](f, p)
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	n := r.NumRows()
	if n == 0 {
		return 0, "", nil
	}
	for row, err := range r.Rows(0, 1) {
		if err != nil {
			return 0, "", err
		}
		return n, row.URL, nil
	}
	return 0, "", fmt.Errorf("%s: %d rows in the footer, none in the file", p, n)
}

// fetchRecord is one output record of the fetch job: a crawl_fetch row or
// a content row.
type fetchRecord struct {
	Fetch   *segment.Fetch
	Content *segment.Content
}

// fetchConfig is the fetch job's configuration, read from its Conf.
type fetchConfig struct {
	opts       fetcher.Options
	dnsServers []string
	dns        resolver.Config
	start, now time.Time
}

// clock returns the fetch-time clock: Now plus the time since the job
// started, or the wall clock.
func (fc *fetchConfig) clock() func() time.Time {
	if fc.now.IsZero() {
		return nil
	}
	now, start := fc.now, fc.start
	return func() time.Time { return now.Add(time.Since(start)) }
}

// fetchTask collects the rows of one map task's part (its Task.State).
type fetchTask struct {
	rows []crawldb.Datum
}

// newFetchJob builds the fetch job from its Conf. When stop closes, the
// tasks end as at the time limit and keep what they fetched (nil: never).
func newFetchJob(m map[string]string, stop <-chan struct{}) (*mapreduce.Job[fetchRecord, fetchRecord], error) {
	c := &conf{m: m}
	in, out, contentOut := c.str(confIn), c.str(confFetchOut), c.str(confFetchContent)
	fc := &fetchConfig{}
	c.json(confFetchDNS, &fc.dnsServers)
	c.json(confFetchResolver, &fc.dns)
	fc.opts = fetcher.Options{
		Agent:                c.str(confFetchAgent),
		ServerDelay:          c.duration(confFetchDelay),
		MaxCrawlDelay:        c.duration(confFetchMaxCrawl),
		MaxConnections:       int(c.integer(confFetchConns)),
		ConnectTimeout:       c.duration(confFetchConnect),
		ReadTimeout:          c.duration(confFetchRead),
		ContentLimit:         c.integer(confFetchLimit),
		FollowRedirects:      int(c.integer(confFetchFollow)),
		Deadline:             c.time(confFetchDeadline),
		AllowPrivate:         c.boolean(confFetchPrivate),
		MaxExceptionsPerHost: int(c.integer(confFetchExceptions)),
		ProgressInterval:     c.duration(confFetchProgress),
		DisableKeepAlive:     c.boolean(confFetchNoKeep),
		ThroughputThreshold:  c.float(confFetchTPThresh),
		ThroughputCheckAfter: c.duration(confFetchTPAfter),
		ThroughputRetries:    int(c.integer(confFetchTPRetries)),
		StallTimeout:         c.duration(confFetchStall),
	}
	fc.start, fc.now = c.time(confFetchStart), c.time(confNow)
	fc.opts.Stop = stop
	if c.err != nil {
		return nil, c.err
	}
	var err error
	if fc.opts.Policy, err = fetcher.PolicyByName(c.str(confFetchPolicy)); err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	if fc.opts.QueueMode, err = fetcher.ParseQueueMode(c.str(confFetchQueueMode)); err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	if fc.opts.DelayBetween, err = fetcher.ParseDelayBetween(c.str(confFetchPoliteness)); err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	if in == "" || out == "" || contentOut == "" {
		return nil, errors.New("fetch job: conf lacks the fetch list or an output")
	}
	if _, err := fetcher.New(fc.opts); err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	mapFn := func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[fetchRecord]) error {
		ft := t.State.(*fetchTask)
		ft.rows = append(ft.rows, d)
		return nil
	}
	return &mapreduce.Job[fetchRecord, fetchRecord]{
		Name:    JobFetch,
		Conf:    m,
		Inputs:  []mapreduce.Input[fetchRecord]{mapreduce.From(in, mapFn, mapreduce.WholeFiles(), mapreduce.RequireSuccess())},
		MapOnly: true,
		MapSetup: func(t *mapreduce.Task) error {
			t.State = &fetchTask{}
			return nil
		},
		// The part is read: fetch it (a part without rows is no task).
		MapCleanup: func(t *mapreduce.Task, emit mapreduce.Emit[fetchRecord]) error {
			ft := t.State.(*fetchTask)
			if len(ft.rows) == 0 {
				return nil
			}
			rows := ft.rows
			ft.rows = nil
			return runFetchTask(t, fc, rows, emit)
		},
		// content first: the engine publishes outputs in this order, so
		// a published crawl_fetch means the content is published too.
		Outputs: []mapreduce.Output[fetchRecord]{
			mapreduce.WriteRouted(contentOut, func(r fetchRecord) (segment.Content, bool) {
				if r.Content == nil {
					return segment.Content{}, false
				}
				return *r.Content, true
			}),
			mapreduce.WriteRouted(out, func(r fetchRecord) (segment.Fetch, bool) {
				if r.Fetch == nil {
					return segment.Fetch{}, false
				}
				return *r.Fetch, true
			}),
		},
	}, nil
}

// runFetchTask fetches the rows of one part: content rows are emitted as
// pages arrive, crawl_fetch rows sorted by URL at the end.
func runFetchTask(t *mapreduce.Task, fc *fetchConfig, rows []crawldb.Datum, emit mapreduce.Emit[fetchRecord]) error {
	o := fc.opts
	o.Clock = fc.clock()
	o.Log = t.Log
	o.Count = func(name string, n int64) {
		if name != fetcher.CounterUnfetched { // counted below, for the fetch list only
			t.Count(name, n)
		}
	}
	rc := fc.dns
	if len(fc.dnsServers) > 0 {
		rc.Servers = fc.dnsServers
	}
	rc.Log = t.Log
	dns, err := resolver.New(rc)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer func() {
		st := dns.Stats()
		dns.Close()
		t.Log.Info("fetch task DNS", st.LogAttrs()...)
		for name, n := range st.Counters() {
			t.Count("dns_"+name, n)
		}
	}()
	o.Resolver = dns
	f, err := fetcher.New(o)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	t.Count(ctrFetchTasks, 1)
	t.Count(ctrFetchListRows, int64(len(rows)))
	reqs := make([]fetcher.Request, len(rows))
	for i := range rows {
		d := &rows[i]
		reqs[i] = fetcher.Request{URL: d.URL, ETag: d.ETag, LastModified: d.LastModified, Priority: float64(d.Score), ID: i}
	}
	var out []segment.Fetch
	reported := make([]bool, len(rows))
	st, err := f.Run(t.Ctx, reqs, func(r *fetcher.Result) error {
		fr := segment.Fetch{
			URL: r.Request.URL, Status: r.Status, FetchTime: r.Time.UTC(), HTTPStatus: int32(r.HTTPStatus),
			ContentType: r.ContentType, RedirectURL: r.RedirectURL, ETag: r.ETag, LastModified: r.LastModified,
			Message: r.Message,
		}
		if r.Request.ID >= 0 {
			fr.Datum = rows[r.Request.ID]
			reported[r.Request.ID] = true
		} else {
			t.Count(ctrFetchRedirected, 1)
		}
		out = append(out, fr)
		if r.Status == crawldb.StatusFetchSuccess {
			emit(r.Request.URL, fetchRecord{Content: &segment.Content{
				URL: r.Request.URL, BaseURL: r.Request.URL, ContentType: r.ContentType,
				Headers: flatHeader(r.Header), Body: r.Body, Truncated: r.Truncated, FetchTime: fr.FetchTime,
			}})
			t.Count(ctrFetchContent, 1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if st.Stopped {
		t.Count(ctrFetchInterrupted, 1)
	}
	// Every URL of the fetch list ends with a crawl_fetch row. The
	// fetcher reports each request once (a URL listed twice, once);
	// anything it did not report is recorded as skipped, never dropped.
	unfetched := st.Unfetched
	var seen map[string]bool // URLs with a row; built only if a row lacks a result
	for i, ok := range reported {
		if ok {
			continue
		}
		if seen == nil {
			seen = make(map[string]bool, len(out))
			for j := range out {
				seen[out[j].URL] = true
			}
		}
		if seen[rows[i].URL] {
			continue
		}
		seen[rows[i].URL] = true
		out = append(out, segment.Fetch{URL: rows[i].URL, Status: crawldb.StatusFetchSkipped,
			Message: "skipped: the fetcher gave no result", Datum: rows[i]})
		t.Count(crawldb.StatusFetchSkipped.String(), 1)
		unfetched++
	}
	t.Count(ctrFetchUnfetched, unfetched)
	slices.SortFunc(out, func(a, b segment.Fetch) int { return strings.Compare(a.URL, b.URL) })
	for i := range out {
		emit(out[i].URL, fetchRecord{Fetch: &out[i]})
	}
	return nil
}

// flatHeader turns a header into Content.Headers: canonical names, values
// of a repeated header joined by ", ".
func flatHeader(h http.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	m := make(map[string]string, len(h))
	for k, vs := range h {
		m[k] = strings.Join(vs, ", ")
	}
	return m
}
