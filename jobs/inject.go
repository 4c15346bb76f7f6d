package jobs

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// InjectOptions configures Inject. Only Seeds is required.
type InjectOptions struct {
	// Seeds are seed files or directories (local paths or URIs); a
	// directory means every file in it, in name order, except names
	// starting with '.' or '_'. Inject needs at least one.
	Seeds []string
	// Overwrite replaces an existing URL's datum with the injected one
	// (Nutch's db.injector.overwrite); false keeps it (see Update).
	Overwrite bool
	// Update updates an existing URL with the seed's metadata, and its
	// score and interval when the seed line gives them
	// (db.injector.update); false keeps it unchanged. Overwrite wins over
	// Update.
	Update bool
	// Score is the score of a seed without score=, a finite number >= 0;
	// 0 means DefaultInjectScore (db.score.injected, 1.0). Use a tiny
	// positive value for "almost nothing".
	Score float32
	// Now is when new URLs are due; zero means time.Now().
	Now time.Time
	// Schedule gives new URLs their interval (the schedule's default
	// interval, unless the seed line gives one); the zero value is the
	// adaptive schedule with crawldb.DefaultScheduleConfig().
	Schedule ScheduleOptions
	// Filters are applied to every seed URL after normalization; the
	// zero value filters nothing.
	Filters URLFilterOptions
	// MaxReportedLines bounds the bad lines logged in detail (file:line and
	// why); the rest are only counted. 0 means 20; it must not be
	// negative.
	MaxReportedLines int
}

// defaultMaxReportedLines is InjectOptions.MaxReportedLines when 0.
const defaultMaxReportedLines = 20

// Validate checks o as Inject does before it reads a seed: at least one
// seed argument, a finite Score >= 0, MaxReportedLines >= 0 and a schedule
// crawldb knows, with a valid configuration. (The seed files and the URL
// filters' rule files are checked when Inject reads them.)
func (o InjectOptions) Validate() error {
	switch {
	case len(o.Seeds) == 0:
		return errors.New("no seed file given")
	case o.Score < 0 || math.IsNaN(float64(o.Score)) || math.IsInf(float64(o.Score), 0):
		return fmt.Errorf("score %g is not a finite number >= 0", o.Score)
	case o.MaxReportedLines < 0:
		return fmt.Errorf("the number of bad lines reported, %d, is negative", o.MaxReportedLines)
	}
	if _, err := injectSchedule(o.Schedule); err != nil {
		return err
	}
	return nil
}

// withDefaults returns o with its zero fields given their meaning.
func (o InjectOptions) withDefaults() InjectOptions {
	if o.Score == 0 {
		o.Score = DefaultInjectScore
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.MaxReportedLines == 0 {
		o.MaxReportedLines = defaultMaxReportedLines
	}
	o.Schedule = o.Schedule.resolved()
	return o
}

// injectSchedule is the schedule o describes, as the inject job uses it.
func injectSchedule(o ScheduleOptions) (crawldb.Schedule, error) {
	o = o.resolved()
	return crawldb.NewSchedule(o.Name, o.Config)
}

// InjectResult reports an Inject run.
type InjectResult struct {
	// SeedFiles and Lines count what was read.
	SeedFiles int
	Lines     int64
	// Seeds counts the valid seed URLs (after normalization and filters,
	// before removing duplicates).
	Seeds int64
	// BadLines counts lines skipped because they did not parse or their
	// URL did not normalize; Filtered those whose URL the filters
	// rejected. Counters has them by reason.
	BadLines int64
	Filtered int64
	// BadLineSamples are the first bad or filtered lines, as
	// "file:line: reason" (any URL userinfo removed, see urlutil.Redact).
	BadLineSamples []string
	// Credentials counts the URLs that had a user name or password
	// (user:password@host), which normalization removed: they reach
	// neither the CrawlDB nor the logs.
	Credentials int64
	// Injected counts URLs new to the CrawlDB; Existing those already in
	// it (Overwritten and Updated of them replaced or updated; the rest
	// kept unchanged); Total the CrawlDB's rows afterwards.
	Injected    int64
	Existing    int64
	Overwritten int64
	Updated     int64
	Total       int64
	// CrawlDB is the installed CrawlDB directory (crawldb/current).
	CrawlDB string
	// Counters are the engine's and the job's counters (group "inject").
	Counters *mapreduce.Counters
	// Duration is the wall time of the whole injection.
	Duration time.Duration
}

// seedRow is one valid seed as the driver writes it into the job's
// temporary Parquet input. File and Line place it in the seed list: when a
// URL is given more than once, the last line wins.
type seedRow struct {
	URL           string            `parquet:"url"`
	Score         float32           `parquet:"score"`
	HasScore      bool              `parquet:"has_score"`
	FetchInterval int32             `parquet:"fetch_interval"`
	HasInterval   bool              `parquet:"has_interval"`
	FixedInterval bool              `parquet:"fixed_interval"`
	Metadata      map[string]string `parquet:"metadata"`
	File          int32             `parquet:"file"`
	Line          int64             `parquet:"line"`
}

// injValue is the inject job's shuffle value: a CrawlDB row or a seed.
type injValue struct {
	Kind uint8 // kindOld or kindSeed
	Old  *crawldb.Datum
	Seed *seedRow
}

const kindSeed uint8 = 2

// Counter names of inject (job group "inject").
const (
	ctrInjected    = "urls_injected"    // new URLs
	ctrMerged      = "urls_merged"      // seeds of URLs already in the CrawlDB
	ctrOverwritten = "urls_overwritten" // of those, replaced (Overwrite)
	ctrUpdated     = "urls_updated"     // of those, updated (Update)
	ctrDuplicate   = "seed_duplicates"  // a URL given again by a later line
	ctrBadSyntax   = "bad_line_syntax"
	ctrBadURL      = "bad_line_url"
	ctrTooLong     = "bad_line_too_long"
	ctrFiltered    = "urls_filtered"
	ctrFilteredBy  = "urls_filtered_"       // + reason
	ctrRejected    = "seed_lines_rejected"  // bad or filtered lines
	ctrCredentials = "credentials_stripped" // URLs whose userinfo was removed
	ctrDBRows      = "crawldb_rows"
)

// ErrNoValidURL is wrapped by the error of an Inject whose seed files hold
// no valid URL (every line blank, a comment, bad or filtered); the CrawlDB
// is then left as it was.
var ErrNoValidURL = errors.New("no valid URL")

// maxReasonsInError bounds the bad lines quoted in an ErrNoValidURL error.
const maxReasonsInError = 3

// Inject adds seed URLs to the CrawlDB (Nutch's Injector).
//
// The driver reads the seed files itself, line by line: each line is
// parsed (ParseSeedLine), its URL normalized (urlutil.Normalize) and
// filtered; a bad line (bad syntax, a URL that does not normalize, or one
// the filters reject) is logged with its file and line number (the first
// MaxReportedLines in detail), counted by reason and skipped, and a
// summary line gives the number rejected. If no line holds a valid URL,
// Inject fails with ErrNoValidURL, saying how many lines were rejected and
// why, and leaves the CrawlDB as it was. A URL's user name and password
// (user:password@host) are removed by normalization, counted
// (credentials_stripped) and logged once; raw text echoed in logs and
// errors is redacted (urlutil.Redact). The valid seeds go into a temporary
// Parquet file, the input of one engine job that merges them with the
// current CrawlDB by URL:
//
//   - a new URL becomes db_unfetched, due at Now, with the seed's interval
//     or the schedule's default one (Source "injected" when the seed gives
//     it; fixedInterval also sets FixedInterval), the seed's score or
//     Score, and the seed's other key=value pairs as metadata;
//   - an existing URL is kept unchanged; with Overwrite it is replaced by
//     the injected datum; with Update its metadata is overlaid with the
//     seed's, and its score and interval are set when the seed gives them.
//
// Where trawl differs from Nutch: Update changes the score and interval
// only when the seed line gives them (Nutch compares them with the
// defaults, so it cannot tell "score=1.0" from no score); a URL given twice
// takes its last line (Nutch's choice is arbitrary); a bad key=value field
// is an error for the line (Nutch ignores the field).
//
// Inject holds the CrawlDB lock for the whole run and installs the new
// CrawlDB with crawldb.Install; on any failure the old CrawlDB is left as
// it was, and the CrawlDB (and crawl) directory is removed again if this
// run created it and it is empty. An empty or missing CrawlDB is fine (the
// first inject).
func Inject(ctx context.Context, env Env, o InjectOptions) (res *InjectResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	o = o.withDefaults()
	log := env.log().With("job", JobInject)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	filters, err := injectFilters(env.resolver(), o.Filters)
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	created, err := missingDirs(cp.fs, cp.dbPath, path.Dir(cp.dbPath))
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	defer func() {
		if err != nil {
			removeEmptyDirs(cp.fs, created, log)
		}
	}()
	lock, err := env.lockRecovered(cp, JobInject, log)
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)

	res = &InjectResult{Counters: &mapreduce.Counters{}}
	in := newSeedInput(cp)
	defer in.remove(cp.fs, log)
	sr := &seedReader{res: env.resolver(), filters: filters, maxReported: o.MaxReportedLines, result: res, log: log}
	files, err := sr.read(ctx, o.Seeds, cp.fs, in.file())
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	if res.Seeds == 0 {
		return nil, noValidURL(files, res)
	}
	spec, err := planInject(env, cp, o, in)
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	if err := runInject(ctx, env, cp, spec, res); err != nil {
		return nil, err
	}
	res.finish(spec.CrawlDB, start)
	log.Info("inject done", "seeds", res.Seeds, "rejected", res.BadLines+res.Filtered, "bad_lines", res.BadLines,
		"filtered", res.Filtered, "credentials_stripped", res.Credentials, "injected", res.Injected,
		"existing", res.Existing, "overwritten", res.Overwritten, "updated", res.Updated,
		"crawldb_rows", res.Total, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// injectFilters reads the rule files of o and builds the filters the
// driver applies to the seeds (nil if they filter nothing).
func injectFilters(res mapreduce.Resolver, o URLFilterOptions) (urlutil.Filters, error) {
	spec, err := o.spec(res)
	if err != nil {
		return nil, err
	}
	return spec.filters()
}

// seedInput is the temporary directory of the CrawlDB that holds the seeds
// the driver read, the inject job's input. It is removed at the end, or by
// crawldb.Recover after a crash.
type seedInput struct {
	uri  string // URI
	path string // path in the CrawlDB's file system
}

// seedInputFile is the name of the Parquet file of seedRow in a
// seedInput.
const seedInputFile = "seeds.parquet"

func newSeedInput(cp crawlPaths) seedInput {
	name := path.Base(crawldb.NewTempDir(cp.dbPath)) + "-seeds"
	return seedInput{uri: storage.Join(cp.dbURI, name), path: path.Join(cp.dbPath, name)}
}

// file is the path of the seeds file in the CrawlDB's file system.
func (s seedInput) file() string { return path.Join(s.path, seedInputFile) }

// remove removes the directory, logging a failure.
func (s seedInput) remove(fsys storage.FS, log *slog.Logger) {
	if err := fsys.RemoveAll(s.path); err != nil {
		log.Warn("removing the temporary seed input failed", "dir", s.uri, "err", err)
	}
}

// planInject describes the inject job that merges the seeds of in with
// the current CrawlDB into a new temporary CrawlDB directory.
func planInject(env Env, cp crawlPaths, o InjectOptions, in seedInput) (injectJob, error) {
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return injectJob{}, err
	}
	return injectJob{
		CrawlDB:   storage.Join(cp.dbURI, crawldb.CurrentName),
		Seeds:     storage.Join(in.uri, seedInputFile),
		Out:       storage.Join(cp.dbURI, path.Base(crawldb.NewTempDir(cp.dbPath))),
		NumReduce: parts,
		Overwrite: o.Overwrite,
		Update:    o.Update,
		Score:     o.Score,
		Now:       o.Now.UTC(),
		Schedule:  o.Schedule,
	}, nil
}

// runInject runs the inject job spec and installs its output as the
// CrawlDB (see rewriteDB).
func runInject(ctx context.Context, env Env, cp crawlPaths, spec injectJob, res *InjectResult) error {
	jr, err := rewriteDB(ctx, env, cp, spec, path.Join(cp.dbPath, path.Base(spec.Out)))
	if err != nil {
		return fmt.Errorf("inject: %w", err)
	}
	res.Counters.Merge(jr.Counters)
	return nil
}

// finish sets the job's numbers from the counters, the installed CrawlDB
// and the duration since start.
func (r *InjectResult) finish(crawlDB string, start time.Time) {
	g := r.Counters
	r.Injected = g.Get(JobInject, ctrInjected)
	r.Existing = g.Get(JobInject, ctrMerged)
	r.Overwritten = g.Get(JobInject, ctrOverwritten)
	r.Updated = g.Get(JobInject, ctrUpdated)
	r.Total = g.Get(JobInject, ctrDBRows)
	r.CrawlDB = crawlDB
	r.Duration = time.Since(start)
}

// noValidURL is the error of an inject whose files hold no valid URL: it
// names the files, and says how many lines were rejected and why.
func noValidURL(files []string, res *InjectResult) error {
	names := make([]string, 0, min(len(files), 3))
	for _, f := range files[:min(len(files), 3)] {
		names = append(names, urlutil.Redact(f))
	}
	in := strings.Join(names, ", ")
	if len(files) > 3 {
		in += fmt.Sprintf(" and %d more files", len(files)-3)
	}
	rejected := res.BadLines + res.Filtered
	switch {
	case res.Lines == 0:
		return fmt.Errorf("inject: %w in %s: no lines", ErrNoValidURL, in)
	case rejected == 0:
		return fmt.Errorf("inject: %w in %s: only blank and comment lines", ErrNoValidURL, in)
	}
	var why strings.Builder
	fmt.Fprintf(&why, "%d of %d lines rejected", rejected, res.Lines)
	var kinds []string
	g := res.Counters
	for _, k := range []struct {
		n    int64
		what string
	}{
		{g.Get("inject", ctrBadSyntax), "bad syntax"},
		{g.Get("inject", ctrBadURL), "not a valid URL"},
		{g.Get("inject", ctrTooLong), "too long"},
		{res.Filtered, "rejected by the URL filters"},
	} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	fmt.Fprintf(&why, " (%s)", strings.Join(kinds, ", "))
	samples := res.BadLineSamples[:min(len(res.BadLineSamples), maxReasonsInError)]
	if len(samples) > 0 {
		fmt.Fprintf(&why, "; first: %s", strings.Join(samples, "; "))
		if more := rejected - int64(len(samples)); more > 0 {
			fmt.Fprintf(&why, "; and %d more", more)
		}
	}
	return fmt.Errorf("inject: %w in %s: %s", ErrNoValidURL, in, why.String())
}

// missingDirs returns those of dirs (innermost first, each inside the
// next) that do not exist.
func missingDirs(fsys storage.FS, dirs ...string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		ok, err := storage.Exists(fsys, d)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		out = append(out, d)
	}
	return out, nil
}

// removeEmptyDirs removes the directories a failed run created (see
// missingDirs), innermost first, while they are empty. A job that starts
// on the same crawl between the emptiness check and the removal could
// lose its new lock file; that window is a few system calls wide, on a
// crawl no run has used yet.
func removeEmptyDirs(fsys storage.FS, dirs []string, log interface{ Warn(string, ...any) }) {
	for _, d := range dirs {
		ents, err := fsys.ReadDir(d)
		if err != nil || len(ents) > 0 {
			return
		}
		if err := fsys.RemoveAll(d); err != nil {
			log.Warn("removing a directory this failed run created failed", "dir", d, "err", err)
			return
		}
	}
}

// injectJob is the inject engine job: it merges the seeds the driver read
// with the current CrawlDB by URL and writes the new CrawlDB (see Inject).
type injectJob struct {
	// CrawlDB is the current CrawlDB directory (URI); it may be missing.
	CrawlDB string
	// Seeds is the Parquet file of seedRow the driver wrote (URI).
	Seeds string
	// Out is the new CrawlDB directory (URI).
	Out string
	// NumReduce is the number of reduce tasks, the new CrawlDB's parts;
	// 0 means the engine's default.
	NumReduce int
	// Overwrite and Update are InjectOptions'.
	Overwrite, Update bool
	// Score is the score of a seed without score= (InjectOptions.Score,
	// its default applied).
	Score float32
	// Now is when new URLs are due (UTC).
	Now time.Time
	// Schedule gives new URLs their interval.
	Schedule ScheduleOptions
}

func (injectJob) JobName() string { return JobInject }

// options are the InjectOptions the job's fields come from, as far as
// the job knows them, to be checked as Inject checks them.
func (s injectJob) options() InjectOptions {
	return InjectOptions{Seeds: []string{s.Seeds}, Overwrite: s.Overwrite, Update: s.Update,
		Score: s.Score, Now: s.Now, Schedule: s.Schedule}
}

// Job builds the job (the driver and the Hadoop task entry, through
// Registry, both build it this way).
func (s injectJob) Job() (mapreduce.Runnable, error) {
	if err := s.options().Validate(); err != nil {
		return nil, fmt.Errorf("inject job: %w", err)
	}
	if s.Seeds == "" || s.Out == "" {
		return nil, errors.New("inject job: no seeds input or no output")
	}
	sched, err := injectSchedule(s.Schedule)
	if err != nil {
		return nil, fmt.Errorf("inject job: %w", err)
	}
	m := injectMerge{overwrite: s.Overwrite, update: s.Update, score: s.Score, sched: sched, now: s.Now}
	return &mapreduce.Job[injValue, crawldb.Datum]{
		Name: JobInject,
		Inputs: []mapreduce.Input[injValue]{
			mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[injValue]) error {
				emit(d.URL, injValue{Kind: kindOld, Old: &d})
				return nil
			}, mapreduce.Optional(), mapreduce.AllowMissingColumns()),
			mapreduce.From(s.Seeds, func(t *mapreduce.Task, sr seedRow, emit mapreduce.Emit[injValue]) error {
				emit(sr.URL, injValue{Kind: kindSeed, Seed: &sr})
				return nil
			}),
		},
		Reduce:    m.reduce,
		NumReduce: s.NumReduce,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}, nil
}

// injectMerge is the inject reduce: it merges a URL's CrawlDB row and
// seeds into its new row.
type injectMerge struct {
	overwrite, update bool
	score             float32 // of a seed without score=
	sched             crawldb.Schedule
	now               time.Time
}

func (m injectMerge) reduce(t *mapreduce.Task, url string, values iter.Seq[injValue], out func(crawldb.Datum)) error {
	old, seed := pickInjValues(t, values)
	d := m.merge(t, url, old, seed)
	t.Count(ctrDBRows, 1)
	out(d)
	return nil
}

// pickInjValues returns a URL's CrawlDB row (the latest fetched, should
// there be more) and seed (its last line; the others are counted as
// duplicates). One of them is not nil.
func pickInjValues(t *mapreduce.Task, values iter.Seq[injValue]) (old *crawldb.Datum, seed *seedRow) {
	for v := range values {
		switch v.Kind {
		case kindOld:
			if old == nil || old.FetchTime.Before(v.Old.FetchTime) {
				old = v.Old
			}
		case kindSeed:
			if seed != nil {
				t.Count(ctrDuplicate, 1)
			}
			if seed == nil || seed.File < v.Seed.File || (seed.File == v.Seed.File && seed.Line < v.Seed.Line) {
				seed = v.Seed
			}
		}
	}
	return old, seed
}

// merge returns the new row of url: the old row kept, replaced or updated
// by the seed, or the seed's new row.
func (m injectMerge) merge(t *mapreduce.Task, url string, old *crawldb.Datum, seed *seedRow) crawldb.Datum {
	switch {
	case seed == nil:
		return *old
	case old == nil:
		t.Count(ctrInjected, 1)
		return injectedDatum(url, seed, m.score, m.sched, m.now)
	}
	t.Count(ctrMerged, 1)
	switch {
	case m.overwrite:
		t.Count(ctrOverwritten, 1)
		return injectedDatum(url, seed, m.score, m.sched, m.now)
	case m.update:
		t.Count(ctrUpdated, 1)
		return updatedDatum(*old, seed)
	}
	return *old
}

// updatedDatum is the CrawlDB row d updated by a seed (Update): its
// metadata overlaid, its score and interval set when the seed gives them.
func updatedDatum(d crawldb.Datum, seed *seedRow) crawldb.Datum {
	d.Metadata = overlay(d.Metadata, seed.Metadata)
	if seed.HasScore {
		d.Score = seed.Score
	}
	if seed.HasInterval {
		d.FetchInterval = seed.FetchInterval
		d.FixedInterval = seed.FixedInterval
		d.Source = crawldb.SourceInjected
	}
	return d
}

// injectedDatum is a seed's new CrawlDB row.
func injectedDatum(url string, s *seedRow, defScore float32, sched crawldb.Schedule, now time.Time) crawldb.Datum {
	d := crawldb.Datum{
		URL:       url,
		Host:      urlutil.Host(url),
		Status:    crawldb.StatusDBUnfetched,
		Score:     defScore,
		ClusterID: -1,
		Metadata:  s.Metadata,
	}
	d.Features.Depth = int32(urlutil.Depth(url))
	if s.HasScore {
		d.Score = s.Score
	}
	d.FixedInterval = s.FixedInterval && s.HasInterval
	if s.HasInterval {
		d.FetchInterval = s.FetchInterval
	}
	sched.InitializeSchedule(&d, now)
	if s.HasInterval {
		d.FetchInterval = s.FetchInterval
		d.Source = crawldb.SourceInjected
	}
	return d
}
