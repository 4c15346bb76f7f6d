package crawldb

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/poisson"
)

func TestPageKindOf(t *testing.T) {
	cases := []struct {
		url  string
		want PageKind
	}{
		{"http://example.com", KindHome},
		{"http://example.com/", KindHome},
		{"https://example.com:8080/", KindHome},
		{"http://example.com/?lang=en", KindHome},
		{"http://example.com?x=1", KindHome},
		{"http://example.com#top", KindHome},
		{"http://example.com/#top", KindHome},
		{"http://user@example.com/", KindHome},
		{"http://example.com/news/", KindDirectory},
		{"http://example.com/a/b/c/", KindDirectory},
		{"http://example.com/news/?page=2", KindDirectory},
		{"http://example.com/news/#x", KindDirectory},
		{"http://example.com//", KindDirectory},
		{"http://example.com/news", KindOther},
		{"http://example.com/news/item.html", KindOther},
		{"http://example.com/search?q=a/", KindOther},
		{"http://example.com/index.html", KindOther},
		{"mailto:someone@example.com", KindOther},
		{"", KindOther},
		{"example.com/", KindOther},
	}
	for _, c := range cases {
		if got := PageKindOf(c.url); got != c.want {
			t.Errorf("PageKindOf(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	if KindHome.String() != "home" || KindDirectory.String() != "directory" || KindOther.String() != "other" || PageKind(7).String() != "kind_7" {
		t.Error("PageKind.String")
	}
}

func TestDefaultDynamicConfig(t *testing.T) {
	c := DefaultDynamicConfig()
	if c.MaxChanges != 16 || c.PoissonScale != 1 || c.OptimalMu != 0 {
		t.Errorf("defaults %+v", c)
	}
	d := 24 * time.Hour
	want := [NumKinds]KindIntervals{{d, time.Hour, 7 * d}, {3 * d, 6 * time.Hour, 30 * d}, {7 * d, d, 90 * d}}
	if c.Kinds != want {
		t.Errorf("kinds %+v", c.Kinds)
	}
	if DefaultScheduleConfig().Dynamic != c {
		t.Error("DefaultScheduleConfig lacks the dynamic defaults")
	}
	// The zero DynamicConfig means the defaults.
	cfg := DefaultScheduleConfig()
	cfg.Dynamic = DynamicConfig{}
	s, err := NewDynamicSchedule(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Config() != c || s.Name() != "dynamic" {
		t.Errorf("zero config gave %+v", s.Config())
	}
}

func TestDynamicConfigValidation(t *testing.T) {
	bad := []struct {
		name    string
		mutate  func(c *ScheduleConfig)
		periods ClusterPeriods
	}{
		{"negative max changes", func(c *ScheduleConfig) { c.Dynamic.MaxChanges = -1 }, nil},
		{"zero scale", func(c *ScheduleConfig) { c.Dynamic.PoissonScale = 0 }, nil},
		{"NaN scale", func(c *ScheduleConfig) { c.Dynamic.PoissonScale = math.NaN() }, nil},
		{"negative mu", func(c *ScheduleConfig) { c.Dynamic.OptimalMu = -1 }, nil},
		{"infinite mu", func(c *ScheduleConfig) { c.Dynamic.OptimalMu = math.Inf(1) }, nil},
		{"min above initial", func(c *ScheduleConfig) { c.Dynamic.Kinds[KindHome].Min = 2 * 24 * time.Hour }, nil},
		{"initial above max", func(c *ScheduleConfig) { c.Dynamic.Kinds[KindOther].Initial = 100 * 24 * time.Hour }, nil},
		{"max above db max", func(c *ScheduleConfig) { c.MaxInterval = 60 * 24 * time.Hour }, nil},
		{"zero min", func(c *ScheduleConfig) { c.Dynamic.Kinds[KindDirectory].Min = 0 }, nil},
		{"fractional second", func(c *ScheduleConfig) { c.Dynamic.Kinds[KindDirectory].Min = 1500 * time.Millisecond }, nil},
		{"bad adaptive rate", func(c *ScheduleConfig) { c.Adaptive.IncRate = 2 }, nil},
		{"negative cluster", func(c *ScheduleConfig) {}, ClusterPeriods{-1: time.Hour}},
		{"zero period", func(c *ScheduleConfig) {}, ClusterPeriods{3: 0}},
		{"unknown rank", func(c *ScheduleConfig) { c.Dynamic.Rank = "overdue" }, nil},
	}
	for _, b := range bad {
		c := DefaultScheduleConfig()
		b.mutate(&c)
		if _, err := NewDynamicSchedule(c, b.periods); err == nil {
			t.Errorf("%s: accepted", b.name)
		} else if !strings.HasPrefix(err.Error(), "crawldb: ") && !strings.HasPrefix(err.Error(), "Dynamic.") {
			t.Errorf("%s: error %q lacks context", b.name, err)
		}
	}
	s, err := NewSchedule("dynamic", DefaultScheduleConfig())
	if err != nil || s.Name() != "dynamic" {
		t.Fatalf("NewSchedule(dynamic) = %v, %v", s, err)
	}
	if _, ok := s.(*DynamicSchedule).Period(0); ok {
		t.Error("NewSchedule's dynamic schedule has periods")
	}
}

// dailyHistory returns n+1 observations a day apart ending a day before
// end, the i-th interval changed when changed(i).
func dailyHistory(end time.Time, n int, changed func(i int) bool) []Observation {
	h := make([]Observation, n+1)
	for i := range h {
		h[i] = Observation{Time: end.Add(-time.Duration(n+1-i) * 24 * time.Hour), Changed: i > 0 && changed(i-1)}
	}
	return h
}

func countChanged(h []Observation) int32 {
	n := int32(0)
	for _, o := range h[1:] {
		if o.Changed {
			n++
		}
	}
	return n
}

func TestDynamicSetFetchSchedule(t *testing.T) {
	const (
		home  = "http://site.example/"
		dir   = "http://site.example/news/"
		other = "http://site.example/news/item-1.html"
	)
	periods := ClusterPeriods{1: 2 * 24 * time.Hour, 2: 10 * time.Minute, 3: 400 * 24 * time.Hour}
	s, err := NewDynamicSchedule(DefaultScheduleConfig(), periods)
	if err != nil {
		t.Fatal(err)
	}
	fetch := t0.Add(100 * 24 * time.Hour)
	// A history of 20 daily intervals, every other one changed (10
	// changes), ending a day before the fetch.
	h20 := dailyHistory(fetch, 20, func(i int) bool { return i%2 == 0 })
	// With this fetch (changed): n = 21 regular intervals of a day, X =
	// 11: the bias-reduced estimate r = -ln((21-11+0.5)/(21+0.5)).
	rate := -math.Log(10.5/21.5) / day
	// Two unchanged fetches, 10 and 3 days before this one.
	quiet10 := []Observation{{Time: fetch.Add(-10 * 24 * time.Hour)}, {Time: fetch.Add(-3 * 24 * time.Hour)}}
	poissonSec := int32(math.Floor(1/rate + 0.5))
	cases := []struct {
		name     string
		d        Datum
		state    ChangeState
		source   Source
		interval int32 // seconds
		next     time.Duration
	}{
		{"noise page: adaptive, other kind", Datum{URL: other, ClusterID: -1, FetchInterval: 7 * day},
			StateNotModified, SourceAdaptive, 846720, 846720 * time.Second},
		{"never clustered, no interval: kind initial then adaptive", Datum{URL: dir, ClusterID: -1},
			StateModified, SourceAdaptive, 207360, 207360 * time.Second}, // 3 d * 0.8
		{"home page adaptive clamps to 1 h", Datum{URL: home, ClusterID: -1, FetchInterval: 3600},
			StateModified, SourceAdaptive, 3600, time.Hour},
		{"home page adaptive clamps to 7 d", Datum{URL: home, ClusterID: -1, FetchInterval: 6 * day},
			StateNotModified, SourceAdaptive, 7 * day, 7 * 24 * time.Hour},
		{"sample: adaptive even though its cluster has a period", Datum{URL: other, ClusterID: 1, ClusterSample: true, FetchInterval: 2 * day},
			StateModified, SourceAdaptive, 138240, 138240 * time.Second}, // 1.6 d
		{"member: cluster period", Datum{URL: other, ClusterID: 1, FetchInterval: 7 * day},
			StateNotModified, SourceCluster, 2 * day, 48 * time.Hour},
		{"member: period below the kind minimum", Datum{URL: dir, ClusterID: 2, FetchInterval: 7 * day},
			StateModified, SourceCluster, 6 * 3600, 6 * time.Hour},
		{"member: period above the kind maximum", Datum{URL: home, ClusterID: 3, FetchInterval: day},
			StateModified, SourceCluster, 7 * day, 7 * 24 * time.Hour},
		{"member of a cluster without a period: adaptive", Datum{URL: other, ClusterID: 9, FetchInterval: 7 * day},
			StateNotModified, SourceAdaptive, 846720, 846720 * time.Second},
		{"16 changes, unchanged now: still young", Datum{URL: other, ClusterID: 1, ChangeCount: 16, History: h20, FetchInterval: day},
			StateNotModified, SourceCluster, 2 * day, 48 * time.Hour},
		{"16 changes and this one: poisson", Datum{URL: other, ClusterID: 1, ChangeCount: 16, History: h20, FetchInterval: day},
			StateModified, SourcePoisson, poissonSec, time.Duration(1 / rate * float64(time.Second)).Truncate(time.Millisecond)},
		{"poisson beats sample", Datum{URL: other, ClusterID: 1, ClusterSample: true, ChangeCount: 40, History: h20, FetchInterval: day},
			StateModified, SourcePoisson, poissonSec, time.Duration(1 / rate * float64(time.Second)).Truncate(time.Millisecond)},
		{"poisson beats noise", Datum{URL: other, ClusterID: -1, ChangeCount: 40, History: h20, FetchInterval: day},
			StateModified, SourcePoisson, poissonSec, time.Duration(1 / rate * float64(time.Second)).Truncate(time.Millisecond)},
		{"fixed interval kept", Datum{URL: other, ClusterID: 1, ChangeCount: 40, History: h20, FetchInterval: 5 * day, FixedInterval: true},
			StateModified, SourceInjected, 5 * day, 5 * 24 * time.Hour},
		// Never changed in a 10-day history: at least 3 x 10 days.
		{"unchanged noise page: 3 x its span", Datum{URL: other, ClusterID: -1, History: quiet10, FetchInterval: 7 * day},
			StateNotModified, SourceAdaptive, 30 * day, 30 * 24 * time.Hour},
		{"unchanged member: 3 x its span over the cluster period", Datum{URL: other, ClusterID: 1, History: quiet10, FetchInterval: 7 * day},
			StateNotModified, SourceCluster, 30 * day, 30 * 24 * time.Hour},
		{"unchanged home page: span bound capped by the kind", Datum{URL: home, ClusterID: -1, History: quiet10, FetchInterval: day},
			StateNotModified, SourceAdaptive, 7 * day, 7 * 24 * time.Hour},
		{"unchanged sample: 3 x its span", Datum{URL: dir, ClusterID: 1, ClusterSample: true, History: quiet10, FetchInterval: 3 * day},
			StateNotModified, SourceAdaptive, 30 * day, 30 * 24 * time.Hour},
		{"changed once: no span bound", Datum{URL: other, ClusterID: -1, ChangeCount: 1, History: quiet10, FetchInterval: 7 * day},
			StateNotModified, SourceAdaptive, 846720, 846720 * time.Second},
		{"first change now: no span bound", Datum{URL: other, ClusterID: -1, History: quiet10, FetchInterval: 7 * day},
			StateModified, SourceAdaptive, 483840, 483840 * time.Second}, // 7 d * 0.8
	}
	for _, c := range cases {
		d := c.d
		d.Retries = 2
		s.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, time.Time{}, c.state)
		if d.Source != c.source || d.FetchInterval != c.interval || d.Retries != 0 {
			t.Errorf("%s: source %q interval %d retries %d, want %q %d 0", c.name, d.Source, d.FetchInterval, d.Retries, c.source, c.interval)
		}
		if got := d.FetchTime.Sub(fetch); got != c.next {
			t.Errorf("%s: next fetch after %v, want %v", c.name, got, c.next)
		}
		if c.state == StateModified && !d.FixedInterval && !d.ModifiedTime.Equal(fetch) {
			t.Errorf("%s: modified time %v, want the fetch time", c.name, d.ModifiedTime)
		}
		if len(d.History) != len(c.d.History) || d.ChangeCount != c.d.ChangeCount {
			t.Errorf("%s: the schedule changed the history", c.name)
		}
	}
}

// TestDynamicObservedOrder checks that a fetch already recorded with
// Observe is not counted twice: both call orders give the same schedule.
func TestDynamicObservedOrder(t *testing.T) {
	s, err := NewDynamicSchedule(DefaultScheduleConfig(), ClusterPeriods{1: 3 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fetch := t0.Add(50 * 24 * time.Hour)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		h := dailyHistory(fetch, rng.IntN(HistoryLimit+4), func(int) bool { return rng.IntN(3) == 0 })
		d := Datum{URL: "http://a.example/x", ClusterID: int32(rng.IntN(3)) - 1, History: h, ChangeCount: countChanged(h) + int32(rng.IntN(10)), FetchInterval: day}
		if len(d.History) > HistoryLimit {
			d.History = d.History[len(d.History)-HistoryLimit:]
		}
		state := []ChangeState{StateModified, StateNotModified, StateUnknown}[rng.IntN(3)]
		a := d
		s.SetFetchSchedule(&a, time.Time{}, time.Time{}, fetch, time.Time{}, state) // updatedb's order
		b := d
		if state != StateUnknown {
			b.Observe(fetch, state == StateModified, time.Time{})
		}
		s.SetFetchSchedule(&b, time.Time{}, time.Time{}, fetch, time.Time{}, state) // a simulator's order
		if a.Source != b.Source || a.FetchInterval != b.FetchInterval || !a.FetchTime.Equal(b.FetchTime) {
			t.Fatalf("trial %d (M=%d, %v): schedule then observe gave %s %d, observe then schedule %s %d",
				trial, d.ChangeCount, state, a.Source, a.FetchInterval, b.Source, b.FetchInterval)
		}
	}
}

func TestDynamicOptimalAllocation(t *testing.T) {
	cfg := DefaultScheduleConfig()
	mu := 0.05
	cfg.Dynamic.OptimalMu = mu
	s, err := NewDynamicSchedule(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	fetch := t0.Add(100 * 24 * time.Hour)
	for _, every := range []int{2, 3, 5, 9} {
		h := dailyHistory(fetch, 31, func(i int) bool { return i%every == 0 })
		d := Datum{URL: "http://a.example/p", ClusterID: -1, History: h[1:], ChangeCount: 30}
		s.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, time.Time{}, StateNotModified)
		if d.Source != SourcePoisson {
			t.Fatalf("every %d: source %s", every, d.Source)
		}
		withFetch := append(slices.Clone(h[1:]), Observation{Time: fetch, Changed: false})
		est := poisson.FromHistory(withFetch, observationAt, poisson.DefaultConfig())
		f := poisson.OptimalFrequency(mu, est.ScheduleRate()*day, 1, poisson.AllocConfig{MinFreq: 1.0 / 90, MaxFreq: 1})
		want := int32(math.Floor(day/f + 0.5))
		if d.FetchInterval != want {
			t.Errorf("every %d: interval %d s, want %d s (frequency %v/day)", every, d.FetchInterval, want, f)
		}
	}
	// A page that changed at every daily fetch (estimated rate ln(65) a
	// day) cannot be kept fresh at a multiplier of 0.5 (mu*rate >= 1):
	// the allocation gives it the minimum rate.
	h := make([]Observation, 32)
	for i := range h {
		h[i] = Observation{Time: fetch.Add(-time.Duration(32-i) * 24 * time.Hour), Changed: true}
	}
	cfg.Dynamic.OptimalMu = 0.5
	s, err = NewDynamicSchedule(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Datum{URL: "http://a.example/p", ClusterID: -1, History: h, ChangeCount: 40}
	s.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, time.Time{}, StateModified)
	if d.Source != SourcePoisson || d.FetchInterval != 90*day {
		t.Errorf("saturated page: %s %d, want poisson %d", d.Source, d.FetchInterval, 90*day)
	}
	// Without the allocation Hu and Wu's rule revisits it at its period.
	d = Datum{URL: "http://a.example/p", ClusterID: -1, History: h, ChangeCount: 40}
	seed, _ := NewDynamicSchedule(DefaultScheduleConfig(), nil)
	seed.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, time.Time{}, StateModified)
	if d.Source != SourcePoisson || d.FetchInterval != day {
		t.Errorf("saturated page, seed rule: %s %d, want poisson %d (the kind's minimum)", d.Source, d.FetchInterval, day)
	}
}

func TestDynamicInitializeSchedule(t *testing.T) {
	s, err := NewDynamicSchedule(DefaultScheduleConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want int32
	}{{"http://a.example/", day}, {"http://a.example/d/", 3 * day}, {"http://a.example/d/p", 7 * day}} {
		d := Datum{URL: c.url, Retries: 3}
		s.InitializeSchedule(&d, t0)
		if d.FetchInterval != c.want || !d.FetchTime.Equal(t0) || d.Retries != 0 || d.Source != SourceAdaptive {
			t.Errorf("%s: %+v", c.url, d)
		}
	}
	d := Datum{URL: "http://a.example/", FixedInterval: true, FetchInterval: 600}
	s.InitializeSchedule(&d, t0)
	if d.FetchInterval != 600 || d.Source != SourceInjected {
		t.Errorf("fixed: %+v", d)
	}
}

// poissonHistory simulates a page changing as a Poisson process of the
// given rate (per day), fetched at the given gaps (days), and returns the
// History a crawler would record.
func poissonHistory(rng *rand.Rand, rate float64, gaps []float64) []Observation {
	start := t0
	h := []Observation{{Time: start}}
	next := rng.ExpFloat64() / rate // time of the next change, in days
	now := 0.0
	for _, g := range gaps {
		now += g
		changed := false
		for next <= now {
			changed = true
			next += rng.ExpFloat64() / rate
		}
		h = append(h, Observation{Time: start.Add(time.Duration(now * 24 * float64(time.Hour))).Truncate(time.Millisecond), Changed: changed})
	}
	return h
}

func TestObservedChangePeriod(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const pages = 400
	for _, c := range []struct {
		name   string
		period float64 // true mean change period, days
		gap    func() float64
		tol    float64 // relative tolerance of the mean estimated rate
	}{
		{"daily fetches, 3-day period", 3, func() float64 { return 1 }, 0.08},
		{"daily fetches, half-day period", 0.5, func() float64 { return 1 }, 0.10},
		{"irregular fetches, 2-day period", 2, func() float64 { return 0.3 + 2*rng.Float64() }, 0.08},
		{"weekly fetches, 10-day period", 10, func() float64 { return 7 }, 0.10},
	} {
		var sumRate, sumNaive float64
		for range pages {
			gaps := make([]float64, HistoryLimit-1)
			for i := range gaps {
				gaps[i] = c.gap()
			}
			d := Datum{History: poissonHistory(rng, 1/c.period, gaps)}
			p, ok := ObservedChangePeriod(&d)
			if !ok || p <= 0 {
				t.Fatalf("%s: no period", c.name)
			}
			sumRate += 1 / (p.Hours() / 24)
			// The naive span/changes, for comparison.
			span := d.History[len(d.History)-1].Time.Sub(d.History[0].Time).Hours() / 24
			sumNaive += float64(countChanged(d.History)) / span
		}
		mean := sumRate / pages
		if rel := math.Abs(mean*c.period - 1); rel > c.tol {
			t.Errorf("%s: mean estimated rate %.4f/day, true %.4f/day (%.1f%% off, tolerance %.0f%%)", c.name, mean, 1/c.period, 100*rel, 100*c.tol)
		}
		if c.period < 1 && sumNaive/pages > 0.6/c.period {
			t.Errorf("%s: span/changes should underestimate a fast page's rate; got %.3f/day", c.name, sumNaive/pages)
		}
	}
	// No usable interval.
	for _, h := range [][]Observation{nil, {{Time: t0}}, {{Time: t0}, {Time: t0, Changed: true}}} {
		if _, ok := ObservedChangePeriod(&Datum{History: h}); ok {
			t.Errorf("history %v gave a period", h)
		}
	}
	// Never changed over 10 daily intervals: half a change expected,
	// ln(1 + 0.5/10) per day.
	d := Datum{History: dailyHistory(t0, 10, func(int) bool { return false })}
	p, ok := ObservedChangePeriod(&d)
	if want := 1 / math.Log1p(0.05) * 24; !ok || math.Abs(p.Hours()-want) > 1e-6 {
		t.Errorf("unchanged history: %v (%v hours), want %v hours", p, p.Hours(), want)
	}
}

func TestComputeClusterPeriods(t *testing.T) {
	daily := func(every int) []Observation {
		return dailyHistory(t0, 30, func(i int) bool { return i%every == 0 })
	}
	one := func(every int) time.Duration {
		p, ok := ObservedChangePeriod(&Datum{History: daily(every)})
		if !ok {
			t.Fatal("no period")
		}
		return p
	}
	ds := []Datum{
		{ClusterID: 0, ClusterSample: true, History: daily(2)},
		{ClusterID: 0, ClusterSample: true, History: daily(5)},
		{ClusterID: 0, ClusterSample: false, History: daily(1)},       // member: skipped
		{ClusterID: 1, ClusterSample: true, History: daily(3)},        //
		{ClusterID: 2, ClusterSample: true, History: nil},             // no period: cluster 2 absent
		{ClusterID: -1, ClusterSample: true, History: daily(1)},       // noise: skipped
		{ClusterID: 3, ClusterSample: false, History: daily(1)},       // no sample: absent
		{ClusterID: 1, ClusterSample: true, History: daily(3)[:1]},    // one fetch: skipped
		{ClusterID: 1, ClusterSample: true, History: daily(3)[:0]},    // none: skipped
		{ClusterID: 0, ClusterSample: true, History: []Observation{}}, // skipped
	}
	got := ComputeClusterPeriods(func(yield func(*Datum) bool) {
		for i := range ds {
			if !yield(&ds[i]) {
				return
			}
		}
	})
	mean := func(ps ...time.Duration) time.Duration {
		s := 0.0
		for _, p := range ps {
			s += p.Seconds()
		}
		return time.Duration(s / float64(len(ps)) * float64(time.Second)).Truncate(time.Millisecond)
	}
	want := ClusterPeriods{0: mean(one(2), one(5)), 1: one(3).Truncate(time.Millisecond)}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("periods %v, want %v", got, want)
	}
	// Accumulators over parts merge to the same result.
	var a, b PeriodAccumulator
	for i := range ds {
		if i%2 == 0 {
			a.Add(&ds[i])
		} else {
			b.Add(&ds[i])
		}
	}
	a.Merge(&b)
	if m := a.Periods(); len(m) != 2 || m[0] != want[0] || m[1] != want[1] || a.Samples(0) != 2 || a.Samples(7) != 0 {
		t.Errorf("merged periods %v (samples %d)", m, a.Samples(0))
	}
	var empty PeriodAccumulator
	empty.Merge(&a)
	if m := empty.Periods(); m[0] != want[0] {
		t.Errorf("merge into zero accumulator: %v", m)
	}
}

func BenchmarkDynamicSetFetchSchedule(b *testing.B) {
	s, err := NewDynamicSchedule(DefaultScheduleConfig(), ClusterPeriods{1: 48 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	fetch := t0.Add(100 * 24 * time.Hour)
	h := dailyHistory(fetch, HistoryLimit-1, func(i int) bool { return i%3 == 0 })
	for _, c := range []struct {
		name string
		d    Datum
	}{
		{"poisson", Datum{URL: "http://a.example/x/y", ClusterID: 1, History: h, ChangeCount: 30}},
		{"cluster", Datum{URL: "http://a.example/x/y", ClusterID: 1, History: h[:5], ChangeCount: 2}},
		{"adaptive", Datum{URL: "http://a.example/x/", ClusterID: -1, History: h[:5], ChangeCount: 2}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := c.d
				s.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, time.Time{}, StateNotModified)
			}
		})
	}
}

func TestChangeProbability(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := int32(24 * 3600)
	fetched := func(ago time.Duration, interval int32) Datum {
		return Datum{Status: StatusDBFetched, FetchInterval: interval,
			FetchTime: now.Add(-ago).Add(time.Duration(interval) * time.Second)}
	}
	cases := []struct {
		name string
		d    Datum
		want float64
	}{
		{"one interval ago", fetched(24*time.Hour, day), 1 - math.Exp(-1)},
		{"two intervals ago", fetched(48*time.Hour, day), 1 - math.Exp(-2)},
		{"a tenth of an interval ago", fetched(time.Hour, 10*3600), 1 - math.Exp(-0.1)},
		{"just fetched", fetched(0, day), 0},
		{"fetched in the future", fetched(-time.Hour, day), 0},
		{"never fetched", Datum{Status: StatusDBUnfetched, FetchInterval: day, FetchTime: now.Add(-time.Hour)}, 1},
		{"no interval", Datum{Status: StatusDBFetched, FetchTime: now.Add(-time.Hour)}, 1},
		{"never scheduled", Datum{Status: StatusDBNotModified, FetchInterval: day}, 1},
	}
	for _, c := range cases {
		if got := ChangeProbability(&c.d, now); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: ChangeProbability = %v, want %v", c.name, got, c.want)
		}
	}
	// A Poisson page of mean period I unchanged for t: the estimate matches
	// the share of simulated pages that changed within t.
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	changed := 0
	for range n {
		if rng.ExpFloat64() < 1.5 { // first change within 1.5 periods
			changed++
		}
	}
	d := fetched(36*time.Hour, day)
	if got, emp := ChangeProbability(&d, now), float64(changed)/n; math.Abs(got-emp) > 0.005 {
		t.Errorf("ChangeProbability %.4f, simulated share %.4f", got, emp)
	}
}

func TestDynamicGenerateSortValue(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := Datum{Status: StatusDBFetched, Score: 2, FetchInterval: 24 * 3600, FetchTime: now}
	// Fetched a day ago with a day's interval: rank 2·(1 - 1/e).
	want := float32(2 * (1 - math.Exp(-1)))
	for _, c := range []struct {
		rank   string
		mu     float64
		ranks  bool
		result float32
	}{
		{RankAuto, 0, true, want},
		{"", 0, true, want},
		{RankChange, 0, true, want},
		{RankChange, 0.5, true, want},
		{RankScore, 0, false, 2},
		{RankAuto, 0.5, false, 2},
	} {
		cfg := DefaultScheduleConfig()
		cfg.Dynamic.Rank, cfg.Dynamic.OptimalMu = c.rank, c.mu
		s, err := NewDynamicSchedule(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.GenerateSortValue(&d, now)
		if ok != c.ranks || math.Abs(float64(v-c.result)) > 1e-6 {
			t.Errorf("rank %q, mu %v: GenerateSortValue = %v, %v; want %v, %v", c.rank, c.mu, v, ok, c.result, c.ranks)
		}
	}
	s, _ := NewDynamicSchedule(DefaultScheduleConfig(), nil)
	var r Ranker = s
	// A page never fetched ranks by its score; a zero score stays zero.
	u := Datum{Status: StatusDBUnfetched, Score: 1.5, FetchInterval: 7 * 24 * 3600, FetchTime: now}
	if v, ok := r.GenerateSortValue(&u, now); !ok || v != 1.5 {
		t.Errorf("unfetched page: %v, %v; want 1.5", v, ok)
	}
	z := d
	z.Score = 0
	if v, _ := r.GenerateSortValue(&z, now); v != 0 {
		t.Errorf("zero score ranks %v", v)
	}
	// The adaptive and default schedules do not rank.
	for _, name := range []string{"default", "adaptive"} {
		sc, err := NewSchedule(name, DefaultScheduleConfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sc.(Ranker); ok {
			t.Errorf("%s ranks", name)
		}
	}
}
