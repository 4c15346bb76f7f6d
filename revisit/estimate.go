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
// (crawldb.FitEstimateModel, as generate and updatedb do before they
// run), with the daily budget as schedule.estimate.fetchesPerDay and the
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
	pages := func() iter.Seq[*crawldb.Datum] {
		return func(yield func(*crawldb.Datum) bool) {
			for i := range datums {
				if !yield(&datums[i]) {
					return
				}
			}
		}
	}
	m, err := crawldb.FitEstimateModel(ctx, pages, p.sc.Estimate, p.sc.MaxInterval, float64(p.c.Budget))
	if err != nil {
		return nil, err
	}
	return crawldb.NewEstimateSchedule(p.sc, m)
}
