package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func invertlinksCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "invertlinks",
		Usage:     "add the links of parsed segments to the LinkDB (crawl/linkdb)",
		ArgsUsage: "[SEGMENT...]",
		Description: `Builds the LinkDB, the inverted link graph, as Nutch's invertlinks does: for
every URL, the pages that link to it and the anchor texts of their links. It
reads the links of each parsed segment (their crawl_parse, so URL filters and
normalization already applied), merges them with the current LinkDB and
installs the result in crawl/linkdb/current, zstd Parquet with one row per link
(to, from, anchor), sorted by (to, from) within each part. A page linking to
another twice is one row, and a newer segment's anchor replaces the stored one,
so inverting a segment again changes nothing.

A SEGMENT is a path or URI, or a segment name under the crawl's segments/
directory; --dir takes every parsed segment of the crawl, --new those not yet
inverted (each inverted segment is marked _inverted). Links within one host
(--ignore-internal-host) or registered domain (--ignore-internal-domain) can
be left out; both are kept by default, unlike Nutch, because trawl linkrank's
PageRank needs every link. trawl crawl --linkdb (setting linkdb.update) runs
this after each round.

The LinkDB is locked while the job runs; a failure or a kill leaves it as it
was.

Examples:
   trawl --crawl ./crawl invertlinks --dir
   trawl --crawl ./crawl invertlinks 20261121103000
   trawl --crawl ./crawl readlinkdb url http://example.com/
   duckdb -c "SELECT \"to\", count(*) n FROM 'crawl/linkdb/current/*.parquet' GROUP BY 1 ORDER BY n DESC LIMIT 10"`,
		Flags: append(settingFlags("ignore-internal-host", "ignore-internal-domain"),
			&cli.BoolFlag{Name: "dir", Usage: "every parsed segment of the crawl"},
			&cli.BoolFlag{Name: "new", Usage: "the parsed segments not yet inverted"},
			forceFlag(),
		),
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.invertlinks(c)
		}),
	}
}

// invertLinksOptions returns invertlinks' options from the settings
// (without Segments).
func (s *session) invertLinksOptions() (jobs.InvertLinksOptions, error) {
	o := jobs.InvertLinksOptions{
		IgnoreInternalHost:   s.cfg.Bool(config.LinkDBIgnoreInternalHost),
		IgnoreInternalDomain: s.cfg.Bool(config.LinkDBIgnoreInternalDomain),
		MaxInlinks:           s.cfg.Int(config.LinkDBMaxInlinks),
		MaxAnchorLength:      s.cfg.Int(config.LinkDBMaxAnchorLength),
	}
	if o.MaxInlinks < 1 || o.MaxAnchorLength < 1 {
		return o, usageErrorf("%s (%d) and %s (%d) must be at least 1", config.LinkDBMaxInlinks, o.MaxInlinks,
			config.LinkDBMaxAnchorLength, o.MaxAnchorLength)
	}
	return o, nil
}

func (s *session) invertlinks(c *cli.Context) error {
	o, err := s.invertLinksOptions()
	if err != nil {
		return err
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	all, fresh := c.Bool("dir"), c.Bool("new")
	switch {
	case (all || fresh) && c.Args().Present(), all && fresh:
		return usageErrorf("invertlinks: give segments, --dir or --new, one of them (see trawl invertlinks --help)")
	case all || fresh:
		if o.Segments, err = jobs.ParsedSegments(env, fresh); err != nil {
			return fmt.Errorf("invertlinks: %w", err)
		}
		if len(o.Segments) == 0 {
			fmt.Fprintln(s.io.stderr, "invertlinks: no parsed segment to invert")
			return withCode(exitNothingToDo, fmt.Errorf("invertlinks: nothing to do"))
		}
	case !c.Args().Present():
		return usageErrorf("invertlinks: no segment given: name segments, or --dir, or --new (see trawl invertlinks --help)")
	}
	for _, a := range c.Args().Slice() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("invertlinks: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	res, err := jobs.InvertLinks(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "segments:\t%d\n", len(o.Segments))
	fmt.Fprintf(w, "links read:\t%d\n", res.LinksRead)
	if res.Internal > 0 {
		fmt.Fprintf(w, "links left out as internal:\t%d\n", res.Internal)
	}
	if res.Dropped > 0 {
		fmt.Fprintf(w, "inlinks over %s:\t%d\n", config.LinkDBMaxInlinks, res.Dropped)
	}
	fmt.Fprintf(w, "LinkDB inlinks:\t%d\n", res.Inlinks)
	_, err = fmt.Fprintf(w, "LinkDB URLs:\t%d\n", res.URLs)
	return err
}
