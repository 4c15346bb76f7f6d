package dbscan

import (
	"context"
	"sync"
)

// kdTree is a k-d tree over a copy of a point set, for radius queries.
//
// Points are stored in tree order (pts, with idx mapping a tree position to
// the caller's index), so a leaf's points are contiguous in memory. Every
// node has its tight bounding box (of the points below it, not of the
// split), which prunes subtrees whose box is farther than eps from the
// query and accepts, without a distance per point, subtrees whose box is
// wholly within eps. Splits are at the median of the widest dimension of
// the node's box, so the depth is at most log2(n/leafSize)+1.
type kdTree struct {
	dim   int
	pts   []float64 // tree order, n*dim
	idx   []int32   // tree position -> caller index
	nodes []kdNode
	box   []span // node i's box is box[dim*i:][:dim]
}

// span is a box's extent in one dimension.
type span struct{ lo, hi float64 }

// kdNode is a node: points [start, end) in tree order. Its left child is
// the next node; right < 0 marks a leaf.
type kdNode struct {
	start, end, right int32
}

// leafSize bounds the points of a leaf (a leaf may hold more when all its
// points are equal).
const leafSize = 16

// maxDepth bounds the tree's depth (median splits: log2(2^31/16) + 1).
const maxDepth = 32

// parallelBuild is the least number of points of a subtree built on a
// goroutine of its own.
const parallelBuild = 1 << 16

// buildKD builds the tree of pts with up to workers goroutines.
func buildKD(ctx context.Context, pts Points, workers int) (*kdTree, error) {
	n := pts.Len()
	t := &kdTree{dim: pts.Dim, pts: append([]float64(nil), pts.Data...), idx: make([]int32, n)}
	for i := range t.idx {
		t.idx[i] = int32(i)
	}
	if n == 0 {
		return t, nil
	}
	sem := make(chan struct{}, max(workers-1, 0))
	b := &kdBuilder{t: t, ctx: ctx, sem: sem}
	b.nodes = make([]kdNode, 0, 2*(n/leafSize+1)+1)
	b.box = make([]span, 0, cap(b.nodes)*pts.Dim)
	b.build(0, n, 0)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.nodes, t.box = b.nodes, b.box
	return t, nil
}

// kdBuilder builds (part of) a tree: it appends nodes in preorder.
type kdBuilder struct {
	t     *kdTree
	ctx   context.Context
	sem   chan struct{}
	nodes []kdNode
	box   []span
}

// build appends the subtree of [start, end). A subtree big enough has its
// right half built on another goroutine when sem has room.
func (b *kdBuilder) build(start, end, depth int) {
	t, d := b.t, b.t.dim
	me := len(b.nodes)
	b.nodes = append(b.nodes, kdNode{start: int32(start), end: int32(end), right: -1})
	b.box = append(b.box, make([]span, d)...)
	box := b.box[len(b.box)-d:]
	t.bounds(start, end, box)
	split, width := 0, 0.0
	for k, s := range box {
		if w := s.hi - s.lo; w > width {
			split, width = k, w
		}
	}
	if end-start <= leafSize || width == 0 || depth >= maxDepth || b.ctx.Err() != nil {
		return
	}
	mid := start + (end-start)/2
	t.selectNth(start, end, mid, split)
	if end-start >= parallelBuild {
		select {
		case b.sem <- struct{}{}:
			rb := &kdBuilder{t: t, ctx: b.ctx, sem: b.sem}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-b.sem }()
				rb.build(mid, end, depth+1)
			}()
			b.build(start, mid, depth+1)
			wg.Wait()
			off := int32(len(b.nodes))
			b.nodes[me].right = off
			for _, c := range rb.nodes {
				if c.right >= 0 {
					c.right += off
				}
				b.nodes = append(b.nodes, c)
			}
			b.box = append(b.box, rb.box...)
			return
		default:
		}
	}
	b.build(start, mid, depth+1)
	b.nodes[me].right = int32(len(b.nodes))
	b.build(mid, end, depth+1)
}

// bounds writes the tight box of points [start, end) into box.
func (t *kdTree) bounds(start, end int, box []span) {
	d := t.dim
	box = box[:d]
	for k, x := range t.pts[start*d : start*d+d] {
		box[k] = span{x, x}
	}
	for i := start + 1; i < end; i++ {
		p := t.pts[i*d : i*d+d]
		p = p[:len(box)]
		for k, x := range p {
			if x < box[k].lo {
				box[k].lo = x
			} else if x > box[k].hi {
				box[k].hi = x
			}
		}
	}
}

func (t *kdTree) coord(i, k int) float64 { return t.pts[i*t.dim+k] }

func (t *kdTree) swap(i, j int) {
	d := t.dim
	a, b := t.pts[i*d:i*d+d], t.pts[j*d:j*d+d]
	for k := range a {
		a[k], b[k] = b[k], a[k]
	}
	t.idx[i], t.idx[j] = t.idx[j], t.idx[i]
}

// selectNth reorders points [lo, hi) so that position nth holds the point
// that would be there if they were sorted by coordinate k, with no greater
// coordinate before it and no smaller one after (Hoare's selection with a
// median-of-three pivot; elements equal to the pivot are spread over both
// sides, so runs of equal values do not make it quadratic).
func (t *kdTree) selectNth(lo, hi, nth, k int) {
	for hi-lo > 12 {
		mid := lo + (hi-lo)/2
		a, b, c := t.coord(lo, k), t.coord(mid, k), t.coord(hi-1, k)
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi-1
		for i <= j {
			for t.coord(i, k) < pivot {
				i++
			}
			for t.coord(j, k) > pivot {
				j--
			}
			if i <= j {
				t.swap(i, j)
				i++
				j--
			}
		}
		switch {
		case nth <= j:
			hi = j + 1
		case nth >= i:
			lo = i
		default:
			return
		}
	}
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && t.coord(j, k) < t.coord(j-1, k); j-- {
			t.swap(j, j-1)
		}
	}
}

// boxDist reports whether node i's box is farther than eps from q (far)
// and, when it is not, the largest squared distance from q to the box.
// Both are bounds in floating point, not only in real arithmetic: for every
// point p of the node, far implies sqDist(q, p) > eps2 and
// sqDist(q, p) <= mx (rounding is monotone, and each coordinate gap comes
// from operands ordered as in sqDist).
func (t *kdTree) boxDist(q []float64, i int, eps2 float64) (mx float64, far bool) {
	b := t.box[len(q)*i:]
	b = b[:len(q)]
	// The gap in dimension k is s.lo - x when x < s.lo, x - s.hi when
	// x > s.hi and 0 otherwise: the largest of the three, with no branch
	// to mispredict. The sum of squares only grows, so testing it once at
	// the end says what testing it after every dimension would.
	var mn float64
	for k, x := range q {
		s := b[k]
		g := max(s.lo-x, x-s.hi, 0)
		mn += float64(g * g)
	}
	if mn > eps2 {
		return 0, true
	}
	return t.boxMax(q, i), false
}

// boxMax returns the largest squared distance from q to node i's box, a
// bound in floating point (see boxDist).
func (t *kdTree) boxMax(q []float64, i int) (mx float64) {
	b := t.box[len(q)*i:]
	b = b[:len(q)]
	for k, x := range q {
		s := b[k]
		f := max(x-s.lo, s.hi-x)
		mx += float64(f * f)
	}
	return mx
}

// boxBoxMin returns the smallest squared distance between a point of node
// a's box and a point of node b's box, as a bound in floating point: for
// every p in a and q in b, mn <= sqDist(p, q).
func (t *kdTree) boxBoxMin(a, b int) (mn float64) {
	d := t.dim
	ba := t.box[d*a:][:d]
	bb := t.box[d*b:][:len(ba)]
	for k, x := range ba {
		y := bb[k]
		// y.lo - x.hi when b is above a, x.lo - y.hi when below, else 0.
		g := max(y.lo-x.hi, x.lo-y.hi, 0)
		mn += float64(g * g)
	}
	return mn
}

// boxBoxMax returns the largest squared distance between a point of node
// a's box and a point of node b's box, as a bound in floating point: for
// every p in a and q in b, sqDist(p, q) <= mx.
func (t *kdTree) boxBoxMax(a, b int) (mx float64) {
	d := t.dim
	ba := t.box[d*a:][:d]
	bb := t.box[d*b:][:len(ba)]
	for k, x := range ba {
		y := bb[k]
		f := max(y.hi-x.lo, x.hi-y.lo)
		mx += float64(f * f)
	}
	return mx
}

// gathered holds, for some leaves l, the nodes all of whose points are
// within eps of every point of l (its full nodes) and the leaves that may
// hold points within eps of some point of l (its candidates). Every point
// within eps of a point of l is under exactly one of them. A leaf c is a
// candidate of l exactly when the smallest squared distance of their boxes
// is at most eps2 and the largest is more (a symmetric relation);
// otherwise, when the boxes are within eps at all, c is under a full node.
// Leaf k's full nodes and candidates are
// arenas[w[k]][off[k]:][:nfull[k]+ncand[k]], full nodes first; a leaf
// never put has none.
type gathered struct {
	arenas       [][]int32
	w            []int32
	off          []int
	nfull, ncand []int32
}

// newGathered returns an empty gathered for nleaves leaves filled by up to
// workers goroutines.
func newGathered(workers, nleaves int) *gathered {
	return &gathered{
		arenas: make([][]int32, workers),
		w:      make([]int32, nleaves),
		off:    make([]int, nleaves),
		nfull:  make([]int32, nleaves),
		ncand:  make([]int32, nleaves),
	}
}

// put records leaf k's full nodes and candidates in worker w's arena.
// Goroutines may put different leaves at once when each has its own w.
func (g *gathered) put(w int, k int32, full, cand []int32) {
	a := g.arenas[w]
	g.w[k], g.off[k], g.nfull[k], g.ncand[k] = int32(w), len(a), int32(len(full)), int32(len(cand))
	a = append(a, full...)
	g.arenas[w] = append(a, cand...)
}

// of returns leaf k's full nodes and candidates.
func (g *gathered) of(k int) (full, cand []int32) {
	a := g.arenas[g.w[k]][g.off[k]:]
	return a[:g.nfull[k]], a[g.nfull[k] : g.nfull[k]+g.ncand[k]]
}

// walkLeaves calls fn once for every leaf l with its full nodes and
// candidates (see gathered), on up to workers goroutines; w is the calling
// goroutine's number, below workers. The slices are valid during the call
// only, and fn may reorder cand. It finds them by a dual-tree descent: the
// nodes that matter to a node's leaves are found from those that matter to
// its parent, so the top of the tree is not walked again for every leaf.
func (t *kdTree) walkLeaves(ctx context.Context, eps2 float64, workers int, fn func(w int, l int32, full, cand []int32)) error {
	if len(t.nodes) == 0 {
		return nil
	}
	// Split the tree into subtrees for the workers: expand the top
	// breadth-first until there are enough of them to balance the load.
	type task struct {
		q          int32
		full, list []int32
	}
	tasks := []task{{q: 0, list: []int32{0}}}
	var scratch dualScratch
	for len(tasks) < 32*workers {
		var next []task
		grew := false
		for _, tk := range tasks {
			nd := t.nodes[tk.q]
			if nd.right < 0 {
				next = append(next, tk)
				continue
			}
			full, list := t.dualFilter(tk.q, eps2, &scratch, tk.list, nil, nil)
			full = append(append([]int32(nil), tk.full...), full...)
			list = append([]int32(nil), list...)
			next = append(next, task{tk.q + 1, full, list}, task{nd.right, full, list})
			grew = true
		}
		tasks = next
		if !grew {
			break
		}
	}
	return parallel(ctx, workers, len(tasks), 1, func(w, lo, hi int) {
		var ds dualScratch
		for _, tk := range tasks[lo:hi] {
			ds.full = append(ds.full[:0], tk.full...)
			t.dualWalk(tk.q, eps2, &ds, tk.list, 0, func(l int32, full, cand []int32) {
				fn(w, l, full, cand)
			})
		}
	})
}

// dualScratch is a worker's buffers for dualWalk: the full nodes of the
// current node and its ancestors, and a list buffer per depth.
type dualScratch struct {
	full  []int32
	lists [][]int32
	stack []int32
}

// dualFilter tests the reference nodes of list (nodes that may matter to
// q's parent) against node q: it appends to full the ones full for q and
// to out the ones that still matter (the leaves among them, and the inner
// nodes kept for q's children). For a leaf q every inner node is
// expanded down to leaves.
func (t *kdTree) dualFilter(q int32, eps2 float64, ds *dualScratch, list, full, out []int32) ([]int32, []int32) {
	qLeaf := t.nodes[q].right < 0
	qSize := t.size(q)
	stack := append(ds.stack[:0], list...)
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.boxBoxMin(int(q), int(r)) > eps2 {
			continue
		}
		if t.boxBoxMax(int(q), int(r)) <= eps2 {
			full = append(full, r)
			continue
		}
		nd := t.nodes[r]
		if nd.right < 0 || (!qLeaf && t.size(r) < qSize) {
			out = append(out, r)
			continue
		}
		stack = append(stack, nd.right, r+1)
	}
	ds.stack = stack
	return full, out
}

// dualWalk descends from node q, whose ancestors' full nodes are in
// ds.full and for which the nodes of list may matter, and calls leaf for
// each leaf below q with its full nodes and candidates.
func (t *kdTree) dualWalk(q int32, eps2 float64, ds *dualScratch, list []int32, depth int, leaf func(l int32, full, cand []int32)) {
	for len(ds.lists) <= depth {
		ds.lists = append(ds.lists, nil)
	}
	mark := len(ds.full)
	var partial []int32
	ds.full, partial = t.dualFilter(q, eps2, ds, list, ds.full, ds.lists[depth][:0])
	ds.lists[depth] = partial
	if nd := t.nodes[q]; nd.right < 0 {
		leaf(q, ds.full, partial)
	} else {
		t.dualWalk(q+1, eps2, ds, partial, depth+1, leaf)
		t.dualWalk(nd.right, eps2, ds, ds.lists[depth], depth+1, leaf)
	}
	ds.full = ds.full[:mark]
}

// leafGroupMax is the most groups leafGroups splits a leaf into, and
// leafGroupSize the size at which a group is not split further.
const (
	leafGroupMax  = 4
	leafGroupSize = 4
)

// leafGroups splits the points of every leaf into up to leafGroupMax
// groups of nearby points (median splits of the widest dimension, down to
// leafGroupSize points), reordering them within the leaf, and keeps each
// group's box: a query point farther than eps from a group's box skips
// its points. Group g of leaf number k ends at tree position
// end[k*leafGroupMax+g] (it starts where the one before it ends, the
// first at the leaf's start); unused groups are empty, at the end. Its
// box is box[(k*leafGroupMax+g)*dim:][:dim].
type leafGroups struct {
	leafNo []int32 // node -> leaf number, for leaves
	end    []int32
	box    []span
	// wide[k] may be set when leaf k's diameter is more than 2 eps: then
	// no point is within eps of all of it (the caller sets it).
	wide []bool
}

// groupLeaves builds the leafGroups of the leaves (leafNo maps a leaf
// node to its index in leaves) on up to workers goroutines.
func (t *kdTree) groupLeaves(ctx context.Context, workers int, leaves, leafNo []int32) (*leafGroups, error) {
	d := t.dim
	lg := &leafGroups{
		leafNo: leafNo,
		end:    make([]int32, len(leaves)*leafGroupMax),
		box:    make([]span, len(leaves)*leafGroupMax*d),
	}
	err := parallel(ctx, workers, len(leaves), 256, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			nd := t.nodes[leaves[k]]
			ends := lg.end[k*leafGroupMax:][:leafGroupMax]
			used := t.groupRange(int(nd.start), int(nd.end), leafGroupMax, ends, lg.box[k*leafGroupMax*d:])
			for g := used; g < leafGroupMax; g++ {
				ends[g] = nd.end
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return lg, nil
}

// groupRange splits points [lo, hi) into at most slots groups, writing
// their ends and boxes, and returns how many it made.
func (t *kdTree) groupRange(lo, hi, slots int, ends []int32, boxes []span) int {
	d := t.dim
	box := boxes[:d]
	t.bounds(lo, hi, box)
	split, width := 0, 0.0
	for k, s := range box {
		if w := s.hi - s.lo; w > width {
			split, width = k, w
		}
	}
	if slots == 1 || hi-lo <= leafGroupSize || width == 0 {
		ends[0] = int32(hi)
		return 1
	}
	mid := lo + (hi-lo)/2
	t.selectNth(lo, hi, mid, split)
	left := t.groupRange(lo, mid, slots/2, ends, boxes)
	return left + t.groupRange(mid, hi, slots-slots/2, ends[left:], boxes[left*d:])
}

// leafNumbers lists the leaf nodes in node order and numbers them:
// leafNo[leaves[k]] == k (leafNo of an inner node is 0).
func (t *kdTree) leafNumbers() (leaves, leafNo []int32) {
	leafNo = make([]int32, len(t.nodes))
	for i, nd := range t.nodes {
		if nd.right < 0 {
			leafNo[i] = int32(len(leaves))
			leaves = append(leaves, int32(i))
		}
	}
	return leaves, leafNo
}

// size is the number of points of node i.
func (t *kdTree) size(i int32) int { return int(t.nodes[i].end - t.nodes[i].start) }

// point returns the point at tree position p.
func (t *kdTree) point(p int32) []float64 {
	d := t.dim
	return t.pts[int(p)*d : int(p)*d+d : int(p)*d+d]
}
