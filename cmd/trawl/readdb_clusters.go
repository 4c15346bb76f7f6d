package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

func readdbClustersCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "clusters",
		Usage: "list the cluster results and the clusters the CrawlDB holds",
		Description: `Lists the crawl's published cluster results (trawl cluster) with their
parameters and counts, says which one the current CrawlDB holds (applied by
updatedb with the dynamic schedule) and, for that result (or --result NAME),
prints each cluster's size, core points, samples and the period the dynamic
schedule last gave its members (the mean observed change period of its
samples; "-" when no sample has one yet).

Examples:
   trawl --crawl ./crawl readdb clusters
   trawl readdb clusters --result 20261121103000 --json | jq '.clusters[0]'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "result", Usage: "show the clusters of result `NAME` (default: the applied one, else the newest)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("readdb clusters: unexpected argument %q", c.Args().First())
			}
			return s.readdbClusters(c)
		}),
	}
}

// clustersReport is what readdb clusters prints.
type clustersReport struct {
	Results  []clusterResultRow    `json:"results"`
	Applied  *jobs.ClustersApplied `json:"applied"`
	Shown    string                `json:"shown"`
	Clusters []clusterRow          `json:"clusters"`
}

type clusterResultRow struct {
	Name   string            `json:"name"`
	Params dbscan.Parameters `json:"params"`
}

type clusterRow struct {
	Label   int32   `json:"label"`
	Size    int64   `json:"size"`
	Core    int64   `json:"core"`
	Samples int64   `json:"samples"`
	Period  *string `json:"period"`
	// PeriodSeconds is the period in seconds (null: none).
	PeriodSeconds *float64 `json:"period_seconds"`
}

func (s *session) readdbClusters(c *cli.Context) error {
	env := jobs.Env{Engine: mapreduce.Engine{Storage: s.resolver}, Crawl: s.crawl()}
	names, err := jobs.ClusterResults(env)
	if err != nil {
		return fmt.Errorf("readdb clusters: %w", err)
	}
	rep := clustersReport{Results: []clusterResultRow{}, Clusters: []clusterRow{}}
	dir := func(name string) string { return storage.Join(jobs.ClustersDir(s.crawl()), name) }
	for _, n := range names {
		ps, err := dbscan.ReadOutput[dbscan.Parameters](s.resolver, storage.Join(dir(n), dbscan.DirParams))
		if err != nil || len(ps) != 1 {
			return fmt.Errorf("readdb clusters: %s: parameters: %v (%d rows)", dir(n), err, len(ps))
		}
		rep.Results = append(rep.Results, clusterResultRow{Name: n, Params: ps[0]})
	}
	applied, ok, err := jobs.ReadClustersApplied(env)
	if err != nil {
		return fmt.Errorf("readdb clusters: %w", err)
	}
	if ok {
		rep.Applied = &applied
	}
	switch show := c.String("result"); {
	case show != "":
		if !slices.Contains(names, show) {
			return withCode(exitNothingToDo, fmt.Errorf("readdb clusters: no published result %q (have %v)", show, names))
		}
		rep.Shown = show
	case ok && applied.Name != "":
		rep.Shown = applied.Name
	case len(names) > 0:
		rep.Shown = names[len(names)-1]
	}
	if rep.Shown != "" {
		centres, err := dbscan.ReadOutput[dbscan.Centre](s.resolver, storage.Join(dir(rep.Shown), dbscan.DirCentres))
		if err != nil {
			return fmt.Errorf("readdb clusters: %w", err)
		}
		samples, err := dbscan.ReadOutput[dbscan.Sample](s.resolver, storage.Join(dir(rep.Shown), dbscan.DirSamples))
		if err != nil {
			return fmt.Errorf("readdb clusters: %w", err)
		}
		nsamples := map[int32]int64{}
		for _, sm := range samples {
			nsamples[sm.Label]++
		}
		var periods crawldb.ClusterPeriods
		if ok && applied.Name == rep.Shown {
			periods = applied.Periods
		}
		for _, ce := range centres {
			row := clusterRow{Label: ce.Label, Size: ce.Size, Core: ce.Core, Samples: nsamples[ce.Label]}
			if p, ok := periods[ce.Label]; ok {
				txt, sec := p.Round(time.Second).String(), p.Seconds()
				row.Period, row.PeriodSeconds = &txt, &sec
			}
			rep.Clusters = append(rep.Clusters, row)
		}
		slices.SortFunc(rep.Clusters, func(a, b clusterRow) int { return int(a.Label) - int(b.Label) })
	}
	return s.writeOutput("", func(w io.Writer) error {
		if c.Bool("json") {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.writeText(w)
	})
}

func (r clustersReport) writeText(w io.Writer) error {
	if len(r.Results) == 0 {
		fmt.Fprintln(w, "no cluster results (run trawl cluster)")
	}
	for _, res := range r.Results {
		p := res.Params
		mark := ""
		if r.Applied != nil && r.Applied.Name == res.Name {
			mark = "\t(applied)"
		}
		fmt.Fprintf(w, "result %s: eps %g minPts %d, %d points, %d clusters, core %d border %d noise %d%s\n",
			res.Name, p.Eps, p.MinPts, p.Points, p.Clusters, p.Core, p.Border, p.Noise, mark)
	}
	if r.Applied != nil {
		a := r.Applied
		if a.Name != "" {
			fmt.Fprintf(w, "applied:\t%s at %s\n", a.Name, a.AppliedAt.Format(time.RFC3339))
		}
		fmt.Fprintf(w, "periods computed:\t%s, %d clusters with a sample period\n", a.PeriodsAt.Format(time.RFC3339), len(a.Periods))
	} else {
		fmt.Fprintln(w, "applied:\tnone (updatedb --schedule dynamic applies the newest result)")
	}
	if r.Shown == "" {
		return nil
	}
	fmt.Fprintf(w, "clusters of %s:\nlabel\tsize\tcore\tsamples\tperiod\n", r.Shown)
	for _, c := range r.Clusters {
		period := "-"
		if c.Period != nil {
			period = *c.Period
		}
		if _, err := fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%s\n", c.Label, c.Size, c.Core, c.Samples, period); err != nil {
			return err
		}
	}
	return nil
}
