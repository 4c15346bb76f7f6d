package main

import (
	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func injectCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "inject",
		Usage:     "add seed URLs to the CrawlDB",
		ArgsUsage: "SEEDS...",
		Description: `Reads seed files (paths or URIs; a directory means every file in it) with one
URL per line, optionally followed by TAB-separated key=value fields:
score=F, fetchInterval=SECONDS, fixedInterval=SECONDS (an interval the schedule
keeps), anything else is kept as metadata. Blank lines and lines starting with
# are skipped. URLs are normalized and filtered (urlfilter.* settings); bad
lines are reported with file:line and skipped.

A URL already in the CrawlDB is kept as it is, unless --overwrite (replace it
with the injected datum) or --update (take the seed's score, interval and
metadata). The first inject creates the CrawlDB. The CrawlDB is locked while
inject runs; a failure leaves it as it was.

Examples:
   trawl --crawl ./crawl inject seeds.txt
   trawl --crawl ./crawl inject seeds/                # every file in the directory
   trawl inject --update --crawl ./crawl priorities.txt
   printf 'https://example.com/\tscore=2\tfetchInterval=3600\n' > s.txt && trawl inject s.txt`,
		Flags: []cli.Flag{
			settingFlag("overwrite"),
			settingFlag("update"),
			settingFlag("schedule"),
			nowFlagDef("new URLs are due from"),
			forceFlag(),
		},
		Action: action(sio, (*session).inject),
	}
}

// nowFlagDef is --now of the commands that take a time.
func nowFlagDef(what string) cli.Flag {
	return &cli.StringFlag{Name: "now", Usage: "the time " + what + ": `TIME` as RFC 3339, a date, or +Nd/+Nh from the wall clock (default: now)"}
}

// forceFlag is --force of the commands that lock the CrawlDB.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "on file systems without OS locks (HDFS): break a stale CrawlDB or segment lock (its holder died, or it is older than lock.maxAge); on a local disk a dead holder's lock is free anyway"}
}

// inject runs the inject command on the seed files its arguments name.
func (s *session) inject(c *cli.Context) error {
	o, err := s.injectOptions()
	if err != nil {
		return err
	}
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	o.Seeds = c.Args().Slice()
	if err := o.Validate(); err != nil {
		return usageErrorf("inject: %w (see trawl inject --help)", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	_, err = jobs.Inject(c.Context, env, o)
	return jobError(err)
}

// injectOptions returns inject's options from the settings (without Seeds
// and Now). The setting inject.score must be positive (InjectOptions.Score
// 0 would mean the default); inject.maxReportedLines below 1 means 1.
func (s *session) injectOptions() (jobs.InjectOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.InjectOptions{}, err
	}
	filters, err := s.filters()
	if err != nil {
		return jobs.InjectOptions{}, err
	}
	score := s.cfg.Float(config.InjectScore)
	if !(score > 0) {
		return jobs.InjectOptions{}, usageErrorf("%s must be > 0, not %g", config.InjectScore, score)
	}
	return jobs.InjectOptions{
		Overwrite:        s.cfg.Bool(config.InjectOverwrite),
		Update:           s.cfg.Bool(config.InjectUpdate),
		Score:            float32(score),
		Schedule:         sched,
		Filters:          filters,
		MaxReportedLines: max(1, s.cfg.Int(config.InjectMaxReportedLines)),
	}, nil
}
