package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/simweb"
)

// Demo settings of `trawl crawl --simweb`, used where the setting was left
// at its default.
const (
	// demoAgent is the user agent of the demo crawl.
	demoAgent = "trawl-demo"
	// demoServerDelay is the politeness delay of the demo crawl: small, so
	// that three rounds over the default 100 hosts take about a minute,
	// and still large enough to see politeness at work.
	demoServerDelay = 100 * time.Millisecond
	// demoTimeLimit bounds each round's fetch in the demo: the biggest
	// hosts (and the hosts asking for a Crawl-delay) would otherwise make
	// later rounds take minutes; what is left is fetched in later rounds.
	demoTimeLimit = 15 * time.Second
	// demoDaysPerRound is the simulated time between the demo's rounds.
	demoDaysPerRound = 1.0
	// demoRounds is the default number of rounds.
	demoRounds = 3
)

func crawlCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "crawl",
		Usage: "run a whole crawl: inject, then rounds of generate, fetch, parse, updatedb",
		Description: `Injects --seeds (if given), then runs --rounds rounds, each generate → fetch →
parse → updatedb on a new segment, and prints a summary of every round. With
--rounds -1 it runs until generate finds nothing due. It takes the flags of
the jobs it runs (--topN, --agent, --server-delay, --allow-private,
--dns-server, ...; see each job's --help).

Safe to run from cron: it holds the crawl lock (crawl/.locked), and exits with
status 4 at once if another crawl holds it. On a local disk the locks are OS
locks that die with their holder: after a crash or a kill -9 the next crawl
simply goes ahead (on HDFS, --force breaks the lock of a crawl that died). It
first repairs what a crash left in the CrawlDB, then finishes a round that a
crash, a kill, an interrupt or a stop left half-done (fetched pages are
parsed and merged, never fetched or merged twice), or removes the segment
when that round cannot be resumed. The first Ctrl-C or SIGTERM during a
fetch ends the fetch as its time limit does: what was fetched is kept, the
crawl exits 130, and the next crawl parses and merges it; a second one
aborts at once, leaving the CrawlDB as it was. Creating crawl/.STOP makes it
stop before its next stage (it removes the file and exits 0); the next crawl
resumes there. Any failure exits non-zero with the reason.

Simulated time: with --days-per-round D (or --now), round k runs at the
crawl's simulated time plus k*D days: generate, fetch and updatedb all take
that time as "now", so a multi-month crawl runs in minutes against a
synthetic web. The clock is kept in crawl/crawl_state.json and continues
where the last crawl left it unless --now is given.

--simweb crawls the synthetic web (see trawl simweb --help), served in this
process on loopback with its own DNS server: it allows private addresses,
uses the simweb DNS server, injects the web's home pages when no --seeds are
given, moves the web's clock with the rounds (one simulated day per round by
default, from 2026-01-01), and where not set otherwise uses the agent
"trawl-demo", a 100ms server delay and a 15s fetch time limit per round (so
the demo's three rounds take about a minute; what a round leaves is fetched
by the next).

Examples:
   trawl crawl --simweb                                   # the demo: 3 rounds of a 100-host web
   trawl crawl --simweb --hosts 500 --pages 50000 --rounds 10 --topN 20000
   trawl --crawl ./crawl crawl --seeds urls.txt --rounds 3 --agent mybot
   trawl crawl --rounds -1 --topN 50000 --agent mybot --time-limit 2h
   trawl crawl --simweb --rounds 9 --schedule dynamic --cluster-every 3 --cluster-eps 0.25
   trawl crawl --simweb --rounds 3 --hostdb --max-failure-streak 3   # keep crawl/hostdb current; skip hosts failing 3 times in a row
   trawl crawl --simweb --rounds 3 --linkdb                # keep crawl/linkdb current (trawl invertlinks each round)
   trawl crawl --simweb --rounds 3 --scoring linkrank      # score pages by PageRank over the LinkDB, not OPIC
   trawl crawl --seeds urls.txt --agent mybot --sitemaps    # also the pages the seed hosts' robots.txt sitemaps list
   trawl crawl --seeds urls.txt --agent mybot --topic astronomy.txt --topN 500 --rounds 10   # a focused crawl
   0 * * * * trawl --crawl /data/crawl crawl --rounds 1 --agent mybot >> crawl.log 2>&1
   touch ./crawl/.STOP                                    # stop a running crawl between stages`,
		Flags: crawlFlags(),
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("crawl takes no arguments, got %q (seed files go with --seeds)", c.Args().First())
			}
			return s.crawlCmd(c)
		}),
	}
}

// crawlFlags are the flags of trawl crawl: its own, those of the
// synthetic web it can serve, and those of the jobs it runs.
func crawlFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "seeds", Usage: "inject the seed `FILE`s first (repeatable; a directory means every file in it)"},
		&cli.IntFlag{Name: "rounds", Value: demoRounds, Usage: "rounds to run (`N`), a resumed round included; -1: until nothing is due"},
		&cli.Float64Flag{Name: "days-per-round", Usage: "simulated days between rounds (`D`); 0 with no --now: the wall clock (--simweb: 1)"},
		&cli.StringFlag{Name: "now", Usage: "simulated `TIME` of the first round (RFC 3339, a date, or +Nd); default: continue the crawl's clock"},
		&cli.StringFlag{Name: "clock-url", Usage: "before each round, POST its simulated time to `URL`?t=TIME (a trawl simweb serve's http://ADDR/_simweb/clock)"},
		&cli.BoolFlag{Name: "force", Usage: "on file systems without OS locks (HDFS): break the lock of a crawl that died, and stale CrawlDB and segment locks (holder dead, or older than lock.maxAge)"},
		&cli.IntFlag{Name: "cluster-every", Usage: "after every `N`th round's updatedb, run trawl cluster (the dynamic schedule's clusters; the cluster.* settings apply); 0: never"},
		&cli.Float64Flag{Name: "cluster-eps", Usage: "DBSCAN radius `E` of --cluster-every's clustering (setting cluster.eps)"},
		&cli.BoolFlag{Name: "simweb", Usage: "crawl the synthetic web, served in this process on 127.0.0.1", Category: "Synthetic web (--simweb):"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "simweb: `SEED` selecting the web", Category: "Synthetic web (--simweb):"},
		&cli.IntFlag{Name: "hosts", Value: simweb.DefaultHosts, Usage: "simweb: regular hosts (`N`)", Category: "Synthetic web (--simweb):"},
		&cli.IntFlag{Name: "pages", Value: simweb.DefaultPages, Usage: "simweb: content pages (`N`)", Category: "Synthetic web (--simweb):"},
		&cli.IntFlag{Name: "topics", Usage: "simweb: a topical web of `K` topics, for --topic (trawl simweb topic prints a topic's sample texts)", Category: "Synthetic web (--simweb):"},
		&cli.StringFlag{Name: "hazards", Value: "default", Usage: "simweb: hostile features (`LIST`, see trawl simweb serve --help)", Category: "Synthetic web (--simweb):"},
		&cli.Float64Flag{Name: "latency", Value: 1, Usage: "simweb: scale of the hosts' latency (`F`)", Category: "Synthetic web (--simweb):"},
		&cli.StringFlag{Name: "access-log", Usage: "simweb: write every request as a JSON line to `FILE`", Category: "Synthetic web (--simweb):"},
	}
	flags = append(flags, settingFlags("topN", "max-per-host", "count-mode", "partition-mode", "num-fetchers", "schedule",
		"no-additions", "purge-gone", "overwrite", "update", "linkdb", "scoring")...)
	flags = append(flags, settingFlags("hostdb", "max-failure-streak", "skip-dns-failed")...)
	flags = append(flags, fetchFlags()...)
	flags = append(flags, parseFlags()...)
	flags = append(flags, settingFlag("parse-job"))
	flags = append(flags, warcFlags()...)
	flags = append(flags, settingFlags("sitemaps", "sitemap-urls", "no-lastmod", "no-changefreq", "no-priority", "no-strict",
		"sitemap-overwrite", "sitemap-depth", "sitemap-threads")...)
	flags = append(flags, focusFlags()...)
	return flags
}

// settingSet reports whether a setting was given by a file, the
// environment or a flag.
func (s *session) settingSet(name string) bool {
	v, _ := s.cfg.Get(name)
	return v.Source.Kind != config.FromDefault
}

// crawlCmd runs trawl crawl: options, engine, the synthetic web if asked
// for, the crawl, its report.
func (s *session) crawlCmd(c *cli.Context) error {
	o, err := s.crawlOptions(c)
	if err != nil {
		return err
	}
	demo := c.Bool("simweb")
	if len(o.Seeds) == 0 && !demo {
		s.log.Info("no --seeds: crawling the URLs already in the CrawlDB", "crawldb", jobs.CrawlDBDir(s.crawl()))
	}
	env, err := s.crawlEnv(c)
	if err != nil {
		return err
	}
	var srv *simweb.Server
	if demo {
		var cleanup func()
		if srv, cleanup, err = s.startSimweb(c, &o); err != nil {
			return err
		}
		defer cleanup()
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("crawl: %w", err)
	}
	o.OnRound = func(r jobs.RoundResult) {
		fmt.Fprint(s.io.stdout, r.Summary())
	}
	res, err := jobs.Crawl(c.Context, env, o)
	return s.printCrawlResult(res, err, srv)
}

// crawlOptions builds the crawl's options from the flags and settings and
// checks them.
func (s *session) crawlOptions(c *cli.Context) (jobs.CrawlOptions, error) {
	var o jobs.CrawlOptions
	demo := c.Bool("simweb")
	if err := crawlRounds(c, &o); err != nil {
		return o, err
	}
	if !demo {
		for _, f := range []string{"seed", "hosts", "pages", "hazards", "latency", "access-log"} {
			if c.IsSet(f) {
				return o, usageErrorf("crawl: --%s needs --simweb", f)
			}
		}
	}
	if c.String("now") != "" {
		t, err := nowFlag(c)
		if err != nil {
			return o, err
		}
		o.Now = t
	}
	o.Seeds = c.StringSlice("seeds")
	if err := s.crawlJobOptions(c, &o); err != nil {
		return o, err
	}
	if u := c.String("clock-url"); u != "" {
		if demo {
			return o, usageErrorf("crawl: --clock-url is for a synthetic web served elsewhere; --simweb sets its own clock")
		}
		if o.RoundInterval == 0 && o.Now.IsZero() {
			return o, usageErrorf("crawl: --clock-url needs simulated time: give --days-per-round or --now")
		}
		o.SetClock = postClock(u)
	}
	return o, nil
}

// crawlRounds sets the rounds of o and the simulated time between them:
// --rounds and --days-per-round (--simweb: one day by default).
func crawlRounds(c *cli.Context, o *jobs.CrawlOptions) error {
	rounds := c.Int("rounds")
	if rounds == 0 || rounds < -1 {
		return usageErrorf("crawl: --rounds must be positive or -1 (until nothing is due), not %d", rounds)
	}
	days := c.Float64("days-per-round")
	if days < 0 || math.IsNaN(days) || math.IsInf(days, 0) {
		return usageErrorf("crawl: --days-per-round must be >= 0, not %g", days)
	}
	if c.Bool("simweb") && !c.IsSet("days-per-round") {
		days = demoDaysPerRound
	}
	o.Rounds = rounds
	o.RoundInterval = time.Duration(days * 24 * float64(time.Hour))
	return nil
}

// crawlJobOptions sets the options of the jobs a crawl runs: inject,
// generate, updatedb, parse, cluster (with --cluster-every) and fetch
// (with the demo's agent under --simweb).
func (s *session) crawlJobOptions(c *cli.Context, o *jobs.CrawlOptions) error {
	var err error
	if o.Inject, err = s.injectOptions(); err != nil {
		return err
	}
	if o.Generate, err = s.generateOptions(); err != nil {
		return err
	}
	if o.Update, err = s.updateOptions(); err != nil {
		return err
	}
	if o.Parse, err = s.parseOptions(); err != nil {
		return err
	}
	if err := s.crawlClusterOptions(c, o); err != nil {
		return err
	}
	o.LinkDB = s.cfg.Bool(config.LinkDBUpdate)
	o.HostDb = s.cfg.Bool(config.HostDbUpdate)
	if o.InvertLinks, err = s.invertLinksOptions(); err != nil {
		return err
	}
	if o.LinkRank, err = s.linkRankOptions(); err != nil {
		return err
	}
	if o.Parse.Focus, err = s.focusOptions(c); err != nil {
		return err
	}
	if o.Parse.Focus.Topic != nil {
		// A focused crawl orders its fetches by IPageRank.
		o.Update.Scoring = jobs.ScoringLinkRank
		o.LinkRank.Topic = o.Parse.Focus.Topic
	}
	defaultAgent := ""
	if c.Bool("simweb") {
		defaultAgent = demoAgent
	}
	o.Fetch, err = s.fetchOptions(defaultAgent)
	o.ParseJob = !s.cfg.Bool(config.FetcherParseInCrawl)
	if err == nil && s.cfg.Bool(config.SitemapInCrawl) {
		o.Sitemaps = true
		o.Sitemap, err = s.sitemapOptions(defaultAgent)
	}
	return err
}

// crawlClusterOptions sets --cluster-every and the clustering it runs.
func (s *session) crawlClusterOptions(c *cli.Context, o *jobs.CrawlOptions) error {
	if o.ClusterEvery = c.Int("cluster-every"); o.ClusterEvery < 0 {
		return usageErrorf("crawl: --cluster-every must be >= 0, not %d", o.ClusterEvery)
	}
	if o.ClusterEvery == 0 {
		return nil
	}
	var err error
	if o.Cluster, err = s.clusterOptions(c); err != nil {
		return err
	}
	if c.IsSet("cluster-eps") {
		o.Cluster.Eps = c.Float64("cluster-eps")
	}
	if !(o.Cluster.Eps > 0) {
		return usageErrorf("crawl: --cluster-every needs a positive DBSCAN eps: --cluster-eps or the setting %s", config.ClusterEps)
	}
	return nil
}

// crawlEnv returns the engine of the crawl's jobs. The round summaries
// replace the engine's progress bars and counter tables (a dozen jobs'
// worth per round), unless debugging.
func (s *session) crawlEnv(c *cli.Context) (jobs.Env, error) {
	env, err := s.jobsEnv(c)
	if err != nil {
		return env, err
	}
	if !s.log.Enabled(c.Context, slog.LevelDebug) {
		if lr, ok := env.Runner.(*mapreduce.LocalRunner); ok {
			r := *lr
			r.Progress = nil
			env.Runner = &r
		}
	}
	return env, nil
}

// printCrawlResult prints what a crawl did and how it ended, and turns its
// error into the command's exit status.
func (s *session) printCrawlResult(res *jobs.CrawlResult, err error, srv *simweb.Server) error {
	if res != nil {
		for _, d := range res.Discarded {
			fmt.Fprintf(s.io.stdout, "discarded half-done segment %s (it could not be resumed)\n", d)
		}
		s.printCrawlTotals(res, srv)
	}
	if err != nil {
		var le *crawldb.LockedError
		if errors.As(err, &le) {
			return withCode(exitLocked, err)
		}
		return jobError(err)
	}
	switch {
	case res.Stopped:
		fmt.Fprintf(s.io.stderr, "trawl: crawl stopped at %s (removed); run the crawl again to continue\n", jobs.StopFile)
	case res.Exhausted:
		fmt.Fprintln(s.io.stderr, "trawl: nothing more is due: the crawl is done for now")
	}
	return nil
}

// printCrawlTotals prints the totals of a crawl and where its CrawlDB is.
func (s *session) printCrawlTotals(res *jobs.CrawlResult, srv *simweb.Server) {
	out := s.io.stdout
	var fetched, notModified, failed, added int64
	for _, r := range res.Rounds {
		if r.Fetch != nil {
			fetched += r.Fetch.Fetched
			notModified += r.Fetch.NotModified
			failed += r.Fetch.Failed
		}
		if r.Update != nil {
			added += r.Update.Added
		}
	}
	fmt.Fprintf(out, "crawl: %d rounds in %s: %d pages fetched, %d not modified, %d failed, %d new URLs\n",
		len(res.Rounds), res.Duration.Round(time.Millisecond), fetched, notModified, failed, added)
	if srv != nil {
		fmt.Fprintf(out, "simweb: %d requests served; simulated time now %s\n", srv.AccessLog().Len(), srv.Now().Format(time.RFC3339))
	}
	crawl := s.crawl()
	fmt.Fprintf(out, "CrawlDB: %s\n", jobs.CrawlDBDir(crawl))
	fmt.Fprintf(out, "next:    %s --crawl %s readdb stats\n", s.io.program(), crawl)
}

// postClock returns a SetClock that POSTs the time to a simweb control
// endpoint (url?t=RFC3339).
func postClock(u string) func(context.Context, time.Time) error {
	return func(ctx context.Context, t time.Time) error {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u+sep+"t="+url.QueryEscape(t.UTC().Format(time.RFC3339Nano)), nil)
		if err != nil {
			return fmt.Errorf("--clock-url: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("--clock-url: %w", err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("--clock-url %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}
