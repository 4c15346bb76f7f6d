package jobs

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// TestCrawlEstimateSchedule crawls a synthetic web with the estimating
// schedule: generate and updatedb fit its model to the CrawlDB, every
// fetched page is scheduled by it, the first fetch starts the history and
// the server's Last-Modified dates are kept in it, and the model that
// updatedb records for the next generate is the one
// crawldb.FitEstimateModel gives for the same rows (the code `trawl eval
// revisit` runs).
func TestCrawlEstimateSchedule(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o := testCrawlOptions(srv, seeds, 6, t0)
	sched := ScheduleOptions{Name: "estimate"}
	o.Generate.Schedule, o.Update.Schedule = sched, sched
	o.Generate.TopN = 25
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	rows := dbRows(t, env)
	intervals := map[int32]bool{}
	fetched, dated := 0, 0
	for _, d := range rows {
		if d.FetchCount == 0 {
			continue
		}
		fetched++
		if d.Source != crawldb.SourceEstimate {
			t.Errorf("%s: schedule source %q, want estimate", d.URL, d.Source)
		}
		intervals[d.FetchInterval] = true
		if len(d.History) != int(d.FetchCount) || !d.History[0].Initial {
			t.Errorf("%s: %d observations for %d fetches: the first fetch must start the history", d.URL, len(d.History), d.FetchCount)
		}
		for _, h := range d.History {
			if _, ok := h.LastModified(); ok {
				dated++
			}
		}
	}
	if fetched < 50 || len(intervals) < 3 || dated == 0 {
		t.Errorf("%d pages fetched, %d distinct intervals, %d observations with a Last-Modified date: want at least 50, 3 and 1", fetched, len(intervals), dated)
	}

	cp, err := env.paths()
	if err != nil {
		t.Fatal(err)
	}
	// The last updatedb recorded the model of the version it installed.
	if _, err := os.Stat(filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName, estimateFile)); err != nil {
		t.Errorf("no recorded model: %v", err)
	}
	got, err := withEstimateModel(context.Background(), env, cp, sched)
	if err != nil {
		t.Fatal(err)
	}
	pages := func(yield func(*crawldb.Datum) bool) {
		for i := range rows {
			if !yield(&rows[i]) {
				return
			}
		}
	}
	cfg := crawldb.DefaultScheduleConfig()
	want, err := crawldb.FitEstimateModel(context.Background(), pages, cfg.Estimate, cfg.MaxInterval, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model.Pages != want.Pages || got.Model.Observed != want.Observed || math.Abs(got.Model.Mu-want.Mu) > 1e-9*want.Mu {
		t.Errorf("generate's model: %d pages, %d observed, mu %v; FitEstimateModel's: %d, %d, %v",
			got.Model.Pages, got.Model.Observed, got.Model.Mu, want.Pages, want.Observed, want.Mu)
	}
}
