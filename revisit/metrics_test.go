package revisit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trawl/trawl/poisson"
)

const day = daySeconds

func mustEvents(t *testing.T, per [][]float64) *Events {
	t.Helper()
	ev, err := NewEvents(per)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestTrackerHandBuilt checks every metric on a hand-computed case.
//
// Page 0 changes at days 1.5, 2.5 and 7 and is fetched at days 0, 2, 3
// and 4; page 1 never changes and is fetched at days 1 and 5; the horizon
// is 10 days.
//
// Page 0: fetch 0 is a first fetch of version 0 (nothing caught); fetch 2
// finds the change of 1.5 (fresh 0..1.5, stale 1.5..2: offset 0.5 d, age
// integral 0.5²/2); fetch 3 the change of 2.5 (fresh 2..2.5, stale
// 2.5..3); fetch 4 nothing (fresh 3..4); then fresh 4..7 and stale 7..10
// (age integral 3²/2). Fresh 6 d, age integral 4.75 d².
//
// Page 1: no copy 0..1 (age t, integral 0.5 d²), then fresh 1..10: fresh
// 9 d, age integral 0.5 d².
func TestTrackerHandBuilt(t *testing.T) {
	ev := mustEvents(t, [][]float64{{1.5 * day, 2.5 * day, 7 * day}, nil})
	tk, err := NewTracker(ev, 10*day)
	if err != nil {
		t.Fatal(err)
	}
	type f struct {
		page             int
		at               float64
		refetch, changed bool
	}
	for _, x := range []f{{0, 0, false, false}, {1, 1 * day, false, false}, {0, 2 * day, true, true},
		{0, 3 * day, true, true}, {0, 4 * day, true, false}, {1, 5 * day, true, false}} {
		re, ch, err := tk.Fetch(x.page, x.at)
		if err != nil {
			t.Fatal(err)
		}
		if re != x.refetch || ch != x.changed {
			t.Errorf("fetch of page %d at day %v: refetch %v changed %v, want %v %v", x.page, x.at/day, re, ch, x.refetch, x.changed)
		}
	}
	m := tk.Finish()
	if m.Fetches != 6 || m.FirstFetches != 2 || m.Changed != 2 || m.Unchanged != 2 || m.Events != 3 || m.Caught != 2 {
		t.Errorf("counts: %+v", m)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mu hours", m.OffsetHours, 12},
		{"hit rate", m.HitRate, 2.0 / 3},
		{"eta", m.Efficiency, 1},
		{"freshness", m.Freshness, 15.0 / 20},
		{"age hours", m.AgeHours, (4.75 + 0.5) / 20 * 24},
		{"steady freshness", m.SteadyFreshness, 7.0 / 10},
		{"day 0 freshness", m.DailyFreshness[0], 0.5},
		{"day 0 age hours", m.DailyAgeHours[0], 0.5 / 2 * 24},
		{"day 1 freshness", m.DailyFreshness[1], 0.75},
		{"day 1 age hours", m.DailyAgeHours[1], 0.125 / 2 * 24},
		{"day 7 freshness", m.DailyFreshness[7], 0.5},
		{"day 8 age hours", m.DailyAgeHours[8], (2*2 - 1*1) / 2.0 / 2 * 24},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(m.DailyFreshness) != 10 {
		t.Errorf("%d daily values, want 10", len(m.DailyFreshness))
	}
}

// TestTrackerEdges: an event at the fetch's own time is seen by it; a page
// never fetched is never fresh and ages from the start; a first fetch of a
// page that has changed catches that change; bad fetches are errors.
func TestTrackerEdges(t *testing.T) {
	ev := mustEvents(t, [][]float64{{2 * day}, {0.5 * day}, nil})
	tk, err := NewTracker(ev, 4*day)
	if err != nil {
		t.Fatal(err)
	}
	mustFetch := func(p int, at float64) (bool, bool) {
		t.Helper()
		re, ch, err := tk.Fetch(p, at)
		if err != nil {
			t.Fatal(err)
		}
		return re, ch
	}
	mustFetch(0, 0)
	if re, ch := mustFetch(0, 2*day); !re || !ch {
		t.Errorf("fetch at the event's time: refetch %v changed %v", re, ch)
	}
	if re, ch := mustFetch(1, 1*day); re || !ch {
		t.Errorf("first fetch after a change: refetch %v changed %v", re, ch)
	}
	for _, bad := range []struct {
		page int
		at   float64
	}{{0, 1 * day}, {3, day}, {0, 4 * day}, {0, -1}, {0, math.NaN()}} {
		if _, _, err := tk.Fetch(bad.page, bad.at); err == nil {
			t.Errorf("fetch of page %d at %v s: no error", bad.page, bad.at)
		}
	}
	m := tk.Finish()
	if m.Caught != 2 || m.Events != 2 || m.Changed != 1 || m.OffsetHours != 0 {
		t.Errorf("caught %d of %d, changed %d, mu %v", m.Caught, m.Events, m.Changed, m.OffsetHours)
	}
	// Fresh: page 0 all 4 days, page 1 days 1..4, page 2 never.
	if want := 7.0 / 12; !near(m.Freshness, want) {
		t.Errorf("freshness %v, want %v", m.Freshness, want)
	}
	// Age: page 1 ∫0^1 t dt = 0.5 d², page 2 ∫0^4 t dt = 8 d².
	if want := 8.5 / 12 * 24; !near(m.AgeHours, want) {
		t.Errorf("age %v h, want %v", m.AgeHours, want)
	}
	if _, _, err := tk.Fetch(0, 3*day); err == nil {
		t.Error("fetch after Finish: no error")
	}
	if _, err := NewEvents([][]float64{{2, 1}}); err == nil {
		t.Error("unsorted events: no error")
	}
	if _, err := NewTracker(ev, 0); err == nil {
		t.Error("zero horizon: no error")
	}
}

// TestFreshnessMatchesPoisson: pages of rate λ fetched every I from time
// 0 have, averaged over many pages and periods, the freshness and age of
// poisson.Freshness and poisson.Age. 3000 pages × 30 periods: the
// standard error of the mean freshness is below 0.002 and of the age below
// 0.01 days for these rates; the bounds are 5 times that.
func TestFreshnessMatchesPoisson(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct{ rate, interval float64 }{{0.5, 3}, {0.1, 1}, {2, 1}, {0.05, 10}} {
		const pages = 3000
		const periods = 30
		horizon := c.interval * periods
		per := make([][]float64, pages)
		for i := range per {
			for s := rng.ExpFloat64() / c.rate; s < horizon; s += rng.ExpFloat64() / c.rate {
				per[i] = append(per[i], s*day)
			}
		}
		ev := mustEvents(t, per)
		tk, err := NewTracker(ev, horizon*day)
		if err != nil {
			t.Fatal(err)
		}
		for k := range periods {
			for i := range pages {
				if _, _, err := tk.Fetch(i, float64(k)*c.interval*day); err != nil {
					t.Fatal(err)
				}
			}
		}
		m := tk.Finish()
		wantF := poisson.Freshness(c.rate, c.interval)
		wantA := poisson.Age(c.rate, c.interval) * 24
		if math.Abs(m.Freshness-wantF) > 0.01 {
			t.Errorf("rate %v, interval %v: freshness %.4f, want %.4f", c.rate, c.interval, m.Freshness, wantF)
		}
		if math.Abs(m.AgeHours-wantA) > 0.05*24 {
			t.Errorf("rate %v, interval %v: age %.2f h, want %.2f h", c.rate, c.interval, m.AgeHours, wantA)
		}
		// Every refetch that found a change: the expected share is
		// 1 - e^{-λI}.
		share := float64(m.Changed) / float64(m.Changed+m.Unchanged)
		if want := 1 - math.Exp(-c.rate*c.interval); math.Abs(share-want) > 0.01 {
			t.Errorf("rate %v, interval %v: changed share %.4f, want %.4f", c.rate, c.interval, share, want)
		}
		t.Logf("rate %v/day every %v days: freshness %.4f (model %.4f), age %.2f h (model %.2f h), eta %.3f",
			c.rate, c.interval, m.Freshness, wantF, m.AgeHours, wantA, m.Efficiency)
	}
}
