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
// It returns the number of iterations run.
func (w *Web) pageRank() int {
	n := len(w.pages)
	if n == 0 {
		return 0
	}
	// Out-degree and the in-link CSR.
	outdeg := make([]int32, n)
	inStart := make([]int32, n+1)
	for i := range w.pages {
		p := &w.pages[i]
		outdeg[i] = p.linkEnd - p.linkBeg
		for _, t := range w.links[p.linkBeg:p.linkEnd] {
			inStart[t+1]++
		}
	}
	for i := range n {
		inStart[i+1] += inStart[i]
	}
	inLinks := make([]int32, inStart[n])
	fill := append([]int32(nil), inStart[:n]...)
	for i := range w.pages {
		p := &w.pages[i]
		for _, t := range w.links[p.linkBeg:p.linkEnd] {
			inLinks[fill[t]] = int32(i)
			fill[t]++
		}
	}
	for i := range w.pages {
		w.pages[i].inlinks = inStart[i+1] - inStart[i]
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
		dangling := 0.0
		for u := range n {
			if outdeg[u] == 0 {
				dangling += pr[u]
				share[u] = 0
			} else {
				share[u] = pr[u] / float64(outdeg[u])
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
				d := 0.0
				for v := lo; v < hi; v++ {
					sum := 0.0
					for _, u := range inLinks[inStart[v]:inStart[v+1]] {
						sum += share[u]
					}
					x := base + damping*sum
					d += math.Abs(x - pr[v])
					next[v] = x
				}
				diffs[k] = d
			}()
		}
		wg.Wait()
		pr, next = next, pr
		diff := 0.0
		for _, d := range diffs {
			diff += d
		}
		if diff < prTolerance {
			break
		}
	}
	for i := range w.pages {
		w.pages[i].pagerank = pr[i]
	}
	return iter
}
