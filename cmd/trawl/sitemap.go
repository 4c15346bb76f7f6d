package main

import (
	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func sitemapCommand(sio *stdio) *cli.Command {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "from-robots", Usage: "read the sitemaps named by the robots.txt (Sitemap: lines) of every host of the CrawlDB (default: on without --sitemap-urls, as Nutch's HostDB mode)", DisableDefaultText: true},
		nowFlagDef("new URLs are due from"),
		forceFlag(),
	}
	flags = append(flags, settingFlags("sitemap-urls", "no-lastmod", "no-changefreq", "no-priority", "no-strict",
		"sitemap-overwrite", "sitemap-depth", "sitemap-threads", "schedule",
		"agent", "server-delay", "max-crawl-delay", "connect-timeout", "read-timeout", "allow-private", "dns-server")...)
	return &cli.Command{
		Name:  "sitemap",
		Usage: "add the URLs of sitemaps (sitemaps.org) to the CrawlDB",
		Description: `Reads sitemaps, as Nutch's SitemapProcessor (bin/nutch sitemap) does, and adds
the URLs they list to the CrawlDB as db_unfetched: a URL's <lastmod> becomes
its modified time, its <changefreq> its fetch interval and its <priority> its
score (--no-lastmod, --no-changefreq, --no-priority leave them unused). A URL
already in the CrawlDB is kept as it is unless --sitemap-overwrite.

The sitemaps come from --sitemap-urls files (one URL a line) and, with
--from-robots (the default without a file), from the Sitemap: lines of the
robots.txt of every host in the CrawlDB. XML sitemaps, sitemap indexes (whose
sitemaps are read in turn, up to --sitemap-depth), plain-text sitemaps and
gzipped ones are read, each at most 50,000 URLs and 50 MB uncompressed as the
protocol allows. A URL outside its sitemap's scope (the sitemap's host and
directory, or its whole host for a sitemap named in robots.txt) is refused
unless --no-strict; a sitemap on another host than its robots.txt or index is
refused. Fetching is polite as in fetch: the crawler's name (--agent),
robots.txt honoured for every sitemap, --server-delay between two requests to
a host, private addresses refused unless --allow-private. The URLs listed are
normalized and filtered as inject does a seed (urlfilter.* settings).

The CrawlDB is locked while sitemap runs; a failure leaves it as it was. A
sitemap that cannot be fetched or parsed is logged and counted, not an error.

Examples:
   trawl --crawl ./crawl sitemap --agent mybot                       # the robots.txt sitemaps of the CrawlDB's hosts
   trawl --crawl ./crawl sitemap --agent mybot --sitemap-urls sitemaps.txt
   trawl --crawl ./crawl sitemap --agent mybot --sitemap-urls sitemaps.txt --from-robots --no-priority
   trawl --crawl ./crawl crawl --seeds urls.txt --agent mybot --sitemaps   # the seed hosts' sitemaps in round 1`,
		Flags: flags,
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("sitemap takes no arguments, got %q (sitemap URL files go with --sitemap-urls)", c.Args().First())
			}
			return s.sitemap(c)
		}),
	}
}

// sitemap runs the sitemap command.
func (s *session) sitemap(c *cli.Context) error {
	o, err := s.sitemapOptions("")
	if err != nil {
		return err
	}
	o.FromRobots = len(o.SitemapURLs) == 0
	if c.IsSet("from-robots") {
		o.FromRobots = c.Bool("from-robots")
	}
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("sitemap: %w (see trawl sitemap --help)", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	_, err = jobs.Sitemap(c.Context, env, o)
	return jobError(err)
}

// sitemapOptions returns the sitemap job's options from the settings
// (without FromRobots and Now): inject's score, schedule and filters, and
// the fetcher's agent, delays, timeouts, address rules and DNS.
func (s *session) sitemapOptions(defaultAgent string) (jobs.SitemapOptions, error) {
	inj, err := s.injectOptions()
	if err != nil {
		return jobs.SitemapOptions{}, err
	}
	fetch, err := s.fetchOptions(defaultAgent)
	if err != nil {
		return jobs.SitemapOptions{}, err
	}
	cfg := s.cfg
	depth, threads := cfg.Int(config.SitemapMaxDepth), cfg.Int(config.SitemapThreads)
	if depth < 1 {
		return jobs.SitemapOptions{}, usageErrorf("%s must be >= 1, not %d", config.SitemapMaxDepth, depth)
	}
	if threads < 1 {
		return jobs.SitemapOptions{}, usageErrorf("%s must be >= 1, not %d", config.SitemapThreads, threads)
	}
	return jobs.SitemapOptions{
		SitemapURLs:      cfg.List(config.SitemapURLs),
		IgnoreLastMod:    !cfg.Bool(config.SitemapLastMod),
		IgnoreChangeFreq: !cfg.Bool(config.SitemapChangeFreq),
		IgnorePriority:   !cfg.Bool(config.SitemapPriority),
		NotStrict:        !cfg.Bool(config.SitemapStrict),
		Overwrite:        cfg.Bool(config.SitemapOverwrite),
		MaxDepth:         depth,
		Threads:          threads,
		Score:            inj.Score,
		Schedule:         inj.Schedule,
		Filters:          inj.Filters,
		Fetch:            fetch,
	}, nil
}
