package crawldb

import (
	"strings"
	"testing"
	"time"
)

// The expected numbers below were derived by hand from Nutch's
// AbstractFetchSchedule / DefaultFetchSchedule / AdaptiveFetchSchedule and
// cross-checked with the same arithmetic in Java (float, double and
// Math.round semantics), which is where values such as the 25 ms in
// 2280959975 come from: sync_delta_rate 0.3f widened to a double is
// 0.30000001192092896.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // 1767225600000 ms

const day = 86400

func mustSchedule(t *testing.T, name string, cfg ScheduleConfig) Schedule {
	t.Helper()
	s, err := NewSchedule(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func at(msAfterT0 int64) time.Time { return t0.Add(time.Duration(msAfterT0) * time.Millisecond) }

func TestDefaultScheduleConfig(t *testing.T) {
	c := DefaultScheduleConfig()
	if c.DefaultInterval != 30*24*time.Hour || c.MaxInterval != 90*24*time.Hour {
		t.Errorf("intervals %v %v", c.DefaultInterval, c.MaxInterval)
	}
	a := c.Adaptive
	if a.IncRate != 0.4 || a.DecRate != 0.2 || a.MinInterval != time.Minute || a.MaxInterval != 365*24*time.Hour || !a.SyncDelta || a.SyncDeltaRate != 0.3 {
		t.Errorf("adaptive %+v", a)
	}
}

func TestNewScheduleByName(t *testing.T) {
	for _, name := range ScheduleNames() {
		s := mustSchedule(t, name, DefaultScheduleConfig())
		if s.Name() != name {
			t.Errorf("NewSchedule(%q).Name() = %q", name, s.Name())
		}
	}
	if _, err := NewSchedule("oracle", DefaultScheduleConfig()); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("unknown schedule: err = %v", err)
	}
	bad := []func(c *ScheduleConfig){
		func(c *ScheduleConfig) { c.DefaultInterval = 0 },
		func(c *ScheduleConfig) { c.MaxInterval = 1500 * time.Millisecond },
		func(c *ScheduleConfig) { c.Adaptive.IncRate = 1 },
		func(c *ScheduleConfig) { c.Adaptive.DecRate = -0.1 },
		func(c *ScheduleConfig) { c.Adaptive.MinInterval = 400 * 24 * time.Hour },
	}
	for i, mutate := range bad {
		c := DefaultScheduleConfig()
		mutate(&c)
		if _, err := NewSchedule("adaptive", c); err == nil {
			t.Errorf("bad config %d accepted", i)
		}
	}
}

func TestAdaptiveSequence(t *testing.T) {
	s := mustSchedule(t, "adaptive", DefaultScheduleConfig())
	d := Datum{FetchInterval: 30 * day, Retries: 2}
	// Each fetch happens when due; the modification time passed is the one
	// stored, as updatedb passes it when the content did not change.
	steps := []struct {
		state    ChangeState
		interval int32
		next     int64 // ms after this fetch
		modified int64 // ms after t0
	}{
		// 30 d * 0.8f = 24 d; modified: M = F, no sync shift.
		{StateModified, 2073600, 2073600000, 0},
		// 24 d * 1.4f = 2903040 s; delta = 24 d, shift 0.3*delta = 622080025 ms.
		{StateNotModified, 2903040, 2280959975, 0},
		// 2903040*1.4f = 4064256 < delta 4354559 s: interval = delta.
		{StateNotModified, 4354559, 3048191248, 0},
		// unknown: interval kept, then raised to delta 7402751 s.
		{StateUnknown, 7402751, 5181925612, 0},
		// modified: 7402751*0.8f = 5922201 s; M = F.
		{StateModified, 5922201, 5922201000, 12584676835},
		{StateNotModified, 8291082, 6514421129, 12584676835},
		{StateNotModified, 12436622, 8705635252, 12584676835},
		{StateNotModified, 21142256, 14799578648, 12584676835},
	}
	fetch := t0
	for i, st := range steps {
		s.SetFetchSchedule(&d, time.Time{}, time.Time{}, fetch, d.ModifiedTime, st.state)
		if d.FetchInterval != st.interval {
			t.Errorf("step %d (%v): interval %d, want %d", i, st.state, d.FetchInterval, st.interval)
		}
		if got := d.FetchTime.Sub(fetch).Milliseconds(); got != st.next {
			t.Errorf("step %d (%v): next fetch after %d ms, want %d", i, st.state, got, st.next)
		}
		if got := d.ModifiedTime.Sub(t0).Milliseconds(); got != st.modified {
			t.Errorf("step %d (%v): modified at %d ms, want %d", i, st.state, got, st.modified)
		}
		if d.Retries != 0 || d.Source != SourceAdaptive {
			t.Errorf("step %d: retries %d source %q", i, d.Retries, d.Source)
		}
		fetch = d.FetchTime
	}
}

func TestAdaptiveCases(t *testing.T) {
	noSync := DefaultScheduleConfig()
	noSync.Adaptive.SyncDelta = false
	cases := []struct {
		name     string
		cfg      ScheduleConfig
		d        Datum
		modified time.Time
		state    ChangeState
		interval int32
		next     int64 // ms after t0 (the fetch time)
		modAfter int64 // stored ModifiedTime, ms after t0
		source   Source
	}{
		{name: "clamped at min_interval", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 70},
			state: StateModified, interval: 60, next: 60000, source: SourceAdaptive},
		{name: "clamped at max_interval", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 300 * day},
			modified: t0, state: StateNotModified, interval: 365 * day, next: 365 * day * 1000, source: SourceAdaptive},
		{name: "sync_delta raises interval to time since change", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 10 * day},
			modified: at(-100 * day * 1000), state: StateNotModified, interval: 100 * day,
			next: 8640000000 - 2592000103, modAfter: -100 * day * 1000, source: SourceAdaptive},
		{name: "unknown with sync_delta", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 10 * day},
			modified: at(-2 * day * 1000), state: StateUnknown, interval: 10 * day,
			next: 812159998, modAfter: -2 * day * 1000, source: SourceAdaptive},
		{name: "interval 0 uses the default", cfg: DefaultScheduleConfig(), d: Datum{},
			state: StateNotModified, interval: 3628800, next: 3628800000, source: SourceAdaptive},
		{name: "no sync_delta: only the rate", cfg: noSync, d: Datum{FetchInterval: 10 * day},
			modified: at(-100 * day * 1000), state: StateNotModified, interval: 14 * day,
			next: 14 * day * 1000, modAfter: -100 * day * 1000, source: SourceAdaptive},
		{name: "no sync_delta: not modified rounds", cfg: noSync, d: Datum{FetchInterval: 1000},
			state: StateNotModified, interval: 1400, next: 1400000, source: SourceAdaptive},
		{name: "no sync_delta: modified keeps fraction in fetch time", cfg: noSync, d: Datum{FetchInterval: 1001},
			state: StateModified, interval: 801, next: 800800, source: SourceAdaptive},
		{name: "fixed interval is kept", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 3600, FixedInterval: true},
			modified: at(-100 * day * 1000), state: StateNotModified, interval: 3600, next: 3600000,
			modAfter: -100 * day * 1000, source: SourceInjected},
		{name: "fixed interval below min_interval is kept", cfg: DefaultScheduleConfig(), d: Datum{FetchInterval: 5, FixedInterval: true},
			state: StateModified, interval: 5, next: 5000, modAfter: 0, source: SourceInjected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustSchedule(t, "adaptive", c.cfg)
			d := c.d
			d.Retries = 3
			s.SetFetchSchedule(&d, time.Time{}, time.Time{}, t0, c.modified, c.state)
			if d.FetchInterval != c.interval {
				t.Errorf("interval %d, want %d", d.FetchInterval, c.interval)
			}
			if got := d.FetchTime.Sub(t0).Milliseconds(); got != c.next {
				t.Errorf("next fetch %d ms after the fetch, want %d", got, c.next)
			}
			wantMod := at(c.modAfter)
			if c.modified.IsZero() && c.modAfter == 0 && c.d.FixedInterval {
				wantMod = time.Time{} // fixed: the unknown modification time stays unknown
			}
			if !d.ModifiedTime.Equal(wantMod) {
				t.Errorf("modified %v, want %v", d.ModifiedTime, wantMod)
			}
			if d.Retries != 0 || d.Source != c.source {
				t.Errorf("retries %d source %q, want 0 %q", d.Retries, d.Source, c.source)
			}
		})
	}
}

func TestDefaultSetFetchSchedule(t *testing.T) {
	s := mustSchedule(t, "default", DefaultScheduleConfig())
	for _, state := range []ChangeState{StateUnknown, StateModified, StateNotModified} {
		d := Datum{FetchInterval: 7 * day, Retries: 4}
		mod := at(-5000)
		s.SetFetchSchedule(&d, time.Time{}, time.Time{}, t0, mod, state)
		if d.FetchInterval != 7*day || !d.FetchTime.Equal(at(7*day*1000)) || !d.ModifiedTime.Equal(mod) || d.Retries != 0 || d.Source != SourceDefault {
			t.Errorf("%v: %+v", state, d)
		}
	}
	d := Datum{}
	s.SetFetchSchedule(&d, time.Time{}, time.Time{}, t0, time.Time{}, StateModified)
	if d.FetchInterval != 30*day || !d.FetchTime.Equal(at(30*day*1000)) || !d.ModifiedTime.IsZero() {
		t.Errorf("interval 0: %+v", d)
	}
}

func TestInitializeSchedule(t *testing.T) {
	for _, name := range []string{"default", "adaptive"} { // dynamic: TestDynamicInitializeSchedule
		s := mustSchedule(t, name, DefaultScheduleConfig())
		d := Datum{FetchInterval: 5, Retries: 3}
		now := t0.Add(1500 * time.Microsecond)
		s.InitializeSchedule(&d, now)
		if !d.FetchTime.Equal(at(1)) || d.FetchInterval != 30*day || d.Retries != 0 || string(d.Source) != name {
			t.Errorf("%s: %+v", name, d)
		}
		fixed := Datum{FetchInterval: 5, FixedInterval: true}
		s.InitializeSchedule(&fixed, now)
		if fixed.FetchInterval != 5 || fixed.Source != SourceInjected {
			t.Errorf("%s fixed: %+v", name, fixed)
		}
	}
}

func TestPageGoneSchedule(t *testing.T) {
	cases := []struct {
		interval, want int32
		fixed          bool
	}{
		{30 * day, 45 * day, false},
		{60 * day, 6998400, false},   // 90 d is not below the 90 d max: 0.9 * max
		{60*day + 1, 6998400, false}, //
		{90 * day, 6998400, false},   //
		{1, 2, false},                // 1.5 rounds up
		{0, 0, false},                // Nutch keeps 0 here
		{30 * day, 45 * day, true},   // fixed: delayed by the grown interval...
		{200 * day, 6998400, true},   // ...or 0.9 max
	}
	for _, name := range ScheduleNames() {
		s := mustSchedule(t, name, DefaultScheduleConfig())
		for _, c := range cases {
			d := Datum{FetchInterval: c.interval, FixedInterval: c.fixed}
			s.SetPageGoneSchedule(&d, time.Time{}, time.Time{}, t0)
			wantStored := c.want
			if c.fixed {
				wantStored = c.interval // ...but keeps its interval
			}
			if d.FetchInterval != wantStored || !d.FetchTime.Equal(at(int64(c.want)*1000)) {
				t.Errorf("%s: gone with interval %d (fixed %v): interval %d next %v, want %d next +%d s",
					name, c.interval, c.fixed, d.FetchInterval, d.FetchTime, wantStored, c.want)
			}
		}
	}
}

func TestPageRetrySchedule(t *testing.T) {
	for _, name := range ScheduleNames() {
		s := mustSchedule(t, name, DefaultScheduleConfig())
		d := Datum{FetchInterval: 30 * day, Retries: 2, Source: SourceCluster}
		s.SetPageRetrySchedule(&d, time.Time{}, time.Time{}, t0)
		if d.Retries != 3 || !d.FetchTime.Equal(t0.Add(24*time.Hour)) || d.FetchInterval != 30*day || d.Source != SourceCluster {
			t.Errorf("%s: %+v", name, d)
		}
	}
}

func TestCalculateLastFetchTime(t *testing.T) {
	s := mustSchedule(t, "adaptive", DefaultScheduleConfig())
	d := Datum{FetchTime: at(10 * day * 1000), FetchInterval: 3 * day}
	if got := s.CalculateLastFetchTime(&d); !got.Equal(at(7 * day * 1000)) {
		t.Errorf("got %v", got)
	}
	if got := s.CalculateLastFetchTime(&Datum{FetchInterval: 3}); !got.IsZero() {
		t.Errorf("never scheduled: got %v", got)
	}
}

func TestShouldFetch(t *testing.T) {
	cases := []struct {
		name         string
		d            Datum
		want         bool
		wantFetch    time.Time
		wantInterval int32
	}{
		{"due now", Datum{FetchTime: t0, FetchInterval: day}, true, t0, day},
		{"overdue", Datum{FetchTime: at(-1), FetchInterval: day}, true, at(-1), day},
		{"never scheduled", Datum{FetchInterval: day}, true, time.Time{}, day},
		{"not yet", Datum{FetchTime: at(1), FetchInterval: day}, false, at(1), day},
		{"at the max: not reset", Datum{FetchTime: at(90 * day * 1000), FetchInterval: 100 * day}, false, at(90 * day * 1000), 100 * day},
		{"too far: reset, interval lowered", Datum{FetchTime: at(90*day*1000 + 1), FetchInterval: 100 * day}, true, t0, 6998400},
		{"too far: reset, interval kept", Datum{FetchTime: at(91 * day * 1000), FetchInterval: 30 * day}, true, t0, 30 * day},
		{"too far, fixed: interval kept", Datum{FetchTime: at(400 * day * 1000), FetchInterval: 100 * day, FixedInterval: true}, true, t0, 100 * day},
	}
	for _, name := range ScheduleNames() {
		s := mustSchedule(t, name, DefaultScheduleConfig())
		for _, c := range cases {
			d := c.d
			want := c.want
			if name == "estimate" && c.name == "not yet" {
				want = true // due within the fill window (schedule.estimate.fill)
			}
			if got := s.ShouldFetch(&d, t0); got != want || !d.FetchTime.Equal(c.wantFetch) || d.FetchInterval != c.wantInterval {
				t.Errorf("%s: %s: got %v fetch %v interval %d, want %v %v %d", name, c.name, got, d.FetchTime, d.FetchInterval, want, c.wantFetch, c.wantInterval)
			}
		}
	}
}

func TestForceRefetch(t *testing.T) {
	s := mustSchedule(t, "default", DefaultScheduleConfig())
	d := Datum{Status: StatusDBFetched, FetchTime: at(5 * day * 1000), FetchInterval: 100 * day, Retries: 2,
		Signature: []byte{1}, ModifiedTime: at(-1000), Score: 2}
	s.ForceRefetch(&d, false, t0)
	if d.Status != StatusDBUnfetched || d.Retries != 0 || d.Signature != nil || !d.ModifiedTime.IsZero() ||
		d.FetchInterval != 6998400 || !d.FetchTime.Equal(at(5*day*1000)) || d.Score != 2 {
		t.Errorf("not asap: %+v", d)
	}
	d.FetchInterval = 10 * day
	s.ForceRefetch(&d, true, t0)
	if !d.FetchTime.Equal(t0) || d.FetchInterval != 10*day {
		t.Errorf("asap: %+v", d)
	}
}

func TestObserve(t *testing.T) {
	var d Datum
	d.Observe(time.Time{}, true, time.Time{})
	if len(d.History) != 0 || d.ChangeCount != 0 {
		t.Fatalf("zero time observed: %+v", d)
	}
	loc := time.FixedZone("X", 3600)
	for i := 0; i < HistoryLimit+5; i++ {
		d.Observe(t0.Add(time.Duration(i)*time.Hour+time.Microsecond).In(loc), i%3 == 0, time.Time{})
	}
	if len(d.History) != HistoryLimit {
		t.Fatalf("history has %d entries, want %d", len(d.History), HistoryLimit)
	}
	// 37 observations, the first 5 dropped: oldest kept is hour 5.
	if first := d.History[0]; !first.Time.Equal(t0.Add(5*time.Hour)) || first.Changed || first.Time.Location() != time.UTC {
		t.Errorf("oldest kept %+v", first)
	}
	if last := d.History[HistoryLimit-1]; !last.Time.Equal(t0.Add(36*time.Hour)) || !last.Changed {
		t.Errorf("newest %+v", last)
	}
	if d.ChangeCount != 13 { // i = 0, 3, ..., 36
		t.Errorf("change count %d, want 13", d.ChangeCount)
	}
	// A copy keeps its own history.
	cp := d
	cp.History = cp.History[:5]
	cp.Observe(t0, false, time.Time{})
	if d.History[5].Time.Equal(t0) {
		t.Error("Observe wrote into a shared backing array")
	}
}
