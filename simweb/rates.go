package simweb

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The change-rate mixture. A content page's rate is drawn in two steps:
//
//  1. a change class (hourly, daily, weekly, monthly, yearly, static) from
//     classMix[genre][kind row], through a Gaussian copula whose latent
//     variable is rateRho·s + rateTau·h + √(1−rateRho²−rateTau²)·ε, where s
//     is the page's standardized feature score (its words and outlink
//     draws), h a per-host effect and ε noise; the copula keeps the class
//     proportions of the table exactly while making bigger, link-rich pages
//     more likely to fall in faster classes;
//  2. a rate around the class median, log10-normal with σ = classSigma
//     decades, also nudged by s.
//
// See the package documentation for the sources behind the numbers.

// classMedian is the median rate of each class, in changes per day.
var classMedian = [numClasses]float64{12, 1.5, 0.15, 1.0 / 30, 1.0 / 365, 0}

// classSigma is the spread of log10(rate) within a class.
const classSigma = 0.3

// Copula weights: correlation of the class latent with the feature score
// and with the host effect.
const (
	rateRho = 0.5
	rateTau = 0.3
)

// maxRate and minRate bound drawn rates (per day).
const (
	maxRate = 48.0
	minRate = 1e-4
)

// kind rows of classMix.
const (
	rowHome = iota
	rowDirectory
	rowLeaf
	rowDocument
	numRows
)

// classMix[genre][row] are the class probabilities (hourly, daily, weekly,
// monthly, yearly, static). Leaves dominate the page count, so the leaf
// rows set the overall mix; home and directory pages change faster.
// Read-only.
var classMix = [numGenres][numRows][numClasses]float64{
	GenreNews: {
		rowHome:      {0.70, 0.30, 0, 0, 0, 0},
		rowDirectory: {0.40, 0.45, 0.10, 0.03, 0.01, 0.01},
		rowLeaf:      {0.15, 0.50, 0.20, 0.08, 0.04, 0.03},
		rowDocument:  {0, 0.02, 0.05, 0.15, 0.38, 0.40},
	},
	GenreCommerce: {
		rowHome:      {0.25, 0.45, 0.20, 0.05, 0.03, 0.02},
		rowDirectory: {0.10, 0.40, 0.25, 0.12, 0.08, 0.05},
		rowLeaf:      {0.05, 0.32, 0.20, 0.15, 0.16, 0.12},
		rowDocument:  {0, 0.02, 0.05, 0.15, 0.38, 0.40},
	},
	GenreOrg: {
		rowHome:      {0.08, 0.35, 0.30, 0.15, 0.08, 0.04},
		rowDirectory: {0.04, 0.20, 0.30, 0.22, 0.14, 0.10},
		rowLeaf:      {0.02, 0.13, 0.20, 0.22, 0.25, 0.18},
		rowDocument:  {0, 0.02, 0.05, 0.15, 0.38, 0.40},
	},
	GenreEduGov: {
		rowHome:      {0.03, 0.20, 0.30, 0.25, 0.15, 0.07},
		rowDirectory: {0.02, 0.10, 0.20, 0.25, 0.25, 0.18},
		rowLeaf:      {0.01, 0.05, 0.10, 0.17, 0.35, 0.32},
		rowDocument:  {0, 0.01, 0.03, 0.10, 0.36, 0.50},
	},
}

// genreShare is the target share of content pages per genre; hosts are
// assigned genres so that the page-weighted shares track it.
var genreShare = [numGenres]float64{GenreNews: 0.10, GenreCommerce: 0.45, GenreOrg: 0.20, GenreEduGov: 0.25}

func kindRow(k Kind) int {
	switch k {
	case KindHome:
		return rowHome
	case KindDirectory:
		return rowDirectory
	case KindDocument:
		return rowDocument
	}
	return rowLeaf
}

// ChangeModel selects how the change rates of content pages are drawn:
// how strongly a page's features, kind and host predict its rate, and
// whether rates stay constant. See the package documentation, "# Change
// models".
type ChangeModel string

// The change models.
const (
	// ChangeDefault (or "") is the mixture described under "# Change
	// rates": copula weight 0.5 on the feature score, 0.3 on the host,
	// σ = 0.3 decades within a class.
	ChangeDefault ChangeModel = "default"
	// ChangeStrong makes features and kind predict the rate strongly:
	// copula weight 0.85 on the feature score, 0.3 on the host, σ = 0.15
	// decades within a class, 80% of it driven by the score.
	ChangeStrong ChangeModel = "strong"
	// ChangeWeak makes features predict the rate weakly: copula weight
	// 0.15 on the feature score, 0.1 on the host, σ = 0.3 decades with 15%
	// driven by the score.
	ChangeWeak ChangeModel = "weak"
	// ChangeNone makes the rate independent of features, host, kind and
	// genre: every content page draws its class from one pooled mix (the
	// page-weighted average of the class mixes of the web's pages) with a
	// latent of pure noise, and its rate around the class median from
	// noise alone.
	ChangeNone ChangeModel = "none"
	// ChangeDrift draws the first rate as ChangeDefault does, then
	// switches every content page once, at a time uniform in the first
	// DriftWindow after the epoch, to a second class and rate drawn afresh
	// from the same genre and kind row (same feature score, fresh noise
	// and a fresh host effect).
	ChangeDrift ChangeModel = "drift"
)

// DriftWindow is the span after the epoch within which ChangeDrift
// switches each page's rate.
const DriftWindow = 120 * 24 * time.Hour

// changeModelList names the valid models for error messages.
const changeModelList = `"" or default, strong, weak, none, drift`

func (m ChangeModel) valid() bool {
	switch m {
	case "", ChangeDefault, ChangeStrong, ChangeWeak, ChangeNone, ChangeDrift:
		return true
	}
	return false
}

// ParseChangeModel parses a change model's name (case-insensitive; ""
// is ChangeDefault).
func ParseChangeModel(s string) (ChangeModel, error) {
	m := ChangeModel(strings.ToLower(strings.TrimSpace(s)))
	if m == "" {
		return ChangeDefault, nil
	}
	if !m.valid() {
		return "", fmt.Errorf("simweb: unknown change model %q (want default, strong, weak, none or drift)", s)
	}
	return m, nil
}

// rateParams are the weights of drawRate.
type rateParams struct {
	rho, tau, noise     float64 // class latent: weights of s, h and noise (squares sum to 1)
	sigma               float64 // spread of log10(rate) within a class, decades
	within, withinNoise float64 // within-class deviation: weights of s and noise (squares sum to 1)
}

var (
	defaultRates = rateParams{rateRho, rateTau, math.Sqrt(1 - rateRho*rateRho - rateTau*rateTau), classSigma, 0.5, math.Sqrt(0.75)}
	strongRates  = rateParams{0.85, 0.3, math.Sqrt(1 - 0.85*0.85 - 0.3*0.3), 0.15, 0.8, 0.6}
	weakRates    = rateParams{0.15, 0.1, math.Sqrt(1 - 0.15*0.15 - 0.1*0.1), classSigma, 0.15, math.Sqrt(1 - 0.15*0.15)}
	noneRates    = rateParams{0, 0, 1, classSigma, 0, 1}
)

// rateParamsOf returns the weights of model m.
func rateParamsOf(m ChangeModel) *rateParams {
	switch m {
	case ChangeStrong:
		return &strongRates
	case ChangeWeak:
		return &weakRates
	case ChangeNone:
		return &noneRates
	}
	return &defaultRates
}

// drawRate returns the change class and rate (per day) of a content page
// whose class probabilities are mix, given its feature score s (about
// standard normal) and its host's effect h (standard normal), with the
// weights p.
func drawRate(r *rng, mix *[numClasses]float64, s, h float64, p *rateParams) (ChangeClass, float64) {
	latent := p.rho*s + p.tau*h + p.noise*r.normal()
	u := 1 - normCDF(latent) // a high latent means a fast class
	c, cum := ClassStatic, 0.0
	for i, q := range mix {
		cum += q
		if u < cum {
			c = ChangeClass(i)
			break
		}
	}
	if c == ClassStatic {
		return c, 0
	}
	lg := math.Log10(classMedian[c]) + p.sigma*(p.within*s+p.withinNoise*r.normal())
	return c, min(max(math.Pow(10, lg), minRate), maxRate)
}
