package crawldb

import (
	"fmt"
	"iter"
	"math"
	"strings"
	"time"

	"github.com/trawl/trawl/poisson"
)

// KindIntervals are the adaptive intervals of one page kind: a new page's
// interval (Initial) and the bounds the adaptive method, the cluster
// period and the Poisson interval are clamped to (Min, Max).
type KindIntervals struct {
	Initial time.Duration
	Min     time.Duration
	Max     time.Duration
}

// DynamicConfig configures DynamicSchedule (the settings
// schedule.dynamic.*). It is comparable, so ScheduleConfig stays
// comparable. The zero value means DefaultDynamicConfig().
type DynamicConfig struct {
	// MaxChanges is the change count up to which a page is young: a page
	// with more observed changes (ChangeCount, this fetch's included) is
	// scheduled by its own Poisson estimate (Hu and Wu's 16).
	MaxChanges int
	// Kinds are the intervals of each PageKind, indexed by it.
	Kinds [NumKinds]KindIntervals
	// PoissonScale multiplies the estimated mean change period 1/λ to give
	// an old page's interval (poisson.SeedInterval's scale; 1 is Hu and
	// Wu's rule: revisit after the mean change period). It must be
	// positive.
	PoissonScale float64
	// OptimalMu, when positive, replaces Hu and Wu's rule for old pages by
	// the freshness-optimal allocation: the page's interval is
	// 1/poisson.OptimalFrequency(OptimalMu, λ, 1, cfg) with cfg's MinFreq
	// and MaxFreq the kind's 1/Max and 1/Min. OptimalMu is the Lagrange
	// multiplier (poisson.Allocation.Multiplier) of an allocation computed
	// with rates and frequencies per DAY (so its unit is days). A page too
	// fast to keep fresh at that multiplier gets the kind's Max interval,
	// the allocation's minimum-rate rule. 0 turns it off.
	OptimalMu float64
	// UnchangedFactor bounds how soon a young page that has never been
	// seen to change is revisited: its interval is at least this times
	// the span of its history (first fetch to this one), up to its kind's
	// Max. 0 turns the bound off. Without it a static page costs a wasted
	// fetch every few adaptive steps (the adaptive method grows an interval
	// by only inc_rate per unchanged fetch, and a cluster period knows
	// nothing of the page); with it the page backs off geometrically (by
	// 1+UnchangedFactor per fetch) on the evidence it gives itself. A
	// Poisson process of rate λ survives a span S unchanged with
	// probability e^(-λS), so a long unchanged span is strong evidence of a
	// slow page (see DefaultDynamicConfig for what it gains).
	UnchangedFactor float64
	// Rank is the order of the due pages in a fetch list (the setting
	// schedule.dynamic.rank): RankChange, RankScore, or RankAuto (and ""):
	// RankChange, but RankScore when OptimalMu is set. See
	// DynamicSchedule.GenerateSortValue.
	Rank string
}

// The orders of DynamicConfig.Rank.
const (
	// RankAuto is RankChange, or RankScore with the optimal allocation.
	RankAuto = "auto"
	// RankChange ranks due pages by score times ChangeProbability: the
	// pages most likely to have changed since their last fetch first.
	RankChange = "change"
	// RankScore leaves the order to the score (Nutch's generator).
	RankScore = "score"
)

// RankNames lists the values DynamicConfig.Rank accepts.
func RankNames() []string { return []string{RankAuto, RankChange, RankScore} }

// DefaultDynamicConfig returns the dynamic schedule's defaults:
// MaxChanges 16 (Hu and Wu), PoissonScale 1 (their rule), OptimalMu 0
// (off) and these intervals (initial / min / max):
//
//	home       1 day    1 hour    7 days
//	directory  3 days   6 hours   30 days
//	other      7 days   1 day     90 days
//
// Why: a site's home page is where new content is announced, so it
// changes most often (news front pages several times a day) and is worth
// a daily first revisit, with a 1-hour floor below a daily crawl round so
// the adaptive method can follow a fast page, and a week's ceiling because
// missing the home page's changes hides the rest of the site's. Directory
// pages (listings) change when a child page is added: days, not hours,
// with a month's ceiling. Other pages (articles, documents) rarely change
// after publication, so they start at a week and may back off to 90 days,
// which is db.fetch.interval.max's default, so an interval never exceeds
// the maximum that forces a refetch. Every initial interval is well below
// Nutch's 30-day db.fetch.interval.default: Hu and Wu's complaint is that
// young pages are revisited too rarely to learn anything in the first
// month.
func DefaultDynamicConfig() DynamicConfig {
	const day = 24 * time.Hour
	return DynamicConfig{
		MaxChanges: 16,
		Kinds: [NumKinds]KindIntervals{
			KindHome:      {Initial: day, Min: time.Hour, Max: 7 * day},
			KindDirectory: {Initial: 3 * day, Min: 6 * time.Hour, Max: 30 * day},
			KindOther:     {Initial: 7 * day, Min: day, Max: 90 * day},
		},
		PoissonScale:    1,
		UnchangedFactor: 3,
		Rank:            RankAuto,
	}
}

// ClusterPeriods maps a DBSCAN cluster id to the mean observed change
// period of the cluster's samples (see ComputeClusterPeriods). A cluster
// without any sample period is absent.
type ClusterPeriods map[int32]time.Duration

// DynamicSchedule is the dynamic selection strategy of Hu and Wu's page-update prediction paper:
// young pages are scheduled through their DBSCAN cluster, old pages by
// their own Poisson estimate. On a successful fetch (SetFetchSchedule) the
// first rule that applies sets the interval:
//
//  1. FixedInterval: the interval is kept (Source injected), as in the
//     other schedules.
//  2. M > MaxChanges, with M the page's ChangeCount counting this fetch if
//     it saw a change: the page's own change rate λ is estimated from its
//     History plus this fetch (poisson.FromHistory, DefaultConfig; planned
//     with Estimate.ScheduleRate) and the interval is
//     poisson.SeedInterval(λ, Min, Max, PoissonScale), or with OptimalMu
//     the freshness-optimal frequency's interval (see DynamicConfig).
//     Source poisson.
//  3. The page is a sample of a cluster (ClusterSample and ClusterID >= 0):
//     Nutch's adaptive method (AdaptiveSchedule with ScheduleConfig's
//     rates and sync delta) with its kind's Initial as default interval
//     and Min and Max as bounds. Source adaptive.
//  4. ClusterID >= 0 and the cluster has a period: the interval is the
//     period, clamped to the kind's [Min, Max]. Source cluster.
//  5. Otherwise (noise, never clustered, a cluster without a period): the
//     adaptive method of rule 3. Source adaptive.
//
// In rules 3 to 5 a page never seen to change (M = 0) gets at least
// UnchangedFactor times the span of its history (see DynamicConfig): trawl's
// addition to the seed, which wastes fewer fetches on static pages.
//
// In rules 2 and 4 the next fetch is the fetch time plus the interval, and
// the modification time is the fetch time if the page changed, else the
// given one (the fetch time if unknown), as in the adaptive method. A new
// page (InitializeSchedule) gets its kind's Initial interval. Gone and
// retry schedules, ShouldFetch and ForceRefetch are the other schedules'
// (AbstractFetchSchedule's), with ScheduleConfig's MaxInterval.
//
// The fetch being scheduled counts as observed whether or not the caller
// has already recorded it: if History's last entry is at fetchTime (to the
// millisecond) the fetch is taken as recorded (Datum.Observe before
// SetFetchSchedule, as a simulator may do), otherwise it is added to the
// history the estimate sees and to M (updatedb's order: the schedule, then
// Observe). A fetch with StateUnknown is not an observation.
//
// Where this differs from the paper: the paper gives no estimator, so
// rule 2 uses trawl's (the smoothed irregular maximum-likelihood estimate,
// see package poisson), and a cluster's period is the mean of its samples'
// Poisson estimates of 1/λ (ObservedChangePeriod), not their raw mean
// time between observed changes, which overstates the period of pages
// fetched less often than they change; cluster periods and Poisson
// intervals are clamped to the kind's bounds (the paper bounds only the
// samples' adaptive intervals); a cluster whose samples have no period
// yet leaves its members on the adaptive method (the paper assumes every
// sample has one); the optimal allocation (OptimalMu) is trawl's
// extension, from Cho and Garcia-Molina.
//
// A DynamicSchedule is safe for concurrent use: it holds its configuration
// and its own copy of the periods.
type DynamicSchedule struct {
	baseSchedule
	cfg     DynamicConfig
	kinds   [NumKinds]*AdaptiveSchedule
	periods ClusterPeriods
	est     poisson.Config
	// byChange: GenerateSortValue ranks by change probability.
	byChange bool
}

// NewDynamicSchedule returns a DynamicSchedule with cfg.Dynamic (the
// defaults if it is the zero value) and the cluster periods (nil: none,
// so every young page falls back to the adaptive method). The periods are
// copied.
func NewDynamicSchedule(cfg ScheduleConfig, periods ClusterPeriods) (*DynamicSchedule, error) {
	b, err := newBase(cfg, SourceAdaptive)
	if err != nil {
		return nil, err
	}
	dc := cfg.Dynamic
	if dc == (DynamicConfig{}) {
		dc = DefaultDynamicConfig()
	}
	if dc.MaxChanges < 0 || dc.MaxChanges > math.MaxInt32 {
		return nil, fmt.Errorf("crawldb: schedule config: Dynamic.MaxChanges must be >= 0, not %d", dc.MaxChanges)
	}
	if !(dc.PoissonScale > 0) || math.IsInf(dc.PoissonScale, 1) {
		return nil, fmt.Errorf("crawldb: schedule config: Dynamic.PoissonScale must be positive and finite, not %v", dc.PoissonScale)
	}
	if !(dc.UnchangedFactor >= 0) || math.IsInf(dc.UnchangedFactor, 1) {
		return nil, fmt.Errorf("crawldb: schedule config: Dynamic.UnchangedFactor must be >= 0 and finite, not %v", dc.UnchangedFactor)
	}
	if !(dc.OptimalMu >= 0) || math.IsInf(dc.OptimalMu, 1) {
		return nil, fmt.Errorf("crawldb: schedule config: Dynamic.OptimalMu must be >= 0 and finite, not %v", dc.OptimalMu)
	}
	switch dc.Rank {
	case "", RankAuto:
		dc.Rank = RankAuto
	case RankChange, RankScore:
	default:
		return nil, fmt.Errorf("crawldb: schedule config: Dynamic.Rank must be one of %s, not %q", strings.Join(RankNames(), ", "), dc.Rank)
	}
	s := &DynamicSchedule{baseSchedule: b, cfg: dc, est: poisson.DefaultConfig(),
		byChange: dc.Rank == RankChange || (dc.Rank == RankAuto && dc.OptimalMu == 0)}
	for k := range NumKinds {
		ki := dc.Kinds[k]
		name := fmt.Sprintf("Dynamic.Kinds[%s]", PageKind(k))
		if ki.Min > ki.Initial || ki.Initial > ki.Max {
			return nil, fmt.Errorf("crawldb: schedule config: %s: want Min <= Initial <= Max, have %v, %v, %v", name, ki.Min, ki.Initial, ki.Max)
		}
		if ki.Max > cfg.MaxInterval {
			return nil, fmt.Errorf("crawldb: schedule config: %s: Max %v exceeds MaxInterval (db.fetch.interval.max) %v, which would force a refetch of every page reaching it", name, ki.Max, cfg.MaxInterval)
		}
		kc := cfg
		kc.DefaultInterval = ki.Initial
		kc.Adaptive.MinInterval = ki.Min
		kc.Adaptive.MaxInterval = ki.Max
		a, err := NewAdaptiveSchedule(kc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.kinds[k] = a
	}
	if len(periods) > 0 {
		s.periods = make(ClusterPeriods, len(periods))
		for id, p := range periods {
			if id < 0 || p <= 0 {
				return nil, fmt.Errorf("crawldb: dynamic schedule: cluster %d has period %v (want a cluster id >= 0 and a positive period)", id, p)
			}
			s.periods[id] = p
		}
	}
	return s, nil
}

// Name returns "dynamic".
func (s *DynamicSchedule) Name() string { return "dynamic" }

// Config returns the dynamic configuration in use (the defaults if the
// ScheduleConfig's was the zero value).
func (s *DynamicSchedule) Config() DynamicConfig { return s.cfg }

// Period returns a cluster's period, if it has one.
func (s *DynamicSchedule) Period(cluster int32) (time.Duration, bool) {
	p, ok := s.periods[cluster]
	return p, ok
}

// InitializeSchedule makes d due at now with its kind's Initial interval
// (a FixedInterval datum keeps a non-zero interval) and no retries.
func (s *DynamicSchedule) InitializeSchedule(d *Datum, now time.Time) {
	s.kinds[PageKindOf(d.URL)].InitializeSchedule(d, now)
}

// SetFetchSchedule applies the rules in the type's documentation.
func (s *DynamicSchedule) SetFetchSchedule(d *Datum, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime time.Time, state ChangeState) {
	kind := PageKindOf(d.URL)
	adaptive := s.kinds[kind]
	if d.FixedInterval {
		adaptive.SetFetchSchedule(d, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime, state)
		return
	}
	add := state != StateUnknown && !fetchTime.IsZero() &&
		(len(d.History) == 0 || ms(d.History[len(d.History)-1].Time) != ms(fetchTime))
	m := int64(d.ChangeCount)
	if add && state == StateModified {
		m++
	}
	if m > int64(s.cfg.MaxChanges) {
		var buf [HistoryLimit + 1]Observation
		h := append(buf[:0], d.ChangeHistory()...)
		if add {
			h = append(h, Observation{Time: fromMS(ms(fetchTime)), Changed: state == StateModified})
		}
		if len(h) > HistoryLimit {
			h = h[len(h)-HistoryLimit:]
		}
		if est := poisson.FromHistory(h, observationAt, s.est); est.OK() {
			s.setInterval(d, fetchTime, modifiedTime, state, s.poissonInterval(est.ScheduleRate(), kind), SourcePoisson)
			return
		}
	}
	floor := s.unchangedFloor(d, m, fetchTime, kind)
	if d.ClusterID >= 0 && !d.ClusterSample {
		if p, ok := s.periods[d.ClusterID]; ok {
			k := s.cfg.Kinds[kind]
			s.setInterval(d, fetchTime, modifiedTime, state, min(max(p, floor, k.Min), k.Max), SourceCluster)
			return
		}
	}
	adaptive.SetFetchSchedule(d, prevFetchTime, prevModifiedTime, fetchTime, modifiedTime, state)
	if floor > time.Duration(d.FetchInterval)*time.Second {
		s.setInterval(d, fetchTime, modifiedTime, state, floor, SourceAdaptive)
	}
}

// GenerateSortValue implements Ranker. With DynamicConfig.Rank
// RankChange (the default without the optimal allocation) a due page's
// rank is its score times ChangeProbability, so that under a fetch budget
// (generate's topN) the pages most likely to have changed since their last
// fetch are fetched first and OPIC's importance still counts: the paper's
// aim, fewer fetches that find nothing new. A page never fetched ranks by
// its score alone. A page with a score of 0 or less ranks by its score,
// below every positive one. With RankScore, or RankAuto and OptimalMu set,
// it returns d.Score and false: the freshness-optimal allocation's
// intervals already say how often each page is worth fetching, and
// re-ranking would favour the fast-changing pages it deliberately fetches
// less.
//
// Measured with `trawl eval revisit` (see package revisit), where the
// budget binds: ranking by change probability rather than most overdue
// first halves the dynamic schedule's unchanged fetches per changed one.
func (s *DynamicSchedule) GenerateSortValue(d *Datum, now time.Time) (float32, bool) {
	if !s.byChange {
		return d.Score, false
	}
	if !(d.Score > 0) {
		return d.Score, true
	}
	return d.Score * float32(ChangeProbability(d, now)), true
}

// unchangedFloor is the shortest interval a young page that has never
// been seen to change may get (DynamicConfig.UnchangedFactor): the span
// from its first recorded fetch to fetchTime times the factor, capped by
// the kind's Max; 0 if the page has changed (m > 0) or has no span yet.
func (s *DynamicSchedule) unchangedFloor(d *Datum, m int64, fetchTime time.Time, kind PageKind) time.Duration {
	h := d.ChangeHistory()
	if m > 0 || len(h) == 0 || s.cfg.UnchangedFactor <= 0 {
		return 0
	}
	span := fetchTime.Sub(h[0].Time)
	if span <= 0 {
		return 0
	}
	k := s.cfg.Kinds[kind]
	f := float64(span) * s.cfg.UnchangedFactor
	if f >= float64(k.Max) {
		return k.Max
	}
	return time.Duration(f)
}

// poissonInterval is an old page's interval for a change rate per second.
func (s *DynamicSchedule) poissonInterval(rate float64, kind PageKind) time.Duration {
	k := s.cfg.Kinds[kind]
	if s.cfg.OptimalMu <= 0 {
		return poisson.SeedInterval(rate, k.Min, k.Max, s.cfg.PoissonScale)
	}
	const dayHours = 24
	minDays, maxDays := k.Min.Hours()/dayHours, k.Max.Hours()/dayHours
	f := poisson.OptimalFrequency(s.cfg.OptimalMu, rate*secondsPerDay, 1,
		poisson.AllocConfig{MinFreq: 1 / maxDays, MaxFreq: 1 / minDays})
	if !(f > 0) {
		return k.Max
	}
	days := 1 / f
	if days >= maxDays {
		return k.Max
	}
	return min(max(time.Duration(days*float64(24*time.Hour)), k.Min), k.Max)
}

// setInterval schedules d's next fetch one interval after fetchTime.
func (s *DynamicSchedule) setInterval(d *Datum, fetchTime, modifiedTime time.Time, state ChangeState, interval time.Duration, src Source) {
	d.Retries = 0
	fetchMS := ms(fetchTime)
	modMS := ms(modifiedTime)
	if modMS <= 0 || state == StateModified {
		modMS = fetchMS
	}
	sec := max(roundD(interval.Seconds()), 1)
	d.FetchInterval = int32(min(sec, math.MaxInt32))
	d.FetchTime = fromMS(fetchMS + interval.Milliseconds())
	d.ModifiedTime = fromMS(modMS)
	d.Source = src
}

// observationAt gives poisson.FromHistory an Observation's time and flag.
func observationAt(o Observation) (time.Time, bool) { return o.Time, o.Changed }

// ObservedChangePeriod is a page's observed mean change period: 1/λ with λ
// the Poisson estimate of its History (poisson.FromHistory with
// DefaultConfig, Estimate.ScheduleRate). It is false when the history has
// no usable interval (fewer than two fetches at distinct times).
//
// Why the estimate and not the history's span divided by its changes: a
// fetch sees at most one change however many happened since the previous
// fetch, so span/changes overstates the period of any page fetched less
// often than it changes (it can never be below the fetch interval), while
// the estimator corrects for the changes a fetch cannot see; on pages
// fetched much more often than they change the two agree. It is also the
// estimator of the schedule's rule for old pages, so a cluster's period
// and its members' later own estimates are comparable. A history that
// never saw a change gives the period at which half a change would have
// been expected (ScheduleRate), finite and longer than the span observed.
func ObservedChangePeriod(d *Datum) (time.Duration, bool) {
	est := poisson.FromHistory(d.ChangeHistory(), observationAt, poisson.DefaultConfig())
	if !est.OK() {
		return 0, false
	}
	rate := est.ScheduleRate()
	if !(rate > 0) || math.IsInf(rate, 1) {
		return 0, false
	}
	sec := 1 / rate
	if sec >= float64(math.MaxInt64/int64(time.Second)) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(sec * float64(time.Second)), true
}

// PeriodAccumulator sums the observed change periods of clusters' samples
// to compute ClusterPeriods over a stream of datums, part by part: the
// zero value is ready, Merge combines the accumulators of disjoint parts.
// It is not safe for concurrent use.
type PeriodAccumulator struct {
	sums map[int32]periodSum
}

type periodSum struct {
	seconds float64
	n       int64
}

// Add adds d's ObservedChangePeriod to its cluster if d is a sample
// (ClusterSample, ClusterID >= 0) with a period, and reports whether it
// did.
func (a *PeriodAccumulator) Add(d *Datum) bool {
	if !d.ClusterSample || d.ClusterID < 0 {
		return false
	}
	p, ok := ObservedChangePeriod(d)
	if !ok {
		return false
	}
	a.AddPeriod(d.ClusterID, p)
	return true
}

// AddPeriod adds one sample's period to a cluster. Negative cluster ids
// and non-positive periods are ignored.
func (a *PeriodAccumulator) AddPeriod(cluster int32, p time.Duration) {
	if cluster < 0 || p <= 0 {
		return
	}
	if a.sums == nil {
		a.sums = map[int32]periodSum{}
	}
	s := a.sums[cluster]
	s.seconds += p.Seconds()
	s.n++
	a.sums[cluster] = s
}

// Merge adds b's sums to a's.
func (a *PeriodAccumulator) Merge(b *PeriodAccumulator) {
	for id, s := range b.sums {
		if a.sums == nil {
			a.sums = map[int32]periodSum{}
		}
		t := a.sums[id]
		t.seconds += s.seconds
		t.n += s.n
		a.sums[id] = t
	}
}

// Samples returns how many sample periods a cluster has.
func (a *PeriodAccumulator) Samples(cluster int32) int64 { return a.sums[cluster].n }

// Periods returns each cluster's mean sample period, to the millisecond.
// Clusters without a sample period are absent.
func (a *PeriodAccumulator) Periods() ClusterPeriods {
	out := make(ClusterPeriods, len(a.sums))
	for id, s := range a.sums {
		mean := s.seconds / float64(s.n)
		if mean >= float64(math.MaxInt64/int64(time.Second)) {
			out[id] = time.Duration(math.MaxInt64).Truncate(time.Millisecond)
			continue
		}
		out[id] = max(time.Duration(mean*float64(time.Second)).Truncate(time.Millisecond), time.Millisecond)
	}
	return out
}

// ComputeClusterPeriods returns the mean ObservedChangePeriod of each
// cluster's samples among datums. Datums that are not samples
// (ClusterSample false or ClusterID < 0) or have no period are skipped;
// clusters without a sample period are absent.
func ComputeClusterPeriods(datums iter.Seq[*Datum]) ClusterPeriods {
	var a PeriodAccumulator
	for d := range datums {
		a.Add(d)
	}
	return a.Periods()
}

var _ Schedule = (*DynamicSchedule)(nil)
