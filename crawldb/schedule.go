package crawldb

import (
	"fmt"
	"math"
	"time"
)

// ChangeState says what a fetch learnt about a page's content (Nutch's
// FetchSchedule.STATUS_* constants, with the same values).
type ChangeState int

// The change states.
const (
	// StateUnknown: it is not known whether the page changed.
	StateUnknown ChangeState = 0
	// StateModified: the page changed since the previous fetch.
	StateModified ChangeState = 1
	// StateNotModified: the page did not change since the previous fetch.
	StateNotModified ChangeState = 2
)

// String names the state as Nutch's constant does, without the prefix.
func (s ChangeState) String() string {
	switch s {
	case StateUnknown:
		return "unknown"
	case StateModified:
		return "modified"
	case StateNotModified:
		return "notmodified"
	}
	return fmt.Sprintf("state_%d", int(s))
}

// secondsPerDay is Nutch's FetchSchedule.SECONDS_PER_DAY.
const secondsPerDay = 24 * 3600

// Schedule decides when a URL is due for fetching (Nutch's FetchSchedule).
// Its methods modify the datum in place; they never read the clock, the
// current time is a parameter. A Schedule is safe for concurrent use (the
// implementations here hold only their configuration).
//
// Times follow the Datum convention: the zero time means "never" and plays
// the role of Nutch's 0 milliseconds.
type Schedule interface {
	// Name is the name NewSchedule knows the schedule by.
	Name() string
	// InitializeSchedule prepares a new datum (inject, or a newly
	// discovered link): due now, the default interval, no retries.
	InitializeSchedule(d *Datum, now time.Time)
	// SetFetchSchedule sets the interval and next fetch time after a
	// successful fetch (200 or 304) at fetchTime, given the previous fetch
	// and modification times, the content's modification time as far as
	// known, and whether the content changed. It resets the retry count.
	SetFetchSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state ChangeState)
	// SetPageGoneSchedule reschedules a page found gone at fetchTime:
	// pages are never truly gone, they are tried again much later.
	SetPageGoneSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime time.Time)
	// SetPageRetrySchedule reschedules a page after a transient failure at
	// fetchTime and counts the retry.
	SetPageRetrySchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime time.Time)
	// CalculateLastFetchTime estimates when the page was last fetched:
	// its next fetch time minus its interval.
	CalculateLastFetchTime(d *Datum) time.Time
	// ShouldFetch reports whether the page may go into a fetch list
	// generated at now. A next fetch time more than the maximum interval
	// away is reset to now (and an interval above the maximum lowered), so
	// that such pages are fetched: it may modify d.
	ShouldFetch(d *Datum, now time.Time) bool
	// ForceRefetch makes the page unfetched, forgetting its retries,
	// signature and modification time; with asap it is due at now.
	ForceRefetch(d *Datum, asap bool, now time.Time)
}

// Ranker is implemented by a Schedule that orders the pages it finds due
// (as Nutch's ScoringFilter.generatorSortValue orders them): generate
// ranks its candidates by GenerateSortValue, highest first, instead of by
// the score alone.
type Ranker interface {
	// GenerateSortValue returns the rank of d in a fetch list generated
	// at now, after ShouldFetch(d, now) found it due. ok is false when the
	// schedule leaves the order to the score (v is then d.Score). It is a
	// function of the datum and now only, so that every task of a
	// generate computes the same value.
	GenerateSortValue(d *Datum, now time.Time) (v float32, ok bool)
}

// ChangeProbability is the probability that d's page changed since its
// last fetch, if it changes as a Poisson process with the mean period its
// interval: 1 - e^(-t/I), with t the time from the last fetch
// (CalculateLastFetchTime) to now and I the interval. A page never fetched
// (StatusDBUnfetched), or without an interval or a last fetch time, has
// probability 1: a first fetch always brings a version the CrawlDB lacks.
func ChangeProbability(d *Datum, now time.Time) float64 {
	if d.Status == StatusDBUnfetched || d.FetchInterval <= 0 || d.FetchTime.IsZero() {
		return 1
	}
	t := float64(ms(now)-ms(lastFetchTime(d))) / 1000
	if t <= 0 {
		return 0
	}
	return -math.Expm1(-t / float64(d.FetchInterval))
}

// ScheduleNames lists the names NewSchedule accepts.
func ScheduleNames() []string { return []string{"default", "adaptive", "dynamic", "estimate"} }

// NewSchedule returns the schedule called name ("default", "adaptive",
// "dynamic" or "estimate") with configuration cfg. A "dynamic" schedule
// made here has no cluster periods (NewDynamicSchedule takes them), so its
// young pages fall back to the adaptive method; an "estimate" schedule
// made here has no fitted model (NewEstimateSchedule takes one).
func NewSchedule(name string, cfg ScheduleConfig) (Schedule, error) {
	switch name {
	case "default":
		return NewDefaultSchedule(cfg)
	case "adaptive":
		return NewAdaptiveSchedule(cfg)
	case "dynamic":
		return NewDynamicSchedule(cfg, nil)
	case "estimate":
		return NewEstimateSchedule(cfg, nil)
	}
	return nil, fmt.Errorf("crawldb: unknown fetch schedule %q (known: %v)", name, ScheduleNames())
}

// ScheduleConfig configures the fetch schedules. Intervals are whole
// seconds (Nutch stores them as seconds).
type ScheduleConfig struct {
	// DefaultInterval is the interval of a new page, and of a page whose
	// interval is 0 (db.fetch.interval.default, 30 days).
	DefaultInterval time.Duration
	// MaxInterval is the longest a page may wait: a page due later than
	// now+MaxInterval is made due at once by ShouldFetch, and gone pages
	// are retried within it (db.fetch.interval.max, 90 days).
	MaxInterval time.Duration
	// Adaptive configures AdaptiveSchedule, and the adaptive method of
	// DynamicSchedule (whose intervals come from Dynamic.Kinds instead).
	Adaptive AdaptiveConfig
	// Dynamic configures DynamicSchedule; the zero value means
	// DefaultDynamicConfig().
	Dynamic DynamicConfig
	// Estimate configures EstimateSchedule; the zero value means
	// DefaultEstimateConfig().
	Estimate EstimateConfig
}

// AdaptiveConfig configures AdaptiveSchedule (Nutch's
// db.fetch.schedule.adaptive.* properties). The rates are used as 32-bit
// floats, as Nutch's Java code does, so that intervals match Nutch's to
// the second.
type AdaptiveConfig struct {
	// IncRate is the fraction an unchanged page's interval grows by
	// (inc_rate, 0.4).
	IncRate float64
	// DecRate is the fraction a changed page's interval shrinks by
	// (dec_rate, 0.2).
	DecRate float64
	// MinInterval and MaxInterval bound the adapted interval
	// (min_interval 60 s, max_interval 365 days).
	MinInterval time.Duration
	MaxInterval time.Duration
	// SyncDelta, when true, moves the next fetch earlier by SyncDeltaRate
	// times the time since the last change, and raises the interval to at
	// least that time (sync_delta, true; sync_delta_rate, 0.3).
	SyncDelta     bool
	SyncDeltaRate float64
}

// DefaultScheduleConfig returns Nutch's defaults (nutch-default.xml), and
// DefaultDynamicConfig() for the dynamic schedule.
func DefaultScheduleConfig() ScheduleConfig {
	return ScheduleConfig{
		DefaultInterval: 30 * 24 * time.Hour,
		MaxInterval:     90 * 24 * time.Hour,
		Adaptive: AdaptiveConfig{
			IncRate:       0.4,
			DecRate:       0.2,
			MinInterval:   60 * time.Second,
			MaxInterval:   365 * 24 * time.Hour,
			SyncDelta:     true,
			SyncDeltaRate: 0.3,
		},
		Dynamic:  DefaultDynamicConfig(),
		Estimate: DefaultEstimateConfig(),
	}
}

// seconds converts a configured interval to whole seconds, checking it.
func seconds(name string, d time.Duration) (int32, error) {
	if d <= 0 || d%time.Second != 0 || d/time.Second > math.MaxInt32 {
		return 0, fmt.Errorf("crawldb: schedule config: %s must be a positive whole number of seconds below 68 years, not %v", name, d)
	}
	return int32(d / time.Second), nil
}

// validate checks the settings every schedule uses.
func (c ScheduleConfig) validate() (defaultSec, maxSec int32, err error) {
	if defaultSec, err = seconds("DefaultInterval (db.fetch.interval.default)", c.DefaultInterval); err != nil {
		return 0, 0, err
	}
	if maxSec, err = seconds("MaxInterval (db.fetch.interval.max)", c.MaxInterval); err != nil {
		return 0, 0, err
	}
	return defaultSec, maxSec, nil
}

// ms converts a time to Nutch's milliseconds, the zero time to 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts Nutch's milliseconds to a UTC time, 0 to the zero time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// roundF is Java's Math.round(float) for the values schedules produce:
// the nearest integer, halves rounded up.
func roundF(f float32) int32 {
	return int32(math.Floor(float64(f) + 0.5))
}

// roundD is Java's Math.round(double): the nearest integer, halves
// rounded up, computed without the error of floor(x+0.5).
func roundD(x float64) int64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return int64(r)
}

// baseSchedule holds what every schedule shares (Nutch's
// AbstractFetchSchedule): everything but SetFetchSchedule.
type baseSchedule struct {
	defaultInterval int32 // seconds
	maxInterval     int32 // seconds
	source          Source
}

func newBase(cfg ScheduleConfig, source Source) (baseSchedule, error) {
	def, max, err := cfg.validate()
	if err != nil {
		return baseSchedule{}, err
	}
	return baseSchedule{defaultInterval: def, maxInterval: max, source: source}, nil
}

// setSource records which schedule set the interval: the schedule itself,
// or the injector for a fixed interval.
func (s *baseSchedule) setSource(d *Datum) {
	if d.FixedInterval {
		d.Source = SourceInjected
		return
	}
	d.Source = s.source
}

// lowered is 90% of the maximum interval, rounded to whole seconds.
func (s *baseSchedule) lowered() int32 { return roundF(float32(s.maxInterval) * 0.9) }

// InitializeSchedule makes d due at now with the default interval and no
// retries (AbstractFetchSchedule.initializeSchedule). A FixedInterval datum
// keeps a non-zero interval.
func (s *baseSchedule) InitializeSchedule(d *Datum, now time.Time) {
	d.FetchTime = fromMS(ms(now))
	if !d.FixedInterval || d.FetchInterval == 0 {
		d.FetchInterval = s.defaultInterval
	}
	d.Retries = 0
	s.setSource(d)
}

// SetPageGoneSchedule grows the interval by half, or sets it to 90% of the
// maximum interval if it would reach the maximum, and makes d due one
// (new) interval after fetchTime (AbstractFetchSchedule.setPageGoneSchedule).
//
// Deliberate difference: Nutch grows a fixed interval too and restores it
// from metadata at the next successful fetch; here FetchInterval is the
// fixed value itself, so for a FixedInterval datum the next fetch is
// delayed by the grown interval but FetchInterval is kept.
func (s *baseSchedule) SetPageGoneSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime time.Time) {
	interval := s.lowered()
	if grown := float32(d.FetchInterval) * 1.5; grown < float32(s.maxInterval) {
		interval = roundF(grown)
	}
	if !d.FixedInterval {
		d.FetchInterval = interval
	}
	d.FetchTime = fromMS(ms(fetchTime) + int64(interval)*1000)
	s.setSource(d)
}

// SetPageRetrySchedule makes d due one day after fetchTime and counts the
// retry (AbstractFetchSchedule.setPageRetrySchedule). Unlike Nutch's byte
// counter, Retries does not wrap at 127.
func (s *baseSchedule) SetPageRetrySchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime time.Time) {
	d.FetchTime = fromMS(ms(fetchTime) + secondsPerDay*1000)
	if d.Retries < math.MaxInt32 {
		d.Retries++
	}
}

// CalculateLastFetchTime returns d's next fetch time minus its interval
// (AbstractFetchSchedule.calculateLastFetchTime). For a datum never
// scheduled (zero FetchTime) it returns the zero time.
func (s *baseSchedule) CalculateLastFetchTime(d *Datum) time.Time { return lastFetchTime(d) }

// lastFetchTime is CalculateLastFetchTime, which needs no schedule.
func lastFetchTime(d *Datum) time.Time {
	if d.FetchTime.IsZero() {
		return time.Time{}
	}
	return fromMS(ms(d.FetchTime) - int64(d.FetchInterval)*1000)
}

// ShouldFetch reports whether d is due at now (FetchTime <= now). A
// FetchTime more than the maximum interval after now is first reset to
// now, and an interval above the maximum set to 90% of it (not a
// FixedInterval) (AbstractFetchSchedule.shouldFetch).
func (s *baseSchedule) ShouldFetch(d *Datum, now time.Time) bool {
	cur := ms(now)
	if ms(d.FetchTime)-cur > int64(s.maxInterval)*1000 {
		if d.FetchInterval > s.maxInterval && !d.FixedInterval {
			d.FetchInterval = s.lowered()
		}
		d.FetchTime = fromMS(cur)
	}
	return ms(d.FetchTime) <= cur
}

// ForceRefetch lowers an interval above the maximum to 90% of it (not a
// FixedInterval), makes d unfetched with no retries, signature or
// modification time, and with asap makes it due at now
// (AbstractFetchSchedule.forceRefetch).
func (s *baseSchedule) ForceRefetch(d *Datum, asap bool, now time.Time) {
	if d.FetchInterval > s.maxInterval && !d.FixedInterval {
		d.FetchInterval = s.lowered()
	}
	d.Status = StatusDBUnfetched
	d.Retries = 0
	d.Signature = nil
	d.ModifiedTime = time.Time{}
	if asap {
		d.FetchTime = fromMS(ms(now))
	}
}

// DefaultSchedule is Nutch's DefaultFetchSchedule: the interval never
// adapts; a fetched page is due again one interval after the fetch.
type DefaultSchedule struct {
	baseSchedule
}

// NewDefaultSchedule returns a DefaultSchedule.
func NewDefaultSchedule(cfg ScheduleConfig) (*DefaultSchedule, error) {
	b, err := newBase(cfg, SourceDefault)
	if err != nil {
		return nil, err
	}
	return &DefaultSchedule{b}, nil
}

// Name returns "default".
func (s *DefaultSchedule) Name() string { return "default" }

// SetFetchSchedule resets the retries, gives an interval of 0 the default
// interval, makes d due one interval after fetchTime, and sets its
// modification time to modifiedTime (DefaultFetchSchedule).
func (s *DefaultSchedule) SetFetchSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state ChangeState) {
	d.Retries = 0
	if d.FetchInterval == 0 {
		d.FetchInterval = s.defaultInterval
	}
	d.FetchTime = fromMS(ms(fetchTime) + int64(d.FetchInterval)*1000)
	d.ModifiedTime = fromMS(ms(modifiedTime))
	s.setSource(d)
}

// AdaptiveSchedule is Nutch's AdaptiveFetchSchedule: a changed page's
// interval shrinks by DecRate, an unchanged page's grows by IncRate, within
// [MinInterval, MaxInterval]; with SyncDelta the next fetch is pulled
// towards the page's time of change. Everything but SetFetchSchedule is as
// in DefaultSchedule.
//
// A datum with FixedInterval keeps its interval (Nutch's fixedInterval
// metadata); if that interval is 0 the default interval is used.
type AdaptiveSchedule struct {
	baseSchedule
	incRate, decRate         float32
	minInterval, maxAdaptive float32 // seconds: MinInterval, Adaptive.MaxInterval
	syncDelta                bool
	syncDeltaRate            float64 // a float32 widened, as in Nutch
}

// NewAdaptiveSchedule returns an AdaptiveSchedule.
func NewAdaptiveSchedule(cfg ScheduleConfig) (*AdaptiveSchedule, error) {
	b, err := newBase(cfg, SourceAdaptive)
	if err != nil {
		return nil, err
	}
	a := cfg.Adaptive
	minSec, err := seconds("Adaptive.MinInterval (db.fetch.schedule.adaptive.min_interval)", a.MinInterval)
	if err != nil {
		return nil, err
	}
	maxSec, err := seconds("Adaptive.MaxInterval (db.fetch.schedule.adaptive.max_interval)", a.MaxInterval)
	if err != nil {
		return nil, err
	}
	if minSec > maxSec {
		return nil, fmt.Errorf("crawldb: schedule config: Adaptive.MinInterval %v exceeds Adaptive.MaxInterval %v", a.MinInterval, a.MaxInterval)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"IncRate", a.IncRate}, {"DecRate", a.DecRate}, {"SyncDeltaRate", a.SyncDeltaRate}} {
		if !(r.v >= 0 && r.v < 1) {
			return nil, fmt.Errorf("crawldb: schedule config: Adaptive.%s must be in [0, 1), not %v", r.name, r.v)
		}
	}
	return &AdaptiveSchedule{
		baseSchedule:  b,
		incRate:       float32(a.IncRate),
		decRate:       float32(a.DecRate),
		minInterval:   float32(minSec),
		maxAdaptive:   float32(maxSec),
		syncDelta:     a.SyncDelta,
		syncDeltaRate: float64(float32(a.SyncDeltaRate)),
	}, nil
}

// Name returns "adaptive".
func (s *AdaptiveSchedule) Name() string { return "adaptive" }

// SetFetchSchedule adapts d's interval to state and schedules the next
// fetch (AdaptiveFetchSchedule.setFetchSchedule). With an interval I (the
// default if 0), fetch time F and modification time M (F if unknown):
//
//   - modified: I *= 1-DecRate and M = F; not modified: I *= 1+IncRate;
//     unknown: I stays;
//   - with SyncDelta, delta = F-M: I = max(I, delta) and the reference
//     time R = F - delta*SyncDeltaRate, else R = F;
//   - I is clamped to [MinInterval, MaxInterval];
//   - the next fetch is R + I and the modification time M.
//
// The stored interval is I rounded to whole seconds; the next fetch time
// uses I unrounded (in milliseconds), as Nutch does. With FixedInterval, I
// is kept and M is stored as given.
func (s *AdaptiveSchedule) SetFetchSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state ChangeState) {
	d.Retries = 0
	interval := float32(d.FetchInterval)
	if d.FetchInterval == 0 {
		interval = float32(s.defaultInterval)
	}
	fetchMS, modMS := ms(fetchTime), ms(modifiedTime)
	refMS := fetchMS
	if !d.FixedInterval {
		if modMS <= 0 {
			modMS = fetchMS
		}
		switch state {
		case StateModified:
			interval = float32(interval * (1 - s.decRate))
			modMS = fetchMS
		case StateNotModified:
			interval = float32(interval * (1 + s.incRate))
		}
		if s.syncDelta {
			delta := (fetchMS - modMS) / 1000
			if float32(delta) > interval {
				interval = float32(delta)
			}
			refMS = fetchMS - roundD(float64(delta)*s.syncDeltaRate*1000)
		}
		if interval < s.minInterval {
			interval = s.minInterval
		} else if interval > s.maxAdaptive {
			interval = s.maxAdaptive
		}
	}
	d.FetchInterval = roundF(interval)
	d.FetchTime = fromMS(refMS + roundD(float64(interval)*1000))
	d.ModifiedTime = fromMS(modMS)
	s.setSource(d)
}

var (
	_ Schedule = (*DefaultSchedule)(nil)
	_ Schedule = (*AdaptiveSchedule)(nil)
)
