package poisson

import (
	"math"
	"time"
)

// LastModifiedAccumulator collects accesses that report the time of the
// page's last change (an HTTP Last-Modified date) for the last-modified
// estimator. Its three numbers are all the estimator needs, so a caller can
// keep them per page instead of a history. The zero value is empty.
type LastModifiedAccumulator struct {
	// N counts the accesses, X those that found a change.
	N, X int
	// T is the exposure: for each access that found a change, the time
	// from the last change to the access; for each that did not, the
	// whole interval since the previous access.
	T float64
}

// Add records an access that ended an interval of the given length (time
// since the previous access) and found the page last changed age before the
// access. The access saw a change when age < interval. A negative age (a
// server clock ahead of the crawler's) counts as 0; a non-positive or
// non-finite interval, or a NaN age, is ignored and Add reports false.
func (a *LastModifiedAccumulator) Add(interval, age float64) bool {
	if !(interval > 0) || math.IsInf(interval, 1) || math.IsNaN(age) {
		return false
	}
	a.N++
	if age < interval {
		a.X++
		a.T += math.Max(age, 0)
	} else {
		a.T += interval
	}
	return true
}

// Estimate returns the bias-reduced last-modified estimate
// (X - 1 - X/(N ln(1 - X/N)))/T: 0 when no access saw a change, (X-1)/T
// when every access did. See MLE for X/T and the package documentation for
// the formula's provenance.
func (a LastModifiedAccumulator) Estimate() Estimate {
	e := Estimate{N: a.N, X: a.X, Span: a.T, Method: MethodLastModified}
	if a.N == 0 {
		e.Method = MethodNone
		return e
	}
	if a.X == 0 {
		return e
	}
	x, n := float64(a.X), float64(a.N)
	var num float64
	if a.X == a.N {
		num = x - 1
	} else {
		num = x - 1 - x/(n*math.Log1p(-x/n))
	}
	if a.T <= 0 {
		if num > 0 {
			e.Rate = math.Inf(1)
		}
		return e
	}
	e.Rate = num / a.T
	e.StdErr = e.Rate / math.Sqrt(x)
	return e
}

// MLE returns the maximum-likelihood last-modified estimate X/T, exact for
// any access spacing (the likelihood is λ^X e^{-λT}), with standard error
// λ̂/√X.
func (a LastModifiedAccumulator) MLE() Estimate {
	e := Estimate{N: a.N, X: a.X, Span: a.T, Method: MethodLastModified}
	if a.N == 0 {
		e.Method = MethodNone
		return e
	}
	if a.X == 0 {
		return e
	}
	if a.T <= 0 {
		e.Rate = math.Inf(1)
		return e
	}
	e.Rate = float64(a.X) / a.T
	e.StdErr = e.Rate / math.Sqrt(float64(a.X))
	return e
}

// LastModifiedObservation is one fetch with the page's Last-Modified date
// at that fetch (for a 304 response, the date of the version kept). A zero
// LastModified means the date is unknown.
type LastModifiedObservation struct {
	Time         time.Time
	LastModified time.Time
}

// LastModifiedEstimate returns the bias-reduced last-modified estimate,
// per second, from fetches in time order. Each fetch after the first ends
// an interval; it saw a change when its LastModified is after the previous
// fetch. A fetch without a date, or not after the previous one, is skipped
// (counted in Skipped) and the next interval starts at the last fetch
// used or skipped in time order.
func LastModifiedEstimate(h []LastModifiedObservation) Estimate {
	var a LastModifiedAccumulator
	skipped := 0
	var prev time.Time
	for i, o := range h {
		if i > 0 {
			interval := o.Time.Sub(prev).Seconds()
			if o.LastModified.IsZero() || !a.Add(interval, o.Time.Sub(o.LastModified).Seconds()) {
				skipped++
			}
		}
		if i == 0 || o.Time.After(prev) {
			prev = o.Time
		}
	}
	e := a.Estimate()
	e.Skipped = skipped
	return e
}
