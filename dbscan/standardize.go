package dbscan

import (
	"fmt"
	"math"

	"github.com/trawl/trawl/crawldb"
)

// Moments accumulates, per dimension, the count, mean and sum of squared
// deviations (M2) of a stream of points by Welford's update, and their
// minimum and maximum. Two accumulators of disjoint streams merge into the
// accumulator of both (Chan, Golub and LeVeque's pairwise formula), so map
// tasks can each accumulate their rows and a reduce merge them. The zero
// value is an empty accumulator of any dimension. It is a plain value with
// exported fields so that it can be a shuffle value and a Parquet row.
type Moments struct {
	// N is the number of points.
	N int64 `parquet:"n"`
	// Mean is each dimension's mean.
	Mean []float64 `parquet:"mean,list"`
	// M2 is each dimension's sum of squared deviations from the mean.
	M2 []float64 `parquet:"m2,list"`
	// Min and Max are each dimension's extremes.
	Min []float64 `parquet:"min,list"`
	Max []float64 `parquet:"max,list"`
}

// Dim is the accumulator's dimension (0 while empty).
func (m *Moments) Dim() int { return len(m.Mean) }

// Add adds one point. Its dimension must match the points added before.
func (m *Moments) Add(x []float64) error {
	if m.N == 0 && len(m.Mean) == 0 {
		m.Mean = make([]float64, len(x))
		m.M2 = make([]float64, len(x))
		m.Min = append([]float64(nil), x...)
		m.Max = append([]float64(nil), x...)
	} else if len(x) != len(m.Mean) {
		return fmt.Errorf("dbscan: moments of dimension %d given a point of %d values", len(m.Mean), len(x))
	}
	m.N++
	n := float64(m.N)
	for k, v := range x {
		d := v - m.Mean[k]
		m.Mean[k] += d / n
		m.M2[k] += d * (v - m.Mean[k])
		m.Min[k] = math.Min(m.Min[k], v)
		m.Max[k] = math.Max(m.Max[k], v)
	}
	return nil
}

// Merge adds the points o accumulated.
func (m *Moments) Merge(o Moments) error {
	switch {
	case o.N == 0:
		return nil
	case m.N == 0:
		*m = Moments{N: o.N, Mean: clone(o.Mean), M2: clone(o.M2), Min: clone(o.Min), Max: clone(o.Max)}
		return nil
	case len(o.Mean) != len(m.Mean) || len(o.M2) != len(m.M2) || len(o.Min) != len(m.Min) || len(o.Max) != len(m.Max):
		return fmt.Errorf("dbscan: cannot merge moments of dimension %d into moments of dimension %d", len(o.Mean), len(m.Mean))
	}
	na, nb := float64(m.N), float64(o.N)
	n := na + nb
	for k := range m.Mean {
		d := o.Mean[k] - m.Mean[k]
		m.Mean[k] += d * nb / n
		m.M2[k] += o.M2[k] + d*d*na*nb/n
		m.Min[k] = math.Min(m.Min[k], o.Min[k])
		m.Max[k] = math.Max(m.Max[k], o.Max[k])
	}
	m.N += o.N
	return nil
}

func clone(s []float64) []float64 { return append([]float64(nil), s...) }

// Std returns the population standard deviation of each dimension
// (sqrt(M2/N), as scikit-learn's StandardScaler).
func (m *Moments) Std() []float64 {
	s := make([]float64, len(m.M2))
	if m.N == 0 {
		return s
	}
	for k, v := range m.M2 {
		s[k] = math.Sqrt(max(v, 0) / float64(m.N))
	}
	return s
}

// Scaler returns the z-score transform of the accumulated points.
func (m *Moments) Scaler() Scaler {
	return NewScaler(m.Mean, m.Std())
}

// Scaler is the z-score transform x -> (x - Mean) / Std per dimension.
// A dimension whose Std is 0 (constant) or not finite is only centred
// (scikit-learn's StandardScaler does the same).
type Scaler struct {
	// Mean is subtracted from each dimension.
	Mean []float64 `parquet:"mean,list"`
	// Std divides each dimension (never 0).
	Std []float64 `parquet:"std,list"`
}

// NewScaler returns the scaler of the given means and standard deviations,
// with 1 in place of a zero or non-finite deviation.
func NewScaler(mean, std []float64) Scaler {
	s := Scaler{Mean: clone(mean), Std: clone(std)}
	for k, v := range s.Std {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			s.Std[k] = 1
		}
	}
	return s
}

// FitScaler computes the scaler of p in one streaming pass (Welford).
func FitScaler(p Points) Scaler {
	var m Moments
	for i := range p.Len() {
		m.Add(p.At(i)) // one dimension: cannot fail
	}
	if m.N == 0 {
		m.Mean, m.M2 = make([]float64, p.Dim), make([]float64, p.Dim)
	}
	return m.Scaler()
}

// Transform standardizes x in place. x must have the scaler's dimension.
func (s Scaler) Transform(x []float64) {
	mean, std := s.Mean[:len(x)], s.Std[:len(x)]
	for k, v := range x {
		x[k] = (v - mean[k]) / std[k]
	}
}

// Apply standardizes every point of p in place.
func (s Scaler) Apply(p Points) error {
	if p.Dim != len(s.Mean) || len(s.Std) != len(s.Mean) {
		return fmt.Errorf("dbscan: scaler of dimension %d applied to points of dimension %d", len(s.Mean), p.Dim)
	}
	for i := range p.Len() {
		s.Transform(p.At(i))
	}
	return nil
}

// The page features of Hu and Wu's page-update prediction paper, in the order FeatureVector returns them.
const (
	FeatureWords = iota
	FeatureOutlinks
	FeatureInlinks
	FeatureImages
	FeatureDepth
	FeatureBytes
	NumFeatures
)

// FeatureNames returns the names of FeatureVector's dimensions, as the
// columns of crawldb.Features are named.
func FeatureNames() []string {
	return []string{"words", "outlinks", "inlinks", "images", "depth", "bytes"}
}

// LogFeatures says which features FeatureVector takes log1p of: the
// counts and sizes whose distributions are heavy-tailed (lognormal words
// and bytes, lognormal outlinks, power-law inlinks, Poisson-with-a-tail
// images; simweb draws them so and real webs look the same), where a few
// huge pages would otherwise dominate every z-score. URL depth, a small
// integer with a light tail, is kept as it is.
func LogFeatures() [NumFeatures]bool {
	return [NumFeatures]bool{FeatureWords: true, FeatureOutlinks: true, FeatureInlinks: true, FeatureImages: true, FeatureBytes: true}
}

// FeatureVector returns a page's clustering features before
// standardization: log1p of words, outlinks, inlinks, images and bytes
// (see LogFeatures), and the URL depth as is. Negative values (which a
// sane CrawlDB does not hold) count as 0.
func FeatureVector(f crawldb.Features) [NumFeatures]float64 {
	raw := [NumFeatures]float64{
		FeatureWords:    float64(f.Words),
		FeatureOutlinks: float64(f.Outlinks),
		FeatureInlinks:  float64(f.Inlinks),
		FeatureImages:   float64(f.Images),
		FeatureDepth:    float64(f.Depth),
		FeatureBytes:    float64(f.Bytes),
	}
	logs := LogFeatures()
	for k, v := range raw {
		v = max(v, 0)
		if logs[k] {
			v = math.Log1p(v)
		}
		raw[k] = v
	}
	return raw
}
