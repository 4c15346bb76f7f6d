package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// Env is what every job needs: the engine that runs its jobs (storage,
// runner and logger, promoted from mapreduce.Engine) and where the crawl
// lives, with the settings every driver shares.
type Env struct {
	mapreduce.Engine
	// Crawl is the crawl directory URI (crawldb/ and segments/ inside).
	Crawl string
	// LockMaxAge is the age past which a CrawlDB lock counts as stale
	// (crawldb.LockOptions.MaxAge; 0 means crawldb's default);
	// NoLockMaxAge turns the age test off (crawldb.LockOptions.NoMaxAge).
	LockMaxAge   time.Duration
	NoLockMaxAge bool
	// ForceLock breaks a stale CrawlDB lock (--force).
	ForceLock bool
	// DBParts is the number of part files inject and updatedb write the
	// CrawlDB in (reduce tasks). 0 keeps the current CrawlDB's number, or
	// for a new CrawlDB uses the runner's parallelism (at most 16).
	DBParts int
	// KeepOldDB keeps the previous CrawlDB as crawldb/old after an update
	// (Nutch's db.preserve.backup).
	KeepOldDB bool
	// Interrupt, if set, delivers the process's interrupts: Fetch ends
	// gracefully at the first one and keeps what it fetched (see
	// Interrupt); other jobs are cancelled through their context.
	Interrupt *Interrupt
}

func (e Env) log() *slog.Logger { return e.Logger() }

func (e Env) resolver() mapreduce.Resolver { return e.Resolver() }

// The layout of a crawl directory.
const (
	dirCrawlDB  = "crawldb"
	dirSegments = "segments"
	// UpdatedMarker is segment.MergedMarker, the file updatedb writes
	// into a segment once the segment is merged into the CrawlDB; until
	// then generate treats the segment's fetch list as pending (see
	// Generate).
	UpdatedMarker = segment.MergedMarker
)

// CrawlDBDir returns the URI of the crawl's CrawlDB directory.
func CrawlDBDir(crawl string) string { return storage.Join(crawl, dirCrawlDB) }

// SegmentsDir returns the URI of the crawl's segments directory.
func SegmentsDir(crawl string) string { return storage.Join(crawl, dirSegments) }

// crawlPaths is a crawl directory resolved to one file system.
type crawlPaths struct {
	fs      storage.FS
	crawl   string // URI
	dbURI   string // crawldb dir URI
	dbPath  string // crawldb dir path in fs
	segURI  string
	segPath string
}

func (e Env) paths() (crawlPaths, error) {
	if e.Crawl == "" {
		return crawlPaths{}, fmt.Errorf("jobs: no crawl directory given")
	}
	fsys, p, err := e.resolver().Resolve(e.Crawl)
	if err != nil {
		return crawlPaths{}, fmt.Errorf("jobs: crawl directory: %w", err)
	}
	return crawlPaths{
		fs: fsys, crawl: e.Crawl,
		dbURI: CrawlDBDir(e.Crawl), dbPath: path.Join(p, dirCrawlDB),
		segURI: SegmentsDir(e.Crawl), segPath: path.Join(p, dirSegments),
	}, nil
}

// lock takes the CrawlDB lock for holder.
func (e Env) lock(cp crawlPaths, holder string) (*crawldb.LockHandle, error) {
	if err := cp.fs.MkdirAll(cp.dbPath); err != nil {
		return nil, fmt.Errorf("%s: create %s: %w", holder, cp.dbURI, err)
	}
	h, err := crawldb.LockWith(cp.fs, cp.dbPath, holder, e.ForceLock, crawldb.LockOptions{MaxAge: e.LockMaxAge, NoMaxAge: e.NoLockMaxAge, Logger: e.log()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", holder, err)
	}
	return h, nil
}

// lockRecovered takes the CrawlDB lock for job and repairs what a killed
// job left (recoverDB), as every job that reads the CrawlDB must before it
// trusts crawldb/current. On error the lock is released again.
func (e Env) lockRecovered(cp crawlPaths, job string, log *slog.Logger) (*crawldb.LockHandle, error) {
	lock, err := e.lock(cp, job)
	if err != nil {
		return nil, err
	}
	if err := recoverDB(e, cp, log); err != nil {
		e.unlock(lock, &err)
		return nil, fmt.Errorf("%s: %w", job, err)
	}
	return lock, nil
}

// rewriteDB runs spec, whose output is a new version of the CrawlDB at
// out (a directory of cp.dbPath), copies the current version's cluster
// record into it and installs it as the CrawlDB. A failure before the
// install removes the new version and leaves the CrawlDB as it was.
func rewriteDB(ctx context.Context, env Env, cp crawlPaths, spec mapreduce.Spec, out string) (*mapreduce.Result, error) {
	jr, err := env.Run(ctx, spec)
	if err == nil {
		err = writeClustersRecord(cp, out, nil)
	}
	if err != nil {
		_ = cp.fs.RemoveAll(out)
		return nil, err
	}
	if err := crawldb.Install(cp.fs, cp.dbPath, out, env.KeepOldDB); err != nil {
		return nil, fmt.Errorf("install the new CrawlDB: %w", err)
	}
	return jr, nil
}

// segmentLockOptions are the options of the segment locks the jobs take.
func (e Env) segmentLockOptions() segment.LockOptions {
	return segment.LockOptions{Force: e.ForceLock, MaxAge: e.LockMaxAge, NoMaxAge: e.NoLockMaxAge, Logger: e.log()}
}

// takeSegment takes the lock of the segment at segPath for job, held for
// the job's whole run so that a second job on the segment fails at once
// naming this one; then, under the lock, it removes what killed jobs left
// in the segment and reads its state. The caller releases the lock with
// unlock.
func (e Env) takeSegment(fsys storage.FS, segPath, job string, log *slog.Logger) (*crawldb.LockHandle, segment.Status, error) {
	sl, err := segment.Lock(fsys, segPath, job, e.segmentLockOptions())
	if err != nil {
		return nil, segment.Status{}, err
	}
	st, err := func() (segment.Status, error) {
		if _, err := segment.Clean(fsys, segPath, log); err != nil {
			return segment.Status{}, err
		}
		return segment.Inspect(fsys, segPath)
	}()
	if err != nil {
		_ = sl.Unlock()
		return nil, st, err
	}
	return sl, st, nil
}

// unlock releases h, joining its error into *errp.
func (e Env) unlock(h *crawldb.LockHandle, errp *error) {
	if err := h.Unlock(); err != nil {
		if *errp == nil {
			*errp = err
		} else {
			e.log().Error("releasing the CrawlDB lock failed", "err", err)
		}
	}
}

// countParts counts the part files of a published job output directory (0
// if it does not exist).
func countParts(fsys storage.FS, dir string) (int, error) {
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		if isNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, fi := range infos {
		if parquetio.IsPart(fi) {
			n++
		}
	}
	return n, nil
}

// listSegments lists the entries of the crawl's segments directory; a
// crawl without one has none.
func listSegments(cp crawlPaths) ([]fs.FileInfo, error) {
	infos, err := cp.fs.ReadDir(cp.segPath)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	return infos, nil
}

func isNotExist(err error) bool { return err != nil && errors.Is(err, fs.ErrNotExist) }

// parallelism is how many tasks the runner runs at once.
func (e Env) parallelism() int { return e.Parallelism() }

// dbParts decides how many parts a new CrawlDB is written in.
func (e Env) dbParts(cp crawlPaths, current string) (int, error) {
	if e.DBParts > 0 {
		return min(e.DBParts, mapreduce.MaxReduce), nil
	}
	n, err := countParts(cp.fs, current)
	if err != nil {
		return 0, fmt.Errorf("count CrawlDB parts: %w", err)
	}
	if n > 0 {
		return n, nil
	}
	return min(e.parallelism(), 16), nil
}

// ScheduleOptions selects and configures the fetch schedule.
type ScheduleOptions struct {
	// Name is "default", "adaptive", "dynamic" or "estimate"
	// (crawldb.ScheduleNames); empty means adaptive, trawl's default.
	// With "dynamic", updatedb applies the newest cluster result and
	// computes the cluster periods (see UpdateDB); with "estimate",
	// generate and updatedb fit the schedule's model to the CrawlDB
	// before they run (crawldb.FitEstimateModel).
	Name string
	// Config configures the schedule; the zero value means
	// crawldb.DefaultScheduleConfig().
	Config crawldb.ScheduleConfig
	// Model is the estimating schedule's fitted model; nil means fit one
	// (generate, updatedb) or plan without one (a job built directly).
	Model *crawldb.EstimateModel `json:",omitempty"`
}

// build returns the schedule o describes (with the estimating schedule,
// over o.Model).
func (o ScheduleOptions) build() (crawldb.Schedule, error) {
	r := o.resolved()
	if r.Name == "estimate" {
		return crawldb.NewEstimateSchedule(r.Config, r.Model)
	}
	return crawldb.NewSchedule(r.Name, r.Config)
}

func (o ScheduleOptions) resolved() ScheduleOptions {
	if o.Name == "" {
		o.Name = "adaptive"
	}
	if o.Config == (crawldb.ScheduleConfig{}) {
		o.Config = crawldb.DefaultScheduleConfig()
	}
	return o
}

// URLFilterOptions configures URL filtering in a job. The zero value
// filters nothing.
type URLFilterOptions struct {
	// Options are the built-in filters (urlutil.DefaultFilterOptions() for
	// trawl's defaults). Options.Regex is ignored: use RegexFiles.
	Options urlutil.FilterOptions
	// RegexFiles are rule files in Nutch's regex-urlfilter.txt syntax
	// (URIs). The driver reads them and ships their text in the job's
	// Conf, so that tasks need no access to them.
	RegexFiles []string
}

// filterSpec is URLFilterOptions as it travels in a Conf (JSON).
type filterSpec struct {
	Schemes           []string    `json:"schemes,omitempty"`
	MaxLength         int         `json:"maxLength,omitempty"`
	DenySuffixes      []string    `json:"denySuffixes,omitempty"`
	MaxSegmentRepeats int         `json:"maxSegmentRepeats,omitempty"`
	MaxSegments       int         `json:"maxSegments,omitempty"`
	Regex             []regexSpec `json:"regex,omitempty"`
}

type regexSpec struct {
	Name  string `json:"name"`
	Rules string `json:"rules"`
}

// spec reads the regex files and returns the Conf form of o.
func (o URLFilterOptions) spec(res mapreduce.Resolver) (filterSpec, error) {
	s := filterSpec{
		Schemes: o.Options.Schemes, MaxLength: o.Options.MaxLength, DenySuffixes: o.Options.DenySuffixes,
		MaxSegmentRepeats: o.Options.MaxSegmentRepeats, MaxSegments: o.Options.MaxSegments,
	}
	for _, uri := range o.RegexFiles {
		fsys, p, err := res.Resolve(uri)
		if err != nil {
			return s, fmt.Errorf("URL filter rules %s: %w", uri, err)
		}
		data, err := storage.ReadFile(fsys, p)
		if err != nil {
			return s, fmt.Errorf("URL filter rules %s: %w", uri, err)
		}
		// Parse now, so that a bad rule fails the job before it starts,
		// with the file and line.
		if _, err := urlutil.ParseRegexRules(strings.NewReader(string(data)), uri); err != nil {
			return s, err
		}
		s.Regex = append(s.Regex, regexSpec{Name: uri, Rules: string(data)})
	}
	return s, nil
}

// filters builds the chain; nil if it filters nothing.
func (s filterSpec) filters() (urlutil.Filters, error) {
	o := urlutil.FilterOptions{Schemes: s.Schemes, MaxLength: s.MaxLength, DenySuffixes: s.DenySuffixes,
		MaxSegmentRepeats: s.MaxSegmentRepeats, MaxSegments: s.MaxSegments}
	for _, r := range s.Regex {
		f, err := urlutil.ParseRegexRules(strings.NewReader(r.Rules), r.Name)
		if err != nil {
			return nil, err
		}
		o.Regex = append(o.Regex, f)
	}
	fs := urlutil.NewFilters(o)
	if len(fs) == 0 {
		return nil, nil
	}
	return fs, nil
}

// intervalSeconds converts a duration to whole seconds for Datum intervals.
func intervalSeconds(d time.Duration) int32 {
	s := d / time.Second
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(s)
}
