package dbscan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// execute runs one engine job of Run on eng.
func execute(ctx context.Context, eng mapreduce.Engine, name string, conf map[string]string, job mapreduce.Runnable) (*mapreduce.Result, error) {
	return eng.Run(ctx, confJob{name: name, conf: conf, job: job})
}

// confJob is a job whose configuration is still a map of hand-written
// keys, run through the Runner until it has a spec of its own.
type confJob struct {
	name string
	conf map[string]string
	job  mapreduce.Runnable
}

func (c confJob) JobName() string                  { return c.name }
func (c confJob) Job() (mapreduce.Runnable, error) { return c.job, nil }
func (c confJob) SpecConf() map[string]string      { return c.conf }

// JobConfig configures Run.
type JobConfig struct {
	// Source is where the points come from.
	Source Source
	// Work is the URI of a directory for intermediate outputs. It must
	// not exist; Run creates it and removes it at the end unless
	// KeepWork.
	Work string
	// Output is the URI of the result directory; it must not exist. Run
	// publishes it with one rename when everything is done: assignment/
	// (Assignment rows, sorted by key in each part), centres/ (Centre),
	// samples/ (Sample) and params/ (one Parameters row). A failed run
	// leaves no Output.
	Output string
	// Eps is DBSCAN's radius (see Params).
	Eps float64
	// MinPts is DBSCAN's core threshold, the point itself included (see
	// Params).
	MinPts int
	// Standardize z-scores the points (moments computed by the stats job)
	// before clustering; otherwise they are used as given.
	Standardize bool
	// Partitions is the number of boxes space is cut into (at most;
	// fewer when the sample cannot be cut further); 0 means GOMAXPROCS.
	// It does not change the result, only how the work is split.
	Partitions int
	// Reduces is the number of reduce tasks of each job (and part files of
	// each output); 0 means Partitions.
	Reduces int
	// TaskWorkers is the goroutines a box's clustering uses; 0 means
	// GOMAXPROCS divided by the boxes (at least 1).
	TaskWorkers int
	// SampleSize is the sample the boxes are planned on; 0 means
	// DefaultSampleSize.
	SampleSize int
	// MinSamples (K) and SampleRate (R) choose each cluster's samples: the
	// max(K, ceil(R * size)) members nearest its centre (all members if
	// fewer).
	MinSamples int
	// SampleRate is R (0 <= R <= 1); see MinSamples.
	SampleRate float64
	// KeepWork keeps the work directory.
	KeepWork bool
}

// Parameters is the params/ row of a result: what was run and what came
// out.
type Parameters struct {
	// Eps and MinPts are DBSCAN's parameters.
	Eps    float64 `parquet:"eps"`
	MinPts int32   `parquet:"min_pts"`
	// Standardized says whether the points were z-scored (Mean, Std).
	Standardized bool `parquet:"standardized"`
	// Source is "points" or "crawldb".
	Source string `parquet:"source"`
	// Input is the source's path.
	Input string `parquet:"input"`
	// MaxChanges is a CrawlDB source's young-page threshold (negative: none).
	MaxChanges int32 `parquet:"max_changes"`
	// Features names the dimensions (FeatureNames for a CrawlDB source,
	// empty for points).
	Features []string `parquet:"features,list"`
	// Mean is the standardization's mean (empty when not standardized).
	Mean []float64 `parquet:"mean,list"`
	// Std is the standardization's divisor (empty when not standardized).
	Std []float64 `parquet:"std,list"`
	// Boxes is the number of partitions the run used.
	Boxes int32 `parquet:"boxes"`
	// MinSamples (K) and SampleRate (R) chose the samples.
	MinSamples int32   `parquet:"min_samples"`
	SampleRate float64 `parquet:"sample_rate"`
	// Points counts the points clustered.
	Points int64 `parquet:"points"`
	// Clusters counts the clusters.
	Clusters int32 `parquet:"clusters"`
	// Core, Border and Noise count the points of each kind.
	Core   int64 `parquet:"core"`
	Border int64 `parquet:"border"`
	Noise  int64 `parquet:"noise"`
	// HaloPoints counts the copies of points sent to neighbouring boxes.
	HaloPoints int64 `parquet:"halo_points"`
}

// Summary reports a Run.
type Summary struct {
	// Params is the params/ row.
	Params Parameters
	// Partitioning is the boxes the run used.
	Partitioning Partitioning
	// Jobs are the engine's results of the jobs, in the order run.
	Jobs []*mapreduce.Result
	// Duration is the wall time of the run.
	Duration time.Duration
}

// The result directory's subdirectories.
const (
	DirAssignment = "assignment"
	DirCentres    = "centres"
	DirSamples    = "samples"
	DirParams     = "params"
)

// Run is partitioned DBSCAN on the engine: it reads the points of
// cfg.Source and writes cfg.Output (see JobConfig). Its labels equal
// Cluster's on the same (standardized) points ordered by key, for any
// Partitions; the package doc has the jobs and the argument.
func Run(ctx context.Context, env mapreduce.Engine, cfg JobConfig) (sum *Summary, err error) {
	start := time.Now()
	log := env.Logger().With("job", "dbscan")
	if err := (Params{Eps: cfg.Eps, MinPts: cfg.MinPts}).Validate(); err != nil {
		return nil, err
	}
	src := map[string]string{}
	switch {
	case cfg.Source.Points != "" && cfg.Source.CrawlDB != "":
		return nil, errors.New("dbscan: the source is points or a CrawlDB, not both")
	case cfg.Source.Points != "":
		src[confSource], src[confInput] = sourcePoints, cfg.Source.Points
	case cfg.Source.CrawlDB != "":
		mc := cfg.Source.MaxChanges
		if mc == 0 {
			mc = DefaultMaxChanges
		}
		src[confSource], src[confInput], src[confMaxChanges] = sourceCrawlDB, cfg.Source.CrawlDB, strconv.Itoa(mc)
	default:
		return nil, errors.New("dbscan: no source")
	}
	if cfg.Work == "" || cfg.Output == "" {
		return nil, errors.New("dbscan: a work and an output directory are needed")
	}
	if cfg.MinSamples < 0 || cfg.SampleRate < 0 || cfg.SampleRate > 1 || math.IsNaN(cfg.SampleRate) {
		return nil, fmt.Errorf("dbscan: samples: K %d and rate %v (K >= 0, 0 <= R <= 1)", cfg.MinSamples, cfg.SampleRate)
	}
	parts := cfg.Partitions
	if parts <= 0 {
		parts = runtime.GOMAXPROCS(0)
	}
	if parts > 10000 {
		return nil, fmt.Errorf("dbscan: %d partitions is more than 10000", parts)
	}
	reduces := cfg.Reduces
	if reduces <= 0 {
		reduces = parts
	}
	reduces = min(reduces, mapreduce.MaxReduce)
	sampleSize := cfg.SampleSize
	if sampleSize <= 0 {
		sampleSize = DefaultSampleSize
	}

	res := env.Resolver()
	wfs, wpath, err := res.Resolve(cfg.Work)
	if err != nil {
		return nil, fmt.Errorf("dbscan: work directory: %w", err)
	}
	ofs, opath, err := res.Resolve(cfg.Output)
	if err != nil {
		return nil, fmt.Errorf("dbscan: output directory: %w", err)
	}
	if ofs != wfs {
		return nil, fmt.Errorf("dbscan: the output %s and the work directory %s are on different file systems", cfg.Output, cfg.Work)
	}
	for _, d := range []struct{ what, p string }{{"work directory", wpath}, {"output", opath}} {
		if ok, err := storage.Exists(wfs, d.p); err != nil {
			return nil, fmt.Errorf("dbscan: %s: %w", d.what, err)
		} else if ok {
			return nil, fmt.Errorf("dbscan: the %s %s exists (remove it or choose another)", d.what, d.p)
		}
	}
	if err := wfs.MkdirAll(wpath); err != nil {
		return nil, fmt.Errorf("dbscan: work directory: %w", err)
	}
	if !cfg.KeepWork {
		defer func() {
			if rerr := wfs.RemoveAll(wpath); rerr != nil && err == nil {
				err = fmt.Errorf("dbscan: remove the work directory: %w", rerr)
			}
		}()
	}
	work := func(elem ...string) string { return storage.Join(cfg.Work, elem...) }
	result := func(elem ...string) string { return work(append([]string{"result"}, elem...)...) }
	sum = &Summary{}
	run := func(name string, conf map[string]string, build func(map[string]string) (mapreduce.Runnable, error)) (*mapreduce.Result, error) {
		job, err := build(conf)
		if err != nil {
			return nil, err
		}
		log.Info("running", "step", name)
		r, err := execute(ctx, env, name, conf, job)
		if err != nil {
			return nil, fmt.Errorf("dbscan: %s: %w", name, err)
		}
		sum.Jobs = append(sum.Jobs, r)
		return r, nil
	}
	with := func(kv ...string) map[string]string {
		m := maps(src)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	reg := Registry(res)

	// 1. Moments and a sample.
	conf := with(confSampleSize, strconv.Itoa(sampleSize), confOut+outStats, work(outStats), confOut+outSample, work(outSample))
	if _, err := run(JobStats, conf, reg[JobStats]); err != nil {
		return nil, err
	}
	stats, err := readRows[Moments](res, work(outStats))
	if err != nil {
		return nil, fmt.Errorf("dbscan: read the moments: %w", err)
	}
	p := &sum.Params
	*p = Parameters{Eps: cfg.Eps, MinPts: int32(cfg.MinPts), Standardized: cfg.Standardize, Source: src[confSource],
		Input: src[confInput], MinSamples: int32(cfg.MinSamples), SampleRate: cfg.SampleRate}
	if src[confSource] == sourceCrawlDB {
		p.MaxChanges = int32(cfg.Source.MaxChanges)
		if p.MaxChanges == 0 {
			p.MaxChanges = DefaultMaxChanges
		}
		p.Features = FeatureNames()
	}
	if len(stats) == 0 || stats[0].N == 0 {
		log.Warn("no points to cluster")
		if err := writeEmpty(wfs, path.Join(wpath, "result")); err != nil {
			return nil, err
		}
		return sum, publish(wfs, path.Join(wpath, "result"), opath, *p, &sum.Duration, start)
	}
	if len(stats) != 1 {
		return nil, fmt.Errorf("dbscan: the stats job wrote %d rows of moments", len(stats))
	}
	mom := stats[0]
	p.Points = mom.N
	rows, err := readRows[sampleRow](res, work(outSample))
	if err != nil {
		return nil, fmt.Errorf("dbscan: read the sample: %w", err)
	}
	sample := NewPoints(mom.Dim(), len(rows))
	for _, r := range rows {
		if err := sample.Append(r.X); err != nil {
			return nil, fmt.Errorf("dbscan: sample point %q: %w", r.Key, err)
		}
	}
	if cfg.Standardize {
		sc := mom.Scaler()
		p.Mean, p.Std = sc.Mean, sc.Std
		b, err := json.Marshal(sc)
		if err != nil {
			return nil, fmt.Errorf("dbscan: %w", err)
		}
		src[confScaler] = string(b)
		if err := sc.Apply(sample); err != nil {
			return nil, err
		}
	}
	part := PlanPartitions(sample, parts)
	sum.Partitioning = part
	p.Boxes = int32(part.Boxes)
	partText, err := part.MarshalText()
	if err != nil {
		return nil, fmt.Errorf("dbscan: %w", err)
	}
	log.Info("planned the boxes", "points", mom.N, "boxes", part.Boxes, "sample", sample.Len())

	// 2. Each box clusters its points and those within eps of it.
	conf = with(confEps, fmtFloat(cfg.Eps), confMinPts, strconv.Itoa(cfg.MinPts), confPart, string(partText),
		confReduces, strconv.Itoa(reduces), confWorkers, strconv.Itoa(cfg.TaskWorkers),
		confOut+outOwned, work(outOwned), confOut+outComps, work(outComps), confOut+outLinks, work(outLinks), confOut+outShared, work(outShared))
	r, err := run(JobLocal, conf, reg[JobLocal])
	if err != nil {
		return nil, err
	}
	p.HaloPoints = r.Counters.Get(JobLocal, ctrHalo)

	// 3. Halo points meet their own box's result: edges between local
	// clusters, and border points of other boxes' clusters.
	conf = map[string]string{confReduces: strconv.Itoa(reduces), confOut + outShared: work(outShared), confOut + outLinks: work(outLinks),
		confOut + outEdges: work(outEdges), confOut + outCands: work(outCands)}
	if _, err := run(JobJoin, conf, reg[JobJoin]); err != nil {
		return nil, err
	}

	// 4. Union-find over the local clusters, here: they are few.
	comps, err := readRows[compRow](res, work(outComps))
	if err != nil {
		return nil, fmt.Errorf("dbscan: read the local clusters: %w", err)
	}
	edges, err := readRows[edgeRow](res, work(outEdges))
	if err != nil {
		return nil, fmt.Errorf("dbscan: read the edges: %w", err)
	}
	labels, nclusters, err := resolveLabels(comps, edges)
	if err != nil {
		return nil, err
	}
	p.Clusters = int32(nclusters)
	lrows := make([]labelRow, 0, len(labels))
	for k, l := range labels {
		lrows = append(lrows, labelRow{Box: k.Box, Comp: k.Comp, Label: l})
	}
	slices.SortFunc(lrows, func(a, b labelRow) int { return cmpBoxComp(a.Box, a.Comp, b.Box, b.Comp) })
	labelsFile := path.Join(wpath, "labels.parquet")
	if err := writeRows(wfs, labelsFile, lrows); err != nil {
		return nil, err
	}
	log.Info("merged the local clusters", "local", len(comps), "edges", len(edges), "clusters", nclusters)

	// 5. Every point's label.
	conf = map[string]string{confReduces: strconv.Itoa(reduces), confLabels: work("labels.parquet"),
		confOut + outOwned: work(outOwned), confOut + outCands: work(outCands),
		confOut + outAssignment: result(DirAssignment), confOut + outMembers: work(outMembers)}
	r, err = run(JobLabel, conf, reg[JobLabel])
	if err != nil {
		return nil, err
	}
	p.Core, p.Border, p.Noise = r.Counters.Get(JobLabel, ctrCore), r.Counters.Get(JobLabel, ctrBorder), r.Counters.Get(JobLabel, ctrNoise)
	if got := p.Core + p.Border + p.Noise; got != p.Points {
		return nil, fmt.Errorf("dbscan: labelled %d points of %d", got, p.Points)
	}

	// 6. Centres and samples.
	conf = map[string]string{confReduces: strconv.Itoa(reduces), confMinSamples: strconv.Itoa(cfg.MinSamples),
		confSampleRate: fmtFloat(cfg.SampleRate), confOut + outMembers: work(outMembers),
		confOut + outCentres: result(DirCentres), confOut + outSamples: result(DirSamples)}
	if _, err := run(JobCentres, conf, reg[JobCentres]); err != nil {
		return nil, err
	}
	return sum, publish(wfs, path.Join(wpath, "result"), opath, *p, &sum.Duration, start)
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+16)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cmpBoxComp(b1, c1, b2, c2 int32) int {
	if b1 != b2 {
		return int(b1) - int(b2)
	}
	return int(c1) - int(c2)
}

// writeRows writes rows as one Parquet file.
func writeRows[T any](fsys storage.FS, p string, rows []T) error {
	f, err := fsys.Create(p)
	if err != nil {
		return fmt.Errorf("dbscan: %w", err)
	}
	w := parquetio.NewWriter[T](f)
	err = w.Write(rows...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dbscan: write %s: %w", p, err)
	}
	return nil
}

// writeEmpty makes the result's job outputs as empty published outputs.
func writeEmpty(fsys storage.FS, dir string) error {
	for _, d := range []string{DirAssignment, DirCentres, DirSamples} {
		if err := fsys.MkdirAll(path.Join(dir, d)); err != nil {
			return fmt.Errorf("dbscan: %w", err)
		}
		if err := storage.WriteFileAtomic(fsys, path.Join(dir, d, "_SUCCESS"), nil); err != nil {
			return fmt.Errorf("dbscan: %w", err)
		}
	}
	return nil
}

// publish writes params/ into the result directory and renames it to the
// output.
func publish(fsys storage.FS, result, output string, p Parameters, dur *time.Duration, start time.Time) error {
	pdir := path.Join(result, DirParams)
	if err := writeRows(fsys, path.Join(pdir, "part-r-00000.parquet"), []Parameters{p}); err != nil {
		return err
	}
	if err := storage.WriteFileAtomic(fsys, path.Join(pdir, "_SUCCESS"), nil); err != nil {
		return fmt.Errorf("dbscan: %w", err)
	}
	if err := fsys.MkdirAll(path.Dir(output)); err != nil {
		return fmt.Errorf("dbscan: %w", err)
	}
	if err := fsys.Rename(result, output); err != nil {
		return fmt.Errorf("dbscan: publish %s: %w", output, err)
	}
	*dur = time.Since(start)
	return nil
}

// ReadOutput reads every row of a result subdirectory (or any directory
// of Parquet part files, or one Parquet file) as rows of type T.
func ReadOutput[T any](res mapreduce.Resolver, uri string) ([]T, error) {
	if res == nil {
		res = storage.NewResolver()
	}
	return readRows[T](res, uri)
}

// ReadAssignments reads a result's assignment/ directory, sorted by key.
func ReadAssignments(res mapreduce.Resolver, result string) ([]Assignment, error) {
	rows, err := ReadOutput[Assignment](res, storage.Join(result, DirAssignment))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b Assignment) int { return strings.Compare(a.Key, b.Key) })
	return rows, nil
}
