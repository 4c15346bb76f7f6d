package poisson

import (
	"math"
	"math/rand/v2"
)

// page simulates a page whose changes are a Poisson process of the given
// rate, observed by accesses in increasing time order.
type page struct {
	rng        *rand.Rand
	rate       float64
	next       float64 // time of the next change
	lastChange float64 // time of the last change so far (-Inf if none)
	lastAccess float64
}

func newPage(rng *rand.Rand, rate float64) *page {
	return &page{rng: rng, rate: rate, next: rng.ExpFloat64() / rate, lastChange: math.Inf(-1)}
}

// access observes the page at time t (after every earlier access): whether
// it changed since the previous access, and the time of its last change.
func (p *page) access(t float64) (changed bool, lastChange float64) {
	for p.next <= t {
		p.lastChange = p.next
		p.next += p.rng.ExpFloat64() / p.rate
	}
	changed = p.lastChange > p.lastAccess
	p.lastAccess = t
	return changed, p.lastChange
}

// regularIntervals simulates n accesses every interval to a page of rate
// rate (after a first access at time 0).
func regularIntervals(rng *rand.Rand, rate, interval float64, n int, dst []Interval) []Interval {
	p := newPage(rng, rate)
	dst = dst[:0]
	for i := 1; i <= n; i++ {
		c, _ := p.access(float64(i) * interval)
		dst = append(dst, Interval{Length: interval, Changed: c})
	}
	return dst
}

// meanStd returns the mean and the standard error of the mean of xs.
func meanStd(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// binom returns the Binomial(n, p) probabilities.
func binom(n int, p float64) []float64 {
	pr := make([]float64, n+1)
	for k := 0; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		pr[k] = math.Exp(lg - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return pr
}
