package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func updatedbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "updatedb",
		Usage:     "merge fetched and parsed segments into the CrawlDB",
		ArgsUsage: "SEGMENT...",
		Description: `Merges each segment's crawl_fetch (required) and crawl_parse (if parsing ran)
into the CrawlDB with Nutch's CrawlDbReducer rules: fetch results set the new
status, retries and next fetch time through the fetch schedule (schedule.*
settings), signatures detect changed pages, outlinks add new URLs (unless
--no-additions) and pass OPIC score. A SEGMENT is a path or URI, or a segment
name under the crawl's segments/ directory. Merged segments are marked
_updated, which releases their URLs for the next generate. A segment already
merged is skipped (merging it twice would count its fetches and links twice);
if every segment given is, updatedb exits 1 (nothing to do) and --remerge
merges them again on purpose.

The CrawlDB and the segments are locked while updatedb runs; a failure or a
kill leaves the CrawlDB as it was, and a kill after the new CrawlDB is
installed is completed by the next job (the segments are marked merged).

Examples:
   trawl --crawl ./crawl updatedb ./crawl/segments/20261121103000
   trawl --crawl ./crawl updatedb 20261121103000 20261122103000
   trawl updatedb --no-additions 20261121103000   # update known URLs only
   trawl updatedb --force 20261121103000          # on HDFS, after a crashed job left a stale lock`,
		Flags: []cli.Flag{
			settingFlag("no-additions"),
			settingFlag("purge-gone"),
			settingFlag("schedule"),
			settingFlag("scoring"),
			&cli.BoolFlag{Name: "remerge", Usage: "allow segments already merged (their links' OPIC cash then counts twice)"},
			nowFlagDef("URLs new from links are due from"),
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if !c.Args().Present() {
				return usageErrorf("updatedb: no segment given (see trawl updatedb --help)")
			}
			return s.updatedb(c)
		}),
	}
}

// countSetting maps an integer setting that has an explicit default, and
// possibly -1 for "no limit" (when noLimitOK), to an option whose zero
// value means the package's default and whose "no limit" is a flag of its
// own: it returns the count and whether there is no limit. A 0 is
// rejected, as the option would take it for the default; other values go
// to the options' Validate.
func countSetting(name string, v int, noLimitOK bool) (n int, noLimit bool, err error) {
	switch {
	case v == 0 && noLimitOK:
		return 0, false, usageErrorf("%s must be at least 1, or -1 for no limit, not 0", name)
	case v == 0:
		return 0, false, usageErrorf("%s must be at least 1, not 0", name)
	case v == -1 && noLimitOK:
		return 0, true, nil
	}
	return v, false, nil
}

func (s *session) updatedb(c *cli.Context) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.updateOptions()
	if err != nil {
		return err
	}
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	for _, a := range c.Args().Slice() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("updatedb: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	o.Remerge = c.Bool("remerge")
	if err := o.Validate(); err != nil {
		return usageErrorf("updatedb: %w", err)
	}
	_, err = jobs.UpdateDB(c.Context, env, o)
	return jobError(err)
}

// updateOptions returns updatedb's options from the settings (without
// Segments, Now and Remerge), checked (see countSetting).
func (s *session) updateOptions() (jobs.UpdateOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.UpdateOptions{}, err
	}
	o := jobs.UpdateOptions{
		NoAdditions: !s.cfg.Bool(config.UpdateAdditions),
		PurgeGone:   s.cfg.Bool(config.UpdatePurgeGone),
		Schedule:    sched,
		Scoring:     s.cfg.String(config.ScoringName),
	}
	if o.RetryMax, _, err = countSetting(config.UpdateRetryMax, s.cfg.Int(config.UpdateRetryMax), false); err != nil {
		return o, err
	}
	if o.MaxInlinks, o.NoInlinkLimit, err = countSetting(config.UpdateMaxInlinks, s.cfg.Int(config.UpdateMaxInlinks), true); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("updatedb settings (%s, %s): %w", config.UpdateRetryMax, config.UpdateMaxInlinks, err)
	}
	return o, nil
}
