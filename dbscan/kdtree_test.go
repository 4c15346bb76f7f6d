package dbscan

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// gather is the plain version of gatherAll for one leaf l: a walk from the
// root that keeps the maximal full nodes and the candidate leaves.
func (t *kdTree) gather(l int, eps2 float64) (full, cand []int32) {
	stack := []int32{0}
	for len(stack) > 0 {
		ni := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.boxBoxMin(l, int(ni)) > eps2 {
			continue
		}
		if t.boxBoxMax(l, int(ni)) <= eps2 {
			full = append(full, ni)
			continue
		}
		nd := t.nodes[ni]
		if nd.right < 0 {
			cand = append(cand, ni)
			continue
		}
		stack = append(stack, nd.right, ni+1)
	}
	return full, cand
}

// pointsUnder lists the tree positions under the nodes, sorted.
func (t *kdTree) pointsUnder(nodes []int32) []int32 {
	var out []int32
	for _, n := range nodes {
		for p := t.nodes[n].start; p < t.nodes[n].end; p++ {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func TestKDTreeStructure(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, pts := range []Points{genBlobs(r, 5000, 3, 4, 0.1), genLattice(r, 3000, 4, 3), genWebFeatures(r, 4000)} {
		for _, workers := range []int{1, 4} {
			tr, err := buildKD(context.Background(), pts, workers)
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]bool, pts.Len())
			for pos, i := range tr.idx {
				if seen[i] {
					t.Fatalf("index %d twice", i)
				}
				seen[i] = true
				if !slices.Equal(tr.point(int32(pos)), pts.At(int(i))) {
					t.Fatalf("position %d holds %v, point %d is %v", pos, tr.point(int32(pos)), i, pts.At(int(i)))
				}
			}
			// Every node's box is the tight box of its points, and its
			// children split its range.
			for i, nd := range tr.nodes {
				box := make([]span, pts.Dim)
				tr.bounds(int(nd.start), int(nd.end), box)
				if !slices.Equal(box, tr.box[pts.Dim*i:][:pts.Dim]) {
					t.Fatalf("node %d: box %v, points span %v", i, tr.box[pts.Dim*i:][:pts.Dim], box)
				}
				if nd.right >= 0 {
					l, rt := tr.nodes[i+1], tr.nodes[nd.right]
					if l.start != nd.start || l.end != rt.start || rt.end != nd.end {
						t.Fatalf("node %d %v: children %v %v", i, nd, l, rt)
					}
				} else if nd.end-nd.start > leafSize && tr.diameter2(i) != 0 {
					t.Fatalf("leaf %d of %d points is not all one point", i, nd.end-nd.start)
				}
			}
		}
	}
}

// TestGatherAll checks that the dual-tree descent finds, for every leaf,
// the candidates of the plain walk and full nodes holding the same points,
// and that the candidate relation is symmetric.
func TestGatherAll(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		pts Points
		eps float64
	}{
		{genBlobs(r, 6000, 2, 5, 0.1), 0.3},
		{genBlobs(r, 6000, 5, 5, 0.1), 1.5},
		{genLattice(r, 4000, 3, 5), 1},
		{genWebFeatures(r, 8000), 0.3},
	} {
		tr, err := buildKD(context.Background(), c.pts, 2)
		if err != nil {
			t.Fatal(err)
		}
		leaves, leafNo := tr.leafNumbers()
		eps2 := c.eps * c.eps
		g, err := tr.gatherAll(context.Background(), eps2, 3, leafNo, len(leaves))
		if err != nil {
			t.Fatal(err)
		}
		candOf := map[[2]int32]bool{}
		for k, l := range leaves {
			full, cand := g.of(k)
			wantFull, wantCand := tr.gather(int(l), eps2)
			gotC, wantC := slices.Sorted(slices.Values(cand)), slices.Sorted(slices.Values(wantCand))
			if !slices.Equal(gotC, wantC) {
				t.Fatalf("leaf %d: candidates %v, want %v", l, gotC, wantC)
			}
			if got, want := tr.pointsUnder(full), tr.pointsUnder(wantFull); !slices.Equal(got, want) {
				t.Fatalf("leaf %d: full nodes hold %d points, want %d", l, len(got), len(want))
			}
			for _, c := range cand {
				candOf[[2]int32{l, c}] = true
			}
		}
		for lc := range candOf {
			if !candOf[[2]int32{lc[1], lc[0]}] {
				t.Fatalf("leaf %d is a candidate of %d but not the other way", lc[1], lc[0])
			}
		}
	}
}

// TestLeafGroups checks that every leaf's groups split its points in
// order, are at most leafGroupMax, each with the tight box of its points,
// and that the grouping keeps the tree whole: every point once, at the
// position idx says, every node's box still its points'.
func TestLeafGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, pts := range []Points{genBlobs(r, 5000, 3, 4, 0.1), genLattice(r, 3000, 4, 3), genWebFeatures(r, 4000)} {
		tr, err := buildKD(context.Background(), pts, 2)
		if err != nil {
			t.Fatal(err)
		}
		leaves, leafNo := tr.leafNumbers()
		lg, err := tr.groupLeaves(context.Background(), 3, leaves, leafNo)
		if err != nil {
			t.Fatal(err)
		}
		d := pts.Dim
		for k, l := range leaves {
			nd := tr.nodes[l]
			start, groups := nd.start, 0
			for g, end := range lg.end[k*leafGroupMax:][:leafGroupMax] {
				if end < start || end > nd.end {
					t.Fatalf("leaf %d group %d ends at %d, after %d, leaf [%d, %d)", l, g, end, start, nd.start, nd.end)
				}
				if end == start {
					continue
				}
				groups++
				box := make([]span, d)
				tr.bounds(int(start), int(end), box)
				if !slices.Equal(box, lg.box[(k*leafGroupMax+g)*d:][:d]) {
					t.Fatalf("leaf %d group %d: box %v, its points span %v", l, g, lg.box[(k*leafGroupMax+g)*d:][:d], box)
				}
				if end-start > leafGroupSize && nd.end-nd.start <= leafGroupMax*leafGroupSize {
					// Only points all equal make a bigger group.
					for _, s := range box {
						if s.hi > s.lo {
							t.Fatalf("leaf %d group %d has %d points, not all equal", l, g, end-start)
						}
					}
				}
				start = end
			}
			if start != nd.end || groups == 0 {
				t.Fatalf("leaf %d [%d, %d): groups end at %d, %d groups", l, nd.start, nd.end, start, groups)
			}
		}
		seen := make([]bool, pts.Len())
		for pos, i := range tr.idx {
			if seen[i] || !slices.Equal(tr.point(int32(pos)), pts.At(int(i))) {
				t.Fatalf("position %d: point %d seen twice or moved without its index", pos, i)
			}
			seen[i] = true
		}
		for i, nd := range tr.nodes {
			box := make([]span, d)
			tr.bounds(int(nd.start), int(nd.end), box)
			if !slices.Equal(box, tr.box[d*i:][:d]) {
				t.Fatalf("node %d: box changed by the grouping", i)
			}
		}
	}
}

// gatherAll finds the full nodes and candidates of every leaf (see
// walkLeaves). leafNo maps a leaf node to its number.
func (t *kdTree) gatherAll(ctx context.Context, eps2 float64, workers int, leafNo []int32, nleaves int) (*gathered, error) {
	g := newGathered(workers, nleaves)
	err := t.walkLeaves(ctx, eps2, workers, func(w int, l int32, full, cand []int32) {
		g.put(w, leafNo[l], full, cand)
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}
