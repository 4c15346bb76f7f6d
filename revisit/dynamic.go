package revisit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/poisson"
)

// dynamicPolicy is Hu and Wu's dynamic selection strategy driven through
// crawldb.DynamicSchedule, as `trawl cluster` and updatedb run it: every
// Recluster days (from day Recluster on) the young pages (dbscan.YoungPage:
// fetched, ChangeCount <= MaxChanges) are clustered with dbscan.Cluster
// over their standardized features (dbscan.FeatureVector, a Scaler fitted
// on them), each cluster's samples are the members nearest its centre
// (dbscan.Centres), and the assignment is applied to the datums (cluster
// id and sample flag; young pages outside every cluster get -1, other
// pages keep their id and stop being samples). Before every round the
// cluster periods are recomputed from the samples' histories
// (crawldb.ComputeClusterPeriods), as updatedb's pre-pass does, and the
// round runs crawldb.NewDynamicSchedule with them.
//
// With opt, the schedule's OptimalMu is the multiplier of
// poisson.Allocate over every page's current rate estimate (per day; see
// estimateRate) under the daily budget, recomputed at every clustering.
type dynamicPolicy struct {
	tr     *Truth
	c      Config
	opt    bool
	all    bool // the allocation for young pages too (PolicyDynamicAlloc)
	cfg    crawldb.ScheduleConfig
	init   crawldb.Schedule
	mu     float64
	params dbscan.Params
}

func newDynamicPolicy(tr *Truth, c Config, opt, all bool) (*dynamicPolicy, error) {
	cfg := *c.Schedule
	s, err := crawldb.NewDynamicSchedule(cfg, nil)
	if err != nil {
		return nil, err
	}
	cfg.Dynamic = s.Config()
	return &dynamicPolicy{tr: tr, c: c, opt: opt, all: all, cfg: cfg, init: s,
		params: dbscan.Params{Eps: c.Eps, MinPts: c.MinPts}}, nil
}

func (p *dynamicPolicy) initDatum(_ int, d *crawldb.Datum, now time.Time) {
	p.init.InitializeSchedule(d, now)
}

func (p *dynamicPolicy) schedule(ctx context.Context, day int, now time.Time, datums []crawldb.Datum) (crawldb.Schedule, error) {
	if day > 0 && day%p.c.Recluster == 0 {
		if err := p.cluster(ctx, datums); err != nil {
			return nil, err
		}
	}
	periods := crawldb.ComputeClusterPeriods(func(yield func(*crawldb.Datum) bool) {
		for i := range datums {
			if datums[i].ClusterSample && !yield(&datums[i]) {
				return
			}
		}
	})
	if day > 0 && day%p.c.Recluster == 0 {
		p.logPeriodError(day, datums, periods)
	}
	if p.opt && day > 0 && day%p.c.Recluster == 0 {
		mu, err := p.multiplier(ctx, datums, periods)
		if err != nil {
			return nil, err
		}
		p.mu = mu
	}
	cfg := p.cfg
	cfg.Dynamic.OptimalMu = p.mu
	s, err := crawldb.NewDynamicSchedule(cfg, periods)
	if err != nil || !p.all || p.mu <= 0 {
		return s, err
	}
	return &allocSchedule{DynamicSchedule: s, mu: p.mu, periods: periods, cfg: cfg.Dynamic}, nil
}

// allocSchedule is the experiment PolicyDynamicAlloc: DynamicSchedule,
// then every page it did not schedule by its own Poisson estimate gets
// the freshness-optimal interval (multiplier mu, per day, the kind's
// bounds) of its estimated rate: its cluster's period for a member of a
// cluster with one, else the Poisson estimate of its history with this
// fetch; a page with no estimate keeps DynamicSchedule's interval. It
// shows what the allocation gains when it covers the young pages, which
// DynamicConfig.OptimalMu does not.
type allocSchedule struct {
	*crawldb.DynamicSchedule
	mu      float64
	periods crawldb.ClusterPeriods
	cfg     crawldb.DynamicConfig
}

// SetFetchSchedule applies DynamicSchedule's rules, then the allocation.
func (s *allocSchedule) SetFetchSchedule(d *crawldb.Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state crawldb.ChangeState) {
	s.DynamicSchedule.SetFetchSchedule(d, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime, state)
	if d.FixedInterval || d.Source == crawldb.SourcePoisson {
		return
	}
	rate := 0.0
	if per, ok := s.periods[d.ClusterID]; ok && d.ClusterID >= 0 && !d.ClusterSample {
		rate = daySeconds / per.Seconds()
	} else {
		h := slices.Clone(d.ChangeHistory())
		if state != crawldb.StateUnknown {
			h = append(h, crawldb.Observation{Time: fetchTime, Changed: state == crawldb.StateModified})
		}
		est := poisson.FromHistory(h, func(o crawldb.Observation) (time.Time, bool) { return o.Time, o.Changed }, poisson.DefaultConfig())
		if !est.OK() {
			return
		}
		rate = est.ScheduleRate() * daySeconds
	}
	k := s.cfg.Kinds[crawldb.PageKindOf(d.URL)]
	minDays, maxDays := k.Min.Hours()/24, k.Max.Hours()/24
	f := poisson.OptimalFrequency(s.mu, rate, 1, poisson.AllocConfig{MinFreq: 1 / maxDays, MaxFreq: 1 / minDays})
	iv := k.Max
	if f > 0 && 1/f < maxDays {
		iv = min(max(time.Duration(float64(24*time.Hour)/f), k.Min), k.Max)
	}
	d.FetchInterval = int32(iv / time.Second)
	d.FetchTime = fetchTime.Add(iv).Truncate(time.Millisecond)
}

// cluster runs DBSCAN over the young pages and applies the assignment.
func (p *dynamicPolicy) cluster(ctx context.Context, datums []crawldb.Datum) error {
	maxChanges := p.cfg.Dynamic.MaxChanges
	t0 := time.Now()
	var young []int
	for i := range datums {
		if dbscan.YoungPage(datums[i], maxChanges) {
			young = append(young, i)
		} else {
			datums[i].ClusterSample = false // as updatedb: not in the result
		}
	}
	if len(young) == 0 {
		return nil
	}
	pts := dbscan.NewPoints(dbscan.NumFeatures, 0)
	for _, i := range young {
		x := dbscan.FeatureVector(datums[i].Features)
		if err := pts.Append(x[:]); err != nil {
			return err
		}
	}
	if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
		return err
	}
	params := p.params
	if params.Eps < 0 {
		eps, err := dbscan.SuggestEps(pts, params.MinPts)
		if err != nil {
			return fmt.Errorf("suggest eps: %w", err)
		}
		if !(eps > 0) {
			eps = 1e-9 // all points equal: one cluster
		}
		params.Eps = eps
	}
	res, err := dbscan.Cluster(ctx, pts, params)
	if err != nil {
		return fmt.Errorf("dbscan: %w", err)
	}
	_, samples, err := dbscan.Centres(pts, res, p.c.MinSamples, p.c.SampleRate)
	if err != nil {
		return err
	}
	isSample := make([]bool, len(young))
	for _, ss := range samples {
		for _, k := range ss {
			isSample[k] = true
		}
	}
	nsamples := 0
	for k, i := range young {
		datums[i].ClusterID = res.Labels[k]
		datums[i].ClusterSample = res.Labels[k] >= 0 && isSample[k]
		if datums[i].ClusterSample {
			nsamples++
		}
	}
	p.c.Log.Info("revisit: clustered the young pages", "points", len(young), "eps", params.Eps, "min_pts", params.MinPts,
		"clusters", res.Clusters, "samples", nsamples, "seconds", time.Since(t0).Seconds())
	return nil
}

// multiplier is the allocation multiplier (per day) of the pages' current
// rate estimates under the budget.
func (p *dynamicPolicy) multiplier(ctx context.Context, datums []crawldb.Datum, periods crawldb.ClusterPeriods) (float64, error) {
	rates := make([]float64, len(datums))
	for i := range datums {
		rates[i] = estimateRate(&datums[i], periods, p.cfg.Dynamic.MaxChanges)
	}
	a, err := OracleAllocation(ctx, rates, float64(p.c.Budget), p.cfg.MaxInterval)
	if err != nil {
		return 0, err
	}
	return a.Multiplier, nil
}

// estimateRate is what the dynamic schedule believes of a page's change
// rate, per day: its own Poisson estimate when it has more than maxChanges
// changes, its cluster's period when it is a member of a cluster with one,
// otherwise its history's estimate (crawldb.ObservedChangePeriod) or, with
// no usable history, one change per current interval.
func estimateRate(d *crawldb.Datum, periods crawldb.ClusterPeriods, maxChanges int) float64 {
	if int(d.ChangeCount) <= maxChanges && d.ClusterID >= 0 && !d.ClusterSample {
		if per, ok := periods[d.ClusterID]; ok {
			return daySeconds / per.Seconds()
		}
	}
	if per, ok := crawldb.ObservedChangePeriod(d); ok {
		return daySeconds / per.Seconds()
	}
	if d.FetchInterval > 0 {
		return daySeconds / float64(d.FetchInterval)
	}
	return 0
}

// logPeriodError logs how far the cluster periods are from the members'
// true mean change periods: the mean of |log10(period · λ)| over the
// members of clusters with a period whose true rate is positive (0: exact,
// 1: off by a factor of 10), and the same for the periods' spread between
// clusters. For the report's diagnosis only; the policy never reads the
// truth.
func (p *dynamicPolicy) logPeriodError(day int, datums []crawldb.Datum, periods crawldb.ClusterPeriods) {
	var sum float64
	var n int
	for i := range datums {
		d := &datums[i]
		if d.ClusterID < 0 || d.ClusterSample || int(d.ChangeCount) > p.cfg.Dynamic.MaxChanges {
			continue
		}
		per, ok := periods[d.ClusterID]
		rate := p.tr.Pages[i].Rate
		if !ok || rate <= 0 {
			continue
		}
		sum += math.Abs(math.Log10(per.Hours() / 24 * rate))
		n++
	}
	var ps []float64
	for _, per := range periods {
		ps = append(ps, per.Hours()/24)
	}
	slices.Sort(ps)
	p.c.Log.Info("revisit: cluster periods", "day", day, "clusters_with_period", len(periods), "members", n,
		"mean_abs_log10_error", sum/float64(max(n, 1)), "periods_days", quantiles(ps))
}

// quantiles returns the minimum, quartiles and maximum of sorted values.
func quantiles(s []float64) []float64 {
	if len(s) == 0 {
		return nil
	}
	q := make([]float64, 5)
	for k := range q {
		q[k] = math.Round(s[(len(s)-1)*k/4]*100) / 100
	}
	return q
}
