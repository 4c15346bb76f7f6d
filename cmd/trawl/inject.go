package main

import (
	"github.com/urfave/cli/v2"
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
