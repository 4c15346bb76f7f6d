package dbscan

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/trawl/trawl/mapreduce"
)

// Centre is a cluster's centre: the mean of its members (core and border
// points), in the space they were clustered in (standardized, if the run
// standardized).
type Centre struct {
	// Label is the cluster.
	Label int32 `parquet:"label"`
	// Size counts its members, Core its core points.
	Size int64 `parquet:"size"`
	Core int64 `parquet:"core"`
	// X is the centre.
	X []float64 `parquet:"x,list"`
}

// Sample is one of the members nearest a cluster's centre.
type Sample struct {
	// Label is the cluster.
	Label int32 `parquet:"label"`
	// Rank is 0 for the member nearest the centre, then 1, ...
	Rank int32 `parquet:"rank"`
	// Key is the member's key (a URL for a CrawlDB source).
	Key string `parquet:"key"`
	// Distance is the Euclidean distance to the centre.
	Distance float64 `parquet:"distance"`
}

// SampleCount is the number of samples of a cluster of size members:
// max(k, ceil(rate*size)), but no more than size.
func SampleCount(size, k int, rate float64) int {
	n := max(k, int(math.Ceil(rate*float64(size))))
	return min(n, size)
}

// member is a clustered point: its key and its place in the order of
// keys (index), for ties.
type member struct {
	key   string
	index int
	core  bool
	x     []float64
	dist  float64
}

// summarize computes a cluster's centre (the mean, summed in the members'
// order) and returns its SampleCount(k, rate) members nearest the centre,
// nearest first, ties by index.
func summarize(label int32, ms []member, k int, rate float64) (Centre, []member, error) {
	if len(ms) == 0 {
		return Centre{}, nil, fmt.Errorf("dbscan: cluster %d has no members", label)
	}
	dim := len(ms[0].x)
	c := Centre{Label: label, Size: int64(len(ms)), X: make([]float64, dim)}
	for _, m := range ms {
		if len(m.x) != dim {
			return Centre{}, nil, fmt.Errorf("dbscan: cluster %d: point %q has %d coordinates, not %d", label, m.key, len(m.x), dim)
		}
		if m.core {
			c.Core++
		}
		for j, v := range m.x {
			c.X[j] += v
		}
	}
	for j := range c.X {
		c.X[j] /= float64(len(ms))
	}
	for i := range ms {
		ms[i].dist = math.Sqrt(sqDist(ms[i].x, c.X))
	}
	byDist := slices.Clone(ms)
	slices.SortFunc(byDist, func(a, b member) int { return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.index, b.index)) })
	return c, byDist[:SampleCount(len(ms), k, rate)], nil
}

// Centres computes, for a clustering of pts (Cluster's result), every
// cluster's centre and its samples: the SampleCount(size, minSamples,
// rate) members nearest the centre, as point indices, nearest first, ties
// by index. It is what Run writes to centres/ and samples/ when the keys
// are in index order.
func Centres(pts Points, res *Result, minSamples int, rate float64) ([]Centre, [][]int, error) {
	if len(res.Labels) != pts.Len() || len(res.Core) != pts.Len() {
		return nil, nil, fmt.Errorf("dbscan: %d labels for %d points", len(res.Labels), pts.Len())
	}
	groups := make([][]member, res.Clusters)
	for i, l := range res.Labels {
		if l == Noise {
			continue
		}
		if l < 0 || int(l) >= res.Clusters {
			return nil, nil, fmt.Errorf("dbscan: point %d has label %d of %d clusters", i, l, res.Clusters)
		}
		groups[l] = append(groups[l], member{key: strconv.Itoa(i), index: i, core: res.Core[i], x: pts.At(i)})
	}
	centres := make([]Centre, res.Clusters)
	samples := make([][]int, res.Clusters)
	for l, ms := range groups {
		c, near, err := summarize(int32(l), ms, minSamples, rate)
		if err != nil {
			return nil, nil, err
		}
		centres[l] = c
		for _, m := range near {
			samples[l] = append(samples[l], m.index)
		}
	}
	return centres, samples, nil
}

// ---- dbscan-centres: centres and samples of the clusters ----

type centreOut struct {
	Centre *Centre
	Sample *Sample
}

func labelKey(l int32) string { return fmt.Sprintf("%010d", l) }

// centresSpec is the centres job: it groups the members (the label job's
// memberRows) by cluster, a reduce holding one cluster's members in
// memory, and writes each cluster's Centre and Samples.
type centresSpec struct {
	// Reduces is the number of reduce tasks.
	Reduces int
	// MinSamples (K) and SampleRate (R) choose the samples (see
	// SampleCount).
	MinSamples int
	SampleRate float64
	// Members is the input.
	Members string
	// Centres and Samples are the outputs.
	Centres, Samples string
}

// JobName is JobCentres.
func (centresSpec) JobName() string { return JobCentres }

// Job builds the centres job.
func (s centresSpec) Job() (mapreduce.Runnable, error) {
	if err := checkSamples(s.MinSamples, s.SampleRate); err != nil {
		return nil, err
	}
	return &mapreduce.Job[memberRow, centreOut]{
		Name: JobCentres,
		Inputs: []mapreduce.Input[memberRow]{
			mapreduce.From(s.Members, func(t *mapreduce.Task, r memberRow, emit mapreduce.Emit[memberRow]) error {
				emit(labelKey(r.Label), r)
				return nil
			}, mapreduce.RequireSuccess()),
		},
		NumReduce: s.Reduces,
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[memberRow], out func(centreOut)) error {
			var ms []member
			label := int32(-1)
			for v := range values {
				label = v.Label
				ms = append(ms, member{key: v.Key, core: v.Core, x: v.X})
			}
			// The members in key order: the sum's order and the ties'.
			slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
			for i := range ms {
				ms[i].index = i
			}
			centre, near, err := summarize(label, ms, s.MinSamples, s.SampleRate)
			if err != nil {
				return err
			}
			out(centreOut{Centre: &centre})
			for rank, m := range near {
				out(centreOut{Sample: &Sample{Label: label, Rank: int32(rank), Key: m.key, Distance: m.dist}})
			}
			return nil
		},
		Outputs: []mapreduce.Output[centreOut]{
			mapreduce.WriteRouted(s.Centres, func(o centreOut) (Centre, bool) { return deref(o.Centre) }),
			mapreduce.WriteRouted(s.Samples, func(o centreOut) (Sample, bool) { return deref(o.Sample) }),
		},
	}, nil
}

// checkSamples checks the samples' K and R: K >= 0 and 0 <= R <= 1.
func checkSamples(k int, rate float64) error {
	if k < 0 || rate < 0 || rate > 1 || math.IsNaN(rate) {
		return fmt.Errorf("dbscan: samples: K %d and rate %v (K >= 0, 0 <= R <= 1)", k, rate)
	}
	return nil
}
