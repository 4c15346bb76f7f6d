package revisit

import (
	"context"
	"math"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/poisson"
)

// SourceEstimate is the schedule source of the estimating policy's
// intervals.
const SourceEstimate crawldb.Source = "estimate"

// The estimating policy's settings (see estimatePolicy).
const (
	// estimateRealloc is the number of days between re-estimations and
	// re-allocations; the first is on day estimateRealloc.
	estimateRealloc = 3
	// estimatePriorMin is the number of intervals a page's history needs
	// to take part in the fit of its kind's prior.
	estimatePriorMin = 3
	// estimatePriorPages is the fewest such pages a kind's own prior
	// needs; with fewer it gets the prior of all kinds together.
	estimatePriorPages = 30
	// estimateExploreObs is the number of observed intervals below which
	// a page is still explored: its interval is at most
	// estimateExploreDays.
	estimateExploreObs  = 2
	estimateExploreDays = 14.0
)

// estimatePolicy estimates every page's change rate from its own fetch
// history and allocates the budget over the estimates.
//
// Every estimateRealloc days it reads each fetched page's intervals:
// from its first fetch to its first observation (while the history is
// complete) and between consecutive observations of Datum.History, each
// changed or not. poisson.FromIntervals estimates the rate λ̂ (per day)
// from them with censoring handled (Cho and Garcia-Molina 2003,
// "Estimating frequency of change": the regular estimator for equal
// intervals, the irregular maximum-likelihood estimator otherwise). The
// estimate is shrunk toward a gamma prior of the page's kind
// (crawldb.PageKindOf) by empirical Bayes: with the prior's shape α and
// rate β and the history's span S (days), the rate planned with is
// (α + λ̂·S)/(β + S), the gamma-Poisson posterior mean with λ̂·S the
// changes the censoring-corrected estimate stands for; a page with a short
// history gets mostly the prior mean α/β, one with a long history mostly
// its own estimate. Each kind's prior is fitted by moments to the
// estimates of the pages with at least estimatePriorMin intervals: mean m
// and the variance v left after subtracting the estimates' mean sampling
// variance (λ̂/S), α = m²/v, β = m/v. A page never fetched gets the
// prior mean.
//
// The budget is then allocated over the planned rates with
// poisson.Allocate (OracleAllocation: MinFreq one fetch per MaxInterval,
// MaxFreq one a day). Exploration: a page with fewer than
// estimateExploreObs observed intervals is refetched at least every
// estimateExploreDays days, so that every page gets a history. A fetched
// page's next fetch is its last round plus its new interval (due at once
// if that has passed); fetches keep the phase as the oracle's do. Before
// the first allocation every page has the interval that spreads the
// pages evenly over the budget (pages/budget days).
type estimatePolicy struct {
	c     Config
	sched *estimateSchedule
	kinds []crawldb.PageKind
	first []time.Time // each page's first fetch (zero: not yet)
	init  int32       // seconds
}

func newEstimatePolicy(tr *Truth, c Config) (*estimatePolicy, error) {
	s, err := crawldb.NewDefaultSchedule(*c.Schedule)
	if err != nil {
		return nil, err
	}
	n := len(tr.Pages)
	days := math.Max(1, float64(n)/float64(c.Budget))
	init := min(days*daySeconds, c.Schedule.MaxInterval.Seconds())
	p := &estimatePolicy{c: c, sched: &estimateSchedule{DefaultSchedule: s, lag: c.FetchLag},
		kinds: make([]crawldb.PageKind, n), first: make([]time.Time, n), init: int32(init)}
	for i, pg := range tr.Pages {
		p.kinds[i] = crawldb.PageKindOf(pg.URL)
	}
	return p, nil
}

func (p *estimatePolicy) initDatum(_ int, d *crawldb.Datum, now time.Time) {
	d.FetchTime = now
	d.FetchInterval = p.init
	d.Source = SourceEstimate
}

func (p *estimatePolicy) schedule(ctx context.Context, day int, now time.Time, datums []crawldb.Datum) (crawldb.Schedule, error) {
	for i := range datums {
		if p.first[i].IsZero() && datums[i].FetchCount > 0 {
			p.first[i] = datums[i].PrevFetchTime
		}
	}
	if day > 0 && day%estimateRealloc == 0 {
		if err := p.allocate(ctx, datums); err != nil {
			return nil, err
		}
	}
	return p.sched, nil
}

// pageEstimate is one page's estimate: rate λ̂ per day over span days in
// n intervals.
type pageEstimate struct {
	rate, span float64
	n          int
}

// estimate returns page i's estimate from its history.
func (p *estimatePolicy) estimate(i int, d *crawldb.Datum, buf []poisson.Interval) (pageEstimate, []poisson.Interval) {
	iv := buf[:0]
	h := d.History
	if len(h) == 0 {
		return pageEstimate{}, iv
	}
	if int(d.FetchCount) == len(h)+1 && !p.first[i].IsZero() {
		iv = append(iv, poisson.Interval{Length: h[0].Time.Sub(p.first[i]).Hours() / 24, Changed: h[0].Changed})
	}
	for k := 1; k < len(h); k++ {
		iv = append(iv, poisson.Interval{Length: h[k].Time.Sub(h[k-1].Time).Hours() / 24, Changed: h[k].Changed})
	}
	est := poisson.FromIntervals(iv, poisson.DefaultConfig())
	if !est.OK() || math.IsInf(est.Rate, 0) || math.IsNaN(est.Rate) {
		return pageEstimate{}, iv
	}
	return pageEstimate{rate: est.Rate, span: est.Span, n: est.N}, iv
}

// gammaPrior is a gamma prior's shape and rate (per day).
type gammaPrior struct{ alpha, beta float64 }

// fitPrior fits a gamma prior by moments to estimates: their mean, and
// their variance less the mean sampling variance. ok is false with fewer
// than estimatePriorPages estimates or no positive mean.
func fitPrior(ests []pageEstimate) (gammaPrior, bool) {
	var n, sum, sum2, noise float64
	for _, e := range ests {
		if e.n < estimatePriorMin {
			continue
		}
		n++
		sum += e.rate
		sum2 += e.rate * e.rate
		noise += e.rate / e.span
	}
	if n < estimatePriorPages || !(sum > 0) {
		return gammaPrior{}, false
	}
	m := sum / n
	v := sum2/n - m*m - noise/n
	v = max(v, m*m/100) // at most shape 100: never all prior
	return gammaPrior{alpha: m * m / v, beta: m / v}, true
}

// allocate re-estimates every page's rate and allocates the budget.
func (p *estimatePolicy) allocate(ctx context.Context, datums []crawldb.Datum) error {
	ests := make([]pageEstimate, len(datums))
	var buf []poisson.Interval
	byKind := make([][]pageEstimate, crawldb.NumKinds)
	for i := range datums {
		ests[i], buf = p.estimate(i, &datums[i], buf)
		if ests[i].n > 0 {
			byKind[p.kinds[i]] = append(byKind[p.kinds[i]], ests[i])
		}
	}
	pooled, ok := fitPrior(ests)
	if !ok {
		return nil // too little known yet: keep the intervals
	}
	var priors [crawldb.NumKinds]gammaPrior
	for k := range priors {
		if pr, ok := fitPrior(byKind[k]); ok {
			priors[k] = pr
		} else {
			priors[k] = pooled
		}
	}
	rates := make([]float64, len(datums))
	for i, e := range ests {
		pr := priors[p.kinds[i]]
		rates[i] = (pr.alpha + e.rate*e.span) / (pr.beta + e.span)
	}
	a, err := OracleAllocation(ctx, rates, float64(p.c.Budget), p.c.Schedule.MaxInterval)
	if err != nil {
		return err
	}
	maxSec := p.c.Schedule.MaxInterval.Seconds()
	for i := range datums {
		d := &datums[i]
		days := a.Intervals[i]
		if ests[i].n < estimateExploreObs {
			days = min(days, estimateExploreDays)
		}
		iv := int32(min(math.Round(days*daySeconds), maxSec))
		d.FetchInterval = iv
		if d.FetchCount > 0 {
			last := d.PrevFetchTime.Add(-p.c.FetchLag)
			d.FetchTime = last.Add(time.Duration(iv) * time.Second)
		}
	}
	p.c.Log.Info("revisit: estimated and allocated", "policy", PolicyEstimate, "multiplier", a.Multiplier,
		"prior_mean_per_day", []float64{priors[0].alpha / priors[0].beta, priors[1].alpha / priors[1].beta, priors[2].alpha / priors[2].beta})
	return nil
}

// estimateSchedule fetches a page every FetchInterval (set by the
// estimating policy), keeping the phase as oracleSchedule does.
type estimateSchedule struct {
	*crawldb.DefaultSchedule
	lag time.Duration // Config.FetchLag
}

// Name returns "estimate".
func (s *estimateSchedule) Name() string { return PolicyEstimate }

// SetFetchSchedule schedules the next fetch one interval after the due
// time prevFetchTime, or after fetchTime's round (fetchTime less the fetch
// lag) if that is not later than it.
func (s *estimateSchedule) SetFetchSchedule(d *crawldb.Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state crawldb.ChangeState) {
	d.Retries = 0
	iv := time.Duration(d.FetchInterval) * time.Second
	next := prevFetchTime.Add(iv)
	if prevFetchTime.IsZero() || !next.After(fetchTime) {
		next = fetchTime.Add(iv - s.lag)
	}
	d.FetchTime = next
	if state == crawldb.StateModified || modifiedTime.IsZero() {
		modifiedTime = fetchTime
	}
	d.ModifiedTime = modifiedTime.UTC().Truncate(time.Millisecond)
	d.Source = SourceEstimate
}
