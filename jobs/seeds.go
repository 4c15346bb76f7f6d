package jobs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// Seed is one parsed line of a seed file (Nutch's Injector input): a URL and
// the optional per-URL settings given after it as TAB-separated key=value
// pairs.
type Seed struct {
	// URL is the URL as written (trimmed), not yet normalized.
	URL string
	// Score is the seed's score when HasScore (key score, or Nutch's
	// nutch.score).
	Score    float32
	HasScore bool
	// FetchInterval is the seed's interval in seconds when HasInterval
	// (key fetchInterval or fixedInterval, or Nutch's nutch.fetchInterval
	// and nutch.fetchInterval.fixed).
	FetchInterval int32
	HasInterval   bool
	// FixedInterval is set by fixedInterval: schedules keep the interval.
	FixedInterval bool
	// Metadata holds every other key=value pair.
	Metadata map[string]string
}

// The seed-line keys with a meaning; every other key goes to Metadata.
// The nutch.* spellings are Nutch's Injector metadata names, accepted so that
// Nutch seed lists inject unchanged.
const (
	seedKeyScore         = "score"
	seedKeyInterval      = "fetchInterval"
	seedKeyFixedInterval = "fixedInterval"

	nutchKeyScore         = "nutch.score"
	nutchKeyInterval      = "nutch.fetchInterval"
	nutchKeyFixedInterval = "nutch.fetchInterval.fixed"
)

// ParseSeedLine parses one seed-file line:
//
//	URL [<TAB>key=value]...
//
// Keys: score=F (a finite float), fetchInterval=SECONDS (a non-negative
// integer), fixedInterval=SECONDS (the same, and the schedules must not adapt
// it); any other key is kept as metadata. Blank lines and lines whose first
// non-blank character is '#' return ok=false and no error. A field without
// '=', an empty key, a bad number or a repeated key is an error; the caller
// names the file and line. Errors quote the line's text with any URL
// userinfo removed (urlutil.Redact), so they can be logged.
func ParseSeedLine(line string) (seed Seed, ok bool, err error) {
	line = strings.TrimRight(line, "\r\n")
	if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
		return Seed{}, false, nil
	}
	fields := strings.Split(line, "\t")
	seed.URL = strings.TrimSpace(fields[0])
	if seed.URL == "" {
		return Seed{}, false, errors.New("empty URL before a TAB")
	}
	seen := make(map[string]bool, len(fields)-1)
	for _, f := range fields[1:] {
		if strings.TrimSpace(f) == "" {
			continue // tolerate doubled or trailing TABs
		}
		k, v, found := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if !found {
			return Seed{}, false, fmt.Errorf("field %q is not key=value", urlutil.Redact(f))
		}
		if k == "" {
			return Seed{}, false, fmt.Errorf("field %q has an empty key", urlutil.Redact(f))
		}
		canon := k
		switch k {
		case nutchKeyScore:
			canon = seedKeyScore
		case nutchKeyInterval:
			canon = seedKeyInterval
		case nutchKeyFixedInterval:
			canon = seedKeyFixedInterval
		}
		if seen[canon] {
			return Seed{}, false, fmt.Errorf("key %q given twice", urlutil.Redact(k))
		}
		seen[canon] = true
		switch canon {
		case seedKeyScore:
			s, err := strconv.ParseFloat(v, 32)
			if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
				return Seed{}, false, fmt.Errorf("%s=%q is not a finite number", urlutil.Redact(k), urlutil.Redact(v))
			}
			seed.Score, seed.HasScore = float32(s), true
		case seedKeyInterval, seedKeyFixedInterval:
			if seen[seedKeyInterval] && seen[seedKeyFixedInterval] {
				return Seed{}, false, errors.New("both fetchInterval and fixedInterval given")
			}
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return Seed{}, false, fmt.Errorf("%s=%q is not a whole number of seconds >= 0", k, urlutil.Redact(v))
			}
			seed.FetchInterval, seed.HasInterval = int32(n), true
			seed.FixedInterval = canon == seedKeyFixedInterval
		default:
			if seed.Metadata == nil {
				seed.Metadata = make(map[string]string)
			}
			seed.Metadata[k] = v
		}
	}
	return seed, true, nil
}

// maxSeedLine bounds a seed line's length; longer lines are reported and
// skipped.
const maxSeedLine = 1 << 20

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
		files, err := seedDir(fsys, p, a)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// seedDir lists the seed files of the directory p of fsys, the seed
// argument arg: its files in name order, but for names starting with '.'
// or '_'.
func seedDir(fsys storage.FS, p, arg string) ([]string, error) {
	infos, err := fsys.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("seeds %s: %w", urlutil.Redact(arg), redactErr(err))
	}
	var out []string
	for _, e := range infos {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		out = append(out, storage.Join(arg, e.Name()))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("seeds %s: directory holds no seed file", urlutil.Redact(arg))
	}
	return out, nil
}

// seedReader reads seed files into the inject job's input: it parses,
// normalizes and filters every line, writes the valid seeds, and counts
// and reports the rest into result.
type seedReader struct {
	res     mapreduce.Resolver
	filters urlutil.Filters // nil: none
	// maxReported bounds the rejected lines logged in detail.
	maxReported int
	result      *InjectResult
	log         *slog.Logger

	w                *seedWriter
	reported         int    // rejected lines so far
	firstCredentials string // file:line of the first URL with userinfo
}

// read reads the seed files the arguments seeds name (see seedFiles) and
// writes the valid seeds to the Parquet file seedsFile of fsys (always
// created, possibly empty). It returns the seed files read.
func (sr *seedReader) read(ctx context.Context, seeds []string, fsys storage.FS, seedsFile string) (files []string, err error) {
	files, err = seedFiles(sr.res, seeds)
	if err != nil {
		return nil, err
	}
	sr.w, err = createSeedWriter(fsys, seedsFile)
	if err != nil {
		return nil, err
	}
	defer sr.w.close(&err)
	for i, file := range files {
		if err := sr.readFile(ctx, i, file); err != nil {
			return nil, err
		}
	}
	sr.summarize()
	return files, sr.w.flush()
}

// readFile reads the seed file file, the index-th of the list.
func (sr *seedReader) readFile(ctx context.Context, index int, file string) error {
	sr.result.SeedFiles++
	name := urlutil.Redact(file)
	fsys, p, err := sr.res.Resolve(file)
	if err != nil {
		return fmt.Errorf("seeds %s: %w", name, redactErr(err))
	}
	f, err := fsys.Open(p)
	if err != nil {
		return fmt.Errorf("seeds %s: %w", name, redactErr(err))
	}
	if err := sr.readLines(ctx, f, index, name); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("seeds %s: %w", name, redactErr(err))
	}
	return nil
}

// readLines reads the lines of the index-th seed file, called name (its
// name redacted) in reports.
func (sr *seedReader) readLines(ctx context.Context, r io.Reader, index int, name string) error {
	for ln, err := range lines(r) {
		if err != nil {
			return fmt.Errorf("seeds %s:%d: %w", name, ln.no, redactErr(err))
		}
		if ln.no%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if row, ok := sr.line(name, index, ln); ok {
			if err := sr.w.add(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// line returns the seed of a line of the index-th seed file, or ok false
// for a blank, comment or rejected line (a rejected line is counted and
// reported).
func (sr *seedReader) line(name string, index int, ln seedLine) (row seedRow, ok bool) {
	r := sr.result
	r.Lines++
	if ln.tooLong {
		sr.bad(name, ln.no, ctrTooLong, fmt.Sprintf("line longer than %d bytes", maxSeedLine))
		return seedRow{}, false
	}
	seed, ok, err := ParseSeedLine(ln.text)
	if err != nil {
		sr.bad(name, ln.no, ctrBadSyntax, err.Error())
		return seedRow{}, false
	}
	if !ok {
		return seedRow{}, false
	}
	u, err := urlutil.Normalize(seed.URL)
	if err != nil {
		sr.bad(name, ln.no, ctrBadURL, err.Error())
		return seedRow{}, false
	}
	if strings.IndexByte(u, 0) >= 0 {
		sr.bad(name, ln.no, ctrBadURL, "URL holds a NUL byte")
		return seedRow{}, false
	}
	if urlutil.HasUserinfo(seed.URL) {
		r.Credentials++
		if sr.firstCredentials == "" {
			sr.firstCredentials = fmt.Sprintf("%s:%d", name, ln.no)
		}
	}
	if !sr.passes(name, ln.no, u) {
		return seedRow{}, false
	}
	r.Seeds++
	return seedRow{URL: u, Score: seed.Score, HasScore: seed.HasScore,
		FetchInterval: seed.FetchInterval, HasInterval: seed.HasInterval, FixedInterval: seed.FixedInterval,
		Metadata: seed.Metadata, File: int32(index), Line: ln.no}, true
}

// passes reports whether the filters accept the normalized URL u of
// line no of the file name; a URL they reject is counted and reported.
func (sr *seedReader) passes(name string, no int64, u string) bool {
	if sr.filters == nil {
		return true
	}
	ok, reason := sr.filters.Filter(u)
	if !ok {
		sr.result.Counters.Add(JobInject, ctrFiltered, 1)
		sr.report(name, no, ctrFilteredBy+reason, fmt.Sprintf("URL %s rejected by filter %s", u, reason))
		sr.result.Filtered++
	}
	return ok
}

// bad counts and reports a line rejected as bad (see report).
func (sr *seedReader) bad(name string, no int64, counter, why string) {
	sr.report(name, no, counter, why)
	sr.result.BadLines++
}

// report counts a rejected line under counter and, for the first
// maxReported, logs it and keeps it as a sample. name (redacted) and why
// must hold no raw userinfo (the parser's and the normalizer's errors are
// redacted).
func (sr *seedReader) report(name string, no int64, counter, why string) {
	sr.result.Counters.Add(JobInject, counter, 1)
	if sr.reported < sr.maxReported {
		at := fmt.Sprintf("%s:%d", name, no)
		sr.result.BadLineSamples = append(sr.result.BadLineSamples, at+": "+why)
		sr.log.Warn("seed line skipped", "at", at, "why", why)
	}
	sr.reported++
}

// summarize logs what was rejected or stripped, and adds the reading's
// counters.
func (sr *seedReader) summarize() {
	r := sr.result
	if rejected := r.BadLines + r.Filtered; rejected > 0 {
		sr.log.Warn("seed lines rejected", "rejected", rejected, "lines", r.Lines, "bad_lines", r.BadLines,
			"filtered", r.Filtered, "not_shown", max(0, sr.reported-sr.maxReported))
	}
	if r.Credentials > 0 {
		sr.log.Warn("credentials removed from URLs; they are not stored",
			"urls", r.Credentials, "first_at", sr.firstCredentials)
	}
	r.Counters.Add(JobInject, "seed_lines", r.Lines)
	r.Counters.Add(JobInject, "seeds_valid", r.Seeds)
	r.Counters.Add(JobInject, ctrRejected, r.BadLines+r.Filtered)
	r.Counters.Add(JobInject, ctrCredentials, r.Credentials)
}

// seedWriter writes seed rows to a Parquet file, in batches.
type seedWriter struct {
	name  string
	out   io.WriteCloser
	w     *parquetio.Writer[seedRow]
	batch []seedRow
}

// createSeedWriter creates the Parquet file name in fsys.
func createSeedWriter(fsys storage.FS, name string) (*seedWriter, error) {
	out, err := fsys.Create(name)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return &seedWriter{name: name, out: out, w: parquetio.NewWriter[seedRow](out), batch: make([]seedRow, 0, 1024)}, nil
}

// add writes row, when its batch is full.
func (w *seedWriter) add(row seedRow) error {
	w.batch = append(w.batch, row)
	if len(w.batch) < cap(w.batch) {
		return nil
	}
	return w.flush()
}

// flush writes the batch.
func (w *seedWriter) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	if err := w.w.Write(w.batch...); err != nil {
		return fmt.Errorf("write %s: %w", w.name, err)
	}
	w.batch = w.batch[:0]
	return nil
}

// close closes the Parquet writer and the file (without flushing the
// batch), setting *errp to the first error unless it holds one.
func (w *seedWriter) close(errp *error) {
	if err := w.w.Close(); err != nil && *errp == nil {
		*errp = fmt.Errorf("write %s: %w", w.name, err)
	}
	if err := w.out.Close(); err != nil && *errp == nil {
		*errp = fmt.Errorf("write %s: %w", w.name, err)
	}
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
