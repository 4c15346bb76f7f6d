package poisson

import (
	"context"
	"fmt"
	"math"
)

// AllocConfig configures Allocate. Frequencies are refreshes per time unit,
// in the unit of the rates.
type AllocConfig struct {
	// Budget is the total refresh frequency B = Σ f_i to distribute, e.g.
	// fetches per day when rates are per day. It must be positive.
	Budget float64
	// MinFreq is the least frequency any page gets (1/maximum interval).
	// With 0, pages that change too fast to be worth refreshing get 0 (an
	// infinite interval), as in the unconstrained optimum.
	MinFreq float64
	// MaxFreq is the most any page gets (1/minimum interval); 0 means no
	// limit.
	MaxFreq float64
	// Tolerance is the relative precision of Σ f_i against Budget
	// (default 1e-9).
	Tolerance float64
	// MaxIter caps the passes over the pages in the multiplier search
	// (default 200).
	MaxIter int
}

func (c AllocConfig) tolerance() float64 {
	if c.Tolerance > 0 {
		return c.Tolerance
	}
	return 1e-9
}

func (c AllocConfig) maxIter() int {
	if c.MaxIter > 0 {
		return c.MaxIter
	}
	return 200
}

func (c AllocConfig) maxFreq() float64 {
	if c.MaxFreq > 0 {
		return c.MaxFreq
	}
	return math.Inf(1)
}

// Allocation is the result of Allocate.
type Allocation struct {
	// Freqs holds each page's refresh frequency f_i, in input order.
	Freqs []float64
	// Intervals holds each page's refresh interval 1/f_i, in input order;
	// +Inf for a page that gets no refreshes (only with MinFreq = 0).
	Intervals []float64
	// Multiplier is the Lagrange multiplier μ: the weighted marginal
	// freshness per unit of frequency, w·∂F/∂f, that every page between
	// the bounds has. OptimalFrequency(Multiplier, λ, w, cfg) gives a
	// page's frequency without rerunning Allocate (except for pages at the
	// cutoff, see Allocate). It is 0 when every page is at MaxFreq.
	Multiplier float64
	// Freshness is the expected freshness of the allocation, the weighted
	// mean Σ w_i F(λ_i, 1/f_i) / Σ w_i.
	Freshness float64
	// Used is Σ f_i: Budget within Tolerance, unless every page reached
	// MaxFreq or no page can gain from more refreshes (every rate or
	// weight 0), when the rest of the budget is left unused.
	Used float64
	// Passes counts the passes over the pages.
	Passes int
}

// Allocate distributes a refresh budget over pages of known change rates
// (and importance weights, nil for all 1) to maximise the expected
// weighted freshness Σ w_i F(λ_i, 1/f_i) subject to Σ f_i = Budget and
// MinFreq <= f_i <= MaxFreq (Cho and Garcia-Molina, "Effective page
// refresh policies for Web crawlers", 2003).
//
// F(λ, 1/f) is concave in f, so by the KKT conditions there is one
// multiplier μ with every page's marginal freshness w·∂F/∂f equal to μ
// unless a bound holds it: f_i = clamp(f*_i(μ), MinFreq, MaxFreq), where
// f*_i solves w_i·φ(λ_i/f)/λ_i = μ with φ(x) = 1 - (1+x)e^{-x}
// (MarginalFreshness). Since the marginal freshness of a page never exceeds
// w/λ (its value at f → 0), a page with λ_i ≥ w_i/μ has f*_i = 0: it
// changes too fast for a refresh to buy as much freshness as elsewhere.
//
// The minimum-rate rule: such pages, pages with rate or weight 0 (always
// fresh, or unimportant) and pages whose optimum is below MinFreq get
// exactly MinFreq, which the KKT conditions make optimal under the lower
// bound; a crawler sets MinFreq = 1/maximum interval so that every page is
// still fetched now and then (to see links, deletions and a change of
// behaviour) instead of never.
//
// The multiplier is found by a safeguarded Newton iteration on ln μ: each
// pass over the pages gives Σ f_i and its derivative; a step outside the
// bracket, or after a step that did not halve the error, bisects instead.
// It ends when Σ f_i is within Tolerance of Budget. Over more than 8192
// pages the search starts from the multiplier of a systematic sample of
// 4096 of them with the budget scaled down, so that a few passes over all
// pages suffice. f*_i(μ) is the root of x - ln(1+x) = -ln(1 - μλ_i/w_i)
// in x = λ_i/f, by Halley's method warm-started from the previous pass.
//
// Pages right at the cutoff defeat the multiplier: f* = λ/x only reaches 0
// as x = -ln(1 - μλ/w) grows without bound, so it falls from about λ/37 to
// 0 within the last bits of a float64 μ, and Σ f_i can jump past the
// budget. When the bracket on ln μ has closed to 1e-13, the pages whose
// frequency differs across it share the rest of the budget in proportion
// to their jump; all other pages have the frequency of the multiplier.
//
// Rates and weights must be non-negative and not NaN; an infinite rate
// gets MinFreq. Budget must be at least len(rates)·MinFreq; with enough
// budget for every page that gains to be at MaxFreq, they all are, and the
// rest is left unused.
func Allocate(ctx context.Context, rates, weights []float64, cfg AllocConfig) (Allocation, error) {
	if err := checkAlloc(rates, weights, cfg); err != nil {
		return Allocation{}, err
	}
	n := len(rates)
	a := Allocation{Freqs: make([]float64, n), Intervals: make([]float64, n)}
	if n == 0 {
		return a, nil
	}
	p := newAllocProblem(rates, weights, cfg)
	muHi, gainful := p.gainers()
	a.Passes++
	if b, ok := p.atBounds(a, muHi, gainful); ok {
		return b, nil
	}
	return p.search(ctx, a, muHi)
}

// allocProblem is one call of Allocate: the pages, the bounds and the
// budget, and the warm starts of the multiplier search.
type allocProblem struct {
	rates, weights []float64
	cfg            AllocConfig
	// fmin and fmax are the frequency bounds (fmax +Inf for no limit).
	fmin, fmax float64
	// budget is B and tol the relative precision of Σ f_i against it.
	budget, tol float64
	// x holds each page's last x = λ/f*, the warm start of the next pass.
	x []float64
}

func newAllocProblem(rates, weights []float64, cfg AllocConfig) *allocProblem {
	return &allocProblem{
		rates:   rates,
		weights: weights,
		cfg:     cfg,
		fmin:    cfg.MinFreq,
		fmax:    cfg.maxFreq(),
		budget:  cfg.Budget,
		tol:     cfg.tolerance(),
		x:       make([]float64, len(rates)),
	}
}

// weight is page i's importance weight, 1 without weights.
func (p *allocProblem) weight(i int) float64 {
	if p.weights == nil {
		return 1
	}
	return p.weights[i]
}

// gainers counts the pages that gain from refreshes, those with a
// positive finite rate and weight (the others stay at MinFreq whatever the
// multiplier), and returns μ_hi, the largest marginal freshness at
// MinFreq: at μ_hi every page is at MinFreq.
func (p *allocProblem) gainers() (muHi float64, gainful int) {
	for i, r := range p.rates {
		w := p.weight(i)
		if r > 0 && w > 0 && !math.IsInf(r, 1) {
			gainful++
			muHi = math.Max(muHi, w*MarginalFreshness(r, p.fmin))
		}
	}
	return muHi, gainful
}

// atBounds returns the finished allocation, and true, when the budget puts
// every page at a bound: at MinFreq when no page gains or the budget is
// (within tolerance) n·MinFreq, or every page that gains at MaxFreq when
// the budget covers that.
func (p *allocProblem) atBounds(a Allocation, muHi float64, gainful int) (Allocation, bool) {
	n := len(p.rates)
	fmin, fmax := p.fmin, p.fmax
	switch {
	case gainful == 0 || p.budget <= float64(n)*fmin*(1+p.tol):
		return finishAlloc(a, p.rates, p.weights, func(int) float64 { return fmin }, muHi), true
	case p.budget >= float64(gainful)*fmax+float64(n-gainful)*fmin:
		// Every page that gains is at MaxFreq.
		return finishAlloc(a, p.rates, p.weights, func(i int) float64 {
			if r := p.rates[i]; !(r > 0) || math.IsInf(r, 1) || p.weight(i) == 0 {
				return fmin
			}
			return fmax
		}, 0), true
	}
	return a, false
}

// muBracket is the bracket [vLo, vHi] on v = ln μ of the multiplier
// search, with Σf(vLo) = sLo >= B >= Σf(vHi) = sHi; vLo is unknown (-Inf,
// sLo 0) until a pass exceeds the budget.
type muBracket struct {
	vLo, sLo float64
	vHi, sHi float64
}

// search finds the multiplier by a safeguarded Newton iteration on ln μ
// and returns the finished allocation: at the multiplier where Σ f_i is
// within tolerance of the budget, or, when the bracket collapses first,
// with the pages at the cutoff sharing the rest (shareCutoff).
func (p *allocProblem) search(ctx context.Context, a Allocation, muHi float64) (Allocation, error) {
	b := muBracket{vHi: math.Log(muHi), sHi: float64(len(p.rates)) * p.fmin, vLo: math.Inf(-1)}
	v := p.start(ctx, b.vHi)
	lastErr := math.Inf(1)
	for {
		if err := ctx.Err(); err != nil {
			return Allocation{}, fmt.Errorf("poisson: allocate: %w", err)
		}
		if a.Passes >= p.cfg.maxIter() {
			return Allocation{}, fmt.Errorf("poisson: allocate: multiplier search did not converge in %d passes (budget %v)", a.Passes, p.budget)
		}
		s, ds := p.sum(&a, v)
		if math.Abs(s-p.budget) <= p.tol*p.budget {
			return finishAlloc(a, p.rates, p.weights, nil, math.Exp(v)), nil
		}
		if s > p.budget {
			b.vLo, b.sLo = v, s
		} else {
			b.vHi, b.sHi = v, s
		}
		if b.vHi-b.vLo <= 1e-13 {
			return p.shareCutoff(a, b), nil
		}
		errNow := math.Abs(s - p.budget)
		bisect := errNow > 0.5*lastErr
		lastErr = errNow
		v = b.next(v, s, ds, p.budget, bisect)
	}
}

// start is the first v = ln μ of the search: the multiplier of a
// systematic sample of the pages (with the budget scaled down), which is
// close enough for Newton's method to need a few passes over all of them;
// without one (at most 2·allocSample pages, or no usable sample), 8 below
// vHi.
func (p *allocProblem) start(ctx context.Context, vHi float64) float64 {
	v := vHi - 8
	if len(p.rates) > 2*allocSample {
		if mu, ok := sampleMultiplier(ctx, p.rates, p.weights, p.cfg); ok && math.Log(mu) < vHi {
			v = math.Log(mu)
		}
	}
	return v
}

// sum is one pass over the pages at μ = e^v: it sets a.Freqs to each
// page's frequency, counts the pass, and returns Σ f_i and its derivative
// in v.
func (p *allocProblem) sum(a *Allocation, v float64) (s, ds float64) {
	mu := math.Exp(v)
	for i, r := range p.rates {
		f, d := optimalFreq(mu, r, p.weight(i), p.fmin, p.fmax, &p.x[i])
		a.Freqs[i] = f
		s += f
		ds += d
	}
	a.Passes++
	return s, ds
}

// next is the safeguarded Newton step from v, where Σf = s with derivative
// ds: a step outside the bracket, or one after a step that did not halve
// the error (bisect), bisects instead, or, with no lower end yet, steps
// down by 8 (a factor of about 3000).
func (b muBracket) next(v, s, ds, budget float64, bisect bool) float64 {
	next := v
	if ds < 0 {
		next = v - (s-budget)/ds
	}
	switch {
	case math.IsInf(b.vLo, -1):
		if bisect || !(next < v && next > v-700) {
			next = v - 8
		}
	case bisect || !(next > b.vLo && next < b.vHi):
		next = 0.5 * (b.vLo + b.vHi)
	}
	return next
}

// shareCutoff finishes an allocation whose bracket has collapsed onto a
// multiplier where Σf jumps past the budget: pages at the cutoff λ = w/μ,
// whose f* = λ/x falls from about λ/37 to 0 within the last bits of
// 1 - μλ/w (x only grows like -ln(1 - μλ/w)). Every other page has its
// frequency; the pages whose frequency differs across the bracket share
// what is left of the budget, in proportion to their jump.
func (p *allocProblem) shareCutoff(a Allocation, b muBracket) Allocation {
	muLo, muHi := math.Exp(b.vLo), math.Exp(b.vHi)
	t := 0.0
	if b.sLo > b.sHi {
		t = (p.budget - b.sHi) / (b.sLo - b.sHi)
	}
	return finishAlloc(a, p.rates, p.weights, func(i int) float64 {
		xi := p.x[i]
		flo, _ := optimalFreq(muLo, p.rates[i], p.weight(i), p.fmin, p.fmax, &xi)
		fhi, _ := optimalFreq(muHi, p.rates[i], p.weight(i), p.fmin, p.fmax, &p.x[i])
		return fhi + t*(flo-fhi)
	}, math.Sqrt(muLo*muHi))
}

// allocSample is the size of the sample whose multiplier starts the
// search over a large set of pages.
const allocSample = 4096

// sampleMultiplier allocates the scaled budget over every k-th page and
// returns the multiplier found.
func sampleMultiplier(ctx context.Context, rates, weights []float64, cfg AllocConfig) (float64, bool) {
	n := len(rates)
	step := n / allocSample
	var sr, sw []float64
	for i := 0; i < n; i += step {
		sr = append(sr, rates[i])
		if weights != nil {
			sw = append(sw, weights[i])
		}
	}
	sub := cfg
	sub.Budget = cfg.Budget * float64(len(sr)) / float64(n)
	sub.Tolerance = 1e-6
	if sub.Budget < float64(len(sr))*sub.MinFreq {
		return 0, false
	}
	a, err := Allocate(ctx, sr, sw, sub)
	if err != nil || !(a.Multiplier > 0) {
		return 0, false
	}
	return a.Multiplier, true
}

// finishAlloc fills the intervals, the expected freshness and Used from
// each page's frequency, freq(i) or, if freq is nil, a.Freqs[i].
func finishAlloc(a Allocation, rates, weights []float64, freq func(int) float64, mu float64) Allocation {
	var used, fresh, wsum float64
	for i, r := range rates {
		f := a.Freqs[i]
		if freq != nil {
			f = freq(i)
		}
		used += f
		a.Freqs[i] = f
		a.Intervals[i] = 1 / f
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		wsum += w
		if w > 0 {
			fresh += w * Freshness(r, a.Intervals[i])
		}
	}
	a.Multiplier = mu
	a.Used = used
	if wsum > 0 {
		a.Freshness = fresh / wsum
	}
	return a
}

func checkAlloc(rates, weights []float64, cfg AllocConfig) error {
	if weights != nil && len(weights) != len(rates) {
		return fmt.Errorf("poisson: allocate: %d weights for %d rates", len(weights), len(rates))
	}
	if !(cfg.Budget > 0) || math.IsInf(cfg.Budget, 1) {
		return fmt.Errorf("poisson: allocate: budget must be positive and finite, got %v", cfg.Budget)
	}
	if !(cfg.MinFreq >= 0) || math.IsInf(cfg.MinFreq, 1) {
		return fmt.Errorf("poisson: allocate: MinFreq must be non-negative and finite, got %v", cfg.MinFreq)
	}
	if cfg.MaxFreq < 0 || math.IsNaN(cfg.MaxFreq) || (cfg.MaxFreq > 0 && cfg.MaxFreq < cfg.MinFreq) {
		return fmt.Errorf("poisson: allocate: MaxFreq %v must be 0 (no limit) or at least MinFreq %v", cfg.MaxFreq, cfg.MinFreq)
	}
	if need := float64(len(rates)) * cfg.MinFreq; need > cfg.Budget {
		return fmt.Errorf("poisson: allocate: budget %v is below %d pages × MinFreq %v = %v", cfg.Budget, len(rates), cfg.MinFreq, need)
	}
	for i, r := range rates {
		if !(r >= 0) {
			return fmt.Errorf("poisson: allocate: rate %d is %v, want non-negative", i, r)
		}
	}
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("poisson: allocate: weight %d is %v, want non-negative and finite", i, w)
		}
	}
	return nil
}

// OptimalFrequency is the refresh frequency of one page of the given rate
// and weight at multiplier mu (Allocation.Multiplier), under cfg's MinFreq
// and MaxFreq: the page's share of an allocation, for a caller that places
// pages one at a time once the multiplier is known.
func OptimalFrequency(mu, rate, weight float64, cfg AllocConfig) float64 {
	var x float64
	f, _ := optimalFreq(mu, rate, weight, cfg.MinFreq, cfg.maxFreq(), &x)
	return f
}

// optimalFreq returns clamp(f*(mu), fmin, fmax) and its derivative in
// ln mu (0 when clamped). *x is the warm start for, and receives, λ/f*.
func optimalFreq(mu, rate, weight, fmin, fmax float64, x *float64) (f, dfdv float64) {
	if !(rate > 0) || weight <= 0 || math.IsInf(rate, 1) {
		return fmin, 0
	}
	if mu <= 0 {
		return fmax, 0
	}
	y := mu * rate / weight
	if y >= 1 {
		return fmin, 0
	}
	xv := phiInv(y, *x)
	*x = xv
	f = rate / xv
	switch {
	case f <= fmin:
		return fmin, 0
	case f >= fmax:
		return fmax, 0
	}
	// df/dμ = -(λ/x²)·(dx/dy)·(λ/w) with dx/dy = 1/φ'(x) = (1+x)/(x(1-y));
	// times μ for the derivative in ln μ.
	return f, -f * y * (1 + xv) / (xv * xv * (1 - y))
}

// phiInv returns x > 0 with φ(x) = 1-(1+x)e^{-x} = y for 0 < y < 1, that
// is k(x) = x - ln(1+x) - d = 0 with d = -ln(1-y), by Halley's method
// (k' = x/(1+x), k” = 1/(1+x)²) from x0, or from a fresh guess when
// x0 <= 0. Halley's error after a step is of the order of the step cubed,
// so a step below 1e-5·x ends the iteration.
func phiInv(y, x0 float64) float64 {
	d := -math.Log1p(-y)
	x := x0
	if !(x > 0) || math.IsInf(x, 1) {
		if d < 1 {
			x = math.Sqrt(2*d) + 2*d/3
		} else {
			x = d + math.Log1p(d+math.Log(d+1))
		}
	}
	for range 60 {
		k := xMinusLog1p(x) - d
		k1 := x / (1 + x)
		k2 := k1 / (x * (1 + x))
		den := 2*k1*k1 - k*k2
		step := k / k1 // Newton, when Halley's correction is too large
		if den > k1*k1 {
			step = 2 * k * k1 / den
		}
		next := x - step
		if !(next > 0) {
			next = x / 2
		}
		if math.Abs(step) <= 1e-5*next {
			return next
		}
		x = next
	}
	return x
}

// xMinusLog1p is x - ln(1+x), by its series for small x.
func xMinusLog1p(x float64) float64 {
	if x < 1e-2 {
		return x * x * (1.0/2 - x*(1.0/3-x*(1.0/4-x*(1.0/5-x*(1.0/6-x/7)))))
	}
	return x - math.Log1p(x)
}
