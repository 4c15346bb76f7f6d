// Package poisson estimates how often a page changes and turns the estimate
// into a revisit interval, under the model that a page's changes form a
// Poisson process of rate λ (Hu and Wu, after Cho and Garcia-Molina).
//
// # Time units
//
// The estimators, Freshness, Age and the allocation work in any time unit
// used consistently: an interval of 2 (days) gives a rate per day. The
// functions that read fetch histories (FromHistory, FromObservations,
// LastModifiedEstimate) measure time in seconds, so their rates are per
// second, the unit of crawldb.Datum.FetchInterval.
//
// # Estimators
//
// Cho and Garcia-Molina, "Estimating frequency of change" (ACM TOIT 3(3),
// 2003), give estimators for a crawler that only learns, at each access,
// whether the page changed since the previous access:
//
//   - Regular: n accesses at a fixed interval I saw X changes. The
//     bias-reduced estimator of r = λI is
//     r̂ = -ln((n - X + 0.5) / (n + 0.5)), and λ̂ = r̂/I. It is finite when
//     every access saw a change (r̂ = ln(2n+1)) and 0 when none did. Its
//     variance is about (e^r - 1)/n (delta method on X ~ Binomial(n,
//     1-e^{-r})); Estimate.Confidence maps a Wilson score interval for the
//     change probability through r = -ln(1-p).
//   - Irregular: intervals t_i of any lengths. The maximum-likelihood λ
//     solves Σ_changed t_c/(e^{λ t_c} - 1) = Σ_unchanged t_u. Without
//     help it is ∞ when every interval saw a change. Irregular smooths by
//     adding half an unchanged pseudo-interval whose length is the mean
//     interval: on equal intervals this is exactly the regular estimator's
//     0.5 terms (X/(e^{λI}-1) = n - X + 0.5 gives the formula above), so
//     both estimators agree on regular data, and the estimate is finite
//     for all-changed histories and 0 for none-changed ones. The root is
//     found by a safeguarded Newton iteration inside an analytic bracket
//     (bisection whenever a Newton step leaves the bracket), to a relative
//     tolerance, with an iteration cap.
//   - Last-Modified: when each access also returns the time of the last
//     change, an access that saw a change contributes the time from that
//     change to the access, and one that did not contributes its whole
//     interval, to a total T. The maximum-likelihood estimator is X/T
//     (exact for any access spacing: the likelihood is λ^X e^{-λT}). The
//     bias-reduced form used by LastModifiedAccumulator.Estimate is
//     λ̂ = (X - 1 - X/(N ln(1 - X/N))) / T, the form of the paper's
//     last-modified estimator as quoted in trawl's design brief; the paper's
//     text was not available to check it against, so the tests establish
//     its behaviour by simulation instead (it is (X-1)/T when every access
//     saw a change and about X(1 - 1/(2N))/T when few did). MLE reports X/T.
//
// # Which estimator the scheduler uses
//
// crawldb.Datum keeps fetch times and changed flags (History), not a
// Last-Modified date per fetch, so the dynamic schedule estimates from the
// history with FromHistory and DefaultConfig, and plans with the
// estimate's ScheduleRate. FromHistory uses the smoothed irregular
// maximum-likelihood estimator, because trawl's fetches are not evenly
// spaced (the adaptive schedule changes the interval after every fetch and
// its sync delta shifts fetch times, a generate may skip a due page, fetch
// failures leave gaps), and the regular estimator applied to uneven
// intervals is biased. The irregular estimator stays valid when the
// interval was chosen from earlier observations, as an adaptive schedule
// does (the likelihood of later intervals conditions on the past). When the
// spread of the interval lengths, (max - min)/mean, is at most
// Config.RegularSpread (5% by default: daily rounds whose fetches spread
// over an hour), FromHistory takes the regular closed form at the mean
// interval instead, which needs no root search and differs from the
// irregular estimate by less than half the spread (tested; at most 0.27×
// the spread measured), an order of magnitude below the sampling error of
// a 31-interval history (about 20-30%).
//
// ScheduleRate differs from Rate only when no interval saw a change: a
// rate of 0 would claim the page never changes, so it plans with the rate
// at which half a change would have been expected instead. Saturated
// flags histories where every interval changed, whose true rate may be far
// above the estimate.
//
// The first History entry's flag is not used: its interval started at a
// fetch that is no longer (or never was) in the history. Intervals of zero
// or negative length are skipped and counted in Estimate.Skipped.
//
// # Freshness, age and revisit intervals
//
// A page of rate λ revisited every I has time-average freshness
// F(λ, I) = (1 - e^{-λI})/(λI) and age A(λ, I) = I/2 - 1/λ +
// (1 - e^{-λI})/(λ²I) (Freshness, Age). SeedInterval is Hu and Wu's rule:
// revisit after the estimated mean change period 1/λ, scaled and clamped.
// Allocate is the freshness-optimal allocation of a fetch budget
// (Cho and Garcia-Molina, "Effective page refresh policies for Web
// crawlers", ACM TODS 28(4), 2003): it maximises Σ w_i F(λ_i, 1/f_i)
// subject to Σ f_i = B and MinFreq ≤ f_i ≤ MaxFreq. See Allocate for the
// method and the minimum-rate rule.
package poisson
