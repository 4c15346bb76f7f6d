package revisit

import (
	"context"
	"iter"
	"math"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// SourceEstimate is the schedule source of the estimating policy's
// intervals (crawldb.SourceEstimate).
const SourceEstimate = crawldb.SourceEstimate

// estimatePolicy is trawl's estimating schedule, crawldb.EstimateSchedule,
// run as a crawl with `schedule.name estimate` runs it: before every
// round the model is refitted to the datums as the CrawlDB has them
// (crawldb.FitEstimateModel, as a crawl's updatedb does for the version it
// installs), with the daily budget as schedule.estimate.fetchesPerDay and the
// fetch lag as its slack, and the round's generate and updatedb use the
// schedule over that model. See crawldb.EstimateSchedule for the
// estimator (every page's rate from its own censored history and
// Last-Modified dates, shrunk toward its group's prior fitted by EM) and
// the allocation (the freshness-optimal intervals at the budget's
// multiplier).
type estimatePolicy struct {
	c    Config
	sc   crawldb.ScheduleConfig
	init int32 // seconds
	// truth, for PolicyEstimatePrior, replaces the fitted group priors by
	// the distribution of the group's true rates.
	truth *Truth
}

func newEstimatePolicy(tr *Truth, c Config) (*estimatePolicy, error) {
	sc := *c.Schedule
	sc.Estimate.FetchesPerDay = float64(c.Budget)
	sc.Estimate.Slack = max(c.FetchLag, time.Nanosecond)
	if _, err := crawldb.NewEstimateSchedule(sc, nil); err != nil {
		return nil, err
	}
	days := math.Max(1, float64(len(tr.Pages))/float64(c.Budget))
	init := min(days*daySeconds, c.Schedule.MaxInterval.Seconds())
	return &estimatePolicy{c: c, sc: sc, init: int32(init)}, nil
}

func (p *estimatePolicy) initDatum(_ int, d *crawldb.Datum, now time.Time) {
	d.FetchTime = now
	d.FetchInterval = p.init
	d.Source = SourceEstimate
}

func (p *estimatePolicy) schedule(ctx context.Context, _ int, _ time.Time, datums []crawldb.Datum) (crawldb.Schedule, error) {
	m, err := crawldb.FitEstimateModel(ctx, datumSeq(datums), p.sc.Estimate, p.sc.MaxInterval, float64(p.c.Budget))
	if err != nil {
		return nil, err
	}
	if p.truth != nil {
		if m, err = p.truePriors(ctx, m, datums); err != nil {
			return nil, err
		}
	}
	return crawldb.NewEstimateSchedule(p.sc, m)
}

// truePriors returns m with each group's prior the distribution of its
// pages' true rates on the grid (a rate of 0, or below the grid, counts
// at its lowest rate; each rate at its nearest grid rate in log), and the
// multiplier recomputed for the new priors: the best prior the estimating
// schedule could fit, which bounds what a better prior fit can gain.
func (p *estimatePolicy) truePriors(ctx context.Context, m *crawldb.EstimateModel, datums []crawldb.Datum) (*crawldb.EstimateModel, error) {
	grid := crawldb.EstimateGridRates()
	out := *m
	out.Priors = make([][]float64, len(m.Priors))
	for g := range out.Priors {
		out.Priors[g] = make([]float64, len(grid))
	}
	lo, step := math.Log(grid[0]), math.Log(grid[1]/grid[0])
	for i := range datums {
		k := 0
		if r := p.truth.Pages[i].Rate; r > grid[0] {
			k = min(len(grid)-1, int(math.Round((math.Log(r)-lo)/step)))
		}
		out.Priors[m.Group(&datums[i])][k]++
	}
	for _, pr := range out.Priors {
		s := 0.0
		for k := range pr {
			pr[k] += 1e-3
			s += pr[k]
		}
		for k := range pr {
			pr[k] /= s
		}
	}
	// The multiplier for these priors: schedule every page once more
	// through a model fitted with them.
	if err := out.Allocate(ctx, datums, p.sc.Estimate, float64(p.c.Budget)); err != nil {
		return nil, err
	}
	return &out, nil
}

// datumSeq returns the sequence of datums' addresses, as
// crawldb.FitEstimateModel reads a CrawlDB.
func datumSeq(datums []crawldb.Datum) iter.Seq[*crawldb.Datum] {
	return func(yield func(*crawldb.Datum) bool) {
		for i := range datums {
			if !yield(&datums[i]) {
				return
			}
		}
	}
}
