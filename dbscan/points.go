package dbscan

import (
	"fmt"
	"math"
)

// Points is a set of points of dimension Dim stored row-major: point i is
// Data[i*Dim : (i+1)*Dim]. A point's index is its identity for the
// deterministic rules of Cluster (cluster numbering, border assignment).
type Points struct {
	// Dim is the number of coordinates of a point.
	Dim int
	// Data holds the coordinates, point after point.
	Data []float64
}

// NewPoints returns an empty set of points of dimension dim with room for
// n points.
func NewPoints(dim, n int) Points {
	return Points{Dim: dim, Data: make([]float64, 0, dim*n)}
}

// PointsFromRows copies rows (all of one length) into a Points.
func PointsFromRows(rows [][]float64) (Points, error) {
	if len(rows) == 0 {
		return Points{}, nil
	}
	p := NewPoints(len(rows[0]), len(rows))
	for i, r := range rows {
		if len(r) != p.Dim {
			return Points{}, fmt.Errorf("dbscan: row %d has %d values, row 0 has %d", i, len(r), p.Dim)
		}
		p.Data = append(p.Data, r...)
	}
	return p, nil
}

// Len is the number of points.
func (p Points) Len() int {
	if p.Dim <= 0 {
		return 0
	}
	return len(p.Data) / p.Dim
}

// At returns point i (a slice of Data, not a copy).
func (p Points) At(i int) []float64 { return p.Data[i*p.Dim : (i+1)*p.Dim : (i+1)*p.Dim] }

// Append adds a point; it must have Dim values.
func (p *Points) Append(x []float64) error {
	if len(x) != p.Dim {
		return fmt.Errorf("dbscan: point of %d values in a set of dimension %d", len(x), p.Dim)
	}
	p.Data = append(p.Data, x...)
	return nil
}

// Validate checks that the set is well formed (Dim >= 1, Data a whole
// number of points) and that every coordinate is finite: NaN or an
// infinity would make distances meaningless.
func (p Points) Validate() error {
	if p.Dim <= 0 {
		if len(p.Data) == 0 {
			return nil
		}
		return fmt.Errorf("dbscan: dimension %d", p.Dim)
	}
	if len(p.Data)%p.Dim != 0 {
		return fmt.Errorf("dbscan: %d values are not a whole number of %d-d points", len(p.Data), p.Dim)
	}
	for i, v := range p.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("dbscan: point %d coordinate %d is %v", i/p.Dim, i%p.Dim, v)
		}
	}
	return nil
}

// sqDist is the squared Euclidean distance of a and b, summed in dimension
// order with every product rounded on its own (the explicit conversion
// forbids a fused multiply-add). Every distance and box bound in this
// package is computed this way, which is what makes the index, the halo
// and the merge exact (see the package doc, "Floating point").
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for k, x := range a {
		d := x - b[k]
		s += float64(d * d)
	}
	return s
}

// Within reports whether a and b are neighbours at radius eps: their
// Euclidean distance is at most eps (computed as the squared distance
// against eps*eps, as scikit-learn's tree queries do).
func Within(a, b []float64, eps float64) bool { return sqDist(a, b) <= eps*eps }
