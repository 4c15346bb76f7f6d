package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/linkeval"
	"github.com/trawl/trawl/simweb"
)

// evalLinkRankCommand is trawl eval linkrank.
func evalLinkRankCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "linkrank",
		Usage: "crawl the synthetic web and compare linkrank's and OPIC's scores with the true PageRank",
		Description: `Serves a synthetic web (trawl simweb, without hazards) in this process, crawls
it with the real jobs for --rounds rounds of --topN pages with OPIC scoring,
then builds the LinkDB (invertlinks) and runs linkrank, and prints Spearman's
rank correlation of each score with the web's true PageRank: over every
CrawlDB URL of the web, and over the fetched pages. The crawl goes to --out
(kept) or to a temporary directory (removed).

Examples:
   trawl eval linkrank
   trawl eval linkrank --hosts 100 --pages 10000 --rounds 5 --topN 1000 --json`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "hosts", Value: 20, Usage: "regular hosts (`N`)"},
			&cli.IntFlag{Name: "pages", Value: 1500, Usage: "content pages (`N`)"},
			&cli.Uint64Flag{Name: "seed", Value: 5, Usage: "`SEED` selecting the web"},
			&cli.IntFlag{Name: "rounds", Value: 4, Usage: "crawl rounds (`N`)"},
			&cli.Int64Flag{Name: "topN", Value: 250, Usage: "fetch list size of each round (`N`; 0: every due URL)"},
			&cli.StringFlag{Name: "out", Usage: "keep the crawl in `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.evalLinkRank(c)
		}),
	}
}

func (s *session) evalLinkRank(c *cli.Context) error {
	web, err := simweb.New(simweb.Config{Seed: c.Uint64("seed"), Hosts: c.Int("hosts"), Pages: c.Int("pages"), Hazards: simweb.HazardsNone})
	if err != nil {
		return usageErrorf("eval linkrank: %w", err)
	}
	dir := c.String("out")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "trawl-eval-linkrank-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("eval linkrank: %w", err)
	}
	// Nothing reads the access log: one entry in memory, not a million.
	srv, err := web.Serve(c.Context, simweb.ServeOptions{DNSAddr: "127.0.0.1:0", AccessLogLimit: 1})
	if err != nil {
		return fmt.Errorf("eval linkrank: %w", err)
	}
	defer srv.Close()
	env, err := s.crawlEnv(c)
	if err != nil {
		return err
	}
	env.Crawl = filepath.Join(dir, "crawl")
	rep, err := linkeval.EvalLinkRank(c.Context, env, srv, linkeval.RankConfig{Rounds: c.Int("rounds"), TopN: c.Int64("topN")})
	if err != nil {
		return fmt.Errorf("eval linkrank: %w", err)
	}
	if c.Bool("json") {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.io.stdout, "%s\n", b)
		return err
	}
	return rep.Markdown(s.io.stdout)
}

// evalFocusCommand is trawl eval focus.
func evalFocusCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "focus",
		Usage: "compare crawl strategies on a topical synthetic web: harvest rate and recall at equal page budgets",
		Description: `Crawls a topical synthetic web (trawl simweb --topics) with each strategy at
the same page budget, in rounds of --batch pages as generate and fetch do, and
reports the focused-crawling paper's two measures after 500, 1000, 1500 and
4000 pages (--checkpoints): the harvest rate (share of the fetched pages on the
topic) and the recall, or resource-discovery rate (share of all the web's
on-topic pages fetched). The fetches are simulated (each page is simweb's
rendering, without HTTP) but the topic is learnt by the real topic model from
the web's sample texts, pages are parsed by trawl's parser, links followed by
the focused parse's rules and ranked with linkrank's formula.

  breadth-first     the URLs found first (Nutch without scoring)
  opic              OPIC cash, Nutch's default scoring
  pagerank          PageRank of the discovered graph (linkrank)
  best-first        the best link relevance RW; links under --link-threshold
                    and off-topic pages' links not followed
  ipagerank         IPageRank (votes split by RW) times RW, with the same
                    filters: the topic crawler of ICT, CAS
  ipagerank-tunnel  ipagerank following off-topic pages' links for up to
                    --tunnel-hops off-topic pages in a row

Examples:
   trawl eval focus
   trawl eval focus --format json > focus.json
   trawl eval focus --pages 20000 --hosts 200 --checkpoints 200,500,1000 --plot focus.png`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "hosts", Value: 1000, Usage: "regular hosts (`N`)"},
			&cli.IntFlag{Name: "pages", Value: 100000, Usage: "content pages (`N`)"},
			&cli.IntFlag{Name: "topics", Value: 6, Usage: "topics of the web (`K`, 2 to 8)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` selecting the web"},
			&cli.IntFlag{Name: "topic", Usage: "the topic crawled (`T`; trawl simweb topic --topics K lists them)"},
			&cli.IntFlag{Name: "seeds", Value: 20, Usage: "seed home pages (`N`, half on the topic)"},
			&cli.IntFlag{Name: "samples", Value: 5, Usage: "sample texts the topic is learnt from (`N`)"},
			&cli.IntFlag{Name: "batch", Value: 100, Usage: "pages fetched a round (`N`)"},
			&cli.StringFlag{Name: "checkpoints", Value: "500,1000,1500,4000", Usage: "page counts reported (`LIST`); the crawl stops at the last"},
			&cli.StringFlag{Name: "strategies", Value: strings.Join(linkeval.Strategies(), ","), Usage: "`LIST` of strategies"},
			&cli.Float64Flag{Name: "link-threshold", Value: jobs.DefaultLinkThreshold, Usage: "least RW of a followed link (`C`)"},
			&cli.Float64Flag{Name: "page-threshold", Value: jobs.DefaultPageThreshold, Usage: "least relevance of an on-topic page (`D`)"},
			&cli.IntFlag{Name: "tunnel-hops", Value: 2, Usage: "ipagerank-tunnel: off-topic pages in a row whose links are followed (`N`)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table or json"},
			&cli.StringFlag{Name: "plot", Usage: "draw harvest and recall against pages fetched into `FILE` (.png or .svg)"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.evalFocus(c)
		}),
	}
}

func (s *session) evalFocus(c *cli.Context) error {
	format := c.String("format")
	if format != "table" && format != "json" {
		return usageErrorf("eval focus: --format must be table or json, not %q", format)
	}
	var checkpoints []int
	for _, f := range strings.Split(c.String("checkpoints"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return usageErrorf("eval focus: --checkpoints: %q is not a positive page count", f)
		}
		checkpoints = append(checkpoints, n)
	}
	cfg := linkeval.FocusConfig{
		Web:   simweb.Config{Seed: c.Uint64("seed"), Hosts: c.Int("hosts"), Pages: c.Int("pages"), Topics: c.Int("topics"), Hazards: simweb.HazardsNone},
		Topic: c.Int("topic"), Seeds: c.Int("seeds"), Samples: c.Int("samples"), Batch: c.Int("batch"),
		Checkpoints: checkpoints, Strategies: strings.Split(c.String("strategies"), ","),
		Focus:      jobs.FocusOptions{LinkThreshold: c.Float64("link-threshold"), PageThreshold: c.Float64("page-threshold")},
		TunnelHops: c.Int("tunnel-hops"),
	}
	rep, err := linkeval.EvalFocus(c.Context, cfg)
	if err != nil {
		return usageErrorf("eval focus: %w", err)
	}
	if plot := c.String("plot"); plot != "" {
		if err := rep.SavePlot(plot); err != nil {
			return err
		}
	}
	if format == "json" {
		return rep.JSON(s.io.stdout)
	}
	return rep.Markdown(s.io.stdout)
}
