package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"strconv"
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
	// (crawldb.LockOptions.MaxAge; 0 means crawldb's default).
	LockMaxAge time.Duration
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

// execute runs a driver's engine job.
func (e Env) execute(ctx context.Context, name string, conf map[string]string, job mapreduce.Runnable) (*mapreduce.Result, error) {
	return e.Run(ctx, confJob{name: name, conf: conf, job: job})
}

// confJob is a job whose configuration is still a map of hand-written
// keys, run through the Runner until its driver has a spec of its own.
type confJob struct {
	name string
	conf map[string]string
	job  mapreduce.Runnable
}

func (c confJob) JobName() string                  { return c.name }
func (c confJob) Job() (mapreduce.Runnable, error) { return c.job, nil }
func (c confJob) SpecConf() map[string]string      { return c.conf }

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
	h, err := crawldb.LockWith(cp.fs, cp.dbPath, holder, e.ForceLock, crawldb.LockOptions{MaxAge: e.LockMaxAge, Logger: e.log()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", holder, err)
	}
	return h, nil
}

// segmentLockOptions are the options of the segment locks the jobs take.
func (e Env) segmentLockOptions() segment.LockOptions {
	return segment.LockOptions{Force: e.ForceLock, MaxAge: e.LockMaxAge, Logger: e.log()}
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
	// Name is "default", "adaptive" or "dynamic" (crawldb.ScheduleNames);
	// empty means adaptive, trawl's default. With "dynamic", updatedb
	// applies the newest cluster result and computes the cluster periods
	// (see UpdateDB).
	Name string
	// Config configures the schedule; the zero value means
	// crawldb.DefaultScheduleConfig().
	Config crawldb.ScheduleConfig
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

// conf is a job's Conf under construction or being read. Reading records
// the first error, so that a builder reads every key and checks once.
type conf struct {
	m   map[string]string
	err error
}

func newConf() *conf { return &conf{m: map[string]string{}} }

func (c *conf) set(k, v string)          { c.m[k] = v }
func (c *conf) setBool(k string, v bool) { c.m[k] = strconv.FormatBool(v) }
func (c *conf) setInt(k string, v int64) { c.m[k] = strconv.FormatInt(v, 10) }
func (c *conf) setFloat(k string, v float64) {
	c.m[k] = strconv.FormatFloat(v, 'g', -1, 64)
}
func (c *conf) setTime(k string, t time.Time) { c.m[k] = t.UTC().Format(time.RFC3339Nano) }
func (c *conf) setDuration(k string, d time.Duration) {
	c.m[k] = strconv.FormatInt(int64(d), 10)
}
func (c *conf) setJSON(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("conf %s: %w", k, err)
	}
	c.m[k] = string(b)
}

func (c *conf) fail(k string, err error) {
	if c.err == nil {
		c.err = fmt.Errorf("job conf %s=%q: %w", k, c.m[k], err)
	}
}

func (c *conf) str(k string) string { return c.m[k] }

func (c *conf) boolean(k string) bool {
	v, ok := c.m[k]
	if !ok || v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		c.fail(k, err)
	}
	return b
}

func (c *conf) integer(k string) int64 {
	v, ok := c.m[k]
	if !ok || v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		c.fail(k, err)
	}
	return n
}

func (c *conf) float(k string) float64 {
	v, ok := c.m[k]
	if !ok || v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		c.fail(k, err)
	}
	return f
}

func (c *conf) time(k string) time.Time {
	v, ok := c.m[k]
	if !ok || v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		c.fail(k, err)
	}
	return t.UTC()
}

func (c *conf) duration(k string) time.Duration { return time.Duration(c.integer(k)) }

func (c *conf) json(k string, v any) {
	s, ok := c.m[k]
	if !ok || s == "" {
		return
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		c.fail(k, err)
	}
}

// Conf keys shared by the jobs.
const (
	confSchedule       = "schedule.name"
	confDefaultIntv    = "schedule.defaultInterval"
	confMaxIntv        = "schedule.maxInterval"
	confAdaptive       = "schedule.adaptive"
	confDynamic        = "schedule.dynamic"
	confFilters        = "urlfilter"
	confNow            = "now"
	confOut            = "out"
	confCurrent        = "crawldb.current"
	confNumReduce      = "reduces"
	confPendingPrefix  = "pending."
	confSegmentPrefix  = "segment."
	confInputSeedsPath = "seeds"
)

func (c *conf) setSchedule(o ScheduleOptions) {
	o = o.resolved()
	c.set(confSchedule, o.Name)
	c.setDuration(confDefaultIntv, o.Config.DefaultInterval)
	c.setDuration(confMaxIntv, o.Config.MaxInterval)
	c.setJSON(confAdaptive, o.Config.Adaptive)
	c.setJSON(confDynamic, o.Config.Dynamic)
}

func (c *conf) schedule() (crawldb.Schedule, crawldb.ScheduleConfig) {
	var cfg crawldb.ScheduleConfig
	cfg.DefaultInterval = c.duration(confDefaultIntv)
	cfg.MaxInterval = c.duration(confMaxIntv)
	c.json(confAdaptive, &cfg.Adaptive)
	c.json(confDynamic, &cfg.Dynamic)
	if c.err != nil {
		return nil, cfg
	}
	s, err := crawldb.NewSchedule(c.str(confSchedule), cfg)
	if err != nil {
		c.fail(confSchedule, err)
		return nil, cfg
	}
	return s, cfg
}

func (c *conf) filters() urlutil.Filters {
	var spec filterSpec
	c.json(confFilters, &spec)
	if c.err != nil {
		return nil
	}
	fs, err := spec.filters()
	if err != nil {
		c.fail(confFilters, err)
	}
	return fs
}

// intervalSeconds converts a duration to whole seconds for Datum intervals.
func intervalSeconds(d time.Duration) int32 {
	s := d / time.Second
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(s)
}
