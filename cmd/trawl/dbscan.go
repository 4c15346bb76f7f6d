package main

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/storage"
)

func dbscanCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "dbscan",
		Usage: "cluster points from a CSV or Parquet file with DBSCAN, for offline experiments",
		Description: `Runs exact DBSCAN on the points of --input and writes one label per input row,
in input order, to --output: a CSV file with the header "label", -1 for noise.
Clusters are numbered 0, 1, ... in the order of their first core point, as
scikit-learn numbers them.

A CSV input has a header row and one numeric column per feature; a Parquet
input (a file or a directory of part files) has numeric columns. --columns
selects and orders the columns by name (default: all). The values are used as
given; --standardize first turns each column into z-scores (x - mean) / std.
--min-pts counts the point itself, as the DBSCAN paper and scikit-learn's
min_samples do. --output - writes to stdout; a file is written whole or not
at all.

Examples:
   trawl dbscan --input points.csv --eps 0.5 --min-pts 5 --output labels.csv
   trawl dbscan --input features.parquet --columns words,outlinks --standardize --eps 0.3 --min-pts 10 --output -`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "points `FILE`: .csv, or Parquet file or directory (required)"},
			&cli.Float64Flag{Name: "eps", Usage: "neighbourhood radius `E` (required)"},
			&cli.IntFlag{Name: "min-pts", Usage: "points within eps, the point itself included, that make a core point `M` (required)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "labels CSV `FILE`, or - for stdout (required)"},
			&cli.BoolFlag{Name: "standardize", Usage: "z-score each column before clustering"},
			&cli.StringFlag{Name: "columns", Usage: "comma-separated `NAMES` of the columns to use, in this order (default: all)"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("dbscan: unexpected argument %q (see trawl dbscan --help)", c.Args().First())
			}
			for _, f := range []string{"input", "eps", "min-pts", "output"} {
				if !c.IsSet(f) {
					return usageErrorf("dbscan: --%s is required (see trawl dbscan --help)", f)
				}
			}
			return s.dbscan(c)
		}),
	}
}

func (s *session) dbscan(c *cli.Context) error {
	start := time.Now()
	p := dbscan.Params{Eps: c.Float64("eps"), MinPts: c.Int("min-pts")}
	if err := p.Validate(); err != nil {
		return withCode(exitUsage, err)
	}
	var columns []string
	if v := strings.TrimSpace(c.String("columns")); v != "" {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name == "" {
				return usageErrorf("dbscan: --columns %q has an empty name", v)
			}
			columns = append(columns, name)
		}
	}
	in := c.String("input")
	pts, names, err := dbscan.ReadPoints(s.resolver, in, columns)
	if err != nil {
		return fmt.Errorf("dbscan: %w", err)
	}
	if c.Bool("standardize") {
		if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
			return fmt.Errorf("dbscan: standardize %s: %w", in, err)
		}
	}
	res, err := dbscan.Cluster(c.Context, pts, p)
	if err != nil {
		return fmt.Errorf("dbscan: %s: %w", in, err)
	}
	var buf bytes.Buffer
	if err := dbscan.WriteLabelsCSV(&buf, res.Labels); err != nil {
		return err
	}
	out := c.String("output")
	if out == "-" {
		if _, err := s.io.stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("dbscan: write labels: %w", err)
		}
	} else {
		fsys, path, err := s.resolve(out)
		if err != nil {
			return fmt.Errorf("dbscan: output: %w", err)
		}
		if err := storage.WriteFileAtomic(fsys, path, buf.Bytes()); err != nil {
			return fmt.Errorf("dbscan: write %s: %w", out, err)
		}
	}
	noise, core := 0, 0
	for i, l := range res.Labels {
		if l < 0 {
			noise++
		}
		if res.Core[i] {
			core++
		}
	}
	s.log.Info("dbscan done", "input", in, "points", pts.Len(), "dims", len(names), "clusters", res.Clusters,
		"core", core, "border", pts.Len()-core-noise, "noise", noise, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}
