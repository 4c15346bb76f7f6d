package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
)

// clusterFlagSettings ties trawl cluster's flags to the cluster.* settings:
// a flag given on the command line wins over the setting.
var clusterFlagSettings = [...]struct{ flag, setting string }{
	{"eps", config.ClusterEps},
	{"min-pts", config.ClusterMinPts},
	{"sample-rate", config.ClusterSampleRate},
	{"min-samples", config.ClusterMinSamples},
	{"max-changes", config.ClusterMaxChanges},
	{"partitions", config.ClusterPartitions},
}

func clusterCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "cluster",
		Usage: "cluster the CrawlDB's young pages with DBSCAN, for the dynamic schedule",
		Description: `Runs the partitioned DBSCAN (MapReduce jobs on the engine) over the CrawlDB's
young pages: fetched pages with at most --max-changes observed changes. Their
features (non-markup words, outlinks, inlinks, images, URL depth, bytes; log1p
of all but depth) are standardized to z-scores, clustered with --eps and
--min-pts (which counts the point itself), and each cluster's centre and
samples (its max(K, ceil(R*size)) members nearest the centre) are computed.
The result is published with one rename as crawl/clusters/<yyyyMMddHHmmss>/
(assignment/, centres/, samples/, params/); a failed run publishes nothing.
updatedb with --schedule dynamic applies the newest result: samples are then
revisited adaptively, and their clusters' mean change periods become the other
members' intervals.

The CrawlDB is locked while cluster reads it (it writes nothing there).
--suggest-eps prints the knee of the young pages' k-distance curve for
--min-pts (a value to start from) and exits. Flags default to the cluster.*
settings.

Examples:
   trawl --crawl ./crawl cluster --suggest-eps --min-pts 8
   trawl --crawl ./crawl cluster --eps 0.4 --min-pts 8
   trawl cluster --eps 0.4 --min-pts 8 --sample-rate 0.1 --min-samples 5 --partitions 8
   trawl updatedb --schedule dynamic 20261121103000`,
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "eps", Usage: "DBSCAN radius `E` on the standardized features (cluster.eps; required: 0 is none)"},
			&cli.IntFlag{Name: "min-pts", Usage: "points within eps, itself included, that make a core point (cluster.minPts)"},
			&cli.Float64Flag{Name: "sample-rate", Usage: "share `R` of a cluster's members taken as samples (cluster.sampleRate)"},
			&cli.IntFlag{Name: "min-samples", Usage: "least samples `K` per cluster (cluster.minSamples)"},
			&cli.IntFlag{Name: "max-changes", Usage: "cluster pages with at most `M` observed changes; -1: all (cluster.maxChanges)"},
			&cli.IntFlag{Name: "partitions", Usage: "boxes of the partitioned DBSCAN; 0: enough for --memory, at least the CPUs (cluster.partitions)"},
			&cli.BoolFlag{Name: "suggest-eps", Usage: "print the k-distance knee for --min-pts and exit"},
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("cluster: unexpected argument %q (see trawl cluster --help)", c.Args().First())
			}
			return s.cluster(c)
		}),
	}
}

// clusterSetting returns a cluster.* value: the flag's if given, else the
// setting's.
func clusterSetting[T any](c *cli.Context, flag string, fromFlag func(string) T, fromSetting func(string) T) T {
	for _, m := range clusterFlagSettings {
		if m.flag == flag {
			if c.IsSet(flag) {
				return fromFlag(flag)
			}
			return fromSetting(m.setting)
		}
	}
	panic("trawl: no setting for --" + flag)
}

// clusterOptions returns Cluster's options from the flags and settings,
// checked (but for Eps, which trawl cluster --suggest-eps does without;
// see countSetting for --max-changes).
func (s *session) clusterOptions(c *cli.Context) (jobs.ClusterOptions, error) {
	o := jobs.ClusterOptions{
		Eps:        clusterSetting(c, "eps", c.Float64, s.cfg.Float),
		MinPts:     clusterSetting(c, "min-pts", c.Int, s.cfg.Int),
		SampleRate: clusterSetting(c, "sample-rate", c.Float64, s.cfg.Float),
		MinSamples: clusterSetting(c, "min-samples", c.Int, s.cfg.Int),
		Partitions: clusterSetting(c, "partitions", c.Int, s.cfg.Int),
	}
	var err error
	maxChanges := clusterSetting(c, "max-changes", c.Int, s.cfg.Int)
	if o.MaxChanges, o.AnyChanges, err = countSetting("cluster: --max-changes ("+config.ClusterMaxChanges+")", maxChanges, true); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("cluster: %w (%s)", err, clusterFlagsHelp())
	}
	return o, nil
}

// clusterFlagsHelp names the flags and settings of the cluster options.
func clusterFlagsHelp() string {
	var b strings.Builder
	b.WriteString("set by ")
	for i, m := range clusterFlagSettings {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "--%s or %s", m.flag, m.setting)
	}
	return b.String()
}

func (s *session) cluster(c *cli.Context) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.clusterOptions(c)
	if err != nil {
		return err
	}
	if c.Bool("suggest-eps") {
		return s.suggestEps(c, env, o)
	}
	if !(o.Eps > 0) {
		return usageErrorf("cluster: --eps (%s) is required and must be positive (trawl cluster --suggest-eps proposes one)", config.ClusterEps)
	}
	res, err := jobs.Cluster(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	printClusterResult(s.io.stdout, res)
	return nil
}

// suggestEps is trawl cluster --suggest-eps.
func (s *session) suggestEps(c *cli.Context, env jobs.Env, o jobs.ClusterOptions) error {
	if o.MinPts < 2 {
		return usageErrorf("cluster: --suggest-eps needs --min-pts of at least 2, not %d", o.MinPts)
	}
	eps, n, err := jobs.SuggestClusterEps(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	fmt.Fprintf(s.io.stdout, "suggested eps:\t%.4g\t(knee of the %d-distance curve of %d young pages, standardized)\n", eps, o.MinPts-1, n)
	return nil
}

// printClusterResult prints a Cluster run's summary.
func printClusterResult(w io.Writer, res *jobs.ClusterResult) {
	p := res.Params
	fmt.Fprintf(w, "cluster result:\t%s\n", res.Dir)
	mc := fmt.Sprint(p.MaxChanges)
	if p.MaxChanges < 0 {
		mc = "any"
	}
	fmt.Fprintf(w, "points:\t%d\t(young pages: change count <= %s)\n", p.Points, mc)
	fmt.Fprintf(w, "eps, minPts:\t%g, %d\t(%d partitions, %d halo copies)\n", p.Eps, p.MinPts, p.Boxes, p.HaloPoints)
	fmt.Fprintf(w, "clusters:\t%d\n", p.Clusters)
	fmt.Fprintf(w, "core, border, noise:\t%d, %d, %d\n", p.Core, p.Border, p.Noise)
	fmt.Fprintf(w, "samples:\t%d\t(K %d, R %g)\n", res.Samples, p.MinSamples, p.SampleRate)
	fmt.Fprintf(w, "time:\t%s\n", res.Duration.Round(time.Millisecond))
}

// dynamicConfig returns the dynamic schedule's configuration from the
// schedule.dynamic.* settings.
func (s *session) dynamicConfig() crawldb.DynamicConfig {
	cfg := s.cfg
	return crawldb.DynamicConfig{
		MaxChanges: cfg.Int(config.DynamicMaxChanges),
		Kinds: [crawldb.NumKinds]crawldb.KindIntervals{
			crawldb.KindHome: {Initial: cfg.Duration(config.DynamicHomeInitial),
				Min: cfg.Duration(config.DynamicHomeMin), Max: cfg.Duration(config.DynamicHomeMax)},
			crawldb.KindDirectory: {Initial: cfg.Duration(config.DynamicDirectoryInitial),
				Min: cfg.Duration(config.DynamicDirectoryMin), Max: cfg.Duration(config.DynamicDirectoryMax)},
			crawldb.KindOther: {Initial: cfg.Duration(config.DynamicOtherInitial),
				Min: cfg.Duration(config.DynamicOtherMin), Max: cfg.Duration(config.DynamicOtherMax)},
		},
		PoissonScale:    cfg.Float(config.DynamicPoissonScale),
		OptimalMu:       cfg.Float(config.DynamicOptimalMu),
		UnchangedFactor: cfg.Float(config.DynamicUnchangedFactor),
		Rank:            cfg.String(config.DynamicRank),
	}
}

// estimateConfig returns the estimating schedule's configuration from the
// schedule.estimate.* settings.
func (s *session) estimateConfig() crawldb.EstimateConfig {
	cfg := s.cfg
	return crawldb.EstimateConfig{
		FetchesPerDay:   cfg.Float(config.EstimateFetchesPerDay),
		BudgetShare:     cfg.Float(config.EstimateBudgetShare),
		PlanDays:        cfg.Float(config.EstimatePlanDays),
		ExploreFetches:  cfg.Int(config.EstimateExploreFetches),
		ExploreInterval: cfg.Duration(config.EstimateExploreInterval),
		Fill:            cfg.Duration(config.EstimateFill),
		Slack:           cfg.Duration(config.EstimateSlack),
		SampleSize:      cfg.Int(config.EstimateSampleSize),
	}
}
