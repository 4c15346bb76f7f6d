package dbscan

import (
	"context"
	"slices"
	"testing"
)

func TestSampleCount(t *testing.T) {
	for _, c := range []struct {
		size, k int
		rate    float64
		want    int
	}{
		{10, 3, 0, 3}, {10, 3, 0.5, 5}, {10, 3, 0.01, 3}, {2, 3, 0, 2}, {1000, 5, 0.011, 11}, {7, 0, 0, 0}, {7, 0, 1, 7},
	} {
		if got := SampleCount(c.size, c.k, c.rate); got != c.want {
			t.Errorf("SampleCount(%d, %d, %v) = %d, want %d", c.size, c.k, c.rate, got, c.want)
		}
	}
}

func TestCentres(t *testing.T) {
	// Cluster 0: a square around (0,0) with a point at its centre; cluster
	// 1: three collinear points; then noise.
	pts, _ := PointsFromRows([][]float64{
		{-1, -1}, {1, -1}, {-1, 1}, {1, 1}, {0, 0},
		{10, 0}, {11, 0}, {12, 0},
		{50, 50},
	})
	res, err := Cluster(context.Background(), pts, Params{Eps: 2.1, MinPts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Labels, []int32{0, 0, 0, 0, 0, 1, 1, 1, -1}) {
		t.Fatalf("labels %v", res.Labels)
	}
	centres, samples, err := Centres(pts, res, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(centres) != 2 || !slices.Equal(centres[0].X, []float64{0, 0}) || !slices.Equal(centres[1].X, []float64{11, 0}) ||
		centres[0].Size != 5 || centres[1].Size != 3 || centres[0].Core != 5 {
		t.Fatalf("centres %+v", centres)
	}
	// Cluster 0: the centre point first, then the four corners tie at
	// sqrt(2): the lowest index wins.
	if !slices.Equal(samples[0], []int{4, 0}) || !slices.Equal(samples[1], []int{6, 5}) {
		t.Fatalf("samples %v", samples)
	}
	_, samples, _ = Centres(pts, res, 1, 0.9)
	if !slices.Equal(samples[0], []int{4, 0, 1, 2, 3}) || !slices.Equal(samples[1], []int{6, 5, 7}) {
		t.Fatalf("samples at rate 0.9: %v", samples)
	}
	if _, _, err := Centres(pts, &Result{Labels: []int32{0}, Core: []bool{true}, Clusters: 1}, 1, 0); err == nil {
		t.Fatal("labels of another length should fail")
	}
}
