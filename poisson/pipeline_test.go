package poisson

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestEstimateThenAllocate runs the whole chain on simulated pages: 31
// daily fetches per page (a full crawldb history), FromObservations per
// page, then the freshness-optimal allocation of a budget on the
// estimated rates (ScheduleRate, and Rate for comparison), judged by the
// true rates against the oracle (the allocation on the true rates) and
// against uniform refreshing.
func TestEstimateThenAllocate(t *testing.T) {
	const pages = 20000
	rates := simwebLikeRates(pages) // per day
	rng := rand.New(rand.NewPCG(15, 15))
	t0 := time.Date(2025, 1, 1, 23, 0, 0, 0, time.UTC)
	est := make([]float64, pages)   // ScheduleRate
	plain := make([]float64, pages) // Rate
	h := make([]Observation, 32)
	for i, r := range rates {
		var p *page
		if r > 0 {
			p = newPage(rng, r)
		}
		for k := range h {
			changed := false
			if p != nil {
				changed, _ = p.access(float64(k))
			}
			h[k] = Observation{Time: t0.Add(time.Duration(k) * 24 * time.Hour), Changed: changed}
		}
		e := FromObservations(h, DefaultConfig())
		if e.Method != MethodRegular || e.N != 31 {
			t.Fatalf("page %d: %+v", i, e)
		}
		est[i] = e.ScheduleRate() * 86400
		plain[i] = e.Rate * 86400
		if (e.X == 0) != (est[i] != plain[i]) || est[i] < plain[i] {
			t.Fatalf("page %d: ScheduleRate %v, Rate %v, X=%d", i, est[i], plain[i], e.X)
		}
	}
	ctx := context.Background()
	for _, share := range []float64{0.05, 0.2, 0.5} {
		cfg := AllocConfig{Budget: share * pages, MinFreq: 1.0 / 90, MaxFreq: 24}
		oracle, err := Allocate(ctx, rates, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Allocate(ctx, est, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gotPlain, err := Allocate(ctx, plain, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var fEst, fPlain, fUni float64
		for i, r := range rates {
			fEst += Freshness(r, got.Intervals[i])
			fPlain += Freshness(r, gotPlain.Intervals[i])
			fUni += Freshness(r, pages/cfg.Budget)
		}
		fEst /= pages
		fPlain /= pages
		fUni /= pages
		t.Logf("budget %2.0f%% of pages a day: freshness oracle %.4f, ScheduleRate %.4f (%.1f%%), Rate %.4f (%.1f%%), uniform %.4f (%.1f%%)",
			100*share, oracle.Freshness, fEst, 100*fEst/oracle.Freshness, fPlain, 100*fPlain/oracle.Freshness, fUni, 100*fUni/oracle.Freshness)
		if fEst < 0.95*oracle.Freshness || fEst <= fUni || fEst <= fPlain {
			t.Errorf("budget %v: ScheduleRate allocation %v, Rate allocation %v, oracle %v, uniform %v", cfg.Budget, fEst, fPlain, oracle.Freshness, fUni)
		}
	}
	// The estimates saturate: daily fetches cannot see more than one
	// change a day, and 31 of 31 changed gives ln(63) a day.
	if m := math.Log(63); maxOf(plain) > m*(1+1e-12) {
		t.Errorf("estimate %v above the saturation %v", maxOf(plain), m)
	}
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
