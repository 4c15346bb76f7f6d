package dbscan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

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
	// fewer when the sample cannot be cut further). 0 means as many as
	// the memory budget needs: at least the engine's parallelism, and
	// enough that each box's local clustering is estimated to fit in a
	// task's share of MemoryBudget (see the package doc, "Memory"). It
	// does not change the result, only how the work is split.
	Partitions int
	// MemoryBudget is the memory, in bytes, the engine's concurrent tasks
	// share (trawl's engine.memory): each box's clustering, which holds
	// the box's points, must fit in a task's share of it, budget /
	// parallelism. 0 means the engine's LocalRunner's MemoryBudget, or
	// mapreduce.DefaultMemoryBudget. It only matters when Partitions is
	// 0.
	MemoryBudget int64
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

// maxPartitions is the most boxes a Run may ask for.
const maxPartitions = 10000

// labelsFile is the work directory's file of the local clusters' labels,
// the label job's side file.
const labelsFile = "labels.parquet"

// Validate checks the configuration, as Run does before it starts:
// DBSCAN's parameters, the source, the directories, the samples' K and R,
// and the number of partitions.
func (c JobConfig) Validate() error {
	if err := (Params{Eps: c.Eps, MinPts: c.MinPts}).Validate(); err != nil {
		return err
	}
	if err := c.Source.Validate(); err != nil {
		return err
	}
	if c.Work == "" || c.Output == "" {
		return errors.New("dbscan: a work and an output directory are needed")
	}
	if err := checkSamples(c.MinSamples, c.SampleRate); err != nil {
		return err
	}
	if c.MemoryBudget < 0 {
		return fmt.Errorf("dbscan: memory budget %d bytes", c.MemoryBudget)
	}
	if parts := c.partitions(); parts > maxPartitions {
		return fmt.Errorf("dbscan: %d partitions is more than %d", parts, maxPartitions)
	}
	return nil
}

// partitions is Partitions, or GOMAXPROCS when it is 0.
func (c JobConfig) partitions() int {
	if c.Partitions <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return c.Partitions
}

// reduces is Reduces, or the partitions when it is 0, at most
// mapreduce.MaxReduce.
func (c JobConfig) reduces() int {
	r := c.Reduces
	if r <= 0 {
		r = c.partitions()
	}
	return min(r, mapreduce.MaxReduce)
}

// memoryBudget is the run's MemoryBudget: the configured one, else the
// engine's LocalRunner's, else mapreduce.DefaultMemoryBudget.
func (d *driver) memoryBudget() int64 {
	if d.cfg.MemoryBudget > 0 {
		return d.cfg.MemoryBudget
	}
	if r, ok := d.eng.Runner.(*mapreduce.LocalRunner); ok && r.MemoryBudget > 0 {
		return r.MemoryBudget
	}
	return mapreduce.DefaultMemoryBudget
}

// sampleSize is SampleSize, or DefaultSampleSize when it is 0.
func (c JobConfig) sampleSize() int {
	if c.SampleSize <= 0 {
		return DefaultSampleSize
	}
	return c.SampleSize
}

// Run is partitioned DBSCAN on the engine: it reads the points of
// cfg.Source and writes cfg.Output (see JobConfig). Its labels equal
// Cluster's on the same (standardized) points ordered by key, for any
// Partitions; the package doc has the jobs and the argument.
func Run(ctx context.Context, env mapreduce.Engine, cfg JobConfig) (sum *Summary, err error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &driver{ctx: ctx, eng: env, cfg: cfg, log: env.Logger().With("job", "dbscan"), res: env.Resolver(),
		reduces: cfg.reduces(), sum: &Summary{}}
	if err := d.openDirs(); err != nil {
		return nil, err
	}
	if !cfg.KeepWork {
		defer func() {
			if rerr := d.fs.RemoveAll(d.wpath); rerr != nil && err == nil {
				err = fmt.Errorf("dbscan: remove the work directory: %w", rerr)
			}
		}()
	}
	d.setParams()
	mom, sample, err := d.stats()
	if err != nil {
		return nil, err
	}
	if mom == nil {
		d.log.Warn("no points to cluster")
		if err := writeEmpty(d.fs, d.resultPath()); err != nil {
			return nil, err
		}
		return d.publish(start)
	}
	part, sc, err := d.plan(*mom, sample)
	if err != nil {
		return nil, err
	}
	steps := []func() error{func() error { return d.local(part, sc) }, d.join, d.merge, d.label, d.centres}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return d.publish(start)
}

// driver is one Run in progress: its settings, its directories, and the
// summary it fills as its jobs finish.
type driver struct {
	ctx context.Context
	eng mapreduce.Engine
	cfg JobConfig
	log *slog.Logger
	res mapreduce.Resolver
	// fs holds the work directory wpath and the output opath.
	fs           storage.FS
	wpath, opath string
	// reduces is the reduce tasks of each job.
	reduces int
	sum     *Summary
}

// work is the URI of elem under the work directory.
func (d *driver) work(elem ...string) string { return storage.Join(d.cfg.Work, elem...) }

// result is the URI of elem under the work directory's result/, the
// directory published as the output.
func (d *driver) result(elem ...string) string {
	return d.work(append([]string{"result"}, elem...)...)
}

// resultPath is result/'s path in fs.
func (d *driver) resultPath() string { return path.Join(d.wpath, "result") }

// openDirs resolves the work and output directories, checks that they are
// on one file system and do not exist, and creates the work directory.
func (d *driver) openDirs() error {
	wfs, wpath, err := d.res.Resolve(d.cfg.Work)
	if err != nil {
		return fmt.Errorf("dbscan: work directory: %w", err)
	}
	ofs, opath, err := d.res.Resolve(d.cfg.Output)
	if err != nil {
		return fmt.Errorf("dbscan: output directory: %w", err)
	}
	if ofs != wfs {
		return fmt.Errorf("dbscan: the output %s and the work directory %s are on different file systems", d.cfg.Output, d.cfg.Work)
	}
	for _, dir := range []struct{ what, p string }{{"work directory", wpath}, {"output", opath}} {
		if ok, err := storage.Exists(wfs, dir.p); err != nil {
			return fmt.Errorf("dbscan: %s: %w", dir.what, err)
		} else if ok {
			return fmt.Errorf("dbscan: the %s %s exists (remove it or choose another)", dir.what, dir.p)
		}
	}
	if err := wfs.MkdirAll(wpath); err != nil {
		return fmt.Errorf("dbscan: work directory: %w", err)
	}
	d.fs, d.wpath, d.opath = wfs, wpath, opath
	return nil
}

// runJob runs the job s describes, keeping its result in the summary.
func (d *driver) runJob(s mapreduce.Spec) (*mapreduce.Result, error) {
	d.log.Info("running", "step", s.JobName())
	r, err := d.eng.Run(d.ctx, s)
	if err != nil {
		return nil, fmt.Errorf("dbscan: %s: %w", s.JobName(), err)
	}
	d.sum.Jobs = append(d.sum.Jobs, r)
	return r, nil
}

// setParams fills the params/ row's settings: what is run, on what.
func (d *driver) setParams() {
	cfg := d.cfg
	p := &d.sum.Params
	*p = Parameters{Eps: cfg.Eps, MinPts: int32(cfg.MinPts), Standardized: cfg.Standardize, Source: cfg.Source.kind(),
		Input: cfg.Source.uri(), MinSamples: int32(cfg.MinSamples), SampleRate: cfg.SampleRate}
	if cfg.Source.CrawlDB != "" {
		p.MaxChanges = int32(cfg.Source.maxChanges())
		p.Features = FeatureNames()
	}
}

// stats runs the stats job and reads the points' moments and sample. The
// moments are nil when there are no points.
func (d *driver) stats() (*Moments, []sampleRow, error) {
	spec := statsSpec{Source: d.cfg.Source, SampleSize: d.cfg.sampleSize(), Stats: d.work(outStats), Sample: d.work(outSample)}
	if _, err := d.runJob(spec); err != nil {
		return nil, nil, err
	}
	stats, err := readRows[Moments](d.res, spec.Stats)
	if err != nil {
		return nil, nil, fmt.Errorf("dbscan: read the moments: %w", err)
	}
	if len(stats) == 0 || stats[0].N == 0 {
		return nil, nil, nil
	}
	if len(stats) != 1 {
		return nil, nil, fmt.Errorf("dbscan: the stats job wrote %d rows of moments", len(stats))
	}
	rows, err := readRows[sampleRow](d.res, spec.Sample)
	if err != nil {
		return nil, nil, fmt.Errorf("dbscan: read the sample: %w", err)
	}
	return &stats[0], rows, nil
}

// plan standardizes the sample if the run does, and cuts space into
// boxes on it. It returns the boxes and the scaler (nil: none).
func (d *driver) plan(mom Moments, rows []sampleRow) (Partitioning, *Scaler, error) {
	p := &d.sum.Params
	p.Points = mom.N
	sample := NewPoints(mom.Dim(), len(rows))
	for _, r := range rows {
		if err := sample.Append(r.X); err != nil {
			return Partitioning{}, nil, fmt.Errorf("dbscan: sample point %q: %w", r.Key, err)
		}
	}
	var sc *Scaler
	if d.cfg.Standardize {
		s := mom.Scaler()
		p.Mean, p.Std = s.Mean, s.Std
		if err := s.Apply(sample); err != nil {
			return Partitioning{}, nil, err
		}
		sc = &s
	}
	var part Partitioning
	par := d.eng.Parallelism()
	share := d.memoryBudget() / int64(par)
	if d.cfg.Partitions > 0 {
		part = PlanPartitions(sample, d.cfg.Partitions)
	} else {
		var need int64
		part, need = planBoxes(sample, mom.N, d.cfg.Eps, par, share)
		if need > share {
			d.log.Warn("the largest box is estimated over a task's share of the memory budget; raise the budget",
				"estimate_bytes", need, "share_bytes", share, "boxes", part.Boxes)
		}
	}
	d.sum.Partitioning = part
	p.Boxes = int32(part.Boxes)
	d.log.Info("planned the boxes", "points", mom.N, "boxes", part.Boxes, "sample", sample.Len(), "task_share_bytes", share)
	return part, sc, nil
}

// local runs the local job: each box clusters its points and those within
// eps of it.
func (d *driver) local(part Partitioning, sc *Scaler) error {
	r, err := d.runJob(localSpec{Source: d.cfg.Source, Scaler: sc, Eps: d.cfg.Eps, MinPts: d.cfg.MinPts,
		Partitioning: part, Reduces: d.reduces, TaskWorkers: d.cfg.TaskWorkers,
		Owned: d.work(outOwned), Comps: d.work(outComps), Links: d.work(outLinks), Shared: d.work(outShared)})
	if err != nil {
		return err
	}
	d.sum.Params.HaloPoints = r.Counters.Get(JobLocal, ctrHalo)
	return nil
}

// join runs the join job: halo points meet their own box's result, giving
// edges between local clusters and border points of other boxes'
// clusters.
func (d *driver) join() error {
	_, err := d.runJob(joinSpec{Reduces: d.reduces, Shared: d.work(outShared), Links: d.work(outLinks),
		Edges: d.work(outEdges), Cands: d.work(outCands)})
	return err
}

// merge joins the local clusters the edges link (union-find, here: they
// are few) and writes every local cluster's label to the label job's side
// file.
func (d *driver) merge() error {
	comps, err := readRows[compRow](d.res, d.work(outComps))
	if err != nil {
		return fmt.Errorf("dbscan: read the local clusters: %w", err)
	}
	edges, err := readRows[edgeRow](d.res, d.work(outEdges))
	if err != nil {
		return fmt.Errorf("dbscan: read the edges: %w", err)
	}
	labels, nclusters, err := resolveLabels(comps, edges)
	if err != nil {
		return err
	}
	d.sum.Params.Clusters = int32(nclusters)
	lrows := make([]labelRow, 0, len(labels))
	for k, l := range labels {
		lrows = append(lrows, labelRow{Box: k.Box, Comp: k.Comp, Label: l})
	}
	slices.SortFunc(lrows, func(a, b labelRow) int { return cmpBoxComp(a.Box, a.Comp, b.Box, b.Comp) })
	if err := writeRows(d.fs, path.Join(d.wpath, labelsFile), lrows); err != nil {
		return err
	}
	d.log.Info("merged the local clusters", "local", len(comps), "edges", len(edges), "clusters", nclusters)
	return nil
}

// label runs the label job, every point's label, and checks that it
// labelled every point.
func (d *driver) label() error {
	r, err := d.runJob(labelSpec{Reduces: d.reduces, Labels: d.work(labelsFile), Owned: d.work(outOwned),
		Cands: d.work(outCands), Assignment: d.result(DirAssignment), Members: d.work(outMembers)})
	if err != nil {
		return err
	}
	p := &d.sum.Params
	p.Core, p.Border, p.Noise = r.Counters.Get(JobLabel, ctrCore), r.Counters.Get(JobLabel, ctrBorder), r.Counters.Get(JobLabel, ctrNoise)
	if got := p.Core + p.Border + p.Noise; got != p.Points {
		return fmt.Errorf("dbscan: labelled %d points of %d", got, p.Points)
	}
	return nil
}

// centres runs the centres job: the clusters' centres and samples.
func (d *driver) centres() error {
	_, err := d.runJob(centresSpec{Reduces: d.reduces, MinSamples: d.cfg.MinSamples, SampleRate: d.cfg.SampleRate,
		Members: d.work(outMembers), Centres: d.result(DirCentres), Samples: d.result(DirSamples)})
	return err
}

// publish writes params/ and publishes result/ as the output, completing
// the summary.
func (d *driver) publish(start time.Time) (*Summary, error) {
	if err := publish(d.fs, d.resultPath(), d.opath, d.sum.Params, &d.sum.Duration, start); err != nil {
		return nil, err
	}
	return d.sum, nil
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
