package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// estimateFile is the CrawlDB version file that holds the estimating
// schedule's model fitted to that version (estimateRecord).
const estimateFile = "_estimate.json"

// estimateRecord is the content of a CrawlDB version's _estimate.json:
// the model fitted to the version's rows, and the settings it was fitted
// with (a model fitted with other settings is not used).
type estimateRecord struct {
	Config      crawldb.EstimateConfig `json:"config"`
	MaxInterval time.Duration          `json:"max_interval"`
	FittedAt    time.Time              `json:"fitted_at"`
	Model       *crawldb.EstimateModel `json:"model"`
}

// estimateRow is what fitting the estimating schedule's model reads of a
// CrawlDB row.
type estimateRow struct {
	URL        string                `parquet:"url"`
	Status     crawldb.Status        `parquet:"status"`
	FetchCount int32                 `parquet:"fetch_count"`
	Features   crawldb.Features      `parquet:"features"`
	History    []crawldb.Observation `parquet:"history,list"`
}

// withEstimateModel returns o with, under the estimating schedule
// (Name "estimate") and no model yet, the model of the current CrawlDB
// version: the one updatedb fitted to it and recorded in its
// _estimate.json, if that was fitted with o's settings, else one fitted
// now (fitEstimate); other schedules come back as they are. generate and
// updatedb call it before they build their jobs, so that the model
// travels in the job spec and every task schedules with the same one.
func withEstimateModel(ctx context.Context, env Env, cp crawlPaths, o ScheduleOptions) (ScheduleOptions, error) {
	o = o.resolved()
	if o.Name != "estimate" || o.Model != nil {
		return o, nil
	}
	current := path.Join(cp.dbPath, crawldb.CurrentName)
	if data, err := storage.ReadFile(cp.fs, path.Join(current, estimateFile)); err == nil {
		var rec estimateRecord
		if json.Unmarshal(data, &rec) == nil && rec.Model != nil && rec.Config == o.Config.Estimate && rec.MaxInterval == o.Config.MaxInterval {
			if _, err := crawldb.NewEstimateSchedule(o.Config, rec.Model); err == nil {
				o.Model = rec.Model
				return o, nil
			}
		}
		env.log().Warn("estimate schedule: the CrawlDB's recorded model is unusable or was fitted with other settings: fitting it again", "file", path.Join(current, estimateFile))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return o, fmt.Errorf("estimate schedule: %w", err)
	}
	m, err := fitEstimate(ctx, env, cp, current, o)
	if err != nil {
		return o, err
	}
	o.Model = m
	return o, nil
}

// fitEstimate fits the estimating schedule's model to the CrawlDB
// version in dir (a path in cp's file system): crawldb's EstimateSample
// over its url, status, fetch count, features and history columns, part
// by part (one part's reader at a time, for memory), then its Fit.
func fitEstimate(ctx context.Context, env Env, cp crawlPaths, dir string, o ScheduleOptions) (*crawldb.EstimateModel, error) {
	start := time.Now()
	parts, err := parquetio.PartFiles(cp.fs, dir)
	if errors.Is(err, fs.ErrNotExist) {
		parts = nil
	} else if err != nil {
		return nil, fmt.Errorf("estimate schedule: list the CrawlDB: %w", err)
	}
	s := crawldb.NewEstimateSample(o.Config.Estimate.SampleSizeOrDefault())
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := readParquet(cp.fs, p, func(r estimateRow) error {
			s.Add(&crawldb.Datum{URL: r.URL, Status: r.Status, FetchCount: r.FetchCount, Features: r.Features, History: r.History})
			return nil
		}, parquetio.AllowMissingColumns())
		if err != nil {
			return nil, fmt.Errorf("estimate schedule: read the CrawlDB: %s: %w", p, err)
		}
	}
	m, err := s.Fit(ctx, o.Config.Estimate, o.Config.MaxInterval, 0)
	if err != nil {
		return nil, fmt.Errorf("estimate schedule: %w", err)
	}
	env.log().Info("estimate schedule: model fitted", "urls", m.Pages, "observed", m.Observed,
		"fetches_per_day", m.Budget, "multiplier", m.Mu, "duration", time.Since(start).Round(time.Millisecond))
	return m, nil
}

// writeEstimateRecord fits the estimating schedule's model to the new
// CrawlDB version in dir and records it there (_estimate.json), so that
// the next generate and updatedb schedule with it without reading the
// CrawlDB again. Other schedules write nothing.
func writeEstimateRecord(ctx context.Context, env Env, cp crawlPaths, dir string, o ScheduleOptions) error {
	o = o.resolved()
	if o.Name != "estimate" {
		return nil
	}
	m, err := fitEstimate(ctx, env, cp, dir, o)
	if err != nil {
		return err
	}
	data, err := json.Marshal(estimateRecord{Config: o.Config.Estimate, MaxInterval: o.Config.MaxInterval, FittedAt: time.Now().UTC(), Model: m})
	if err != nil {
		return fmt.Errorf("estimate schedule: %w", err)
	}
	if err := storage.WriteFileAtomic(cp.fs, path.Join(dir, estimateFile), data); err != nil {
		return fmt.Errorf("estimate schedule: %w", err)
	}
	return nil
}
