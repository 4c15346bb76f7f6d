package dbscan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Noise is the label of a point that belongs to no cluster.
const Noise = -1

// Params are DBSCAN's parameters.
type Params struct {
	// Eps is the neighbourhood radius: q is a neighbour of p when their
	// Euclidean distance is at most Eps (scikit-learn's eps).
	Eps float64
	// MinPts is the least size of a core point's neighbourhood, the point
	// itself included, as in Ester et al. (1996) and scikit-learn's
	// min_samples. 1 makes every point core.
	MinPts int
	// Workers bounds the goroutines Cluster uses; 0 means GOMAXPROCS.
	Workers int
}

// Validate checks the parameters.
func (p Params) Validate() error {
	if !(p.Eps > 0) || math.IsInf(p.Eps, 0) {
		return fmt.Errorf("dbscan: eps must be a positive finite number, not %v", p.Eps)
	}
	if p.MinPts < 1 {
		return fmt.Errorf("dbscan: minPts must be at least 1, not %d", p.MinPts)
	}
	if p.MinPts > math.MaxInt32 {
		return fmt.Errorf("dbscan: minPts %d too large", p.MinPts)
	}
	return nil
}

func (p Params) workers() int {
	if p.Workers > 0 {
		return p.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Result is a DBSCAN clustering.
type Result struct {
	// Labels holds each point's cluster, 0..Clusters-1, or Noise.
	// Clusters are numbered in the order of their lowest-index core
	// point.
	Labels []int32
	// Core says which points are core points.
	Core []bool
	// Clusters is the number of clusters.
	Clusters int
}

// Cluster runs exact DBSCAN (Ester et al., 1996) on pts.
//
// A point is core when at least MinPts points (itself included) lie
// within Eps of it. Clusters are the connected components of the graph of
// core points linked when within Eps of each other; a non-core point
// within Eps of a core point is a border point, any other point is noise.
// The result is deterministic:
//
//   - clusters are numbered 0, 1, ... in the order of their lowest-index
//     core point;
//   - a border point within Eps of core points of several clusters joins
//     the one with the lowest number, that is the cluster whose first core
//     point comes first.
//
// This is exactly what scikit-learn's DBSCAN computes for the same points
// in the same order (its expansion visits core points by index and a
// border point keeps the first cluster that reaches it), so the labels are
// equal to scikit-learn's, not only the same partition. See the package
// doc for the index and the cost.
func Cluster(ctx context.Context, pts Points, p Params) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := pts.Validate(); err != nil {
		return nil, err
	}
	n := pts.Len()
	lr, err := clusterLocal(ctx, pts, n, p)
	if err != nil {
		return nil, err
	}
	res := &Result{Labels: make([]int32, n), Core: lr.core, Clusters: lr.ncomp}
	copy(res.Labels, lr.comp) // -1 (Noise) for non-core points
	for _, b := range lr.border {
		// Sorted by point then cluster: the first is the lowest.
		if res.Labels[b.Point] == Noise {
			res.Labels[b.Point] = b.Comp
		}
	}
	return res, nil
}

// parallel calls fn(w, lo, hi) for consecutive chunks [lo, hi) of 0..n-1
// of the given size on up to workers goroutines (w is the goroutine's
// number). It stops early when ctx is done, and turns a panic into an
// error.
func parallel(ctx context.Context, workers, n, chunk int, fn func(w, lo, hi int)) error {
	workers = max(1, min(workers, (n+chunk-1)/chunk))
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicErr error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					panicErr = fmt.Errorf("dbscan: internal error: %v\n%s", r, debug.Stack())
					mu.Unlock()
					next.Store(int64(n))
				}
			}()
			for ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				fn(w, lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
	return errors.Join(panicErr, ctx.Err())
}
