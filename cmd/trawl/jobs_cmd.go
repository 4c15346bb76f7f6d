package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/urlutil"
)

// runner returns the local MapReduce runner the settings describe.
func (s *session) runner() (*mapreduce.LocalRunner, error) {
	cfg := s.cfg
	if p := cfg.Int(config.EngineParallelism); p < 0 {
		return nil, usageErrorf("%s must be >= 0, not %d", config.EngineParallelism, p)
	}
	if n := cfg.Int(config.EngineMaxAttempts); n < 1 {
		return nil, usageErrorf("%s must be >= 1, not %d", config.EngineMaxAttempts, n)
	}
	if n := cfg.Int(config.EngineMergeFactor); n < 2 {
		return nil, usageErrorf("%s must be >= 2, not %d", config.EngineMergeFactor, n)
	}
	if m := cfg.Size(config.EngineMemory); m < 1<<20 {
		return nil, usageErrorf("%s must be at least 1MiB, not %d bytes", config.EngineMemory, m)
	}
	r := &mapreduce.LocalRunner{
		Storage:          s.resolver,
		TempDir:          cfg.String(config.EngineTempDir),
		MemoryBudget:     cfg.Size(config.EngineMemory),
		Parallelism:      cfg.Int(config.EngineParallelism),
		MaxAttempts:      cfg.Int(config.EngineMaxAttempts),
		MergeFactor:      cfg.Int(config.EngineMergeFactor),
		Log:              s.log,
		ProgressInterval: cfg.Duration(config.EngineProgressInterval),
	}
	// Progress bars and counter tables are info-level chatter.
	if s.log.Enabled(context.Background(), slog.LevelInfo) {
		r.Progress = s.io.stderr
	}
	return r, nil
}

// jobsEnv returns what every crawl job needs.
func (s *session) jobsEnv(c *cli.Context) (jobs.Env, error) {
	r, err := s.runner()
	if err != nil {
		return jobs.Env{}, err
	}
	maxAge := s.cfg.Duration(config.LockMaxAge)
	if maxAge == 0 {
		maxAge = -1 // crawldb: negative disables the age test
	}
	parts := s.cfg.Int(config.CrawlDBParts)
	if parts < 0 {
		return jobs.Env{}, usageErrorf("%s must be >= 0, not %d", config.CrawlDBParts, parts)
	}
	return jobs.Env{
		Storage:    s.resolver,
		Crawl:      s.crawl(),
		Runner:     r,
		Log:        s.log,
		LockMaxAge: maxAge,
		ForceLock:  c.Bool("force"),
		DBParts:    parts,
		KeepOldDB:  s.cfg.Bool(config.CrawlDBKeepOld),
		Interrupt:  interruptFrom(c.Context),
	}, nil
}

// schedule returns the fetch schedule the settings describe.
func (s *session) schedule() (jobs.ScheduleOptions, error) {
	cfg := s.cfg
	o := jobs.ScheduleOptions{
		Name: cfg.String(config.ScheduleName),
		Config: crawldb.ScheduleConfig{
			DefaultInterval: cfg.Duration(config.ScheduleDefaultInterval),
			MaxInterval:     cfg.Duration(config.ScheduleMaxInterval),
			Adaptive: crawldb.AdaptiveConfig{
				IncRate:       cfg.Float(config.AdaptiveIncRate),
				DecRate:       cfg.Float(config.AdaptiveDecRate),
				MinInterval:   cfg.Duration(config.AdaptiveMinInterval),
				MaxInterval:   cfg.Duration(config.AdaptiveMaxInterval),
				SyncDelta:     cfg.Bool(config.AdaptiveSyncDelta),
				SyncDeltaRate: cfg.Float(config.AdaptiveSyncDeltaRate),
			},
			Dynamic: s.dynamicConfig(),
		},
	}
	// Check the values now, for an error that names the settings.
	if _, err := crawldb.NewSchedule(o.Name, o.Config); err != nil {
		return o, usageErrorf("schedule.* settings: %w", err)
	}
	return o, nil
}

// filters returns the URL filters the settings describe.
func (s *session) filters() (jobs.URLFilterOptions, error) {
	cfg := s.cfg
	for _, name := range []string{config.URLFilterMaxLength, config.URLFilterMaxSegmentRepeats, config.URLFilterMaxSegments} {
		if n := cfg.Int(name); n < 0 {
			return jobs.URLFilterOptions{}, usageErrorf("%s must be >= 0, not %d", name, n)
		}
	}
	o := urlutil.FilterOptions{
		Schemes:           cfg.List(config.URLFilterSchemes),
		MaxLength:         cfg.Int(config.URLFilterMaxLength),
		MaxSegmentRepeats: cfg.Int(config.URLFilterMaxSegmentRepeats),
		MaxSegments:       cfg.Int(config.URLFilterMaxSegments),
	}
	if cfg.Bool(config.URLFilterSuffix) {
		o.DenySuffixes = urlutil.DefaultDenySuffixes()
	}
	return jobs.URLFilterOptions{Options: o, RegexFiles: cfg.List(config.URLFilterRegexFiles)}, nil
}

// jobError gives a job's error its exit status.
func jobError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jobs.ErrNothingDue), errors.Is(err, jobs.ErrAlreadyMerged):
		return withCode(exitNothingToDo, err)
	case errors.Is(err, jobs.ErrInterrupted):
		return withCode(exitInterrupted, err)
	case errors.Is(err, crawldb.ErrLocked):
		return withCode(exitLocked, err)
	}
	return withCode(exitFailure, err)
}

// nowFlag parses a command's --now flag.
func nowFlag(c *cli.Context) (time.Time, error) {
	t, err := parseNow(c.String("now"), time.Now())
	if err != nil {
		return t, usageErrorf("%s: %w", c.Command.Name, err)
	}
	return t, nil
}

func (s *session) inject(c *cli.Context) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.injectOptions()
	if err != nil {
		return err
	}
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	o.Seeds = c.Args().Slice()
	_, err = jobs.Inject(c.Context, env, o)
	return jobError(err)
}

// injectOptions returns inject's options from the settings (without Seeds
// and Now).
func (s *session) injectOptions() (jobs.InjectOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.InjectOptions{}, err
	}
	filters, err := s.filters()
	if err != nil {
		return jobs.InjectOptions{}, err
	}
	score := s.cfg.Float(config.InjectScore)
	if score <= 0 {
		return jobs.InjectOptions{}, usageErrorf("%s must be > 0, not %g", config.InjectScore, score)
	}
	return jobs.InjectOptions{
		Overwrite:        s.cfg.Bool(config.InjectOverwrite),
		Update:           s.cfg.Bool(config.InjectUpdate),
		Score:            float32(score),
		Schedule:         sched,
		Filters:          filters,
		MaxReportedLines: max(1, s.cfg.Int(config.InjectMaxReportedLines)),
	}, nil
}

func (s *session) generate(c *cli.Context, now time.Time) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.generateOptions()
	if err != nil {
		return err
	}
	o.Now = now
	res, err := jobs.Generate(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	_, err = fmt.Fprintln(s.io.stdout, res.Segment)
	return err
}

// generateOptions returns generate's options from the settings (without
// Now).
func (s *session) generateOptions() (jobs.GenerateOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.GenerateOptions{}, err
	}
	o := jobs.GenerateOptions{
		TopN:        int64(s.cfg.Int(config.GenerateTopN)),
		MaxPerHost:  s.cfg.Int(config.GenerateMaxPerHost),
		CountMode:   s.cfg.String(config.GenerateCountMode),
		NumFetchers: s.cfg.Int(config.GenerateNumFetchers),
		Delay:       s.cfg.Duration(config.GenerateDelay),
		Schedule:    sched,
	}
	if o.TopN < 0 {
		return o, usageErrorf("%s must be >= 0, not %d", config.GenerateTopN, o.TopN)
	}
	if o.NumFetchers < 1 || o.NumFetchers > mapreduce.MaxReduce {
		return o, usageErrorf("%s must be between 1 and %d, not %d", config.GenerateNumFetchers, mapreduce.MaxReduce, o.NumFetchers)
	}
	if o.Delay <= 0 {
		return o, usageErrorf("%s must be > 0", config.GenerateDelay)
	}
	if s.cfg.Bool(config.GenerateFilter) {
		if o.Filters, err = s.filters(); err != nil {
			return o, err
		}
	}
	if err := s.partitionOptions(&o); err != nil {
		return o, err
	}
	return o, nil
}

func (s *session) updatedb(c *cli.Context) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	o, err := s.updateOptions()
	if err != nil {
		return err
	}
	if o.Now, err = nowFlag(c); err != nil {
		return err
	}
	for _, a := range c.Args().Slice() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("updatedb: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	o.Remerge = c.Bool("remerge")
	_, err = jobs.UpdateDB(c.Context, env, o)
	return jobError(err)
}

// updateOptions returns updatedb's options from the settings (without
// Segments, Now and Remerge).
func (s *session) updateOptions() (jobs.UpdateOptions, error) {
	sched, err := s.schedule()
	if err != nil {
		return jobs.UpdateOptions{}, err
	}
	retry := s.cfg.Int(config.UpdateRetryMax)
	if retry < 1 {
		return jobs.UpdateOptions{}, usageErrorf("%s must be >= 1, not %d", config.UpdateRetryMax, retry)
	}
	inl := s.cfg.Int(config.UpdateMaxInlinks)
	if inl == 0 || inl < -1 {
		return jobs.UpdateOptions{}, usageErrorf("%s must be positive or -1 (no limit), not %d", config.UpdateMaxInlinks, inl)
	}
	return jobs.UpdateOptions{
		NoAdditions: !s.cfg.Bool(config.UpdateAdditions),
		RetryMax:    retry,
		MaxInlinks:  inl,
		PurgeGone:   s.cfg.Bool(config.UpdatePurgeGone),
		Schedule:    sched,
	}, nil
}

func defaultParallelism() int { return runtime.GOMAXPROCS(0) }
