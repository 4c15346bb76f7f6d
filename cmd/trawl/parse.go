package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/urlutil"
)

func parseCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "parse a fetched segment's content into outlinks, text and signatures",
		ArgsUsage: "[SEGMENT]",
		Description: `Parses the HTML, plain text and PDFs (--parse-types) of a segment's content and writes parse_data
(title, outlinks with anchors, features, signatures, meta robots), parse_text
(the visible text) and crawl_parse (the CrawlDB updates: a row per page with
its signature, features and the outlinks the CrawlDB learns, each passing on
its OPIC score share). Outlinks
are normalized and filtered (urlfilter.* settings, --scope), at most
--max-outlinks per page. A page that fails to parse is recorded as a failure;
it never stops the job. Without SEGMENT it parses the newest segment that was
fetched but not parsed. The segment is locked while parse runs (a second job
on it exits 4); parse outputs a killed parse published in part are removed
and parsed again.

With --topic (a focused crawl) each page gets its relevance to the topic (the
cosine of its terms, title words boosted, with the topic's) and each outlink
its relevance RW (its anchor text and URL words against the topic): links
under --link-threshold are not followed; pages under --page-threshold are
marked off topic and their links followed only within --max-off-topic-hops
off-topic pages in a row (a seed's links always). The ratings reach the
CrawlDB's relevance, link_relevance, off_topic and off_topic_hops columns.

Examples:
   trawl --crawl ./crawl parse
   trawl parse 20261121103000 --max-outlinks 200 --signature text-profile
   trawl parse --scope host --ignore-external-links
   trawl parse --topic astronomy.txt --page-threshold 0.2 --max-off-topic-hops 1`,
		Flags:  append(parseFlags(), focusFlags()...),
		Action: action(sio, (*session).parse),
	}
}

// parse runs the parse command.
func (s *session) parse(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("parse: give at most one segment, got %d", c.NArg())
	}
	o, err := s.parseOptions()
	if err != nil {
		return err
	}
	seg, err := s.stageSegment(c, "parse", needsParse)
	if err != nil {
		return err
	}
	o.Segment = seg
	if o.Focus, err = s.focusOptions(c); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("parse: %w", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	res, err := jobs.Parse(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	s.log.Info("parse done", "segment", seg, "parsed", res.Parsed, "failed", res.Failed,
		"outlinks", res.Outlinks, "duration", res.Duration.Round(time.Millisecond))
	return nil
}

// parseOptions returns the parse job's options from the settings (without
// Segment). The setting parser.maxOutlinks is at least 1, or -1 for no
// cap (ParseOptions.AllOutlinks).
func (s *session) parseOptions() (jobs.ParseOptions, error) {
	cfg := s.cfg
	filters, err := s.filters()
	if err != nil {
		return jobs.ParseOptions{}, err
	}
	scope, err := urlutil.ParseScope(cfg.String(config.URLFilterScope))
	if err != nil {
		return jobs.ParseOptions{}, usageErrorf("%s: %w", config.URLFilterScope, err)
	}
	o := jobs.ParseOptions{
		Filters:             filters,
		Scope:               scope,
		Signature:           cfg.String(config.ParserSignature),
		IgnoreInternalLinks: cfg.Bool(config.ParserIgnoreInternalLinks),
		IgnoreExternalLinks: cfg.Bool(config.ParserIgnoreExternalLinks),
		EmbeddedLinks:       cfg.Bool(config.ParserEmbeddedLinks),
		ParseTruncated:      !cfg.Bool(config.ParserSkipTruncated),
		Types:               cfg.List(config.ParserTypes),
	}
	if len(o.Types) == 0 {
		return o, usageErrorf("%s is empty: give at least one of %s", config.ParserTypes, strings.Join(parser.Types(), ", "))
	}
	if err := parser.CheckTypes(o.Types); err != nil {
		return o, usageErrorf("%s: %w", config.ParserTypes, err)
	}
	switch n := cfg.Int(config.ParserMaxOutlinks); {
	case n == -1:
		o.AllOutlinks = true
	case n >= 1:
		o.MaxOutlinks = n
	default:
		return o, usageErrorf("%s must be at least 1, or -1 (no limit), not %d", config.ParserMaxOutlinks, n)
	}
	return o, nil
}
