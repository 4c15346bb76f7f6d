package dbscan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomPartitioning cuts at random values inside the points' range, in
// random dimensions: boxes of any shape and size, empty ones included.
func randomPartitioning(r *rand.Rand, pts Points, boxes int) Partitioning {
	p := Partitioning{Dim: pts.Dim}
	var plan func(parts int) int
	plan = func(parts int) int {
		me := len(p.Nodes)
		p.Nodes = append(p.Nodes, PartNode{Box: -1})
		if parts == 1 || pts.Len() == 0 {
			p.Nodes[me].Box = p.Boxes
			p.Boxes++
			return me
		}
		k := r.IntN(pts.Dim)
		v := pts.At(r.IntN(pts.Len()))[k] + (r.Float64()-0.5)*0.1
		if r.IntN(4) == 0 {
			v = pts.At(r.IntN(pts.Len()))[k] // exactly on a point
		}
		lp := 1 + r.IntN(parts-1)
		l := plan(lp)
		rt := plan(parts - lp)
		p.Nodes[me] = PartNode{Box: -1, Dim: k, Value: v, Left: l, Right: rt}
		return me
	}
	plan(boxes)
	return p
}

func keysOf(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%08d", i)
	}
	return keys
}

// TestPartitionedEqualsExact is the property test of the merge: for random
// data, parameters and partitionings, partitioned DBSCAN gives exactly
// Cluster's labels and core flags.
func TestPartitionedEqualsExact(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	for trial := range trials {
		d := []int{1, 2, 3, 4, 6}[r.IntN(5)]
		n := 50 + r.IntN(1500)
		var pts Points
		var eps float64
		switch r.IntN(3) {
		case 0:
			pts = genBlobs(r, n, d, 1+r.IntN(5), r.Float64()*0.5)
			eps = 0.1 + r.Float64()*1.5
		case 1:
			pts = genLattice(r, n, d, 2+r.IntN(5))
			eps = []float64{1, 1.4142135623730951, 2, 0.5}[r.IntN(4)]
		default:
			pts = genWebFeatures(r, n)
			if d < 6 {
				q := NewPoints(d, n)
				for i := range n {
					q.Append(pts.At(i)[:d])
				}
				pts = q
			}
			eps = 0.1 + r.Float64()*0.6
		}
		minPts := 1 + r.IntN(15)
		boxes := 1 + r.IntN(16)
		var part Partitioning
		if r.IntN(2) == 0 {
			// As the jobs plan it: quantiles of a sample.
			sample := NewPoints(d, 0)
			for i := range pts.Len() {
				if r.IntN(3) == 0 {
					sample.Append(pts.At(i))
				}
			}
			part = PlanPartitions(sample, boxes)
		} else {
			part = randomPartitioning(r, pts, boxes)
		}
		if err := part.Validate(); err != nil {
			t.Fatal(err)
		}
		p := Params{Eps: eps, MinPts: minPts, Workers: 1 + r.IntN(3)}
		want, err := Cluster(ctx, pts, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := partitionedCluster(ctx, keysOf(n), pts, &part, p)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		gl, gc := make([]int32, n), make([]bool, n)
		for i, a := range got {
			gl[i], gc[i] = a.Label, a.Core
		}
		equalLabels(t, fmt.Sprintf("trial %d (d %d n %d eps %.3f minPts %d boxes %d)", trial, d, n, eps, minPts, part.Boxes), gl, want.Labels, gc, want.Core)
	}
}

// TestHaloIsExact checks the halo rule point by point: every neighbour of
// a point owned by a box is that box's own point or in its halo.
func TestHaloIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 40 {
		d := 1 + r.IntN(6)
		pts := genLattice(r, 400, d, 4) // distances exactly eps abound
		if trial%2 == 1 {
			pts = genBlobs(r, 400, d, 3, 0.3)
		}
		part := randomPartitioning(r, pts, 2+r.IntN(10))
		eps := []float64{0.5, 1, 1.4142135623730951, 2}[r.IntN(4)]
		nbrs := bruteNeighbours(pts, eps)
		for i, ns := range nbrs {
			box := part.Owner(pts.At(i))
			for _, j := range ns {
				if part.Owner(pts.At(int(j))) == box {
					continue
				}
				found := false
				for _, h := range part.Halo(pts.At(int(j)), eps*eps, nil) {
					found = found || h == box
				}
				if !found {
					t.Fatalf("trial %d: point %d (box %d) has neighbour %d outside its box's halo", trial, i, box, j)
				}
			}
		}
	}
}

func TestPartitioningText(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	pts := genBlobs(r, 2000, 3, 4, 0.1)
	p := PlanPartitions(pts, 7)
	if p.Boxes != 7 {
		t.Fatalf("%d boxes, want 7", p.Boxes)
	}
	b, err := p.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var q Partitioning
	if err := q.UnmarshalText(b); err != nil {
		t.Fatal(err)
	}
	for i := range pts.Len() {
		if p.Owner(pts.At(i)) != q.Owner(pts.At(i)) {
			t.Fatal("decoded partitioning differs")
		}
	}
	// Balanced: no box more than twice its share of the points.
	count := make([]int, p.Boxes)
	for i := range pts.Len() {
		count[p.Owner(pts.At(i))]++
	}
	for b, c := range count {
		if c > 2*pts.Len()/p.Boxes {
			t.Errorf("box %d holds %d of %d points", b, c, pts.Len())
		}
	}
	for _, bad := range []string{`{"dim":2,"nodes":[{"box":-1,"dim":5,"value":1,"left":1,"right":2},{"box":0},{"box":1}],"boxes":2}`,
		`{"dim":2,"nodes":[{"box":-1,"dim":0,"value":1,"left":1,"right":1},{"box":0}],"boxes":1}`,
		`{"dim":2,"nodes":[{"box":0},{"box":1}],"boxes":2}`, `{`} {
		if err := q.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%s: decoded without error", bad)
		}
	}
	// A sample of equal points is one box.
	same := NewPoints(2, 10)
	for range 10 {
		same.Append([]float64{1, 1})
	}
	if p := PlanPartitions(same, 4); p.Boxes != 1 {
		t.Fatalf("equal points: %d boxes", p.Boxes)
	}
}

// partitionedCluster runs partitioned DBSCAN in memory: the same steps as
// the engine jobs, with maps in place of shuffles. keys[i] is point i's
// key. It returns the assignments in the order of pts.
func partitionedCluster(ctx context.Context, keys []string, pts Points, part *Partitioning, p Params) ([]Assignment, error) {
	eps2 := p.Eps * p.Eps
	owned := make([][]keyedPoint, part.Boxes)
	halo := make([][]keyedPoint, part.Boxes)
	var hs []int
	for i := range pts.Len() {
		x := pts.At(i)
		b := part.Owner(x)
		owned[b] = append(owned[b], keyedPoint{keys[i], x})
		hs = part.Halo(x, eps2, hs[:0])
		for _, h := range hs {
			halo[h] = append(halo[h], keyedPoint{keys[i], x})
		}
	}
	var (
		owns   []ownedRow
		comps  []compRow
		links  = map[string][]linkRow{}
		shared = map[string]*sharedRow{}
	)
	out := localOut{
		owned:  func(r ownedRow) { owns = append(owns, r) },
		comp:   func(r compRow) { comps = append(comps, r) },
		link:   func(r linkRow) { links[r.Key] = append(links[r.Key], r) },
		shared: func(r sharedRow) { shared[r.Key] = &r },
	}
	for b := range part.Boxes {
		if err := localStep(ctx, b, owned[b], halo[b], pts.Dim, part, p, out); err != nil {
			return nil, err
		}
	}
	var edges []edgeRow
	cands := map[string][]candRow{}
	for key, ls := range links {
		err := joinStep(key, shared[key], ls,
			func(e edgeRow) { edges = append(edges, e) },
			func(c candRow) { cands[c.Key] = append(cands[c.Key], c) })
		if err != nil {
			return nil, err
		}
	}
	labels, _, err := resolveLabels(comps, edges)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]Assignment, len(owns))
	for _, o := range owns {
		a, err := labelStep(o, cands[o.Key], func(k compKey) (int32, bool) { l, ok := labels[k]; return l, ok })
		if err != nil {
			return nil, err
		}
		byKey[o.Key] = a
	}
	res := make([]Assignment, len(keys))
	for i, k := range keys {
		res[i] = byKey[k]
	}
	return res, nil
}
