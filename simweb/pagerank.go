package simweb

import (
	"math"
	"sync"
)

// PageRank parameters.
const (
	damping      = 0.85
	prTolerance  = 1e-8 // L1 change per iteration at which iteration stops (error < 6e-8)
	prMaxIterate = 200
	prWorkers    = 4 // goroutines for large graphs
)

// pageRank computes the PageRank of every page over the link graph (each
// page's distinct outlinks; a redirect links to its target) by power
// iteration with damping 0.85. The rank of dangling pages (no outlinks) is
// spread uniformly over all pages, as is the teleport mass. Ranks sum to 1.
// It pulls over in-links so that the nodes can be split among goroutines
// without races; the result does not depend on the number of goroutines.
// It also sets every page's in-degree. It returns the number of
// iterations run.
func (w *Web) pageRank() int {
	n := len(w.pages)
	if n == 0 {
		return 0
	}
	g := w.linkGraph()
	for i := range w.pages {
		w.pages[i].inlinks = g.inStart[i+1] - g.inStart[i]
	}
	pr := make([]float64, n)
	next := make([]float64, n)
	share := make([]float64, n) // pr[u] / outdeg[u]
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	// The partition depends on n only, so that the stopping test (a sum of
	// per-part differences) and hence the result are the same on every
	// machine.
	workers := 1
	if n >= 20000 {
		workers = prWorkers
	}
	iter := 0
	for iter < prMaxIterate {
		iter++
		diff := g.step(pr, next, share, workers)
		pr, next = next, pr
		if diff < prTolerance {
			break
		}
	}
	for i := range w.pages {
		w.pages[i].pagerank = pr[i]
	}
	return iter
}

// rankGraph is the link graph as PageRank pulls over it: every page's
// out-degree and, in compressed sparse rows, its in-links (the in-links of
// page v are inLinks[inStart[v]:inStart[v+1]]).
type rankGraph struct {
	outdeg  []int32
	inStart []int32
	inLinks []int32
}

// linkGraph builds the rank graph of the web's links.
func (w *Web) linkGraph() rankGraph {
	n := len(w.pages)
	g := rankGraph{outdeg: make([]int32, n), inStart: make([]int32, n+1)}
	for i := range w.pages {
		p := &w.pages[i]
		g.outdeg[i] = p.linkEnd - p.linkBeg
		for _, t := range w.links[p.linkBeg:p.linkEnd] {
			g.inStart[t+1]++
		}
	}
	for i := range n {
		g.inStart[i+1] += g.inStart[i]
	}
	g.inLinks = make([]int32, g.inStart[n])
	fill := append([]int32(nil), g.inStart[:n]...)
	for i := range w.pages {
		p := &w.pages[i]
		for _, t := range w.links[p.linkBeg:p.linkEnd] {
			g.inLinks[fill[t]] = int32(i)
			fill[t]++
		}
	}
	return g
}

// step runs one power iteration from the ranks pr into next, using share
// as scratch, with the pages split into workers contiguous parts each
// summed by its own goroutine. It returns the L1 change, summed part by
// part in order.
func (g rankGraph) step(pr, next, share []float64, workers int) float64 {
	n := len(pr)
	dangling := 0.0
	for u := range n {
		if g.outdeg[u] == 0 {
			dangling += pr[u]
			share[u] = 0
		} else {
			share[u] = pr[u] / float64(g.outdeg[u])
		}
	}
	base := (1-damping)/float64(n) + damping*dangling/float64(n)
	diffs := make([]float64, workers)
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := k*n/workers, (k+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			diffs[k] = g.pull(pr, next, share, base, lo, hi)
		}()
	}
	wg.Wait()
	diff := 0.0
	for _, d := range diffs {
		diff += d
	}
	return diff
}

// pull computes next[v] for the pages v in [lo, hi): the teleport and
// dangling mass base plus the damped shares of v's in-links. It returns
// the part's L1 change from pr.
func (g rankGraph) pull(pr, next, share []float64, base float64, lo, hi int) float64 {
	d := 0.0
	for v := lo; v < hi; v++ {
		sum := 0.0
		for _, u := range g.inLinks[g.inStart[v]:g.inStart[v+1]] {
			sum += share[u]
		}
		x := base + damping*sum
		d += math.Abs(x - pr[v])
		next[v] = x
	}
	return d
}
