package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/resolver"
)

func resolveCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "look host names up through the fetcher's DNS resolver",
		ArgsUsage: "NAME...",
		Description: `Resolves each NAME with the cached asynchronous resolver the fetcher uses
(package resolver), with the same settings: the name servers of --dns-server
(repeatable; fetcher.dnsServers), else those of /etc/resolv.conf, and the
fetcher.dns.* settings (time-out, retries, IPv6, ...; see trawl config).
/etc/hosts is not read. All names are looked up at once, as the fetcher
prefetches a fetch list's hosts.

Prints one line per name, as dig +short would but on one line: the name, then
its addresses (IPv4 first). A name that fails is reported on stderr, and the
exit status is then 3. --stats prints the resolver's counters after the names,
as ";; " lines.

Examples:
   trawl resolve example.com www.example.org
   trawl resolve --dns-server 127.0.0.1:5353 h0000.sim.test h0001.sim.test --stats
   TRAWL_FETCHER_DNS_IPV6=true trawl resolve --dns-server 1.1.1.1 example.com`,
		Flags: []cli.Flag{
			settingFlag("dns-server"),
			&cli.BoolFlag{Name: "stats", Usage: "print the resolver's counters after the names"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			names := c.Args().Slice()
			if len(names) == 0 {
				return usageErrorf("resolve: give at least one NAME")
			}
			cfg, err := s.resolverConfig()
			if err != nil {
				return err
			}
			cfg.Servers = s.cfg.List(config.FetcherDNSServers)
			if err := cfg.Validate(); err != nil {
				return usageErrorf("resolve: %w", err)
			}
			r, err := resolver.New(cfg)
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("resolve: %w", err))
			}
			defer r.Close()
			r.Prefetch(c.Context, names)
			out, failed := sio.stdout, 0
			for _, n := range names {
				addrs, err := r.LookupNetIP(c.Context, n)
				if err != nil {
					failed++
					fmt.Fprintf(sio.stderr, "%s: %v\n", n, err)
					continue
				}
				parts := make([]string, 0, len(addrs)+1)
				parts = append(parts, n)
				for _, a := range addrs {
					parts = append(parts, a.String())
				}
				fmt.Fprintln(out, strings.Join(parts, " "))
			}
			if c.Bool("stats") {
				printResolverStats(sio, r)
			}
			if failed > 0 {
				return withCode(exitFailure, fmt.Errorf("resolve: %d of %d names failed", failed, len(names)))
			}
			return nil
		}),
	}
}

// printResolverStats writes a resolver's counters as ";; name value" lines.
func printResolverStats(sio *stdio, r *resolver.Resolver) {
	st := r.Stats()
	fmt.Fprintf(sio.stdout, ";; servers %s\n", strings.Join(r.Servers(), " "))
	for _, kv := range [][2]any{
		{"lookups", st.Lookups}, {"hits", st.Hits}, {"stale_hits", st.Stale}, {"negative_hits", st.NegativeHits},
		{"misses", st.Misses}, {"coalesced", st.Coalesced}, {"literals", st.Literals}, {"refreshes", st.Refreshes},
		{"in_flight", st.InFlight}, {"queries", st.Queries}, {"timeouts", st.Timeouts}, {"retries", st.Retries},
		{"truncated", st.Truncated}, {"tcp", st.TCP}, {"errors", st.Errors}, {"ignored", st.Ignored},
		{"prefetched", st.Prefetched}, {"prefetch_dropped", st.PrefetchDropped}, {"entries", st.Entries},
		{"evictions", st.Evictions}, {"p50", st.P50}, {"p90", st.P90}, {"p99", st.P99},
	} {
		fmt.Fprintf(sio.stdout, ";; %s %v\n", kv[0], kv[1])
	}
}

// resolverConfig returns the DNS resolver's configuration from the
// fetcher.dns.* settings, without its servers (fetcher.dnsServers, which
// the fetch job passes on its own). A setting of 0 for the negative TTL
// or the retries means none, said by the resolver's NoNegativeCache and
// NoRetries (its zero values mean its defaults, which equal the
// settings' defaults).
func (s *session) resolverConfig() (resolver.Config, error) {
	cfg := s.cfg
	c := resolver.Config{
		CacheSize:     cfg.Int(config.FetcherDNSCacheSize),
		RefreshPeriod: cfg.Duration(config.FetcherDNSRefreshPeriod),
		NegativeTTL:   cfg.Duration(config.FetcherDNSNegativeTTL),
		Timeout:       cfg.Duration(config.FetcherDNSTimeout),
		Retries:       cfg.Int(config.FetcherDNSRetries),
		IPv6:          cfg.Bool(config.FetcherDNSIPv6),
	}
	c.NoNegativeCache = c.NegativeTTL == 0
	c.NoRetries = c.Retries == 0
	switch {
	case c.CacheSize == 0 || c.CacheSize < -1:
		return c, usageErrorf("%s must be positive, or -1 for no cache, not %d", config.FetcherDNSCacheSize, c.CacheSize)
	case c.RefreshPeriod <= 0:
		return c, usageErrorf("%s must be > 0", config.FetcherDNSRefreshPeriod)
	case c.NegativeTTL < 0:
		return c, usageErrorf("%s must be >= 0", config.FetcherDNSNegativeTTL)
	case c.Timeout <= 0:
		return c, usageErrorf("%s must be > 0", config.FetcherDNSTimeout)
	case c.Retries < 0:
		return c, usageErrorf("%s must be >= 0, not %d", config.FetcherDNSRetries, c.Retries)
	}
	return c, nil
}
