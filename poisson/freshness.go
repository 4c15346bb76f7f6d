package poisson

import (
	"math"
	"time"
)

// Freshness is the expected time-average freshness of a copy of a page that
// changes at rate λ and is refreshed every interval:
// F(λ, I) = (1 - e^{-λI})/(λI), the average over [0, I) of the probability
// e^{-λt} that no change happened since the refresh. It is 1 for λ = 0 and 0
// for an infinite interval with λ > 0. Rate and interval must be
// non-negative (NaN otherwise).
func Freshness(rate, interval float64) float64 {
	if rate < 0 || interval < 0 || math.IsNaN(rate) || math.IsNaN(interval) {
		return math.NaN()
	}
	x := rate * interval
	switch {
	case rate == 0 || interval == 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	case x < 1e-8:
		return 1 - x/2
	}
	return -math.Expm1(-x) / x
}

// Age is the expected time-average age of the copy (how long it has been
// out of date, 0 while fresh) for a page of rate λ refreshed every
// interval: A(λ, I) = I/2 - 1/λ + (1 - e^{-λI})/(λ²I). It is 0 for λ = 0 and
// tends to I/2 as λI grows. Small λI uses the series
// I·(x/6 - x²/24 + x³/120 - ...) with x = λI, avoiding the cancellation of
// the closed form. Rate and interval must be non-negative (NaN otherwise).
func Age(rate, interval float64) float64 {
	if rate < 0 || interval < 0 || math.IsNaN(rate) || math.IsNaN(interval) {
		return math.NaN()
	}
	if rate == 0 || interval == 0 {
		return 0
	}
	if math.IsInf(interval, 1) {
		return math.Inf(1)
	}
	if math.IsInf(rate, 1) {
		return interval / 2
	}
	x := rate * interval
	if x < 0.1 {
		// (1/x)·Σ_{k>=2} (-x)^k/(k+1)!, summed until the terms vanish.
		term := x / 6 // k = 2 term divided by x
		sum := 0.0
		for k := 2; k < 30 && math.Abs(term) > 1e-18*math.Abs(sum); k++ {
			sum += term
			term *= -x / float64(k+2)
		}
		return interval * sum
	}
	return interval/2 - 1/rate - math.Expm1(-x)/(rate*x)
}

// phi is 1 - (1+x)e^{-x}: λ times the marginal freshness ∂F/∂f of a page
// of rate λ refreshed at frequency f, with x = λ/f.
func phi(x float64) float64 {
	if x < 1e-2 {
		// Σ_{m>=2} (-1)^m (m-1)/m! x^m, to x^7.
		return x * x * (1.0/2 - x*(1.0/3-x*(1.0/8-x*(1.0/30-x*(1.0/144-x/840)))))
	}
	return -math.Expm1(-x) - x*math.Exp(-x)
}

// MarginalFreshness is ∂F/∂f, the freshness gained per unit of refresh
// frequency f (refreshes per time unit) for a page of rate λ:
// (1 - (1 + λ/f)e^{-λ/f})/λ. It decreases in f from 1/λ at f → 0 to 0.
// It is 0 for λ = 0 (such a page is always fresh).
func MarginalFreshness(rate, freq float64) float64 {
	if rate <= 0 {
		return 0
	}
	if freq <= 0 {
		return 1 / rate
	}
	return phi(rate/freq) / rate
}

// SeedInterval is the seed paper's revisit rule: revisit after the
// estimated mean change period 1/rate (rate per second), multiplied by
// scale (1 when scale <= 0), clamped to [minInterval, maxInterval]. A rate
// of 0 (no change seen), NaN or negative gives maxInterval; +Inf gives
// minInterval.
//
// Revisiting every 1/λ keeps a page fresh F(λ, 1/λ) = 1 - 1/e ≈ 63% of the
// time; a scale of s gives (1 - e^{-s})/s.
func SeedInterval(rate float64, minInterval, maxInterval time.Duration, scale float64) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	if !(rate > 0) {
		return maxInterval
	}
	sec := scale / rate
	if sec >= maxInterval.Seconds() {
		return maxInterval
	}
	d := time.Duration(sec * float64(time.Second))
	if d < minInterval {
		return minInterval
	}
	return d
}
