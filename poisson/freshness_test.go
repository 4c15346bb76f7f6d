package poisson

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// integrate is adaptive Simpson quadrature of f over [a, b] to absolute
// tolerance eps.
func integrate(f func(float64) float64, a, b, eps float64) float64 {
	fa, fm, fb := f(a), f((a+b)/2), f(b)
	return adaptive(f, a, b, fa, fm, fb, (b-a)/6*(fa+4*fm+fb), eps, 50)
}

func adaptive(f func(float64) float64, a, b, fa, fm, fb, whole, eps float64, depth int) float64 {
	m := (a + b) / 2
	lm, rm := f((a+m)/2), f((m+b)/2)
	left := (m - a) / 6 * (fa + 4*lm + fm)
	right := (b - m) / 6 * (fm + 4*rm + fb)
	if depth <= 0 || math.Abs(left+right-whole) <= 15*eps {
		return left + right + (left+right-whole)/15
	}
	return adaptive(f, a, m, fa, lm, fm, left, eps/2, depth-1) + adaptive(f, m, b, fm, rm, fb, right, eps/2, depth-1)
}

// TestFreshnessAgeIntegration checks F and A against numerical integration
// of their definitions: F = (1/I)∫₀ᴵ P(no change in [0,t]) dt and
// A = (1/I)∫₀ᴵ E[age(t)] dt with E[age(t)] = ∫₀ᵗ (t-s) λe^{-λs} ds (the
// first change after the refresh at s).
func TestFreshnessAgeIntegration(t *testing.T) {
	for _, rate := range []float64{1e-6, 0.01, 0.3, 1, 2.5, 10, 80} {
		for _, interval := range []float64{0.001, 0.1, 1, 7, 40} {
			f := integrate(func(u float64) float64 { return math.Exp(-rate * u) }, 0, interval, 1e-13*interval) / interval
			if got := Freshness(rate, interval); math.Abs(got-f) > 1e-9*math.Max(f, 1e-300)+1e-12 {
				t.Errorf("F(%v, %v) = %v, integral %v", rate, interval, got, f)
			}
			inner := func(tt float64) float64 {
				return integrate(func(s float64) float64 { return (tt - s) * rate * math.Exp(-rate*s) }, 0, tt, 1e-11*interval)
			}
			a := integrate(inner, 0, interval, 1e-10*interval*interval) / interval
			if got := Age(rate, interval); math.Abs(got-a) > 1e-6*a+1e-15 {
				t.Errorf("A(%v, %v) = %v, integral %v", rate, interval, got, a)
			}
		}
	}
}

// TestFreshnessAgeSimulation measures the time-average freshness and age
// of a simulated page refreshed every I over a long run.
func TestFreshnessAgeSimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct{ rate, interval float64 }{{1, 1}, {0.2, 3}, {3, 0.5}} {
		const periods = 200000
		var freshTime, ageInt float64
		next := rng.ExpFloat64() / c.rate
		for k := range periods {
			start := float64(k) * c.interval
			end := start + c.interval
			// The copy is fresh from the refresh until the first change.
			for next < start {
				next += rng.ExpFloat64() / c.rate
			}
			if next >= end {
				freshTime += c.interval
			} else {
				freshTime += next - start
				ageInt += (end - next) * (end - next) / 2
			}
		}
		total := float64(periods) * c.interval
		f, a := freshTime/total, ageInt/total
		wf, wa := Freshness(c.rate, c.interval), Age(c.rate, c.interval)
		t.Logf("λ=%v I=%v: simulated F %.4f A %.4f, formula F %.4f A %.4f", c.rate, c.interval, f, a, wf, wa)
		if math.Abs(f-wf) > 0.005 || math.Abs(a-wa) > 0.01*wa+0.002 {
			t.Errorf("λ=%v I=%v: simulated F=%v A=%v, formula F=%v A=%v", c.rate, c.interval, f, a, wf, wa)
		}
	}
}

func TestFreshnessAgeProperties(t *testing.T) {
	grid := []float64{0, 1e-9, 1e-5, 0.003, 0.05, 0.099, 0.1, 0.101, 0.5, 1, 3, 10, 100, 1000}
	for i, r := range grid {
		for j, iv := range grid {
			f, a := Freshness(r, iv), Age(r, iv)
			if !(f >= 0 && f <= 1) || !(a >= 0 && a <= iv/2+1e-15) {
				t.Fatalf("F(%v,%v)=%v A=%v out of range", r, iv, f, a)
			}
			if i > 0 {
				// Non-increasing freshness, non-decreasing age in λ.
				if pf := Freshness(grid[i-1], iv); f > pf {
					t.Errorf("F increases in λ at %v, %v: %v > %v", r, iv, f, pf)
				}
				if pa := Age(grid[i-1], iv); a < pa {
					t.Errorf("A decreases in λ at %v, %v: %v < %v", r, iv, a, pa)
				}
			}
			if j > 0 {
				if pf := Freshness(r, grid[j-1]); f > pf {
					t.Errorf("F increases in I at %v, %v", r, iv)
				}
				if pa := Age(r, grid[j-1]); a < pa {
					t.Errorf("A decreases in I at %v, %v", r, iv)
				}
			}
		}
	}
	// Series and closed form meet at λI = 0.1.
	lo, hi := Age(0.1*(1-1e-12), 1), Age(0.1, 1)
	if math.Abs(lo-hi) > 1e-13 {
		t.Errorf("age series %v and closed form %v disagree at x = 0.1", lo, hi)
	}
	if Freshness(0, 5) != 1 || Age(0, 5) != 0 || Freshness(1, math.Inf(1)) != 0 || !math.IsInf(Age(1, math.Inf(1)), 1) || Age(math.Inf(1), 4) != 2 {
		t.Error("limits")
	}
	if !math.IsNaN(Freshness(-1, 1)) || !math.IsNaN(Age(1, -1)) || !math.IsNaN(Freshness(math.NaN(), 1)) {
		t.Error("bad arguments not NaN")
	}
	// F(λ, 1/λ) = 1 - 1/e.
	if f := Freshness(2, 0.5); math.Abs(f-(1-math.Exp(-1))) > 1e-15 {
		t.Errorf("F at I = 1/λ: %v", f)
	}
}

// TestMarginalFreshness compares ∂F/∂f with a central difference of
// F(λ, 1/f), and phi's series with its closed form.
func TestMarginalFreshness(t *testing.T) {
	for _, r := range []float64{0.01, 0.5, 1, 4, 50} {
		for _, f := range []float64{0.02, 0.3, 1, 5, 80, 5000} {
			h := 1e-5 * f
			num := (Freshness(r, 1/(f+h)) - Freshness(r, 1/(f-h))) / (2 * h)
			got := MarginalFreshness(r, f)
			if math.Abs(got-num) > 1e-6*math.Abs(num)+1e-12 {
				t.Errorf("∂F/∂f(λ=%v, f=%v) = %v, numerical %v", r, f, got, num)
			}
		}
	}
	// The series meets the closed form where it hands over, and tends to
	// x²/2 (where the closed form cancels to noise).
	for _, x := range []float64{0.0099, 0.01, 0.0101} {
		closed := -math.Expm1(-x) - x*math.Exp(-x)
		if math.Abs(phi(x)-closed) > 1e-12*closed {
			t.Errorf("phi(%v) = %v, closed form %v", x, phi(x), closed)
		}
	}
	for _, x := range []float64{1e-12, 1e-8, 1e-6} {
		if want := x * x / 2; math.Abs(phi(x)-want) > 1e-5*want {
			t.Errorf("phi(%v) = %v, want about %v", x, phi(x), want)
		}
	}
	if MarginalFreshness(0, 1) != 0 || MarginalFreshness(2, 0) != 0.5 {
		t.Error("marginal limits")
	}
}

func TestSeedInterval(t *testing.T) {
	minI, maxI := time.Hour, 30*24*time.Hour
	day := 24 * time.Hour
	cases := []struct {
		rate, scale float64
		want        time.Duration
	}{
		{1 / 86400.0, 0, day},
		{1 / 86400.0, 1, day},
		{1 / 86400.0, 0.5, 12 * time.Hour},
		{1 / 60.0, 1, time.Hour},       // too fast: min
		{1 / (400 * 86400.0), 1, maxI}, // too slow: max
		{0, 1, maxI},
		{math.NaN(), 1, maxI},
		{-1, 1, maxI},
		{math.Inf(1), 1, minI},
	}
	for _, c := range cases {
		if got := SeedInterval(c.rate, minI, maxI, c.scale); got != c.want {
			t.Errorf("SeedInterval(%v, scale %v) = %v, want %v", c.rate, c.scale, got, c.want)
		}
	}
}
