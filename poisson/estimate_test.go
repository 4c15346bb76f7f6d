package poisson

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRegularFormula(t *testing.T) {
	cases := []struct {
		n, x     int
		interval float64
		want     float64
	}{
		{10, 0, 1, 0},
		{10, 10, 1, math.Log(21)},
		{10, 5, 2, -math.Log(5.5/10.5) / 2},
		{31, 30, 86400, -math.Log(1.5/31.5) / 86400},
		{1, 1, 1, math.Log(3)},
	}
	for _, c := range cases {
		e, err := Regular(c.n, c.x, c.interval)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(e.Rate-c.want) > 1e-15*math.Max(1, c.want) {
			t.Errorf("Regular(%d, %d, %v) = %v, want %v", c.n, c.x, c.interval, e.Rate, c.want)
		}
		if e.N != c.n || e.X != c.x || e.Span != float64(c.n)*c.interval || e.Method != MethodRegular || !e.OK() {
			t.Errorf("Regular(%d, %d, %v) = %+v", c.n, c.x, c.interval, e)
		}
	}
	for _, bad := range []struct {
		n, x int
		i    float64
	}{{0, 0, 1}, {5, 6, 1}, {5, -1, 1}, {5, 1, 0}, {5, 1, -1}, {5, 1, math.NaN()}, {5, 1, math.Inf(1)}} {
		if _, err := Regular(bad.n, bad.x, bad.i); err == nil {
			t.Errorf("Regular(%d, %d, %v): no error", bad.n, bad.x, bad.i)
		}
	}
}

// TestRegularBias computes the exact expectation of the bias-reduced
// estimator (a sum over X ~ Binomial(n, 1-e^{-r})) and checks the stated
// bounds; it also checks a simulation against the exact value.
func TestRegularBias(t *testing.T) {
	for _, n := range []int{16, 31, 100} {
		for _, r := range []float64{0.1, 0.25, 0.5, 1, 1.5, 2, 3} {
			var mean, naive float64
			for k, p := range binom(n, -math.Expm1(-r)) {
				mean += p * regularRatio(n, k)
				naive += p * float64(k) / float64(n)
			}
			bias := mean/r - 1
			bound := 0.01 // r <= 2, n >= 16
			switch {
			case r > 2 && n < 31:
				bound = 0.08 // near saturation: at most ln(2n+1)
			case r > 2:
				bound = 0.02
			}
			if math.Abs(bias) > bound {
				t.Errorf("n=%d r=%v: bias %+.4f beyond ±%v", n, r, bias, bound)
			}
			// The naive X/n estimates 1-e^{-r}, not r.
			if want := -math.Expm1(-r)/r - 1; math.Abs(naive/r-1-want) > 1e-9 {
				t.Errorf("n=%d r=%v: naive bias %v, want %v", n, r, naive/r-1, want)
			}
			t.Logf("regular n=%3d r=%.2f: bias %+.4f (naive X/n %+.4f)", n, r, bias, naive/r-1)
		}
	}

	rng := rand.New(rand.NewPCG(1, 1))
	const reps = 20000
	for _, c := range []struct {
		n              int
		rate, interval float64
	}{{31, 1.0 / 86400, 86400}, {16, 0.5, 3}, {31, 2, 0.05}} {
		r := c.rate * c.interval
		var exact float64
		for k, p := range binom(c.n, -math.Expm1(-r)) {
			exact += p * regularRatio(c.n, k) / c.interval
		}
		est := make([]float64, reps)
		buf := make([]Interval, 0, c.n)
		for i := range est {
			iv := regularIntervals(rng, c.rate, c.interval, c.n, buf)
			x := 0
			for _, v := range iv {
				if v.Changed {
					x++
				}
			}
			e, err := Regular(c.n, x, c.interval)
			if err != nil {
				t.Fatal(err)
			}
			est[i] = e.Rate
		}
		m, se := meanStd(est)
		if math.Abs(m-exact) > 4*se {
			t.Errorf("n=%d λ=%v I=%v: simulated mean %v, exact %v (se %v)", c.n, c.rate, c.interval, m, exact, se)
		}
	}
}

// TestRegularConfidence checks the coverage of the 95% interval by
// simulation and its edge cases.
func TestRegularConfidence(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const reps = 4000
	buf := make([]Interval, 0, 31)
	for _, r := range []float64{0.2, 1, 2} {
		covered := 0
		for range reps {
			iv := regularIntervals(rng, r, 1, 31, buf)
			x := 0
			for _, v := range iv {
				if v.Changed {
					x++
				}
			}
			e, _ := Regular(31, x, 1)
			lo, hi := e.Confidence(1.96)
			if lo > e.Rate || hi < e.Rate && x < 31 {
				t.Fatalf("r=%v x=%d: interval [%v, %v] excludes the estimate %v", r, x, lo, hi, e.Rate)
			}
			if lo <= r && r <= hi {
				covered++
			}
		}
		cov := float64(covered) / reps
		t.Logf("regular n=31 r=%.1f: 95%% interval coverage %.3f", r, cov)
		if cov < 0.92 || cov > 0.985 {
			t.Errorf("r=%v: coverage %v, want about 0.95", r, cov)
		}
	}
	e, _ := Regular(10, 0, 2)
	if lo, hi := e.Confidence(1.96); lo != 0 || !(hi > 0) || math.IsInf(hi, 1) {
		t.Errorf("no change: interval [%v, %v], want [0, finite]", lo, hi)
	}
	e, _ = Regular(10, 10, 2)
	if lo, hi := e.Confidence(1.96); !(lo > 0) || !math.IsInf(hi, 1) {
		t.Errorf("all changed: interval [%v, %v], want [positive, +Inf]", lo, hi)
	}
	if lo, hi := (Estimate{}).Confidence(1.96); lo != 0 || !math.IsInf(hi, 1) {
		t.Errorf("empty estimate: interval [%v, %v]", lo, hi)
	}
}

// TestIrregularEqualsRegular: on equal intervals the smoothed MLE is the
// bias-reduced regular estimator and the unsmoothed one the textbook MLE
// -ln(1 - X/n)/I.
func TestIrregularEqualsRegular(t *testing.T) {
	for _, interval := range []float64{1, 0.01, 86400, 3.7e6} {
		for n := 1; n <= 40; n++ {
			iv := make([]Interval, n)
			for x := 0; x <= n; x++ {
				for i := range iv {
					iv[i] = Interval{Length: interval, Changed: i < x}
				}
				got, err := Irregular(iv, Solver{})
				if err != nil {
					t.Fatal(err)
				}
				want := regularRatio(n, x) / interval
				if math.Abs(got.Rate-want) > 1e-12*want {
					t.Fatalf("I=%v n=%d x=%d: irregular %v, regular %v", interval, n, x, got.Rate, want)
				}
				raw, _ := Irregular(iv, Solver{Unsmoothed: true})
				mle := -math.Log1p(-float64(x)/float64(n)) / interval
				if x == n {
					if !math.IsInf(raw.Rate, 1) {
						t.Fatalf("I=%v n=%d all changed: unsmoothed %v, want +Inf", interval, n, raw.Rate)
					}
				} else if math.Abs(raw.Rate-mle) > 1e-12*mle {
					t.Fatalf("I=%v n=%d x=%d: unsmoothed %v, MLE %v", interval, n, x, raw.Rate, mle)
				}
				if x > 0 && x < n {
					reg, _ := Regular(n, x, interval)
					if math.Abs(got.StdErr-reg.StdErr) > 0.35*reg.StdErr {
						t.Fatalf("I=%v n=%d x=%d: stderr %v, regular's %v", interval, n, x, got.StdErr, reg.StdErr)
					}
				}
			}
		}
	}
}

// TestIrregularSolves checks the root against the likelihood equation on
// random intervals spanning four orders of magnitude, and monotonicity.
func TestIrregularSolves(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	maxIter := 0
	defer func() { t.Logf("at most %d iterations", maxIter) }()
	for rep := range 2000 {
		n := 1 + rng.IntN(40)
		iv := make([]Interval, n)
		x := 0
		for i := range iv {
			iv[i] = Interval{Length: math.Pow(10, 4*rng.Float64()), Changed: rng.Float64() < 0.5}
			if iv[i].Changed {
				x++
			}
		}
		e, err := Irregular(iv, Solver{})
		if err != nil {
			t.Fatal(err)
		}
		if x == 0 {
			if e.Rate != 0 {
				t.Fatalf("rep %d: no change, rate %v", rep, e.Rate)
			}
			continue
		}
		var lhs, rhs, span float64
		for _, v := range iv {
			span += v.Length
			if v.Changed {
				lhs += v.Length / math.Expm1(e.Rate*v.Length)
			} else {
				rhs += v.Length
			}
		}
		rhs += 0.5 * span / float64(n)
		// g changes sign within a relative 1e-9 of the root.
		var lo, hi float64
		for _, v := range iv {
			if v.Changed {
				lo += v.Length / math.Expm1(e.Rate*(1-1e-9)*v.Length)
				hi += v.Length / math.Expm1(e.Rate*(1+1e-9)*v.Length)
			}
		}
		if !(lo >= rhs && hi <= rhs) {
			t.Fatalf("rep %d: λ=%v is not the root: lhs %v (%v..%v) rhs %v", rep, e.Rate, lhs, lo, hi, rhs)
		}
		maxIter = max(maxIter, e.Iterations)
		if e.Iterations > 10 {
			t.Errorf("rep %d: %d iterations", rep, e.Iterations)
		}
		// One more change (an unchanged interval flipped) raises the rate.
		for i := range iv {
			if !iv[i].Changed {
				iv[i].Changed = true
				up, _ := Irregular(iv, Solver{})
				if !(up.Rate > e.Rate) {
					t.Fatalf("rep %d: flipping interval %d to changed: %v -> %v", rep, i, e.Rate, up.Rate)
				}
				break
			}
		}
	}
	if _, err := Irregular(nil, Solver{}); err == nil {
		t.Error("no intervals: no error")
	}
	for _, l := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Irregular([]Interval{{1, true}, {l, false}}, Solver{}); err == nil {
			t.Errorf("length %v: no error", l)
		}
	}
}

// TestIrregularBias simulates irregular access patterns and checks the
// smoothed MLE's relative bias: within 3% for 31 intervals (a full
// crawldb history), within 7% for 16.
func TestIrregularBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const reps = 20000
	type pattern struct {
		name string
		// next returns the next interval given the last one and whether
		// it saw a change.
		next func(last float64, changed bool) float64
	}
	patterns := []pattern{
		{"uniform[0.25,1.75]", func(float64, bool) float64 { return 0.25 + 1.5*rng.Float64() }},
		{"exponential", func(float64, bool) float64 { return rng.ExpFloat64() }},
		// Nutch's adaptive rule (×0.8 after a change, ×1.4 otherwise),
		// clamped to [0.1, 10]: intervals depend on the observations.
		{"adaptive", func(last float64, changed bool) float64 {
			if changed {
				return math.Max(0.1, last*0.8)
			}
			return math.Min(10, last*1.4)
		}},
	}
	buf := make([]Interval, 0, 32)
	for _, p := range patterns {
		for _, n := range []int{16, 31} {
			for _, rate := range []float64{0.1, 0.5, 1, 2} {
				est := make([]float64, reps)
				for i := range est {
					pg := newPage(rng, rate)
					buf = buf[:0]
					now, last, changed := 0.0, 1.0, false
					for range n {
						l := p.next(last, changed)
						now += l
						changed, _ = pg.access(now)
						buf = append(buf, Interval{Length: l, Changed: changed})
						last = l
					}
					est[i] = irregular(buf, Solver{}).Rate
				}
				m, se := meanStd(est)
				bias := m/rate - 1
				t.Logf("irregular %-18s n=%d λ=%.1f: bias %+.4f ± %.4f", p.name, n, rate, bias, se/rate)
				bound := 0.03
				if n < 31 {
					bound = 0.07
				}
				if math.Abs(bias) > bound {
					t.Errorf("%s n=%d λ=%v: bias %+.4f beyond ±%v", p.name, n, rate, bias, bound)
				}
			}
		}
	}
}

// TestLastModifiedBias simulates regular and irregular accesses with
// Last-Modified dates: the bias-reduced form stays within 2% and is
// closer to unbiased than X/T, which overestimates.
func TestLastModifiedBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const reps = 20000
	for _, regularAccess := range []bool{true, false} {
		for _, n := range []int{16, 31} {
			for _, rate := range []float64{0.1, 0.5, 1, 2, 4} {
				br := make([]float64, reps)
				mle := make([]float64, reps)
				for i := range br {
					pg := newPage(rng, rate)
					var a LastModifiedAccumulator
					now := 0.0
					for range n {
						l := 1.0
						if !regularAccess {
							l = 0.25 + 1.5*rng.Float64()
						}
						now += l
						_, lc := pg.access(now)
						a.Add(l, now-lc)
					}
					br[i] = a.Estimate().Rate
					mle[i] = a.MLE().Rate
				}
				mb, se := meanStd(br)
				mm, _ := meanStd(mle)
				bb, bm := mb/rate-1, mm/rate-1
				t.Logf("last-modified regular=%v n=%d λ=%.1f: bias-reduced %+.4f ± %.4f, X/T %+.4f", regularAccess, n, rate, bb, se/rate, bm)
				if math.Abs(bb) > 0.02 {
					t.Errorf("regular=%v n=%d λ=%v: bias %+.4f beyond ±2%%", regularAccess, n, rate, bb)
				}
				if !(bm > 0 && math.Abs(bb) < bm) {
					t.Errorf("regular=%v n=%d λ=%v: X/T bias %+.4f, bias-reduced %+.4f", regularAccess, n, rate, bm, bb)
				}
			}
		}
	}
}

func TestLastModifiedEdges(t *testing.T) {
	var a LastModifiedAccumulator
	if e := a.Estimate(); e.OK() || e.Rate != 0 {
		t.Errorf("empty: %+v", e)
	}
	if a.Add(0, 1) || a.Add(-1, 1) || a.Add(math.Inf(1), 1) || a.Add(1, math.NaN()) {
		t.Error("Add accepted a bad interval")
	}
	a.Add(10, 20) // unchanged
	a.Add(10, 15) // unchanged
	if e := a.Estimate(); e.Rate != 0 || e.N != 2 || e.X != 0 || e.Span != 20 {
		t.Errorf("no change: %+v", e)
	}
	a.Add(10, 4)  // changed, 4 since the change
	a.Add(10, -3) // changed, clock skew: 0
	e := a.Estimate()
	want := (2 - 1 - 2/(4*math.Log(0.5))) / 24
	if e.N != 4 || e.X != 2 || e.Span != 24 || math.Abs(e.Rate-want) > 1e-15 {
		t.Errorf("got %+v, want rate %v", e, want)
	}
	if m := a.MLE(); m.Rate != 2.0/24 {
		t.Errorf("MLE %v, want %v", m.Rate, 2.0/24)
	}
	var all LastModifiedAccumulator
	for range 5 {
		all.Add(10, 2)
	}
	if e := all.Estimate(); e.Rate != 4.0/10 {
		t.Errorf("all changed: %v, want (X-1)/T = 0.4", e.Rate)
	}
}

// TestRegularSpread: within the regular spread, the regular closed form at
// the mean interval differs from the irregular estimate by less than half
// the spread.
func TestRegularSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	worst := map[float64]float64{}
	for rep := range 20000 {
		spread := []float64{0.01, 0.02, 0.05, 0.1}[rep%4]
		n := 2 + rng.IntN(40)
		iv := make([]Interval, n)
		base := 1 + 1e5*rng.Float64()
		p := rng.Float64()
		for i := range iv {
			// Extremes of the spread, correlated with the change flag in
			// the worst direction half the time.
			u := rng.Float64()
			ch := rng.Float64() < p
			if rep%8 < 4 {
				if ch {
					u = 1
				} else {
					u = 0
				}
			}
			iv[i] = Interval{Length: base * (1 + spread*u), Changed: ch}
		}
		reg := FromIntervals(iv, Config{RegularSpread: spread})
		irr := FromIntervals(iv, Config{RegularSpread: -1})
		if reg.Method != MethodRegular || irr.Method != MethodIrregular {
			t.Fatalf("methods %q %q", reg.Method, irr.Method)
		}
		if irr.Rate == 0 {
			if reg.Rate != 0 {
				t.Fatalf("irregular 0, regular %v", reg.Rate)
			}
			continue
		}
		d := math.Abs(reg.Rate/irr.Rate - 1)
		worst[spread] = math.Max(worst[spread], d)
		if d > spread/2 {
			t.Fatalf("spread %v n=%d: regular %v irregular %v differ by %.4f", spread, n, reg.Rate, irr.Rate, d)
		}
	}
	t.Logf("worst relative difference by spread: %v", worst)
}

// TestConfidenceCoverage measures the coverage of the 95% intervals of the
// irregular and last-modified estimators by simulation.
func TestConfidenceCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	const reps = 4000
	buf := make([]Interval, 0, 31)
	for _, rate := range []float64{0.3, 1, 2} {
		covIrr, covLM := 0, 0
		for range reps {
			pg := newPage(rng, rate)
			buf = buf[:0]
			var a LastModifiedAccumulator
			now := 0.0
			for range 31 {
				l := 0.25 + 1.5*rng.Float64()
				now += l
				c, lc := pg.access(now)
				buf = append(buf, Interval{Length: l, Changed: c})
				a.Add(l, now-lc)
			}
			if lo, hi := irregular(buf, Solver{}).Confidence(1.96); lo <= rate && rate <= hi {
				covIrr++
			}
			if lo, hi := a.Estimate().Confidence(1.96); lo <= rate && rate <= hi {
				covLM++
			}
		}
		ci, cl := float64(covIrr)/reps, float64(covLM)/reps
		t.Logf("λ=%.1f n=31: 95%% interval coverage irregular %.3f, last-modified %.3f", rate, ci, cl)
		if ci < 0.92 || ci > 0.98 || cl < 0.92 || cl > 0.98 {
			t.Errorf("λ=%v: coverage irregular %v, last-modified %v, want about 0.95", rate, ci, cl)
		}
	}
}
