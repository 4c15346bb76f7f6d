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
	lr := &localResult{m: m, core: make([]bool, m), comp: make([]int32, m)}
	if n == 0 {
		return lr, nil
	}
	r, err := newLocalRun(ctx, pts, m, p)
	if err != nil {
		return nil, err
	}
	if err := r.pass1(); err != nil {
		return nil, err
	}
	if err := r.linkMadeCore(); err != nil {
		return nil, err
	}
	r.indexNodes()
	if err := r.markLinkedLeaves(); err != nil {
		return nil, err
	}
	if err := r.pass2(); err != nil {
		return nil, err
	}
	r.g = nil
	rootComp := r.numberComps(lr)
	r.relations(lr, rootComp)
	return lr, nil
}

// localRun is one clusterLocal: the k-d tree of its points and what its
// phases find, by tree position (pos) or node index.
type localRun struct {
	ctx     context.Context
	t       *kdTree
	p       Params
	m, n    int
	workers int
	eps2    float64
	// tight[i] says that node i's box has a diameter of at most eps.
	tight []bool
	// core[pos] is true for owned core points only.
	core []bool
	// leaves are the tree's leaves in order; leafNo numbers them.
	leaves, leafNo []int32
	lg             *leafGroups
	// g keeps, from pass 1 to pass 2, the full nodes and candidates of the
	// leaves with a core or halo point.
	g *gathered
	// lqs are the workers' buffers of pass 1.
	lqs []leafQuery
	// Per worker, the neighbour lists pass 1 kept (into nbrs): of
	// non-core points (lists) and of the core points it stopped counting
	// (coreLists).
	lists, coreLists [][]nbrList
	nbrs             [][]int32
	lk               *linker
	// firstCore[i] is node i's first owned core point, -1 if none.
	firstCore []int32
	// haloPos holds the positions of the halo points in order; haloPre[pos]
	// counts those before pos.
	haloPos, haloPre []int32
	// recvs are the workers' (halo position, core position) pairs within
	// eps found by pass 2.
	recvs [][]pointComp
}

// nbrList is the neighbours of the point at pos that pass 1 kept:
// nbrs[w][off:off+len] of its worker w.
type nbrList struct {
	pos      int32
	off, len int
}

// newLocalRun builds the tree of pts and the leaves' groups.
func newLocalRun(ctx context.Context, pts Points, m int, p Params) (*localRun, error) {
	r := &localRun{ctx: ctx, p: p, m: m, n: pts.Len(), workers: p.workers(), eps2: p.Eps * p.Eps}
	t, err := buildKD(ctx, pts, r.workers)
	if err != nil {
		return nil, err
	}
	r.t = t
	r.tight = make([]bool, len(t.nodes))
	for i := range t.nodes {
		r.tight[i] = t.diameter2(i) <= r.eps2
	}
	r.core = make([]bool, r.n)
	r.leaves, r.leafNo = t.leafNumbers()
	r.lg, err = t.groupLeaves(ctx, r.workers, r.leaves, r.leafNo)
	if err != nil {
		return nil, err
	}
	r.lg.wide = make([]bool, len(r.leaves))
	for k, l := range r.leaves {
		r.lg.wide[k] = t.diameter2(int(l)) > 4*r.eps2
	}
	return r, nil
}

// owned says whether the point at pos is owned.
func (r *localRun) owned(pos int32) bool { return int(r.t.idx[pos]) < r.m }

// halosOf returns the positions of node i's halo points.
func (r *localRun) halosOf(i int32) []int32 {
	nd := r.t.nodes[i]
	return r.haloPos[r.haloPre[nd.start]:r.haloPre[nd.end]]
}

// pass1 finds the core status of the owned points, leaf by leaf as the
// dual-tree walk finds each leaf's full nodes and candidates. Pass 2
// needs them again for the leaves with a core or halo point only: g
// keeps those.
func (r *localRun) pass1() error {
	r.g = newGathered(r.workers, len(r.leaves))
	r.lqs = make([]leafQuery, r.workers)
	r.lists = make([][]nbrList, r.workers)
	r.coreLists = make([][]nbrList, r.workers)
	r.nbrs = make([][]int32, r.workers)
	return r.t.walkLeaves(r.ctx, r.eps2, r.workers, r.pass1Leaf)
}

// pass1Leaf is pass 1 on leaf l, given its full nodes and candidates, on
// worker w. A tight leaf of at least minPts points is all core, and so is
// every point of a leaf whose full nodes hold minPts points; the others
// are queried in batches.
func (r *localRun) pass1Leaf(w int, l int32, full, cands []int32) {
	t := r.t
	nd := t.nodes[l]
	defer r.keepForPass2(w, l, full, cands)
	if r.tight[l] && t.size(l) >= r.p.MinPts {
		for pos := nd.start; pos < nd.end; pos++ {
			r.core[pos] = r.owned(pos)
		}
		return
	}
	base := 0
	for _, f := range full {
		base += t.size(f)
	}
	lq := &r.lqs[w]
	lq.all = lq.all[:0]
	for pos := nd.start; pos < nd.end; pos++ {
		if !r.owned(pos) {
			continue
		}
		if base >= r.p.MinPts {
			r.core[pos] = true
			continue
		}
		lq.all = append(lq.all, pos)
	}
	// A leaf of many equal points can have many points to query: at most
	// queryBatch at once bound the buffers.
	for b := 0; b < len(lq.all); b += queryBatch {
		r.coreBatch(w, l, lq.all[b:min(b+queryBatch, len(lq.all))], full, cands)
	}
}

// keepForPass2 puts leaf l's full nodes and candidates in g if the leaf
// has a core or halo point.
func (r *localRun) keepForPass2(w int, l int32, full, cands []int32) {
	nd := r.t.nodes[l]
	for pos := nd.start; pos < nd.end; pos++ {
		if r.core[pos] || !r.owned(pos) {
			r.g.put(w, r.leafNo[l], full, cands)
			return
		}
	}
}

// coreBatch counts the neighbours of the points batch of leaf l on worker
// w, stopping at minPts, and keeps their neighbour lists.
func (r *localRun) coreBatch(w int, l int32, batch, full, cands []int32) {
	t, lq := r.t, &r.lqs[w]
	if len(batch) == t.size(l) {
		// The whole leaf: its groups are made.
		lq.startLeaf(t, r.lg, r.leafNo[l], batch, full)
	} else {
		lq.start(t, batch, full)
	}
	// Candidates in chunks, growing: a point that reaches minPts
	// neighbours is core and tests no more of them.
	for c, step := 0, firstChunk; c < len(cands) && lq.live > 0; c, step = c+step, 2*step {
		chunk := cands[c:min(c+step, len(cands))]
		t.nearCands(lq, chunk, r.eps2)
		for i, pos := range lq.pos {
			if lq.done[i] {
				continue
			}
			nb, ok := t.collectCand(r.lg, t.point(pos), r.eps2, r.p.MinPts, chunk, lq.nearOf(i), lq.nb[i])
			lq.nb[i] = nb
			if ok {
				lq.finish(i)
			}
		}
	}
	r.keepNeighbours(w, lq)
}

// keepNeighbours marks the core points of worker w's batch lq and keeps
// the neighbour lists: all of a non-core point's (they say all about it),
// and, of a core point, the at most minPts neighbours that made it core
// (they link it before pass 2).
func (r *localRun) keepNeighbours(w int, lq *leafQuery) {
	for i, pos := range lq.pos {
		nb := lq.nb[i]
		l := nbrList{pos: pos, off: len(r.nbrs[w]), len: len(nb)}
		if lq.done[i] {
			r.core[pos] = true
			l.len = min(l.len, r.p.MinPts)
			r.nbrs[w] = append(r.nbrs[w], nb[:l.len]...)
			r.coreLists[w] = append(r.coreLists[w], l)
			continue
		}
		r.nbrs[w] = append(r.nbrs[w], nb...)
		r.lists[w] = append(r.lists[w], l)
	}
}

// linkMadeCore links every core point to the core points among the
// neighbours that made it core: in a cluster most pairs of pass 2 are then
// known to be in one set.
func (r *localRun) linkMadeCore() error {
	r.lk = &linker{t: r.t, u: newDSU(r.n), linked: make([]atomic.Bool, len(r.t.nodes)), core: r.core}
	core, lk := r.core, r.lk
	return parallel(r.ctx, r.workers, r.workers, 1, func(_, lo, hi int) {
		for w := lo; w < hi; w++ {
			for _, l := range r.coreLists[w] {
				for _, q := range r.nbrs[w][l.off : l.off+l.len] {
					if core[q] && q != l.pos {
						lk.u.union(l.pos, q)
					}
				}
			}
			r.coreLists[w] = nil
		}
	})
}

// indexNodes finds every node's first owned core point, and where every
// node's halo points are in haloPos.
func (r *localRun) indexNodes() {
	t := r.t
	nn := len(t.nodes)
	firstCore := make([]int32, nn)
	for i := nn - 1; i >= 0; i-- {
		nd := t.nodes[i]
		if nd.right < 0 {
			firstCore[i] = -1
			for pos := nd.start; pos < nd.end; pos++ {
				if r.core[pos] {
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
	haloPre := make([]int32, r.n+1) // haloPre[pos]: halo points before pos
	for pos := range int32(r.n) {
		haloPre[pos] = int32(len(haloPos))
		if !r.owned(pos) {
			haloPos = append(haloPos, pos)
		}
	}
	haloPre[r.n] = int32(len(haloPos))
	r.firstCore, r.haloPos, r.haloPre = firstCore, haloPos, haloPre
	r.lk.firstCore = firstCore
}

// markLinkedLeaves marks the leaves whose core points are in one set
// already.
func (r *localRun) markLinkedLeaves() error {
	t, lk := r.t, r.lk
	return parallel(r.ctx, r.workers, len(r.leaves), 64, func(_, lo, hi int) {
		for _, l := range r.leaves[lo:hi] {
			fc := r.firstCore[l]
			if fc < 0 {
				continue
			}
			root, one := lk.u.find(fc), true
			for pos := t.nodes[l].start; pos < t.nodes[l].end && one; pos++ {
				one = !r.core[pos] || lk.u.find(pos) == root
			}
			if one {
				lk.linked[l].Store(true)
			}
		}
	})
}

// pass2 visits every pair of core points (and of a core point and a halo
// point) within eps, linking the core points and recording the halo
// points' core points in recvs. A pair of points in leaves l and c is
// seen from l through a full node holding c and from c through a full
// node holding l (a node is full for a leaf when the largest distance
// between their boxes is at most eps, which is symmetric), or else, when
// the leaves' boxes are within eps, as a candidate pair from the smaller
// of l and c.
func (r *localRun) pass2() error {
	pws := make([]pass2Worker, r.workers)
	for w := range pws {
		pws[w].r = r
	}
	err := parallel(r.ctx, r.workers, len(r.leaves), leafChunk, func(w, lo, hi int) {
		for k := lo; k < hi; k++ {
			pws[w].leaf(k)
		}
	})
	r.recvs = make([][]pointComp, r.workers)
	for w := range pws {
		r.recvs[w] = pws[w].recv
	}
	return err
}

// pass2Worker is a worker of pass 2.
type pass2Worker struct {
	r *localRun
	// recv holds (halo position, core position) pairs within eps.
	recv []pointComp
	// cores holds the core points of the leaf at hand.
	cores []int32
}

// toCores records halo point h against every set of owned core points of
// node i (all within eps of h).
func (pw *pass2Worker) toCores(i, h int32) {
	r := pw.r
	fc := r.firstCore[i]
	switch nd := r.t.nodes[i]; {
	case fc < 0:
	case r.lk.linked[i].Load():
		pw.recv = append(pw.recv, pointComp{h, fc})
	case nd.right < 0:
		for q := nd.start; q < nd.end; q++ {
			if r.core[q] {
				pw.recv = append(pw.recv, pointComp{h, q})
			}
		}
	default:
		pw.toCores(i+1, h)
		pw.toCores(nd.right, h)
	}
}

// leaf is pass 2 from leaf number k: the pairs of its points with those
// of its full nodes and of its candidates.
func (pw *pass2Worker) leaf(k int) {
	r := pw.r
	l := r.leaves[k]
	nd := r.t.nodes[l]
	lHalos := r.halosOf(l)
	if r.firstCore[l] < 0 && len(lHalos) == 0 {
		return
	}
	cores := pw.cores[:0]
	for pos := nd.start; pos < nd.end; pos++ {
		if r.core[pos] {
			cores = append(cores, pos)
		}
	}
	pw.cores = cores
	if r.tight[l] {
		r.lk.connect(l)
	}
	// The core points of l not known to be in one set.
	one := cores
	if len(cores) > 0 && r.lk.linked[l].Load() {
		one = cores[:1]
	}
	full, cand := r.g.of(k)
	for _, f := range full {
		pw.full(f, cores, one, lHalos)
	}
	lLinked := len(cores) > 0 && len(lHalos) == 0 && r.lk.linked[l].Load()
	for _, c := range cand {
		pw.cand(l, c, cores, lLinked)
	}
}

// full pairs a leaf with full node f, whose points are all within eps of
// the leaf's: the leaf's core points (those of one are enough) join f's
// in one set, and the halo points of each side are recorded against the
// core points of the other.
func (pw *pass2Worker) full(f int32, cores, one, lHalos []int32) {
	r := pw.r
	fc := r.firstCore[f]
	fHalos := r.halosOf(f)
	if len(cores) > 0 {
		if fc >= 0 {
			r.lk.connect(f)
			for _, c := range one {
				r.lk.u.union(c, fc)
			}
			for _, h := range fHalos {
				pw.recv = append(pw.recv, pointComp{h, cores[0]})
			}
		} else {
			for _, c := range one {
				for _, h := range fHalos {
					pw.recv = append(pw.recv, pointComp{h, c})
				}
			}
		}
	}
	if fc >= 0 {
		for _, h := range lHalos {
			pw.toCores(f, h)
		}
	}
}

// cand pairs the points of leaf l (its core points are cores; lLinked says
// that they are all in one set and l has no halo point) with those of
// candidate leaf c, unless c < l (the pair is seen from c) or no pair of
// them can link or record anything.
func (pw *pass2Worker) cand(l, c int32, cores []int32, lLinked bool) {
	r := pw.r
	cCore, cHalo := r.firstCore[c] >= 0, len(r.halosOf(c)) > 0
	if c < l || !(cCore || (len(cores) > 0 && cHalo)) {
		return
	}
	// Two leaves whose core points are all in one set: no pair of them
	// can link anything.
	if lLinked && cCore && !cHalo && r.lk.linked[c].Load() && r.lk.u.find(cores[0]) == r.lk.u.find(r.firstCore[c]) {
		return
	}
	nd := r.t.nodes[l]
	for pos := nd.start; pos < nd.end; pos++ {
		pw.candPoint(l, c, pos, cCore, cHalo)
	}
}

// candPoint pairs point pos of leaf l with the points of candidate leaf c
// (cCore: c has a core point; cHalo: a halo point) within eps of it.
func (pw *pass2Worker) candPoint(l, c, pos int32, cCore, cHalo bool) {
	r := pw.r
	t, core, lk, eps2 := r.t, r.core, r.lk, r.eps2
	pCore, pHalo := core[pos], !r.owned(pos)
	if !pCore && !(pHalo && cCore) {
		return
	}
	// Core points already in one set need no distance.
	root := int32(-1)
	if pCore {
		root = lk.u.find(pos)
		if cCore && !cHalo && lk.linked[c].Load() && lk.u.find(r.firstCore[c]) == root {
			return
		}
	}
	x := t.point(pos)
	mx, far := t.boxDist(x, int(c), eps2)
	if far {
		return
	}
	if mx <= eps2 {
		pw.wholeCand(c, pos, pCore, cCore)
		return
	}
	cn := t.nodes[c]
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
		case !pCore || r.owned(q):
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
			pw.recv = append(pw.recv, pointComp{q, pos})
		default:
			pw.recv = append(pw.recv, pointComp{pos, q})
		}
	}
}

// wholeCand pairs point pos (a core point if pCore, else a halo point)
// with candidate leaf c, all of whose points are within eps of it.
func (pw *pass2Worker) wholeCand(c, pos int32, pCore, cCore bool) {
	r := pw.r
	if !pCore {
		pw.toCores(c, pos)
		return
	}
	if cCore {
		r.lk.connect(c)
		r.lk.u.union(pos, r.firstCore[c])
	}
	for _, h := range r.halosOf(c) {
		pw.recv = append(pw.recv, pointComp{h, pos})
	}
}

// numberComps sets the owned points' core status and local clusters in
// lr, numbering the clusters by their lowest (caller) index, and returns
// the cluster of each set's root position (-1 for other positions).
func (r *localRun) numberComps(lr *localResult) []int32 {
	t, u := r.t, r.lk.u
	posOf := make([]int32, r.n)
	for pos, i := range t.idx {
		posOf[i] = int32(pos)
	}
	rootComp := make([]int32, r.n)
	for i := range rootComp {
		rootComp[i] = -1
	}
	for i := range r.m {
		pos := posOf[i]
		lr.core[i] = r.core[pos]
		if !r.core[pos] {
			lr.comp[i] = -1
			continue
		}
		root := u.find(pos)
		if rootComp[root] < 0 {
			rootComp[root] = int32(lr.ncomp)
			lr.ncomp++
		}
		lr.comp[i] = rootComp[root]
	}
	return rootComp
}

// relations sets lr's border points, from their neighbour lists, and
// halo points, from pass 2, with their local clusters (rootComp, from
// numberComps).
func (r *localRun) relations(lr *localResult, rootComp []int32) {
	t, u := r.t, r.lk.u
	for w := range r.lists {
		for _, l := range r.lists[w] {
			b := t.idx[l.pos]
			for _, q := range r.nbrs[w][l.off : l.off+l.len] {
				if r.core[q] {
					lr.border = append(lr.border, pointComp{b, rootComp[u.find(q)]})
				}
			}
		}
		r.lists[w], r.nbrs[w] = nil, nil
	}
	for w := range r.recvs {
		for _, rc := range r.recvs[w] {
			lr.halo = append(lr.halo, pointComp{t.idx[rc.Point], rootComp[u.find(rc.Comp)]})
		}
		r.recvs[w] = nil
	}
	sortCompact(&lr.border)
	sortCompact(&lr.halo)
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
