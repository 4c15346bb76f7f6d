package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

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

// eachPartParallel runs f on every part of r, at most parallelism at a
// time (engine.parallelism), and returns the first error.
func (s *session) eachPartParallel(ctx context.Context, r *crawldb.Reader, f func(ctx context.Context, part int) error) error {
	n := len(r.Parts())
	workers := s.cfg.Int(config.EngineParallelism)
	if workers <= 0 {
		workers = defaultParallelism()
	}
	workers = min(workers, max(n, 1))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func (s *session) readdbStats(c *cli.Context) error {
	r, uri, err := s.openDB()
	if err != nil {
		return err
	}
	perHost := c.Bool("sort")
	parts := make([]*crawldb.Stats, len(r.Parts()))
	err = s.eachPartParallel(c.Context, r, func(ctx context.Context, i int) error {
		st := crawldb.NewStats(perHost)
		for d, err := range r.Part(ctx, i) {
			if err != nil {
				return err
			}
			st.Add(d)
		}
		parts[i] = st
		return nil
	})
	if err != nil {
		return fmt.Errorf("readdb stats: %w", err)
	}
	total := crawldb.NewStats(perHost)
	for _, st := range parts {
		total.Merge(st)
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
	tops := make([]*crawldb.TopN, len(r.Parts()))
	err = s.eachPartParallel(c.Context, r, func(ctx context.Context, i int) error {
		t := crawldb.NewTopN(n)
		for d, err := range r.Part(ctx, i) {
			if err != nil {
				return err
			}
			t.Add(d.URL, d.Score)
		}
		tops[i] = t
		return nil
	})
	if err != nil {
		return fmt.Errorf("readdb top: %w", err)
	}
	all := crawldb.NewTopN(n)
	for _, t := range tops {
		all.Merge(t)
	}
	return s.writeOutput("", func(w io.Writer) error {
		for _, su := range all.Result() {
			if _, err := fmt.Fprintf(w, "%s\t%s\n", strconv.FormatFloat(float64(su.Score), 'g', -1, 32), su.URL); err != nil {
				return err
			}
		}
		return nil
	})
}
