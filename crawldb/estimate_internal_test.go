package crawldb

import (
	"math"
	"testing"

	"github.com/trawl/trawl/poisson"
)

// TestFreshnessRate inverts poisson.Freshness over the rates and
// intervals the schedule plans with.
func TestFreshnessRate(t *testing.T) {
	for _, iv := range []float64{1.0 / 24, 1, 3, 14, 90} {
		for _, lam := range []float64{1e-5, 1e-3, 0.01, 0.3, 1, 5, 30, 99} {
			f := poisson.Freshness(lam, iv)
			got := freshnessRate(f, iv)
			if want := min(max(lam, 1e-6), 100); math.Abs(got-want) > 1e-6*want && math.Abs(poisson.Freshness(got, iv)-f) > 1e-12 {
				t.Errorf("freshnessRate(Freshness(%v, %v) = %v, %v) = %v", lam, iv, f, iv, got)
			}
		}
	}
	if r := freshnessRate(1, 3); r != 1e-6 {
		t.Errorf("freshness 1: rate %v, want the lowest", r)
	}
	if r := freshnessRate(0, 3); r != 100 {
		t.Errorf("freshness 0: rate %v, want the highest", r)
	}
}
