package main

import (
	"bufio"
	"encoding/csv"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/internal/jsonrec"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/urlutil"
)

func readlinkdbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "readlinkdb",
		Usage: "read the LinkDB: one URL's inlinks and anchors, stats, dump",
		Description: `Reads the LinkDB (crawl/linkdb/current, written by trawl invertlinks) without
locking it, as Nutch's readlinkdb does.

Examples:
   trawl --crawl ./crawl readlinkdb url http://example.com/
   trawl readlinkdb stats --top 20
   trawl readlinkdb dump --format csv --limit 100`,
		Subcommands: []*cli.Command{
			{
				Name:      "url",
				Usage:     "the links to one URL, and its most frequent anchor texts",
				ArgsUsage: "URL",
				Description: `Prints each link to URL (the linking page and its anchor text), then the most
frequent anchor texts. Exits 1 when URL has no inlinks in the LinkDB.

Examples:
   trawl --crawl ./crawl readlinkdb url http://example.com/
   trawl readlinkdb url --anchors 3 http://example.com/about.html`,
				Flags: []cli.Flag{&cli.IntFlag{Name: "anchors", Value: 10, Usage: "show the `N` most frequent anchors"}},
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("readlinkdb url: give one URL (see trawl readlinkdb url --help)")
					}
					return s.readlinkdbURL(c)
				}),
			},
			{
				Name:  "stats",
				Usage: "links, linked URLs, and the URLs with the most inlinks",
				Description: `Counts the LinkDB's links and the URLs they point to, and lists the URLs with
the most inlinks.

Examples:
   trawl --crawl ./crawl readlinkdb stats
   trawl readlinkdb stats --top 50`,
				Flags: []cli.Flag{&cli.IntFlag{Name: "top", Value: 10, Usage: "list the `N` URLs with the most inlinks"}},
				Action: action(sio, func(s *session, c *cli.Context) error {
					return s.readlinkdbStats(c)
				}),
			},
			{
				Name:  "dump",
				Usage: "write LinkDB rows (to, from, anchor) as CSV or JSON lines",
				Description: `Writes the LinkDB's rows, part by part (each sorted by to, then from), as CSV
with a header row or as one JSON object per line.

Examples:
   trawl --crawl ./crawl readlinkdb dump > linkdb.csv
   trawl readlinkdb dump --format json --limit 100`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "csv", Usage: "output `FORMAT`: csv or json (one object per line)"},
					&cli.Int64Flag{Name: "limit", Usage: "write at most `N` rows (0: all)"},
				},
				Action: action(sio, func(s *session, c *cli.Context) error {
					return s.readlinkdbDump(c)
				}),
			},
		},
	}
}

func (s *session) openLinkDB() (*linkdb.Reader, error) {
	fsys, p, err := s.resolve(jobs.LinkDBDir(s.crawl()))
	if err != nil {
		return nil, err
	}
	return linkdb.Open(fsys, p)
}

func (s *session) readlinkdbURL(c *cli.Context) error {
	u, err := urlutil.Normalize(c.Args().First())
	if err != nil {
		return usageErrorf("readlinkdb url: %w", err)
	}
	r, err := s.openLinkDB()
	if err != nil {
		return err
	}
	links, err := r.Inlinks(c.Context, u)
	if err != nil {
		return fmt.Errorf("readlinkdb url: %w", err)
	}
	if len(links) == 0 {
		return withCode(exitNothingToDo, fmt.Errorf("readlinkdb url: %s has no inlinks in the LinkDB", u))
	}
	w := bufio.NewWriter(s.io.stdout)
	fmt.Fprintf(w, "%s\t%d inlinks\n", u, len(links))
	for _, l := range links {
		fmt.Fprintf(w, " fromUrl: %s anchor: %s\n", l.From, l.Anchor)
	}
	if top := linkdb.TopAnchors(links, c.Int("anchors")); len(top) > 0 {
		fmt.Fprintln(w, "top anchors:")
		for _, a := range top {
			fmt.Fprintf(w, " %d\t%s\n", a.Count, a.Anchor)
		}
	}
	return w.Flush()
}

func (s *session) readlinkdbStats(c *cli.Context) error {
	r, err := s.openLinkDB()
	if err != nil {
		return err
	}
	st, err := r.Stats(c.Context, c.Int("top"))
	if err != nil {
		return fmt.Errorf("readlinkdb stats: %w", err)
	}
	w := bufio.NewWriter(s.io.stdout)
	fmt.Fprintf(w, "inlinks:\t%d\n", st.Links)
	fmt.Fprintf(w, "linked URLs:\t%d\n", st.URLs)
	if len(st.Top) > 0 {
		fmt.Fprintln(w, "most inlinks:")
		for _, t := range st.Top {
			fmt.Fprintf(w, " %d\t%s\n", t.Count, t.URL)
		}
	}
	return w.Flush()
}

func (s *session) readlinkdbDump(c *cli.Context) error {
	format, limit := c.String("format"), c.Int64("limit")
	if format != "csv" && format != "json" {
		return usageErrorf("readlinkdb dump: --format must be csv or json, not %q", format)
	}
	r, err := s.openLinkDB()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(s.io.stdout)
	cw := csv.NewWriter(w)
	enc := jsonrec.New[linkdb.Inlink](jsonrec.Options{})
	if format == "csv" {
		cw.Write([]string{"to", "from", "anchor"})
	}
	var n int64
	var buf []byte
	for l, err := range r.All(c.Context) {
		if err != nil {
			return fmt.Errorf("readlinkdb dump: %w", err)
		}
		if limit > 0 && n == limit {
			break
		}
		n++
		if format == "csv" {
			cw.Write([]string{l.To, l.From, l.Anchor})
			continue
		}
		buf = append(enc.Append(buf[:0], &l), '\n')
		w.Write(buf)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return w.Flush()
}
