package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func generateCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "select due URLs into a new segment's fetch list",
		Description: `Selects the URLs that are due for fetching (per the fetch schedule), best
score first (with the dynamic schedule, best score times the estimated
probability that the page changed since its last fetch: schedule.dynamic.rank),
at most --max-per-host per host (or domain, --count-mode) and at
most --topN in all, and writes them to a new segment's crawl_generate,
partitioned into --num-fetchers parts, one per fetch task. Prints the
segment's path on stdout. URLs in segments that updatedb has not merged yet
(for up to generate.delay) are not selected again, nor are URLs that dedup
marked db_duplicate.

--partition-mode (Nutch's partition.url.mode) is what the parts are made by:
host (the default), registered domain, or ip: the hosts of one IP address go
to one part, so that fetch --queue-mode ip, run as several fetch tasks, keeps
its politeness per address. By ip, generate looks each host of the fetch
list up once, with the fetcher's resolver and settings (--dns-server,
fetcher.dns.*), and takes its lowest address; a host without an address is
partitioned by its name (counted as partition_unresolved). --count-mode is
separate: what --max-per-host counts, whatever the parts are made by.

--max-failure-streak N (generate.hostdb.maxFailureStreak, as Nutch's
generate.hostdb) skips every URL of a host whose failure streak in the HostDb
(crawl/hostdb, built by trawl updatehostdb) is at least N, and
--skip-dns-failed every URL of a host whose last fetch failed to resolve its
name; the HostDb version read and the URLs skipped for each reason are printed
on stderr. Without a HostDb, or with both off, nothing is skipped.

Exits with status 1, writing no segment, when nothing is due (as Nutch's
generator does), so a script can end the round there.

--now sets the time generate considers "now": an RFC 3339 time, a date
(UTC midnight), or an offset from the wall clock such as +7d or +12h.

Examples:
   trawl --crawl ./crawl generate
   trawl --crawl ./crawl generate --topN 1000 --max-per-host 50 --num-fetchers 4
   trawl generate --count-mode domain --max-per-host 100
   trawl generate --num-fetchers 8 --partition-mode ip   # then: trawl fetch --queue-mode ip
   trawl generate --now +30d                   # what will be due in 30 days
   trawl generate --max-failure-streak 3 --skip-dns-failed   # skip failing hosts (needs trawl updatehostdb)
   seg=$(trawl generate --topN 5000) || exit 0  # stop the round when nothing is due`,
		Flags: []cli.Flag{
			settingFlag("topN"),
			settingFlag("max-per-host"),
			settingFlag("count-mode"),
			settingFlag("partition-mode"),
			settingFlag("num-fetchers"),
			settingFlag("dns-server"),
			settingFlag("schedule"),
			settingFlag("max-failure-streak"),
			settingFlag("skip-dns-failed"),
			nowFlagDef("generate considers now (what is due then)"),
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("generate takes no arguments, got %q", c.Args().First())
			}
			now, err := parseNow(c.String("now"), time.Now())
			if err != nil {
				return usageErrorf("generate: %w", err)
			}
			return s.generate(c, now)
		}),
	}
}

// partitionOptions sets generate's partition mode from the settings and,
// to partition by IP, its resolver from the fetcher's DNS settings (the
// servers of fetcher.dnsServers, the fetcher.dns.* configuration);
// GenerateOptions.Validate checks them.
func (s *session) partitionOptions(o *jobs.GenerateOptions) error {
	o.PartitionMode = s.cfg.String(config.GeneratePartitionMode)
	if o.PartitionMode != jobs.PartitionIP {
		return nil
	}
	o.DNSServers = s.cfg.List(config.FetcherDNSServers)
	for _, d := range o.DNSServers {
		if strings.ContainsAny(d, " /") {
			return usageErrorf("%s: %q is not host:port or host", config.FetcherDNSServers, d)
		}
	}
	dns, err := s.resolverConfig()
	if err != nil {
		return err
	}
	o.DNS = dns
	return nil
}

func (s *session) generate(c *cli.Context, now time.Time) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.generateOptions()
	if err != nil {
		return err
	}
	o.Now = now
	res, err := jobs.Generate(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	if res.HostDbVersion == "" && (o.HostDbMaxFailureStreak > 0 || o.HostDbSkipDNSFailed) {
		fmt.Fprintf(s.io.stderr, "generate: no HostDb in %s (run trawl updatehostdb): no host skipped\n", jobs.HostDbDir(s.crawl()))
	} else if res.HostDbVersion != "" {
		fmt.Fprintf(s.io.stderr, "generate: HostDb version %s: skipped %d hosts, %d URLs for their failure streak (%s %d), %d for failed DNS\n",
			res.HostDbVersion, res.HostDbHosts, res.HostDbFailing, config.GenerateHostDbMaxFailureStreak,
			o.HostDbMaxFailureStreak, res.HostDbDNSFailed)
	}
	_, err = fmt.Fprintln(s.io.stdout, res.Segment)
	return err
}

// generateOptions returns generate's options from the settings (without
// Now), checked by GenerateOptions.Validate.
func (s *session) generateOptions() (jobs.GenerateOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.GenerateOptions{}, err
	}
	o := jobs.GenerateOptions{
		TopN: int64(s.cfg.Int(config.GenerateTopN)),
		// The setting keeps Nutch's -1 for no limit; the options' is 0.
		MaxPerHost:  max(0, s.cfg.Int(config.GenerateMaxPerHost)),
		CountMode:   s.cfg.String(config.GenerateCountMode),
		NumFetchers: s.cfg.Int(config.GenerateNumFetchers),
		MaxPartURLs: int64(s.cfg.Int(config.GenerateMaxPartURLs)),
		Delay:       s.cfg.Duration(config.GenerateDelay),
		Schedule:    sched,

		HostDbMaxFailureStreak: int64(s.cfg.Int(config.GenerateHostDbMaxFailureStreak)),
		HostDbSkipDNSFailed:    s.cfg.Bool(config.GenerateHostDbSkipDNSFailed),
	}
	if o.Delay == 0 {
		// The options' 0 is the default delay; the setting's would mean
		// no hold at all, which generate does not offer.
		return o, usageErrorf("%s must be > 0", config.GenerateDelay)
	}
	if s.cfg.Bool(config.GenerateFilter) {
		if o.Filters, err = s.filters(); err != nil {
			return o, err
		}
	}
	if err := s.partitionOptions(&o); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("generate: %w", err)
	}
	return o, nil
}
