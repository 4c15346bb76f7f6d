package dbscan

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
)

// localResult is DBSCAN over a point set whose first m points are "owned"
// and the rest "halo" (the partitioned algorithm; Cluster has m = n).
// Core status is computed for owned points only, counting every point of
// the set as a possible neighbour, so it is exact for an owned point
// whenever all its neighbours are in the set. Local clusters are the
// connected components of owned core points linked when within eps.
type localResult struct {
	m int
	// core[i] for owned i.
	core []bool
	// comp[i] is owned core point i's local cluster, numbered 0..ncomp-1
	// in the order of their lowest index; -1 for other points.
	comp  []int32
	ncomp int
	// border holds (owned non-core point, local cluster) for every owned
	// non-core point within eps of an owned core point of the cluster.
	border []pointComp
	// halo holds (halo point, local cluster) for every halo point within
	// eps of an owned core point of the cluster.
	halo []pointComp
}

// pointComp relates a point to a local cluster. Slices of them are sorted
// by Point, then Comp, without duplicates.
type pointComp struct{ Point, Comp int32 }

// leafChunk is the number of consecutive leaves a worker takes at once.
const leafChunk = 8

// clusterLocal runs DBSCAN on pts with the first m points owned.
//
// Queries are batched by leaf of the k-d tree: for a leaf l, one traversal
// finds the nodes wholly within eps of every point of l ("full") and the
// leaves that may hold neighbours of some point of l ("candidates"); each
// point of l then checks only the candidates, skipping those whose box is
// farther than eps from it and taking whole those within eps of it. The
// box tests of a leaf's points are made together (nearCands): each
// candidate against groups of nearby points, then against the points of
// the groups it is not too far from.
//
// Pass 1 counts the neighbours of owned points, leaf by leaf as the
// traversal reaches each leaf, stopping at minPts; a non-core point has
// fewer than minPts neighbours, which it keeps (core neighbours among them
// make it a border point). Only the leaves with a core or halo point keep
// their full nodes and candidates for pass 2.
// Pass 2 visits every pair of core points (and of a core
// point and a halo point) within eps: it links owned core points in a
// union-find and records which halo points are within eps of which owned
// core points. Non-core owned points are skipped before any distance is
// computed: their neighbour lists say all about them. Pass 2 avoids most
// pairs in dense regions: a node whose box has a diameter of at most eps
// ("tight") has its core points linked once; the core points of a full
// node are all within eps of every point of l, so they are linked to one
// of them once per node rather than once per pair; and a node whose core
// points are known to be linked is not walked again.
func clusterLocal(ctx context.Context, pts Points, m int, p Params) (*localResult, error) {
	n := pts.Len()
	if n > math.MaxInt32-1 {
		return nil, fmt.Errorf("dbscan: %d points is more than one set can hold", n)
	}
	workers := p.workers()
	eps2 := p.Eps * p.Eps
	lr := &localResult{m: m, core: make([]bool, m), comp: make([]int32, m)}
	if n == 0 {
		return lr, nil
	}
	t, err := buildKD(ctx, pts, workers)
	if err != nil {
		return nil, err
	}
	nn := len(t.nodes)
	owned := func(pos int32) bool { return int(t.idx[pos]) < m }
	tight := make([]bool, nn)
	for i := range t.nodes {
		tight[i] = t.diameter2(i) <= eps2
	}
	core := make([]bool, n) // by tree position; true for owned core points only

	leaves, leafNo := t.leafNumbers()
	lg, err := t.groupLeaves(ctx, workers, leaves, leafNo)
	if err != nil {
		return nil, err
	}
	lg.wide = make([]bool, len(leaves))
	for k, l := range leaves {
		lg.wide[k] = t.diameter2(int(l)) > 4*eps2
	}
	type nbrList struct {
		pos      int32
		off, len int
	}
	lists := make([][]nbrList, workers)     // non-core points'
	coreLists := make([][]nbrList, workers) // core points' (some)
	nbrs := make([][]int32, workers)
	// Pass 1: core status of owned points, leaf by leaf as the dual-tree
	// walk finds each leaf's full nodes and candidates. Pass 2 needs them
	// again for the leaves with a core or halo point only: g keeps those.
	g := newGathered(workers, len(leaves))
	lqs := make([]leafQuery, workers)
	err = t.walkLeaves(ctx, eps2, workers, func(w int, l int32, full, cands []int32) {
		nd := t.nodes[l]
		defer func() {
			for pos := nd.start; pos < nd.end; pos++ {
				if core[pos] || !owned(pos) {
					g.put(w, leafNo[l], full, cands)
					return
				}
			}
		}()
		if tight[l] && t.size(l) >= p.MinPts {
			for pos := nd.start; pos < nd.end; pos++ {
				core[pos] = owned(pos)
			}
			return
		}
		base := 0
		for _, f := range full {
			base += t.size(f)
		}
		lq := &lqs[w]
		lq.all = lq.all[:0]
		for pos := nd.start; pos < nd.end; pos++ {
			if !owned(pos) {
				continue
			}
			if base >= p.MinPts {
				core[pos] = true
				continue
			}
			lq.all = append(lq.all, pos)
		}
		// A leaf of many equal points can have many points to query:
		// at most queryBatch at once bound the buffers.
		for b := 0; b < len(lq.all); b += queryBatch {
			batch := lq.all[b:min(b+queryBatch, len(lq.all))]
			if len(batch) == t.size(l) {
				// The whole leaf: its groups are made.
				lq.startLeaf(t, lg, leafNo[l], batch, full)
			} else {
				lq.start(t, batch, full)
			}
			// Candidates in chunks, growing: a point that reaches
			// minPts neighbours is core and tests no more of them.
			for c, step := 0, firstChunk; c < len(cands) && lq.live > 0; c, step = c+step, 2*step {
				chunk := cands[c:min(c+step, len(cands))]
				t.nearCands(lq, chunk, eps2)
				for i, pos := range lq.pos {
					if lq.done[i] {
						continue
					}
					nb, ok := t.collectCand(lg, t.point(pos), eps2, p.MinPts, chunk, lq.nearOf(i), lq.nb[i])
					lq.nb[i] = nb
					if ok {
						lq.finish(i)
					}
				}
			}
			for i, pos := range lq.pos {
				nb := lq.nb[i]
				l := nbrList{pos: pos, off: len(nbrs[w]), len: len(nb)}
				if lq.done[i] {
					// Keep the neighbours that made it core (at most
					// minPts): they link it before pass 2.
					core[pos] = true
					l.len = min(l.len, p.MinPts)
					nbrs[w] = append(nbrs[w], nb[:l.len]...)
					coreLists[w] = append(coreLists[w], l)
					continue
				}
				nbrs[w] = append(nbrs[w], nb...)
				lists[w] = append(lists[w], l)
			}
		}
	})
	if err != nil {
		return nil, err
	}

	// The neighbours that made points core link them now: in a cluster
	// most pairs of pass 2 are then known to be in one set.
	lk := &linker{t: t, u: newDSU(n), linked: make([]atomic.Bool, nn), core: core}
	err = parallel(ctx, workers, workers, 1, func(_, lo, hi int) {
		for w := lo; w < hi; w++ {
			for _, l := range coreLists[w] {
				for _, q := range nbrs[w][l.off : l.off+l.len] {
					if core[q] && q != l.pos {
						lk.u.union(l.pos, q)
					}
				}
			}
			coreLists[w] = nil
		}
	})
	if err != nil {
		return nil, err
	}

	// Per node: its first owned core point, and where its halo points are
	// in haloPos.
	firstCore := make([]int32, nn)
	for i := nn - 1; i >= 0; i-- {
		nd := t.nodes[i]
		if nd.right < 0 {
			firstCore[i] = -1
			for pos := nd.start; pos < nd.end; pos++ {
				if core[pos] {
					firstCore[i] = pos
					break
				}
			}
			continue
		}
		firstCore[i] = firstCore[i+1]
		if firstCore[i] < 0 {
			firstCore[i] = firstCore[nd.right]
		}
	}
	var haloPos []int32
	haloPre := make([]int32, n+1) // haloPre[pos]: halo points before pos
	for pos := range int32(n) {
		haloPre[pos] = int32(len(haloPos))
		if !owned(pos) {
			haloPos = append(haloPos, pos)
		}
	}
	haloPre[n] = int32(len(haloPos))
	halosOf := func(i int32) []int32 {
		nd := t.nodes[i]
		return haloPos[haloPre[nd.start]:haloPre[nd.end]]
	}
	lk.firstCore = firstCore
	// Leaves whose core points are in one set already.
	err = parallel(ctx, workers, len(leaves), 64, func(_, lo, hi int) {
		for _, l := range leaves[lo:hi] {
			fc := firstCore[l]
			if fc < 0 {
				continue
			}
			r, one := lk.u.find(fc), true
			for pos := t.nodes[l].start; pos < t.nodes[l].end && one; pos++ {
				one = !core[pos] || lk.u.find(pos) == r
			}
			if one {
				lk.linked[l].Store(true)
			}
		}
	})
	if err != nil {
		return nil, err
	}

	// Pass 2. A pair of points in leaves l and c is seen from l through a
	// full node holding c and from c through a full node holding l (a
	// node is full for a leaf when the largest distance between their
	// boxes is at most eps, which is symmetric), or else, when the leaves'
	// boxes are within eps, as a candidate pair from the smaller of l and
	// c.
	recvs := make([][]pointComp, workers) // (halo position, core position)
	err = parallel(ctx, workers, len(leaves), leafChunk, func(w, lo, hi int) {
		var cores []int32
		recv := recvs[w]
		// toCores records halo point h against every set of owned core
		// points of node i (all within eps of h).
		var toCores func(i, h int32)
		toCores = func(i, h int32) {
			fc := firstCore[i]
			switch nd := t.nodes[i]; {
			case fc < 0:
			case lk.linked[i].Load():
				recv = append(recv, pointComp{h, fc})
			case nd.right < 0:
				for q := nd.start; q < nd.end; q++ {
					if core[q] {
						recv = append(recv, pointComp{h, q})
					}
				}
			default:
				toCores(i+1, h)
				toCores(nd.right, h)
			}
		}
		for k := lo; k < hi; k++ {
			l := leaves[k]
			nd := t.nodes[l]
			lHalos := halosOf(l)
			if firstCore[l] < 0 && len(lHalos) == 0 {
				continue
			}
			cores = cores[:0]
			for pos := nd.start; pos < nd.end; pos++ {
				if core[pos] {
					cores = append(cores, pos)
				}
			}
			if tight[l] {
				lk.connect(l)
			}
			// The core points of l not known to be in one set.
			one := cores
			if len(cores) > 0 && lk.linked[l].Load() {
				one = cores[:1]
			}
			full, cand := g.of(k)
			for _, f := range full {
				fc := firstCore[f]
				fHalos := halosOf(f)
				if len(cores) > 0 {
					if fc >= 0 {
						lk.connect(f)
						for _, c := range one {
							lk.u.union(c, fc)
						}
						for _, h := range fHalos {
							recv = append(recv, pointComp{h, cores[0]})
						}
					} else {
						for _, c := range one {
							for _, h := range fHalos {
								recv = append(recv, pointComp{h, c})
							}
						}
					}
				}
				if fc >= 0 {
					for _, h := range lHalos {
						toCores(f, h)
					}
				}
			}
			lLinked := len(cores) > 0 && len(lHalos) == 0 && lk.linked[l].Load()
			for _, c := range cand {
				cCore, cHalo := firstCore[c] >= 0, len(halosOf(c)) > 0
				if c < l || !(cCore || (len(cores) > 0 && cHalo)) {
					continue
				}
				// Two leaves whose core points are all in one set: no pair
				// of them can link anything.
				if lLinked && cCore && !cHalo && lk.linked[c].Load() && lk.u.find(cores[0]) == lk.u.find(firstCore[c]) {
					continue
				}
				cn := t.nodes[c]
				for pos := nd.start; pos < nd.end; pos++ {
					pCore, pHalo := core[pos], !owned(pos)
					if !pCore && !(pHalo && cCore) {
						continue
					}
					// Core points already in one set need no distance.
					root := int32(-1)
					if pCore {
						root = lk.u.find(pos)
						if cCore && !cHalo && lk.linked[c].Load() && lk.u.find(firstCore[c]) == root {
							continue
						}
					}
					x := t.point(pos)
					mx, far := t.boxDist(x, int(c), eps2)
					if far {
						continue
					}
					if mx <= eps2 {
						// All of c is within eps of pos.
						if pCore {
							if cCore {
								lk.connect(c)
								lk.u.union(pos, firstCore[c])
							}
							for _, h := range halosOf(c) {
								recv = append(recv, pointComp{h, pos})
							}
						} else {
							toCores(c, pos)
						}
						continue
					}
					q := cn.start
					if c == l {
						q = pos + 1
					}
					for ; q < cn.end; q++ {
						switch {
						case core[q]:
							if root >= 0 && lk.u.find(q) == root {
								continue
							}
						case !pCore || owned(q):
							continue
						}
						if sqDist(x, t.point(q)) > eps2 {
							continue
						}
						switch {
						case pCore && core[q]:
							lk.u.union(pos, q)
							root = lk.u.find(pos)
						case pCore:
							recv = append(recv, pointComp{q, pos})
						default:
							recv = append(recv, pointComp{pos, q})
						}
					}
				}
			}
		}
		recvs[w] = recv
	})
	if err != nil {
		return nil, err
	}
	g = nil
	u := lk.u

	// Local clusters, numbered by their lowest (caller) index.
	posOf := make([]int32, n)
	for pos, i := range t.idx {
		posOf[i] = int32(pos)
	}
	rootComp := make([]int32, n)
	for i := range rootComp {
		rootComp[i] = -1
	}
	for i := range m {
		pos := posOf[i]
		lr.core[i] = core[pos]
		if !core[pos] {
			lr.comp[i] = -1
			continue
		}
		r := u.find(pos)
		if rootComp[r] < 0 {
			rootComp[r] = int32(lr.ncomp)
			lr.ncomp++
		}
		lr.comp[i] = rootComp[r]
	}

	// Border points from their neighbour lists; halo points from pass 2.
	for w := range lists {
		for _, l := range lists[w] {
			b := t.idx[l.pos]
			for _, q := range nbrs[w][l.off : l.off+l.len] {
				if core[q] {
					lr.border = append(lr.border, pointComp{b, rootComp[u.find(q)]})
				}
			}
		}
		lists[w], nbrs[w] = nil, nil
	}
	for w := range recvs {
		for _, r := range recvs[w] {
			lr.halo = append(lr.halo, pointComp{t.idx[r.Point], rootComp[u.find(r.Comp)]})
		}
		recvs[w] = nil
	}
	sortCompact(&lr.border)
	sortCompact(&lr.halo)
	return lr, nil
}

func sortCompact(s *[]pointComp) {
	slices.SortFunc(*s, func(a, b pointComp) int {
		return cmp.Or(cmp.Compare(a.Point, b.Point), cmp.Compare(a.Comp, b.Comp))
	})
	*s = slices.Compact(*s)
}

// linker links the owned core points below tree nodes.
type linker struct {
	t         *kdTree
	u         *dsu
	firstCore []int32
	// linked[i]: all owned core points of node i are in one set.
	linked []atomic.Bool
	core   []bool
}

// connect puts every owned core point of node i into one set. The caller
// knows that they are connected: node i is tight, or all its points are
// within eps of one core point. After it, linked[i] holds.
func (lk *linker) connect(i int32) {
	if lk.linked[i].Load() || lk.firstCore[i] < 0 {
		return
	}
	nd := lk.t.nodes[i]
	fc := lk.firstCore[i]
	if nd.right < 0 {
		for pos := nd.start; pos < nd.end; pos++ {
			if lk.core[pos] {
				lk.u.union(fc, pos)
			}
		}
	} else {
		for _, c := range [2]int32{i + 1, nd.right} {
			if lk.firstCore[c] >= 0 {
				lk.connect(c)
				lk.u.union(fc, lk.firstCore[c])
			}
		}
	}
	lk.linked[i].Store(true)
}

// queryBatch is the most points of a leaf nearCands takes at once.
const queryBatch = 64

// firstChunk is the number of candidates pass 1 tests a leaf's points
// against first; each chunk after it is twice as large.
const firstChunk = 32

// queryGroup is the most points nearCands tests as a group.
const queryGroup = 4

// leafQuery is a worker's buffers for the queries of one leaf's points.
type leafQuery struct {
	// all holds the tree positions of the leaf's points to query, pos
	// those of the batch being queried, grouped (see group).
	all, pos []int32
	// nb[i] holds the neighbours of point i found so far; done[i] says
	// that there are enough of them; live counts the points not done.
	nb   [][]int32
	done []bool
	live int
	// nc is the number of candidates nearCands was given; point i's
	// candidates whose box is within eps of it are cand[near[i*nc+j]]
	// for j < cnt[i].
	nc   int
	cnt  []int32
	near []int32
	// Groups of nearby points: group g is pos[gEnd[g-1]:gEnd[g]] (from 0
	// for g = 0), its box gBox[g*dim:][:dim] (in gBoxBuf, or the leaf's
	// group boxes); gLive[g] counts its points
	// not done and gOf[i] is point i's group.
	gEnd    []int
	gBox    []span
	gBoxBuf []span
	gLive   []int32
	gOf     []int32
}

// start begins the queries of the points at positions pos (which it
// reorders), each with the points of the full nodes as neighbours.
func (lq *leafQuery) start(t *kdTree, pos, full []int32) {
	lq.pos = pos
	lq.gEnd, lq.gBoxBuf = lq.gEnd[:0], lq.gBoxBuf[:0]
	t.group(lq, 0, len(pos))
	lq.gBox = lq.gBoxBuf
	lq.begin(t, full)
}

// startLeaf is start for all the points of leaf number k, in tree order,
// whose groups lg has made.
func (lq *leafQuery) startLeaf(t *kdTree, lg *leafGroups, k int32, pos, full []int32) {
	lq.pos = pos
	lq.gEnd = lq.gEnd[:0]
	for _, end := range lg.end[int(k)*leafGroupMax:][:leafGroupMax] {
		e := int(end - pos[0])
		if len(lq.gEnd) > 0 && e == lq.gEnd[len(lq.gEnd)-1] {
			break
		}
		lq.gEnd = append(lq.gEnd, e)
	}
	lq.gBox = lg.box[int(k)*leafGroupMax*t.dim:][:len(lq.gEnd)*t.dim]
	lq.begin(t, full)
}

// begin sets the points' groups and neighbour lists up once pos and the
// groups are.
func (lq *leafQuery) begin(t *kdTree, full []int32) {
	np := len(lq.pos)
	lq.gLive = lq.gLive[:0]
	lq.gOf = slices.Grow(lq.gOf[:0], np)[:np]
	lo := 0
	for g, hi := range lq.gEnd {
		for i := lo; i < hi; i++ {
			lq.gOf[i] = int32(g)
		}
		lq.gLive = append(lq.gLive, int32(hi-lo))
		lo = hi
	}
	lq.done = slices.Grow(lq.done[:0], np)[:np]
	clear(lq.done)
	lq.live = np
	for len(lq.nb) < np {
		lq.nb = append(lq.nb, nil)
	}
	for i := range np {
		nb := lq.nb[i][:0]
		for _, f := range full {
			for q := t.nodes[f].start; q < t.nodes[f].end; q++ {
				nb = append(nb, q)
			}
		}
		lq.nb[i] = nb
	}
}

// finish marks point i done.
func (lq *leafQuery) finish(i int) {
	lq.done[i] = true
	lq.live--
	lq.gLive[lq.gOf[i]]--
}

// nearOf returns the indexes of the candidates within eps of point i.
func (lq *leafQuery) nearOf(i int) []int32 {
	return lq.near[i*lq.nc:][:lq.cnt[i]]
}

// group splits pos[lo:hi] into groups of at most queryGroup points, at the
// median of the widest dimension of their box, appending the groups.
func (t *kdTree) group(lq *leafQuery, lo, hi int) {
	d := t.dim
	at := len(lq.gBoxBuf)
	lq.gBoxBuf = slices.Grow(lq.gBoxBuf, d)[:at+d]
	box := lq.gBoxBuf[at:]
	x := t.point(lq.pos[lo])
	for k := range box {
		box[k] = span{x[k], x[k]}
	}
	for _, pos := range lq.pos[lo+1 : hi] {
		x := t.point(pos)
		for k := range box {
			box[k].lo = min(box[k].lo, x[k])
			box[k].hi = max(box[k].hi, x[k])
		}
	}
	if hi-lo <= queryGroup {
		lq.gEnd = append(lq.gEnd, hi)
		return
	}
	lq.gBoxBuf = lq.gBoxBuf[:at]
	split, width := 0, -1.0
	for k, s := range box {
		if w := s.hi - s.lo; w > width {
			split, width = k, w
		}
	}
	ps := lq.pos[lo:hi]
	slices.SortFunc(ps, func(a, b int32) int { return cmp.Compare(t.coord(int(a), split), t.coord(int(b), split)) })
	mid := lo + (hi-lo)/2
	t.group(lq, lo, mid)
	t.group(lq, mid, hi)
}

// nearCands finds, for every point of lq.pos not done, the candidates
// whose box is within eps of it. It tests each candidate against the
// groups' boxes first (a point of a group farther than eps from the
// candidate is too), then against the points of the other groups: tests
// independent of each other and free of branches, which overlap in the
// CPU. Groups whose points are all done are skipped; the other points of
// a group are tested whether done or not.
func (t *kdTree) nearCands(lq *leafQuery, cand []int32, eps2 float64) {
	d, np, nc := t.dim, len(lq.pos), len(cand)
	lq.nc = nc
	lq.cnt = slices.Grow(lq.cnt[:0], np)[:np]
	clear(lq.cnt)
	lq.near = slices.Grow(lq.near[:0], np*nc)[:np*nc]
	cnt := lq.cnt
	for j, c := range cand {
		b := t.box[int(c)*d:][:d]
		lo := 0
		for gi, hi := range lq.gEnd {
			if lq.gLive[gi] == 0 {
				lo = hi
				continue
			}
			gb := lq.gBox[gi*d:][:len(b)]
			var gmn float64
			for k, s := range b {
				g := max(s.lo-gb[k].hi, gb[k].lo-s.hi, 0)
				gmn += float64(g * g)
			}
			if gmn > eps2 {
				lo = hi
				continue
			}
			for i := lo; i < hi; i++ {
				x := t.pts[int(lq.pos[i])*d:][:len(b)]
				// As boxDist: the gap in each dimension, summed in order.
				var mn float64
				for k, s := range b {
					g := max(s.lo-x[k], x[k]-s.hi, 0)
					mn += float64(g * g)
				}
				lq.near[i*nc+int(cnt[i])] = int32(j)
				cnt[i] += b2i(mn <= eps2)
			}
			lo = hi
		}
	}
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// collectCand appends to out the positions of the points within eps of q
// under the candidates cand[j] for j in near (the candidates whose box is
// within eps of q), until out holds limit points; it reports whether it
// got there (then out holds an arbitrary subset of them). A candidate
// wholly within eps of q is taken whole (none of a wide one can be); in
// the others it tests the points of the groups of lg whose box is within
// eps of q.
func (t *kdTree) collectCand(lg *leafGroups, q []float64, eps2 float64, limit int, cand, near []int32, out []int32) ([]int32, bool) {
	d := t.dim
	if len(out) >= limit {
		return out, true
	}
	for _, j := range near {
		c := cand[j]
		nd := t.nodes[c]
		k := int(lg.leafNo[c])
		if !lg.wide[k] && t.boxMax(q, int(c)) <= eps2 {
			// All of c is within eps of q.
			end := min(nd.end, nd.start+int32(limit-len(out)))
			for pos := nd.start; pos < end; pos++ {
				out = append(out, pos)
			}
		} else {
			k *= leafGroupMax
			start := nd.start
			for g, end := range lg.end[k:][:leafGroupMax] {
				if end == start {
					break
				}
				b := lg.box[(k+g)*d:][:len(q)]
				// As boxDist: the gap in each dimension, summed in order.
				var mn float64
				for i, x := range q {
					gap := max(b[i].lo-x, x-b[i].hi, 0)
					mn += float64(gap * gap)
				}
				if mn <= eps2 {
					pts := t.pts[int(start)*d : int(end)*d]
					for pos := start; pos < end; pos++ {
						if sqDist(q, pts[:d]) <= eps2 {
							out = append(out, pos)
						}
						pts = pts[d:]
					}
				}
				start = end
			}
		}
		if len(out) >= limit {
			return out, true
		}
	}
	return out, false
}

// diameter2 is an upper bound (in floating point) of the squared distance
// of any two points of node i.
func (t *kdTree) diameter2(i int) float64 {
	var s float64
	for _, b := range t.box[t.dim*i:][:t.dim] {
		w := b.hi - b.lo
		s += float64(w * w)
	}
	return s
}
