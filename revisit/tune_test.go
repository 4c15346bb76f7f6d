package revisit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestSweep: a sweep over three budgets reports one comparison per
// budget, each policy's fetches rising with the budget, one markdown
// table (and source table) per budget, a CSV row per budget and policy,
// JSON with every report, and the plot of freshness against fetches.
func TestSweep(t *testing.T) {
	tr := small(t)
	shares := []float64{0.05, 0.1, 0.2}
	policies := []string{PolicyDefault, PolicyAdaptive, PolicyDynamic, PolicyOracle}
	sw, err := Sweep(context.Background(), tr, Config{Days: 20, Budgets: shares, Policies: policies, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Reports) != len(shares) {
		t.Fatalf("%d reports for %d budgets", len(sw.Reports), len(shares))
	}
	for k, r := range sw.Reports {
		if r.BudgetShare != shares[k] || r.Budget != BudgetOfShare(shares[k], len(tr.Pages)) || len(r.Policies) != len(policies) {
			t.Errorf("report %d: share %v, budget %d, %d policies", k, r.BudgetShare, r.Budget, len(r.Policies))
		}
		if k == 0 {
			continue
		}
		if r.Budget <= sw.Reports[k-1].Budget {
			t.Errorf("budget %d at %v not above %d", r.Budget, r.BudgetShare, sw.Reports[k-1].Budget)
		}
		for j, m := range r.Policies {
			prev := sw.Reports[k-1].Policies[j]
			t.Logf("%s: %d fetches (used %.3f, freshness %.4f) at %v; %d (used %.3f, freshness %.4f) at %v",
				m.Policy, prev.Fetches, prev.BudgetUsed, prev.Freshness, prev.Budget, m.Fetches, m.BudgetUsed, m.Freshness, m.Budget)
			if m.Fetches <= prev.Fetches {
				t.Errorf("%s: %d fetches at budget %d, not above %d at %d", m.Policy, m.Fetches, m.Budget, prev.Fetches, prev.Budget)
			}
		}
	}
	var b bytes.Buffer
	if err := sw.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, r := range sw.Reports {
		want := fmt.Sprintf("## budget %s of the pages: %d fetches/day", ShareText(r.BudgetShare), r.Budget)
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if n := strings.Count(md, "| policy | interval_days |"); n != 3 {
		t.Errorf("%d metric tables, want 3", n)
	}
	if n := strings.Count(md, "pages by schedule source"); n != 3 {
		t.Errorf("%d source tables, want 3", n)
	}
	b.Reset()
	if err := sw.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(shares)*len(policies) || rows[0][0] != "budget_share" || rows[1][0] != "0.05" || rows[len(rows)-1][2] != PolicyOracle {
		t.Errorf("csv: %v", rows)
	}
	b.Reset()
	if err := sw.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Shares  []float64 `json:"budget_shares"`
		Reports []struct {
			Budget      int     `json:"budget"`
			BudgetShare float64 `json:"budget_share"`
			Policies    []struct {
				Policy  string `json:"policy"`
				Fetches int64  `json:"fetches"`
			} `json:"policies"`
		} `json:"reports"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Shares) != 3 || len(back.Reports) != 3 || back.Reports[2].BudgetShare != 0.2 ||
		back.Reports[2].Policies[3].Fetches != sw.Reports[2].Policies[3].Fetches {
		t.Errorf("json: %+v", back)
	}
	dir := t.TempDir()
	for name, magic := range map[string]string{"b.png": "\x89PNG", "b.svg": "<?xml"} {
		p := filepath.Join(dir, name)
		if err := sw.SavePlot(p); err != nil {
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
}

// TestBudgetOfShare: a share of the pages, rounded up, at least 1.
func TestBudgetOfShare(t *testing.T) {
	for _, c := range []struct {
		share float64
		n     int
		want  int
	}{{0.1, 20000, 2000}, {0.1, 18721, 1873}, {0.05, 1930, 97}, {0.2, 1930, 386}, {0.001, 10, 1}, {1, 7, 7}} {
		if got := BudgetOfShare(c.share, c.n); got != c.want {
			t.Errorf("BudgetOfShare(%v, %d) = %d, want %d", c.share, c.n, got, c.want)
		}
	}
}
