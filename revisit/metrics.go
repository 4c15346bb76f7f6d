package revisit

import (
	"fmt"
	"math"
	"sort"
)

// Metrics are one policy's results over a simulated period. See the
// package documentation for the exact definitions.
type Metrics struct {
	// Policy is the policy's name.
	Policy string `json:"policy"`
	// Pages is the number of simulated pages, Days the simulated days.
	Pages int `json:"pages"`
	Days  int `json:"days"`
	// Budget is the daily fetch budget; BudgetUsed is Fetches over
	// Budget·Days.
	Budget     int     `json:"budget"`
	BudgetUsed float64 `json:"budget_used"`
	// Fetches counts all fetches; FirstFetches those of pages with no
	// copy yet; Changed and Unchanged split the other fetches (refetches)
	// by whether a change event happened since the page's previous fetch.
	Fetches      int64 `json:"fetches"`
	FirstFetches int64 `json:"first_fetches"`
	Changed      int64 `json:"changed"`
	Unchanged    int64 `json:"unchanged"`
	// Events counts the change events in the period; Caught those whose
	// version some fetch saw.
	Events int64 `json:"events"`
	Caught int64 `json:"caught"`
	// OffsetHours is μ, the prediction time offset, in hours; HitRate is
	// λ; Efficiency is η (NaN when no refetch found a change).
	OffsetHours float64 `json:"offset_hours"`
	HitRate     float64 `json:"hit_rate"`
	Efficiency  float64 `json:"efficiency"`
	// Freshness and AgeHours are the time averages over the whole period
	// and all pages; SteadyFreshness is Freshness over the second half of
	// the period only.
	Freshness       float64 `json:"freshness"`
	SteadyFreshness float64 `json:"steady_freshness"`
	AgeHours        float64 `json:"age_hours"`
	// DailyFetches counts each round's fetches (set by Run).
	DailyFetches []int64 `json:"daily_fetches,omitempty"`
	// DailyFreshness and DailyAgeHours are the averages over each day.
	DailyFreshness []float64 `json:"daily_freshness"`
	DailyAgeHours  []float64 `json:"daily_age_hours"`
	// Sources counts the pages by the schedule source of their last
	// interval at the end (crawldb.Datum.Source: which rule set it).
	Sources map[string]int64 `json:"sources,omitempty"`
	// DailySources counts the pages by their schedule source at the end
	// of each day's round: for each source, one count per day (a page
	// not yet fetched has the source its schedule initialised it with).
	// Each day's counts add up to Pages.
	DailySources map[string][]int64 `json:"daily_sources,omitempty"`
	// IntervalSeconds is the initial interval (db.fetch.interval.default)
	// the default and adaptive policies ran with, in seconds; 0 for the
	// other policies.
	IntervalSeconds int64 `json:"interval_seconds,omitempty"`
	// Tuned reports whether IntervalSeconds was chosen by the tuning
	// search (Tune); TuneTrials are its simulations, in the order run.
	Tuned      bool        `json:"tuned,omitempty"`
	TuneTrials []TuneTrial `json:"tune_trials,omitempty"`
	// Seconds is the wall time the policy's simulation took.
	Seconds float64 `json:"seconds"`
}

// Tracker computes the metrics of one policy from its fetches. Times are
// seconds since the simulation's start; the period is [0, horizon). Fetches
// of a page must come in time order, within the period. A Tracker is not
// safe for concurrent use.
type Tracker struct {
	ev      *Events
	horizon float64
	last    []float64 // last fetch time per page, NaN: never fetched

	fetches, first, changed, unchanged, caught int64
	offsetSum                                  float64
	fresh, age                                 []float64 // page-seconds and page-seconds² per day bin
	finished                                   bool
}

// NewTracker returns a Tracker for the pages of ev over [0, horizon)
// seconds, with the daily series in bins of one day (the last one may be
// shorter).
func NewTracker(ev *Events, horizon float64) (*Tracker, error) {
	if !(horizon > 0) || math.IsInf(horizon, 0) {
		return nil, fmt.Errorf("revisit: horizon %v s: want a positive finite number", horizon)
	}
	bins := int(math.Ceil(horizon / daySeconds))
	t := &Tracker{ev: ev, horizon: horizon, last: make([]float64, ev.Len()),
		fresh: make([]float64, bins), age: make([]float64, bins)}
	for i := range t.last {
		t.last[i] = math.NaN()
	}
	return t, nil
}

// Fetch records a fetch of page i at time at and reports whether the page
// had a copy (refetch) and whether a change event happened since its
// previous fetch (changed, for a refetch; whether the page ever changed
// before at, for a first fetch). The page's version seen is
// Events.CountAt(i, at).
func (t *Tracker) Fetch(i int, at float64) (refetch, changed bool, err error) {
	if t.finished {
		return false, false, fmt.Errorf("revisit: tracker: fetch after Finish")
	}
	if i < 0 || i >= len(t.last) {
		return false, false, fmt.Errorf("revisit: tracker: no page %d", i)
	}
	if !(at >= 0 && at < t.horizon) {
		return false, false, fmt.Errorf("revisit: tracker: page %d fetched at %v s, outside [0, %v)", i, at, t.horizon)
	}
	prev := t.last[i]
	if at < prev {
		return false, false, fmt.Errorf("revisit: tracker: page %d fetched at %v s before its previous fetch at %v s", i, at, prev)
	}
	t.fetches++
	ts := t.ev.Page(i)
	if math.IsNaN(prev) {
		t.first++
		t.noCopy(0, at)
		k := sort.Search(len(ts), func(k int) bool { return ts[k] > at })
		if k > 0 {
			t.caught++ // the version of event k-1 is seen
		}
		t.last[i] = at
		return false, k > 0, nil
	}
	// s: the first event after the previous fetch.
	k := sort.Search(len(ts), func(k int) bool { return ts[k] > prev })
	if k < len(ts) && ts[k] <= at {
		s := ts[k]
		t.changed++
		t.caught++
		t.offsetSum += at - s
		t.freshSpan(prev, s)
		t.staleSpan(s, at, s)
		t.last[i] = at
		return true, true, nil
	}
	t.unchanged++
	t.freshSpan(prev, at)
	t.last[i] = at
	return true, false, nil
}

// noCopy accounts [a, b) of a page with no copy: not fresh, age b - 0.
func (t *Tracker) noCopy(a, b float64) { t.staleSpan(a, b, 0) }

// freshSpan adds [a, b) as fresh time to the day bins.
func (t *Tracker) freshSpan(a, b float64) {
	t.split(a, b, func(bin int, x, y float64) { t.fresh[bin] += y - x })
}

// staleSpan adds the age integral of [a, b), age t - since, to the day bins.
func (t *Tracker) staleSpan(a, b, since float64) {
	t.split(a, b, func(bin int, x, y float64) {
		t.age[bin] += ((y-since)*(y-since) - (x-since)*(x-since)) / 2
	})
}

// split calls fn for the parts of [a, b) in each day bin.
func (t *Tracker) split(a, b float64, fn func(bin int, x, y float64)) {
	for a < b {
		bin := int(a / daySeconds)
		end := min(float64(bin+1)*daySeconds, b)
		if bin >= len(t.fresh) {
			bin = len(t.fresh) - 1
			end = b
		}
		fn(bin, a, end)
		a = end
	}
}

// Finish closes every page's last span at the horizon and returns the
// metrics (Policy, Budget, BudgetUsed, the sources, the interval, the
// tuning and Seconds are the caller's). The Tracker takes no fetches afterwards.
func (t *Tracker) Finish() Metrics {
	if !t.finished {
		t.finished = true
		for i, prev := range t.last {
			if math.IsNaN(prev) {
				t.noCopy(0, t.horizon)
				continue
			}
			ts := t.ev.Page(i)
			k := sort.Search(len(ts), func(k int) bool { return ts[k] > prev })
			if k < len(ts) && ts[k] < t.horizon {
				t.freshSpan(prev, ts[k])
				t.staleSpan(ts[k], t.horizon, ts[k])
			} else {
				t.freshSpan(prev, t.horizon)
			}
		}
	}
	n := float64(len(t.last))
	m := Metrics{
		Pages: len(t.last), Days: len(t.fresh),
		Fetches: t.fetches, FirstFetches: t.first, Changed: t.changed, Unchanged: t.unchanged,
		Caught:         t.caught,
		OffsetHours:    math.NaN(),
		HitRate:        math.NaN(),
		Efficiency:     math.NaN(),
		DailyFreshness: make([]float64, len(t.fresh)),
		DailyAgeHours:  make([]float64, len(t.fresh)),
	}
	for i := range t.last {
		ts := t.ev.Page(i)
		m.Events += int64(sort.SearchFloat64s(ts, t.horizon)) // events before the horizon
	}
	if t.changed > 0 {
		m.OffsetHours = t.offsetSum / float64(t.changed) / 3600
		m.Efficiency = float64(t.unchanged) / float64(t.changed)
	}
	if m.Events > 0 {
		m.HitRate = float64(t.caught) / float64(m.Events)
	}
	var fresh, age, steady, steadyLen float64
	half := len(t.fresh) / 2
	for b := range t.fresh {
		width := min(daySeconds, t.horizon-float64(b)*daySeconds)
		m.DailyFreshness[b] = t.fresh[b] / (n * width)
		m.DailyAgeHours[b] = t.age[b] / (n * width) / 3600
		fresh += t.fresh[b]
		age += t.age[b]
		if b >= half {
			steady += t.fresh[b]
			steadyLen += width
		}
	}
	m.Freshness = fresh / (n * t.horizon)
	m.AgeHours = age / (n * t.horizon) / 3600
	m.SteadyFreshness = steady / (n * steadyLen)
	return m
}
