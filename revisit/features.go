package revisit

import (
	"cmp"
	"math"
	"slices"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/rankcorr"
)

// FeatureCorrelation is the rank correlation of one page feature with
// the pages' true change rates.
type FeatureCorrelation struct {
	Feature  string  `json:"feature"`
	Spearman float64 `json:"spearman"`
}

// FeatureCorrelations measures which features predict change: for each
// of the six features a crawl records (Page.Features), the feature score
// the estimating schedule groups pages by (log(1+words) +
// log(1+outlinks)) and the page kind (home above directory above other),
// Spearman's rank correlation with the true rate over tr's pages, highest
// magnitude first.
func FeatureCorrelations(tr *Truth) []FeatureCorrelation {
	names := []string{"words", "outlinks", "inlinks", "images", "depth", "bytes", "feature score", "page kind"}
	cols := make([][]float64, len(names))
	rates := make([]float64, len(tr.Pages))
	for i, p := range tr.Pages {
		f := p.Features
		rates[i] = p.Rate
		v := []float64{float64(f.Words), float64(f.Outlinks), float64(f.Inlinks), float64(f.Images), float64(f.Depth), float64(f.Bytes),
			math.Log1p(float64(f.Words)) + math.Log1p(float64(f.Outlinks)), -float64(crawldb.PageKindOf(p.URL))}
		for k := range v {
			cols[k] = append(cols[k], v[k])
		}
	}
	out := make([]FeatureCorrelation, len(names))
	for k, n := range names {
		out[k] = FeatureCorrelation{Feature: n, Spearman: rankcorr.Spearman(cols[k], rates)}
	}
	slices.SortStableFunc(out, func(a, b FeatureCorrelation) int { return cmp.Compare(math.Abs(b.Spearman), math.Abs(a.Spearman)) })
	return out
}
