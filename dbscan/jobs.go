package dbscan

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// The engine jobs of partitioned DBSCAN, by name (see Register).
const (
	JobStats   = "dbscan-stats"
	JobLocal   = "dbscan-local"
	JobJoin    = "dbscan-join"
	JobLabel   = "dbscan-label"
	JobCentres = "dbscan-centres"
)

// DefaultMaxChanges is the change count up to which a page is young (M <=
// 16 in Hu and Wu's page-update prediction paper) when Source.MaxChanges
// is 0.
const DefaultMaxChanges = 16

// DefaultSampleSize is the size of the sample the partitions are planned
// on when JobConfig.SampleSize is 0.
const DefaultSampleSize = 1 << 14

// Source says where the partitioned jobs read points: exactly one of
// Points and CrawlDB.
type Source struct {
	// Points is a Parquet file or directory of PointRow rows.
	Points string
	// CrawlDB is a directory of crawldb.Datum part files (a CrawlDB's
	// current directory): its young pages (see YoungPage) are the points,
	// keyed by URL, with FeatureVector as coordinates.
	CrawlDB string
	// MaxChanges is the change count up to which a page is young: 0 means
	// DefaultMaxChanges, a negative value no limit.
	MaxChanges int
}

// YoungPage reports whether a CrawlDB row is a point of the CrawlDB
// source: a page that was fetched (db_fetched or db_notmodified, with at
// least one successful fetch, so its features describe real content)
// whose change count is at most maxChanges (negative: any).
func YoungPage(d crawldb.Datum, maxChanges int) bool {
	if d.Status != crawldb.StatusDBFetched && d.Status != crawldb.StatusDBNotModified {
		return false
	}
	return d.FetchCount > 0 && (maxChanges < 0 || int(d.ChangeCount) <= maxChanges)
}

// The jobs' output names (work subdirectories) and counters.
const (
	outStats        = "stats"
	outSample       = "sample"
	outOwned        = "owned"
	outComps        = "comps"
	outLinks        = "links"
	outShared       = "shared"
	outEdges        = "edges"
	outCands        = "cands"
	outMembers      = "members"
	sourcePoints    = "points"
	sourceCrawlDB   = "crawldb"
	ctrPoints       = "points"
	ctrHalo         = "halo_points"
	ctrCore         = "core_points"
	ctrBorder       = "border_points"
	ctrNoise        = "noise_points"
	ctrClusters     = "clusters"
	ctrSkippedPages = "pages_not_young"
)

// Register adds the partitioned DBSCAN jobs to r under their names
// (JobStats, ...), for the Hadoop Streaming task entry: a task decodes a
// job's spec from its Conf and builds the job Run described. The label
// job reads its side file (the local clusters' labels) through the task's
// Storage.
func Register(r mapreduce.Registry) {
	mapreduce.Register[statsSpec](r)
	mapreduce.Register[localSpec](r)
	mapreduce.Register[joinSpec](r)
	mapreduce.Register[labelSpec](r)
	mapreduce.Register[centresSpec](r)
}

// Validate checks that exactly one of Points and CrawlDB is set.
func (s Source) Validate() error {
	switch {
	case s.Points != "" && s.CrawlDB != "":
		return errors.New("dbscan: the source is points or a CrawlDB, not both")
	case s.Points == "" && s.CrawlDB == "":
		return errors.New("dbscan: no source")
	}
	return nil
}

// kind is "points" or "crawldb".
func (s Source) kind() string {
	if s.CrawlDB != "" {
		return sourceCrawlDB
	}
	return sourcePoints
}

// uri is the source's input: Points or CrawlDB.
func (s Source) uri() string {
	if s.CrawlDB != "" {
		return s.CrawlDB
	}
	return s.Points
}

// maxChanges is MaxChanges with 0 meaning DefaultMaxChanges (negative: no
// limit).
func (s Source) maxChanges() int {
	if s.MaxChanges == 0 {
		return DefaultMaxChanges
	}
	return s.MaxChanges
}

// checkScaler checks that a job's scaler (nil: none) has as many
// deviations as means, all finite (as its JSON must be).
func checkScaler(sc *Scaler) error {
	if sc == nil {
		return nil
	}
	if len(sc.Mean) != len(sc.Std) {
		return fmt.Errorf("dbscan: scaler of %d means and %d deviations", len(sc.Mean), len(sc.Std))
	}
	for k := range sc.Mean {
		if m, s := sc.Mean[k], sc.Std[k]; math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("dbscan: scaler: dimension %d has mean %v and deviation %v", k, m, s)
		}
	}
	return nil
}

// input is the source as a job input mapped by fn, which gets every
// point's key and coordinates, standardized by sc unless sc is nil.
func input[V any](s Source, sc *Scaler, fn func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[V]) error) mapreduce.Input[V] {
	check := func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[V]) error {
		for k, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dbscan: point %q: coordinate %d is %v", key, k, v)
			}
		}
		if sc != nil {
			if len(x) != len(sc.Mean) {
				return fmt.Errorf("dbscan: point %q has %d coordinates, the scaler %d", key, len(x), len(sc.Mean))
			}
			x = slices.Clone(x)
			sc.Transform(x)
		}
		return fn(t, key, x, emit)
	}
	if s.CrawlDB != "" {
		maxChanges := s.maxChanges()
		return mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[V]) error {
			if !YoungPage(d, maxChanges) {
				t.Count(ctrSkippedPages, 1)
				return nil
			}
			x := FeatureVector(d.Features)
			return check(t, d.URL, x[:], emit)
		}, mapreduce.AllowMissingColumns())
	}
	return mapreduce.From(s.Points, func(t *mapreduce.Task, r PointRow, emit mapreduce.Emit[V]) error {
		return check(t, r.Key, r.X, emit)
	})
}

// ---- dbscan-stats: moments and a sample of the points ----

// sampleRow is a point of the sample, which keeps the points of smallest
// Hash (FNV-64a of the key), ties by key: a sample that merges.
type sampleRow struct {
	Hash uint64    `parquet:"hash"`
	Key  string    `parquet:"key"`
	X    []float64 `parquet:"x,list"`
}

// statsValue is the stats job's shuffle value: one point (Point set) or
// accumulated moments and sample.
type statsValue struct {
	Point  *sampleRow
	M      Moments
	Sample []sampleRow
}

// statsOut is the stats job's output: one Moments row, and the sample.
type statsOut struct {
	M      *Moments
	Sample *sampleRow
}

func keyHash(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// mergeStats merges stats values in their order.
func mergeStats(values iter.Seq[statsValue], size int) (statsValue, error) {
	var acc statsValue
	for v := range values {
		if v.Point != nil {
			if err := acc.M.Add(v.Point.X); err != nil {
				return acc, fmt.Errorf("point %q: %w", v.Point.Key, err)
			}
			acc.Sample = append(acc.Sample, *v.Point)
		} else {
			if err := acc.M.Merge(v.M); err != nil {
				return acc, err
			}
			acc.Sample = append(acc.Sample, v.Sample...)
		}
		if len(acc.Sample) > 2*size {
			acc.Sample = cutSample(acc.Sample, size)
		}
	}
	acc.Sample = cutSample(acc.Sample, size)
	return acc, nil
}

func cutSample(s []sampleRow, size int) []sampleRow {
	slices.SortFunc(s, func(a, b sampleRow) int { return cmp.Or(cmp.Compare(a.Hash, b.Hash), strings.Compare(a.Key, b.Key)) })
	return slices.Clip(s[:min(len(s), size)])
}

// statsSpec is the stats job: the points' moments (one Moments row in
// Stats) and the sample the boxes are planned on (SampleSize sampleRows in
// Sample), all in one reduce task.
type statsSpec struct {
	// Source is where the points are; they are read as given.
	Source Source
	// SampleSize is the number of points the sample keeps (at least 1).
	SampleSize int
	// Stats and Sample are the outputs.
	Stats, Sample string
}

// JobName is JobStats.
func (statsSpec) JobName() string { return JobStats }

// Job builds the stats job.
func (s statsSpec) Job() (mapreduce.Runnable, error) {
	if err := s.Source.Validate(); err != nil {
		return nil, err
	}
	if s.SampleSize < 1 {
		return nil, fmt.Errorf("dbscan: a sample of %d points", s.SampleSize)
	}
	size := s.SampleSize
	return &mapreduce.Job[statsValue, statsOut]{
		Name: JobStats,
		Inputs: []mapreduce.Input[statsValue]{input(s.Source, nil, func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[statsValue]) error {
			emit("", statsValue{Point: &sampleRow{Hash: keyHash(key), Key: key, X: x}})
			return nil
		})},
		Combine: func(t *mapreduce.Task, _ string, values iter.Seq[statsValue], emit func(statsValue)) error {
			acc, err := mergeStats(values, size)
			if err != nil {
				return err
			}
			emit(acc)
			return nil
		},
		Reduce: func(t *mapreduce.Task, _ string, values iter.Seq[statsValue], out func(statsOut)) error {
			acc, err := mergeStats(values, size)
			if err != nil {
				return err
			}
			t.Count(ctrPoints, acc.M.N)
			out(statsOut{M: &acc.M})
			for i := range acc.Sample {
				out(statsOut{Sample: &acc.Sample[i]})
			}
			return nil
		},
		Outputs: []mapreduce.Output[statsOut]{
			mapreduce.WriteRouted(s.Stats, func(o statsOut) (Moments, bool) {
				if o.M == nil {
					return Moments{}, false
				}
				return *o.M, true
			}),
			mapreduce.WriteRouted(s.Sample, func(o statsOut) (sampleRow, bool) {
				if o.Sample == nil {
					return sampleRow{}, false
				}
				return *o.Sample, true
			}),
		},
	}, nil
}

// ---- dbscan-local: each box clusters its points ----

// pointValue is a point sent to a box: its own (Halo false) or from a
// neighbouring box.
type pointValue struct {
	Halo bool
	Key  string
	X    []float64
}

// localRow is the local job's output: one of its four row kinds.
type localRow struct {
	Owned  *ownedRow
	Comp   *compRow
	Link   *linkRow
	Shared *sharedRow
}

func boxKey(b int) string { return fmt.Sprintf("%05d", b) }

// boxPartitioner sends box b to reduce task b mod n.
func boxPartitioner(key string, n int) int {
	b, err := strconv.Atoi(key)
	if err != nil || b < 0 {
		return mapreduce.HashPartitioner(key, n)
	}
	return b % n
}

// localSpec is the local job: each box clusters its own points and those
// of its neighbours within Eps of it (its halo), on one reduce call per
// box, writing the box's owned points, local clusters, halo links and
// shared points.
type localSpec struct {
	// Source is where the points are.
	Source Source
	// Scaler standardizes the points; nil means they are used as given.
	Scaler *Scaler
	// Eps and MinPts are DBSCAN's parameters (see Params).
	Eps    float64
	MinPts int
	// Partitioning is the boxes.
	Partitioning Partitioning
	// Reduces is the number of reduce tasks (at most one per box).
	Reduces int
	// TaskWorkers is the goroutines a box's clustering uses; 0 means the
	// task's GOMAXPROCS divided by the boxes (at least 1).
	TaskWorkers int
	// Owned, Comps, Links and Shared are the outputs.
	Owned, Comps, Links, Shared string
}

// JobName is JobLocal.
func (localSpec) JobName() string { return JobLocal }

// Job builds the local job.
func (s localSpec) Job() (mapreduce.Runnable, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	p := Params{Eps: s.Eps, MinPts: s.MinPts, Workers: s.workers()}
	part := s.Partitioning
	eps2 := p.Eps * p.Eps
	return &mapreduce.Job[pointValue, localRow]{
		Name: JobLocal,
		Inputs: []mapreduce.Input[pointValue]{input(s.Source, s.Scaler, func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[pointValue]) error {
			if len(x) != part.Dim {
				return fmt.Errorf("dbscan: point %q has %d coordinates, the partitioning %d", key, len(x), part.Dim)
			}
			emit(boxKey(part.Owner(x)), pointValue{Key: key, X: x})
			for _, h := range part.Halo(x, eps2, nil) {
				t.Count(ctrHalo, 1)
				emit(boxKey(h), pointValue{Halo: true, Key: key, X: x})
			}
			return nil
		})},
		Partition: boxPartitioner,
		NumReduce: min(s.Reduces, part.Boxes),
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[pointValue], out func(localRow)) error {
			return clusterBox(t, key, values, &part, p, out)
		},
		Outputs: []mapreduce.Output[localRow]{
			mapreduce.WriteRouted(s.Owned, func(o localRow) (ownedRow, bool) { return deref(o.Owned) }),
			mapreduce.WriteRouted(s.Comps, func(o localRow) (compRow, bool) { return deref(o.Comp) }),
			mapreduce.WriteRouted(s.Links, func(o localRow) (linkRow, bool) { return deref(o.Link) }),
			mapreduce.WriteRouted(s.Shared, func(o localRow) (sharedRow, bool) { return deref(o.Shared) }),
		},
	}, nil
}

// validate checks the spec's source, scaler, boxes and DBSCAN
// parameters.
func (s localSpec) validate() error {
	if err := s.Source.Validate(); err != nil {
		return err
	}
	if err := checkScaler(s.Scaler); err != nil {
		return err
	}
	if err := s.Partitioning.Validate(); err != nil {
		return err
	}
	return Params{Eps: s.Eps, MinPts: s.MinPts}.Validate()
}

// workers is TaskWorkers, or the task's GOMAXPROCS divided by the boxes
// (at least 1) when it is 0.
func (s localSpec) workers() int {
	if s.TaskWorkers > 0 {
		return s.TaskWorkers
	}
	procs := runtime.GOMAXPROCS(0)
	return max(1, procs/min(s.Partitioning.Boxes, procs))
}

// clusterBox is the local job's reduce: it clusters the box key's owned
// and halo points (localStep) and writes its rows.
func clusterBox(t *mapreduce.Task, key string, values iter.Seq[pointValue], part *Partitioning, p Params, out func(localRow)) error {
	box, err := strconv.Atoi(key)
	if err != nil || box < 0 || box >= part.Boxes {
		return fmt.Errorf("dbscan: no box %q", key)
	}
	var owned, halo []keyedPoint
	for v := range values {
		if v.Halo {
			halo = append(halo, keyedPoint{v.Key, v.X})
		} else {
			owned = append(owned, keyedPoint{v.Key, v.X})
		}
	}
	t.Log.Info("clustering a box", "box", box, "points", len(owned), "halo", len(halo), "workers", p.Workers)
	return localStep(t.Ctx, box, owned, halo, part.Dim, part, p, localOut{
		owned:  func(r ownedRow) { out(localRow{Owned: &r}) },
		comp:   func(r compRow) { out(localRow{Comp: &r}) },
		link:   func(r linkRow) { out(localRow{Link: &r}) },
		shared: func(r sharedRow) { out(localRow{Shared: &r}) },
	})
}

func deref[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

// ---- dbscan-join: halo points meet their own box's result ----

type joinValue struct {
	Own  *sharedRow
	Link *linkRow
}

type joinRow struct {
	Edge *edgeRow
	Cand *candRow
}

// joinSpec is the join job: each halo point's links (Links) meet its own
// box's row for it (Shared), giving edges between local clusters (Edges)
// and the point's candidate clusters of other boxes (Cands).
type joinSpec struct {
	// Reduces is the number of reduce tasks.
	Reduces int
	// Shared and Links are the inputs (the local job's outputs).
	Shared, Links string
	// Edges and Cands are the outputs.
	Edges, Cands string
}

// JobName is JobJoin.
func (joinSpec) JobName() string { return JobJoin }

// Job builds the join job.
func (s joinSpec) Job() (mapreduce.Runnable, error) {
	return &mapreduce.Job[joinValue, joinRow]{
		Name: JobJoin,
		Inputs: []mapreduce.Input[joinValue]{
			mapreduce.From(s.Shared, func(t *mapreduce.Task, r sharedRow, emit mapreduce.Emit[joinValue]) error {
				emit(r.Key, joinValue{Own: &r})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(s.Links, func(t *mapreduce.Task, r linkRow, emit mapreduce.Emit[joinValue]) error {
				emit(r.Key, joinValue{Link: &r})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		NumReduce: s.Reduces,
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[joinValue], out func(joinRow)) error {
			own, ls, err := joinGroup(key, values, func(v joinValue) (*sharedRow, *linkRow) { return v.Own, v.Link })
			if err != nil {
				return err
			}
			if len(ls) == 0 {
				return nil
			}
			return joinStep(key, own, ls,
				func(e edgeRow) { out(joinRow{Edge: &e}) },
				func(c candRow) { out(joinRow{Cand: &c}) })
		},
		Outputs: []mapreduce.Output[joinRow]{
			mapreduce.WriteRouted(s.Edges, func(o joinRow) (edgeRow, bool) { return deref(o.Edge) }),
			mapreduce.WriteRouted(s.Cands, func(o joinRow) (candRow, bool) { return deref(o.Cand) }),
		},
	}, nil
}

// joinGroup splits a reduce group of a join by key into the key's own row
// (at most one) and its other rows; parts tells which a value holds.
func joinGroup[V, O, M any](key string, values iter.Seq[V], parts func(V) (*O, *M)) (*O, []M, error) {
	var own *O
	var ms []M
	for v := range values {
		o, m := parts(v)
		switch {
		case o != nil && own != nil:
			return nil, nil, fmt.Errorf("dbscan: key %q is given twice", key)
		case o != nil:
			own = o
		case m != nil:
			ms = append(ms, *m)
		}
	}
	return own, ms, nil
}

// ---- dbscan-label: every point's label ----

type labelValue struct {
	Own  *ownedRow
	Cand *candRow
}

// memberRow is a clustered point, for the centres job.
type memberRow struct {
	Label int32     `parquet:"label"`
	Key   string    `parquet:"key"`
	Core  bool      `parquet:"core"`
	X     []float64 `parquet:"x,list"`
}

type labelOut struct {
	Assign *Assignment
	Member *memberRow
}

// labelSpec is the label job: each point's own box's row (Owned) meets
// its candidate clusters of other boxes (Cands) and the labels of the
// local clusters (Labels, a side file), giving its Assignment and, for a
// clustered point, its memberRow for the centres job.
type labelSpec struct {
	// Reduces is the number of reduce tasks.
	Reduces int
	// Labels is the Parquet file of labelRows the driver wrote: every
	// local cluster's label.
	Labels string
	// Owned and Cands are the inputs.
	Owned, Cands string
	// Assignment and Members are the outputs.
	Assignment, Members string
}

// JobName is JobLabel.
func (labelSpec) JobName() string { return JobLabel }

// Job builds the label job. It reads Labels through the task's Storage
// when a reduce task first needs them, once per process.
func (s labelSpec) Job() (mapreduce.Runnable, error) {
	labels := &labelTable{uri: s.Labels}
	return &mapreduce.Job[labelValue, labelOut]{
		Name: JobLabel,
		Inputs: []mapreduce.Input[labelValue]{
			mapreduce.From(s.Owned, func(t *mapreduce.Task, r ownedRow, emit mapreduce.Emit[labelValue]) error {
				emit(r.Key, labelValue{Own: &r})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(s.Cands, func(t *mapreduce.Task, r candRow, emit mapreduce.Emit[labelValue]) error {
				emit(r.Key, labelValue{Cand: &r})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		NumReduce: s.Reduces,
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[labelValue], out func(labelOut)) error {
			get, err := labels.of(t)
			if err != nil {
				return err
			}
			return labelPoint(t, key, values, get, out)
		},
		Outputs: []mapreduce.Output[labelOut]{
			mapreduce.WriteRouted(s.Assignment, func(o labelOut) (Assignment, bool) { return deref(o.Assign) }),
			mapreduce.WriteRouted(s.Members, func(o labelOut) (memberRow, bool) { return deref(o.Member) }),
		},
	}, nil
}

// labelPoint is the label job's reduce: the point key's Assignment
// (labelStep), counted as core, border or noise, and its memberRow if it
// is in a cluster.
func labelPoint(t *mapreduce.Task, key string, values iter.Seq[labelValue], get func(compKey) (int32, bool), out func(labelOut)) error {
	own, cs, err := joinGroup(key, values, func(v labelValue) (*ownedRow, *candRow) { return v.Own, v.Cand })
	if err != nil {
		return err
	}
	if own == nil {
		return fmt.Errorf("dbscan: point %q has candidate clusters but no box owns it", key)
	}
	a, err := labelStep(*own, cs, get)
	if err != nil {
		return err
	}
	switch {
	case a.Core:
		t.Count(ctrCore, 1)
	case a.Label == Noise:
		t.Count(ctrNoise, 1)
	default:
		t.Count(ctrBorder, 1)
	}
	out(labelOut{Assign: &a})
	if a.Label != Noise {
		out(labelOut{Member: &memberRow{Label: a.Label, Key: a.Key, Core: a.Core, X: own.X}})
	}
	return nil
}

// labelTable is the label job's view of its side file: the labels of the
// local clusters, read once per process, when a reduce task first asks.
type labelTable struct {
	uri    string
	mu     sync.Mutex
	labels map[compKey]int32 // nil until read
}

// labelsState is what a reduce task of the label job keeps in Task.State:
// the lookup into the table, so that it takes the lock once per task.
type labelsState func(compKey) (int32, bool)

// of returns the labels' lookup for task t, reading the table through
// t.Storage the first time any task asks (a failed read is tried again
// by the next task).
func (lt *labelTable) of(t *mapreduce.Task) (labelsState, error) {
	if get, ok := t.State.(labelsState); ok {
		return get, nil
	}
	labels, err := lt.read(t.Storage)
	if err != nil {
		return nil, err
	}
	get := labelsState(func(k compKey) (int32, bool) { l, ok := labels[k]; return l, ok })
	t.State = get
	return get, nil
}

// read returns the table, reading it through res (nil: the default
// resolver) unless it has been read.
func (lt *labelTable) read(res mapreduce.Resolver) (map[compKey]int32, error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.labels != nil {
		return lt.labels, nil
	}
	if res == nil {
		res = storage.NewResolver()
	}
	rows, err := readRows[labelRow](res, lt.uri)
	if err != nil {
		return nil, fmt.Errorf("dbscan: read the local clusters' labels: %w", err)
	}
	labels := make(map[compKey]int32, len(rows))
	for _, r := range rows {
		labels[compKey{r.Box, r.Comp}] = r.Label
	}
	lt.labels = labels
	return labels, nil
}

// readRows reads every row of a Parquet file or of the part files of a
// directory (in name order, skipping names that start with _ or .).
func readRows[T any](res mapreduce.Resolver, uri string) ([]T, error) {
	fsys, p, err := res.Resolve(uri)
	if err != nil {
		return nil, err
	}
	st, err := fsys.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("dbscan: %w", err)
	}
	files := []string{p}
	if st.IsDir() {
		ents, err := fsys.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("dbscan: %w", err)
		}
		files = files[:0]
		for _, e := range ents {
			if parquetio.IsPart(e) {
				files = append(files, path.Join(p, e.Name()))
			}
		}
	}
	var out []T
	for _, f := range files {
		rows, err := parquetio.ReadAll[T](fsys, f)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
