package dbscan

import "sync/atomic"

// dsu is a union-find forest over 0..n-1 that is safe for concurrent
// unions and finds. A root is always the smallest element of its set at
// the time it was linked (larger roots are linked under smaller ones), and
// find halves paths with compare-and-swap. The partition it ends with does
// not depend on the order of the unions.
type dsu struct {
	parent []int32
}

func newDSU(n int) *dsu {
	u := &dsu{parent: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
	}
	return u
}

// find returns the root of x's set.
func (u *dsu) find(x int32) int32 {
	for {
		p := atomic.LoadInt32(&u.parent[x])
		if p == x {
			return x
		}
		g := atomic.LoadInt32(&u.parent[p])
		if g == p {
			return p
		}
		atomic.CompareAndSwapInt32(&u.parent[x], p, g)
		x = g
	}
}

// union merges the sets of a and b.
func (u *dsu) union(a, b int32) {
	for {
		a, b = u.find(a), u.find(b)
		if a == b {
			return
		}
		if a < b {
			a, b = b, a
		}
		if atomic.CompareAndSwapInt32(&u.parent[a], a, b) {
			return
		}
	}
}
