package revisit

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// TestFeatureCorrelations: on a trace whose rates grow with the words and
// ignore the images, words correlate fully and images not at all.
func TestFeatureCorrelations(t *testing.T) {
	var pages []TracePage
	for i := range 50 {
		pages = append(pages, TracePage{URL: fmt.Sprintf("http://h.test/p%d.html", i),
			Features: crawldb.Features{Words: int32(10 + i), Images: int32(7 * (i % 2))}, Rate: float64(i) / 10})
	}
	tr, err := NewTraceTruth(pages, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range FeatureCorrelations(tr) {
		got[f.Feature] = f.Spearman
	}
	if math.Abs(got["words"]-1) > 1e-9 || math.Abs(got["images"]) > 0.1 || len(got) != 8 {
		t.Errorf("correlations %v: want words 1, images about 0, 8 features", got)
	}
}
