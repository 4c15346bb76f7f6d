package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdjustedRandKnown checks hand-computed values.
func TestAdjustedRandKnown(t *testing.T) {
	cases := []struct {
		a, b []int32
		want float64
	}{
		// Identical partitions, and the same partition under other names.
		{[]int32{0, 0, 1, 1}, []int32{0, 0, 1, 1}, 1},
		{[]int32{0, 0, 1, 1}, []int32{1, 1, 0, 0}, 1},
		{[]int32{-1, 3, 3, 7, 7, 7}, []int32{5, 0, 0, -1, -1, -1}, 1},
		// Cells (0,0)=2, (1,1)=1, (2,1)=1: index 1, row pairs 1, column
		// pairs 2, C(4,2)=6, E=1/3, max 3/2: (1-1/3)/(3/2-1/3) = 4/7.
		{[]int32{0, 0, 1, 2}, []int32{0, 0, 1, 1}, 4.0 / 7},
		// One cluster against singletons: no pair agrees beyond chance.
		{[]int32{0, 0, 0, 0}, []int32{0, 1, 2, 3}, 0},
		// Cells (0,0)=2,(0,1)=1,(1,1)=1,(1,2)=2: index 2; rows 3,3 -> 6;
		// cols 2,2,2 -> 3; C(6,2)=15; E=6*3/15=1.2; max 4.5:
		// (2-1.2)/(4.5-1.2) = 0.8/3.3.
		{[]int32{0, 0, 0, 1, 1, 1}, []int32{0, 0, 1, 1, 2, 2}, 0.8 / 3.3},
		// Both all in one cluster: equal partitions.
		{[]int32{4, 4, 4}, []int32{9, 9, 9}, 1},
	}
	for _, c := range cases {
		got, err := adjustedRand(c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ARI(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if _, err := adjustedRand([]int32{1, 2}, []int32{1}); err == nil {
		t.Error("labelings of different lengths: no error")
	}
}

// TestAdjustedRandPairs checks the contingency-table formula against the
// definition by pairs on random labelings: over all pairs of items, with
// x = pairs together in both, y = together in a only, z = together in b
// only, w = apart in both, ARI = (RI - E[RI]) / (1 - E[RI]) where RI =
// (x+w)/N, N = all pairs, and E[RI] is the Rand index expected when the
// pairs together in a and in b are independent: (pa·pb + (N-pa)(N-pb))/N²
// with pa = x+y and pb = x+z.
func TestAdjustedRandPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 2 + r.IntN(60)
		ka, kb := 1+r.IntN(6), 1+r.IntN(6)
		a, b := make([]int32, n), make([]int32, n)
		for i := range n {
			a[i] = int32(r.IntN(ka)) - 1
			if r.IntN(3) == 0 {
				b[i] = a[i] // correlated
			} else {
				b[i] = int32(r.IntN(kb))
			}
		}
		var x, y, z, w float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				sa, sb := a[i] == a[j], b[i] == b[j]
				switch {
				case sa && sb:
					x++
				case sa:
					y++
				case sb:
					z++
				default:
					w++
				}
			}
		}
		N := x + y + z + w
		pa, pb := x+y, x+z
		ri := (x + w) / N
		eri := (pa*pb + (N-pa)*(N-pb)) / (N * N)
		want := 1.0
		if eri != 1 {
			want = (ri - eri) / (1 - eri)
		}
		got, err := adjustedRand(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: ARI(%v, %v) = %v, by pairs %v", trial, a, b, got, want)
		}
	}
}
