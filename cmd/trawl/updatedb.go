package main

import (
	"github.com/urfave/cli/v2"
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
