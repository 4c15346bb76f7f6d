package revisit

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkTrackerFetch measures one fetch's accounting: a page of 100
// events over 90 days, fetched daily.
func BenchmarkTrackerFetch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const pages = 1000
	per := make([][]float64, pages)
	for i := range per {
		s := 0.0
		for range 100 {
			s += rng.ExpFloat64() * 0.9 * day
			per[i] = append(per[i], s)
		}
	}
	ev, err := NewEvents(per)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for n := 0; n < b.N; {
		tk, err := NewTracker(ev, 90*day)
		if err != nil {
			b.Fatal(err)
		}
		for d := 0; d < 90 && n < b.N; d++ {
			for i := 0; i < pages && n < b.N; i, n = i+1, n+1 {
				if _, _, err := tk.Fetch(i, float64(d)*day); err != nil {
					b.Fatal(err)
				}
			}
		}
		tk.Finish()
	}
}

// BenchmarkRun measures a whole simulation of the small test web (1,891
// pages, 30 days) per policy.
func BenchmarkRun(b *testing.B) {
	tr := small(b)
	for _, p := range PolicyNames() {
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(context.Background(), tr, Config{Days: 30, Policies: []string{p}, Recluster: 7, Eps: -1, Log: quiet()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
