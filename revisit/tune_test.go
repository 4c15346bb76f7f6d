package revisit

import (
	"context"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// TestTuneSpendsBudget: on the small web over 20 days, tuning brings the
// default and adaptive policies' budget use within the search's tolerance
// of the least shortfall (here 0: both spend 99.9% of the budget or more),
// and the interval it reports is the boundary the trials found (the
// next longer trial tried leaves more unused, at most 1% longer); with
// Nutch's 30-day interval untuned they spend about half of it (every
// page once in the first 10 days, then nothing due).
func TestTuneSpendsBudget(t *testing.T) {
	tr := small(t)
	base := Config{Days: 20, Policies: []string{PolicyDefault, PolicyAdaptive}, Log: quiet()}
	tuned, err := Run(context.Background(), tr, base)
	if err != nil {
		t.Fatal(err)
	}
	untunedCfg := base
	untunedCfg.NoTune = true
	untuned, err := Run(context.Background(), tr, untunedCfg)
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range tuned.Policies {
		u := untuned.Policies[k]
		t.Logf("%s: tuned %.2f days, budget used %.4f, freshness %.4f (%d trials); untuned %.0f days, budget used %.4f, freshness %.4f",
			m.Policy, float64(m.IntervalSeconds)/daySeconds, m.BudgetUsed, m.Freshness, len(m.TuneTrials),
			float64(u.IntervalSeconds)/daySeconds, u.BudgetUsed, u.Freshness)
		if !m.Tuned || len(m.TuneTrials) != 12 {
			t.Errorf("%s: tuned %v with %d trials, want 12", m.Policy, m.Tuned, len(m.TuneTrials))
		}
		least := 1 - m.TuneTrials[0].BudgetUsed
		if short := 1 - m.BudgetUsed; short > least+TuneTolerance+1e-12 || m.BudgetUsed < 0.999 {
			t.Errorf("%s: budget used %.4f: shortfall %.4f, least %.4f", m.Policy, m.BudgetUsed, short, least)
		}
		iv := time.Duration(m.IntervalSeconds) * time.Second
		if iv < TuneMinInterval || iv > TuneMaxInterval {
			t.Errorf("%s: interval %v outside [%v, %v]", m.Policy, iv, TuneMinInterval, TuneMaxInterval)
		}
		var at, above *TuneTrial
		for j := range m.TuneTrials {
			tt := &m.TuneTrials[j]
			if tt.IntervalSeconds == m.IntervalSeconds {
				at = tt
			}
			if tt.IntervalSeconds > m.IntervalSeconds && (above == nil || tt.IntervalSeconds < above.IntervalSeconds) {
				above = tt
			}
		}
		if at == nil || at.BudgetUsed != m.BudgetUsed || at.Freshness != m.Freshness {
			t.Errorf("%s: no trial at the chosen interval with its metrics: %+v", m.Policy, at)
		}
		if above == nil || 1-above.BudgetUsed <= least+TuneTolerance || float64(above.IntervalSeconds) > 1.01*float64(m.IntervalSeconds) {
			t.Errorf("%s: the next longer trial %+v does not bound the interval %d s", m.Policy, above, m.IntervalSeconds)
		}
		if u.Tuned || u.IntervalSeconds != 30*86400 || len(u.TuneTrials) != 0 {
			t.Errorf("%s untuned: tuned %v, interval %d s, %d trials", u.Policy, u.Tuned, u.IntervalSeconds, len(u.TuneTrials))
		}
		if u.BudgetUsed > 0.6 {
			t.Errorf("%s untuned: budget used %.4f, want about half", u.Policy, u.BudgetUsed)
		}
	}
	// The tuned run with a Trace (which makes Run simulate the chosen
	// interval again rather than reuse the trial) gives the same metrics.
	traced := base
	traced.Policies = []string{PolicyAdaptive}
	traced.Trace = func(string, int, int, crawldb.ChangeState) {}
	again, err := Run(context.Background(), tr, traced)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.Policies[0], tuned.Policies[1]; a.IntervalSeconds != b.IntervalSeconds || a.Fetches != b.Fetches || a.Freshness != b.Freshness {
		t.Errorf("traced run: interval %d s, %d fetches, freshness %v; untraced: %d s, %d, %v",
			a.IntervalSeconds, a.Fetches, a.Freshness, b.IntervalSeconds, b.Fetches, b.Freshness)
	}
}
