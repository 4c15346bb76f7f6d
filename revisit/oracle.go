package revisit

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/poisson"
)

// SourceOracle is the schedule source of the oracle's intervals.
const SourceOracle crawldb.Source = "oracle"

// oraclePolicy knows every page's true rate and fetches it on the
// freshness-optimal schedule for the budget: poisson.Allocate over the true
// rates (per day) with Budget the daily budget, MinFreq 1/MaxInterval
// (db.fetch.interval.max: every page is fetched at least that often) and
// MaxFreq one fetch a day (one round a day).
type oraclePolicy struct {
	sched     *oracleSchedule
	intervals []int32 // seconds
}

func newOraclePolicy(ctx context.Context, tr *Truth, c Config) (*oraclePolicy, error) {
	rates := make([]float64, len(tr.Pages))
	for i, p := range tr.Pages {
		rates[i] = p.Rate
	}
	a, err := OracleAllocation(ctx, rates, float64(c.Budget), c.Schedule.MaxInterval)
	if err != nil {
		return nil, err
	}
	s, err := crawldb.NewDefaultSchedule(*c.Schedule)
	if err != nil {
		return nil, err
	}
	p := &oraclePolicy{sched: &oracleSchedule{DefaultSchedule: s}, intervals: make([]int32, len(rates))}
	for i, iv := range a.Intervals {
		p.intervals[i] = int32(min(math.Round(iv*daySeconds), float64(c.Schedule.MaxInterval/time.Second)))
	}
	return p, nil
}

// OracleAllocation is the oracle's allocation: poisson.Allocate over rates
// (changes per day) with the budget (fetches per day), MinFreq one fetch
// per maxInterval and MaxFreq one fetch a day.
func OracleAllocation(ctx context.Context, rates []float64, budget float64, maxInterval time.Duration) (poisson.Allocation, error) {
	minFreq := daySeconds / maxInterval.Seconds()
	cfg := poisson.AllocConfig{Budget: budget, MinFreq: minFreq, MaxFreq: defaultOracleMaxFreq}
	if need := minFreq * float64(len(rates)); budget < need {
		return poisson.Allocation{}, fmt.Errorf("oracle: budget %v fetches a day is below the %v that fetching every page once per %v needs", budget, need, maxInterval)
	}
	a, err := poisson.Allocate(ctx, rates, nil, cfg)
	if err != nil {
		return a, fmt.Errorf("oracle: %w", err)
	}
	return a, nil
}

func (p *oraclePolicy) initDatum(i int, d *crawldb.Datum, now time.Time) {
	d.FetchTime = now
	d.FetchInterval = p.intervals[i]
	d.Source = SourceOracle
}

func (p *oraclePolicy) schedule(context.Context, int, time.Time, []crawldb.Datum) (crawldb.Schedule, error) {
	return p.sched, nil
}

// oracleSchedule fetches a page every FetchInterval (set by the oracle),
// keeping the phase: the next fetch is one interval after the time the page
// was due (not after the fetch, which a daily round rounds up to the next
// round), unless that is not after the fetch, so that the long-run
// frequency is the allocation's. Everything else is DefaultSchedule's.
type oracleSchedule struct {
	*crawldb.DefaultSchedule
}

// Name returns "oracle".
func (s *oracleSchedule) Name() string { return PolicyOracle }

// SetFetchSchedule schedules the next fetch one interval after the due
// time prevFetchTime, or after fetchTime if that is not later than it.
func (s *oracleSchedule) SetFetchSchedule(d *crawldb.Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state crawldb.ChangeState) {
	d.Retries = 0
	iv := time.Duration(d.FetchInterval) * time.Second
	next := prevFetchTime.Add(iv)
	if prevFetchTime.IsZero() || !next.After(fetchTime) {
		next = fetchTime.Add(iv)
	}
	d.FetchTime = next
	if state == crawldb.StateModified || modifiedTime.IsZero() {
		modifiedTime = fetchTime
	}
	d.ModifiedTime = modifiedTime.UTC().Truncate(time.Millisecond)
	d.Source = SourceOracle
}
