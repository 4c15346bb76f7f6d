package simweb

import "math"

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

// drawRate returns the change class and rate (per day) of a content page of
// kind k on a host of genre g, given its feature score s (about standard
// normal) and its host's effect h (standard normal).
func drawRate(r *rng, g Genre, k Kind, s, h float64) (ChangeClass, float64) {
	latent := rateRho*s + rateTau*h + math.Sqrt(1-rateRho*rateRho-rateTau*rateTau)*r.normal()
	u := 1 - normCDF(latent) // a high latent means a fast class
	row := &classMix[g][kindRow(k)]
	c, cum := ClassStatic, 0.0
	for i, p := range row {
		cum += p
		if u < cum {
			c = ChangeClass(i)
			break
		}
	}
	if c == ClassStatic {
		return c, 0
	}
	lg := math.Log10(classMedian[c]) + classSigma*(0.5*s+math.Sqrt(0.75)*r.normal())
	return c, min(max(math.Pow(10, lg), minRate), maxRate)
}
