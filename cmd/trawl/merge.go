package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/jobs"
)

// mergeForceFlag is --force of mergedb and mergesegs: it replaces an
// existing output CrawlDB (mergedb) and, as everywhere, breaks a stale
// lock on a file system without OS locks.
func mergeForceFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: what + "; on file systems without OS locks (HDFS), also break a stale lock (its holder died, or it is older than lock.maxAge)"}
}

func mergedbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "mergedb",
		Usage:     "merge CrawlDBs into a new one (Nutch's CrawlDbMerger)",
		ArgsUsage: "OUT_CRAWLDB CRAWLDB...",
		Description: `Merges the current versions of the CrawlDB directories CRAWLDB... into the
CrawlDB OUT_CRAWLDB, one row per URL, by Nutch's CrawlDbMerger rule: the row
with the latest last fetch time wins (the next fetch time minus the interval;
never for a db_unfetched row), and on a tie the row of the CrawlDB named
first. Metadata are merged, the newer row's entries over the older's. The
winner's other columns, trawl's own included (change history, counts,
features, score, cluster id), are taken whole; the cluster ids of different
CrawlDBs come from different clusterings, so run trawl cluster again before
relying on them.

Each input is locked while it is read (no updatedb runs beside it) and only
read. The merge is written beside OUT_CRAWLDB/current and installed with one
rename under OUT_CRAWLDB's lock: a failure or a kill leaves no CrawlDB at
OUT_CRAWLDB, or its previous version. An OUT_CRAWLDB that holds a CrawlDB is
refused unless --force, which makes the merge its new version. --filter drops
the URLs the urlfilter.* settings reject (Nutch's -filter).

Examples:
   trawl mergedb merged/crawldb crawlA/crawldb crawlB/crawldb
   TRAWL_URLFILTER_REGEX_FILES=rules.txt trawl mergedb --filter clean/crawldb crawl/crawldb
   trawl --crawl merged readdb stats
   trawl mergedb --force merged/crawldb crawlA/crawldb crawlC/crawldb   # replace merged/crawldb`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "filter", Usage: "drop the URLs the URL filters (urlfilter.* settings) reject"},
			mergeForceFlag("replace the CrawlDB at OUT_CRAWLDB"),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.mergedb(c)
		}),
	}
}

func (s *session) mergedb(c *cli.Context) error {
	if c.NArg() < 2 {
		return usageErrorf("mergedb: give the output CrawlDB and at least one input (see trawl mergedb --help)")
	}
	o := jobs.MergeDBOptions{Out: c.Args().First(), CrawlDBs: c.Args().Tail(), Replace: c.Bool("force")}
	if c.Bool("filter") {
		f, err := s.filters()
		if err != nil {
			return err
		}
		o.Filters = f
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	res, err := jobs.MergeDB(c.Context, env, o)
	if errors.Is(err, jobs.ErrOutputExists) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "CrawlDBs merged:\t%d\n", len(o.CrawlDBs))
	fmt.Fprintf(w, "rows read:\t%d\n", res.Read)
	if res.Filtered > 0 {
		fmt.Fprintf(w, "rows filtered:\t%d\n", res.Filtered)
	}
	fmt.Fprintf(w, "URLs:\t%d\n", res.URLs)
	_, err = fmt.Fprintf(w, "CrawlDB:\t%s\n", res.CrawlDB)
	return err
}

func mergesegsCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "mergesegs",
		Usage:     "merge segments into a new one, or new ones of at most N URLs (Nutch's SegmentMerger)",
		ArgsUsage: "OUT_DIR [SEGMENT...]",
		Description: `Merges segments into a new segment in OUT_DIR (created if missing; it may be
the crawl's segments directory), or into several with --slice N, each of at
most N URLs. A SEGMENT is a path or URI, or a segment name under the crawl's
segments/ directory; --dir DIR takes every segment in DIR (Nutch's -dir).

For each URL every part (crawl_generate, crawl_fetch, content, parse_data,
parse_text, crawl_parse: links travel with the page they were found on) comes
from one segment, so a page's content and its parse always belong together:
the newest segment (by name) whose crawl_fetch has a fetch of the page that
Nutch's SegmentMerger keeps (success, redirect, gone, robots denied; not a
retry, a 304, or a URL skipped), or else the newest holding the URL at all.
A part is merged only if every input holds it, as Nutch does. The new
segments are named by the time of the merge and marked _updated when every
input was merged into a CrawlDB (then updatedb skips them unless --remerge),
and _inverted when every input was inverted. --filter drops the URLs the
urlfilter.* settings reject, and the links to them.

The inputs are locked while they are read, and left as they were. The merge
is built in OUT_DIR/_merging-*, checked (every row read was written, or left
out as older or filtered), and renamed into OUT_DIR, each new segment whole.
A failure or a kill before the renames leaves no new segment; a kill during
them (with --slice) is finished by the next mergesegs into OUT_DIR, and a
rerun of the same command then reports the finished merge instead of
merging again.

Examples:
   trawl --crawl ./crawl mergesegs ./merged --dir ./crawl/segments
   trawl --crawl ./crawl mergesegs ./merged 20261121103000 20261122103000
   trawl --crawl ./crawl mergesegs --slice 50000 ./merged --dir ./crawl/segments
   trawl --crawl ./crawl readseg list ./merged/*`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "merge every segment in `DIR`"},
			&cli.Int64Flag{Name: "slice", Usage: "at most `N` URLs per output segment (0: one segment)"},
			&cli.BoolFlag{Name: "filter", Usage: "drop the URLs the URL filters (urlfilter.* settings) reject, and links to them"},
			nowFlagDef("names the new segments"),
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.mergesegs(c)
		}),
	}
}

func (s *session) mergesegs(c *cli.Context) error {
	if !c.Args().Present() {
		return usageErrorf("mergesegs: give the output directory and segments, or --dir (see trawl mergesegs --help)")
	}
	o := jobs.MergeSegmentsOptions{OutDir: c.Args().First(), Slice: c.Int64("slice")}
	var err error
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	for _, a := range c.Args().Tail() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("mergesegs: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	if dir := c.String("dir"); dir != "" {
		segs, err := s.segmentsIn(dir)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("mergesegs: %w", err))
		}
		o.Segments = append(o.Segments, segs...)
	}
	if len(o.Segments) == 0 {
		return usageErrorf("mergesegs: no segment to merge")
	}
	if c.Bool("filter") {
		if o.Filters, err = s.filters(); err != nil {
			return err
		}
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	res, err := jobs.MergeSegments(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "segments merged:\t%d\n", len(o.Segments))
	fmt.Fprintf(w, "parts:\t%s\n", strings.Join(res.Parts, ","))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "parts left out (not in every segment):\t%s\n", strings.Join(res.Skipped, ","))
	}
	for _, p := range res.Parts {
		fmt.Fprintf(w, "%s rows:\t%d read, %d written, %d older, %d filtered\n", p, res.RowsIn[p], res.RowsOut[p], res.RowsOlder[p], res.RowsFiltered[p])
	}
	if res.LinksFiltered > 0 {
		fmt.Fprintf(w, "crawl_parse links filtered:\t%d\n", res.LinksFiltered)
	}
	for i, seg := range res.Segments {
		fmt.Fprintf(w, "new segment:\t%s\t%d URLs\n", seg, res.URLs[i])
	}
	return nil
}

// segmentsIn lists the segments in the directory dir (a path or URI):
// its subdirectories but those whose names start with "_" or ".".
func (s *session) segmentsIn(dir string) ([]string, error) {
	fsys, p, err := s.resolve(dir)
	if err != nil {
		return nil, err
	}
	infos, err := fsys.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, fi := range infos {
		name := fi.Name()
		if !fi.IsDir() || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		out = append(out, strings.TrimRight(dir, "/")+"/"+name)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no segment in %s", dir)
	}
	return out, nil
}
