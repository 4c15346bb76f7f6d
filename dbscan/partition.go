package dbscan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Partitioning splits space into boxes for partitioned DBSCAN: a binary
// tree of axis-parallel cuts whose leaves are the boxes, numbered 0 to
// Boxes-1. A cut (Dim, Value) sends x with x[Dim] < Value to its left
// side and the rest to its right, so every point is in exactly one box
// (boxes are half-open), whatever its coordinates.
type Partitioning struct {
	// Dim is the dimension of the points.
	Dim int `json:"dim"`
	// Nodes are the cuts and boxes; node 0 is the root.
	Nodes []PartNode `json:"nodes"`
	// Boxes is the number of boxes.
	Boxes int `json:"boxes"`
}

// PartNode is a cut (Box < 0: Left and Right are node indices) or a box
// (Box >= 0).
type PartNode struct {
	// Box is the box's number, or -1 for a cut.
	Box int `json:"box"`
	// Dim and Value are a cut's dimension and value.
	Dim   int     `json:"dim,omitempty"`
	Value float64 `json:"value,omitempty"`
	// Left and Right are a cut's sides (node indices).
	Left  int `json:"left,omitempty"`
	Right int `json:"right,omitempty"`
}

// PlanPartitions cuts space into up to parts boxes holding about equal
// shares of sample: each cut is at the sample quantile of the cut's share
// along the dimension where the node's sample spreads most (standard
// deviation), so a node of k boxes gets a left side of k/2 boxes. A node
// whose sample cannot be cut (all its points equal, or too few) stays one
// box, so there may be fewer boxes than parts. The result depends only on
// sample (as a set) and parts.
func PlanPartitions(sample Points, parts int) Partitioning {
	p := Partitioning{Dim: sample.Dim}
	parts = max(parts, 1)
	n := sample.Len()
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	// Sort the sample once so that equal sets give equal cuts whatever
	// their order.
	slices.SortFunc(idx, func(a, b int32) int { return slices.Compare(sample.At(int(a)), sample.At(int(b))) })
	var plan func(idx []int32, parts int) int
	plan = func(idx []int32, parts int) int {
		me := len(p.Nodes)
		p.Nodes = append(p.Nodes, PartNode{Box: -1})
		if parts > 1 && len(idx) >= 2 {
			if dim, value, ok := bestCut(sample, idx, parts); ok {
				var left, right []int32
				for _, i := range idx {
					if sample.At(int(i))[dim] < value {
						left = append(left, i)
					} else {
						right = append(right, i)
					}
				}
				lp := parts / 2
				l := plan(left, lp)
				r := plan(right, parts-lp)
				p.Nodes[me] = PartNode{Box: -1, Dim: dim, Value: value, Left: l, Right: r}
				return me
			}
		}
		p.Nodes[me].Box = p.Boxes
		p.Boxes++
		return me
	}
	plan(idx, parts)
	return p
}

// bestCut chooses the cut of a node: the dimension of largest spread among
// those where the quantile parts/2 / parts of the sample separates some
// points from others.
func bestCut(sample Points, idx []int32, parts int) (dim int, value float64, ok bool) {
	type cand struct {
		dim    int
		spread float64
	}
	var cands []cand
	for k := range sample.Dim {
		var sum, ss float64
		for _, i := range idx {
			sum += sample.At(int(i))[k]
		}
		mean := sum / float64(len(idx))
		for _, i := range idx {
			d := sample.At(int(i))[k] - mean
			ss += d * d
		}
		cands = append(cands, cand{k, math.Sqrt(ss / float64(len(idx)))})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.spread, a.spread) })
	vals := make([]float64, len(idx))
	for _, c := range cands {
		if c.spread == 0 {
			break
		}
		for j, i := range idx {
			vals[j] = sample.At(int(i))[c.dim]
		}
		slices.Sort(vals)
		at := len(vals) * (parts / 2) / parts
		v := vals[at]
		if v > vals[0] {
			return c.dim, v, true
		}
		// Too many equal values at the quantile: cut just above them.
		if j, found := slices.BinarySearch(vals, math.Nextafter(v, math.Inf(1))); found || j < len(vals) {
			return c.dim, vals[j], true
		}
	}
	return 0, 0, false
}

// Owner returns the box that owns x.
func (p *Partitioning) Owner(x []float64) int {
	n := &p.Nodes[0]
	for n.Box < 0 {
		if x[n.Dim] < n.Value {
			n = &p.Nodes[n.Left]
		} else {
			n = &p.Nodes[n.Right]
		}
	}
	return n.Box
}

// Halo appends to dst the boxes other than x's owner whose smallest
// squared distance to x is at most eps2: the boxes that must see x to
// count the neighbours of their own points. The distance to a box is
// built as sqDist is, from the same differences, so for every point p of
// a box B, sqDist(x, p) <= eps2 implies that B is x's owner or in its halo
// (see the package doc, "Floating point").
func (p *Partitioning) Halo(x []float64, eps2 float64, dst []int) []int {
	owner := p.Owner(x)
	var walk func(ni int, gaps []float64)
	gaps := make([]float64, p.Dim)
	walk = func(ni int, gaps []float64) {
		n := p.Nodes[ni]
		if n.Box >= 0 {
			if n.Box != owner && sumSquares(gaps) <= eps2 {
				dst = append(dst, n.Box)
			}
			return
		}
		// The left side is {y: y[Dim] < Value}: x outside it (x >= Value)
		// is x[Dim]-Value away in that dimension; the right side is
		// {y: y[Dim] >= Value}: x below it is Value-x[Dim] away.
		old := gaps[n.Dim]
		x := x[n.Dim]
		if x >= n.Value {
			gaps[n.Dim] = max(old, x-n.Value)
		}
		if sumSquares(gaps) <= eps2 {
			walk(n.Left, gaps)
		}
		gaps[n.Dim] = old
		if x < n.Value {
			gaps[n.Dim] = max(old, n.Value-x)
		}
		if sumSquares(gaps) <= eps2 {
			walk(n.Right, gaps)
		}
		gaps[n.Dim] = old
	}
	walk(0, gaps)
	return dst
}

// sumSquares is the sum of the squares in order, each rounded on its own,
// as sqDist sums.
func sumSquares(g []float64) float64 {
	var s float64
	for _, v := range g {
		s += float64(v * v)
	}
	return s
}

// Validate checks that p is a well-formed tree of cuts over its boxes.
func (p *Partitioning) Validate() error {
	if p.Dim < 1 || len(p.Nodes) == 0 {
		return fmt.Errorf("dbscan: partitioning of dimension %d with %d nodes", p.Dim, len(p.Nodes))
	}
	seen := make([]bool, p.Boxes)
	visited := make([]bool, len(p.Nodes))
	var walk func(i int) error
	walk = func(i int) error {
		if i < 0 || i >= len(p.Nodes) || visited[i] {
			return fmt.Errorf("dbscan: partitioning: node %d is not a tree node", i)
		}
		visited[i] = true
		n := p.Nodes[i]
		if n.Box >= 0 {
			if n.Box >= p.Boxes || seen[n.Box] {
				return fmt.Errorf("dbscan: partitioning: box %d out of range or twice", n.Box)
			}
			seen[n.Box] = true
			return nil
		}
		if n.Dim < 0 || n.Dim >= p.Dim || math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
			return fmt.Errorf("dbscan: partitioning: node %d cuts dimension %d at %v", i, n.Dim, n.Value)
		}
		if err := walk(n.Left); err != nil {
			return err
		}
		return walk(n.Right)
	}
	if err := walk(0); err != nil {
		return err
	}
	for i, v := range visited {
		if !v {
			return fmt.Errorf("dbscan: partitioning: node %d is not in the tree", i)
		}
	}
	for b, ok := range seen {
		if !ok {
			return fmt.Errorf("dbscan: partitioning: no node for box %d", b)
		}
	}
	return nil
}

// MarshalText encodes p as JSON (cut values round-trip exactly).
func (p Partitioning) MarshalText() ([]byte, error) {
	type plain Partitioning
	return json.Marshal(plain(p))
}

// UnmarshalText decodes MarshalText's encoding and validates it.
func (p *Partitioning) UnmarshalText(b []byte) error {
	type plain Partitioning
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("dbscan: partitioning: %w", err)
	}
	*p = Partitioning(q)
	return p.Validate()
}

// boxLoads counts, for every box, the points of sample it holds or has in
// its halo at eps2: the points its local clustering would see.
func (p *Partitioning) boxLoads(sample Points, eps2 float64) []int {
	loads := make([]int, p.Boxes)
	var halo []int
	for i := range sample.Len() {
		x := sample.At(i)
		loads[p.Owner(x)]++
		halo = p.Halo(x, eps2, halo[:0])
		for _, b := range halo {
			loads[b]++
		}
	}
	return loads
}

// boxPointBytes is what a box's local clustering holds per point it sees
// (its own and its halo), as measured on 6-d points with minPts 12: the
// point as the reduce decodes it (key and coordinates), its copy in the
// point set and in the k-d tree, the tree's nodes, the neighbour lists
// kept from pass 1 (at most minPts per point), the leaves' candidates kept
// for pass 2, the union-find and the result's rows. planBoxes sizes the
// boxes with it.
const boxPointBytes = 640

// planBoxes cuts space into boxes on sample (n points in all) so that
// every box's clustering is estimated to hold at most share bytes
// (boxPointBytes per point it sees, its halo at eps included), with at
// least minBoxes boxes, at most maxPartitions. It returns the
// partitioning and the estimated bytes of its largest box.
//
// A box's estimate scales its sample count (plus three standard
// deviations of it, as a binomial count) to n. It starts from
// PlanPartitions' minBoxes boxes of equal shares and then cuts in two, at
// the median of its widest dimension, every box whose estimate is over
// the share, until none is or none can be cut. Cutting only the boxes
// that need it keeps the boxes few: a box's halo grows with its surface,
// not its points, so equal shares of the points would make the sparse
// boxes as small as the dense ones need and copy many more points into
// halos.
func planBoxes(sample Points, n int64, eps float64, minBoxes int, share int64) (Partitioning, int64) {
	eps2 := eps * eps
	m := sample.Len()
	part := PlanPartitions(sample, min(max(minBoxes, 1), maxPartitions))
	// The sample in the order PlanPartitions sorts it, so that the cuts
	// depend on the sample as a set.
	idx := make([]int32, m)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return slices.Compare(sample.At(int(a)), sample.At(int(b))) })
	for {
		loads := part.boxLoads(sample, eps2)
		over := make([]bool, part.Boxes)
		anyOver := false
		for b, l := range loads {
			over[b] = boxBytes(l, m, n) > share
			anyOver = anyOver || over[b]
		}
		if !anyOver || part.Boxes >= maxPartitions {
			return part, largestBox(loads, m, n)
		}
		members := make([][]int32, part.Boxes)
		for _, i := range idx {
			if b := part.Owner(sample.At(int(i))); over[b] {
				members[b] = append(members[b], i)
			}
		}
		cut := false
		for ni := range part.Nodes {
			nd := part.Nodes[ni]
			if nd.Box < 0 || !over[nd.Box] || part.Boxes >= maxPartitions || len(members[nd.Box]) < 2 {
				continue
			}
			dim, value, ok := bestCut(sample, members[nd.Box], 2)
			if !ok {
				continue
			}
			l, r := len(part.Nodes), len(part.Nodes)+1
			part.Nodes = append(part.Nodes, PartNode{Box: nd.Box}, PartNode{Box: part.Boxes})
			part.Boxes++
			part.Nodes[ni] = PartNode{Box: -1, Dim: dim, Value: value, Left: l, Right: r}
			cut = true
		}
		if !cut {
			return part, largestBox(loads, m, n)
		}
	}
}

// boxBytes is the estimated bytes of a box of load sample points, of a
// sample of m of n points: the load scaled to n plus three standard
// deviations (a binomial count), times boxPointBytes.
func boxBytes(load, m int, n int64) int64 {
	if m == 0 {
		return 0
	}
	frac := float64(load) / float64(m)
	est := float64(n) * frac
	sd := float64(n) * math.Sqrt(frac*(1-frac)/float64(m))
	return int64((est + 3*sd) * boxPointBytes)
}

// largestBox is the estimated bytes of the box with the largest load, of
// loads counted on a sample of m of n points.
func largestBox(loads []int, m int, n int64) int64 {
	return boxBytes(slices.Max(loads), m, n)
}
