package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
)

// flagMapping ties a command-line flag to the setting it sets. A flag with
// a constant sets the setting to that value when given (--no-additions sets
// updatedb.additions to false); otherwise the flag's own value is used.
type flagMapping struct {
	flag, setting, constant string
	global                  bool
	// usage replaces the setting's doc in the flag's help.
	usage string
}

// flagMappings lists every flag that sets a setting.
func flagMappings() []flagMapping {
	return []flagMapping{
		{flag: "crawl", setting: config.CrawlDir, global: true},
		{flag: "log-level", setting: config.LogLevel, global: true},
		{flag: "log-format", setting: config.LogFormat, global: true},
		{flag: "memory", setting: config.EngineMemory, global: true},
		{flag: "parallelism", setting: config.EngineParallelism, global: true},
		{flag: "engine", setting: config.EngineName, global: true},
		{flag: "overwrite", setting: config.InjectOverwrite},
		{flag: "update", setting: config.InjectUpdate},
		{flag: "topN", setting: config.GenerateTopN},
		{flag: "max-per-host", setting: config.GenerateMaxPerHost},
		{flag: "count-mode", setting: config.GenerateCountMode},
		{flag: "partition-mode", setting: config.GeneratePartitionMode},
		{flag: "num-fetchers", setting: config.GenerateNumFetchers},
		{flag: "no-additions", setting: config.UpdateAdditions, constant: "false",
			usage: "add no new URLs, neither fetched nor linked; update known ones only"},
		{flag: "purge-gone", setting: config.UpdatePurgeGone},
		{flag: "schedule", setting: config.ScheduleName},

		{flag: "agent", setting: config.FetcherAgent},
		{flag: "server-delay", setting: config.FetcherServerDelay},
		{flag: "max-crawl-delay", setting: config.FetcherMaxCrawlDelay},
		{flag: "max-retry-after", setting: config.FetcherMaxRetryAfter},
		{flag: "max-connections", setting: config.FetcherMaxConnections},
		{flag: "connect-timeout", setting: config.FetcherConnectTimeout},
		{flag: "read-timeout", setting: config.FetcherReadTimeout},
		{flag: "content-limit", setting: config.FetcherContentLimit},
		{flag: "content-types", setting: config.FetcherContentTypes},
		{flag: "follow-redirects", setting: config.FetcherFollowRedirects},
		{flag: "time-limit", setting: config.FetcherTimeLimit},
		{flag: "allow-private", setting: config.FetcherAllowPrivate},
		{flag: "dns-server", setting: config.FetcherDNSServers,
			usage: "DNS server host:port for name lookups (repeatable; default the system's)"},
		{flag: "max-exceptions-per-host", setting: config.FetcherMaxExceptionsPerHost},
		{flag: "policy", setting: config.FetcherPolicy},
		{flag: "queue-mode", setting: config.FetcherQueueMode},
		{flag: "politeness", setting: config.FetcherPoliteness},
		{flag: "no-keep-alive", setting: config.FetcherKeepAlive, constant: "false",
			usage: "one request per connection (no HTTP keep-alive), to measure what keep-alive gives"},
		{flag: "throughput-threshold", setting: config.FetcherThroughputThreshold},
		{flag: "throughput-check-after", setting: config.FetcherThroughputCheckAfter},
		{flag: "throughput-retries", setting: config.FetcherThroughputRetries},
		{flag: "parse", setting: config.FetcherParse},
		{flag: "parse-job", setting: config.FetcherParseInCrawl, constant: "false",
			usage: "parse in a parse job after each fetch, as Nutch's crawl script does, rather than as pages are fetched"},
		{flag: "warc", setting: config.FetcherWARC},
		{flag: "warc-max-file-size", setting: config.WARCMaxFileSize},
		{flag: "warc-prefix", setting: config.WARCPrefix},

		{flag: "max-outlinks", setting: config.ParserMaxOutlinks},
		{flag: "signature", setting: config.ParserSignature},
		{flag: "scope", setting: config.URLFilterScope},
		{flag: "ignore-internal-links", setting: config.ParserIgnoreInternalLinks},
		{flag: "embedded-links", setting: config.ParserEmbeddedLinks},
		{flag: "parse-types", setting: config.ParserTypes},
		{flag: "ignore-external-links", setting: config.ParserIgnoreExternalLinks},
		{flag: "linkdb", setting: config.LinkDBUpdate},
		{flag: "hostdb", setting: config.HostDbUpdate},
		{flag: "max-failure-streak", setting: config.GenerateHostDbMaxFailureStreak},
		{flag: "skip-dns-failed", setting: config.GenerateHostDbSkipDNSFailed},
		{flag: "scoring", setting: config.ScoringName},
		{flag: "topic", setting: config.TopicFiles, usage: "a sample-text file describing the topic of a focused crawl, split into samples at blank lines (repeatable)"},
		{flag: "link-threshold", setting: config.TopicLinkThreshold},
		{flag: "page-threshold", setting: config.TopicPageThreshold},
		{flag: "max-off-topic-hops", setting: config.TopicMaxOffTopicHops},
		{flag: "damping", setting: config.LinkRankDamping},
		{flag: "iterations", setting: config.LinkRankMaxIterations},
		{flag: "tolerance", setting: config.LinkRankTolerance},
		{flag: "ignore-internal-host", setting: config.LinkDBIgnoreInternalHost},
		{flag: "ignore-internal-domain", setting: config.LinkDBIgnoreInternalDomain},
		{flag: "parse-truncated", setting: config.ParserSkipTruncated, constant: "false",
			usage: "parse pages cut at the content limit too (their text and links are partial)"},
		{flag: "sitemap-urls", setting: config.SitemapURLs, usage: "a file of sitemap URLs, one a line (repeatable)"},
		{flag: "no-lastmod", setting: config.SitemapLastMod, constant: "false",
			usage: "leave the sitemaps' <lastmod> unused (no modified time)"},
		{flag: "no-changefreq", setting: config.SitemapChangeFreq, constant: "false",
			usage: "leave the sitemaps' <changefreq> unused (the schedule's interval)"},
		{flag: "no-priority", setting: config.SitemapPriority, constant: "false",
			usage: "leave the sitemaps' <priority> unused (new URLs get inject.score)"},
		{flag: "no-strict", setting: config.SitemapStrict, constant: "false",
			usage: "accept sitemap URLs outside the sitemap's scope (Nutch's -noStrict)"},
		{flag: "sitemap-overwrite", setting: config.SitemapOverwrite},
		{flag: "sitemap-depth", setting: config.SitemapMaxDepth},
		{flag: "sitemap-threads", setting: config.SitemapThreads},
		{flag: "sitemaps", setting: config.SitemapInCrawl},
	}
}

// fetchFlags are the setting flags of the fetch job.
func fetchFlags() []cli.Flag {
	return settingFlags("agent", "server-delay", "max-crawl-delay", "max-retry-after", "max-connections", "connect-timeout",
		"read-timeout", "content-limit", "content-types", "follow-redirects", "time-limit", "allow-private", "dns-server",
		"max-exceptions-per-host", "policy", "queue-mode", "politeness", "no-keep-alive", "throughput-threshold",
		"throughput-check-after", "throughput-retries")
}

// warcFlags are the setting flags of a fetch's WARC files.
func warcFlags() []cli.Flag { return settingFlags("warc", "warc-max-file-size", "warc-prefix") }

// parseFlags are the setting flags of the parse job.
func parseFlags() []cli.Flag {
	return settingFlags("max-outlinks", "signature", "scope", "ignore-internal-links", "ignore-external-links", "embedded-links", "parse-types", "parse-truncated")
}

// settingFlags makes the flags called names (see settingFlag).
func settingFlags(names ...string) []cli.Flag {
	out := make([]cli.Flag, 0, len(names))
	for _, n := range names {
		out = append(out, settingFlag(n))
	}
	return out
}

// flagSetting returns the setting flag sets (see flagMapping).
func flagSetting(flag string) (setting, constant string, ok bool) {
	m, ok := lookupFlag(flag)
	return m.setting, m.constant, ok
}

// lookupFlag returns the mapping of flag.
func lookupFlag(flag string) (flagMapping, bool) {
	m, ok := flagsByName()[flag]
	return m, ok
}

// flagsByName indexes flagMappings by flag, built once: building the
// command line looks up every flag, which with a new flagMappings for
// each lookup allocated megabytes as every trawl process started. A flag
// mapped twice is a bug in the table.
var flagsByName = sync.OnceValue(func() map[string]flagMapping {
	all := flagMappings()
	m := make(map[string]flagMapping, len(all))
	for _, f := range all {
		if _, dup := m[f.flag]; dup {
			panic(fmt.Sprintf("trawl: flag --%s mapped twice", f.flag))
		}
		m[f.flag] = f
	}
	return m
})

// commandSettingFlags returns a flag for every setting flag that is not
// global (for `trawl config`, which shows what they would do).
func commandSettingFlags() []cli.Flag {
	var out []cli.Flag
	for _, m := range flagMappings() {
		if !m.global {
			out = append(out, settingFlag(m.flag))
		}
	}
	return out
}

// settingFlag makes the flag called name for the setting it maps to, with
// the setting's doc, default and environment variable in its help.
func settingFlag(name string, aliases ...string) cli.Flag {
	m, ok := lookupFlag(name)
	if !ok {
		panic(fmt.Sprintf("trawl: flag --%s maps to no setting", name))
	}
	s, ok := config.Lookup(m.setting)
	if !ok {
		panic(fmt.Sprintf("trawl: flag --%s: no setting %q", name, m.setting))
	}
	if m.usage != "" {
		s.Doc = m.usage
	}
	if s.Kind == config.Bool {
		usage := fmt.Sprintf("%s (setting %s, $%s)", s.Doc, s.Name, s.EnvVar())
		if m.constant != "" {
			usage = fmt.Sprintf("%s (sets %s=%s, $%s)", s.Doc, s.Name, m.constant, s.EnvVar())
		}
		return &cli.BoolFlag{Name: name, Aliases: aliases, Usage: usage, DisableDefaultText: true}
	}
	placeholder := map[config.Kind]string{
		config.Int: "N", config.Float: "F", config.Duration: "DURATION", config.Size: "SIZE",
		config.List: "A,B", config.String: "VALUE",
	}[s.Kind]
	if len(s.Choices) > 0 {
		placeholder = joinChoices(s.Choices)
	}
	if s.Name == config.CrawlDir {
		placeholder = "DIR"
	}
	if s.Kind == config.List {
		return &cli.StringSliceFlag{
			Name: name, Aliases: aliases,
			Usage: fmt.Sprintf("%s (`VALUE`; setting %s, $%s)", s.Doc, s.Name, s.EnvVar()),
		}
	}
	return &cli.StringFlag{
		Name: name, Aliases: aliases, DefaultText: s.Default,
		Usage: fmt.Sprintf("%s (`%s`; setting %s, $%s)", s.Doc, placeholder, s.Name, s.EnvVar()),
	}
}

func joinChoices(cs []string) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += "|"
		}
		out += c
	}
	return out
}

// globalFlags are the flags of the app, also accepted after any command
// name. Each call returns new flag values.
func globalFlags() []cli.Flag {
	fs := []cli.Flag{
		settingFlag("crawl", "c"),
		&cli.StringFlag{Name: "config", Usage: "read settings from `FILE` (default $TRAWL_CONFIG, else ./trawl.yaml if present)"},
		settingFlag("log-level"),
		settingFlag("log-format"),
		settingFlag("memory"),
		settingFlag("parallelism"),
		settingFlag("engine"),
		&cli.BoolFlag{Name: "dry-run", Usage: "with --engine hadoop: print the hadoop command of the first job and run nothing (the jobs after it depend on its result)",
			DisableDefaultText: true},
	}
	for _, f := range fs {
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Category = "Global options (also accepted before the command):"
		case *cli.BoolFlag:
			f.Category = "Global options (also accepted before the command):"
		}
	}
	return fs
}

// overrides collects the setting flags given on the command line in c and
// its parents; a flag given after the command name wins over the same flag
// given before it.
func overrides(c *cli.Context) []config.Override {
	var out []config.Override
	lineage := c.Lineage()
	for i := len(lineage) - 1; i >= 0; i-- { // root first, so later ones win
		ctx := lineage[i]
		if ctx.App == nil {
			continue // the context above the root
		}
		for _, f := range ctxFlags(ctx) {
			name := f.Names()[0]
			setting, constant, ok := flagSetting(name)
			if !ok || !isSetHere(ctx, name) {
				continue
			}
			var v string
			switch {
			case constant != "":
				if !ctx.Bool(name) {
					continue
				}
				v = constant
			default:
				switch f.(type) {
				case *cli.BoolFlag:
					v = strconv.FormatBool(ctx.Bool(name))
				case *cli.StringSliceFlag:
					v = strings.Join(ctx.StringSlice(name), ",")
				default:
					v = ctx.String(name)
				}
			}
			out = append(out, config.Override{Name: setting, Value: v, Flag: "--" + name})
		}
	}
	return out
}

// ctxFlags returns the flags defined at one level of the command tree.
func ctxFlags(ctx *cli.Context) []cli.Flag {
	if ctx.Command != nil && ctx.Command.Name != "" {
		return ctx.Command.Flags
	}
	if ctx.App != nil {
		return ctx.App.Flags
	}
	return nil
}

// isSetHere reports whether flag name was given at this level of the
// command tree (not at a parent's).
func isSetHere(ctx *cli.Context, name string) bool {
	for _, n := range ctx.LocalFlagNames() {
		if n == name {
			return true
		}
	}
	return false
}

// fallbackSettings returns, for the command called command, the flags that
// are not setting flags but default to a setting: the command reads the
// setting when the flag is not given.
func fallbackSettings(command string) map[string]string {
	switch command {
	case "cluster":
		m := make(map[string]string, len(clusterFlagSettings))
		for _, f := range clusterFlagSettings {
			m[f.flag] = f.setting
		}
		return m
	case "crawl":
		return map[string]string{"cluster-eps": config.ClusterEps}
	}
	return nil
}

// showSettingDefaults makes the help of c's flags that default to a
// setting (fallbackSettings) show the setting's default, which is what the
// command uses when neither the flag nor the setting is given.
func showSettingDefaults(c *cli.Command) {
	fallbacks := fallbackSettings(c.Name)
	for _, f := range c.Flags {
		setting, ok := fallbacks[f.Names()[0]]
		if !ok {
			continue
		}
		s, ok := config.Lookup(setting)
		if !ok {
			panic(fmt.Sprintf("trawl: %s --%s: no setting %q", c.Name, f.Names()[0], setting))
		}
		switch f := f.(type) {
		case *cli.IntFlag:
			f.DefaultText = s.Default
		case *cli.Float64Flag:
			f.DefaultText = s.Default
		case *cli.StringFlag:
			f.DefaultText = s.Default
		case *cli.DurationFlag:
			f.DefaultText = s.Default
		default:
			panic(fmt.Sprintf("trawl: %s --%s: cannot show a default", c.Name, f.Names()[0]))
		}
	}
}
