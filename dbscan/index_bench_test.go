package dbscan

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// The index choice: counting every point's neighbours (no early stop) on
// the benchmark data with the k-d tree and with grids of eps-sized cells
// hashed by cell, over the first k dimensions (neighbours in the 3^k
// surrounding cells, then an exact distance check).

func BenchmarkNeighbourCount(b *testing.B) {
	pts := webData(100_000)
	for _, eps := range []float64{0.25, 0.5} {
		eps2 := eps * eps
		var want int
		b.Run(fmt.Sprintf("eps%v/kdtree", eps), func(b *testing.B) {
			for b.Loop() {
				want = kdCountAll(pts, eps2)
			}
			b.ReportMetric(float64(want)/float64(pts.Len()), "nbrs/pt")
		})
		for _, k := range []int{3, 4, 5, 6} {
			b.Run(fmt.Sprintf("eps%v/grid%d", eps, k), func(b *testing.B) {
				var got int
				for b.Loop() {
					got = gridCountAll(pts, eps, k)
				}
				if got != want {
					b.Fatalf("grid counted %d pairs, tree %d", got, want)
				}
			})
		}
	}
}

func kdCountAll(pts Points, eps2 float64) int {
	t, _ := buildKD(context.Background(), pts, 1)
	leaves, leafNo := t.leafNumbers()
	g, _ := t.gatherAll(context.Background(), eps2, 1, leafNo, len(leaves))
	total := 0
	for k, l := range leaves {
		full, cand := g.of(k)
		base := 0
		for _, f := range full {
			base += t.size(f)
		}
		for pos := t.nodes[l].start; pos < t.nodes[l].end; pos++ {
			total += base
			q := t.point(pos)
			for _, c := range cand {
				mx, far := t.boxDist(q, int(c), eps2)
				if far {
					continue
				}
				nd := t.nodes[c]
				if mx <= eps2 {
					total += int(nd.end - nd.start)
					continue
				}
				for p := nd.start; p < nd.end; p++ {
					if sqDist(q, t.point(p)) <= eps2 {
						total++
					}
				}
			}
		}
	}
	return total
}

func gridCountAll(pts Points, eps float64, k int) int {
	n, d := pts.Len(), pts.Dim
	type key [8]int32
	cellOf := func(x []float64) key {
		var c key
		for j := range k {
			c[j] = int32(math.Floor(x[j] / eps))
		}
		return c
	}
	cells := map[key][]int32{}
	for i := range n {
		c := cellOf(pts.At(i))
		cells[c] = append(cells[c], int32(i))
	}
	eps2 := eps * eps
	offsets := 1
	for range k {
		offsets *= 3
	}
	total := 0
	for c, members := range cells {
		var near [][]int32
		for o := range offsets {
			nc, r := c, o
			for j := range k {
				nc[j] += int32(r%3) - 1
				r /= 3
			}
			if m, ok := cells[nc]; ok {
				near = append(near, m)
			}
		}
		for _, i := range members {
			x := pts.At(int(i))
			for _, m := range near {
				for _, j := range m {
					if sqDist(x, pts.Data[int(j)*d:int(j)*d+d]) <= eps2 {
						total++
					}
				}
			}
		}
	}
	return total
}
