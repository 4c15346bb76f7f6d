package dbscan

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// DefaultEpsSample is how many points' k-distances SuggestEps computes
// (evenly spaced through the set) when there are more points.
const DefaultEpsSample = 20000

// KDistances returns the sorted (ascending) k-distance curve of pts for
// minPts: for each point, the distance to its (minPts-1)-th nearest other
// point, that is the smallest eps at which the point would be core. With
// sample > 0 and more points than that, it computes the curve for sample
// points evenly spaced through pts (their neighbours are still searched
// among all points).
func KDistances(ctx context.Context, pts Points, minPts, sample, workers int) ([]float64, error) {
	if minPts < 2 {
		return nil, fmt.Errorf("dbscan: the k-distance needs minPts >= 2, not %d", minPts)
	}
	if err := pts.Validate(); err != nil {
		return nil, err
	}
	n := pts.Len()
	if n < minPts {
		return nil, fmt.Errorf("dbscan: %d points are too few for minPts %d", n, minPts)
	}
	if workers <= 0 {
		workers = Params{}.workers()
	}
	t, err := buildKD(ctx, pts, workers)
	if err != nil {
		return nil, err
	}
	m := n
	if sample > 0 && sample < n {
		m = sample
	}
	out := make([]float64, m)
	err = parallel(ctx, workers, m, 64, func(w, lo, hi int) {
		heap := make([]float64, 0, minPts)
		for j := lo; j < hi; j++ {
			i := j
			if m < n {
				i = int(int64(j) * int64(n) / int64(m))
			}
			// minPts nearest points, the point itself (at 0) included.
			heap = t.nearest(pts.At(i), minPts, heap[:0])
			out[j] = math.Sqrt(heap[0])
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// Knee returns the index of the knee of an ascending curve: the point
// farthest below the chord from its first to its last point, with both
// axes scaled to [0, 1] (the "kneedle" idea; for a k-distance curve, where
// the distances start to shoot up). A curve of fewer than 3 points, or a
// straight one, has its knee at its last point.
func Knee(curve []float64) int {
	n := len(curve)
	if n < 3 {
		return n - 1
	}
	lo, hi := curve[0], curve[n-1]
	if hi <= lo {
		return n - 1
	}
	best, at := 0.0, n-1
	for i, y := range curve {
		x := float64(i) / float64(n-1)
		yn := (y - lo) / (hi - lo)
		if d := x - yn; d > best { // the chord is y = x
			best, at = d, i
		}
	}
	return at
}

// SuggestEps suggests an eps for DBSCAN with minPts: the k-distance
// (k = minPts-1) at the knee of the sorted k-distance curve (Ester et al.
// chose eps by eye on this curve; the knee is where points stop being in
// dense regions). It samples DefaultEpsSample points of large sets.
func SuggestEps(pts Points, minPts int) (float64, error) {
	curve, err := KDistances(context.Background(), pts, minPts, DefaultEpsSample, 0)
	if err != nil {
		return 0, err
	}
	return curve[Knee(curve)], nil
}

// nearest returns the squared distances of the k points nearest q, as a
// max-heap (the largest first) in heap, which it reuses.
func (t *kdTree) nearest(q []float64, k int, heap []float64) []float64 {
	if len(t.nodes) == 0 {
		return heap
	}
	var stack [2*maxDepth + 2]int32
	sp := 0
	stack[sp] = 0
	sp++
	for sp > 0 {
		sp--
		ni := stack[sp]
		if len(heap) == k && t.boxMin(q, int(ni)) > heap[0] {
			continue
		}
		nd := t.nodes[ni]
		if nd.right < 0 {
			for p := nd.start; p < nd.end; p++ {
				d := sqDist(q, t.point(p))
				switch {
				case len(heap) < k:
					heap = append(heap, d)
					siftUp(heap, len(heap)-1)
				case d < heap[0]:
					heap[0] = d
					siftDown(heap, 0)
				}
			}
			continue
		}
		// The nearer child last, so it is searched first.
		l, r := ni+1, nd.right
		if t.boxMin(q, int(l)) > t.boxMin(q, int(r)) {
			l, r = r, l
		}
		stack[sp] = r
		stack[sp+1] = l
		sp += 2
	}
	return heap
}

// boxMin is the smallest squared distance from q to node i's box.
func (t *kdTree) boxMin(q []float64, i int) float64 {
	b := t.box[len(q)*i:]
	b = b[:len(q)]
	var mn float64
	for k, x := range q {
		var g float64
		if s := b[k]; x < s.lo {
			g = s.lo - x
		} else if x > s.hi {
			g = x - s.hi
		}
		mn += float64(g * g)
	}
	return mn
}

func siftUp(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] >= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []float64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] > h[c] {
			c++
		}
		if h[i] >= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
