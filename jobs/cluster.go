package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// JobCluster is the name Cluster holds the CrawlDB lock under.
const JobCluster = "cluster"

// dirClusters is the crawl directory's subdirectory of cluster results.
const dirClusters = "clusters"

// clusterNameLayout names a cluster result by its UTC creation time, as
// segments are named.
const clusterNameLayout = "20060102150405"

// clusterName matches a published result's name (work directories start
// with "_").
var clusterName = regexp.MustCompile(`^[0-9]{14}$`)

// clusterWorkPrefix starts the names of Cluster's work directories inside
// clusters/; the next Cluster run removes any left by a killed process.
const clusterWorkPrefix = "_work-"

// ClustersDir returns the URI of the crawl's cluster results directory.
func ClustersDir(crawl string) string { return storage.Join(crawl, dirClusters) }

// ClusterOptions configures Cluster and SuggestClusterEps (the settings
// cluster.*).
type ClusterOptions struct {
	// Eps is DBSCAN's radius on the standardized features. Cluster needs
	// it positive; zero means not chosen yet, which only
	// SuggestClusterEps (which proposes one) accepts.
	Eps float64
	// MinPts is DBSCAN's density: the points within Eps, the point itself
	// counted, that make a core point. Cluster needs it at least 1,
	// SuggestClusterEps at least 2; zero is invalid.
	MinPts int
	// MinSamples (K) and SampleRate (R) choose each cluster's samples:
	// the max(K, ceil(R*size)) members nearest its centre. Zero K or R
	// takes nothing on its own account; R is in [0, 1].
	MinSamples int
	SampleRate float64
	// MaxChanges is the change count up to which a page is young and
	// clustered; 0 means 16 (dbscan.DefaultMaxChanges). AnyChanges
	// clusters every fetched page whatever its change count (MaxChanges
	// must then be 0).
	MaxChanges int
	AnyChanges bool
	// Partitions is the number of boxes of the partitioned DBSCAN; 0
	// means as many as the engine's memory budget needs, at least its
	// parallelism (dbscan.JobConfig.Partitions). It does not change the
	// result.
	Partitions int
	// Now names the result (clusters/<Now as yyyyMMddHHmmss>); zero means
	// the wall clock. A name already taken moves on by a second.
	Now time.Time
}

// Validate checks o as Cluster and SuggestClusterEps do before they start
// (see each field), but for what only one of them needs: Cluster a
// positive Eps, SuggestClusterEps a MinPts of at least 2.
func (o ClusterOptions) Validate() error {
	switch {
	case !(o.Eps >= 0) || math.IsInf(o.Eps, 0):
		return fmt.Errorf("eps must be 0 (not chosen yet) or a positive finite number, not %v", o.Eps)
	case o.MinPts < 1 || o.MinPts > math.MaxInt32:
		return fmt.Errorf("minPts must be at least 1, not %d", o.MinPts)
	case !(o.SampleRate >= 0 && o.SampleRate <= 1):
		return fmt.Errorf("sample rate must be in [0, 1], not %v", o.SampleRate)
	case o.MinSamples < 0:
		return fmt.Errorf("min samples must be >= 0, not %d", o.MinSamples)
	case o.MaxChanges < 0 || o.MaxChanges > math.MaxInt32:
		return fmt.Errorf("max changes must be >= 0 (0: %d), not %d", dbscan.DefaultMaxChanges, o.MaxChanges)
	case o.AnyChanges && o.MaxChanges != 0:
		return fmt.Errorf("max changes %d with any changes: give one or the other", o.MaxChanges)
	case o.Partitions < 0:
		return fmt.Errorf("partitions must be >= 0, not %d", o.Partitions)
	}
	return nil
}

// maxChanges is the young-page threshold as dbscan.Source takes it
// (negative: none).
func (o ClusterOptions) maxChanges() int {
	switch {
	case o.AnyChanges:
		return -1
	case o.MaxChanges == 0:
		return dbscan.DefaultMaxChanges
	}
	return o.MaxChanges
}

// ClusterResult reports a Cluster run.
type ClusterResult struct {
	// Dir is the URI of the published result, clusters/<Name>.
	Dir  string
	Name string
	// Params is the result's params/ row: the parameters used and the
	// counts of points, clusters, core, border and noise points.
	Params dbscan.Parameters
	// Samples counts the samples chosen.
	Samples int64
	// Duration is the wall time of the whole run.
	Duration time.Duration
}

// Cluster runs the partitioned DBSCAN (dbscan.Run) over the young pages of
// the crawl's CrawlDB, standardized, and publishes clusters/<timestamp>/
// (assignment/, centres/, samples/, params/) with one rename: a failed or
// killed run leaves no result (a killed run leaves a clusters/_work-*
// directory, removed by the next run). updatedb with the dynamic schedule
// applies the newest result.
//
// Cluster only reads the CrawlDB, but it holds the CrawlDB lock for the
// run (as other jobs do): an updatedb installing a new version would
// remove the files it reads, and the lock also lets it repair an
// interrupted install first. It cannot corrupt the CrawlDB either way.
func Cluster(ctx context.Context, env Env, o ClusterOptions) (res *ClusterResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := (dbscan.Params{Eps: o.Eps, MinPts: o.MinPts}).Validate(); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	log := env.log().With("job", JobCluster)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	lock, err := env.lockRecovered(cp, JobCluster, log)
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	if ok, err := storage.Exists(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName)); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	} else if !ok {
		return nil, fmt.Errorf("cluster: %s has no CrawlDB (run inject first)", cp.dbURI)
	}
	name, err := newClusterName(cp, o.Now, log)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	out := storage.Join(ClustersDir(cp.crawl), name)
	sum, err := dbscan.Run(ctx, env.Engine, dbscan.JobConfig{
		Source:      dbscan.Source{CrawlDB: storage.Join(cp.dbURI, crawldb.CurrentName), MaxChanges: o.maxChanges()},
		Work:        storage.Join(ClustersDir(cp.crawl), clusterWorkPrefix+name),
		Output:      out,
		Eps:         o.Eps,
		MinPts:      o.MinPts,
		Standardize: true,
		Partitions:  o.Partitions,
		MinSamples:  o.MinSamples,
		SampleRate:  o.SampleRate,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	samples, err := dbscan.ReadOutput[dbscan.Sample](env.resolver(), storage.Join(out, dbscan.DirSamples))
	if err != nil {
		return nil, fmt.Errorf("cluster: read the samples of %s: %w", out, err)
	}
	res = &ClusterResult{Dir: out, Name: name, Params: sum.Params, Samples: int64(len(samples)), Duration: time.Since(start)}
	p := sum.Params
	log.Info("cluster done", "result", out, "points", p.Points, "clusters", p.Clusters, "core", p.Core,
		"border", p.Border, "noise", p.Noise, "samples", res.Samples, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// newClusterName removes the work directories killed runs left in
// clusters/ and returns the new result's name: now (zero: the wall clock)
// as yyyyMMddHHmmss, moved on by a second while the name is taken. The
// caller holds the CrawlDB lock.
func newClusterName(cp crawlPaths, now time.Time, log *slog.Logger) (string, error) {
	cdir := path.Join(path.Dir(cp.dbPath), dirClusters)
	if err := cp.fs.MkdirAll(cdir); err != nil {
		return "", err
	}
	infos, err := cp.fs.ReadDir(cdir)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, fi := range infos {
		taken[fi.Name()] = true
		if strings.HasPrefix(fi.Name(), clusterWorkPrefix) {
			log.Info("removing the work directory of an interrupted cluster run", "dir", fi.Name())
			if err := cp.fs.RemoveAll(path.Join(cdir, fi.Name())); err != nil {
				return "", fmt.Errorf("remove %s: %w", fi.Name(), err)
			}
		}
	}
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Second)
	name := now.Format(clusterNameLayout)
	for taken[name] {
		now = now.Add(time.Second)
		name = now.Format(clusterNameLayout)
	}
	return name, nil
}

// SuggestClusterEps reads the CrawlDB's young pages (as Cluster does with
// o, standardized) and returns dbscan.SuggestEps' knee of their k-distance
// curve for o.MinPts, and the number of points; o.Eps is not used. It
// reads the whole set of young pages' features into memory, without the
// lock (it writes nothing).
func SuggestClusterEps(ctx context.Context, env Env, o ClusterOptions) (eps float64, points int, err error) {
	if err := o.Validate(); err != nil {
		return 0, 0, fmt.Errorf("cluster: suggest eps: %w", err)
	}
	minPts, maxChanges := o.MinPts, o.maxChanges()
	if minPts < 2 {
		return 0, 0, fmt.Errorf("cluster: suggest eps: minPts %d (want >= 2: the knee is of the distance to the (minPts-1)-th neighbour)", minPts)
	}
	cp, err := env.paths()
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: %w", err)
	}
	pts, err := youngPoints(ctx, cp, maxChanges)
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: suggest eps: %w", err)
	}
	if pts.Len() < minPts {
		return 0, pts.Len(), fmt.Errorf("cluster: suggest eps: %d young pages, fewer than minPts %d", pts.Len(), minPts)
	}
	if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
		return 0, 0, fmt.Errorf("cluster: suggest eps: %w", err)
	}
	eps, err = dbscan.SuggestEps(pts, minPts)
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: suggest eps: %w", err)
	}
	return eps, pts.Len(), nil
}

// youngPoints reads the feature vectors of the current CrawlDB's young
// pages (change count at most maxChanges; negative: any).
func youngPoints(ctx context.Context, cp crawlPaths, maxChanges int) (dbscan.Points, error) {
	parts, err := parquetio.PartFiles(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return dbscan.Points{}, fmt.Errorf("list the CrawlDB: %w", err)
	}
	pts := dbscan.NewPoints(dbscan.NumFeatures, 0)
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return dbscan.Points{}, err
		}
		err := readParquet(cp.fs, p, func(r featureRow) error {
			d := crawldb.Datum{Status: r.Status, FetchCount: r.FetchCount, ChangeCount: r.ChangeCount}
			if !dbscan.YoungPage(d, maxChanges) {
				return nil
			}
			x := dbscan.FeatureVector(r.Features)
			return pts.Append(x[:])
		})
		if err != nil {
			return dbscan.Points{}, err
		}
	}
	return pts, nil
}

// featureRow is the projection of a Datum SuggestClusterEps reads.
type featureRow struct {
	Status      crawldb.Status   `parquet:"status"`
	FetchCount  int32            `parquet:"fetch_count"`
	ChangeCount int32            `parquet:"change_count"`
	Features    crawldb.Features `parquet:"features"`
}

// readParquet calls fn for every row of one Parquet file, as T.
func readParquet[T any](fsys storage.FS, p string, fn func(T) error, opts ...parquetio.ReaderOption) error {
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	r, err := parquetio.Open[T](f, p, opts...)
	if err != nil {
		f.Close()
		return err
	}
	defer r.Close()
	for row, err := range r.All() {
		if err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// ClusterResults lists the crawl's published cluster results (names,
// oldest first). A result is published when its params/_SUCCESS exists.
func ClusterResults(env Env) ([]string, error) {
	cp, err := env.paths()
	if err != nil {
		return nil, err
	}
	return clusterResults(cp)
}

func clusterResults(cp crawlPaths) ([]string, error) {
	cdir := path.Join(path.Dir(cp.dbPath), dirClusters)
	infos, err := cp.fs.ReadDir(cdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", cdir, err)
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir() || !clusterName.MatchString(fi.Name()) {
			continue
		}
		ok, err := storage.Exists(cp.fs, path.Join(cdir, fi.Name(), dbscan.DirParams, "_SUCCESS"))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, fi.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// clustersFile, inside a CrawlDB version, records the cluster result whose
// assignment the version holds and the cluster periods updatedb computed.
// It is written before the version is installed, so the install records
// both atomically. Only updatedb writes it (it carries it forward from the
// current version); a version without it (after inject) makes the next
// dynamic updatedb apply the newest result again, which is harmless: the
// same result gives every page the same cluster id and sample flag.
const clustersFile = "_clusters.json"

// ClustersApplied is the content of a CrawlDB version's _clusters.json.
type ClustersApplied struct {
	// Result is the URI of the applied clusters/<Name> directory.
	Result string `json:"result"`
	// Name is the result's name.
	Name string `json:"name"`
	// AppliedAt is when updatedb applied it.
	AppliedAt time.Time `json:"applied_at"`
	// PeriodsAt is when the periods below were computed (every dynamic
	// updatedb computes them again).
	PeriodsAt time.Time `json:"periods_at"`
	// Periods are the cluster periods the last dynamic updatedb used.
	Periods crawldb.ClusterPeriods `json:"periods"`
	// Samples counts, per cluster, the samples that had a period.
	Samples map[int32]int64 `json:"samples"`
}

// ReadClustersApplied reads the current CrawlDB version's record of its
// cluster result; ok is false if it has none.
func ReadClustersApplied(env Env) (a ClustersApplied, ok bool, err error) {
	cp, err := env.paths()
	if err != nil {
		return a, false, err
	}
	return readClustersApplied(cp)
}

func readClustersApplied(cp crawlPaths) (a ClustersApplied, ok bool, err error) {
	p := path.Join(cp.dbPath, crawldb.CurrentName, clustersFile)
	data, err := storage.ReadFile(cp.fs, p)
	if errors.Is(err, fs.ErrNotExist) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("read %s: %w", p, err)
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, false, fmt.Errorf("parse %s: %w", p, err)
	}
	return a, true, nil
}

// dynamicPlan is what a dynamic updatedb does about clusters.
type dynamicPlan struct {
	// apply is the result to apply in this run (nil for none).
	apply *clusterApply
	// record is the new version's _clusters.json (Result "" if no result
	// was ever applied).
	record ClustersApplied
	// scanned counts the CrawlDB rows the periods pre-pass read.
	scanned int64
	// took is the pre-pass's wall time.
	took time.Duration
}

// samplePeriodRow is the projection of a Datum the periods pre-pass reads.
type samplePeriodRow struct {
	URL           string                `parquet:"url"`
	ClusterID     int32                 `parquet:"cluster_id"`
	ClusterSample bool                  `parquet:"cluster_sample"`
	ChangeCount   int32                 `parquet:"change_count"`
	History       []crawldb.Observation `parquet:"history,list"`
}

// planDynamic decides whether a dynamic updatedb applies a new cluster
// result (the newest published one, if the current version does not hold
// it already) and computes the cluster periods it schedules with: a
// pre-pass over the current CrawlDB reading only the URL, cluster and
// history columns (samplePeriodRow), averaging ObservedChangePeriod over
// each cluster's samples. When a result is applied, its samples/ say which
// pages are samples (and of which cluster); otherwise the rows' own
// cluster id and sample flag do. The caller holds the lock.
func planDynamic(ctx context.Context, env Env, cp crawlPaths, now time.Time) (*dynamicPlan, error) {
	start := time.Now()
	prev, _, err := readClustersApplied(cp)
	if err != nil {
		return nil, err
	}
	plan := &dynamicPlan{record: prev}
	names, err := clusterResults(cp)
	if err != nil {
		return nil, err
	}
	var sampleOf map[string]int32
	if len(names) > 0 && names[len(names)-1] > prev.Name {
		name := names[len(names)-1]
		if plan.apply, sampleOf, err = readClusterResult(env, storage.Join(ClustersDir(cp.crawl), name)); err != nil {
			return nil, err
		}
		plan.record = ClustersApplied{Result: plan.apply.Result, Name: name, AppliedAt: now.UTC()}
	}
	acc, scanned, err := scanPeriods(ctx, env, cp, sampleOf)
	if err != nil {
		return nil, err
	}
	plan.scanned = scanned
	plan.record.Periods = acc.Periods()
	plan.record.PeriodsAt = now.UTC()
	plan.record.Samples = map[int32]int64{}
	for id := range plan.record.Periods {
		plan.record.Samples[id] = acc.Samples(id)
	}
	plan.took = time.Since(start)
	return plan, nil
}

// readClusterResult reads what applying the cluster result at uri takes:
// its young-page threshold (from params/) and its samples' labels by URL.
func readClusterResult(env Env, uri string) (*clusterApply, map[string]int32, error) {
	params, err := dbscan.ReadOutput[dbscan.Parameters](env.resolver(), storage.Join(uri, dbscan.DirParams))
	if err != nil {
		return nil, nil, fmt.Errorf("read the parameters of %s: %w", uri, err)
	}
	if len(params) != 1 {
		return nil, nil, fmt.Errorf("%s has %d rows of parameters, want 1", uri, len(params))
	}
	apply := &clusterApply{Result: uri}
	if mc := params[0].MaxChanges; mc < 0 {
		apply.AnyChanges = true
	} else {
		apply.MaxChanges = int(mc)
	}
	samples, err := dbscan.ReadOutput[dbscan.Sample](env.resolver(), storage.Join(uri, dbscan.DirSamples))
	if err != nil {
		return nil, nil, fmt.Errorf("read the samples of %s: %w", uri, err)
	}
	sampleOf := make(map[string]int32, len(samples))
	for _, s := range samples {
		sampleOf[s.Key] = s.Label
	}
	return apply, sampleOf, nil
}

// scanPeriods is the periods pre-pass: it reads the current CrawlDB's
// parts in parallel, each into its own accumulator, and merges them in
// part order. With sampleOf (a result being applied) the samples are its
// samples; else the rows' own cluster id and sample flag say. scanned
// counts the rows read.
func scanPeriods(ctx context.Context, env Env, cp crawlPaths, sampleOf map[string]int32) (acc crawldb.PeriodAccumulator, scanned int64, err error) {
	parts, err := parquetio.PartFiles(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName))
	if errors.Is(err, fs.ErrNotExist) {
		parts = nil
	} else if err != nil {
		return acc, 0, fmt.Errorf("list the CrawlDB: %w", err)
	}
	accs := make([]crawldb.PeriodAccumulator, len(parts))
	counts := make([]int64, len(parts))
	errs := make([]error, len(parts))
	forEachParallel(len(parts), env.parallelism(), func(i int) {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			return
		}
		errs[i] = readParquet(cp.fs, parts[i], func(r samplePeriodRow) error {
			counts[i]++
			d := crawldb.Datum{ClusterID: r.ClusterID, ClusterSample: r.ClusterSample, ChangeCount: r.ChangeCount, History: r.History}
			if sampleOf != nil {
				label, ok := sampleOf[r.URL]
				d.ClusterID, d.ClusterSample = label, ok
			}
			accs[i].Add(&d)
			return nil
		}, parquetio.AllowMissingColumns())
	})
	for i := range parts {
		if errs[i] != nil {
			return acc, 0, fmt.Errorf("cluster periods: %s: %w", parts[i], errs[i])
		}
		acc.Merge(&accs[i])
		scanned += counts[i]
	}
	return acc, scanned, nil
}

// forEachParallel calls fn(i) for every i in [0, n) on at most workers
// goroutines, and returns when every call has.
func forEachParallel(n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// clusterValue is a page's row of the applied cluster result in updatedb's
// shuffle: its label (from assignment/) and whether it is a sample (from
// samples/).
type clusterValue struct {
	Label  int32
	Sample bool
}

// applyCluster sets d's cluster id and sample flag from the applied result
// (cv nil: the page is not in it): a page in the assignment takes its
// label and is a sample if samples/ lists it; a page not in it stops being
// a sample and, if it is young (ChangeCount <= clusterMaxChanges, or any
// with clusterAnyChanges), gets -1
// (pages past the threshold keep their last cluster id, for information:
// the schedule no longer uses it).
func (m *dbMerger) applyCluster(d *crawldb.Datum, cv *clusterValue) {
	if !m.applyClusters {
		return
	}
	if cv != nil {
		d.ClusterID = cv.Label
		d.ClusterSample = cv.Sample && cv.Label >= 0
		return
	}
	d.ClusterSample = false
	if m.clusterAnyChanges || int(d.ChangeCount) <= m.clusterMaxChanges {
		d.ClusterID = -1
	}
}

// writeClustersRecord writes the _clusters.json of the new CrawlDB version
// in dir: the dynamic plan's record, or a copy of the current version's
// (if any).
func writeClustersRecord(cp crawlPaths, dir string, plan *dynamicPlan) error {
	dst := path.Join(dir, clustersFile)
	if plan == nil {
		data, err := storage.ReadFile(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName, clustersFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the CrawlDB's cluster record: %w", err)
		}
		return storage.WriteFileAtomic(cp.fs, dst, data)
	}
	if plan.record.Result == "" && len(plan.record.Periods) == 0 {
		return nil // nothing was ever applied
	}
	data, err := json.MarshalIndent(plan.record, "", "  ")
	if err != nil {
		return fmt.Errorf("cluster record: %w", err)
	}
	if err := storage.WriteFileAtomic(cp.fs, dst, data); err != nil {
		return fmt.Errorf("write the cluster record: %w", err)
	}
	return nil
}
