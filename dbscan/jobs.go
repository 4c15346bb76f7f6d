package dbscan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
)

// The engine jobs of partitioned DBSCAN, by name (see Registry).
const (
	JobStats   = "dbscan-stats"
	JobLocal   = "dbscan-local"
	JobJoin    = "dbscan-join"
	JobLabel   = "dbscan-label"
	JobCentres = "dbscan-centres"
)

// DefaultMaxChanges is the change count up to which a page is young (the
// seed's M <= 16) when Source.MaxChanges is 0.
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

// Conf keys of the jobs (values are strings; floats in strconv's shortest
// round-tripping form).
const (
	confSource      = "dbscan.source"      // "points" or "crawldb"
	confInput       = "dbscan.input"       // the source's path
	confMaxChanges  = "dbscan.max_changes" // crawldb source
	confScaler      = "dbscan.scaler"      // JSON Scaler, absent: as given
	confEps         = "dbscan.eps"
	confMinPts      = "dbscan.min_pts"
	confPart        = "dbscan.partitioning" // JSON Partitioning
	confReduces     = "dbscan.reduces"
	confWorkers     = "dbscan.task_workers"
	confSampleSize  = "dbscan.sample_size"
	confMinSamples  = "dbscan.min_samples"
	confSampleRate  = "dbscan.sample_rate"
	confLabels      = "dbscan.labels" // the local clusters' labels file
	confOut         = "dbscan.out."   // + output name
	outStats        = "stats"
	outSample       = "sample"
	outOwned        = "owned"
	outComps        = "comps"
	outLinks        = "links"
	outShared       = "shared"
	outEdges        = "edges"
	outCands        = "cands"
	outAssignment   = "assignment"
	outMembers      = "members"
	outCentres      = "centres"
	outSamples      = "samples"
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

// Registry returns the partitioned DBSCAN jobs by name, rebuilt from
// their Conf, for the Hadoop Streaming task entry; the CLI merges it into
// its own. res resolves the file of local cluster labels the label job
// reads (a side file, as Hadoop's distributed cache would hold it).
func Registry(res mapreduce.Resolver) mapreduce.Registry {
	return mapreduce.Registry{
		JobStats:   func(c map[string]string) (mapreduce.Runnable, error) { return newStatsJob(c) },
		JobLocal:   func(c map[string]string) (mapreduce.Runnable, error) { return newLocalJob(c) },
		JobJoin:    func(c map[string]string) (mapreduce.Runnable, error) { return newJoinJob(c) },
		JobLabel:   func(c map[string]string) (mapreduce.Runnable, error) { return newLabelJob(c, res) },
		JobCentres: func(c map[string]string) (mapreduce.Runnable, error) { return newCentresJob(c) },
	}
}

// conf reads a job's configuration, keeping the first error.
type conf struct {
	m   map[string]string
	err error
}

func (c *conf) str(k string) string {
	v, ok := c.m[k]
	if !ok && c.err == nil {
		c.err = fmt.Errorf("dbscan: job conf lacks %s", k)
	}
	return v
}

func (c *conf) opt(k string) string { return c.m[k] }

func (c *conf) int(k string) int {
	v, err := strconv.Atoi(c.str(k))
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("dbscan: job conf %s: %w", k, err)
	}
	return v
}

func (c *conf) float(k string) float64 {
	v, err := strconv.ParseFloat(c.str(k), 64)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("dbscan: job conf %s: %w", k, err)
	}
	return v
}

func (c *conf) json(k string, v any) {
	if err := json.Unmarshal([]byte(c.str(k)), v); err != nil && c.err == nil {
		c.err = fmt.Errorf("dbscan: job conf %s: %w", k, err)
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// source is a job's view of its Source: an input whose map function gets
// every point's key and (standardized, if the conf has a scaler)
// coordinates.
type source struct {
	kind       string
	path       string
	maxChanges int
	scaler     *Scaler
}

func (c *conf) source(withScaler bool) source {
	s := source{kind: c.str(confSource), path: c.str(confInput)}
	if s.kind == sourceCrawlDB {
		s.maxChanges = c.int(confMaxChanges)
	} else if s.kind != sourcePoints && c.err == nil {
		c.err = fmt.Errorf("dbscan: job conf %s: unknown source %q", confSource, s.kind)
	}
	if withScaler && c.opt(confScaler) != "" {
		s.scaler = new(Scaler)
		c.json(confScaler, s.scaler)
		if c.err == nil && len(s.scaler.Mean) != len(s.scaler.Std) {
			c.err = fmt.Errorf("dbscan: job conf %s: %d means and %d deviations", confScaler, len(s.scaler.Mean), len(s.scaler.Std))
		}
	}
	return s
}

// input is the source as a job input mapped by fn.
func input[V any](s source, fn func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[V]) error) mapreduce.Input[V] {
	check := func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[V]) error {
		for k, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dbscan: point %q: coordinate %d is %v", key, k, v)
			}
		}
		if s.scaler != nil {
			if len(x) != len(s.scaler.Mean) {
				return fmt.Errorf("dbscan: point %q has %d coordinates, the scaler %d", key, len(x), len(s.scaler.Mean))
			}
			x = slices.Clone(x)
			s.scaler.Transform(x)
		}
		return fn(t, key, x, emit)
	}
	if s.kind == sourceCrawlDB {
		return mapreduce.From(s.path, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[V]) error {
			if !YoungPage(d, s.maxChanges) {
				t.Count(ctrSkippedPages, 1)
				return nil
			}
			x := FeatureVector(d.Features)
			return check(t, d.URL, x[:], emit)
		}, mapreduce.AllowMissingColumns())
	}
	return mapreduce.From(s.path, func(t *mapreduce.Task, r PointRow, emit mapreduce.Emit[V]) error {
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

func newStatsJob(m map[string]string) (*mapreduce.Job[statsValue, statsOut], error) {
	c := &conf{m: m}
	src := c.source(false)
	size := c.int(confSampleSize)
	outStats, outSample := c.str(confOut+outStats), c.str(confOut+outSample)
	if c.err != nil {
		return nil, c.err
	}
	return &mapreduce.Job[statsValue, statsOut]{
		Name: JobStats,
		Conf: m,
		Inputs: []mapreduce.Input[statsValue]{input(src, func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[statsValue]) error {
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
			mapreduce.WriteRouted(outStats, func(o statsOut) (Moments, bool) {
				if o.M == nil {
					return Moments{}, false
				}
				return *o.M, true
			}),
			mapreduce.WriteRouted(outSample, func(o statsOut) (sampleRow, bool) {
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

func newLocalJob(m map[string]string) (*mapreduce.Job[pointValue, localRow], error) {
	c := &conf{m: m}
	src := c.source(true)
	p := Params{Eps: c.float(confEps), MinPts: c.int(confMinPts)}
	var part Partitioning
	if c.err == nil {
		if err := part.UnmarshalText([]byte(c.str(confPart))); err != nil {
			c.err = err
		}
	}
	reduces := c.int(confReduces)
	workers, _ := strconv.Atoi(c.opt(confWorkers))
	outs := [4]string{c.str(confOut + outOwned), c.str(confOut + outComps), c.str(confOut + outLinks), c.str(confOut + outShared)}
	if c.err != nil {
		return nil, c.err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	eps2 := p.Eps * p.Eps
	return &mapreduce.Job[pointValue, localRow]{
		Name: JobLocal,
		Conf: m,
		Inputs: []mapreduce.Input[pointValue]{input(src, func(t *mapreduce.Task, key string, x []float64, emit mapreduce.Emit[pointValue]) error {
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
		NumReduce: min(reduces, part.Boxes),
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[pointValue], out func(localRow)) error {
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
			tp := p
			tp.Workers = workers
			if tp.Workers <= 0 {
				tp.Workers = max(1, runtime.GOMAXPROCS(0)/min(part.Boxes, runtime.GOMAXPROCS(0)))
			}
			t.Log.Info("clustering a box", "box", box, "points", len(owned), "halo", len(halo), "workers", tp.Workers)
			return localStep(t.Ctx, box, owned, halo, part.Dim, &part, tp, localOut{
				owned:  func(r ownedRow) { out(localRow{Owned: &r}) },
				comp:   func(r compRow) { out(localRow{Comp: &r}) },
				link:   func(r linkRow) { out(localRow{Link: &r}) },
				shared: func(r sharedRow) { out(localRow{Shared: &r}) },
			})
		},
		Outputs: []mapreduce.Output[localRow]{
			mapreduce.WriteRouted(outs[0], func(o localRow) (ownedRow, bool) { return deref(o.Owned) }),
			mapreduce.WriteRouted(outs[1], func(o localRow) (compRow, bool) { return deref(o.Comp) }),
			mapreduce.WriteRouted(outs[2], func(o localRow) (linkRow, bool) { return deref(o.Link) }),
			mapreduce.WriteRouted(outs[3], func(o localRow) (sharedRow, bool) { return deref(o.Shared) }),
		},
	}, nil
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

func newJoinJob(m map[string]string) (*mapreduce.Job[joinValue, joinRow], error) {
	c := &conf{m: m}
	shared, links := c.str(confOut+outShared), c.str(confOut+outLinks)
	edges, cands := c.str(confOut+outEdges), c.str(confOut+outCands)
	reduces := c.int(confReduces)
	if c.err != nil {
		return nil, c.err
	}
	return &mapreduce.Job[joinValue, joinRow]{
		Name: JobJoin,
		Conf: m,
		Inputs: []mapreduce.Input[joinValue]{
			mapreduce.From(shared, func(t *mapreduce.Task, r sharedRow, emit mapreduce.Emit[joinValue]) error {
				emit(r.Key, joinValue{Own: &r})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(links, func(t *mapreduce.Task, r linkRow, emit mapreduce.Emit[joinValue]) error {
				emit(r.Key, joinValue{Link: &r})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		NumReduce: reduces,
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
			mapreduce.WriteRouted(edges, func(o joinRow) (edgeRow, bool) { return deref(o.Edge) }),
			mapreduce.WriteRouted(cands, func(o joinRow) (candRow, bool) { return deref(o.Cand) }),
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

func newLabelJob(m map[string]string, res mapreduce.Resolver) (*mapreduce.Job[labelValue, labelOut], error) {
	c := &conf{m: m}
	owned, cands := c.str(confOut+outOwned), c.str(confOut+outCands)
	assignment, members := c.str(confOut+outAssignment), c.str(confOut+outMembers)
	labelsURI := c.str(confLabels)
	reduces := c.int(confReduces)
	if c.err != nil {
		return nil, c.err
	}
	rows, err := readRows[labelRow](res, labelsURI)
	if err != nil {
		return nil, err
	}
	labels := make(map[compKey]int32, len(rows))
	for _, r := range rows {
		labels[compKey{r.Box, r.Comp}] = r.Label
	}
	get := func(k compKey) (int32, bool) { l, ok := labels[k]; return l, ok }
	return &mapreduce.Job[labelValue, labelOut]{
		Name: JobLabel,
		Conf: m,
		Inputs: []mapreduce.Input[labelValue]{
			mapreduce.From(owned, func(t *mapreduce.Task, r ownedRow, emit mapreduce.Emit[labelValue]) error {
				emit(r.Key, labelValue{Own: &r})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(cands, func(t *mapreduce.Task, r candRow, emit mapreduce.Emit[labelValue]) error {
				emit(r.Key, labelValue{Cand: &r})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		NumReduce: reduces,
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[labelValue], out func(labelOut)) error {
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
		},
		Outputs: []mapreduce.Output[labelOut]{
			mapreduce.WriteRouted(assignment, func(o labelOut) (Assignment, bool) { return deref(o.Assign) }),
			mapreduce.WriteRouted(members, func(o labelOut) (memberRow, bool) { return deref(o.Member) }),
		},
	}, nil
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
