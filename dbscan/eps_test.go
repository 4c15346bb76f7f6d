package dbscan

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKDistancesMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, pts := range []Points{genBlobs(r, 800, 3, 3, 0.2), genLattice(r, 500, 2, 5), genWebFeatures(r, 700)} {
		for _, minPts := range []int{2, 5, 12} {
			got, err := KDistances(context.Background(), pts, minPts, 0, 2)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, pts.Len())
			for i := range pts.Len() {
				var ds []float64
				for j := range pts.Len() {
					ds = append(ds, sqDist(pts.At(i), pts.At(j)))
				}
				slices.Sort(ds)
				want[i] = math.Sqrt(ds[minPts-1]) // ds[0] is the point itself
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("minPts %d: k-distances differ from brute force", minPts)
			}
			// At eps = a point's k-distance (up to the rounding of the
			// square root), that point is core.
			eps := got[len(got)/2] * (1 + 1e-12)
			if eps == 0 {
				continue // duplicates: eps must be positive
			}
			res, err := Cluster(context.Background(), pts, Params{Eps: eps, MinPts: minPts})
			if err != nil {
				t.Fatal(err)
			}
			core := 0
			for _, c := range res.Core {
				if c {
					core++
				}
			}
			if core < len(got)/2+1 {
				t.Fatalf("minPts %d: at the median k-distance %d of %d points are core, want at least half", minPts, core, len(got))
			}
		}
	}
}

func TestKnee(t *testing.T) {
	// Flat, then a jump: the knee is the last point before the jump.
	curve := []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 5, 20}
	if k := Knee(curve); k != 5 {
		t.Fatalf("knee at %d, want 5", k)
	}
	if k := Knee([]float64{1, 2, 3, 4}); k != 3 {
		t.Fatalf("straight line: knee at %d, want the end", k)
	}
	if k := Knee([]float64{2, 2, 2}); k != 2 {
		t.Fatalf("flat: knee at %d", k)
	}
}

func TestSuggestEps(t *testing.T) {
	// Dense blobs of width 0.3 in noise: the suggestion separates them.
	r := rand.New(rand.NewPCG(33, 34))
	pts := NewPoints(2, 0)
	for b := range 4 {
		for range 500 {
			pts.Append([]float64{float64(b)*10 + 0.3*r.NormFloat64(), 0.3 * r.NormFloat64()})
		}
	}
	for range 200 {
		pts.Append([]float64{r.Float64()*60 - 10, r.Float64()*60 - 30})
	}
	eps, err := SuggestEps(pts, 5)
	if err != nil {
		t.Fatal(err)
	}
	if eps < 0.05 || eps > 2 {
		t.Fatalf("suggested eps %v", eps)
	}
	res, err := Cluster(context.Background(), pts, Params{Eps: eps, MinPts: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clusters < 4 || res.Clusters > 8 {
		t.Fatalf("at the suggested eps %v: %d clusters, want the 4 blobs (and a few noise clumps at most)", eps, res.Clusters)
	}
	if _, err := SuggestEps(pts, 1); err == nil {
		t.Fatal("minPts 1 has no k-distance")
	}
	if _, err := SuggestEps(Points{Dim: 2, Data: []float64{1, 2}}, 3); err == nil {
		t.Fatal("too few points should fail")
	}
}
