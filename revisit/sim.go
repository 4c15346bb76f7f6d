package revisit

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// Policy names.
const (
	PolicyDefault    = "default"     // Nutch's DefaultFetchSchedule
	PolicyAdaptive   = "adaptive"    // Nutch's AdaptiveFetchSchedule
	PolicyDynamic    = "dynamic"     // Hu and Wu's dynamic selection strategy
	PolicyDynamicOpt = "dynamic-opt" // dynamic with the freshness-optimal allocation for old pages
	PolicyOracle     = "oracle"      // true rates, freshness-optimal allocation
	// PolicyDynamicAlloc is an experiment, not the paper's strategy and
	// not in PolicyNames: dynamic-opt whose young pages also get the
	// freshness-optimal interval of their estimated rate.
	PolicyDynamicAlloc = "dynamic-alloc"
	// PolicyEstimate estimates every page's rate from its own history,
	// shrunk toward a prior fitted to the other pages (empirical Bayes),
	// and allocates the budget over the estimates with poisson.Allocate.
	PolicyEstimate = "estimate"
	// PolicyEstimatePrior is a bound, not a schedule a crawler can run,
	// and not in PolicyNames: estimate whose group priors are the
	// distributions of the groups' true rates (what a perfect prior fit
	// would give).
	PolicyEstimatePrior = "estimate-prior"
)

// PolicyNames lists the policies Run knows, in the order of the table.
func PolicyNames() []string {
	return []string{PolicyDefault, PolicyAdaptive, PolicyDynamic, PolicyDynamicOpt, PolicyOracle, PolicyEstimate}
}

// Defaults of Config's zero fields.
const (
	DefaultDays          = 90
	DefaultBudgetShare   = 0.10
	DefaultRecluster     = 7
	DefaultEps           = 0.25
	DefaultMinPts        = 12
	DefaultMinSamples    = 5
	DefaultSampleRate    = 0.05
	DefaultFetchLag      = time.Minute
	DefaultMaxChanges    = 16
	defaultOracleMaxFreq = 1.0 // per day: one fetch per daily round
)

// Config configures Run. Zero fields take the defaults above.
type Config struct {
	// Days is the number of simulated days, one crawl round per day at
	// Start + d days (default 90).
	Days int
	// Budget is the most fetches per round (default 10% of the pages,
	// rounded up). A round fetches at most Budget of the due pages; budget
	// a round does not use is lost (not carried over), as a crawler with
	// nothing due idles.
	Budget int
	// Policies are the policies to run (default PolicyNames()).
	Policies []string
	// Schedule configures the crawldb schedules (default
	// crawldb.DefaultScheduleConfig(): Nutch's defaults, and the dynamic
	// schedule's).
	Schedule *crawldb.ScheduleConfig
	// Recluster is the number of days between DBSCAN runs of the dynamic
	// policies (default 7); the first is on day Recluster.
	Recluster int
	// Eps and MinPts are DBSCAN's parameters for the dynamic policies.
	// Eps 0 means DefaultEps, a negative Eps dbscan.SuggestEps's
	// k-distance knee of each run's points; MinPts 0 means DefaultMinPts.
	Eps    float64
	MinPts int
	// MinSamples (K) and SampleRate (R) choose each cluster's samples:
	// max(K, ceil(R·size)) members nearest the centre (defaults 5 and
	// 0.05). A negative SampleRate means 0.
	MinSamples int
	SampleRate float64
	// FetchLag is how long after a round's start its fetches happen
	// (default one minute). A real crawl fetches after the round's
	// generate, so a page due exactly one interval after its fetch is
	// due just after the next round's time; a positive lag reproduces
	// that. Negative means 0.
	FetchLag time.Duration
	// Workers bounds the policies simulated at once (default GOMAXPROCS).
	Workers int
	// Log receives progress; nil means slog.Default().
	Log *slog.Logger
	// Trace, if set, is called for every simulated fetch with the policy,
	// the round's day, the page (index into Truth.Pages) and the change
	// state updatedb saw. Policies run concurrently: Trace must be safe
	// for concurrent use.
	Trace func(policy string, day, page int, state crawldb.ChangeState)
	// Final, if set, is called at the end of each policy's simulation
	// with its datums, indexed as Truth.Pages (read only; the call may
	// come from several goroutines at once). Neither Trace nor Final sees
	// the tuning search's trial simulations.
	Final func(policy string, datums []crawldb.Datum)
	// NoTune turns the baselines' tuning off: the default and adaptive
	// policies run with Schedule.DefaultInterval as given (Nutch's 30
	// days unless Schedule says otherwise). By default Run first searches,
	// for each of them, the initial interval that spends the budget (see
	// the package documentation, "Equal budgets"), so that every policy
	// is compared at the same number of fetches.
	NoTune bool
	// Budgets are the budget shares of Sweep: each a fraction of the
	// pages in (0, 1], the daily budget being that share of the pages
	// rounded up. Run takes one Budget and refuses Budgets; Budget and
	// Budgets are exclusive.
	Budgets []float64
}

// Validate checks the configuration as Run will (with the budget's
// default for any number of pages).
func (c Config) Validate() error {
	_, err := c.resolved(1)
	return err
}

// resolved fills the defaults for n pages.
func (c Config) resolved(n int) (Config, error) {
	cfgBudgetSet := c.Budget != 0
	if c.Days == 0 {
		c.Days = DefaultDays
	}
	if c.Budget == 0 {
		c.Budget = max(1, (n*int(DefaultBudgetShare*1000)+999)/1000)
	}
	if len(c.Policies) == 0 {
		c.Policies = PolicyNames()
	}
	if c.Schedule == nil {
		s := crawldb.DefaultScheduleConfig()
		c.Schedule = &s
	}
	if c.Recluster == 0 {
		c.Recluster = DefaultRecluster
	}
	if c.Eps == 0 {
		c.Eps = DefaultEps
	}
	if c.MinPts == 0 {
		c.MinPts = DefaultMinPts
	}
	if c.MinSamples == 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	c.SampleRate = max(c.SampleRate, 0)
	if c.FetchLag == 0 {
		c.FetchLag = DefaultFetchLag
	}
	c.FetchLag = max(c.FetchLag, 0)
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	switch {
	case c.Days < 1:
		return c, fmt.Errorf("revisit: days %d: want at least 1", c.Days)
	case c.Budget < 1:
		return c, fmt.Errorf("revisit: budget %d: want at least 1 fetch a day", c.Budget)
	case c.Recluster < 1:
		return c, fmt.Errorf("revisit: recluster every %d days: want at least 1", c.Recluster)
	case math.IsNaN(c.Eps) || math.IsInf(c.Eps, 0):
		return c, fmt.Errorf("revisit: eps %v: want a finite number (negative: the k-distance knee)", c.Eps)
	case c.MinPts < 1:
		return c, fmt.Errorf("revisit: minPts %d: want at least 1", c.MinPts)
	case c.MinSamples < 1:
		return c, fmt.Errorf("revisit: min samples %d: want at least 1", c.MinSamples)
	case c.SampleRate > 1:
		return c, fmt.Errorf("revisit: sample rate %v: want 0..1", c.SampleRate)
	case c.FetchLag >= 24*time.Hour:
		return c, fmt.Errorf("revisit: fetch lag %v: want less than a day", c.FetchLag)
	case len(c.Budgets) > 0 && cfgBudgetSet:
		return c, fmt.Errorf("revisit: both a budget (%d fetches a day) and budget shares %v: give one", c.Budget, c.Budgets)
	}
	for _, b := range c.Budgets {
		if !(b > 0 && b <= 1) {
			return c, fmt.Errorf("revisit: budget share %v: want a fraction of the pages in (0, 1]", b)
		}
	}
	seen := map[string]bool{}
	known := append(PolicyNames(), PolicyDynamicAlloc, PolicyEstimatePrior)
	for _, p := range c.Policies {
		if !slices.Contains(known, p) {
			return c, fmt.Errorf("revisit: unknown policy %q (known: %s)", p, strings.Join(known, ", "))
		}
		if seen[p] {
			return c, fmt.Errorf("revisit: policy %q given twice", p)
		}
		seen[p] = true
	}
	return c, nil
}

// Report is the result of Run.
type Report struct {
	// Pages, Days and Budget are the simulation's size; Events the change
	// events of all pages in the period.
	Pages  int   `json:"pages"`
	Days   int   `json:"days"`
	Budget int   `json:"budget"`
	Events int64 `json:"events"`
	// BudgetShare is the budget as the share of the pages Sweep asked
	// for (0 when Run was given the budget).
	BudgetShare float64 `json:"budget_share,omitempty"`
	// Start is simulated time zero.
	Start time.Time `json:"start"`
	// Recluster, Eps, MinPts, MinSamples, SampleRate and FetchLag are the
	// settings used (Eps negative: the knee of each run).
	Recluster  int     `json:"recluster_days"`
	Eps        float64 `json:"eps"`
	MinPts     int     `json:"min_pts"`
	MinSamples int     `json:"min_samples"`
	SampleRate float64 `json:"sample_rate"`
	FetchLag   string  `json:"fetch_lag"`
	// Tuned reports whether the baselines' intervals were tuned to the
	// budget (Config.NoTune unset); TuneTolerance is the shortfall the
	// tuning search allowed above the least (TuneTolerance).
	Tuned         bool    `json:"tuned"`
	TuneTolerance float64 `json:"tune_tolerance,omitempty"`
	// Policies are the results, in Config.Policies order.
	Policies []Metrics `json:"policies"`
	// Features says which page features predict change on this web
	// (FeatureCorrelations).
	Features []FeatureCorrelation `json:"feature_correlations"`
	// Seconds is the wall time of Run (the truth excluded).
	Seconds float64 `json:"seconds"`
}

// Run simulates each policy over the truth for cfg.Days daily rounds and
// returns their metrics. Every policy sees the same pages and the same
// change events. Unless cfg.NoTune, the default and adaptive policies'
// initial interval is first tuned so that they spend the budget (Tune).
// See the package documentation for the rounds, the policies and the
// metrics.
func Run(ctx context.Context, tr *Truth, cfg Config) (*Report, error) {
	start := time.Now()
	if len(cfg.Budgets) > 0 {
		return nil, fmt.Errorf("revisit: budget shares %v: Run takes one budget (Sweep runs several)", cfg.Budgets)
	}
	c, err := cfg.resolved(len(tr.Pages))
	if err != nil {
		return nil, err
	}
	if horizon := time.Duration(c.Days) * 24 * time.Hour; tr.Horizon < horizon {
		return nil, fmt.Errorf("revisit: the truth covers %v, less than %d days", tr.Horizon, c.Days)
	}
	rep := &Report{Pages: len(tr.Pages), Days: c.Days, Budget: c.Budget, Start: tr.Start,
		Recluster: c.Recluster, Eps: c.Eps, MinPts: c.MinPts, MinSamples: c.MinSamples,
		SampleRate: c.SampleRate, FetchLag: c.FetchLag.String(), Tuned: !c.NoTune,
		Policies: make([]Metrics, len(c.Policies)), Features: FeatureCorrelations(tr)}
	if rep.Tuned {
		rep.TuneTolerance = TuneTolerance
	}
	errs := make([]error, len(c.Policies))
	sem := make(chan struct{}, c.Workers)
	var wg sync.WaitGroup
	for i, name := range c.Policies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("revisit: policy %s: panic: %v", name, r)
				}
			}()
			pc := c
			var tuning *Tuning
			if !c.NoTune && isBaseline(name) {
				t, err := tune(ctx, tr, c, name)
				if err != nil {
					errs[i] = fmt.Errorf("revisit: policy %s: tune the interval: %w", name, err)
					return
				}
				tuning = &t
				sc := *c.Schedule
				sc.DefaultInterval = t.Interval
				pc.Schedule = &sc
			}
			var m Metrics
			if tuning != nil && c.Trace == nil && c.Final == nil {
				m = tuning.metrics // the same simulation as the chosen trial
				logDone(c, name, m)
			} else {
				var err error
				if m, err = simulate(ctx, tr, pc, name); err != nil {
					errs[i] = fmt.Errorf("revisit: policy %s: %w", name, err)
					return
				}
			}
			if tuning != nil {
				m.Tuned = true
				m.TuneTrials = tuning.Trials
			}
			rep.Policies[i] = m
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if len(rep.Policies) > 0 {
		rep.Events = rep.Policies[0].Events
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// isBaseline reports whether policy is one of Nutch's schedules, whose
// initial interval Run tunes.
func isBaseline(policy string) bool { return policy == PolicyDefault || policy == PolicyAdaptive }

// policy schedules the pages of one simulation.
type policy interface {
	// initDatum prepares page i's datum before the first round.
	initDatum(i int, d *crawldb.Datum, now time.Time)
	// schedule is called before round day's generate, with the datums
	// as the CrawlDB has them, and returns the schedule of the round's
	// generate and updatedb.
	schedule(ctx context.Context, day int, now time.Time, datums []crawldb.Datum) (crawldb.Schedule, error)
}

func newPolicy(ctx context.Context, name string, tr *Truth, c Config) (policy, error) {
	switch name {
	case PolicyDefault, PolicyAdaptive:
		s, err := crawldb.NewSchedule(name, *c.Schedule)
		if err != nil {
			return nil, err
		}
		return fixedPolicy{s}, nil
	case PolicyOracle:
		return newOraclePolicy(ctx, tr, c)
	case PolicyDynamic, PolicyDynamicOpt, PolicyDynamicAlloc:
		return newDynamicPolicy(tr, c, name != PolicyDynamic, name == PolicyDynamicAlloc)
	case PolicyEstimate, PolicyEstimatePrior:
		p, err := newEstimatePolicy(tr, c)
		if err == nil && name == PolicyEstimatePrior {
			p.truth = tr
		}
		return p, err
	}
	return nil, fmt.Errorf("unknown policy %q", name)
}

// fixedPolicy is one schedule for the whole simulation.
type fixedPolicy struct{ s crawldb.Schedule }

func (p fixedPolicy) initDatum(_ int, d *crawldb.Datum, now time.Time) {
	p.s.InitializeSchedule(d, now)
}

func (p fixedPolicy) schedule(context.Context, int, time.Time, []crawldb.Datum) (crawldb.Schedule, error) {
	return p.s, nil
}

// candidate is a due page of a round.
type candidate struct {
	page     int32
	due      int64   // FetchTime in ms after generate's ShouldFetch
	interval int32   // FetchInterval after ShouldFetch
	rank     float32 // the schedule's GenerateSortValue if it ranks, else 0
}

// simulation is the state of one policy's run.
type simulation struct {
	tr          *Truth
	c           Config
	name        string
	pol         policy
	tk          *Tracker
	maxInterval int32 // seconds (db.fetch.interval.max)
	datums      []crawldb.Datum
	cands       []candidate // the round's, reused
	daily       []int64     // fetches per round
	// sources counts, per source, the pages whose datum has it at the
	// end of each round (day-indexed; missing days are 0).
	sources map[crawldb.Source][]int64
}

// simulate runs one policy (runSim) and logs its result.
func simulate(ctx context.Context, tr *Truth, c Config, name string) (Metrics, error) {
	m, err := runSim(ctx, tr, c, name)
	if err != nil {
		return m, err
	}
	logDone(c, name, m)
	return m, nil
}

// logDone logs a policy's result.
func logDone(c Config, name string, m Metrics) {
	c.Log.Info("revisit: policy done", "policy", name, "fetches", m.Fetches, "budget_used", m.BudgetUsed,
		"freshness", m.Freshness, "seconds", m.Seconds)
}

// runSim runs one policy: its datums start unfetched, then each day's
// round generates and fetches, and the tracker's metrics are the result.
func runSim(ctx context.Context, tr *Truth, c Config, name string) (Metrics, error) {
	t0 := time.Now()
	sm, err := newSimulation(ctx, tr, c, name)
	if err != nil {
		return Metrics{}, err
	}
	for day := range c.Days {
		if err := ctx.Err(); err != nil {
			return Metrics{}, err
		}
		if err := sm.round(ctx, day); err != nil {
			return Metrics{}, err
		}
	}
	if c.Final != nil {
		c.Final(name, sm.datums)
	}
	m := sm.metrics()
	m.Seconds = time.Since(t0).Seconds()
	return m, nil
}

// newSimulation prepares policy name's run: the policy, the tracker over
// c.Days, and every page's datum, unfetched and initialised by the policy.
func newSimulation(ctx context.Context, tr *Truth, c Config, name string) (*simulation, error) {
	pol, err := newPolicy(ctx, name, tr, c)
	if err != nil {
		return nil, err
	}
	tk, err := NewTracker(tr.Events, float64(c.Days)*daySeconds)
	if err != nil {
		return nil, err
	}
	sm := &simulation{tr: tr, c: c, name: name, pol: pol, tk: tk,
		maxInterval: int32(c.Schedule.MaxInterval / time.Second),
		datums:      make([]crawldb.Datum, len(tr.Pages)),
		daily:       make([]int64, c.Days),
		sources:     map[crawldb.Source][]int64{}}
	for i, p := range tr.Pages {
		d := &sm.datums[i]
		*d = crawldb.Datum{URL: p.URL, Host: p.Host, Status: crawldb.StatusDBUnfetched, ClusterID: -1, Score: 1}
		pol.initDatum(i, d, tr.Start)
	}
	return sm, nil
}

// round runs the crawl round of day: the policy's schedule, generate's
// due pages, and their fetches and updates.
func (sm *simulation) round(ctx context.Context, day int) error {
	now := sm.tr.Start.Add(time.Duration(day) * 24 * time.Hour)
	sched, err := sm.pol.schedule(ctx, day, now, sm.datums)
	if err != nil {
		return fmt.Errorf("day %d: %w", day, err)
	}
	sm.generate(sched, now)
	if err := sm.fetch(sched, day, now); err != nil {
		return err
	}
	sm.daily[day] = int64(len(sm.cands))
	sm.countSources(day)
	sm.c.Log.Debug("revisit: round", "policy", sm.name, "day", day, "due", len(sm.cands))
	return nil
}

// generate sets sm.cands to the pages sched says are due at now, most
// overdue first (or by the schedule's rank, if it ranks), at most Budget.
func (sm *simulation) generate(sched crawldb.Schedule, now time.Time) {
	sm.cands = sm.cands[:0]
	ranker, _ := sched.(crawldb.Ranker)
	for i := range sm.datums {
		cp := sm.datums[i]
		if sched.ShouldFetch(&cp, now) {
			cd := candidate{page: int32(i), due: cp.FetchTime.UnixMilli(), interval: cp.FetchInterval}
			if ranker != nil {
				if v, ok := ranker.GenerateSortValue(&cp, now); ok {
					cd.rank = v
				}
			}
			sm.cands = append(sm.cands, cd)
		}
	}
	// Unranked candidates all have rank 0: most overdue first.
	slices.SortFunc(sm.cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.rank, a.rank), cmp.Compare(a.due, b.due), cmp.Compare(a.page, b.page))
	})
	if len(sm.cands) > sm.c.Budget {
		sm.cands = sm.cands[:sm.c.Budget]
	}
}

// fetch fetches the round's candidates FetchLag after now, the start of
// day's round: the tracker scores each fetch, and updatedb's merge
// (ApplyFetch) records it in the page's datum.
func (sm *simulation) fetch(sched crawldb.Schedule, day int, now time.Time) error {
	tr := sm.tr
	at := now.Add(sm.c.FetchLag)
	atSec := at.Sub(tr.Start).Seconds()
	for _, cd := range sm.cands {
		i := int(cd.page)
		if _, _, err := sm.tk.Fetch(i, atSec); err != nil {
			return err
		}
		version := tr.Events.CountAt(i, atSec)
		d := &sm.datums[i]
		d.FetchInterval = cd.interval
		f, err := tr.FetchedFeatures(i, version)
		if err != nil {
			return err
		}
		st := ApplyFetch(sched, d, at, now, Signature(version), tr.lastModified(i, version), f, sm.maxInterval)
		if sm.c.Trace != nil {
			sm.c.Trace(sm.name, day, i, st)
		}
	}
	return nil
}

// countSources counts the pages by their datum's schedule source at the
// end of day's round.
func (sm *simulation) countSources(day int) {
	for i := range sm.datums {
		src := sm.datums[i].Source
		s, ok := sm.sources[src]
		if !ok {
			s = make([]int64, sm.c.Days)
			sm.sources[src] = s
		}
		s[day]++
	}
}

// metrics finishes the tracker and completes its metrics with the
// policy's budget, its use, the fetches per round, the datums' sources
// at the end and after each round, and a baseline's initial interval
// (Seconds and the tuning are left to the caller).
func (sm *simulation) metrics() Metrics {
	c := sm.c
	m := sm.tk.Finish()
	m.Policy = sm.name
	m.DailyFetches = sm.daily
	m.Budget = c.Budget
	m.BudgetUsed = float64(m.Fetches) / (float64(c.Budget) * float64(c.Days))
	m.Sources = map[string]int64{}
	for i := range sm.datums {
		m.Sources[string(sm.datums[i].Source)]++
	}
	m.DailySources = make(map[string][]int64, len(sm.sources))
	for src, s := range sm.sources {
		m.DailySources[string(src)] = s
	}
	if isBaseline(sm.name) {
		m.IntervalSeconds = int64(c.Schedule.DefaultInterval / time.Second)
	}
	return m
}

// Signature is the simulated content signature of a page's version: equal
// for equal versions, different otherwise, as a digest of the content
// (a pure function of the version) is.
func Signature(version int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(version)+1)
	return b[:]
}

// ApplyFetch merges a successful fetch (HTTP 200) of d at fetchTime whose
// parse gave the signature sig and the features f into d, as updatedb does
// for a fetch_success with a crawl_parse signature (jobs.UpdateDB; the
// same steps in the same order): the change state is "unknown" without an
// old signature, else "modified" or "not modified" by comparing
// signatures; the schedule's SetFetchSchedule gets the previous fetch
// time and modification time (the row's FetchTime and ModifiedTime) and
// the state; a not-modified page keeps its signature and modification
// time and becomes db_notmodified, any other db_fetched with the new
// signature; FetchCount counts the fetch and Observe records a known
// state, or the first fetch as unchanged, with lastModified, the response's Last-Modified date (zero: none)
// state; an interval above maxInterval (seconds, db.fetch.interval.max)
// forces a refetch (ForceRefetch at now, not asap). The features are the
// parse's; the inlink count is kept when higher, as updatedb keeps the
// links it saw. It returns the change state.
//
// updatedb's own code is not exported (jobs.dbMerger.applyFetch); this is
// its mirror for a fetch with no redirect, retry or failure.
func ApplyFetch(s crawldb.Schedule, d *crawldb.Datum, fetchTime, now time.Time, sig []byte, lastModified time.Time, f crawldb.Features, maxInterval int32) crawldb.ChangeState {
	prevFetchTime, prevModifiedTime := d.FetchTime, d.ModifiedTime
	oldSig := d.Signature
	d.Status = crawldb.StatusFetchSuccess
	d.PrevFetchTime = fetchTime
	d.FetchTime = fetchTime
	d.HTTPStatus = 200
	inl := d.Features.Inlinks
	d.Features = f
	d.Features.Inlinks = max(f.Inlinks, inl)
	state := crawldb.StateUnknown
	if len(oldSig) > 0 && sig != nil {
		if string(oldSig) == string(sig) {
			state = crawldb.StateNotModified
		} else {
			state = crawldb.StateModified
		}
	}
	s.SetFetchSchedule(d, prevFetchTime, prevModifiedTime, fetchTime, d.ModifiedTime, state)
	if state == crawldb.StateNotModified {
		d.Status = crawldb.StatusDBNotModified
		d.ModifiedTime = prevModifiedTime
		d.Signature = oldSig
	} else {
		d.Status = crawldb.StatusDBFetched
		if sig != nil {
			d.Signature = sig
		}
	}
	d.FetchCount++
	switch {
	case state != crawldb.StateUnknown:
		d.Observe(fetchTime, state == crawldb.StateModified, lastModified)
	case d.FetchCount == 1:
		d.ObserveFirst(fetchTime, lastModified)
	}
	if maxInterval < d.FetchInterval {
		s.ForceRefetch(d, false, now)
	}
	d.GenerateTime = time.Time{}
	return state
}
