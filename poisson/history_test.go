package poisson_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/poisson"
)

func datumObs(o crawldb.Observation) (time.Time, bool) { return o.Time, o.Changed }

// simulateDatum fetches a page whose changes are a Poisson process of the
// given rate (per second) at the given fetch times, recording each fetch
// after the first in a real crawldb.Datum as updatedb does (the first
// fetch has nothing to compare with).
func simulateDatum(rng *rand.Rand, rate float64, fetches []time.Time) *crawldb.Datum {
	d := &crawldb.Datum{URL: "http://example.com/"}
	next := fetches[0].Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
	for i, t := range fetches {
		changed := false
		for !next.After(t) {
			changed = true
			next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		}
		if i > 0 {
			d.Observe(t, changed, time.Time{})
		}
	}
	return d
}

// TestFromHistoryDatum estimates from real crawldb histories, bounded to
// crawldb.HistoryLimit entries: regular daily fetches take the regular
// estimator and give exactly its value; jittered and adaptive-looking
// fetch times take the irregular one; across many pages the estimates
// centre on the true rate.
func TestFromHistoryDatum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	start := time.Date(2025, 1, 1, 23, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	const pages = 3000
	rate := 1 / (3 * 86400.0) // a change every 3 days on average

	schedules := []struct {
		name   string
		method poisson.Method
		times  func() []time.Time
	}{
		{"daily", poisson.MethodRegular, func() []time.Time {
			ts := make([]time.Time, 60)
			for i := range ts {
				ts[i] = start.Add(time.Duration(i) * day)
			}
			return ts
		}},
		// Rounds at 23:00 whose fetches finish within the hour: spread
		// under 5%, still regular.
		{"daily+jitter", poisson.MethodRegular, func() []time.Time {
			ts := make([]time.Time, 60)
			for i := range ts {
				ts[i] = start.Add(time.Duration(i)*day + time.Duration(rng.Float64()*float64(30*time.Minute)))
			}
			return ts
		}},
		{"1-5 days", poisson.MethodIrregular, func() []time.Time {
			ts := make([]time.Time, 45)
			for i := 1; i < len(ts); i++ {
				ts[i] = ts[i-1].Add(time.Duration(1+rng.IntN(5)) * day)
			}
			for i := range ts {
				ts[i] = start.Add(ts[i].Sub(time.Time{}))
			}
			return ts
		}},
	}
	for _, s := range schedules {
		var sum float64
		for p := range pages {
			d := simulateDatum(rng, rate, s.times())
			if len(d.History) != crawldb.HistoryLimit {
				t.Fatalf("%s: history of %d entries", s.name, len(d.History))
			}
			e := poisson.FromHistory(d.History, datumObs, poisson.DefaultConfig())
			if !e.OK() || e.N != crawldb.HistoryLimit-1 || e.Method != s.method || e.Skipped != 0 {
				t.Fatalf("%s page %d: %+v", s.name, p, e)
			}
			x := 0
			for _, o := range d.History[1:] {
				if o.Changed {
					x++
				}
			}
			if e.X != x {
				t.Fatalf("%s: X=%d, history has %d changes after the first entry", s.name, e.X, x)
			}
			if s.name == "daily" {
				want, _ := poisson.Regular(31, x, 86400)
				if math.Abs(e.Rate-want.Rate) > 1e-12*want.Rate {
					t.Fatalf("daily: %v, regular estimator %v", e.Rate, want.Rate)
				}
			}
			sum += e.Rate
		}
		mean := sum / pages
		t.Logf("%-12s mean estimate %.4g/s, true %.4g/s (%+.3f)", s.name, mean, rate, mean/rate-1)
		if math.Abs(mean/rate-1) > 0.04 {
			t.Errorf("%s: mean estimate %v, true rate %v", s.name, mean, rate)
		}
	}
}

func TestFromHistoryEdges(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := poisson.DefaultConfig()
	if e := poisson.FromObservations(nil, cfg); e.OK() || e.Period() != math.Inf(1) {
		t.Errorf("empty: %+v", e)
	}
	if e := poisson.FromObservations([]poisson.Observation{{t0, true}}, cfg); e.OK() {
		t.Errorf("one entry: %+v", e)
	}
	// All changed: finite. None changed: 0, period +Inf.
	all := []poisson.Observation{{t0, false}}
	none := []poisson.Observation{{t0, true}}
	for i := 1; i <= 20; i++ {
		all = append(all, poisson.Observation{Time: t0.Add(time.Duration(i) * time.Hour), Changed: true})
		none = append(none, poisson.Observation{Time: t0.Add(time.Duration(i*i) * time.Hour), Changed: false})
	}
	e := poisson.FromObservations(all, cfg)
	if want := math.Log(41) / 3600; e.Method != poisson.MethodRegular || math.Abs(e.Rate-want) > 1e-15 {
		t.Errorf("all changed: %+v, want rate %v", e, want)
	}
	if !e.Saturated() || e.ScheduleRate() != e.Rate {
		t.Errorf("all changed: saturated %v, schedule rate %v", e.Saturated(), e.ScheduleRate())
	}
	e = poisson.FromObservations(none, cfg)
	if e.Method != poisson.MethodIrregular || e.Rate != 0 || e.X != 0 || !e.OK() || e.Period() != math.Inf(1) || e.Saturated() {
		t.Errorf("none changed: %+v", e)
	}
	// No change over 20 intervals spanning 400 h: plan with half a change.
	if got, want := e.ScheduleRate(), math.Log1p(0.5/20)/(400*3600/20); math.Abs(got-want) > 1e-15*want {
		t.Errorf("none changed: schedule rate %v, want %v", got, want)
	}
	if r := (poisson.Estimate{}).ScheduleRate(); r != 0 {
		t.Errorf("empty: schedule rate %v", r)
	}
	// Histories beyond the stack buffer.
	long := make([]poisson.Observation, 200)
	var longIv []poisson.Interval
	for i := range long {
		long[i] = poisson.Observation{Time: t0.Add(time.Duration(i*i+i) * time.Minute), Changed: i%3 == 0}
		if i > 0 {
			longIv = append(longIv, poisson.Interval{Length: float64(2*i) * 60, Changed: i%3 == 0})
		}
	}
	le := poisson.FromObservations(long, cfg)
	want, _ := poisson.Irregular(longIv, poisson.Solver{})
	if le.N != 199 || le.X != 66 || le.Rate != want.Rate {
		t.Errorf("long history: %+v, want rate %v", le, want.Rate)
	}
	longIv = append(longIv, poisson.Interval{Length: -1})
	if e := poisson.FromIntervals(longIv, cfg); e.N != 199 || e.Skipped != 1 || e.Rate != want.Rate {
		t.Errorf("long intervals with a bad one: %+v", e)
	}
	if lo, hi := e.Confidence(1.96); lo != 0 || !(hi > 0 && hi < 1e-5) {
		t.Errorf("none changed: interval [%v, %v]", lo, hi)
	}
	// A duplicate timestamp and an entry out of order are skipped.
	h := []poisson.Observation{{t0, true}, {t0.Add(time.Hour), true}, {t0.Add(time.Hour), true}, {t0.Add(30 * time.Minute), false}, {t0.Add(2 * time.Hour), false}}
	e = poisson.FromObservations(h, cfg)
	if e.N != 2 || e.X != 1 || e.Skipped != 2 || e.Span != 7200 {
		t.Errorf("skips: %+v", e)
	}
	// Irregular with RegularSpread < 0 even on equal intervals, and the
	// same value.
	reg := poisson.FromObservations(all[:10], cfg)
	irr := poisson.FromObservations(all[:10], poisson.Config{RegularSpread: -1})
	if irr.Method != poisson.MethodIrregular || math.Abs(irr.Rate/reg.Rate-1) > 1e-12 {
		t.Errorf("regular %+v, irregular %+v", reg, irr)
	}
	// FromIntervals skips bad lengths.
	e = poisson.FromIntervals([]poisson.Interval{{1, true}, {0, true}, {math.NaN(), false}, {math.Inf(1), false}, {1, false}}, cfg)
	if e.N != 2 || e.Skipped != 3 || e.Method != poisson.MethodRegular {
		t.Errorf("bad lengths: %+v", e)
	}
}

func TestLastModifiedEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rate := 1 / 86400.0
	const pages = 3000
	var sum float64
	for range pages {
		next := t0.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		last := t0.Add(-time.Hour)
		var h []poisson.LastModifiedObservation
		ft := t0
		for range 32 {
			for !next.After(ft) {
				last = next
				next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
			}
			// HTTP dates have whole seconds.
			h = append(h, poisson.LastModifiedObservation{Time: ft, LastModified: last.Truncate(time.Second)})
			ft = ft.Add(time.Duration(12+rng.IntN(48)) * time.Hour)
		}
		e := poisson.LastModifiedEstimate(h)
		if e.N != 31 || e.Method != poisson.MethodLastModified {
			t.Fatalf("%+v", e)
		}
		sum += e.Rate
	}
	mean := sum / pages
	t.Logf("last-modified mean estimate %.4g/s, true %.4g/s (%+.3f)", mean, rate, mean/rate-1)
	if math.Abs(mean/rate-1) > 0.03 {
		t.Errorf("mean %v, true %v", mean, rate)
	}
	h := []poisson.LastModifiedObservation{
		{Time: t0},
		{Time: t0.Add(time.Hour)}, // no date: skipped
		{Time: t0.Add(2 * time.Hour), LastModified: t0.Add(90 * time.Minute)},          // changed, 30 min
		{Time: t0.Add(4 * time.Hour), LastModified: t0.Add(90 * time.Minute)},          // unchanged, 2 h
		{Time: t0.Add(4 * time.Hour), LastModified: t0.Add(4 * time.Hour)},             // not after: skipped
		{Time: t0.Add(5 * time.Hour), LastModified: t0.Add(5*time.Hour + time.Minute)}, // changed, skew: 0
	}
	e := poisson.LastModifiedEstimate(h)
	if e.N != 3 || e.X != 2 || e.Skipped != 2 || e.Span != 1800+7200 {
		t.Errorf("%+v", e)
	}
}
