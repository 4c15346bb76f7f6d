package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/jobs"
)

func dedupCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "dedup",
		Usage: "mark duplicate pages in the CrawlDB (db_duplicate)",
		Description: `Marks duplicate pages as Nutch's DeduplicationJob does: among the fetched rows
(db_fetched, db_notmodified) that share a content signature, the one with the
highest score is kept, then the one fetched last, then the shortest URL, then
the first URL in byte order; the others become db_duplicate, every other
column unchanged. Rows without a signature or not fetched are left alone.
--group host or domain looks for duplicates only within one host or
registered domain.

Prints the rows read, the signatures shared by more than one row (groups with
duplicates) and the rows marked. With nothing to mark the CrawlDB is not
rewritten, so a second run changes nothing. The CrawlDB is locked while dedup
runs; a failure or a kill leaves it as it was.

Examples:
   trawl --crawl ./crawl dedup
   trawl --crawl ./crawl dedup --group host
   trawl --crawl ./crawl readdb stats           # db_duplicate counts the marked rows`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "group", Usage: "look for duplicates among all pages (none), or within one host or registered domain"},
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("dedup: unexpected argument %q (see trawl dedup --help)", c.Args().First())
			}
			return s.dedup(c)
		}),
	}
}

func (s *session) dedup(c *cli.Context) error {
	o := jobs.DedupOptions{Group: c.String("group")}
	if err := o.Validate(); err != nil {
		return usageErrorf("%v (see trawl dedup --help)", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	res, err := jobs.Dedup(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "rows read:\t%d\n", res.Rows)
	fmt.Fprintf(w, "groups with duplicates:\t%d\n", res.Groups)
	_, err = fmt.Fprintf(w, "rows marked db_duplicate:\t%d\n", res.Marked)
	return err
}
