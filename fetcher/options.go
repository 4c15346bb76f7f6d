package fetcher

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"
)

// Defaults of Options' zero fields.
const (
	// DefaultServerDelay is the politeness delay between two requests to
	// one server (Nutch's fetcher.server.delay is 5 s in
	// nutch-default.xml).
	DefaultServerDelay = 5 * time.Second
	// DefaultMaxCrawlDelay caps robots.txt Crawl-delay (Nutch's
	// fetcher.max.crawl.delay, 30 s).
	DefaultMaxCrawlDelay = 30 * time.Second
	// DefaultMaxRetryAfter caps the wait a 429 or 503 answer's
	// Retry-After header asks for (fetcher.maxRetryAfter): a server asking
	// for longer is skipped for the round.
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultMaxConnections is the number of connections (workers) of one
	// fetcher, as in the high-performance crawl scheduling paper.
	DefaultMaxConnections = 64
	// DefaultConnectTimeout bounds name resolution plus the TCP (and TLS)
	// connect.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultReadTimeout bounds one response, from the moment the
	// connection is there until the body is read.
	DefaultReadTimeout = 30 * time.Second
	// DefaultContentLimit is the most body bytes kept per page (Nutch's
	// http.content.limit is 1 MiB in trawl, 64 KiB in Nutch).
	DefaultContentLimit = 1 << 20
	// DefaultMaxExceptionsPerHost is how many exceptions (network errors,
	// timeouts, HTTP 5xx, 403 and other unexpected codes) one server may
	// cause before its remaining URLs are skipped for the round.
	DefaultMaxExceptionsPerHost = 10
	// DefaultExceptionBackoff is the first extra delay after an exception;
	// it doubles with each further exception in a row.
	DefaultExceptionBackoff = time.Second
	// MaxRobotsRedirects is how many redirects a robots.txt request
	// follows (Nutch's http.robots.redirect.max).
	MaxRobotsRedirects = 5
	// RobotsLimit is the most robots.txt bytes read (RFC 9309 asks
	// crawlers to parse at least 500 KiB).
	RobotsLimit = 512 << 10
	// DefaultThroughputCheckAfter is how long a run goes before its
	// throughput is checked (Nutch's
	// fetcher.throughput.threshold.check.after is 5 minutes).
	DefaultThroughputCheckAfter = time.Minute
	// DefaultThroughputRetries is how many checks in a row may find the
	// throughput low before the run ends (Nutch's
	// fetcher.throughput.threshold.retries).
	DefaultThroughputRetries = 5
	// DefaultThroughputInterval is the period of the throughput checks
	// (Nutch checks every second).
	DefaultThroughputInterval = time.Second
	// DefaultProgressInterval is the period of the progress log lines.
	DefaultProgressInterval = 10 * time.Second
	// Version is the crawler version put in the User-Agent header.
	Version = "trawl/0.3"
)

// Options configure a Fetcher. The zero value of every field but Agent
// is usable, and each field's zero has one meaning, which its doc gives:
// most take the defaults above. "None" (no delay, no cap, no limit) is a
// No... field of its own, never a negative value: Validate refuses
// negative durations and counts.
type Options struct {
	// Agent names the crawler (Nutch's http.agent.name); required. The
	// User-Agent header is Agent + "/" + Version unless Agent already has
	// a "/"; robots.txt groups are matched against Agent's first word.
	Agent string
	// ServerDelay is the politeness delay between the end of one request
	// to a server and the start of the next; 0 means DefaultServerDelay
	// (see NoServerDelay).
	ServerDelay time.Duration
	// NoServerDelay sends a server's requests back to back: no politeness
	// delay (a robots.txt Crawl-delay still holds). ServerDelay must then
	// be 0.
	NoServerDelay bool
	// MaxCrawlDelay caps robots.txt Crawl-delay: a server asking for more
	// is skipped for the round (its URLs get skipped results); 0 means
	// DefaultMaxCrawlDelay (see NoCrawlDelayCap).
	MaxCrawlDelay time.Duration
	// NoCrawlDelayCap honours any robots.txt Crawl-delay, however long.
	// MaxCrawlDelay must then be 0.
	NoCrawlDelayCap bool
	// MaxRetryAfter caps the Retry-After of a 429 (Too Many Requests) or
	// 503 (Service Unavailable) answer (RFC 9110, section 10.2.3): the
	// server's next request waits that long (or longer, for politeness
	// and the exception backoff); a server asking for more than the cap is
	// skipped for the round (its URLs get skipped results and stay due).
	// 0 means DefaultMaxRetryAfter (see NoRetryAfterCap).
	MaxRetryAfter time.Duration
	// NoRetryAfterCap honours any Retry-After, however long.
	// MaxRetryAfter must then be 0.
	NoRetryAfterCap bool
	// MaxConnections is the number of workers, each holding at most one
	// connection; 0 means DefaultMaxConnections.
	MaxConnections int
	// ConnectTimeout and ReadTimeout: see DefaultConnectTimeout and
	// DefaultReadTimeout; 0 means the default.
	ConnectTimeout time.Duration
	ReadTimeout    time.Duration
	// ContentLimit is the most body bytes kept per page, after decoding
	// (a longer body is cut and the result marked Truncated); 0 means
	// DefaultContentLimit.
	ContentLimit int64
	// ContentTypes are the media types whose pages are stored, as
	// patterns of TypeMatcher ("text/html", "image/*", "*/*"); nil stores
	// every type. A 200 answer of another type (by its Content-Type
	// header, or sniffed from the body when it has none) is a
	// fetch_success without a body (Result.TypeRefused): its body is not
	// read further than a few KiB (the connection is closed rather than
	// drained when more is coming), as Nutch keeps only what a parser is
	// configured for.
	ContentTypes []string
	// FollowRedirects is how many redirects in a row are followed within
	// the fetch: 0 follows none, recording a redirect and leaving its
	// target to the next round, as Nutch's http.redirect.max = 0 does.
	FollowRedirects int
	// Deadline, if not zero, is when fetching stops (zero: no deadline):
	// requests still in
	// flight are abandoned, and the URLs not yet fetched get skipped
	// results ("skipped: fetch time limit reached"; Nutch's
	// fetcher.timelimit.mins, which leaves them out).
	Deadline time.Time
	// AllowPrivate lets the fetcher connect to private, loopback,
	// link-local and other non-public addresses (see PrivateAddr).
	// Without it (the zero value) the URLs of such hosts get refused
	// results (CodeRefused, fetch_refused).
	AllowPrivate bool
	// Resolver resolves host names (once per server and run); nil means
	// the system resolver. A Prefetcher also gets every host name when
	// the run starts.
	Resolver Resolver
	// MaxExceptionsPerHost: after this many exceptions on one server, its
	// remaining URLs get skipped results (Nutch's
	// fetcher.max.exceptions.per.queue); 0 means
	// DefaultMaxExceptionsPerHost (see NoExceptionLimit).
	MaxExceptionsPerHost int
	// NoExceptionLimit never leaves a server for its exceptions (Nutch's
	// default). MaxExceptionsPerHost must then be 0.
	NoExceptionLimit bool
	// ExceptionBackoff is the extra delay after an exception, doubled for
	// each further exception in a row (a response that is not an
	// exception resets it), at most 10 minutes (Nutch's
	// fetcher.exceptions.per.queue.delay, which does not reset); 0 means
	// DefaultExceptionBackoff (see NoExceptionBackoff).
	ExceptionBackoff time.Duration
	// NoExceptionBackoff adds no delay after exceptions.
	// ExceptionBackoff must then be 0.
	NoExceptionBackoff bool
	// HoldConnection: a worker keeps its connection to a server and waits
	// for the server's next turn when that is at most this far away;
	// otherwise it closes the connection and serves another server. 0
	// holds only when no wait is needed (zero politeness delay).
	HoldConnection time.Duration
	// Policy ranks servers and orders each server's URLs; nil means
	// BreadthFirst. PolicyByName finds the paper's four by name.
	Policy Policy
	// QueueMode says what a server of the two-level queue is: a host
	// name (QueueByHost, the zero value) or an IP address (QueueByIP:
	// the hosts that resolve to one address share one connection and one
	// politeness delay; Nutch's fetcher.queue.mode byIP).
	QueueMode QueueMode
	// DelayBetween says what ServerDelay separates: every two requests to
	// a server (DelayBetweenRequests, the zero value: Nutch's politeness)
	// or every two connections to it (DelayBetweenConnections: a session
	// goes back to back over its kept-alive connection, and the server
	// waits the delay after the connection closes before its next one).
	// A robots.txt Crawl-delay separates requests in both modes.
	DelayBetween DelayBetween
	// DisableKeepAlive makes every request use a connection of its own
	// (one request per connection, "Connection: close"), for measuring
	// what keep-alive gives; the zero value (false) keeps connections
	// alive.
	DisableKeepAlive bool
	// ThroughputThreshold, if positive, is the least pages per second
	// (responses of any status) a run must keep: after
	// ThroughputCheckAfter, a check every ThroughputInterval that finds
	// fewer pages over the interval counts as low, and
	// ThroughputRetries low checks in a row end the run as the Deadline
	// does: URLs not fetched get skipped results, left for the next
	// round (Nutch's
	// fetcher.throughput.threshold.pages). A zero ThroughputThreshold
	// sets no minimum; zero durations and retries take the defaults
	// above.
	ThroughputThreshold  float64
	ThroughputCheckAfter time.Duration
	ThroughputRetries    int
	ThroughputInterval   time.Duration
	// StallTimeout, if positive, ends a run in which no request has
	// finished for that long, as the Deadline does: requests still in
	// flight are abandoned and the URLs not fetched get skipped results,
	// so a task never hangs past it whatever a server or the network
	// does (Nutch's hung-threads timeout, which it derives from
	// mapreduce.task.timeout: a fetch task run by Hadoop sets it to half
	// the task timeout). Keep it above ConnectTimeout + ReadTimeout +
	// MaxCrawlDelay, the longest a healthy run waits between two results.
	// Zero means no stall timeout.
	StallTimeout time.Duration
	// Clock gives the fetch time recorded in results (a simulated clock
	// in trawl crawls); nil means time.Now. Politeness always uses the
	// wall clock.
	Clock func() time.Time
	// Log receives the fetcher's logs; nil means slog.Default().
	Log *slog.Logger
	// Count, if set, receives counter increments (it is called from many
	// goroutines at once).
	Count func(name string, n int64)
	// ProgressInterval is the period of progress log lines; 0 means
	// DefaultProgressInterval (see NoProgressLog).
	ProgressInterval time.Duration
	// NoProgressLog logs no progress lines. ProgressInterval must then be
	// 0.
	NoProgressLog bool
	// Stop, if not nil, ends the run gracefully when it is closed (an
	// interrupt): as at the Deadline, no new request starts, requests in
	// flight are cut, every URL not fetched gets a skipped result
	// ("skipped: fetch stopped by an interrupt"), and Run returns without
	// an error, with Stats.Stopped set. The caller then publishes what
	// was fetched, as after a run that ended at the Deadline; cancelling
	// Run's context instead aborts the run (Run returns the context's
	// error).
	Stop <-chan struct{}
	// KeepExchange keeps in each Result what an archive of the exchange
	// needs (a WARC writer): the request header sent, the server's IP
	// address, the response's protocol, and the body of every response,
	// not only of successes. Off (the zero value), none of it is kept.
	KeepExchange bool

	// The checking tools' options (trawl parsechecker, trawl
	// robotscheck); a crawl sets none of them. IgnoreRobots fetches
	// without robots.txt: no robots.txt request, no rules, no
	// Crawl-delay. RobotsOnly answers every URL from robots.txt alone,
	// as the fetch would up to its request: a URL robots.txt allows gets
	// a skipped result (CodeSkipped, Message RobotsOnlyAllowed) instead
	// of a request. OnRobots, if set, is called once per robots.txt the
	// run gets, with how it was got and what the fetcher made of it.
	IgnoreRobots bool
	RobotsOnly   bool
	OnRobots     func(*RobotsFetch)

	// privateAddr judges the addresses the guard refuses without
	// AllowPrivate; nil means PrivateAddr. Tests set it to make some
	// loopback addresses look public.
	privateAddr func(netip.Addr) bool

	// types is ContentTypes compiled (nil: every type), set by withDefaults.
	types *TypeMatcher
}

// refuses reports whether the address guard refuses a.
func (o Options) refuses(a netip.Addr) bool {
	if o.AllowPrivate {
		return false
	}
	if o.privateAddr != nil {
		return o.privateAddr(a)
	}
	return PrivateAddr(a)
}

// Validate checks o as New does: an agent without line breaks, no
// negative duration or count, no "none" field (NoServerDelay, ...) beside
// a value for the same thing, and known queue and politeness modes.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// withDefaults checks o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	if err := o.check(); err != nil {
		return o, err
	}
	o.Agent = strings.TrimSpace(o.Agent)
	or := func(v *time.Duration, none bool, def time.Duration) {
		if *v == 0 && !none {
			*v = def
		}
	}
	or(&o.ServerDelay, o.NoServerDelay, DefaultServerDelay)
	or(&o.MaxCrawlDelay, o.NoCrawlDelayCap, DefaultMaxCrawlDelay)
	or(&o.MaxRetryAfter, o.NoRetryAfterCap, DefaultMaxRetryAfter)
	or(&o.ExceptionBackoff, o.NoExceptionBackoff, DefaultExceptionBackoff)
	or(&o.ProgressInterval, o.NoProgressLog, DefaultProgressInterval)
	or(&o.ConnectTimeout, false, DefaultConnectTimeout)
	or(&o.ReadTimeout, false, DefaultReadTimeout)
	or(&o.ThroughputCheckAfter, false, DefaultThroughputCheckAfter)
	or(&o.ThroughputInterval, false, DefaultThroughputInterval)
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.ContentLimit == 0 {
		o.ContentLimit = DefaultContentLimit
	}
	if o.ContentTypes != nil {
		m, err := NewTypeMatcher(o.ContentTypes)
		if err != nil {
			return o, fmt.Errorf("fetcher: %w", err)
		}
		o.types = m
	}
	if o.MaxExceptionsPerHost == 0 && !o.NoExceptionLimit {
		o.MaxExceptionsPerHost = DefaultMaxExceptionsPerHost
	}
	if o.ThroughputRetries == 0 {
		o.ThroughputRetries = DefaultThroughputRetries
	}
	if o.Resolver == nil {
		o.Resolver = SystemResolver{}
	}
	if o.Policy == nil {
		o.Policy = BreadthFirst{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Count == nil {
		o.Count = func(string, int64) {}
	}
	return o, nil
}

// check reports what is wrong with o, before defaults.
func (o Options) check() error {
	agent := strings.TrimSpace(o.Agent)
	if agent == "" {
		return errors.New("fetcher: no agent name: set the crawler's name (Nutch's http.agent.name; trawl's --agent or TRAWL_AGENT)")
	}
	if strings.ContainsAny(agent, "\r\n") {
		return fmt.Errorf("fetcher: agent name %q has a line break", agent)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		none bool
	}{
		{"server delay", o.ServerDelay, o.NoServerDelay},
		{"max crawl delay", o.MaxCrawlDelay, o.NoCrawlDelayCap},
		{"max Retry-After", o.MaxRetryAfter, o.NoRetryAfterCap},
		{"exception backoff", o.ExceptionBackoff, o.NoExceptionBackoff},
		{"progress interval", o.ProgressInterval, o.NoProgressLog},
		{"connect timeout", o.ConnectTimeout, false},
		{"read timeout", o.ReadTimeout, false},
		{"hold-connection time", o.HoldConnection, false},
		{"throughput check delay", o.ThroughputCheckAfter, false},
		{"throughput check interval", o.ThroughputInterval, false},
		{"stall timeout", o.StallTimeout, false},
	} {
		switch {
		case d.v < 0:
			return fmt.Errorf("fetcher: negative %s %v", d.name, d.v)
		case d.none && d.v != 0:
			return fmt.Errorf("fetcher: a %s of %v and none at once", d.name, d.v)
		}
	}
	switch {
	case o.MaxConnections < 0 || o.ContentLimit < 0 || o.FollowRedirects < 0 || o.ThroughputRetries < 0:
		return fmt.Errorf("fetcher: negative connections (%d), content limit (%d), redirects (%d) or throughput retries (%d)",
			o.MaxConnections, o.ContentLimit, o.FollowRedirects, o.ThroughputRetries)
	case o.MaxExceptionsPerHost < 0:
		return fmt.Errorf("fetcher: negative exceptions per host %d (NoExceptionLimit means no limit)", o.MaxExceptionsPerHost)
	case o.NoExceptionLimit && o.MaxExceptionsPerHost != 0:
		return fmt.Errorf("fetcher: %d exceptions per host and no limit at once", o.MaxExceptionsPerHost)
	case o.ThroughputThreshold < 0:
		return fmt.Errorf("fetcher: negative throughput threshold %g", o.ThroughputThreshold)
	case o.QueueMode != QueueByHost && o.QueueMode != QueueByIP:
		return fmt.Errorf("fetcher: unknown queue mode %d", o.QueueMode)
	case o.DelayBetween != DelayBetweenRequests && o.DelayBetween != DelayBetweenConnections:
		return fmt.Errorf("fetcher: unknown politeness mode %d", o.DelayBetween)
	case o.IgnoreRobots && o.RobotsOnly:
		return errors.New("fetcher: robots.txt ignored and robots.txt only at once")
	}
	return nil
}

// userAgent is the User-Agent header value.
func (o Options) userAgent() string {
	if strings.Contains(o.Agent, "/") {
		return o.Agent
	}
	return o.Agent + "/" + Version
}

// robotsAgent is the name matched against robots.txt User-agent lines:
// the agent's product token, lower case.
func (o Options) robotsAgent() string {
	a := o.Agent
	if i := strings.IndexAny(a, "/ \t"); i >= 0 {
		a = a[:i]
	}
	return strings.ToLower(a)
}

// QueueMode is what the fetcher's politeness applies to: a host or an IP
// address (see Options.QueueMode).
type QueueMode int

// The queue modes.
const (
	// QueueByHost makes every host name a server of its own.
	QueueByHost QueueMode = iota
	// QueueByIP makes the hosts that resolve to one IP address one
	// server: one connection at a time and one politeness delay for all
	// of them.
	QueueByIP
)

// String is the mode's name: "host" or "ip".
func (m QueueMode) String() string {
	switch m {
	case QueueByHost:
		return "host"
	case QueueByIP:
		return "ip"
	}
	return fmt.Sprintf("QueueMode(%d)", int(m))
}

// ParseQueueMode parses "host" or "ip" (also Nutch's "byHost" and
// "byIP"); "" is "host".
func ParseQueueMode(s string) (QueueMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "host", "byhost":
		return QueueByHost, nil
	case "ip", "byip":
		return QueueByIP, nil
	}
	return 0, fmt.Errorf("fetcher: unknown queue mode %q (want host or ip)", s)
}

// DelayBetween is what the server delay separates (see
// Options.DelayBetween).
type DelayBetween int

// The politeness modes.
const (
	// DelayBetweenRequests waits the server delay between any two
	// requests to a server (Nutch's fetcher.server.delay).
	DelayBetweenRequests DelayBetween = iota
	// DelayBetweenConnections waits the server delay between two
	// connections to a server; the requests of one connection go back
	// to back (but for a robots.txt Crawl-delay).
	DelayBetweenConnections
)

// String is the mode's name: "request" or "connection".
func (m DelayBetween) String() string {
	switch m {
	case DelayBetweenRequests:
		return "request"
	case DelayBetweenConnections:
		return "connection"
	}
	return fmt.Sprintf("DelayBetween(%d)", int(m))
}

// ParseDelayBetween parses a politeness mode, "request" or "connection"
// (plurals too); "" is "request".
func ParseDelayBetween(s string) (DelayBetween, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "request", "requests":
		return DelayBetweenRequests, nil
	case "connection", "connections":
		return DelayBetweenConnections, nil
	}
	return 0, fmt.Errorf("fetcher: unknown politeness mode %q (want request or connection)", s)
}
