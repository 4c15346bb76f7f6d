package dbscan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// The steps of partitioned DBSCAN as plain functions over rows: the engine
// jobs (jobs.go) call them, and so does the tests' partitionedCluster
// (merge_test.go), which runs them in memory as the specification of the
// jobs. The package
// doc says why the result equals Cluster's.

// PointRow is a point as the partitioned jobs read it: a key, which is the
// point's identity and its place in the order that numbers clusters and
// assigns border points (byte order of keys, as Go compares strings), and
// its coordinates. Keys must be unique.
type PointRow struct {
	// Key identifies the point and orders it.
	Key string `parquet:"key"`
	// X holds the coordinates.
	X []float64 `parquet:"x,list"`
}

// Assignment is a point's result: its cluster (Noise for none) and
// whether it is a core point. A point with a cluster that is not core is
// a border point.
type Assignment struct {
	// Key is the point's key (a URL for a CrawlDB source).
	Key string `parquet:"key"`
	// Label is the point's cluster, or Noise (-1).
	Label int32 `parquet:"label"`
	// Core says whether the point is a core point.
	Core bool `parquet:"core"`
}

// ownedRow is a box's result for one of its own points.
type ownedRow struct {
	Key  string `parquet:"key"`
	Box  int32  `parquet:"box"`
	Core bool   `parquet:"core"`
	// Comp is a core point's local cluster (-1 for other points).
	Comp int32 `parquet:"comp"`
	// Cands are, for a non-core point, the local clusters of its core
	// neighbours in the box.
	Cands []int32   `parquet:"cands,list"`
	X     []float64 `parquet:"x,list"`
}

// compRow is a local cluster and its first core point's key.
type compRow struct {
	Box    int32  `parquet:"box"`
	Comp   int32  `parquet:"comp"`
	MinKey string `parquet:"min_key"`
}

// linkRow says that halo point Key of box Box is within eps of a core
// point of local cluster Comp of the box.
type linkRow struct {
	Key  string `parquet:"key"`
	Box  int32  `parquet:"box"`
	Comp int32  `parquet:"comp"`
}

// sharedRow is a point's own box's result for a point that is a halo
// point of some other box.
type sharedRow struct {
	Key  string `parquet:"key"`
	Box  int32  `parquet:"box"`
	Core bool   `parquet:"core"`
	Comp int32  `parquet:"comp"`
}

// edgeRow links two local clusters that are one cluster.
type edgeRow struct {
	BoxA  int32 `parquet:"box_a"`
	CompA int32 `parquet:"comp_a"`
	BoxB  int32 `parquet:"box_b"`
	CompB int32 `parquet:"comp_b"`
}

// candRow says that point Key (a non-core point) is within eps of a core
// point of local cluster (Box, Comp) of another box.
type candRow struct {
	Key  string `parquet:"key"`
	Box  int32  `parquet:"box"`
	Comp int32  `parquet:"comp"`
}

// labelRow is a local cluster's global cluster.
type labelRow struct {
	Box   int32 `parquet:"box"`
	Comp  int32 `parquet:"comp"`
	Label int32 `parquet:"label"`
}

// keyedPoint is a point with its key.
type keyedPoint struct {
	Key string
	X   []float64
}

// localOut receives the rows of localStep.
type localOut struct {
	owned  func(ownedRow)
	comp   func(compRow)
	link   func(linkRow)
	shared func(sharedRow)
}

// localStep clusters box box's points: owned, its own points, and halo,
// the other boxes' points within eps of it. It sorts both by key and
// reports every owned point, every local cluster, every link of a halo
// point to a local cluster, and the owned points that are halo points
// elsewhere (by part's Halo, as the map side decided).
func localStep(ctx context.Context, box int, owned, halo []keyedPoint, dim int, part *Partitioning, p Params, out localOut) error {
	byKey := func(a, b keyedPoint) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(owned, byKey)
	slices.SortFunc(halo, byKey)
	for i := 1; i < len(owned); i++ {
		if owned[i].Key == owned[i-1].Key {
			return fmt.Errorf("dbscan: box %d: key %q is given twice", box, owned[i].Key)
		}
	}
	pts := NewPoints(dim, len(owned)+len(halo))
	for _, set := range [][]keyedPoint{owned, halo} {
		for _, kp := range set {
			if err := pts.Append(kp.X); err != nil {
				return fmt.Errorf("dbscan: point %q: %w", kp.Key, err)
			}
		}
	}
	if err := pts.Validate(); err != nil {
		return err
	}
	m := len(owned)
	lr, err := clusterLocal(ctx, pts, m, p)
	if err != nil {
		return fmt.Errorf("dbscan: box %d: %w", box, err)
	}
	b := int32(box)
	// Local clusters are numbered by their lowest owned index, which is
	// their lowest key.
	next := int32(0)
	for i := range m {
		if c := lr.comp[i]; c == next {
			out.comp(compRow{Box: b, Comp: c, MinKey: owned[i].Key})
			next++
		}
	}
	bi := 0
	eps2 := p.Eps * p.Eps
	var halos []int
	for i := range m {
		row := ownedRow{Key: owned[i].Key, Box: b, Core: lr.core[i], Comp: lr.comp[i], X: owned[i].X}
		for ; bi < len(lr.border) && int(lr.border[bi].Point) == i; bi++ {
			row.Cands = append(row.Cands, lr.border[bi].Comp)
		}
		out.owned(row)
		if halos = part.Halo(owned[i].X, eps2, halos[:0]); len(halos) > 0 {
			out.shared(sharedRow{Key: row.Key, Box: b, Core: row.Core, Comp: row.Comp})
		}
	}
	for _, l := range lr.halo {
		out.link(linkRow{Key: halo[int(l.Point)-m].Key, Box: b, Comp: l.Comp})
	}
	return nil
}

// joinStep joins, for one point that is a halo point somewhere, its own
// box's result with the links other boxes found for it: a core point
// links their local clusters to its own (edges); a non-core point is a
// border point of theirs (candidates).
func joinStep(key string, own *sharedRow, links []linkRow, edge func(edgeRow), cand func(candRow)) error {
	if own == nil {
		return fmt.Errorf("dbscan: point %q is a halo point but no box owns it", key)
	}
	for _, l := range links {
		if l.Box == own.Box {
			return fmt.Errorf("dbscan: point %q is both owned and a halo point in box %d", key, l.Box)
		}
		if own.Core {
			edge(edgeRow{BoxA: own.Box, CompA: own.Comp, BoxB: l.Box, CompB: l.Comp})
		} else {
			cand(candRow{Key: key, Box: l.Box, Comp: l.Comp})
		}
	}
	return nil
}

// compKey identifies a local cluster.
type compKey struct{ Box, Comp int32 }

// resolveLabels merges the local clusters linked by edges (union-find)
// and numbers the resulting clusters in the order of their first core
// point's key. It returns the label of every local cluster.
func resolveLabels(comps []compRow, edges []edgeRow) (map[compKey]int32, int, error) {
	idx := make(map[compKey]int32, len(comps))
	for i, c := range comps {
		k := compKey{c.Box, c.Comp}
		if _, dup := idx[k]; dup {
			return nil, 0, fmt.Errorf("dbscan: local cluster %d of box %d reported twice", c.Comp, c.Box)
		}
		idx[k] = int32(i)
	}
	u := newDSU(len(comps))
	for _, e := range edges {
		a, okA := idx[compKey{e.BoxA, e.CompA}]
		b, okB := idx[compKey{e.BoxB, e.CompB}]
		if !okA || !okB {
			return nil, 0, fmt.Errorf("dbscan: edge between unknown local clusters (%d,%d) and (%d,%d)", e.BoxA, e.CompA, e.BoxB, e.CompB)
		}
		u.union(a, b)
	}
	// The first key of each global cluster, then the clusters in order.
	first := make(map[int32]string)
	for i, c := range comps {
		r := u.find(int32(i))
		if k, ok := first[r]; !ok || c.MinKey < k {
			first[r] = c.MinKey
		}
	}
	roots := make([]int32, 0, len(first))
	for r := range first {
		roots = append(roots, r)
	}
	slices.SortFunc(roots, func(a, b int32) int { return cmp.Compare(first[a], first[b]) })
	label := make(map[int32]int32, len(roots))
	for i, r := range roots {
		label[r] = int32(i)
	}
	out := make(map[compKey]int32, len(comps))
	for i, c := range comps {
		out[compKey{c.Box, c.Comp}] = label[u.find(int32(i))]
	}
	return out, len(roots), nil
}

// labelStep is a point's final label: its cluster if it is core, else the
// lowest label among the clusters of its core neighbours (local ones from
// own.Cands, other boxes' from remote), else Noise.
func labelStep(own ownedRow, remote []candRow, label func(compKey) (int32, bool)) (Assignment, error) {
	a := Assignment{Key: own.Key, Label: Noise, Core: own.Core}
	get := func(k compKey) error {
		l, ok := label(k)
		if !ok {
			return fmt.Errorf("dbscan: point %q: local cluster %d of box %d has no label", own.Key, k.Comp, k.Box)
		}
		if a.Label == Noise || l < a.Label {
			a.Label = l
		}
		return nil
	}
	if own.Core {
		return a, get(compKey{own.Box, own.Comp})
	}
	for _, c := range own.Cands {
		if err := get(compKey{own.Box, c}); err != nil {
			return a, err
		}
	}
	for _, c := range remote {
		if err := get(compKey{c.Box, c.Comp}); err != nil {
			return a, err
		}
	}
	return a, nil
}
