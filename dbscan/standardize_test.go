package dbscan

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// twoPass is the textbook mean and population standard deviation, with the
// values shifted by the first one so that a large offset loses no digits.
func twoPass(p Points, k int) (mean, std float64) {
	n := p.Len()
	x0 := p.At(0)[k]
	var dm float64
	for i := range n {
		dm += p.At(i)[k] - x0
	}
	dm /= float64(n)
	for i := range n {
		d := p.At(i)[k] - x0 - dm
		std += d * d
	}
	return x0 + dm, math.Sqrt(std / float64(n))
}

func approxEqual(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(1, math.Abs(a), math.Abs(b))
}

// heavyTailed draws n 3-d points: lognormal, Pareto and a large offset
// (where a naive sum of squares would lose most digits).
func heavyTailed(r *rand.Rand, n int) Points {
	p := NewPoints(3, n)
	for range n {
		p.Append([]float64{math.Exp(2 * r.NormFloat64()), math.Pow(1-r.Float64(), -1/1.5), 1e6 + r.NormFloat64()})
	}
	return p
}

func TestMomentsMatchTwoPass(t *testing.T) {
	p := heavyTailed(rand.New(rand.NewPCG(1, 1)), 100000)
	var m Moments
	for i := range p.Len() {
		if err := m.Add(p.At(i)); err != nil {
			t.Fatal(err)
		}
	}
	std := m.Std()
	for k := range 3 {
		wm, ws := twoPass(p, k)
		if !approxEqual(m.Mean[k], wm, 1e-12) || !approxEqual(std[k], ws, 1e-9) {
			t.Errorf("dim %d: Welford mean %v std %v, two-pass %v %v", k, m.Mean[k], std[k], wm, ws)
		}
	}
	if m.N != 100000 {
		t.Fatalf("N %d", m.N)
	}
}

func TestMomentsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	p := heavyTailed(r, 30000)
	var whole Moments
	for i := range p.Len() {
		whole.Add(p.At(i))
	}
	// Random splits, merged in order and in a tree.
	for trial := range 5 {
		parts := []Moments{{}} // an empty part first
		for i := 0; i < p.Len(); {
			j := min(p.Len(), i+1+r.IntN(5000))
			var m Moments
			for ; i < j; i++ {
				m.Add(p.At(i))
			}
			parts = append(parts, m)
		}
		for len(parts) > 1 {
			var next []Moments
			for i := 0; i < len(parts); i += 2 {
				m := parts[i]
				if i+1 < len(parts) {
					if err := m.Merge(parts[i+1]); err != nil {
						t.Fatal(err)
					}
				}
				next = append(next, m)
			}
			parts = next
		}
		got := parts[0]
		if got.N != whole.N {
			t.Fatalf("merged N %d, want %d", got.N, whole.N)
		}
		gs, ws := got.Std(), whole.Std()
		for k := range 3 {
			if !approxEqual(got.Mean[k], whole.Mean[k], 1e-12) || !approxEqual(gs[k], ws[k], 1e-9) || got.Min[k] != whole.Min[k] || got.Max[k] != whole.Max[k] {
				t.Errorf("trial %d dim %d: merged %v/%v/%v/%v, whole %v/%v/%v/%v", trial, k, got.Mean[k], gs[k], got.Min[k], got.Max[k], whole.Mean[k], ws[k], whole.Min[k], whole.Max[k])
			}
		}
	}
	var a, b Moments
	a.Add([]float64{1, 2})
	b.Add([]float64{1, 2, 3})
	if err := a.Merge(b); err == nil {
		t.Fatal("merging moments of different dimensions should fail")
	}
	if err := a.Add([]float64{1}); err == nil {
		t.Fatal("adding a point of another dimension should fail")
	}
}

func TestScaler(t *testing.T) {
	p := NewPoints(3, 4)
	for _, x := range [][]float64{{1, 5, 10}, {2, 5, 20}, {3, 5, 30}, {4, 5, 40}} {
		p.Append(x)
	}
	s := FitScaler(p)
	if s.Std[1] != 1 {
		t.Fatalf("constant column: std %v, want 1", s.Std[1])
	}
	if err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		m, sd := twoPass(p, k)
		wantSD := 1.0
		if k == 1 {
			wantSD = 0
		}
		if !approxEqual(m, 0, 1e-12) || !approxEqual(sd, wantSD, 1e-12) {
			t.Errorf("dim %d after Apply: mean %v std %v", k, m, sd)
		}
	}
	if err := s.Apply(Points{Dim: 2, Data: []float64{1, 2}}); err == nil {
		t.Fatal("a scaler of dimension 3 applied to 2-d points should fail")
	}
	if NewScaler([]float64{0}, []float64{math.NaN()}).Std[0] != 1 {
		t.Fatal("NaN std should become 1")
	}
}

func TestFeatureVector(t *testing.T) {
	v := FeatureVector(crawldb.Features{Words: 999, Outlinks: 0, Inlinks: 1, Images: -3, Depth: 4, Bytes: 1 << 20})
	want := [NumFeatures]float64{math.Log(1000), 0, math.Log(2), 0, 4, math.Log1p(1 << 20)}
	for k := range v {
		if !approxEqual(v[k], want[k], 1e-15) {
			t.Errorf("%s: %v, want %v", FeatureNames()[k], v[k], want[k])
		}
	}
	if len(FeatureNames()) != NumFeatures {
		t.Fatal("FeatureNames and NumFeatures disagree")
	}
}

// TestMomentsParquet round-trips Moments and Scaler through Parquet files.
func TestMomentsParquet(t *testing.T) {
	var m Moments
	m.Add([]float64{1, 2})
	m.Add([]float64{3, 7})
	fsys := storage.NewLocal()
	path := filepath.Join(t.TempDir(), "m.parquet")
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquetio.NewWriter[Moments](f)
	if err := w.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[Moments](fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].N != 2 || rows[0].Mean[1] != 4.5 || rows[0].M2[0] != 2 || rows[0].Max[1] != 7 {
		t.Fatalf("read back %+v", rows)
	}
}
