package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/urlutil"
)

// openDB opens the crawl's CrawlDB for reading (no lock: readers see the
// installed version).
func (s *session) openDB() (*crawldb.Reader, string, error) {
	uri := jobs.CrawlDBDir(s.crawl())
	fsys, p, err := s.resolve(uri)
	if err != nil {
		return nil, "", err
	}
	r, err := crawldb.Open(fsys, p)
	if err != nil {
		return nil, "", err
	}
	return r, uri, nil
}

// parallelism is how many CrawlDB parts a reader reads at once
// (engine.parallelism; 0: the CPUs).
func (s *session) parallelism() int {
	if n := s.cfg.Int(config.EngineParallelism); n > 0 {
		return n
	}
	return defaultParallelism()
}

func (s *session) readdbStats(c *cli.Context) error {
	r, uri, err := s.openDB()
	if err != nil {
		return err
	}
	total, err := r.Stats(c.Context, s.parallelism(), c.Bool("sort"))
	if err != nil {
		return fmt.Errorf("readdb stats: %w", err)
	}
	rep := total.Report()
	return s.writeOutput("", func(w io.Writer) error {
		if c.Bool("json") {
			return rep.WriteJSON(w)
		}
		return rep.WriteText(w, uri)
	})
}

func (s *session) readdbDump(c *cli.Context) error {
	f, err := crawldb.NewDumpFilter(c.String("status"), c.String("regex"), c.Int64("limit"))
	if err != nil {
		return withCode(exitUsage, err)
	}
	r, _, err := s.openDB()
	if err != nil {
		return err
	}
	return s.writeOutput(c.String("output"), func(w io.Writer) error {
		dw, err := crawldb.NewDumpWriter(c.String("format"), w)
		if err != nil {
			return withCode(exitUsage, err)
		}
		n, err := crawldb.Dump(c.Context, r.Sorted(c.Context), f, dw)
		if err != nil {
			return fmt.Errorf("readdb dump: %w", err)
		}
		s.log.Debug("readdb dump done", "rows", n)
		return nil
	})
}

func (s *session) readdbURL(c *cli.Context) error {
	raw := c.Args().First()
	u, err := urlutil.Normalize(raw)
	if err != nil {
		return usageErrorf("readdb url: %w", err)
	}
	r, _, err := s.openDB()
	if err != nil {
		return err
	}
	d, ok, err := r.Get(c.Context, u)
	if err != nil {
		return fmt.Errorf("readdb url: %w", err)
	}
	if !ok {
		return withCode(exitNothingToDo, fmt.Errorf("readdb url: %s is not in the CrawlDB", u))
	}
	b, err := crawldb.MarshalDatumJSON(&d)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.io.stdout, "%s\n", b)
	return err
}

func (s *session) readdbTop(c *cli.Context) error {
	n, err := strconv.Atoi(c.Args().First())
	if err != nil || n < 1 {
		return usageErrorf("readdb top: N must be a positive integer, not %q", c.Args().First())
	}
	r, _, err := s.openDB()
	if err != nil {
		return err
	}
	top, err := r.Top(c.Context, s.parallelism(), n)
	if err != nil {
		return fmt.Errorf("readdb top: %w", err)
	}
	return s.writeOutput("", func(w io.Writer) error {
		for _, su := range top {
			if _, err := fmt.Fprintf(w, "%s\t%s\n", strconv.FormatFloat(float64(su.Score), 'g', -1, 32), su.URL); err != nil {
				return err
			}
		}
		return nil
	})
}
