package revisit

import (
	"context"
	"testing"
)

// TestEstimatePolicy: the estimating policy runs, spends the budget, and
// on the small web is not worse than the tuned adaptive policy by more
// than estimateMargin of its freshness.
func TestEstimatePolicy(t *testing.T) {
	const estimateMargin = 0.01
	tr := small(t)
	rep, err := Run(context.Background(), tr, Config{Days: 30, Policies: []string{PolicyAdaptive, PolicyEstimate}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ad, est := rep.Policies[0], rep.Policies[1]
	t.Logf("adaptive: budget used %.4f, freshness %.4f; estimate: budget used %.4f, freshness %.4f",
		ad.BudgetUsed, ad.Freshness, est.BudgetUsed, est.Freshness)
	if est.Policy != PolicyEstimate || est.Fetches == 0 {
		t.Fatalf("estimate: policy %q, %d fetches", est.Policy, est.Fetches)
	}
	if est.BudgetUsed < 0.99 || est.BudgetUsed > 1 {
		t.Errorf("estimate: budget used %.4f, want 0.99..1", est.BudgetUsed)
	}
	if est.Sources[string(SourceEstimate)] != int64(len(tr.Pages)) {
		t.Errorf("estimate: sources %v, want every page %s", est.Sources, SourceEstimate)
	}
	if est.Freshness < ad.Freshness*(1-estimateMargin) {
		t.Errorf("estimate: freshness %.4f, below the tuned adaptive's %.4f by more than %v", est.Freshness, ad.Freshness, estimateMargin)
	}
}
