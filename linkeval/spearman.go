package linkeval

import "github.com/trawl/trawl/internal/rankcorr"

// Spearman returns Spearman's rank correlation coefficient rho of x and y
// (equal lengths): the Pearson correlation of their ranks, tied values
// sharing the mean of their ranks. It is NaN when either has fewer than
// two distinct values.
func Spearman(x, y []float64) float64 { return rankcorr.Spearman(x, y) }
