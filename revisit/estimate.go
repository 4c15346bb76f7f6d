package revisit

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/poisson"
)

// SourceEstimate is the schedule source of the estimating policy's
// intervals.
const SourceEstimate crawldb.Source = "estimate"

// The estimating policy's settings (see estimatePolicy).
const (
	// estimateGrid is the number of rates of the prior's grid, spaced
	// evenly in log from estimateGridMin to estimateGridMax per day.
	estimateGrid    = 48
	estimateGridMin = 1e-3
	estimateGridMax = 30.0
	// estimateBins is the number of bins of the feature score within a
	// group of pages.
	estimateBins = 4
	// estimateEM is the number of EM iterations of the group priors.
	estimateEM = 30
	// estimatePriorPages is the fewest pages with a history a group
	// needs for its prior to be fitted (else it stays uniform on the
	// grid).
	estimatePriorPages = 30
	// estimateHostWeight is the weight, in pages, of the group prior in
	// a host's prior.
	estimateHostWeight = 20.0
	// estimatePlanDays is the interval at which the planned rate has the
	// posterior's expected freshness.
	estimatePlanDays = 3.0
	// estimateExploreObs is the number of observed intervals below which
	// a page is still explored: its interval is at most
	// estimateExploreDays.
	estimateExploreObs  = 2
	estimateExploreDays = 14.0
	// estimateFillDays is how far ahead of its due time a page may be
	// fetched when a round has budget left.
	estimateFillDays = 3
)

// estimatePolicy estimates every page's change rate from its own fetch
// history, shrunk toward a prior fitted to the other pages (empirical
// Bayes), and allocates the daily budget over the estimates with
// poisson.Allocate, re-estimating and re-allocating before every round.
//
// A page's history is its intervals: from its first fetch to its first
// observation (while Datum.History is complete) and between consecutive
// observations, each changed or not. Its likelihood is the censored
// Poisson likelihood of Cho and Garcia-Molina 2003 ("Estimating frequency
// of change"), Π_changed (1 - e^{-λt}) · Π_unchanged e^{-λt}, evaluated
// on a grid of rates: it knows only whether a change happened in each
// interval, not how many. The prior is a distribution on the same grid
// (nonparametric: the rates are a mixture of classes that no gamma
// fits), one per group of pages: the page's kind (home, directory, other,
// and a document without words, a PDF) crossed with the quartile of its
// feature score log(1+words) + log(1+outlinks). Each group's prior is
// fitted by EM to the likelihoods of its pages with a history (the
// maximum-likelihood mixing distribution), and each host's prior is its
// group's with weight estimateHostWeight plus the posteriors of the
// host's other pages, so pages of a quickly changing host start fast.
// A page with a short history keeps mostly the prior, one with a long
// history mostly its own likelihood.
//
// The rate planned with is the posterior's freshness-equivalent rate:
// the rate whose freshness at estimatePlanDays equals the posterior's
// expected freshness there (poisson.Freshness); a posterior mean is
// dominated by the prior's fast tail and abandons pages that may well be
// slow. The budget is allocated over these rates (OracleAllocation:
// MinFreq one fetch per MaxInterval, MaxFreq one a day). Exploration: a
// page with fewer than estimateExploreObs observed intervals is fetched
// at least every estimateExploreDays days. A fetched page's next fetch is
// its last round plus its new interval; fetches keep the phase as the
// oracle's do. A round with budget left fetches pages due within
// estimateFillDays, soonest first, so the policy spends the budget.
// Pages never fetched go first, by the kind of their URL (documents,
// other pages, directories, home pages: slowest expected first, as a
// page fetched while it changes slowly stays fresh longer).
type estimatePolicy struct {
	c     Config
	sched *estimateSchedule
	kinds []crawldb.PageKind
	hosts []int32 // each page's host, numbered
	nhost int
	first []time.Time // each page's first fetch (zero: not yet)
	init  int32       // seconds
	grid  [estimateGrid]float64
	// gridFresh is each grid rate's freshness at estimatePlanDays.
	gridFresh [estimateGrid]float64
	// lik holds each page's likelihood on the grid (estimateGrid values
	// a page), nobs its number of intervals and likAt the FetchCount it
	// was computed at (-1: never): a page's history changes only when it
	// is fetched.
	lik   []float64
	nobs  []int
	likAt []int32
}

func newEstimatePolicy(tr *Truth, c Config) (*estimatePolicy, error) {
	s, err := crawldb.NewDefaultSchedule(*c.Schedule)
	if err != nil {
		return nil, err
	}
	n := len(tr.Pages)
	days := math.Max(1, float64(n)/float64(c.Budget))
	init := min(days*daySeconds, c.Schedule.MaxInterval.Seconds())
	p := &estimatePolicy{c: c,
		sched: &estimateSchedule{DefaultSchedule: s, lag: c.FetchLag, fill: estimateFillDays * 24 * time.Hour},
		kinds: make([]crawldb.PageKind, n), hosts: make([]int32, n), first: make([]time.Time, n), init: int32(init)}
	hostIDs := map[string]int32{}
	for i, pg := range tr.Pages {
		p.kinds[i] = crawldb.PageKindOf(pg.URL)
		id, ok := hostIDs[pg.Host]
		if !ok {
			id = int32(len(hostIDs))
			hostIDs[pg.Host] = id
		}
		p.hosts[i] = id
	}
	p.nhost = len(hostIDs)
	p.lik, p.nobs, p.likAt = make([]float64, n*estimateGrid), make([]int, n), make([]int32, n)
	for i := range p.likAt {
		p.likAt[i] = -1
	}
	lo, hi := math.Log(estimateGridMin), math.Log(estimateGridMax)
	for k := range p.grid {
		p.grid[k] = math.Exp(lo + (hi-lo)*float64(k)/(estimateGrid-1))
		p.gridFresh[k] = poisson.Freshness(p.grid[k], estimatePlanDays)
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
	if day > 0 {
		if err := p.allocate(ctx, datums); err != nil {
			return nil, err
		}
	}
	return p.sched, nil
}

// obsInterval is one interval between fetches, in days: its length,
// whether the later fetch saw a change, and, if the server's
// Last-Modified date fell inside it (dated), the age of the change at the
// later fetch.
type obsInterval struct {
	length, age    float64
	changed, dated bool
}

// intervals appends page i's intervals to buf[:0].
func (p *estimatePolicy) intervals(i int, d *crawldb.Datum, buf []obsInterval) []obsInterval {
	iv := buf[:0]
	h := d.History
	if len(h) == 0 {
		return iv
	}
	for k := 1; k < len(h); k++ {
		o, prev := h[k], h[k-1].Time
		v := obsInterval{length: o.Time.Sub(prev).Hours() / 24, changed: o.Changed}
		if lm, ok := o.LastModified(); ok && o.Changed && lm.After(prev) && !lm.After(o.Time) {
			v.dated, v.age = true, o.Time.Sub(lm).Hours()/24
		}
		iv = append(iv, v)
	}
	return iv
}

// likelihood writes the likelihood of intervals iv on the grid into row,
// scaled to a maximum of 1.
func (p *estimatePolicy) likelihood(iv []obsInterval, row []float64) {
	mx := math.Inf(-1)
	for g, lam := range p.grid {
		ll := 0.0
		for _, v := range iv {
			switch {
			case !(v.length > 0):
			case v.dated:
				ll += math.Log(lam) - lam*v.age
			case v.changed:
				ll += math.Log(-math.Expm1(-lam * v.length))
			default:
				ll -= lam * v.length
			}
		}
		row[g] = ll
		mx = max(mx, ll)
	}
	for g := range row {
		row[g] = math.Exp(row[g] - mx)
	}
}

// groups returns each page's prior group and the number of groups: its
// kind (a fetched "other" page without words is a document) times
// estimateBins, plus the quartile of its feature score among the fetched
// pages (0 for a page never fetched).
func (p *estimatePolicy) groups(datums []crawldb.Datum) ([]int, int) {
	score := make([]float64, len(datums))
	var sorted []float64
	for i := range datums {
		f := datums[i].Features
		score[i] = math.Log1p(float64(f.Words)) + math.Log1p(float64(f.Outlinks))
		if datums[i].FetchCount > 0 {
			sorted = append(sorted, score[i])
		}
	}
	slices.Sort(sorted)
	group := make([]int, len(datums))
	for i := range datums {
		k := int(p.kinds[i])
		fetched := datums[i].FetchCount > 0
		if p.kinds[i] == crawldb.KindOther && fetched && datums[i].Features.Words == 0 {
			k = crawldb.NumKinds
		}
		bin := 0
		if fetched {
			r, _ := slices.BinarySearch(sorted, score[i])
			bin = min(estimateBins-1, r*estimateBins/len(sorted))
		}
		group[i] = k*estimateBins + bin
	}
	return group, (crawldb.NumKinds + 1) * estimateBins
}

// fitPriors fits each group's prior on the grid by EM over the
// likelihoods of its pages with a history.
func (p *estimatePolicy) fitPriors(lik []float64, nobs, group []int, ngroups int) [][]float64 {
	const G = estimateGrid
	priors := make([][]float64, ngroups)
	for k := range priors {
		priors[k] = make([]float64, G)
		for g := range priors[k] {
			priors[k][g] = 1.0 / G
		}
	}
	acc := make([][]float64, ngroups)
	for k := range acc {
		acc[k] = make([]float64, G)
	}
	cnt := make([]float64, ngroups)
	post := make([]float64, G)
	for range estimateEM {
		for k := range acc {
			clear(acc[k])
		}
		clear(cnt)
		for i, no := range nobs {
			if no == 0 {
				continue
			}
			k := group[i]
			row := lik[i*G : (i+1)*G]
			s := 0.0
			for g := range post {
				post[g] = priors[k][g] * row[g]
				s += post[g]
			}
			if !(s > 0) {
				continue
			}
			for g := range post {
				acc[k][g] += post[g] / s
			}
			cnt[k]++
		}
		for k := range priors {
			if cnt[k] < estimatePriorPages {
				continue
			}
			for g := range priors[k] {
				priors[k][g] = (acc[k][g] + 1e-3) / (cnt[k] + 1e-3*G)
			}
		}
	}
	return priors
}

// hostPosteriors returns each observed page's posterior on the grid under
// its group's prior, and per host the sum of its pages' posteriors and
// their number.
func (p *estimatePolicy) hostPosteriors(lik []float64, nobs []int, group []int, priors [][]float64) (pagePost, hsum, hcnt []float64) {
	const G = estimateGrid
	n := len(nobs)
	pagePost = make([]float64, n*G)
	hsum = make([]float64, p.nhost*G)
	hcnt = make([]float64, p.nhost)
	for i := range n {
		if nobs[i] == 0 {
			continue
		}
		pp, row := pagePost[i*G:(i+1)*G], lik[i*G:(i+1)*G]
		s := 0.0
		for g := range pp {
			pp[g] = priors[group[i]][g] * row[g]
			s += pp[g]
		}
		h := int(p.hosts[i])
		for g := range pp {
			pp[g] /= s
			hsum[h*G+g] += pp[g]
		}
		hcnt[h]++
	}
	return pagePost, hsum, hcnt
}

// allocate re-estimates every page's rate and allocates the budget.
func (p *estimatePolicy) allocate(ctx context.Context, datums []crawldb.Datum) error {
	const G = estimateGrid
	n := len(datums)
	lik, nobs := p.lik, p.nobs
	var buf []obsInterval
	for i := range datums {
		if p.likAt[i] == datums[i].FetchCount {
			continue
		}
		buf = p.intervals(i, &datums[i], buf)
		nobs[i] = len(buf)
		p.likelihood(buf, lik[i*G:(i+1)*G])
		p.likAt[i] = datums[i].FetchCount
	}
	group, ngroups := p.groups(datums)
	priors := p.fitPriors(lik, nobs, group, ngroups)

	pagePost, hsum, hcnt := p.hostPosteriors(lik, nobs, group, priors)
	rates := make([]float64, n)
	post := make([]float64, G)
	for i := range n {
		row, pp := lik[i*G:(i+1)*G], pagePost[i*G:(i+1)*G]
		h := int(p.hosts[i])
		self := 0.0
		if nobs[i] > 0 {
			self = 1
		}
		s := 0.0
		for g := range post {
			prior := (estimateHostWeight*priors[group[i]][g] + hsum[h*G+g] - self*pp[g]) / (estimateHostWeight + hcnt[h] - self)
			post[g] = prior
			if nobs[i] > 0 {
				post[g] *= row[g]
			}
			s += post[g]
		}
		ef := 0.0
		for g := range post {
			ef += post[g] / s * p.gridFresh[g]
		}
		rates[i] = freshnessRate(ef, estimatePlanDays)
	}
	a, err := OracleAllocation(ctx, rates, float64(p.c.Budget), p.c.Schedule.MaxInterval)
	if err != nil {
		return err
	}
	maxSec := p.c.Schedule.MaxInterval.Seconds()
	for i := range datums {
		d := &datums[i]
		days := a.Intervals[i]
		if nobs[i] < estimateExploreObs {
			days = min(days, estimateExploreDays)
		}
		iv := int32(min(math.Round(days*daySeconds), maxSec))
		d.FetchInterval = iv
		if d.FetchCount > 0 {
			last := d.PrevFetchTime.Add(-p.c.FetchLag)
			d.FetchTime = last.Add(time.Duration(iv) * time.Second)
		}
	}
	return nil
}

// freshnessRate returns the rate λ whose freshness at interval iv
// (poisson.Freshness) is f, by bisection on log λ in [1e-6, 100].
func freshnessRate(f, iv float64) float64 {
	lo, hi := math.Log(1e-6), math.Log(100.0)
	for range 40 {
		mid := (lo + hi) / 2
		if poisson.Freshness(math.Exp(mid), iv) > f {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}

// estimateSchedule fetches a page every FetchInterval (set by the
// estimating policy), keeping the phase as oracleSchedule does; it also
// lets generate fill a round's budget with pages due soon and ranks the
// pages never fetched.
type estimateSchedule struct {
	*crawldb.DefaultSchedule
	lag  time.Duration // Config.FetchLag
	fill time.Duration // how far ahead of its due time a page may go
}

// Name returns "estimate".
func (s *estimateSchedule) Name() string { return PolicyEstimate }

// ShouldFetch reports whether d is due within fill of now. Generate
// takes the most overdue first, so pages not yet due only use budget the
// due ones leave.
func (s *estimateSchedule) ShouldFetch(d *crawldb.Datum, now time.Time) bool {
	return s.DefaultSchedule.ShouldFetch(d, now.Add(s.fill))
}

// GenerateSortValue ranks the pages never fetched first, by how slowly
// their URL's kind of page is expected to change: documents (.pdf), other
// pages, directories, home pages; the fetched pages after them, most
// overdue first.
func (s *estimateSchedule) GenerateSortValue(d *crawldb.Datum, _ time.Time) (float32, bool) {
	if d.Status != crawldb.StatusDBUnfetched {
		return 0, true
	}
	switch crawldb.PageKindOf(d.URL) {
	case crawldb.KindHome:
		return 1, true
	case crawldb.KindDirectory:
		return 2, true
	}
	if strings.HasSuffix(d.URL, ".pdf") {
		return 4, true
	}
	return 3, true
}

// SetFetchSchedule schedules the next fetch one interval after the due
// time prevFetchTime; after fetchTime's round (fetchTime less the fetch
// lag) instead if that due time is not after the fetch (a late fetch) or
// is after it (an early one, filling a round).
func (s *estimateSchedule) SetFetchSchedule(d *crawldb.Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state crawldb.ChangeState) {
	d.Retries = 0
	iv := time.Duration(d.FetchInterval) * time.Second
	next := prevFetchTime.Add(iv)
	if prevFetchTime.IsZero() || !next.After(fetchTime) || prevFetchTime.After(fetchTime) {
		next = fetchTime.Add(iv - s.lag)
	}
	d.FetchTime = next
	if state == crawldb.StateModified || modifiedTime.IsZero() {
		modifiedTime = fetchTime
	}
	d.ModifiedTime = modifiedTime.UTC().Truncate(time.Millisecond)
	d.Source = SourceEstimate
}
