package poisson

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func freqs(a Allocation) []float64 {
	for i, iv := range a.Intervals {
		if iv != 1/a.Freqs[i] {
			panic("interval is not 1/frequency")
		}
	}
	return a.Freqs
}

func totalFreshness(rates, weights, f []float64) float64 {
	var s, ws float64
	for i, r := range rates {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		s += w * Freshness(r, 1/f[i])
		ws += w
	}
	return s / ws
}

// TestAllocateChoExample reproduces the example of Cho and Garcia-Molina:
// five pages changing 1..5 times a day, five refreshes a day; the optimum
// refreshes them 1.15, 1.36, 1.35, 1.14 and 0 times a day.
func TestAllocateChoExample(t *testing.T) {
	a, err := Allocate(context.Background(), []float64{1, 2, 3, 4, 5}, nil, AllocConfig{Budget: 5})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.15, 1.36, 1.35, 1.14, 0}
	for i, f := range freqs(a) {
		if math.Abs(f-want[i]) > 0.005 {
			t.Errorf("page %d: f = %.4f, want %.2f", i, f, want[i])
		}
	}
	if !math.IsInf(a.Intervals[4], 1) || math.Abs(a.Used-5) > 5e-9 {
		t.Errorf("intervals %v, used %v", a.Intervals, a.Used)
	}
	// The fastest page is beyond the cutoff 1/μ.
	if !(5 >= 1/a.Multiplier && 4 < 1/a.Multiplier) {
		t.Errorf("μ = %v: cutoff 1/μ = %v", a.Multiplier, 1/a.Multiplier)
	}
}

// bestSplit maximises F(λ1, 1/f) + F(λ2, 1/(B-f)) over f in [0, B] by
// golden-section search (the objective is concave).
func bestSplit(l1, l2, b float64) float64 {
	obj := func(f float64) float64 { return Freshness(l1, 1/f) + Freshness(l2, 1/(b-f)) }
	lo, hi := 0.0, b
	g := (math.Sqrt(5) - 1) / 2
	for hi-lo > 1e-12*b {
		m1, m2 := hi-g*(hi-lo), lo+g*(hi-lo)
		if obj(m1) < obj(m2) {
			lo = m1
		} else {
			hi = m2
		}
	}
	return (lo + hi) / 2
}

// TestAllocateTwoPages: equal pages split evenly; otherwise the split
// matches a direct maximisation, and the slower page of two gets
// everything exactly when the faster page's marginal at 0, 1/λ2, is at
// most the slower one's at B, φ(λ1/B)/λ1.
func TestAllocateTwoPages(t *testing.T) {
	ctx := context.Background()
	a, err := Allocate(ctx, []float64{0.7, 0.7}, nil, AllocConfig{Budget: 3})
	if err != nil {
		t.Fatal(err)
	}
	if f := freqs(a); math.Abs(f[0]-1.5) > 1e-8 || math.Abs(f[1]-1.5) > 1e-8 {
		t.Errorf("equal pages: %v", f)
	}
	rng := rand.New(rand.NewPCG(10, 10))
	for range 300 {
		l1, l2 := math.Exp(rng.NormFloat64()), math.Exp(rng.NormFloat64())
		b := math.Exp(rng.NormFloat64())
		a, err := Allocate(ctx, []float64{l1, l2}, nil, AllocConfig{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		f := freqs(a)
		want := bestSplit(l1, l2, b)
		if math.Abs(f[0]-want) > 1e-6*b {
			t.Errorf("λ=%v,%v B=%v: f1 = %v, direct maximisation %v", l1, l2, b, f[0], want)
		}
	}
	// The threshold: λ1 = 1, B = 2; page 2 gets nothing iff
	// 1/λ2 <= φ(1/2)/1.
	cut := 1 / phi(0.5)
	for _, c := range []struct {
		l2   float64
		zero bool
	}{{cut * 1.001, true}, {cut * 0.999, false}} {
		a, err := Allocate(ctx, []float64{1, c.l2}, nil, AllocConfig{Budget: 2})
		if err != nil {
			t.Fatal(err)
		}
		f := freqs(a)
		if (f[1] == 0) != c.zero || math.Abs(f[0]+f[1]-2) > 1e-8 {
			t.Errorf("λ2 = %v (cutoff %v): f = %v", c.l2, cut, f)
		}
	}
}

// randomRates draws log-normal rates spanning several orders of
// magnitude and Pareto weights.
func randomRates(rng *rand.Rand, n int) (rates, weights []float64) {
	rates = make([]float64, n)
	weights = make([]float64, n)
	for i := range rates {
		rates[i] = math.Exp(rng.NormFloat64()*2 - 1)
		weights[i] = 1 / math.Pow(1-rng.Float64(), 0.5)
	}
	return rates, weights
}

// TestAllocateKKT checks the optimality conditions on random instances:
// every page strictly between the bounds has weighted marginal freshness
// μ, pages at MinFreq at most μ, pages at MaxFreq at least μ; Σf = B; no
// transfer between two pages raises the freshness; and the allocation
// beats spreading the budget uniformly and in proportion to the rates.
func TestAllocateKKT(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 11))
	for rep := range 44 {
		n := 1 + rng.IntN(500)
		if rep >= 40 {
			// Large enough for the search to start from a sample.
			n = 3*allocSample + rng.IntN(5000)
		}
		rates, weights := randomRates(rng, n)
		if rep%2 == 0 {
			weights = nil
		}
		cfg := AllocConfig{Budget: float64(n) * math.Exp(rng.NormFloat64())}
		if rep%3 == 0 {
			cfg.MinFreq = 0.05 * cfg.Budget / float64(n)
			cfg.MaxFreq = 3 * cfg.Budget / float64(n)
		}
		a, err := Allocate(ctx, rates, weights, cfg)
		if err != nil {
			t.Fatal(err)
		}
		f := freqs(a)
		mu := a.Multiplier
		sum := 0.0
		for i, r := range rates {
			w := 1.0
			if weights != nil {
				w = weights[i]
			}
			sum += f[i]
			m := w * MarginalFreshness(r, f[i])
			switch {
			case f[i] == cfg.MinFreq:
				if m > mu*(1+1e-9) {
					t.Fatalf("rep %d page %d at MinFreq: marginal %v > μ %v", rep, i, m, mu)
				}
			case cfg.MaxFreq > 0 && f[i] == cfg.MaxFreq:
				if m < mu*(1-1e-9) {
					t.Fatalf("rep %d page %d at MaxFreq: marginal %v < μ %v", rep, i, m, mu)
				}
			default:
				if math.Abs(m/mu-1) > 1e-9 {
					t.Fatalf("rep %d page %d (λ=%v f=%v): marginal %v, μ %v", rep, i, r, f[i], m, mu)
				}
			}
		}
		if math.Abs(sum-cfg.Budget) > 1e-8*cfg.Budget || math.Abs(a.Used-sum) > 1e-9*sum {
			t.Fatalf("rep %d: Σf = %v (Used %v), budget %v", rep, sum, a.Used, cfg.Budget)
		}
		fresh := totalFreshness(rates, weights, f)
		if math.Abs(fresh-a.Freshness) > 1e-12 {
			t.Fatalf("rep %d: Freshness %v, recomputed %v", rep, a.Freshness, fresh)
		}
		// Transfers between random pairs within the bounds.
		for range 50 {
			i, j := rng.IntN(n), rng.IntN(n)
			d := 0.01 * cfg.Budget / float64(n)
			if i == j || f[i]-d < cfg.MinFreq || (cfg.MaxFreq > 0 && f[j]+d > cfg.MaxFreq) {
				continue
			}
			g := append([]float64(nil), f...)
			g[i] -= d
			g[j] += d
			if other := totalFreshness(rates, weights, g); other > fresh+1e-12 {
				t.Fatalf("rep %d: moving %v from page %d to %d raises freshness %v -> %v", rep, d, i, j, fresh, other)
			}
		}
		uniform := make([]float64, n)
		prop := make([]float64, n)
		var rsum float64
		for _, r := range rates {
			rsum += r
		}
		for i, r := range rates {
			uniform[i] = cfg.Budget / float64(n)
			prop[i] = cfg.Budget * r / rsum
		}
		if u := totalFreshness(rates, weights, uniform); fresh < u-1e-12 {
			t.Fatalf("rep %d: optimal %v below uniform %v", rep, fresh, u)
		}
		if p := totalFreshness(rates, weights, prop); fresh < p-1e-12 {
			t.Fatalf("rep %d: optimal %v below proportional %v", rep, fresh, p)
		}
		if rep < 4 || rep >= 40 {
			t.Logf("n=%d: freshness optimal %.4f, uniform %.4f, proportional %.4f (%d passes)", n, fresh,
				totalFreshness(rates, weights, uniform), totalFreshness(rates, weights, prop), a.Passes)
		}
	}
}

// TestAllocateMinRate: pages too fast to keep fresh, and pages that never
// change, get exactly MinFreq; OptimalFrequency agrees with Allocate.
func TestAllocateMinRate(t *testing.T) {
	ctx := context.Background()
	rates := []float64{0, 0.1, 0.5, 1, 2, 50, 1000, math.Inf(1)}
	cfg := AllocConfig{Budget: 4, MinFreq: 0.01}
	a, err := Allocate(ctx, rates, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := freqs(a)
	for i, r := range rates {
		fast := r >= 1/a.Multiplier
		if (r == 0 || fast) != (f[i] == cfg.MinFreq) {
			t.Errorf("λ=%v (cutoff %v): f=%v", r, 1/a.Multiplier, f[i])
		}
		if of := OptimalFrequency(a.Multiplier, r, 1, cfg); math.Abs(of-f[i]) > 1e-12*f[i] {
			t.Errorf("λ=%v: OptimalFrequency %v, Allocate %v", r, of, f[i])
		}
	}
	if f[5] != cfg.MinFreq || f[6] != cfg.MinFreq || f[7] != cfg.MinFreq || f[0] != cfg.MinFreq {
		t.Errorf("fast and static pages: %v", f)
	}
	// Freshness grows with the budget; the cutoff 1/μ rises.
	prevF, prevCut := 0.0, 0.0
	for _, b := range []float64{0.5, 1, 2, 4, 8, 16, 64} {
		cfg.Budget = b
		a, err := Allocate(ctx, rates, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if a.Freshness <= prevF || 1/a.Multiplier <= prevCut {
			t.Errorf("budget %v: freshness %v (before %v), cutoff %v (before %v)", b, a.Freshness, prevF, 1/a.Multiplier, prevCut)
		}
		prevF, prevCut = a.Freshness, 1/a.Multiplier
	}
}

func TestAllocateBounds(t *testing.T) {
	ctx := context.Background()
	// Budget beyond every page at MaxFreq: all gainful pages at MaxFreq,
	// static ones at MinFreq, the rest unused.
	a, err := Allocate(ctx, []float64{1, 2, 0}, nil, AllocConfig{Budget: 100, MinFreq: 0.5, MaxFreq: 10})
	if err != nil {
		t.Fatal(err)
	}
	if f := freqs(a); f[0] != 10 || f[1] != 10 || f[2] != 0.5 || a.Used != 20.5 || a.Multiplier != 0 {
		t.Errorf("saturated: f=%v used=%v μ=%v", f, a.Used, a.Multiplier)
	}
	// Only static pages.
	a, err = Allocate(ctx, []float64{0, 0}, []float64{1, 1}, AllocConfig{Budget: 3, MinFreq: 1})
	if err != nil || a.Used != 2 || a.Freshness != 1 {
		t.Errorf("static: %+v %v", a, err)
	}
	// Exactly n·MinFreq.
	a, err = Allocate(ctx, []float64{1, 5}, nil, AllocConfig{Budget: 2, MinFreq: 1})
	if f := freqs(a); err != nil || f[0] != 1 || f[1] != 1 {
		t.Errorf("tight: %v %v", f, err)
	}
	a, err = Allocate(ctx, nil, nil, AllocConfig{Budget: 1})
	if err != nil || len(a.Intervals) != 0 {
		t.Errorf("empty: %+v %v", a, err)
	}
	bad := []struct {
		rates, weights []float64
		cfg            AllocConfig
	}{
		{[]float64{1}, nil, AllocConfig{}},
		{[]float64{1}, nil, AllocConfig{Budget: math.Inf(1)}},
		{[]float64{1, 2}, nil, AllocConfig{Budget: 1, MinFreq: 0.6}},
		{[]float64{1}, nil, AllocConfig{Budget: 1, MinFreq: 2, MaxFreq: 1}},
		{[]float64{1}, nil, AllocConfig{Budget: 1, MinFreq: -1}},
		{[]float64{-1}, nil, AllocConfig{Budget: 1}},
		{[]float64{math.NaN()}, nil, AllocConfig{Budget: 1}},
		{[]float64{1}, []float64{1, 2}, AllocConfig{Budget: 1}},
		{[]float64{1}, []float64{-1}, AllocConfig{Budget: 1}},
	}
	for i, b := range bad {
		if _, err := Allocate(ctx, b.rates, b.weights, b.cfg); err == nil {
			t.Errorf("bad case %d: no error", i)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Allocate(cctx, []float64{1, 2}, nil, AllocConfig{Budget: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPhiInv checks the inverse over the whole range, from cold and warm
// starts.
func TestPhiInv(t *testing.T) {
	for _, y := range []float64{1e-300, 1e-30, 1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9, 1 - 1e-15} {
		for _, x0 := range []float64{0, 1e-9, 1, 30, 1e6} {
			x := phiInv(y, x0)
			if got := phi(x); math.Abs(got-y) > 1e-12*y && math.Abs(got-y) > 1e-15 {
				t.Errorf("phiInv(%v) from %v = %v, φ of it %v", y, x0, x, got)
			}
		}
	}
}
