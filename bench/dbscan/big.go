package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// The partitioned benchmark's modes (see bench/README.md, "bench/dbscan"):
//
//	points       generate N points from N/per simweb webs as CSV and Parquet
//	partitioned  dbscan.Run on the local engine under a memory budget
//	compare      a labels CSV against a partitioned run's assignment

// pointsCmd is the points mode: it generates n standardized feature rows
// from ceil(n/per) simweb webs of per content pages each (seeds seed,
// seed+1, ...; hosts hosts each), concatenated in that order and
// standardized over all of them, and writes them as CSV (for trawl dbscan)
// and as Parquet PointRows keyed by dbscan.PointKey (for the partitioned
// jobs). With n <= per it is the main harness's data set exactly.
func pointsCmd(args []string) error {
	fs := flag.NewFlagSet("points", flag.ContinueOnError)
	n := fs.Int("n", 1_000_000, "points")
	per := fs.Int("per", 1_000_000, "points per simweb web")
	hosts := fs.Int("hosts", 5000, "regular hosts per web")
	seed := fs.Uint64("seed", 1, "the first web's seed (web i has seed+i)")
	csvPath := fs.String("csv", "", "CSV output (empty: none)")
	pqDir := fs.String("parquet", "", "Parquet output directory of part files (empty: none)")
	files := fs.Int("files", 16, "Parquet part files")
	from := fs.String("from-csv", "", "read the points from this CSV (as written by this mode) instead of generating them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *per < 1 || *files < 1 {
		return errors.New("-n, -per and -files must be positive")
	}
	ctx := context.Background()
	start := time.Now()
	pts := dbscan.NewPoints(dbscan.NumFeatures, *n)
	if *from != "" {
		f, err := os.Open(*from)
		if err != nil {
			return err
		}
		pts, _, err = dbscan.ReadCSV(f, *from)
		f.Close()
		if err != nil {
			return err
		}
		return writePointParts(*pqDir, pts, *files)
	}
	for web := uint64(0); pts.Len() < *n; web++ {
		m := min(*per, *n-pts.Len())
		raw, err := rawWebFeatures(ctx, m, *hosts, *seed+web)
		if err != nil {
			return err
		}
		pts.Data = append(pts.Data, raw.Data...)
		fmt.Fprintf(os.Stderr, "points: web %d (seed %d): %d points, %d in all, %s\n", web, *seed+web, m, pts.Len(), time.Since(start).Round(time.Second))
	}
	if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
		return fmt.Errorf("standardizing: %w", err)
	}
	if *csvPath != "" {
		if err := writeCSV(*csvPath, pts); err != nil {
			return err
		}
	}
	if *pqDir != "" {
		if err := writePointParts(*pqDir, pts, *files); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "points: %d points written in %s\n", pts.Len(), time.Since(start).Round(time.Second))
	return nil
}

// writePointParts writes pts as files Parquet part files of PointRows
// keyed by dbscan.PointKey, in order, with row groups of 64Ki rows (the
// engine's map splits).
func writePointParts(dir string, pts dbscan.Points, files int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := pts.Len()
	per := (n + files - 1) / files
	for f := 0; f*per < n; f++ {
		p := filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", f))
		out, err := os.Create(p)
		if err != nil {
			return err
		}
		w := parquetio.NewWriter[dbscan.PointRow](out, parquetio.RowGroupRows(1<<16))
		batch := make([]dbscan.PointRow, 0, 4096)
		for i := f * per; i < min(n, (f+1)*per); i++ {
			batch = append(batch, dbscan.PointRow{Key: dbscan.PointKey(i), X: pts.At(i)})
			if len(batch) == cap(batch) {
				if err = w.Write(batch...); err != nil {
					break
				}
				batch = batch[:0]
			}
		}
		if err == nil {
			err = w.Write(batch...)
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// partitionedCmd is the partitioned mode: dbscan.Run over a directory of
// PointRows on a LocalRunner with the given memory budget (and the soft
// memory limit trawl sets for it), as trawl cluster runs it. It prints the
// run's Parameters as JSON on stdout.
func partitionedCmd(args []string) error {
	fs := flag.NewFlagSet("partitioned", flag.ContinueOnError)
	in := fs.String("points", "", "Parquet PointRows (file or directory; required)")
	eps := fs.Float64("eps", 0.1, "eps")
	minPts := fs.Int("min-pts", 12, "minPts")
	memory := fs.Int64("memory", mapreduce.DefaultMemoryBudget, "the engine's memory budget in bytes (trawl's engine.memory)")
	parts := fs.Int("partitions", 0, "boxes (0: chosen from the budget)")
	work := fs.String("work", "", "work directory (must not exist; required)")
	out := fs.String("out", "", "result directory (must not exist; required)")
	tmp := fs.String("tmp", os.TempDir(), "the engine's temporary directory (spills)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *work == "" || *out == "" {
		return errors.New("-points, -work and -out are required")
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(mapreduce.MemoryLimit(*memory, 0))
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	env := mapreduce.Engine{Runner: &mapreduce.LocalRunner{TempDir: *tmp, MemoryBudget: *memory, Log: log}, Log: log}
	sum, err := dbscan.Run(context.Background(), env, dbscan.JobConfig{
		Source: dbscan.Source{Points: *in}, Work: *work, Output: *out, Eps: *eps, MinPts: *minPts,
		Partitions: *parts, MinSamples: 3, SampleRate: 0.05,
	})
	if err != nil {
		return err
	}
	log.Info("partitioned DBSCAN done", "points", sum.Params.Points, "boxes", sum.Params.Boxes, "halo", sum.Params.HaloPoints,
		"clusters", sum.Params.Clusters, "duration", sum.Duration.Round(time.Millisecond), "cpus", runtime.NumCPU())
	b, err := json.Marshal(sum.Params)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// compareCmd is the compare mode: it reads a labels CSV (trawl dbscan's
// output, one label per point in index order) and a partitioned result's
// assignment/ (keys dbscan.PointKey) and reports whether every label is
// identical.
func compareCmd(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	labels := fs.String("labels", "", "labels CSV (required)")
	result := fs.String("result", "", "a partitioned run's result directory (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *labels == "" || *result == "" {
		return errors.New("-labels and -result are required")
	}
	want, err := readLabels(*labels)
	if err != nil {
		return err
	}
	got := make([]int32, len(want))
	seen := make([]bool, len(want))
	res := storage.NewResolver()
	fsys, dir, err := res.Resolve(storage.Join(*result, dbscan.DirAssignment))
	if err != nil {
		return err
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	rows, core := 0, 0
	for _, e := range ents {
		if !parquetio.IsPart(e) {
			continue
		}
		as, err := parquetio.ReadAll[dbscan.Assignment](fsys, filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		for _, a := range as {
			i, err := strconv.Atoi(a.Key)
			if err != nil || i < 0 || i >= len(want) || seen[i] {
				return fmt.Errorf("assignment key %q: not a point index below %d, or twice", a.Key, len(want))
			}
			seen[i] = true
			got[i] = a.Label
			rows++
			if a.Core {
				core++
			}
		}
	}
	if rows != len(want) {
		return fmt.Errorf("%d assignments for %d labels", rows, len(want))
	}
	differ := 0
	for i := range want {
		if want[i] != got[i] {
			if differ < 5 {
				fmt.Fprintf(os.Stderr, "compare: point %d: labels %d, partitioned %d\n", i, want[i], got[i])
			}
			differ++
		}
	}
	fmt.Printf("points %d, core %d, labels differing %d, identical %v\n", len(want), core, differ, differ == 0)
	if differ > 0 {
		return fmt.Errorf("%d labels differ", differ)
	}
	return nil
}
