package dbscan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// clusterCase is a data set with an eps; tests run it at several minPts.
type clusterCase struct {
	name string
	pts  Points
	eps  float64
}

// clusterCases are small data sets of several kinds: Gaussian blobs with
// noise in 1 to 8 dimensions, integer lattices (duplicates, and many
// distances exactly eps), web-like features.
func clusterCases(r *rand.Rand) []clusterCase {
	var cases []clusterCase
	for _, d := range []int{1, 2, 3, 4, 6, 8} {
		for _, n := range []int{0, 1, 7, 300, 1500} {
			pts := genBlobs(r, n, d, 1+r.IntN(6), 0.2)
			for _, eps := range []float64{0.3, 0.8, 2} {
				cases = append(cases, clusterCase{fmt.Sprintf("blobs/d%d/n%d/eps%v", d, n, eps), pts, eps})
			}
		}
		lat := genLattice(r, 800, d, 4)
		for _, eps := range []float64{1, math.Sqrt2, 2} {
			cases = append(cases, clusterCase{fmt.Sprintf("lattice/d%d/eps%v", d, eps), lat, eps})
		}
	}
	web := genWebFeatures(r, 2000)
	for _, eps := range []float64{0.2, 0.5, 1} {
		cases = append(cases, clusterCase{fmt.Sprintf("web/eps%v", eps), web, eps})
	}
	return cases
}

func TestClusterMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	for _, c := range clusterCases(rand.New(rand.NewPCG(1, 2))) {
		nbrs := bruteNeighbours(c.pts, c.eps)
		for _, mp := range []int{1, 2, 5, 13, 40} {
			wantL, wantC := bruteDBSCAN(nbrs, mp)
			for _, workers := range []int{1, 3} {
				res, err := Cluster(ctx, c.pts, Params{Eps: c.eps, MinPts: mp, Workers: workers})
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				name := fmt.Sprintf("%s/min%d/w%d", c.name, mp, workers)
				equalLabels(t, name, res.Labels, wantL, res.Core, wantC)
				if want := int(slices.Max(append([]int32{-1}, wantL...))) + 1; res.Clusters != want {
					t.Fatalf("%s: Clusters %d, want %d", name, res.Clusters, want)
				}
			}
		}
	}
}

// TestClusterBorderRule builds a border point within eps of core points of
// two clusters: it joins the cluster whose first core point comes first,
// whatever the order of the other points.
func TestClusterBorderRule(t *testing.T) {
	// Cluster A: 0..3 around x=0; cluster B: 4..7 around x=3; point 8 at
	// x=1.5 is within 1 of A's point at 0.6 and B's point at 2.4, has
	// only those two neighbours (and itself): a border point of both.
	xs := []float64{0, 0.2, 0.4, 0.6, 2.4, 2.6, 2.8, 3.0, 1.5}
	for _, perm := range [][]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8},
		{8, 4, 5, 6, 7, 0, 1, 2, 3},
		{7, 8, 3, 6, 2, 5, 1, 4, 0},
	} {
		pts := NewPoints(1, len(xs))
		for _, i := range perm {
			pts.Append([]float64{xs[i]})
		}
		res, err := Cluster(context.Background(), pts, Params{Eps: 0.9, MinPts: 4})
		if err != nil {
			t.Fatal(err)
		}
		at := slices.Index(perm, 8)
		first := -1 // index of the first core point
		for i, c := range res.Core {
			if c {
				first = i
				break
			}
		}
		if res.Core[at] || res.Labels[at] != res.Labels[first] || res.Labels[first] != 0 || res.Clusters != 2 {
			t.Fatalf("order %v: labels %v core %v: the border point should join cluster 0, the first core point's", perm, res.Labels, res.Core)
		}
		nbrs := bruteNeighbours(pts, 0.9)
		wantL, wantC := bruteDBSCAN(nbrs, 4)
		equalLabels(t, fmt.Sprint(perm), res.Labels, wantL, res.Core, wantC)
	}
}

func TestClusterDeterministic(t *testing.T) {
	pts := genWebFeatures(rand.New(rand.NewPCG(7, 8)), 20000)
	var first *Result
	for _, workers := range []int{1, 2, 5, 8} {
		res, err := Cluster(context.Background(), pts, Params{Eps: 0.4, MinPts: 8, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
			continue
		}
		equalLabels(t, fmt.Sprintf("workers %d", workers), res.Labels, first.Labels, res.Core, first.Core)
	}
}

func TestClusterDuplicates(t *testing.T) {
	// 100 copies of one point and 3 of another far away.
	pts := NewPoints(3, 103)
	for i := range 103 {
		if i < 100 {
			pts.Append([]float64{1, 2, 3})
		} else {
			pts.Append([]float64{50, 50, 50})
		}
	}
	res, err := Cluster(context.Background(), pts, Params{Eps: 1e-9, MinPts: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range res.Labels {
		want := int32(0)
		if i >= 100 {
			want = 1
		}
		if l != want || !res.Core[i] {
			t.Fatalf("point %d: label %d core %v, want %d core", i, l, res.Core[i], want)
		}
	}
}

// TestClusterManyEqual has a leaf of 150 equal points (more than a query
// batch) that is not core by itself at the larger minPts, among points
// near it and far from it, against the brute force.
func TestClusterManyEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pts := NewPoints(2, 220)
	for i := range 220 {
		switch {
		case i < 150:
			pts.Append([]float64{0, 0})
		case i < 200:
			pts.Append([]float64{r.Float64() - 0.5, r.Float64() - 0.5})
		default:
			pts.Append([]float64{5 + r.Float64(), 5 + r.Float64()})
		}
	}
	r.Shuffle(pts.Len(), func(i, j int) {
		a, b := pts.At(i), pts.At(j)
		a[0], a[1], b[0], b[1] = b[0], b[1], a[0], a[1]
	})
	nbrs := bruteNeighbours(pts, 0.4)
	for _, mp := range []int{5, 100, 160, 175, 200} {
		wantL, wantC := bruteDBSCAN(nbrs, mp)
		res, err := Cluster(context.Background(), pts, Params{Eps: 0.4, MinPts: mp, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		equalLabels(t, fmt.Sprintf("minPts %d", mp), res.Labels, wantL, res.Core, wantC)
	}
}

func TestClusterErrors(t *testing.T) {
	ctx := context.Background()
	ok := NewPoints(2, 1)
	ok.Append([]float64{1, 2})
	for _, c := range []struct {
		pts  Points
		p    Params
		want string
	}{
		{ok, Params{Eps: 0, MinPts: 3}, "eps"},
		{ok, Params{Eps: math.NaN(), MinPts: 3}, "eps"},
		{ok, Params{Eps: math.Inf(1), MinPts: 3}, "eps"},
		{ok, Params{Eps: 1, MinPts: 0}, "minPts"},
		{Points{Dim: 2, Data: []float64{1, 2, 3}}, Params{Eps: 1, MinPts: 1}, "whole number"},
		{Points{Dim: 2, Data: []float64{1, math.NaN()}}, Params{Eps: 1, MinPts: 1}, "point 0 coordinate 1 is NaN"},
		{Points{Dim: 2, Data: []float64{1, 2, math.Inf(-1), 0}}, Params{Eps: 1, MinPts: 1}, "point 1 coordinate 0 is -Inf"},
	} {
		_, err := Cluster(ctx, c.pts, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Cluster(%v, %+v) = %v, want an error about %q", c.pts, c.p, err, c.want)
		}
	}
}

func TestClusterCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pts := genBlobs(rand.New(rand.NewPCG(1, 1)), 50000, 3, 3, 0)
	_, err := Cluster(ctx, pts, Params{Eps: 0.5, MinPts: 5})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
