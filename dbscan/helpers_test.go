package dbscan

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// bruteNeighbours lists every point's neighbours (itself included) by
// comparing all pairs.
func bruteNeighbours(pts Points, eps float64) [][]int32 {
	n := pts.Len()
	eps2 := eps * eps
	nbrs := make([][]int32, n)
	for i := range n {
		for j := range n {
			if sqDist(pts.At(i), pts.At(j)) <= eps2 {
				nbrs[i] = append(nbrs[i], int32(j))
			}
		}
	}
	return nbrs
}

// bruteDBSCAN is an independent reference over bruteNeighbours' lists:
// scikit-learn's expansion (dbscan_inner: a depth-first search from each
// unlabelled core point in index order; a point is labelled when it is
// popped, and only core points push their neighbours).
func bruteDBSCAN(nbrs [][]int32, minPts int) (labels []int32, core []bool) {
	n := len(nbrs)
	core = make([]bool, n)
	labels = make([]int32, n)
	for i := range n {
		core[i] = len(nbrs[i]) >= minPts
		labels[i] = -1
	}
	label := int32(0)
	for i := range n {
		if labels[i] != -1 || !core[i] {
			continue
		}
		stack := []int32{int32(i)}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if labels[v] != -1 {
				continue
			}
			labels[v] = label
			if core[v] {
				for _, w := range nbrs[v] {
					if labels[w] == -1 {
						stack = append(stack, w)
					}
				}
			}
		}
		label++
	}
	return labels, core
}

// genBlobs draws n points in d dimensions: Gaussian blobs of random
// centres and widths, plus a share of uniform noise over the blobs' range.
func genBlobs(r *rand.Rand, n, d, blobs int, noise float64) Points {
	centres := make([][]float64, blobs)
	widths := make([]float64, blobs)
	for b := range centres {
		centres[b] = make([]float64, d)
		for k := range centres[b] {
			centres[b][k] = r.Float64()*20 - 10
		}
		widths[b] = 0.2 + r.Float64()*1.5
	}
	p := NewPoints(d, n)
	x := make([]float64, d)
	for range n {
		if r.Float64() < noise {
			for k := range x {
				x[k] = r.Float64()*26 - 13
			}
		} else {
			b := r.IntN(blobs)
			for k := range x {
				x[k] = centres[b][k] + widths[b]*r.NormFloat64()
			}
		}
		p.Append(x)
	}
	return p
}

// genLattice draws n points on a small integer lattice: many duplicates,
// and many pairs at exactly distance 1, sqrt(2), ... (the eps boundary).
func genLattice(r *rand.Rand, n, d, side int) Points {
	p := NewPoints(d, n)
	x := make([]float64, d)
	for range n {
		for k := range x {
			x[k] = float64(r.IntN(side))
		}
		p.Append(x)
	}
	return p
}

// genWebFeatures draws n rows shaped like simweb's page features after
// FeatureVector (log1p of words, outlinks, inlinks, images and bytes;
// depth as is), standardized: a mixture of page kinds (home, directory,
// leaf by genre, document) with lognormal words and outlinks, Poisson
// images, Zipf-like inlinks and small integer depths. Heavy-tailed before
// log1p, lumpy and partly discrete after it, as the real features are.
func genWebFeatures(r *rand.Rand, n int) Points {
	type kind struct {
		share, words, wsig, links, lsig, images float64
		depth                                   [2]int
	}
	kinds := []kind{
		{0.02, 200, 0.5, 40, 0.4, 5, [2]int{0, 0}},
		{0.15, 80, 0.6, 25, 0.5, 1, [2]int{1, 3}},
		{0.25, 500, 0.7, 14, 0.5, 1.5, [2]int{2, 5}},
		{0.20, 300, 0.7, 18, 0.5, 1.5, [2]int{2, 5}},
		{0.20, 450, 0.7, 10, 0.5, 1.5, [2]int{1, 4}},
		{0.15, 350, 0.7, 8, 0.5, 1.5, [2]int{2, 6}},
		{0.03, 1200, 0.8, 0, 0, 0, [2]int{2, 6}},
	}
	p := NewPoints(6, n)
	for range n {
		u := r.Float64()
		k := kinds[len(kinds)-1]
		for _, c := range kinds {
			if u < c.share {
				k = c
				break
			}
			u -= c.share
		}
		zw := r.NormFloat64()
		words := math.Round(min(max(k.words*math.Exp(k.wsig*zw), 10), 20000))
		links := 0.0
		if k.links > 0 {
			links = math.Round(k.links * math.Exp(k.lsig*r.NormFloat64()))
		}
		inl := math.Floor(math.Pow(1-r.Float64(), -1/1.2)) - 1 // Pareto, heavy tail
		img := poisson(r, k.images*math.Exp(0.3*zw))
		depth := float64(k.depth[0] + r.IntN(k.depth[1]-k.depth[0]+1))
		bytes := math.Round(words*6.2*math.Exp(0.15*r.NormFloat64()) + 900 + 60*links)
		p.Append([]float64{math.Log1p(words), math.Log1p(links), math.Log1p(inl), math.Log1p(img), depth, math.Log1p(bytes)})
	}
	FitScaler(p).Apply(p)
	return p
}

func poisson(r *rand.Rand, lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	l, k, prod := math.Exp(-lambda), 0.0, r.Float64()
	for prod > l {
		k++
		prod *= r.Float64()
	}
	return k
}

// equalLabels fails t unless got and want are identical.
func equalLabels(t testing.TB, what string, got, want []int32, gotCore, wantCore []bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d labels, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] || gotCore[i] != wantCore[i] {
			if bad < 5 {
				t.Errorf("%s: point %d: label %d core %v, want label %d core %v", what, i, got[i], gotCore[i], want[i], wantCore[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d points differ", what, bad, len(got))
	}
}

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }

// fmtFloat formats f in strconv's shortest round-tripping form.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
