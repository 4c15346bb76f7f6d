package revisit

import (
	"context"
	"fmt"
	"math"
	"time"
)

// The tuning search's range and tolerance (see Tune).
const (
	// TuneMinInterval and TuneMaxInterval bound the initial intervals
	// the search tries (the upper bound is also at most the schedule's
	// MaxInterval, db.fetch.interval.max).
	TuneMinInterval = time.Hour
	TuneMaxInterval = 90 * 24 * time.Hour
	// TuneTolerance is the budget shortfall (1 - budget used) the search
	// accepts above the least it finds, at TuneMinInterval: a tuned
	// baseline leaves at most this share of Budget · Days more unused
	// than it would with the shortest interval.
	TuneTolerance = 0.001
	// tuneSteps is the number of bisection steps: the 11.1 octaves of
	// [1 hour, 90 days] narrowed to 11.1/2^10 octaves, the chosen
	// interval within 0.8% of the boundary.
	tuneSteps = 10
)

// TuneTrial is one simulation of the tuning search.
type TuneTrial struct {
	// IntervalSeconds is the initial interval tried, in seconds.
	IntervalSeconds int64 `json:"interval_seconds"`
	// BudgetUsed and Freshness are the trial's.
	BudgetUsed float64 `json:"budget_used"`
	Freshness  float64 `json:"freshness"`
}

// Tuning is the result of Tune.
type Tuning struct {
	// Interval is the chosen initial interval.
	Interval time.Duration
	// Trials are the search's simulations, in the order run.
	Trials []TuneTrial
	// metrics is the trial's at Interval, which a run without Trace or
	// Final need not repeat.
	metrics Metrics
}

// Tune searches the initial interval (Schedule.DefaultInterval,
// db.fetch.interval.default: the interval of every new page, and for the
// adaptive policy the interval its adaptation starts from) at which the
// baseline policy (default or adaptive) spends the budget: the longest
// interval in [TuneMinInterval, TuneMaxInterval] whose budget shortfall
// is within TuneTolerance of the least, the shortfall at TuneMinInterval.
// A shorter interval keeps more pages due, and once the budget binds a
// shorter one only makes generate's order (most overdue first) decide
// what is fetched instead of the schedule; the longest interval that
// spends the budget is the one where the schedule's own intervals ask for
// as many fetches as the budget allows.
//
// Each trial is a full simulation of the policy under c (c's days,
// budget and truth; Trace and Final are not called). The search assumes
// the budget used falls as the interval grows (it does on simweb's webs,
// measured on a geometric grid over the range): it simulates both ends,
// then bisects the interval's logarithm tuneSteps times, 12 simulations
// in all.
func Tune(ctx context.Context, tr *Truth, cfg Config, policy string) (Tuning, error) {
	if !isBaseline(policy) {
		return Tuning{}, fmt.Errorf("revisit: tune: policy %q: only %s and %s have an initial interval to tune", policy, PolicyDefault, PolicyAdaptive)
	}
	c, err := cfg.resolved(len(tr.Pages))
	if err != nil {
		return Tuning{}, err
	}
	return tune(ctx, tr, c, policy)
}

// tune is Tune for a resolved configuration.
func tune(ctx context.Context, tr *Truth, c Config, policy string) (Tuning, error) {
	c.Trace, c.Final = nil, nil
	var t Tuning
	runs := map[time.Duration]Metrics{}
	trial := func(iv time.Duration) (TuneTrial, error) {
		tc := c
		sc := *c.Schedule
		sc.DefaultInterval = iv
		tc.Schedule = &sc
		m, err := runSim(ctx, tr, tc, policy)
		if err != nil {
			return TuneTrial{}, fmt.Errorf("interval %v: %w", iv, err)
		}
		tt := TuneTrial{IntervalSeconds: int64(iv / time.Second), BudgetUsed: m.BudgetUsed, Freshness: m.Freshness}
		t.Trials = append(t.Trials, tt)
		runs[iv] = m
		c.Log.Debug("revisit: tuning trial", "policy", policy, "interval", iv, "budget_used", m.BudgetUsed, "freshness", m.Freshness)
		return tt, nil
	}
	lo := TuneMinInterval
	hi := max(lo, min(TuneMaxInterval, c.Schedule.MaxInterval))
	first, err := trial(lo)
	if err != nil {
		return t, err
	}
	allowed := 1 - first.BudgetUsed + TuneTolerance
	spends := func(tt TuneTrial) bool { return 1-tt.BudgetUsed <= allowed }
	if hi > lo {
		last, err := trial(hi)
		if err != nil {
			return t, err
		}
		if spends(last) {
			lo = hi
		}
	}
	for range tuneSteps {
		if lo >= hi {
			break
		}
		mid := time.Duration(math.Round(math.Sqrt(lo.Seconds()*hi.Seconds()))) * time.Second
		if mid <= lo || mid >= hi {
			break
		}
		tt, err := trial(mid)
		if err != nil {
			return t, err
		}
		if spends(tt) {
			lo = mid
		} else {
			hi = mid
		}
	}
	t.Interval = lo
	t.metrics = runs[lo]
	c.Log.Info("revisit: tuned the initial interval", "policy", policy, "interval", lo, "trials", len(t.Trials))
	return t, nil
}
