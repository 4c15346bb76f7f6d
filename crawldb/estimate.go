package crawldb

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/poisson"
)

// SourceEstimate is the schedule source of EstimateSchedule's intervals.
const SourceEstimate Source = "estimate"

// The estimating schedule's grid of rates: EstimateGrid rates per day,
// spaced evenly in log from estimateGridMin to estimateGridMax.
const (
	EstimateGrid    = 48
	estimateGridMin = 1e-3
	estimateGridMax = 30.0
	// estimateBins is the number of bins of the feature score.
	estimateBins = 4
	// estimateGroups is the number of prior groups: the page kinds and
	// the document kind (a fetched "other" page without words) times the
	// score bins.
	estimateGroups = (NumKinds + 1) * estimateBins
	// estimateEM is the number of EM iterations of the group priors.
	estimateEM = 30
	// estimatePriorPages is the fewest pages with a history a group needs
	// for its prior to be fitted (else it stays uniform on the grid).
	estimatePriorPages = 30
)

// EstimateConfig configures the estimating schedule (the settings
// schedule.estimate.*). It is comparable, so ScheduleConfig stays
// comparable. The zero value means DefaultEstimateConfig().
type EstimateConfig struct {
	// FetchesPerDay is the fetch budget the intervals are allocated over
	// (fetches a day). 0 means BudgetShare of the CrawlDB's URLs.
	FetchesPerDay float64
	// BudgetShare is the budget as a share of the URLs when FetchesPerDay
	// is 0 (default 0.1: every URL once in ten days on average).
	BudgetShare float64
	// PlanDays is the interval at which the rate planned with has the
	// posterior's expected freshness (default 3 days).
	PlanDays float64
	// ExploreFetches is the number of observed intervals below which a
	// page is still explored: its interval is at most ExploreInterval
	// (defaults 2 and 14 days).
	ExploreFetches  int
	ExploreInterval time.Duration
	// Fill is how long before its due time a page may be fetched when a
	// round has budget left (default 3 days); generate takes the most
	// overdue first, so such pages only use budget the due ones leave.
	Fill time.Duration
	// Slack is subtracted from every due time, so that a page fetched a
	// while into a round (generate, then the fetch) is due again at the
	// round one interval later, not the one after (default 1 hour).
	Slack time.Duration
	// SampleSize bounds the pages the model is fitted to (a uniform
	// sample of the CrawlDB; default 50,000).
	SampleSize int
}

// DefaultEstimateConfig returns the estimating schedule's defaults.
func DefaultEstimateConfig() EstimateConfig {
	return EstimateConfig{BudgetShare: 0.1, PlanDays: 3, ExploreFetches: 2, ExploreInterval: 14 * 24 * time.Hour,
		Fill: 3 * 24 * time.Hour, Slack: time.Hour, SampleSize: 50_000}
}

// withDefaults fills the zero fields from DefaultEstimateConfig.
func (c EstimateConfig) withDefaults() EstimateConfig {
	d := DefaultEstimateConfig()
	c.BudgetShare = cmp.Or(c.BudgetShare, d.BudgetShare)
	c.PlanDays = cmp.Or(c.PlanDays, d.PlanDays)
	c.ExploreFetches = cmp.Or(c.ExploreFetches, d.ExploreFetches)
	c.ExploreInterval = cmp.Or(c.ExploreInterval, d.ExploreInterval)
	c.Fill = cmp.Or(c.Fill, d.Fill)
	c.Slack = cmp.Or(c.Slack, d.Slack)
	c.SampleSize = cmp.Or(c.SampleSize, d.SampleSize)
	return c
}

// SampleSizeOrDefault is SampleSize, or its default when 0.
func (c EstimateConfig) SampleSizeOrDefault() int { return c.withDefaults().SampleSize }

// Validate checks the configuration.
func (c EstimateConfig) Validate() error {
	switch {
	case !(c.FetchesPerDay >= 0) || math.IsInf(c.FetchesPerDay, 0):
		return fmt.Errorf("schedule.estimate.fetchesPerDay %v: want a finite number >= 0 (0: the budget share of the URLs)", c.FetchesPerDay)
	case !(c.BudgetShare >= 0 && c.BudgetShare <= 1):
		return fmt.Errorf("schedule.estimate.budgetShare %v: want a share in [0, 1] (0: 0.1)", c.BudgetShare)
	case !(c.PlanDays >= 0) || math.IsInf(c.PlanDays, 0):
		return fmt.Errorf("schedule.estimate.planDays %v: want a finite number of days >= 0", c.PlanDays)
	case c.ExploreFetches < 0, c.ExploreInterval < 0, c.Fill < 0, c.Slack < 0, c.SampleSize < 0:
		return errors.New("schedule.estimate: exploreFetches, exploreInterval, fill, slack and sampleSize must not be negative")
	}
	return nil
}

// EstimateModel is what the estimating schedule plans with, fitted to a
// CrawlDB by FitEstimateModel: the prior of each group of pages on the
// grid of rates, the feature-score cut points of the groups, and the
// Lagrange multiplier of the freshness-optimal allocation of the budget.
// It is small (a few kilobytes as JSON) and travels in the job specs of
// generate and updatedb.
type EstimateModel struct {
	// Cuts are the feature-score cut points of the score bins.
	Cuts []float64 `json:"cuts"`
	// Priors are each group's prior on the grid (EstimateGrid values
	// summing to 1), indexed by group.
	Priors [][]float64 `json:"priors"`
	// Mu is the allocation's Lagrange multiplier (rates and frequencies
	// per day); MinFreq and MaxFreq its bounds, per day.
	Mu float64 `json:"mu"`
	// PlanMu, when positive, is the multiplier of the first allocation,
	// at whose intervals the pages were re-planned before the final one
	// (Mu).
	PlanMu  float64 `json:"plan_mu,omitempty"`
	MinFreq float64 `json:"min_freq"`
	MaxFreq float64 `json:"max_freq"`
	// Budget is the fetches a day allocated; Pages the URLs and Observed
	// those with an observed interval when it was fitted.
	Budget   float64 `json:"budget"`
	Pages    int64   `json:"pages"`
	Observed int64   `json:"observed"`
}

// estimateGrid holds the grid's rates and each rate's freshness at
// PlanDays.
type estimateGrid struct {
	rate, fresh [EstimateGrid]float64
	logRate     [EstimateGrid]float64
	planDays    float64
	// changed holds log(1 - e^{-λt}) for every grid rate λ at interval
	// lengths t spaced 1% apart in log from censoredMin days
	// (censoredBuckets of them, EstimateGrid values each): an interval's
	// length is rounded to its bucket, which moves the likelihood by far
	// less than the rates' own uncertainty and spares a logarithm and an
	// exponential per rate and interval.
	changed []float64
}

// The censored-likelihood table: lengths from one minute to about 1,100
// days, 1% apart.
const (
	censoredMin     = 1.0 / 1440
	censoredStep    = 0.00995033085 // ln(1.01)
	censoredBuckets = 1415
)

func newEstimateGrid(planDays float64) *estimateGrid {
	g := &estimateGrid{planDays: planDays}
	lo, hi := math.Log(estimateGridMin), math.Log(estimateGridMax)
	for k := range g.rate {
		g.logRate[k] = lo + (hi-lo)*float64(k)/(EstimateGrid-1)
		g.rate[k] = math.Exp(g.logRate[k])
		g.fresh[k] = poisson.Freshness(g.rate[k], planDays)
	}
	g.changed = censoredTable()
	return g
}

// censoredTable computes the censored-likelihood table once per process
// (it depends only on the grid's rates); it is never written after.
var censoredTable = sync.OnceValue(func() []float64 {
	lo, hi := math.Log(estimateGridMin), math.Log(estimateGridMax)
	tab := make([]float64, censoredBuckets*EstimateGrid)
	for b := range censoredBuckets {
		t := censoredMin * math.Exp(float64(b)*censoredStep)
		for k := range EstimateGrid {
			lam := math.Exp(lo + (hi-lo)*float64(k)/(EstimateGrid-1))
			tab[b*EstimateGrid+k] = math.Log(-math.Expm1(-lam * t))
		}
	}
	return tab
})

// changedRow returns the log-likelihoods of a change within an interval
// of length days, per grid rate.
func (g *estimateGrid) changedRow(days float64) []float64 {
	b := 0
	if days > censoredMin {
		b = min(int(math.Round(math.Log(days/censoredMin)/censoredStep)), censoredBuckets-1)
	}
	return g.changed[b*EstimateGrid : (b+1)*EstimateGrid]
}

// likelihood writes the likelihood of d's observed intervals on the grid
// into row (scaled to a maximum of 1) and returns the number of
// intervals. An interval runs between consecutive observations; its
// likelihood is the censored Poisson likelihood of Cho and
// Garcia-Molina's "Estimating frequency of change" (1 - e^{-λt} if it
// saw a change, e^{-λt} if not), or, when the later fetch's Last-Modified
// date falls inside the interval, their last-modified likelihood
// λe^{-λa}, a the age of the change at the fetch.
func (g *estimateGrid) likelihood(d *Datum, row []float64) int {
	h := d.History
	clear(row)
	n := 0
	for k := 1; k < len(h); k++ {
		o, prev := h[k], h[k-1].Time
		length := o.Time.Sub(prev).Hours() / 24
		if !(length > 0) {
			continue
		}
		n++
		dated, age := false, 0.0
		if lm, ok := o.LastModified(); ok && o.Changed && lm.After(prev) && !lm.After(o.Time) {
			dated, age = true, o.Time.Sub(lm).Hours()/24
		}
		switch {
		case dated:
			for i, lam := range g.rate {
				row[i] += g.logRate[i] - lam*age
			}
		case o.Changed:
			for i, v := range g.changedRow(length) {
				row[i] += v
			}
		default:
			for i, lam := range g.rate {
				row[i] -= lam * length
			}
		}
	}
	mx := slices.Max(row)
	for i := range row {
		row[i] = math.Exp(row[i] - mx)
	}
	return n
}

// score is d's feature score, log(1+words) + log(1+outlinks).
func estimateScore(d *Datum) float64 {
	return math.Log1p(float64(d.Features.Words)) + math.Log1p(float64(d.Features.Outlinks))
}

// group returns d's prior group: its kind (a fetched "other" page without
// words is a document) times estimateBins, plus its score bin by cuts (0
// for a page never fetched).
func estimateGroupOf(d *Datum, cuts []float64) int {
	kind := PageKindOf(d.URL)
	k := int(kind)
	fetched := d.FetchCount > 0
	if kind == KindOther && fetched && d.Features.Words == 0 {
		k = NumKinds
	}
	bin := 0
	if fetched {
		s := estimateScore(d)
		for bin < len(cuts) && s >= cuts[bin] {
			bin++
		}
		bin = min(bin, estimateBins-1)
	}
	return k*estimateBins + bin
}

// Group returns d's prior group in the model (an index into Priors).
func (m *EstimateModel) Group(d *Datum) int { return estimateGroupOf(d, m.Cuts) }

// EstimateGridRates returns the grid's rates, per day, in Priors' order.
func EstimateGridRates() []float64 {
	g := newEstimateGrid(1)
	return g.rate[:]
}

// EstimateSample is a uniform sample of a CrawlDB's pages, the input of
// the estimating model's fit: the pages whose URLs hash lowest (a
// bottom-k sample), so that the samples of a CrawlDB's parts, read in
// parallel, merge into the sample of the whole, whatever the order. It
// also counts the pages and those with an observed interval. The zero
// value is not usable: see NewEstimateSample.
type EstimateSample struct {
	size     int
	kept     sampleHeap // the kept pages, largest key on top
	total    int64
	observed int64
}

// sampled is a kept page and its sampling key.
type sampled struct {
	key uint64
	d   Datum
}

// sampleHeap is a max-heap of sampled pages by key (container/heap).
type sampleHeap []sampled

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return h[i].key > h[j].key }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(sampled)) }
func (h *sampleHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// NewEstimateSample returns an empty sample of at most size pages.
func NewEstimateSample(size int) *EstimateSample {
	return &EstimateSample{size: max(size, 1)}
}

// Add offers d to the sample (it copies what the fit reads: the URL,
// status, fetch count, features and history).
func (s *EstimateSample) Add(d *Datum) {
	s.total++
	if len(d.History) > 1 {
		s.observed++
	}
	if key := urlKey(d.URL); s.wants(key) {
		s.keep(sampled{key: key, d: sampleCopy(d)})
	}
}

// wants reports whether a page of the given key would be kept.
func (s *EstimateSample) wants(key uint64) bool {
	return len(s.kept) < s.size || key < s.kept[0].key
}

// keep adds p, dropping the largest key if the sample is full; the
// caller checked wants.
func (s *EstimateSample) keep(p sampled) {
	if len(s.kept) < s.size {
		heap.Push(&s.kept, p)
		return
	}
	s.kept[0] = p
	heap.Fix(&s.kept, 0)
}

// Merge adds the pages and counts of o, a sample of other pages (whose
// pages it takes over: o must not be used after).
func (s *EstimateSample) Merge(o *EstimateSample) {
	s.total += o.total
	s.observed += o.observed
	for _, p := range o.kept {
		if s.wants(p.key) {
			s.keep(p)
		}
	}
}

// Pages returns the number of pages offered.
func (s *EstimateSample) Pages() int64 { return s.total }

// sorted returns the sampled pages in key order (a deterministic order).
func (s *EstimateSample) sorted() []Datum {
	kept := slices.Clone(s.kept)
	slices.SortFunc(kept, func(a, b sampled) int { return cmp.Compare(a.key, b.key) })
	out := make([]Datum, len(kept))
	for i, p := range kept {
		out[i] = p.d
	}
	return out
}

// urlKey is a URL's sampling key: 64 bits of FNV-1a, mixed.
func urlKey(u string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(u); i++ {
		h ^= uint64(u[i])
		h *= 1099511628211
	}
	// splitmix64's finalizer spreads FNV's low-entropy high bits.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// FitEstimateModel fits the estimating schedule's model to pages (one
// pass; a datum need not outlive its yield) through a sample of at most
// cfg.SampleSize of them (EstimateSample.Fit).
func FitEstimateModel(ctx context.Context, pages iter.Seq[*Datum], cfg EstimateConfig, maxInterval time.Duration, budget float64) (*EstimateModel, error) {
	size := cfg.withDefaults().SampleSize
	s := NewEstimateSample(size)
	n := 0
	for d := range pages {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.Add(d)
	}
	return s.Fit(ctx, cfg, maxInterval, budget)
}

// Fit fits the estimating schedule's model to the sample. The fetched
// pages of the sample give the feature-score cut points (quartiles) and,
// those with a history, each group's prior by EM (the maximum-likelihood
// mixing distribution on the grid: the rates are a mixture of classes a
// decade apart that no gamma fits). Then the budget, scaled to the
// sample's share of the pages, is allocated over the sample (Allocate): a
// uniform sample's multiplier is the whole CrawlDB's, up to sampling
// error. A budget of 0 means cfg's (FetchesPerDay, else BudgetShare of
// the pages).
func (s *EstimateSample) Fit(ctx context.Context, cfg EstimateConfig, maxInterval time.Duration, budget float64) (*EstimateModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if maxInterval <= 0 {
		return nil, fmt.Errorf("estimate: max interval %v: want a positive duration", maxInterval)
	}
	grid := newEstimateGrid(cfg.PlanDays)
	m := &EstimateModel{MinFreq: 24 * float64(time.Hour) / float64(maxInterval), MaxFreq: 1, Pages: s.total}
	sample, observed := s.sorted(), s.observed
	var scores []float64
	for i := range sample {
		if sample[i].FetchCount > 0 {
			scores = append(scores, estimateScore(&sample[i]))
		}
	}
	slices.Sort(scores)
	if len(scores) > 0 {
		for b := 1; b < estimateBins; b++ {
			// The smallest score whose rank puts it in bin b (rank·bins/n >= b).
			m.Cuts = append(m.Cuts, scores[(b*len(scores)+estimateBins-1)/estimateBins])
		}
	}
	lik := make([]float64, len(sample)*EstimateGrid)
	group := make([]int, len(sample))
	has := make([]bool, len(sample))
	for i := range sample {
		if sample[i].FetchCount == 0 {
			continue
		}
		has[i] = grid.likelihood(&sample[i], lik[i*EstimateGrid:(i+1)*EstimateGrid]) > 0
		group[i] = estimateGroupOf(&sample[i], m.Cuts)
	}
	m.Priors = fitPriors(lik, has, group)
	if budget <= 0 {
		budget = cfg.FetchesPerDay
	}
	if budget <= 0 {
		budget = math.Max(1, math.Ceil(cfg.BudgetShare*float64(m.Pages)))
	}
	if need := m.MinFreq * float64(m.Pages); budget < need {
		return nil, fmt.Errorf("estimate: a budget of %v fetches a day is below the %v that fetching every URL once per %.0f days needs", budget, need, 1/m.MinFreq)
	}
	pagesSeen := m.Pages
	if len(sample) > 0 {
		if err := m.Allocate(ctx, sample, cfg, budget*float64(len(sample))/float64(m.Pages)); err != nil {
			return nil, err
		}
	}
	m.Budget, m.Pages, m.Observed = budget, pagesSeen, observed
	return m, nil
}

// sampleCopy copies what the fit reads of d: its URL, status, fetch count,
// features and history (cloned: a reader may reuse its buffers).
func sampleCopy(d *Datum) Datum {
	return Datum{URL: d.URL, Status: d.Status, FetchCount: d.FetchCount, Features: d.Features, History: slices.Clone(d.History)}
}

// Allocate sets the model's multipliers, budget and page counts for its
// priors and pages: every page's planned rate at PlanDays (see plan) and
// poisson.Allocate of budget fetches a day over them within [MinFreq,
// MaxFreq] (PlanMu); then every page re-planned at the interval that
// allocation gives it (refine), and the budget allocated again over those
// rates (Mu).
func (m *EstimateModel) Allocate(ctx context.Context, pages []Datum, cfg EstimateConfig, budget float64) error {
	cfg = cfg.withDefaults()
	grid := newEstimateGrid(cfg.PlanDays)
	rates := make([]float64, len(pages))
	post := make([]float64, EstimateGrid)
	m.Pages, m.Observed, m.Budget = int64(len(pages)), 0, budget
	for i := range pages {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, n := m.plan(grid, &pages[i], post)
		rates[i] = r
		if n > 0 {
			m.Observed++
		}
	}
	if len(rates) == 0 {
		return nil
	}
	ac := poisson.AllocConfig{Budget: budget, MinFreq: m.MinFreq, MaxFreq: m.MaxFreq}
	if need := m.MinFreq * float64(len(rates)); budget < need {
		return fmt.Errorf("estimate: a budget of %v fetches a day is below the %v that fetching every URL once per %.0f days needs", budget, need, 1/m.MinFreq)
	}
	a, err := poisson.Allocate(ctx, rates, nil, ac)
	if err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	m.Mu, m.PlanMu = a.Multiplier, 0
	if !(a.Multiplier > 0) {
		return nil
	}
	// Refine: every page re-planned at the interval the first allocation
	// gives it, and the budget allocated again.
	for i, r := range rates {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if r > 0 {
			m.plan(grid, &pages[i], post)
			rates[i] = m.refine(grid, post, a.Multiplier, r)
		}
	}
	a2, err := poisson.Allocate(ctx, rates, nil, ac)
	if err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	m.Mu, m.PlanMu = a2.Multiplier, a.Multiplier
	return nil
}

// fitPriors fits each group's prior on the grid by EM over the
// likelihoods (EstimateGrid values a page) of the pages with a history
// (has).
func fitPriors(lik []float64, has []bool, group []int) [][]float64 {
	const G = EstimateGrid
	priors := make([][]float64, estimateGroups)
	acc := make([][]float64, estimateGroups)
	for k := range priors {
		priors[k] = make([]float64, G)
		for g := range priors[k] {
			priors[k][g] = 1.0 / G
		}
		acc[k] = make([]float64, G)
	}
	cnt := make([]float64, estimateGroups)
	post := make([]float64, G)
	for range estimateEM {
		for k := range acc {
			clear(acc[k])
		}
		clear(cnt)
		for i, ok := range has {
			if !ok {
				continue
			}
			k, row := group[i], lik[i*G:(i+1)*G]
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

// plan returns d's planned rate per day and its number of observed
// intervals: the rate whose freshness at PlanDays is the expected
// freshness under d's posterior (its group's prior times the likelihood
// of its history). A posterior mean would be dominated by the prior's
// fast tail and abandon pages that may well be slow. row is scratch of
// EstimateGrid values.
func (m *EstimateModel) plan(grid *estimateGrid, d *Datum, row []float64) (float64, int) {
	n := grid.likelihood(d, row)
	prior := m.Priors[estimateGroupOf(d, m.Cuts)]
	s, ef := 0.0, 0.0
	for g := range row {
		p := prior[g]
		if n > 0 {
			p *= row[g]
		}
		row[g] = p
		s += p
		ef += p * grid.fresh[g]
	}
	if !(s > 0) {
		return 0, n
	}
	for g := range row {
		row[g] /= s
	}
	return freshnessRate(ef/s, grid.planDays), n
}

// refine re-plans a page whose posterior is post (as plan leaves it) at
// the interval its first plan, rate, gets under the multiplier mu: the
// rate whose freshness at that interval is the posterior's expected
// freshness there.
func (m *EstimateModel) refine(grid *estimateGrid, post []float64, mu, rate float64) float64 {
	f := poisson.OptimalFrequency(mu, rate, 1, poisson.AllocConfig{Budget: 1, MinFreq: m.MinFreq, MaxFreq: m.MaxFreq})
	iv := min(max(1/f, 1/m.MaxFreq), 1/m.MinFreq)
	ef := 0.0
	for g, p := range post {
		ef += p * poisson.Freshness(grid.rate[g], iv)
	}
	return freshnessRate(ef, iv)
}

// freshnessRate returns the rate λ whose freshness at interval iv
// (poisson.Freshness) is f: x = λ·iv solves (1 - e^{-x})/x = f, by
// Newton's method on ln x from x = 2(1/f - 1) (exact for small x, within
// a factor 2 for large), clamped to λ in [1e-6, 100] a day.
func freshnessRate(f, iv float64) float64 {
	const lo, hi = 1e-6, 100.0
	switch {
	case !(iv > 0):
		return lo
	case f >= 1:
		return lo
	case !(f > 0):
		return hi
	}
	u, lf := math.Log(2*(1/f-1)), math.Log(f)
	for range 30 {
		x := math.Exp(u)
		em := -math.Expm1(-x) // 1 - e^{-x}
		// h(u) = ln F(x) - ln f; dh/du = x F'(x)/F(x) = x e^{-x}/(1-e^{-x}) - 1.
		h := math.Log(em/x) - lf
		d := x*(1-em)/em - 1
		if d == 0 {
			break
		}
		step := h / d
		u -= max(-2, min(2, step))
		if math.Abs(step) < 1e-12 {
			break
		}
	}
	return min(max(math.Exp(u)/iv, lo), hi)
}

// EstimateSchedule is the estimating schedule (schedule.name estimate):
// every page's change rate is estimated from its own fetch history
// (censoring handled, Last-Modified dates used), shrunk toward the prior
// of its group of similar pages (empirical Bayes, EstimateModel), and its
// interval is the freshness-optimal one for that rate at the model's
// multiplier: the fetch budget goes where it buys the most freshness.
// The rate planned with is the one whose freshness at PlanDays equals the
// posterior's expected freshness there, then re-planned the same way at
// the interval that rate gets (at PlanMu) before the final interval (at
// Mu): the freshness-equivalent rate depends on the interval it is
// judged at, and a page's own interval is the one that matters.
// Pages with fewer than ExploreFetches observed intervals are fetched at
// least every ExploreInterval. The interval is recomputed whenever the
// page is considered (ShouldFetch, SetFetchSchedule) from the model in
// use, so a refitted model re-plans every page at the next generate.
type EstimateSchedule struct {
	baseSchedule
	cfg   EstimateConfig
	model *EstimateModel
	grid  *estimateGrid
}

// NewEstimateSchedule returns the estimating schedule planning with
// model; a nil model plans every page with a uniform prior on the grid
// and no allocation (each page at its planned rate's one-day interval
// bound: pages are fetched as often as a day's rounds allow).
func NewEstimateSchedule(cfg ScheduleConfig, model *EstimateModel) (*EstimateSchedule, error) {
	b, err := newBase(cfg, SourceEstimate)
	if err != nil {
		return nil, err
	}
	ec := cfg.Estimate
	if err := ec.Validate(); err != nil {
		return nil, err
	}
	ec = ec.withDefaults()
	if model == nil {
		u := make([]float64, EstimateGrid)
		for i := range u {
			u[i] = 1.0 / EstimateGrid
		}
		model = &EstimateModel{MinFreq: 24 * float64(time.Hour) / float64(cfg.MaxInterval), MaxFreq: 1}
		for range estimateGroups {
			model.Priors = append(model.Priors, u)
		}
	}
	if len(model.Priors) != estimateGroups {
		return nil, fmt.Errorf("estimate: model has %d priors, want %d", len(model.Priors), estimateGroups)
	}
	for i, p := range model.Priors {
		if len(p) != EstimateGrid {
			return nil, fmt.Errorf("estimate: model prior %d has %d values, want %d", i, len(p), EstimateGrid)
		}
	}
	return &EstimateSchedule{baseSchedule: b, cfg: ec, model: model, grid: newEstimateGrid(ec.PlanDays)}, nil
}

// Name returns "estimate".
func (s *EstimateSchedule) Name() string { return "estimate" }

// Model returns the model the schedule plans with.
func (s *EstimateSchedule) Model() *EstimateModel { return s.model }

// Interval returns d's planned interval.
func (s *EstimateSchedule) Interval(d *Datum) time.Duration {
	var row [EstimateGrid]float64
	rate, n := s.model.plan(s.grid, d, row[:])
	if s.model.PlanMu > 0 && rate > 0 {
		rate = s.model.refine(s.grid, row[:], s.model.PlanMu, rate)
	}
	f := poisson.OptimalFrequency(s.model.Mu, rate, 1, poisson.AllocConfig{Budget: 1, MinFreq: s.model.MinFreq, MaxFreq: s.model.MaxFreq})
	days := 1 / f
	if s.model.Mu <= 0 {
		days = 1 / s.model.MaxFreq
	}
	if n < s.cfg.ExploreFetches {
		days = min(days, s.cfg.ExploreInterval.Hours()/24)
	}
	sec := min(math.Round(days*86400), float64(s.maxInterval))
	return time.Duration(sec) * time.Second
}

// ShouldFetch re-plans a fetched page (its FetchInterval and FetchTime,
// one interval after its last fetch less Slack) and reports whether it is
// due within Fill of now; a page never fetched is due at its FetchTime.
func (s *EstimateSchedule) ShouldFetch(d *Datum, now time.Time) bool {
	if d.FetchCount > 0 && !d.PrevFetchTime.IsZero() && d.Source != SourceInjected {
		iv := s.Interval(d)
		d.FetchInterval = int32(iv / time.Second)
		d.FetchTime = d.PrevFetchTime.Add(iv - s.cfg.Slack)
	}
	// The base rule first (a FetchTime too far ahead is reset to now),
	// then the fill window.
	return s.baseSchedule.ShouldFetch(d, now) || !d.FetchTime.After(now.Add(s.cfg.Fill))
}

// GenerateSortValue ranks the pages never fetched (db_unfetched) first, by how slowly
// their URL's kind of page is expected to change (documents, other pages,
// directories, home pages: a page fetched while it changes slowly stays
// fresh longer), then the fetched pages, most overdue first (the value is
// the days overdue, negative for pages not yet due).
func (s *EstimateSchedule) GenerateSortValue(d *Datum, now time.Time) (float32, bool) {
	if d.Status == StatusDBUnfetched {
		base := float32(1e6)
		switch PageKindOf(d.URL) {
		case KindHome:
			return base + 1, true
		case KindDirectory:
			return base + 2, true
		}
		if strings.HasSuffix(d.URL, ".pdf") {
			return base + 4, true
		}
		return base + 3, true
	}
	return float32(now.Sub(d.FetchTime).Hours() / 24), true
}

// SetFetchSchedule sets the interval planned for the fetched page and its
// next fetch one interval after fetchTime less Slack. The history does
// not yet hold this fetch (updatedb observes it afterwards); the next
// generate re-plans with it.
func (s *EstimateSchedule) SetFetchSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state ChangeState) {
	d.Retries = 0
	if state == StateModified || modifiedTime.IsZero() {
		modifiedTime = fetchTime
	}
	d.ModifiedTime = modifiedTime.UTC().Truncate(time.Millisecond)
	if d.Source == SourceInjected {
		d.FetchTime = fetchTime.Add(time.Duration(d.FetchInterval) * time.Second)
		return
	}
	iv := s.Interval(d)
	d.FetchInterval = int32(iv / time.Second)
	d.FetchTime = fetchTime.Add(iv - s.cfg.Slack)
	d.Source = SourceEstimate
}
