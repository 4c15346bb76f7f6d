package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

func fetchCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch a segment's fetch list over HTTP",
		ArgsUsage: "[SEGMENT]",
		Description: `Fetches the URLs of a segment's crawl_generate, one task per fetch-list part,
and writes crawl_fetch (the outcome per URL) and content (bodies and headers).
With --parse (fetcher.parse) it also parses each page as it arrives and writes
parse_data, parse_text and crawl_parse, as the parse job would (Nutch's
fetcher.parse); the parse flags and parser.* settings apply. With --warc
(fetcher.warc) it also archives every response and its request as WARC/1.1
records (ISO 28500:2017) in SEGMENT/warc: each fetch task writes its own
{prefix}-{timestamp}-{serial}-{host}.warc.gz files, rolled at
--warc-max-file-size, each with a CDXJ index beside it (.cdxj, SURT-sorted, as
pywb and OpenWayback read them), published with the fetch's other outputs.
Without SEGMENT it fetches the newest segment that has a fetch list but was not
fetched yet. A SEGMENT is a path or URI, or a name under the crawl's segments/.

Politeness: one connection per host at a time, --server-delay between two
requests to a host (robots.txt Crawl-delay wins, up to --max-crawl-delay;
a host asking more is skipped for the round), robots.txt obeyed. A user agent
is required (--agent, $TRAWL_AGENT or fetcher.agent): it names your crawler to
the sites it visits. Addresses in private, loopback and link-local ranges are
refused unless --allow-private: such URLs are recorded fetch_refused and stay
due, so a later fetch with --allow-private gets them. --time-limit ends the
fetch early. Every URL of the list gets a crawl_fetch row: fetched, failed
with its reason, fetch_robots_denied, fetch_refused, or fetch_skipped with the
reason it was left for a later round (updatedb keeps such URLs due).

The segment is locked while fetch runs: a second fetch (or parse, or
updatedb) of it exits 4 at once, naming the holder. The first Ctrl-C or
SIGTERM ends the fetch as --time-limit does: what was fetched is published,
the rest recorded as skipped, and trawl exits 130; a second one aborts at
once. A killed fetch needs no clean-up: the next fetch of the segment removes
what it left and starts again.

--now sets the fetch time base for simulated crawls (recorded fetch times are
--now plus the time the fetch has run).

Examples:
   trawl --crawl ./crawl fetch --agent mybot
   TRAWL_AGENT=mybot trawl fetch 20261121103000
   trawl fetch --agent mybot --server-delay 1s --time-limit 1h --max-connections 200
   trawl fetch --agent mybot --allow-private --dns-server 127.0.0.1:5353   # a simweb server
   trawl fetch --agent mybot --parse    # parse as pages arrive: no parse job needed
   trawl fetch --agent mybot --warc     # and archive the fetch in SEGMENT/warc/*.warc.gz`,
		Flags: append(append(append(fetchFlags(), settingFlag("parse")), warcFlags()...), append(parseFlags(),
			nowFlagDef("fetch times are based on"))...,
		),
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("fetch: give at most one segment, got %d", c.NArg())
			}
			o, err := s.fetchOptions("")
			if err != nil {
				return err
			}
			if c.String("now") != "" {
				if o.Now, err = nowFlag(c); err != nil {
					return err
				}
			}
			if s.cfg.Bool(config.FetcherParse) {
				po, err := s.parseOptions()
				if err != nil {
					return err
				}
				o.Parse = &po
			}
			seg, err := s.stageSegment(c, "fetch", needsFetch)
			if err != nil {
				return err
			}
			o.Segment = seg
			env, err := s.jobsEnv(c)
			if err != nil {
				return err
			}
			res, err := jobs.Fetch(c.Context, env, o)
			if res != nil && res.Refused > 0 {
				s.log.Warn("URLs refused by the fetcher's own policy, not by their servers: they stay due",
					"refused", res.Refused, "hint", "private, loopback and link-local addresses need --allow-private")
			}
			if err != nil {
				return jobError(err)
			}
			s.log.Info("fetch done", "segment", seg, "fetched", res.Fetched, "failed", res.Failed,
				"redirects", res.Redirects, "not_modified", res.NotModified, "robots_denied", res.RobotsDenied,
				"refused", res.Refused, "unfetched", res.Unfetched,
				"pages_per_s", fmt.Sprintf("%.1f", res.PagesPerSecond), "duration", res.Duration.Round(time.Millisecond))
			return nil
		}),
	}
}

// agentMissing explains the missing user agent.
const agentMissing = "no user agent: give --agent NAME, set $" + config.EnvAgent +
	" or fetcher.agent in trawl.yaml (as Nutch's http.agent.name, it names your crawler to the sites it visits)"

// fetchOptions returns the fetch job's options from the settings (without
// Segment and Now); defaultAgent, if not empty, is the agent when none is
// configured. The settings' defaults are jobs.DefaultFetchOptions(); a
// setting whose 0 (or -1) means none sets the option's No... field.
func (s *session) fetchOptions(defaultAgent string) (jobs.FetchOptions, error) {
	cfg := s.cfg
	o := jobs.FetchOptions{
		Agent:                cfg.String(config.FetcherAgent),
		ServerDelay:          cfg.Duration(config.FetcherServerDelay),
		MaxCrawlDelay:        cfg.Duration(config.FetcherMaxCrawlDelay),
		MaxRetryAfter:        cfg.Duration(config.FetcherMaxRetryAfter),
		MaxConnections:       cfg.Int(config.FetcherMaxConnections),
		ConnectTimeout:       cfg.Duration(config.FetcherConnectTimeout),
		ReadTimeout:          cfg.Duration(config.FetcherReadTimeout),
		ContentLimit:         cfg.Size(config.FetcherContentLimit),
		ContentTypes:         cfg.List(config.FetcherContentTypes),
		FollowRedirects:      cfg.Int(config.FetcherFollowRedirects),
		TimeLimit:            cfg.Duration(config.FetcherTimeLimit),
		AllowPrivate:         cfg.Bool(config.FetcherAllowPrivate),
		DNSServers:           cfg.List(config.FetcherDNSServers),
		MaxExceptionsPerHost: cfg.Int(config.FetcherMaxExceptionsPerHost),
		Policy:               cfg.String(config.FetcherPolicy),
		QueueMode:            cfg.String(config.FetcherQueueMode),
		Politeness:           cfg.String(config.FetcherPoliteness),
		DisableKeepAlive:     !cfg.Bool(config.FetcherKeepAlive),
		ThroughputThreshold:  cfg.Float(config.FetcherThroughputThreshold),
		ThroughputCheckAfter: cfg.Duration(config.FetcherThroughputCheckAfter),
		ThroughputRetries:    cfg.Int(config.FetcherThroughputRetries),
		StallTimeout:         s.fetchStallTimeout(),
		ProgressInterval:     cfg.Duration(config.EngineProgressInterval),
		ContentCompression:   cfg.String(config.FetcherContentCompression),
	}
	if o.Agent == "" {
		o.Agent = defaultAgent
	}
	if o.Agent == "" {
		return o, usageErrorf("fetch: %s", agentMissing)
	}
	if err := checkFetchSettings(o); err != nil {
		return o, err
	}
	if cfg.Bool(config.FetcherWARC) {
		wo, err := s.warcOptions()
		if err != nil {
			return o, err
		}
		o.WARC = &wo
	}
	// The settings' "none": fetcher.serverDelay 0, fetcher.maxCrawlDelay
	// negative, fetcher.maxExceptionsPerHost -1, engine.progressInterval
	// 0 or negative (no progress lines from the fetch tasks).
	o.NoServerDelay = o.ServerDelay == 0
	if o.MaxCrawlDelay < 0 {
		o.MaxCrawlDelay, o.NoCrawlDelayCap = 0, true
	}
	if o.MaxRetryAfter < 0 {
		o.MaxRetryAfter, o.NoRetryAfterCap = 0, true
	}
	if o.MaxExceptionsPerHost == -1 {
		o.MaxExceptionsPerHost, o.NoExceptionLimit = 0, true
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval, o.NoProgressLog = 0, true
	}
	dns, err := s.resolverConfig()
	if err != nil {
		return o, err
	}
	o.DNS = dns
	if err := o.Validate(); err != nil {
		return o, usageErrorf("fetch: fetcher.* settings: %w", err)
	}
	return o, nil
}

// checkFetchSettings checks the fetcher.* settings where they are stricter
// than FetchOptions.Validate: a setting spells its default out, so a 0
// that FetchOptions would take for its default is an error here, and so
// is a negative value where the setting knows no "none".
func checkFetchSettings(o jobs.FetchOptions) error {
	switch {
	case o.MaxCrawlDelay == 0:
		return usageErrorf("%s must be positive, or negative for no cap", config.FetcherMaxCrawlDelay)
	case o.MaxRetryAfter == 0 && !o.NoRetryAfterCap:
		return usageErrorf("%s must be positive, or negative for no cap", config.FetcherMaxRetryAfter)
	case o.MaxConnections < 1:
		return usageErrorf("%s must be >= 1, not %d", config.FetcherMaxConnections, o.MaxConnections)
	case o.ConnectTimeout <= 0:
		return usageErrorf("%s must be > 0", config.FetcherConnectTimeout)
	case o.ReadTimeout <= 0:
		return usageErrorf("%s must be > 0", config.FetcherReadTimeout)
	case o.ContentLimit < 1:
		return usageErrorf("%s must be at least 1 byte", config.FetcherContentLimit)
	case o.MaxExceptionsPerHost == 0 || o.MaxExceptionsPerHost < -1:
		return usageErrorf("%s must be positive or -1 (never leave a host), not %d", config.FetcherMaxExceptionsPerHost, o.MaxExceptionsPerHost)
	case o.ThroughputCheckAfter <= 0:
		return usageErrorf("%s must be > 0", config.FetcherThroughputCheckAfter)
	case o.ThroughputRetries < 1:
		return usageErrorf("%s must be >= 1, not %d", config.FetcherThroughputRetries, o.ThroughputRetries)
	}
	return nil
}

// fetchStallTimeout is fetcher.stallTimeout; with the Hadoop engine, 0
// means half the Hadoop task timeout: as Nutch derives its hung-threads
// timeout from the task timeout, a fetch task ends on its own, keeping
// what it fetched, long before Hadoop would kill it.
func (s *session) fetchStallTimeout() time.Duration {
	cfg := s.cfg
	d := cfg.Duration(config.FetcherStallTimeout)
	if d != 0 || cfg.String(config.EngineName) != "hadoop" {
		return d
	}
	timeout := cfg.Duration(config.EngineHadoopTaskTimeout)
	if timeout <= 0 {
		timeout = 10 * time.Minute // mapreduce.task.timeout's default
	}
	return timeout / 2
}

// segmentNeed tells whether a segment (a path in fsys) needs a stage.
type segmentNeed func(fsys storage.FS, seg string) (bool, error)

// needsFetch: the fetch list is published and nothing after it.
func needsFetch(fsys storage.FS, seg string) (bool, error) {
	st, err := segment.Inspect(fsys, seg)
	return err == nil && st.State == segment.StateGenerated, err
}

// needsParse: crawl_fetch and content are published, not parsed, not
// merged.
func needsParse(fsys storage.FS, seg string) (bool, error) {
	st, err := segment.Inspect(fsys, seg)
	return err == nil && st.State == segment.StateFetched, err
}

// stageSegment returns the segment a stage command runs on: its argument,
// or the newest segment under the crawl's segments/ that needs the stage.
func (s *session) stageSegment(c *cli.Context, stage string, need segmentNeed) (string, error) {
	if c.NArg() == 1 {
		u, err := s.segmentURI(c.Args().First())
		if err != nil {
			return "", withCode(exitUsage, fmt.Errorf("%s: %w", stage, err))
		}
		return u, nil
	}
	segs := jobs.SegmentsDir(s.crawl())
	fsys, p, err := s.resolve(segs)
	if err != nil {
		return "", err
	}
	infos, err := fsys.ReadDir(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", withCode(exitFailure, fmt.Errorf("%s: list %s: %w", stage, segs, err))
	}
	var names []string
	for _, fi := range infos {
		if fi.IsDir() && isSegmentName(fi.Name()) {
			names = append(names, fi.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		ok, err := need(fsys, path.Join(p, n))
		if err != nil {
			return "", withCode(exitFailure, fmt.Errorf("%s: segment %s: %w", stage, n, err))
		}
		if ok {
			return storage.Join(segs, n), nil
		}
	}
	return "", withCode(exitNothingToDo, fmt.Errorf("%s: no segment under %s needs %s (give SEGMENT to name one)", stage, segs, stage))
}

// isSegmentName reports whether name is a segment's name (yyyyMMddHHmmss).
func isSegmentName(name string) bool {
	_, err := time.Parse(segment.NameLayout, name)
	return err == nil && len(name) == 14
}
