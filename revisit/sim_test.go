package revisit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

var (
	smallOnce  sync.Once
	smallTruth *Truth
	smallErr   error
)

// small is the truth of a small web, 30 days, shared by the tests (read
// only).
func small(t testing.TB) *Truth {
	t.Helper()
	smallOnce.Do(func() {
		var web *simweb.Web
		web, smallErr = simweb.New(simweb.Config{Seed: 3, Hosts: 20, Pages: 2000})
		if smallErr == nil {
			smallTruth, smallErr = NewTruth(context.Background(), web, 30*24*time.Hour)
		}
	})
	if smallErr != nil {
		t.Fatal(smallErr)
	}
	return smallTruth
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestTruthMatchesWeb: the truth's pages are the web's fetchable content
// pages, and a page's version at t is the web's.
func TestTruthMatchesWeb(t *testing.T) {
	tr := small(t)
	web, err := simweb.New(simweb.Config{Seed: 3, Hosts: 20, Pages: 2000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id := range web.NumPages() {
		p := web.Page(id)
		if p.Kind.IsContent() && p.Status == 200 && p.RobotsAllowed {
			n++
		}
	}
	if n != len(tr.Pages) || tr.Events.Len() != n {
		t.Fatalf("%d pages, %d event lists, want %d", len(tr.Pages), tr.Events.Len(), n)
	}
	for i := 0; i < len(tr.Pages); i += 97 {
		p := tr.Pages[i]
		for _, dd := range []float64{0.3, 4.7, 29.9} {
			at := tr.Start.Add(time.Duration(dd * float64(24*time.Hour)))
			if got, want := tr.Events.CountAt(i, at.Sub(tr.Start).Seconds()), web.Version(p.ID, at); got != want {
				t.Errorf("page %d (%s) at day %v: version %d, web says %d", p.ID, p.URL, dd, got, want)
			}
		}
		if p.URL != web.URL(p.ID, simweb.Addressing{}) || p.Rate != web.Page(p.ID).Rate {
			t.Errorf("page %d: %s rate %v", p.ID, p.URL, p.Rate)
		}
	}
}

// TestRunDeterministic: the same truth and configuration give the same
// table; the counts are consistent with the budget.
func TestRunDeterministic(t *testing.T) {
	tr := small(t)
	cfg := Config{Days: 30, Recluster: 5, Eps: -1, MinPts: 8, Log: quiet()}
	var tables []string
	var rep *Report
	for range 2 {
		r, err := Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.Markdown(&b); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, b.String())
		rep = r
	}
	if tables[0] != tables[1] {
		t.Fatalf("two runs differ:\n%s\n%s", tables[0], tables[1])
	}
	t.Logf("\n%s", tables[0])
	budget := (len(tr.Pages)*100 + 999) / 1000
	if rep.Budget != budget {
		t.Errorf("budget %d, want %d", rep.Budget, budget)
	}
	for _, m := range rep.Policies {
		if m.Fetches > int64(budget*30) {
			t.Errorf("%s: %d fetches over a budget of %d × 30", m.Policy, m.Fetches, budget)
		}
		// 10% a day: every page is fetched once within the first 10
		// rounds, whatever the policy (the unfetched are most overdue).
		if m.FirstFetches != int64(len(tr.Pages)) {
			t.Errorf("%s: %d first fetches of %d pages", m.Policy, m.FirstFetches, len(tr.Pages))
		}
		if m.Fetches != m.FirstFetches+m.Changed+m.Unchanged {
			t.Errorf("%s: fetches %d != %d + %d + %d", m.Policy, m.Fetches, m.FirstFetches, m.Changed, m.Unchanged)
		}
		if m.Events != tr.Events.Total() {
			t.Errorf("%s: %d events, truth has %d", m.Policy, m.Events, tr.Events.Total())
		}
		var n int64
		for _, c := range m.Sources {
			n += c
		}
		if n != int64(len(tr.Pages)) {
			t.Errorf("%s: sources count %d pages", m.Policy, n)
		}
		// Every day's counts by source add up to the pages, and the last
		// day's are the final Sources.
		for day := range 30 {
			var n int64
			for src, s := range m.DailySources {
				if len(s) != 30 {
					t.Fatalf("%s: source %s: %d days of counts", m.Policy, src, len(s))
				}
				n += s[day]
			}
			if n != int64(len(tr.Pages)) {
				t.Errorf("%s: day %d: sources count %d pages", m.Policy, day, n)
			}
		}
		for src, s := range m.DailySources {
			if s[29] != m.Sources[src] {
				t.Errorf("%s: source %s: %d pages on the last day, %d at the end", m.Policy, src, s[29], m.Sources[src])
			}
		}
		if !(m.Freshness > 0 && m.Freshness < 1) {
			t.Errorf("%s: freshness %v", m.Policy, m.Freshness)
		}
	}
	if s := rep.Policies[2].Sources; s[string(crawldb.SourceCluster)] == 0 {
		t.Errorf("dynamic: no page scheduled by its cluster: %v", s)
	}
}

// TestOracleKeepsPhase: the oracle fetches a page with an interval of
// 2.5 days on days 0, 3, 5, 8, 10, ... (every 2.5 days on average), not
// every 3 days.
func TestOracleKeepsPhase(t *testing.T) {
	s, err := crawldb.NewDefaultSchedule(crawldb.DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	o := &oracleSchedule{DefaultSchedule: s}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &crawldb.Datum{URL: "http://h.test/", FetchTime: t0, FetchInterval: int32(2.5 * day)}
	var days []int
	for k := range 11 {
		now := t0.Add(time.Duration(k) * 24 * time.Hour)
		if o.ShouldFetch(d, now) {
			days = append(days, k)
			ApplyFetch(o, d, now.Add(time.Minute), now, Signature(k), time.Time{}, crawldb.Features{}, 90*86400)
		}
	}
	if got, want := days, []int{0, 3, 5, 8, 10}; !slicesEqual(got, want) {
		t.Errorf("fetched on days %v, want %v", got, want)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestApplyFetch follows updatedb's steps: unknown on a first fetch,
// then not-modified for the same signature and modified for another, with
// the history, counts, statuses and modification times updatedb gives.
func TestApplyFetch(t *testing.T) {
	s, err := crawldb.NewAdaptiveSchedule(crawldb.DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &crawldb.Datum{URL: "http://h.test/a.html", Status: crawldb.StatusDBUnfetched, ClusterID: -1}
	s.InitializeSchedule(d, t0)
	f := crawldb.Features{Words: 10, Inlinks: 3}
	const maxIv = 90 * 86400
	at := t0.Add(time.Minute)
	if st := ApplyFetch(s, d, at, t0, Signature(0), time.Time{}, f, maxIv); st != crawldb.StateUnknown {
		t.Errorf("first fetch: %v", st)
	}
	if d.Status != crawldb.StatusDBFetched || d.FetchCount != 1 || len(d.History) != 1 || !d.History[0].Initial || d.FetchInterval != 30*86400 ||
		!d.ModifiedTime.Equal(at) || d.Features != f || !d.PrevFetchTime.Equal(at) {
		t.Errorf("after the first fetch: %+v", d)
	}
	at2 := at.Add(30 * 24 * time.Hour)
	if st := ApplyFetch(s, d, at2, at2, Signature(0), time.Time{}, f, maxIv); st != crawldb.StateNotModified {
		t.Errorf("same signature: %v", st)
	}
	if d.Status != crawldb.StatusDBNotModified || d.FetchCount != 2 || len(d.History) != 2 || d.History[1].Changed || len(d.ChangeHistory()) != 1 ||
		!d.ModifiedTime.Equal(at) || d.FetchInterval != 42*86400 {
		t.Errorf("after an unchanged fetch: %+v", d)
	}
	at3 := at2.Add(42 * 24 * time.Hour)
	if st := ApplyFetch(s, d, at3, at3, Signature(1), time.Time{}, f, maxIv); st != crawldb.StateModified {
		t.Errorf("new signature: %v", st)
	}
	if d.Status != crawldb.StatusDBFetched || d.ChangeCount != 1 || len(d.History) != 3 || !d.History[2].Changed ||
		!d.ModifiedTime.Equal(at3) || !bytes.Equal(d.Signature, Signature(1)) {
		t.Errorf("after a changed fetch: %+v", d)
	}
	// An interval beyond db.fetch.interval.max forces a refetch: the
	// signature is forgotten, so the next fetch is "unknown".
	d.FetchInterval = 200 * 86400
	at4 := at3.Add(24 * time.Hour)
	ApplyFetch(s, d, at4, at4, Signature(1), time.Time{}, f, maxIv)
	if d.Status != crawldb.StatusDBUnfetched || d.Signature != nil {
		t.Errorf("interval above the maximum: not forced to refetch: %+v", d)
	}
	if st := ApplyFetch(s, d, at4.Add(time.Hour), at4, Signature(1), time.Time{}, f, maxIv); st != crawldb.StateUnknown {
		t.Errorf("after a forced refetch: %v", st)
	}
}

// TestReportOutputs: the CSV has a header and a row per policy, the JSON
// parses back with the daily series, and the plots are PNG and SVG.
func TestReportOutputs(t *testing.T) {
	tr := small(t)
	rep, err := Run(context.Background(), tr, Config{Days: 12, Policies: []string{PolicyAdaptive, PolicyOracle}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "policy" || rows[1][0] != PolicyAdaptive || rows[2][0] != PolicyOracle {
		t.Errorf("csv: %v", rows)
	}
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Pages    int  `json:"pages"`
		Tuned    bool `json:"tuned"`
		Policies []struct {
			Policy          string             `json:"policy"`
			Freshness       float64            `json:"freshness"`
			BudgetUsed      float64            `json:"budget_used"`
			DailyFreshness  []float64          `json:"daily_freshness"`
			DailySources    map[string][]int64 `json:"daily_sources"`
			IntervalSeconds int64              `json:"interval_seconds"`
			Tuned           bool               `json:"tuned"`
			TuneTrials      []TuneTrial        `json:"tune_trials"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Pages != len(tr.Pages) || len(back.Policies) != 2 || len(back.Policies[1].DailyFreshness) != 12 ||
		back.Policies[1].Freshness != rep.Policies[1].Freshness || !back.Tuned {
		t.Errorf("json: %+v", back)
	}
	ad, or := back.Policies[0], back.Policies[1]
	if !ad.Tuned || ad.IntervalSeconds != rep.Policies[0].IntervalSeconds || ad.IntervalSeconds <= 0 ||
		len(ad.TuneTrials) == 0 || ad.BudgetUsed != rep.Policies[0].BudgetUsed ||
		len(ad.DailySources[string(crawldb.SourceAdaptive)]) != 12 {
		t.Errorf("json: adaptive: tuned %v, interval %d s, %d trials, budget used %v, daily sources %v",
			ad.Tuned, ad.IntervalSeconds, len(ad.TuneTrials), ad.BudgetUsed, ad.DailySources)
	}
	if or.Tuned || or.IntervalSeconds != 0 || len(or.TuneTrials) != 0 || len(or.DailySources[string(SourceOracle)]) != 12 {
		t.Errorf("json: oracle: tuned %v, interval %d s, %d trials, daily sources %v", or.Tuned, or.IntervalSeconds, len(or.TuneTrials), or.DailySources)
	}
	b.Reset()
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| policy | interval_days | fetches | budget_used |", "pages by schedule source",
		"| policy | adaptive | oracle |", "| oracle | 0 | " + strconv.Itoa(len(tr.Pages)) + " |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	for name, magic := range map[string]string{"f.png": "\x89PNG", "f.svg": "<?xml"} {
		p := filepath.Join(dir, name)
		if err := rep.SavePlot(p); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), magic) {
			t.Errorf("%s starts %q", name, data[:min(len(data), 8)])
		}
	}
	if err := rep.SavePlot(filepath.Join(dir, "f.gif")); err == nil {
		t.Error("gif plot: no error")
	}
	for _, m := range rep.Policies {
		if math.IsNaN(m.Freshness) {
			t.Errorf("%s: NaN freshness", m.Policy)
		}
	}
}

// TestConfigErrors: bad settings are refused before any work.
func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Days: -1}, {Budget: -2}, {Policies: []string{"lru"}}, {Policies: []string{"oracle", "oracle"}},
		{Eps: math.NaN()}, {SampleRate: 2}, {FetchLag: 25 * time.Hour}, {Recluster: -1},
		{Budgets: []float64{0}}, {Budgets: []float64{0.1, 1.5}}, {Budgets: []float64{math.NaN()}},
		{Budget: 10, Budgets: []float64{0.1}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := Run(context.Background(), small(t), Config{Days: 31}); err == nil {
		t.Error("31 days over a 30-day truth: no error")
	}
	if _, err := Run(context.Background(), small(t), Config{Days: 2, Budgets: []float64{0.1}}); err == nil {
		t.Error("Run with budget shares: no error")
	}
	if _, err := Sweep(context.Background(), small(t), Config{Days: 2}); err == nil {
		t.Error("Sweep without budget shares: no error")
	}
	if _, err := Tune(context.Background(), small(t), Config{Days: 2}, PolicyOracle); err == nil {
		t.Error("tuning the oracle: no error")
	}
}

// TestDynamicRankOrder: under a binding budget the simulation ranks the
// due pages as the dynamic schedule says (crawldb.Ranker): its change
// order (score times crawldb.ChangeProbability) wastes clearly fewer
// fetches on unchanged pages than the overdue order it falls back to with
// DynamicConfig.Rank "score" (on this web: η 0.73 against 1.00).
func TestDynamicRankOrder(t *testing.T) {
	tr := small(t)
	run := func(rank string) Metrics {
		sc := crawldb.DefaultScheduleConfig()
		sc.Dynamic.Rank = rank
		rep, err := Run(context.Background(), tr, Config{Days: 30, Budget: len(tr.Pages) / 10,
			Policies: []string{PolicyDynamic}, Schedule: &sc, Recluster: 7, Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Policies[0]
	}
	byChange, byScore := run(crawldb.RankChange), run(crawldb.RankScore)
	t.Logf("change order: %d fetches, eta %.3f, freshness %.3f; overdue order: %d fetches, eta %.3f, freshness %.3f",
		byChange.Fetches, byChange.Efficiency, byChange.Freshness, byScore.Fetches, byScore.Efficiency, byScore.Freshness)
	if byChange.Fetches != byScore.Fetches {
		t.Errorf("the budget does not bind: %d and %d fetches", byChange.Fetches, byScore.Fetches)
	}
	if !(byChange.Efficiency < 0.9*byScore.Efficiency) {
		t.Errorf("change order eta %.3f, not 10%% below the overdue order's %.3f", byChange.Efficiency, byScore.Efficiency)
	}
}
