package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func linkrankCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "linkrank",
		Usage: "score every CrawlDB URL by PageRank over the LinkDB",
		Description: `Computes PageRank over the crawl's LinkDB as a chain of MapReduce jobs (as
Nutch's LinkRank does over its WebGraph) and writes it into the CrawlDB's
scores, which generate's --topN then takes best first. The graph's nodes are
the CrawlDB's URLs and its edges the LinkDB's links between two of them. Every
URL starts at 1/N; an iteration gives each URL (1-d)/N plus d times the rank
flowing in along its inlinks (each page's rank split evenly over its outlinks)
and its share of the rank of the pages without outlinks (dangling pages, whose
rank is spread over all URLs, so ranks keep summing to 1). Iterations end when
the L1 change of the rank vector falls below --tolerance, or after
--iterations. A URL's score becomes N times its rank, so scores average 1.

With --topic (setting topic.files) it computes IPageRank instead, the
focused crawler's rank: each page's vote is split over its outlinks in
proportion to their relevance to the topic (their anchor text and URL words),
so pages that many on-topic pages point to rank high.

Run trawl invertlinks first. With --scoring linkrank (setting scoring.name),
trawl crawl keeps the LinkDB and runs linkrank after every round, and updatedb
adds no OPIC cash. The CrawlDB and the LinkDB are locked while linkrank runs;
a failure or a kill leaves both as they were.

Examples:
   trawl --crawl ./crawl invertlinks --dir && trawl --crawl ./crawl linkrank
   trawl --crawl ./crawl linkrank --damping 0.9 --iterations 50 --tolerance 1e-8
   trawl --crawl ./crawl readdb top 20`,
		Flags: append(settingFlags("damping", "iterations", "tolerance", "topic"), forceFlag()),
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("linkrank: unexpected argument %q (see trawl linkrank --help)", c.Args().First())
			}
			return s.linkrank(c)
		}),
	}
}

// linkRankOptions returns linkrank's options from the settings, checked.
func (s *session) linkRankOptions() (jobs.LinkRankOptions, error) {
	o := jobs.LinkRankOptions{
		Damping:       s.cfg.Float(config.LinkRankDamping),
		MaxIterations: s.cfg.Int(config.LinkRankMaxIterations),
		Tolerance:     s.cfg.Float(config.LinkRankTolerance),
	}
	if !(o.Damping > 0) || o.MaxIterations < 1 {
		return o, usageErrorf("%s must be in (0, 1) and %s at least 1", config.LinkRankDamping, config.LinkRankMaxIterations)
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("%v", err)
	}
	return o, nil
}

func (s *session) linkrank(c *cli.Context) error {
	o, err := s.linkRankOptions()
	if err != nil {
		return err
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	f, err := s.focusOptions(c)
	if err != nil {
		return err
	}
	o.Topic = f.Topic
	res, err := jobs.LinkRank(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "URLs ranked:\t%d\n", res.Nodes)
	fmt.Fprintf(w, "links between them:\t%d\n", res.Edges)
	if res.Outside > 0 {
		fmt.Fprintf(w, "links to URLs not in the CrawlDB:\t%d\n", res.Outside)
	}
	conv := "converged"
	if !res.Converged {
		conv = "not converged (raise --iterations)"
	}
	_, err = fmt.Fprintf(w, "iterations:\t%d, L1 change %.3g, %s\n", res.Iterations, res.Delta, conv)
	return err
}
