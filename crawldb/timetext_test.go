package crawldb

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestAppendTimeMatchesFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	loc := time.FixedZone("X", -5*3600)
	times := []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 500e6, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 10e6, loc),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1e6, time.UTC),
		time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := 0; i < 10000; i++ {
		times = append(times, time.UnixMilli(rng.Int64N(1<<42)).In(loc))
	}
	for _, tm := range times {
		want := tm.UTC().Format(textTimeLayout)
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%v) = %q, want %q", tm, got, want)
		}
	}
	if timeText(time.Time{}) != "" {
		t.Error("zero time not empty")
	}
}
