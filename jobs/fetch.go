package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/warc"
)

// FetchOptions configures Fetch. Each field's zero value has one
// meaning, given in its doc: for most it is the default, which is also
// the default of the fetcher.* setting of the same name (see
// DefaultFetchOptions). "None" (no delay, no cap, no limit, no progress
// lines) is a No... field of its own, never a negative value: Validate
// refuses negative durations and counts.
type FetchOptions struct {
	// Segment is the URI of the segment to fetch (its crawl_generate is
	// the fetch list); Fetch requires it (Validate does not check it).
	Segment string
	// Agent names the crawler (Nutch's http.agent.name); required.
	Agent string
	// ServerDelay is the politeness delay between requests to one host:
	// 0 means fetcher.DefaultServerDelay, 5 s (Nutch's
	// fetcher.server.delay).
	ServerDelay time.Duration
	// NoServerDelay sends a host's requests back to back (the
	// fetcher.serverDelay setting 0); ServerDelay must then be 0.
	NoServerDelay bool
	// MaxCrawlDelay caps robots.txt Crawl-delay: a host asking for more
	// is skipped for the round; 0 means fetcher.DefaultMaxCrawlDelay,
	// 30 s (fetcher.max.crawl.delay).
	MaxCrawlDelay time.Duration
	// NoCrawlDelayCap honours any Crawl-delay (the fetcher.maxCrawlDelay
	// setting -1s); MaxCrawlDelay must then be 0.
	NoCrawlDelayCap bool
	// MaxRetryAfter caps the Retry-After of 429 and 503 answers: within
	// it the host's next request waits as asked; a host asking for more
	// is skipped for the round; 0 means fetcher.DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// NoRetryAfterCap honours any Retry-After (the fetcher.maxRetryAfter
	// setting -1s); MaxRetryAfter must then be 0.
	NoRetryAfterCap bool
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
	// ContentTypes are the media types whose pages are stored (patterns
	// of fetcher.TypeMatcher: "text/html", "image/*", "*/*"); a 200 page
	// of another type is recorded fetch_success with no content row, its
	// body not downloaded. Nil means DefaultContentTypes: HTML and what
	// the parser parses, as Nutch keeps what a parser is configured for.
	ContentTypes []string
	// FollowRedirects: 0 records redirects for the next round, as Nutch
	// does by default; N follows up to N redirects in a row within the
	// fetch (http.redirect.max).
	FollowRedirects int
	// TimeLimit, if positive, ends fetching that long after the job
	// started; what is not fetched by then stays due for the next round
	// (fetcher.timelimit.mins). 0 means no time limit.
	TimeLimit time.Duration
	// AllowPrivate lets the fetcher connect to private, loopback and
	// link-local addresses; false (the zero value) refuses them.
	AllowPrivate bool
	// DNSServers are the name servers to ask ("host:port" or "host");
	// empty means those of /etc/resolv.conf (/etc/hosts is not read).
	DNSServers []string
	// DNS configures the fetch tasks' cached asynchronous resolver
	// (package resolver; zero fields take its defaults, which are the
	// fetcher.dns.* settings' defaults). Its Servers are DNSServers when
	// those are given; Now and Log are not used.
	DNS resolver.Config
	// MaxExceptionsPerHost: after this many exceptions (network errors,
	// timeouts, 5xx, 403) a host's remaining URLs are left for the next
	// round (fetcher.max.exceptions.per.queue); 0 means 10.
	MaxExceptionsPerHost int
	// NoExceptionLimit never leaves a host for its exceptions (Nutch's
	// default; the fetcher.maxExceptionsPerHost setting -1);
	// MaxExceptionsPerHost must then be 0.
	NoExceptionLimit bool
	// Policy is the crawl scheduling policy's name (fetcher.PolicyNames);
	// "" means DefaultFetchPolicy, capacity, as the fetcher.policy
	// setting.
	Policy string
	// QueueMode is "host" (or "") for politeness per host, "ip" for
	// politeness per IP address (fetcher.QueueByIP).
	QueueMode string
	// Politeness is "request" (or "") for the server delay between
	// requests, "connection" for it between connections
	// (fetcher.DelayBetween).
	Politeness string
	// DisableKeepAlive makes every request use a connection of its own;
	// false (the zero value) keeps connections alive.
	DisableKeepAlive bool
	// ThroughputThreshold, if positive, is the least pages per second a
	// task must keep (0: no minimum): after ThroughputCheckAfter (0:
	// 1 min), that many low checks in a row, one a second,
	// ThroughputRetries (0: 5), end the task, leaving the rest for the
	// next round (fetcher.throughput.threshold.pages).
	ThroughputThreshold  float64
	ThroughputCheckAfter time.Duration
	ThroughputRetries    int
	// StallTimeout, if positive, ends a fetch task in which no request
	// finished for that long, keeping what it fetched
	// (fetcher.Options.StallTimeout); 0 means no stall timeout.
	StallTimeout time.Duration
	// Now is the simulated time the fetch starts at: a fetch is recorded
	// at Now plus the time elapsed since the job started. Zero means the
	// wall clock.
	Now time.Time
	// ProgressInterval is the period of each task's progress log lines
	// (0: 10 s, as the engine.progressInterval setting). The engine's
	// progress bar and counter table go to Env.Runner.Progress.
	ProgressInterval time.Duration
	// NoProgressLog logs no progress lines from the tasks;
	// ProgressInterval must then be 0.
	NoProgressLog bool
	// ContentCompression is the page compression of the segment's
	// content files, a parquetio.Compression name; "" means
	// DefaultContentCompression (the fetcher.contentCompression setting).
	ContentCompression string
	// Parse, when set, parses every page as it is fetched, as Nutch's
	// fetcher.parse does: the fetch job then also writes the segment's
	// parse_data, parse_text and crawl_parse (the rows the parse job
	// would write, counted in the "parse" counter group), and the segment
	// is parsed once the fetch is published. Its Segment is ignored (the
	// fetch's is used). nil leaves parsing to the parse job.
	Parse *ParseOptions `json:"-"`
	// WARC, when set, also writes every response (and its request) but
	// those of pages of types not stored (ContentTypes) as
	// WARC/1.1 records into the segment's warc directory
	// (segment.DirWARC), each task its own files and their CDXJ indexes,
	// published with the fetch's other outputs (fetcher.warc). nil
	// writes no WARC.
	WARC *WARCOptions `json:",omitempty"`
}

// DefaultContentCompression is the content compression of a FetchOptions
// without one, as of the fetcher.contentCompression setting: zstd at its
// fastest level, which on a synthetic crawl's pages took 30% less CPU
// to write than zstd's default level for 4.5% more bytes (the setting's
// doc has the measurement).
const DefaultContentCompression = parquetio.ZstdFastest

// DefaultContentTypes returns the content types a FetchOptions without
// them stores, as of the fetcher.contentTypes setting: the types the
// parser parses (parser.Types: HTML, plain text, PDF). Each call returns
// a new slice.
func DefaultContentTypes() []string { return parser.Types() }

// DefaultFetchPolicy is the crawl scheduling policy of a FetchOptions
// without one, as of the fetcher.policy setting: capacity (servers by
// score per second, URLs by score; the fastest in bench/fetch).
const DefaultFetchPolicy = "capacity"

// DefaultFetchOptions returns the options every zero field of a
// FetchOptions stands for, spelled out: the defaults of the fetcher.*
// settings (and engine.progressInterval for ProgressInterval). Agent and
// Segment are left empty.
func DefaultFetchOptions() FetchOptions {
	return FetchOptions{
		ServerDelay:          fetcher.DefaultServerDelay,
		MaxCrawlDelay:        fetcher.DefaultMaxCrawlDelay,
		MaxRetryAfter:        fetcher.DefaultMaxRetryAfter,
		MaxConnections:       fetcher.DefaultMaxConnections,
		ConnectTimeout:       fetcher.DefaultConnectTimeout,
		ReadTimeout:          fetcher.DefaultReadTimeout,
		ContentLimit:         fetcher.DefaultContentLimit,
		ContentTypes:         DefaultContentTypes(),
		MaxExceptionsPerHost: fetcher.DefaultMaxExceptionsPerHost,
		Policy:               DefaultFetchPolicy,
		QueueMode:            fetcher.QueueByHost.String(),
		Politeness:           fetcher.DelayBetweenRequests.String(),
		ThroughputCheckAfter: fetcher.DefaultThroughputCheckAfter,
		ThroughputRetries:    fetcher.DefaultThroughputRetries,
		ProgressInterval:     fetcher.DefaultProgressInterval,
		ContentCompression:   string(DefaultContentCompression),
		DNS: resolver.Config{
			CacheSize:     resolver.DefaultCacheSize,
			RefreshPeriod: resolver.DefaultRefreshPeriod,
			NegativeTTL:   resolver.DefaultNegativeTTL,
			Timeout:       resolver.DefaultTimeout,
			Retries:       resolver.DefaultRetries,
		},
	}
}

// Validate checks o as Fetch and the fetch tasks use it (all but
// Segment): an agent, no negative duration or count, no No... field
// beside a value for the same thing, known policy, queue and politeness
// names, a known content compression, and a usable DNS configuration.
func (o FetchOptions) Validate() error {
	fo, err := o.fetcherOptions()
	if err != nil {
		return err
	}
	if _, err := o.contentCompression(); err != nil {
		return err
	}
	if o.WARC != nil {
		if err := o.WARC.Validate(); err != nil {
			return err
		}
	}
	if err := fo.Validate(); err != nil {
		return err
	}
	if o.TimeLimit < 0 {
		return fmt.Errorf("negative time limit %v", o.TimeLimit)
	}
	if err := o.resolverConfig().Validate(); err != nil {
		return fmt.Errorf("DNS settings: %w", err)
	}
	return nil
}

// contentTypes returns the content types stored.
func (o FetchOptions) contentTypes() []string {
	if o.ContentTypes == nil {
		return DefaultContentTypes()
	}
	return o.ContentTypes
}

// contentCompression returns the compression of the content files.
func (o FetchOptions) contentCompression() (parquetio.Compression, error) {
	if o.ContentCompression == "" {
		return DefaultContentCompression, nil
	}
	c, err := parquetio.ParseCompression(o.ContentCompression)
	if err != nil {
		return "", fmt.Errorf("content compression: %w", err)
	}
	return c, nil
}

// fetcherOptions returns the fetcher's options for o: the fields they
// share, and the policy and modes by name. A task adds its deadline,
// clock, resolver, logger, counters and stop channel.
func (o FetchOptions) fetcherOptions() (fetcher.Options, error) {
	name := o.Policy
	if name == "" {
		name = DefaultFetchPolicy
	}
	policy, err := fetcher.PolicyByName(name)
	if err != nil {
		return fetcher.Options{}, err
	}
	queue, err := fetcher.ParseQueueMode(o.QueueMode)
	if err != nil {
		return fetcher.Options{}, err
	}
	between, err := fetcher.ParseDelayBetween(o.Politeness)
	if err != nil {
		return fetcher.Options{}, err
	}
	return fetcher.Options{
		Agent: o.Agent, Policy: policy, QueueMode: queue, DelayBetween: between,
		ServerDelay: o.ServerDelay, NoServerDelay: o.NoServerDelay,
		MaxCrawlDelay: o.MaxCrawlDelay, NoCrawlDelayCap: o.NoCrawlDelayCap,
		MaxRetryAfter: o.MaxRetryAfter, NoRetryAfterCap: o.NoRetryAfterCap,
		MaxConnections: o.MaxConnections, ConnectTimeout: o.ConnectTimeout, ReadTimeout: o.ReadTimeout,
		ContentLimit: o.ContentLimit, FollowRedirects: o.FollowRedirects, AllowPrivate: o.AllowPrivate,
		ContentTypes:         o.contentTypes(),
		MaxExceptionsPerHost: o.MaxExceptionsPerHost, NoExceptionLimit: o.NoExceptionLimit,
		DisableKeepAlive:    o.DisableKeepAlive,
		ThroughputThreshold: o.ThroughputThreshold, ThroughputCheckAfter: o.ThroughputCheckAfter,
		ThroughputRetries: o.ThroughputRetries, StallTimeout: o.StallTimeout,
		ProgressInterval: o.ProgressInterval, NoProgressLog: o.NoProgressLog,
		KeepExchange: o.WARC != nil,
	}, nil
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
	// RetryAfter counts the 429 and 503 answers whose Retry-After the
	// fetch honoured (fetcher.maxRetryAfter); RetryAfterHosts the hosts
	// that sent them, by task (each task logs its counts by host), and
	// RetryAfterSkipped the hosts skipped for the round because they
	// asked for more than the cap.
	RetryAfter, RetryAfterHosts, RetryAfterSkipped int64
	// Counters are the engine's and the job's counters (group "fetch").
	Counters *mapreduce.Counters
	// Duration is the job's wall time; PagesPerSecond is Fetched per
	// second of it.
	Duration       time.Duration
	PagesPerSecond float64
	// Parse reports the parsing of a fetch that parses
	// (FetchOptions.Parse; its Duration is the fetch's); nil otherwise.
	Parse *ParseResult
}

// JobFetch is the fetch job's name (and counter group).
const JobFetch = "fetch"

// Counter names of the fetch job, besides the fetcher's own (see the
// fetcher package's Counter constants and the status names).
const (
	ctrFetchListRows = "fetch_list_rows"
	// ctrFetchRetryAfterHosts counts, per task, the hosts that answered
	// 429 or 503 with a Retry-After (the fetcher counts the answers).
	ctrFetchRetryAfterHosts = "hosts_retry_after"
	ctrFetchUnfetched       = "unfetched"
	ctrFetchTasks           = "tasks"
	ctrFetchContent         = "content_rows"
	ctrFetchRedirected      = "redirect_targets_fetched"
	// ctrFetchInterrupted counts the tasks an interrupt ended early.
	ctrFetchInterrupted = "tasks_interrupted"
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
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	fsys, segPath, err := env.resolver().Resolve(o.Segment)
	if err != nil {
		return nil, fmt.Errorf("fetch: segment %s: %w", o.Segment, err)
	}
	sl, err := env.takeFetchable(fsys, segPath, o.Segment, log)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer env.unlock(sl, &err)
	list := storage.Join(o.Segment, segment.DirGenerate)
	parts, rows, err := fetchListParts(fsys, path.Join(segPath, segment.DirGenerate), list)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	spec := fetchSpec{Options: o, Start: start}
	if o.Parse != nil {
		po := *o.Parse
		po.Segment = o.Segment
		if err := po.Validate(); err != nil {
			return nil, fmt.Errorf("fetch: parse: %w", err)
		}
		filters, err := po.Filters.spec(env.resolver())
		if err != nil {
			return nil, fmt.Errorf("fetch: parse: %w", err)
		}
		pj := planParse(env, o.Segment, po, filters)
		spec.Parse = &pj
	}
	stop, release := env.Interrupt.begin()
	defer release()
	spec.Stop = stop
	log.Info("fetch started", "segment", o.Segment, "urls", rows, "parts", len(parts), "agent", o.Agent)
	jr, err := env.Run(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	r := fetchResult(o.Segment, jr, start)
	if spec.Parse != nil {
		r.Parse = parseResult(o.Segment, jr.Counters, start)
	}
	g := func(name string) int64 { return jr.Counters.Get(JobFetch, name) }
	if got := g(ctrFetchListRows); got != rows || g(ctrFetchTasks) != int64(len(parts)) {
		return r, fmt.Errorf("fetch: the tasks fetched %d rows in %d parts, but the fetch list has %d rows in %d parts (did %s change during the fetch?)",
			got, g(ctrFetchTasks), rows, len(parts), list)
	}
	log.Info("fetch done", "segment", o.Segment, "fetched", r.Fetched, "notmodified", r.NotModified,
		"redirects", r.Redirects, "gone", r.Gone, "retry", r.Retry, "robots_denied", r.RobotsDenied,
		"skipped", r.Skipped, "refused", r.Refused, "unfetched", r.Unfetched, "bytes", r.Bytes,
		"retry_after", r.RetryAfter, "retry_after_hosts", r.RetryAfterHosts,
		"pages_per_s", fmt.Sprintf("%.1f", r.PagesPerSecond), "duration", r.Duration.Round(time.Millisecond))
	if r.Interrupted {
		return r, fmt.Errorf("fetch: %w: kept %d fetched pages in %s; the %d URLs not fetched are recorded as skipped and stay due",
			ErrInterrupted, r.Fetched, o.Segment, r.Unfetched)
	}
	return r, nil
}

// takeFetchable takes the lock of the segment at segPath (URI seg) for
// the fetch and checks, under it, that the segment is generated and not
// fetched; what an interrupted fetch published in part (content without
// crawl_fetch) goes, and so does anything of a stage after it. The caller
// releases the lock.
func (e Env) takeFetchable(fsys storage.FS, segPath, seg string, log *slog.Logger) (*crawldb.LockHandle, error) {
	sl, st, err := e.takeSegment(fsys, segPath, JobFetch, log)
	if err != nil {
		return nil, err
	}
	switch {
	case st.State == segment.StateMerged:
		err = fmt.Errorf("segment %s is already fetched and merged into the CrawlDB", seg)
	case st.State == segment.StateIncomplete:
		err = fmt.Errorf("segment %s has no published %s (was it generated?)", seg, segment.DirGenerate)
	case st.State >= segment.StateFetched:
		err = fmt.Errorf("segment %s is already fetched (%s is published); remove %s and %s to fetch it again",
			seg, segment.DirFetch, segment.DirFetch, segment.DirContent)
	default:
		err = segment.RemoveOutputs(fsys, segPath, st.Partial, log)
	}
	if err != nil {
		_ = sl.Unlock()
		return nil, err
	}
	return sl, nil
}

// fetchResult reads a fetch job's result from its counters.
func fetchResult(seg string, jr *mapreduce.Result, start time.Time) *FetchResult {
	g := func(name string) int64 { return jr.Counters.Get(JobFetch, name) }
	r := &FetchResult{
		Segment:           seg,
		Counters:          jr.Counters,
		Fetched:           g(crawldb.StatusFetchSuccess.String()),
		NotModified:       g(crawldb.StatusFetchNotModified.String()),
		Redirects:         g(crawldb.StatusFetchRedirPerm.String()) + g(crawldb.StatusFetchRedirTemp.String()),
		Gone:              g(crawldb.StatusFetchGone.String()),
		Retry:             g(crawldb.StatusFetchRetry.String()),
		RobotsDenied:      g(crawldb.StatusFetchRobotsDenied.String()),
		Skipped:           g(crawldb.StatusFetchSkipped.String()),
		Refused:           g(crawldb.StatusFetchRefused.String()),
		Unfetched:         g(ctrFetchUnfetched),
		Bytes:             g(fetcher.CounterBytes),
		RetryAfter:        g(fetcher.CounterRetryAfter),
		RetryAfterHosts:   g(ctrFetchRetryAfterHosts),
		RetryAfterSkipped: g(fetcher.CounterRetryAfterTooLong),
		Interrupted:       g(ctrFetchInterrupted) > 0,
		Duration:          time.Since(start),
	}
	r.Failed = r.Retry + r.Gone
	if s := r.Duration.Seconds(); s > 0 {
		r.PagesPerSecond = float64(r.Fetched) / s
	}
	return r
}

// resolverConfig returns the resolver configuration of the fetch tasks:
// DNS with DNSServers, if given, as its servers.
func (o FetchOptions) resolverConfig() resolver.Config {
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
	// Parse is a parse output row of a fetch that parses.
	Parse parseOut
	// WARC is an exchange to archive, of a fetch that writes WARC files.
	WARC *warc.Exchange
}

// fetchSpec is the fetch job's spec: the options Fetch was given and
// when the job started (the time limit and the simulated fetch times
// count from it).
type fetchSpec struct {
	Options FetchOptions
	Start   time.Time
	// Stop, when closed, ends the tasks as the time limit does, keeping
	// what they fetched (nil: never). It stays in the process that built
	// the spec: an interrupt cannot reach tasks elsewhere.
	Stop <-chan struct{} `json:"-"`
	// Parse, when not nil, is the parse of FetchOptions.Parse, its
	// filters' rule files read: the fetch tasks parse each page with it.
	Parse *parseJob `json:",omitempty"`
}

func (fetchSpec) JobName() string { return JobFetch }

// Job builds the fetch job: map-only, one task per fetch-list part (see
// Fetch).
func (s fetchSpec) Job() (mapreduce.Runnable, error) {
	o := s.Options
	if o.Segment == "" {
		return nil, errors.New("fetch job: no segment")
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	mapFn := func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[fetchRecord]) error {
		ft := t.State.(*fetchTask)
		ft.rows = append(ft.rows, d)
		return nil
	}
	compression, err := o.contentCompression()
	if err != nil {
		return nil, fmt.Errorf("fetch job: %w", err)
	}
	list := storage.Join(o.Segment, segment.DirGenerate)
	var pp *pageParser
	if s.Parse != nil {
		if pp, err = s.Parse.pageParser(); err != nil {
			return nil, fmt.Errorf("fetch job: parse: %w", err)
		}
	}
	return &mapreduce.Job[fetchRecord, fetchRecord]{
		Name:    JobFetch,
		Inputs:  []mapreduce.Input[fetchRecord]{mapreduce.From(list, mapFn, mapreduce.WholeFiles(), mapreduce.RequireSuccess())},
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
			// The rows grew by appends, to up to twice their number;
			// the fetch holds them to its end, so it holds a copy of
			// their size and lets the grown array go.
			rows := slices.Clone(ft.rows)
			ft.rows = nil
			return s.runTask(t, rows, pp, emit)
		},
		Outputs: fetchOutputs(o.Segment, compression, pp != nil, o.WARC),
	}, nil
}

// fetchOutputs are the fetch job's outputs in the segment seg: content
// (written with compression), then, when the fetch parses, parse_data,
// parse_text and crawl_parse, with wo the WARC files, and crawl_fetch
// last. The engine publishes
// outputs in this order, so a published crawl_fetch means everything else
// is published too.
func fetchOutputs(seg string, compression parquetio.Compression, parse bool, wo *WARCOptions) []mapreduce.Output[fetchRecord] {
	outs := []mapreduce.Output[fetchRecord]{
		mapreduce.WriteRouted(storage.Join(seg, segment.DirContent), func(r fetchRecord) (segment.Content, bool) {
			if r.Content == nil {
				return segment.Content{}, false
			}
			return *r.Content, true
		}, parquetio.WithCompression(compression)),
	}
	if parse {
		outs = append(outs, parseRouted(seg, func(r fetchRecord) parseOut { return r.Parse })...)
	}
	if wo != nil {
		outs = append(outs, warcOutput(warcDir(seg), *wo, "", func(r *fetchRecord) *warc.Exchange { return r.WARC }))
	}
	return append(outs, mapreduce.WriteRouted(storage.Join(seg, segment.DirFetch), func(r fetchRecord) (segment.Fetch, bool) {
		if r.Fetch == nil {
			return segment.Fetch{}, false
		}
		return *r.Fetch, true
	}))
}

// clock returns the fetch-time clock: Now plus the time since the job
// started, or nil (the wall clock).
func (s fetchSpec) clock() func() time.Time {
	if s.Options.Now.IsZero() {
		return nil
	}
	now, start := s.Options.Now, s.Start
	return func() time.Time { return now.Add(time.Since(start)) }
}

// fetchTask collects the rows of one map task's part (its Task.State).
type fetchTask struct {
	rows []crawldb.Datum
}

// runTask fetches the rows of one part: content rows (and, with pp, the
// parse rows of each page) are emitted as pages arrive, crawl_fetch rows
// sorted by URL at the end.
func (s fetchSpec) runTask(t *mapreduce.Task, rows []crawldb.Datum, pp *pageParser, emit mapreduce.Emit[fetchRecord]) error {
	dns, err := taskResolver(t, s.Options.resolverConfig())
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer dns.close()
	f, err := s.taskFetcher(t, dns.Resolver)
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
	content := make(chan fetchedPage, contentQueue)
	// A row per fetch-list URL, and a few more for redirects followed.
	rec := &fetchRecorder{t: t, rows: rows, reported: make([]bool, len(rows)), content: content, warc: s.Options.WARC != nil,
		out: make([]fetchRow, 0, len(rows)+len(rows)/8)}
	written := startPageWriter(t, content, pp, emit)
	st, err := func() (*fetcher.Stats, error) {
		defer func() {
			close(content)
			<-written
		}()
		return f.Run(t.Ctx, reqs, rec.result)
	}()
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if st.Stopped {
		t.Count(ctrFetchInterrupted, 1)
	}
	t.Count(ctrFetchUnfetched, st.Unfetched+rec.skipUnreported())
	if len(st.RetryAfter) > 0 {
		// By host, so that an operator sees who asked to slow down.
		hosts := slices.Sorted(maps.Keys(st.RetryAfter))
		for _, h := range hosts {
			t.Log.Info("Retry-After answers", "host", h, "count", st.RetryAfter[h])
		}
		t.Count(ctrFetchRetryAfterHosts, int64(len(hosts)))
	}
	slices.SortFunc(rec.out, func(a, b fetchRow) int { return strings.Compare(a.URL, b.URL) })
	for i := range rec.out {
		f := rec.out[i].fetch(rows)
		emit(f.URL, fetchRecord{Fetch: f})
	}
	return nil
}

// fetchRow is a crawl_fetch row as a fetch task keeps it until the fetch
// ends and it sorts its rows: segment.Fetch without the fetch-list datum,
// which it names by its fetch-list row instead. A datum is 344 bytes
// before its strings, a third of what a task holds per URL.
type fetchRow struct {
	URL, ContentType, RedirectURL, ETag, LastModified, Message string
	FetchTime                                                  time.Time
	HTTPStatus, ResponseMillis                                 int32
	// row is the fetch-list row whose datum the fetch started from; -1
	// for a redirect target the fetcher followed, which has none.
	row    int32
	Status crawldb.Status
}

// rowOf is f as a fetchRow whose datum is fetch-list row row (-1: none).
func rowOf(f *segment.Fetch, row int) fetchRow {
	return fetchRow{URL: f.URL, ContentType: f.ContentType, RedirectURL: f.RedirectURL, ETag: f.ETag,
		LastModified: f.LastModified, Message: f.Message, FetchTime: f.FetchTime, HTTPStatus: f.HTTPStatus,
		ResponseMillis: f.ResponseMillis, row: int32(row), Status: f.Status}
}

// fetch is the crawl_fetch row r stands for, its datum taken from the
// fetch list rows.
func (r *fetchRow) fetch(rows []crawldb.Datum) *segment.Fetch {
	f := &segment.Fetch{URL: r.URL, Status: r.Status, FetchTime: r.FetchTime, HTTPStatus: r.HTTPStatus,
		ContentType: r.ContentType, RedirectURL: r.RedirectURL, ETag: r.ETag, LastModified: r.LastModified,
		Message: r.Message, ResponseMillis: r.ResponseMillis}
	if r.row >= 0 {
		f.Datum = rows[r.row]
	}
	return f
}

// taskFetcher returns the fetcher of one task: the spec's options with
// the task's deadline, clock, resolver, logger and counters.
func (s fetchSpec) taskFetcher(t *mapreduce.Task, dns fetcher.Resolver) (*fetcher.Fetcher, error) {
	o, err := s.Options.fetcherOptions()
	if err != nil {
		return nil, err
	}
	if s.Options.TimeLimit > 0 {
		o.Deadline = s.Start.Add(s.Options.TimeLimit)
	}
	o.Stop = s.Stop
	o.Clock = s.clock()
	o.Log = t.Log
	o.Resolver = dns
	o.Count = func(name string, n int64) {
		if name != fetcher.CounterUnfetched { // counted by runTask, for the fetch list only
			t.Count(name, n)
		}
	}
	return fetcher.New(o)
}

// taskDNS is a fetch task's resolver; close logs and counts its
// statistics.
type taskDNS struct {
	*resolver.Resolver
	t *mapreduce.Task
}

// taskResolver starts the resolver of one fetch task.
func taskResolver(t *mapreduce.Task, c resolver.Config) (taskDNS, error) {
	c.Log = t.Log
	r, err := resolver.New(c)
	if err != nil {
		return taskDNS{}, err
	}
	return taskDNS{Resolver: r, t: t}, nil
}

func (d taskDNS) close() {
	st := d.Stats()
	d.Close()
	d.t.Log.Info("fetch task DNS", st.LogAttrs()...)
	for name, n := range st.Counters() {
		d.t.Count("dns_"+name, n)
	}
}

// contentQueue is how many content rows a fetch task's workers may have
// handed to its content writer before they wait for it.
const contentQueue = 32

// fetchRecorder turns one task's fetcher results into records: content
// rows sent at once to the task's content writer (in the order of the
// results), crawl_fetch rows kept in out (with their fetch-list datum) to
// be sorted.
type fetchRecorder struct {
	t        *mapreduce.Task
	rows     []crawldb.Datum
	reported []bool // by fetch-list row
	out      []fetchRow
	content  chan<- fetchedPage
	warc     bool // send every response's exchange too
}

// result records one fetcher result.
func (rec *fetchRecorder) result(r *fetcher.Result) error {
	fr := segment.Fetch{
		URL: r.Request.URL, Status: r.Status, FetchTime: r.Time.UTC(), HTTPStatus: int32(r.HTTPStatus),
		ContentType: r.ContentType, RedirectURL: r.RedirectURL, ETag: r.ETag, LastModified: r.LastModified,
		Message: r.Message, ResponseMillis: int32(min(r.Elapsed.Milliseconds(), math.MaxInt32)),
	}
	if r.Request.ID >= 0 {
		fr.Datum = rec.rows[r.Request.ID]
		rec.reported[r.Request.ID] = true
	} else {
		rec.t.Count(ctrFetchRedirected, 1)
	}
	rec.out = append(rec.out, rowOf(&fr, max(r.Request.ID, -1)))
	var page fetchedPage
	if r.Status == crawldb.StatusFetchSuccess && !r.TypeRefused {
		page = fetchedPage{
			content: &segment.Content{
				URL: r.Request.URL, BaseURL: r.Request.URL, ContentType: r.ContentType,
				Headers: flatHeader(r.Header), Body: r.Body, Truncated: r.Truncated, FetchTime: fr.FetchTime,
			},
			// What the parse job would read of the page's crawl_fetch row.
			fetch: parseFetchOf(&fr),
		}
		rec.t.Count(ctrFetchContent, 1)
	}
	if rec.warc {
		page.exchange = exchangeOf(r, fr.FetchTime)
	}
	if page.content != nil || page.exchange != nil {
		rec.content <- page
	}
	return nil
}

// skipUnreported gives every fetch-list URL without a crawl_fetch row a
// skipped one, and returns how many it added. The fetcher reports each
// request once (a URL listed twice, once); anything it did not report is
// recorded as skipped, never dropped.
func (rec *fetchRecorder) skipUnreported() int64 {
	var n int64
	var seen map[string]bool // URLs with a row; built only if a row lacks a result
	for i, ok := range rec.reported {
		if ok {
			continue
		}
		if seen == nil {
			seen = make(map[string]bool, len(rec.out))
			for j := range rec.out {
				seen[rec.out[j].URL] = true
			}
		}
		u := rec.rows[i].URL
		if seen[u] {
			continue
		}
		seen[u] = true
		rec.out = append(rec.out, fetchRow{URL: u, Status: crawldb.StatusFetchSkipped,
			Message: "skipped: the fetcher gave no result", row: int32(i)})
		rec.t.Count(crawldb.StatusFetchSkipped.String(), 1)
		n++
	}
	return n
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
