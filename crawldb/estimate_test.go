package crawldb_test

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// estimatePages makes n pages of each of three kinds of change (every
// 6 hours, every 5 days, never), each fetched daily for 20 days with its
// changes detected by signature, and their histories.
func estimatePages(n int, lastModified bool) []crawldb.Datum {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 8))
	rates := []float64{4, 0.2, 0} // per day
	var out []crawldb.Datum
	for k, rate := range rates {
		for i := range n {
			d := crawldb.Datum{URL: fmt.Sprintf("http://h%d.test/p%d.html", k, i), Status: crawldb.StatusDBFetched,
				Features: crawldb.Features{Words: 300, Outlinks: 10}}
			next := math.Inf(1)
			if rate > 0 {
				next = rng.ExpFloat64() / rate
			}
			last := -1.0
			for day := range 20 {
				t := float64(day)
				changed := false
				for next <= t {
					changed, last = true, next
					next += rng.ExpFloat64() / rate
				}
				var lm time.Time
				if lastModified && last >= 0 {
					lm = t0.Add(time.Duration(last * float64(24*time.Hour)))
				}
				at := t0.Add(time.Duration(day) * 24 * time.Hour)
				d.FetchCount++
				d.Observe(at, changed && day > 0, lm)
				d.PrevFetchTime = at
			}
			d.Source = crawldb.SourceEstimate
			out = append(out, d)
		}
	}
	return out
}

func pagesOf(ds []crawldb.Datum) iter.Seq[*crawldb.Datum] {
	return func(yield func(*crawldb.Datum) bool) {
		for i := range ds {
			if !yield(&ds[i]) {
				return
			}
		}
	}
}

// TestEstimateSchedule fits the model to pages that change fast, slowly
// and never, and checks the planned intervals: the budget is spent
// (the frequencies sum to it), slow pages are revisited about as often as
// they change, static pages rarely, and pages changing faster than the
// budget can follow get no more than the fetch-a-day bound. With
// Last-Modified dates the fast pages are told apart more surely.
func TestEstimateSchedule(t *testing.T) {
	for _, lm := range []bool{false, true} {
		t.Run(fmt.Sprintf("lastModified=%v", lm), func(t *testing.T) {
			pages := estimatePages(200, lm)
			cfg := crawldb.DefaultScheduleConfig()
			const budget = 120.0 // fetches a day for 600 pages
			m, err := crawldb.FitEstimateModel(context.Background(), pagesOf(pages), cfg.Estimate, cfg.MaxInterval, budget)
			if err != nil {
				t.Fatal(err)
			}
			if m.Pages != 600 || m.Observed != 600 || !(m.Mu > 0) {
				t.Fatalf("model: %d pages, %d observed, multiplier %v", m.Pages, m.Observed, m.Mu)
			}
			s, err := crawldb.NewEstimateSchedule(cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			mean := make([]float64, 3)
			for i := range pages {
				iv := s.Interval(&pages[i]).Hours() / 24
				sum += 1 / iv
				mean[i/200] += iv / 200
			}
			t.Logf("spend %.1f, mean intervals %.2f %.2f %.2f", sum, mean[0], mean[1], mean[2])
			if math.Abs(sum-budget) > 0.05*budget {
				t.Errorf("the intervals spend %.1f fetches a day, want about %v", sum, budget)
			}
			if !(mean[1] > 1.5 && mean[1] < 10 && mean[2] > 3*mean[1] && mean[0] >= 1) {
				t.Errorf("mean intervals (days) fast %.2f, slow %.2f, static %.2f: want slow about its 5-day period, static much longer, none below a day", mean[0], mean[1], mean[2])
			}
			d := pages[250] // a slow page: ShouldFetch re-plans from its last fetch
			d.FetchTime = time.Time{}
			now := d.PrevFetchTime.Add(24 * time.Hour)
			s.ShouldFetch(&d, now)
			if want := d.PrevFetchTime.Add(s.Interval(&d) - cfg.Estimate.Slack); !d.FetchTime.Equal(want) {
				t.Errorf("ShouldFetch planned the fetch at %v, want %v", d.FetchTime, want)
			}
		})
	}
}

// TestEstimateScheduleWithoutModel plans without a fitted model (a job
// built directly) and refuses a malformed model.
func TestEstimateScheduleWithoutModel(t *testing.T) {
	cfg := crawldb.DefaultScheduleConfig()
	s, err := crawldb.NewSchedule("estimate", cfg)
	if err != nil {
		t.Fatal(err)
	}
	pages := estimatePages(1, true)
	if iv := s.(*crawldb.EstimateSchedule).Interval(&pages[0]); iv <= 0 || iv > cfg.MaxInterval {
		t.Errorf("interval without a model %v", iv)
	}
	if _, err := crawldb.NewEstimateSchedule(cfg, &crawldb.EstimateModel{Priors: [][]float64{{1}}}); err == nil {
		t.Error("a model with one prior of one value was accepted")
	}
	bad := cfg
	bad.Estimate.BudgetShare = 2
	if _, err := crawldb.NewEstimateSchedule(bad, nil); err == nil {
		t.Error("a budget share of 2 was accepted")
	}
}

// BenchmarkFitEstimateModel fits the model to 30,000 pages with 20-day
// histories (three passes; the EM on all of them); ns/op over 30,000 is
// the cost per CrawlDB row of the fit generate and updatedb run.
func BenchmarkFitEstimateModel(b *testing.B) {
	pages := estimatePages(10_000, true)
	cfg := crawldb.DefaultScheduleConfig()
	b.ResetTimer()
	for range b.N {
		if _, err := crawldb.FitEstimateModel(context.Background(), pagesOf(pages), cfg.Estimate, cfg.MaxInterval, 3000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pages)), "ns/page")
}

// BenchmarkEstimateInterval plans one page with a 20-fetch history, as
// generate does for every fetched CrawlDB row.
func BenchmarkEstimateInterval(b *testing.B) {
	pages := estimatePages(1_000, true)
	cfg := crawldb.DefaultScheduleConfig()
	m, err := crawldb.FitEstimateModel(context.Background(), pagesOf(pages), cfg.Estimate, cfg.MaxInterval, 300)
	if err != nil {
		b.Fatal(err)
	}
	s, err := crawldb.NewEstimateSchedule(cfg, m)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		s.Interval(&pages[i%len(pages)])
	}
}

// TestEstimateSampleMerges: the samples of two halves, merged, are the
// sample of the whole, in either order, and the fitted models agree.
func TestEstimateSampleMerges(t *testing.T) {
	pages := estimatePages(300, true)
	whole := crawldb.NewEstimateSample(200)
	a, b := crawldb.NewEstimateSample(200), crawldb.NewEstimateSample(200)
	for i := range pages {
		whole.Add(&pages[i])
		if i%2 == 0 {
			a.Add(&pages[i])
		} else {
			b.Add(&pages[i])
		}
	}
	b.Merge(a)
	if whole.Pages() != 900 || b.Pages() != 900 {
		t.Fatalf("pages %d and %d, want 900", whole.Pages(), b.Pages())
	}
	cfg := crawldb.DefaultScheduleConfig()
	m1, err := whole.Fit(context.Background(), cfg.Estimate, cfg.MaxInterval, 150)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := b.Fit(context.Background(), cfg.Estimate, cfg.MaxInterval, 150)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Mu != m2.Mu || m1.PlanMu != m2.PlanMu || m1.Pages != m2.Pages || m1.Observed != m2.Observed || m1.Mu <= 0 {
		t.Errorf("whole: mu %v/%v pages %d observed %d; merged halves: %v/%v %d %d", m1.Mu, m1.PlanMu, m1.Pages, m1.Observed, m2.Mu, m2.PlanMu, m2.Pages, m2.Observed)
	}
}
