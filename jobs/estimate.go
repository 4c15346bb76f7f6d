package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
)

// estimateRow is what fitting the estimating schedule's model reads of a
// CrawlDB row.
type estimateRow struct {
	URL        string                `parquet:"url"`
	Status     crawldb.Status        `parquet:"status"`
	FetchCount int32                 `parquet:"fetch_count"`
	Features   crawldb.Features      `parquet:"features"`
	History    []crawldb.Observation `parquet:"history,list"`
}

// errStopScan ends a scan early when the consumer stops.
var errStopScan = errors.New("scan stopped")

// withEstimateModel returns o with, under the estimating schedule
// (Name "estimate") and no model yet, the model fitted to the current
// CrawlDB (crawldb.FitEstimateModel, reading its url, status, fetch
// count, features and history columns once); other schedules come back as
// they are. generate and updatedb call it before they build their jobs,
// so that the model travels in the job spec and every task schedules with
// the same one.
func withEstimateModel(ctx context.Context, env Env, cp crawlPaths, o ScheduleOptions) (ScheduleOptions, error) {
	o = o.resolved()
	if o.Name != "estimate" || o.Model != nil {
		return o, nil
	}
	start := time.Now()
	parts, err := parquetio.PartFiles(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName))
	if errors.Is(err, fs.ErrNotExist) {
		parts = nil
	} else if err != nil {
		return o, fmt.Errorf("estimate schedule: list the CrawlDB: %w", err)
	}
	var readErr error
	pages := func(yield func(*crawldb.Datum) bool) {
		for _, p := range parts {
			err := readParquet(cp.fs, p, func(r estimateRow) error {
				d := crawldb.Datum{URL: r.URL, Status: r.Status, FetchCount: r.FetchCount, Features: r.Features, History: r.History}
				if !yield(&d) {
					return errStopScan
				}
				return nil
			}, parquetio.AllowMissingColumns())
			if errors.Is(err, errStopScan) {
				return
			}
			if err != nil {
				readErr = fmt.Errorf("%s: %w", p, err)
				return
			}
		}
	}
	m, err := crawldb.FitEstimateModel(ctx, pages, o.Config.Estimate, o.Config.MaxInterval, 0)
	if readErr != nil {
		return o, fmt.Errorf("estimate schedule: read the CrawlDB: %w", readErr)
	}
	if err != nil {
		return o, fmt.Errorf("estimate schedule: %w", err)
	}
	env.log().Info("estimate schedule: model fitted", "urls", m.Pages, "observed", m.Observed,
		"fetches_per_day", m.Budget, "multiplier", m.Mu, "duration", time.Since(start).Round(time.Millisecond))
	o.Model = m
	return o, nil
}
