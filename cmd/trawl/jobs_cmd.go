package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/hadoop"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
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
	// lock.maxAge 0 (or less) means no age test: only a dead holder
	// makes a lock stale (jobs.Env.NoLockMaxAge).
	maxAge := max(s.cfg.Duration(config.LockMaxAge), 0)
	parts := s.cfg.Int(config.CrawlDBParts)
	if parts < 0 {
		return jobs.Env{}, usageErrorf("%s must be >= 0, not %d", config.CrawlDBParts, parts)
	}
	env := jobs.Env{
		Engine:     mapreduce.Engine{Storage: s.resolver, Runner: r, Log: s.log},
		Crawl:      s.crawl(),
		LockMaxAge: maxAge,
		ForceLock:  c.Bool("force"),
		DBParts:    parts,
		KeepOldDB:  s.cfg.Bool(config.CrawlDBKeepOld),
		Interrupt:  interruptFrom(c.Context),
	}
	env.NoLockMaxAge = maxAge == 0
	if s.cfg.String(config.EngineName) != "hadoop" {
		if dryRun(c) {
			return jobs.Env{}, usageErrorf("--dry-run shows the commands of the Hadoop engine: give --engine hadoop too")
		}
		return env, nil
	}
	sub, err := s.hadoopSubmitter(c)
	if err != nil {
		return jobs.Env{}, err
	}
	env.Runner = sub
	// The tasks run on other machines: the crawl's paths must mean the
	// same there.
	if !storage.IsURI(env.Crawl) {
		if env.Crawl, err = filepath.Abs(env.Crawl); err != nil {
			return jobs.Env{}, fmt.Errorf("crawl directory: %w", err)
		}
	}
	// An interrupt cannot reach a fetch's tasks on the cluster to end it
	// gracefully: every job, fetch included, is cancelled (and its Hadoop
	// job killed).
	env.Interrupt = nil
	return env, nil
}

// hadoopSubmitter returns the Hadoop engine's submitter the settings
// describe (engine.hadoop.* and the engine settings the tasks take).
func (s *session) hadoopSubmitter(c *cli.Context) (*hadoop.Submitter, error) {
	cfg := s.cfg
	env := envMap(s.io.env)
	loc, err := hadoop.Locate(func(k string) string { return env[k] }, func(name string) (string, error) {
		return lookPathIn(env["PATH"], name)
	}, cfg.String(config.EngineHadoopStreamingJar))
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if n := cfg.Int(config.EngineHadoopReducers); n < 0 {
		return nil, usageErrorf("%s must be >= 0, not %d", config.EngineHadoopReducers, n)
	}
	props := cfg.List(config.EngineHadoopProperties)
	if err := hadoop.CheckProperties(props); err != nil {
		return nil, usageErrorf("%s: %w", config.EngineHadoopProperties, err)
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: the trawl binary to ship: %w", err)
	}
	// The tasks reach HDFS as the user this process does (HDFS's simple
	// authentication), not as whoever runs the containers.
	hdfsUser := env["HADOOP_USER_NAME"]
	if hdfsUser == "" {
		if u, err := user.Current(); err == nil {
			hdfsUser = u.Username
		}
	}
	mb := func(name string) int64 { return (cfg.Size(name) + 1<<20 - 1) >> 20 }
	sub := &hadoop.Submitter{
		Hadoop:           loc.Hadoop,
		StreamingJar:     loc.StreamingJar,
		Binary:           bin,
		Storage:          s.resolver,
		Reducers:         cfg.Int(config.EngineHadoopReducers),
		Queue:            cfg.String(config.EngineHadoopQueue),
		JobNamePrefix:    cfg.String(config.EngineHadoopJobName),
		MapMemoryMB:      mb(config.EngineHadoopMapMemory),
		ReduceMemoryMB:   mb(config.EngineHadoopReduceMemory),
		TaskTimeout:      cfg.Duration(config.EngineHadoopTaskTimeout),
		Speculative:      cfg.Bool(config.EngineHadoopSpeculative),
		MaxAttempts:      cfg.Int(config.EngineMaxAttempts),
		EngineMemory:     cfg.Size(config.EngineMemory),
		TaskTempDir:      cfg.String(config.EngineHadoopTaskTempDir),
		TaskUser:         hdfsUser,
		Properties:       props,
		Env:              s.io.env,
		ProgressInterval: cfg.Duration(config.EngineProgressInterval),
		Log:              s.log,
	}
	if dryRun(c) {
		// A dry run's stdout is its commands: what the command would
		// print of the work it did not do (crawl's totals) goes nowhere.
		sub.DryRun = s.io.stdout
		sub.DryRunNote = s.dryRunNote(c)
		s.io.stdout = io.Discard
	}
	return sub, nil
}

// dryRun reports whether --dry-run was given, before or after the
// command name.
func dryRun(c *cli.Context) bool {
	for _, ctx := range c.Lineage() {
		if ctx.App != nil && isSetHere(ctx, "dry-run") && ctx.Bool("dry-run") {
			return true
		}
	}
	return false
}

// dryRunNote says, for a command whose first job's result shapes the jobs
// after it, that a dry run shows only that one.
func (s *session) dryRunNote(c *cli.Context) string {
	switch c.Command.Name {
	case "crawl":
		return "dry run: the crawl's next jobs (generate, fetch, parse, updatedb of each round) depend on this job's result and are not shown"
	case "cluster":
		return "dry run: the clustering's next jobs (local DBSCAN, join, labels, centres) depend on this job's result and are not shown"
	case "generate":
		topN := s.cfg.Int(config.GenerateTopN)
		mode := s.cfg.String(config.GeneratePartitionMode)
		byDomain := s.cfg.String(config.GenerateCountMode) == "domain"
		if topN > 0 || mode == "ip" || (mode == "host" && byDomain) {
			return "dry run: generate's second job (generate-topn) depends on this job's result and is not shown"
		}
	}
	return ""
}

// lookPathIn finds an executable name in the directories of path (a
// PATH value).
func lookPathIn(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the PATH", name)
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
			Dynamic:  s.dynamicConfig(),
			Estimate: s.estimateConfig(),
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

func defaultParallelism() int { return runtime.GOMAXPROCS(0) }
