package poisson

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// benchHistory returns a 32-entry history of a page changing every 3 days
// on average, fetched at the given intervals (seconds).
func benchHistory(intervals func(i int) float64) []Observation {
	rng := rand.New(rand.NewPCG(12, 12))
	p := newPage(rng, 1/(3*86400.0))
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := make([]Observation, 32)
	now := 0.0
	for i := range h {
		now += intervals(i)
		c, _ := p.access(now)
		h[i] = Observation{Time: t0.Add(time.Duration(now * float64(time.Second))), Changed: c}
	}
	return h
}

func benchFromHistory(b *testing.B, h []Observation) {
	cfg := DefaultConfig()
	at := func(o Observation) (time.Time, bool) { return o.Time, o.Changed }
	var e Estimate
	b.ReportAllocs()
	for b.Loop() {
		e = FromHistory(h, at, cfg)
	}
	if !e.OK() {
		b.Fatal(e)
	}
	b.ReportMetric(float64(e.Iterations), "iterations")
}

// BenchmarkFromHistoryIrregular estimates from a 32-entry history with
// intervals of 1 to 5 days (the smoothed irregular MLE).
func BenchmarkFromHistoryIrregular(b *testing.B) {
	rng := rand.New(rand.NewPCG(13, 13))
	benchFromHistory(b, benchHistory(func(int) float64 { return float64(1+rng.IntN(5)) * 86400 }))
}

// BenchmarkFromHistoryRegular estimates from a 32-entry history of daily
// fetches (the regular closed form).
func BenchmarkFromHistoryRegular(b *testing.B) {
	benchFromHistory(b, benchHistory(func(int) float64 { return 86400 }))
}

// simwebLikeRates draws n rates per day from a mixture like simweb's:
// classes with medians 12, 1.5, 0.15, 1/30 and 1/365 a day (log10-normal,
// σ = 0.3 decades) and static pages.
func simwebLikeRates(n int) []float64 {
	rng := rand.New(rand.NewPCG(14, 14))
	medians := []float64{12, 1.5, 0.15, 1.0 / 30, 1.0 / 365, 0}
	cum := []float64{0.05, 0.25, 0.50, 0.70, 0.85, 1}
	rates := make([]float64, n)
	for i := range rates {
		u := rng.Float64()
		c := 0
		for u > cum[c] {
			c++
		}
		rates[i] = medians[c] * math.Pow(10, 0.3*rng.NormFloat64())
	}
	return rates
}

// BenchmarkAllocate1M allocates 100,000 fetches a day over 1,000,000 pages
// with simweb-like rates, at least one fetch per 90 days and at most 24 a
// day per page.
func BenchmarkAllocate1M(b *testing.B) {
	rates := simwebLikeRates(1_000_000)
	cfg := AllocConfig{Budget: 100_000, MinFreq: 1.0 / 90, MaxFreq: 24}
	ctx := context.Background()
	var a Allocation
	var err error
	for b.Loop() {
		a, err = Allocate(ctx, rates, nil, cfg)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(a.Passes), "passes")
	b.ReportMetric(a.Freshness, "freshness")
}
