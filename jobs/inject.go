package jobs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// InjectOptions configures Inject.
type InjectOptions struct {
	// Seeds are seed files or directories (local paths or URIs); a
	// directory means every file in it, in name order, except names
	// starting with '.' or '_'.
	Seeds []string
	// Overwrite replaces an existing URL's datum with the injected one
	// (Nutch's db.injector.overwrite).
	Overwrite bool
	// Update updates an existing URL with the seed's metadata, and its
	// score and interval when the seed line gives them
	// (db.injector.update). Overwrite wins over Update.
	Update bool
	// Score is the score of a seed without score=; 0 means
	// DefaultInjectScore (db.score.injected, 1.0). Use a tiny positive
	// value for "almost nothing".
	Score float32
	// Now is when new URLs are due; zero means time.Now().
	Now time.Time
	// Schedule gives new URLs their interval (the schedule's default
	// interval, unless the seed line gives one).
	Schedule ScheduleOptions
	// Filters are applied to every seed URL after normalization.
	Filters URLFilterOptions
	// MaxReportedLines bounds the bad lines logged in detail (file:line and
	// why); the rest are only counted. 0 means 20.
	MaxReportedLines int
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

// maxSeedLine bounds a seed line's length; longer lines are reported and
// skipped.
const maxSeedLine = 1 << 20

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
	if len(o.Seeds) == 0 {
		return nil, errors.New("inject: no seed files given")
	}
	if o.Score == 0 {
		o.Score = DefaultInjectScore
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.MaxReportedLines <= 0 {
		o.MaxReportedLines = 20
	}
	log := env.log().With("job", "inject")
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	spec, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	filters, err := spec.filters()
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	if _, err := crawldb.NewSchedule(o.Schedule.resolved().Name, o.Schedule.resolved().Config); err != nil {
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
	lock, err := env.lock(cp, "inject")
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	if err := recoverDB(env, cp, log); err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}

	res = &InjectResult{Counters: &mapreduce.Counters{}}
	// The seeds go into a temporary directory of the CrawlDB (removed at
	// the end, or by crawldb.Recover after a crash).
	tmpName := path.Base(crawldb.NewTempDir(cp.dbPath)) + "-seeds"
	tmpURI := storage.Join(cp.dbURI, tmpName)
	tmpPath := path.Join(cp.dbPath, tmpName)
	defer func() {
		if rerr := cp.fs.RemoveAll(tmpPath); rerr != nil {
			log.Warn("removing the temporary seed input failed", "dir", tmpURI, "err", rerr)
		}
	}()

	// Read the seeds into the temporary Parquet input.
	seedsFile := path.Join(tmpPath, "seeds.parquet")
	files, err := readSeeds(ctx, env, o, filters, seedsFile, res, log)
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	if res.Seeds == 0 {
		return nil, noValidURL(files, res)
	}

	currentURI := storage.Join(cp.dbURI, crawldb.CurrentName)
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	newName := path.Base(crawldb.NewTempDir(cp.dbPath))
	c := newConf()
	c.set(confCurrent, currentURI)
	c.set(confInputSeedsPath, storage.Join(tmpURI, "seeds.parquet"))
	c.set(confOut, storage.Join(cp.dbURI, newName))
	c.setInt(confNumReduce, int64(parts))
	c.setBool(confOverwrite, o.Overwrite)
	c.setBool(confUpdate, o.Update)
	c.setFloat(confInjectScore, float64(o.Score))
	c.setTime(confNow, o.Now)
	c.setSchedule(o.Schedule)
	if c.err != nil {
		return nil, fmt.Errorf("inject: %w", c.err)
	}
	job, err := newInjectJob(c.m)
	if err != nil {
		return nil, fmt.Errorf("inject: %w", err)
	}
	jr, err := env.execute(ctx, job.Name, job.Conf, job)
	if err != nil {
		_ = cp.fs.RemoveAll(path.Join(cp.dbPath, newName))
		return nil, fmt.Errorf("inject: %w", err)
	}
	res.Counters.Merge(jr.Counters)
	if err := crawldb.Install(cp.fs, cp.dbPath, path.Join(cp.dbPath, newName), env.KeepOldDB); err != nil {
		return nil, fmt.Errorf("inject: install the new CrawlDB: %w", err)
	}
	g := res.Counters
	res.Injected = g.Get("inject", ctrInjected)
	res.Existing = g.Get("inject", ctrMerged)
	res.Overwritten = g.Get("inject", ctrOverwritten)
	res.Updated = g.Get("inject", ctrUpdated)
	res.Total = g.Get("inject", ctrDBRows)
	res.CrawlDB = currentURI
	res.Duration = time.Since(start)
	log.Info("inject done", "seeds", res.Seeds, "rejected", res.BadLines+res.Filtered, "bad_lines", res.BadLines,
		"filtered", res.Filtered, "credentials_stripped", res.Credentials, "injected", res.Injected,
		"existing", res.Existing, "overwritten", res.Overwritten, "updated", res.Updated,
		"crawldb_rows", res.Total, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// seedFiles expands the seed arguments: files as given, directories to
// their files in name order.
func seedFiles(res mapreduce.Resolver, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fsys, p, err := res.Resolve(a)
		if err != nil {
			return nil, fmt.Errorf("seeds %s: %w", urlutil.Redact(a), redactErr(err))
		}
		fi, err := fsys.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("seeds %s: %w", urlutil.Redact(a), redactErr(err))
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		infos, err := fsys.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("seeds %s: %w", urlutil.Redact(a), redactErr(err))
		}
		n := 0
		for _, e := range infos {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
				continue
			}
			out = append(out, storage.Join(a, e.Name()))
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("seeds %s: directory holds no seed file", urlutil.Redact(a))
		}
	}
	return out, nil
}

// readSeeds parses, normalizes and filters every seed line and writes the
// valid seeds to seedsFile (always created, possibly empty). It returns the
// seed files read.
func readSeeds(ctx context.Context, env Env, o InjectOptions, filters urlutil.Filters, seedsFile string, res *InjectResult, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) (files []string, err error) {
	files, err = seedFiles(env.resolver(), o.Seeds)
	if err != nil {
		return nil, err
	}
	cp, _ := env.paths()
	out, err := cp.fs.Create(seedsFile)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", seedsFile, err)
	}
	w := parquetio.NewWriter[seedRow](out)
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", seedsFile, cerr)
		}
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", seedsFile, cerr)
		}
	}()
	reported := 0
	// bad counts a rejected line; file (redacted) and why must hold no raw
	// userinfo (the parser's and the normalizer's errors are redacted).
	bad := func(file string, line int64, counter, why string) {
		res.Counters.Add("inject", counter, 1)
		if reported < o.MaxReportedLines {
			at := fmt.Sprintf("%s:%d", file, line)
			res.BadLineSamples = append(res.BadLineSamples, at+": "+why)
			log.Warn("seed line skipped", "at", at, "why", why)
		}
		reported++
	}
	var firstCredentials string // file:line of the first URL with userinfo
	batch := make([]seedRow, 0, 1024)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := w.Write(batch...); err != nil {
			return fmt.Errorf("write %s: %w", seedsFile, err)
		}
		batch = batch[:0]
		return nil
	}
	for fi, file := range files {
		res.SeedFiles++
		name := urlutil.Redact(file)
		fsys, p, err := env.resolver().Resolve(file)
		if err != nil {
			return nil, fmt.Errorf("seeds %s: %w", name, redactErr(err))
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil, fmt.Errorf("seeds %s: %w", name, redactErr(err))
		}
		for ln, err := range lines(f) {
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("seeds %s:%d: %w", name, ln.no, redactErr(err))
			}
			if ln.no%4096 == 0 {
				if err := ctx.Err(); err != nil {
					f.Close()
					return nil, err
				}
			}
			res.Lines++
			if ln.tooLong {
				bad(name, ln.no, ctrTooLong, fmt.Sprintf("line longer than %d bytes", maxSeedLine))
				res.BadLines++
				continue
			}
			seed, ok, perr := ParseSeedLine(ln.text)
			if perr != nil {
				bad(name, ln.no, ctrBadSyntax, perr.Error())
				res.BadLines++
				continue
			}
			if !ok {
				continue
			}
			u, nerr := urlutil.Normalize(seed.URL)
			if nerr != nil {
				bad(name, ln.no, ctrBadURL, nerr.Error())
				res.BadLines++
				continue
			}
			if strings.IndexByte(u, 0) >= 0 {
				bad(name, ln.no, ctrBadURL, "URL holds a NUL byte")
				res.BadLines++
				continue
			}
			if urlutil.HasUserinfo(seed.URL) {
				res.Credentials++
				if firstCredentials == "" {
					firstCredentials = fmt.Sprintf("%s:%d", name, ln.no)
				}
			}
			if filters != nil {
				if ok, reason := filters.Filter(u); !ok {
					res.Counters.Add("inject", ctrFiltered, 1)
					bad(name, ln.no, ctrFilteredBy+reason, fmt.Sprintf("URL %s rejected by filter %s", u, reason))
					res.Filtered++
					continue
				}
			}
			res.Seeds++
			batch = append(batch, seedRow{URL: u, Score: seed.Score, HasScore: seed.HasScore,
				FetchInterval: seed.FetchInterval, HasInterval: seed.HasInterval, FixedInterval: seed.FixedInterval,
				Metadata: seed.Metadata, File: int32(fi), Line: ln.no})
			if len(batch) == cap(batch) {
				if err := flush(); err != nil {
					f.Close()
					return nil, err
				}
			}
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("seeds %s: %w", name, redactErr(err))
		}
	}
	if rejected := res.BadLines + res.Filtered; rejected > 0 {
		log.Warn("seed lines rejected", "rejected", rejected, "lines", res.Lines, "bad_lines", res.BadLines,
			"filtered", res.Filtered, "not_shown", max(0, reported-o.MaxReportedLines))
	}
	if res.Credentials > 0 {
		log.Warn("credentials removed from URLs; they are not stored",
			"urls", res.Credentials, "first_at", firstCredentials)
	}
	res.Counters.Add("inject", "seed_lines", res.Lines)
	res.Counters.Add("inject", "seeds_valid", res.Seeds)
	res.Counters.Add("inject", ctrRejected, res.BadLines+res.Filtered)
	res.Counters.Add("inject", ctrCredentials, res.Credentials)
	return files, flush()
}

// redactedError is an error whose message has any URL userinfo removed
// (urlutil.Redact); errors.Is and errors.As still see the error it wraps.
type redactedError struct{ err error }

func (e redactedError) Error() string { return urlutil.Redact(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// redactErr wraps err, whose message may quote a seed argument (a path or
// URI) as given, so that its message holds no userinfo.
func redactErr(err error) error {
	if err == nil || strings.IndexByte(err.Error(), '@') < 0 {
		return err
	}
	return redactedError{err}
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

// seedLine is one line of a seed file; no counts from 1.
type seedLine struct {
	no      int64
	text    string
	tooLong bool
}

// lines iterates over the lines of r (LF or CRLF, a UTF-8 byte-order mark
// removed from the first); a line longer than maxSeedLine is yielded with
// tooLong and without its text.
func lines(r io.Reader) iter.Seq2[seedLine, error] {
	return func(yield func(seedLine, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var (
			no      int64
			long    []byte // the start of a line longer than the buffer
			started bool   // a line is in progress (long, or too long)
			tooLong bool
		)
		for {
			chunk, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				started = true
				if !tooLong {
					long = append(long, chunk...)
					if len(long) > maxSeedLine {
						tooLong, long = true, nil
					}
				}
				continue
			}
			if len(chunk) > 0 || started {
				no++
				text := chunk
				if len(long) > 0 {
					text = append(long, chunk...)
				}
				if len(text) > maxSeedLine+2 { // allow for CRLF
					tooLong = true
				}
				if no == 1 {
					text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
				}
				l := seedLine{no: no, tooLong: tooLong}
				if !tooLong {
					l.text = string(bytes.TrimRight(text, "\r\n"))
				}
				long, started, tooLong = long[:0], false, false
				if !yield(l, nil) {
					return
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(seedLine{no: no + 1}, err)
				return
			}
		}
	}
}

// Conf keys of the inject job.
const (
	confOverwrite   = "inject.overwrite"
	confUpdate      = "inject.update"
	confInjectScore = "inject.score"
)

// newInjectJob builds the inject engine job from its Conf (the driver and
// the Hadoop task entry, through Registry, both build it this way).
func newInjectJob(m map[string]string) (*mapreduce.Job[injValue, crawldb.Datum], error) {
	c := &conf{m: m}
	current := c.str(confCurrent)
	seeds := c.str(confInputSeedsPath)
	out := c.str(confOut)
	parts := int(c.integer(confNumReduce))
	overwrite := c.boolean(confOverwrite)
	update := c.boolean(confUpdate)
	score := float32(c.float(confInjectScore))
	now := c.time(confNow)
	sched, _ := c.schedule()
	if c.err != nil {
		return nil, c.err
	}
	if seeds == "" || out == "" {
		return nil, errors.New("inject job: conf lacks the seeds input or the output")
	}
	return &mapreduce.Job[injValue, crawldb.Datum]{
		Name: "inject",
		Conf: m,
		Inputs: []mapreduce.Input[injValue]{
			mapreduce.From(current, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[injValue]) error {
				emit(d.URL, injValue{Kind: kindOld, Old: &d})
				return nil
			}, mapreduce.Optional(), mapreduce.AllowMissingColumns()),
			mapreduce.From(seeds, func(t *mapreduce.Task, s seedRow, emit mapreduce.Emit[injValue]) error {
				emit(s.URL, injValue{Kind: kindSeed, Seed: &s})
				return nil
			}),
		},
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[injValue], out func(crawldb.Datum)) error {
			var old *crawldb.Datum
			var seed *seedRow
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
			var res crawldb.Datum
			switch {
			case seed == nil:
				res = *old
			case old == nil:
				t.Count(ctrInjected, 1)
				res = injectedDatum(url, seed, score, sched, now)
			default:
				t.Count(ctrMerged, 1)
				switch {
				case overwrite:
					t.Count(ctrOverwritten, 1)
					res = injectedDatum(url, seed, score, sched, now)
				case update:
					t.Count(ctrUpdated, 1)
					res = *old
					res.Metadata = overlay(old.Metadata, seed.Metadata)
					if seed.HasScore {
						res.Score = seed.Score
					}
					if seed.HasInterval {
						res.FetchInterval = seed.FetchInterval
						res.FixedInterval = seed.FixedInterval
						res.Source = crawldb.SourceInjected
					}
				default:
					res = *old
				}
			}
			t.Count(ctrDBRows, 1)
			out(res)
			return nil
		},
		NumReduce: parts,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](out)},
	}, nil
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
