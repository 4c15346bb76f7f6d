package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

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
	srv, err := web.Serve(c.Context, simweb.ServeOptions{DNSAddr: "127.0.0.1:0"})
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
