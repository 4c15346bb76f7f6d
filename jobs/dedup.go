package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// The engine jobs of Dedup, as Registry knows them, and their counters.
const (
	JobDedupSelect = "dedup-select"
	JobDedupMark   = "dedup-mark"
	ctrDedupRows   = "rows_read"              // dedup-select
	ctrDedupGroups = "groups_with_duplicates" // dedup-select
	ctrDedupMarked = "rows_marked"            // both jobs
)

// DedupOptions configures Dedup.
type DedupOptions struct {
	// Group is where duplicates are looked for (Nutch's -group): "host"
	// among the pages of one host, "domain" of one registered domain; ""
	// or "none" among all pages.
	Group string
}

// dedupGroups maps each Group to the part of a URL its duplicates share.
var dedupGroups = map[string]func(string) string{"": nil, "none": nil, "host": urlutil.Host, "domain": urlutil.Domain}

// Validate reports an unknown Group.
func (o DedupOptions) Validate() error {
	if _, ok := dedupGroups[o.Group]; !ok {
		return fmt.Errorf("dedup: group %q is not none, host or domain", o.Group)
	}
	return nil
}

// DedupResult reports a Dedup run: the rows read, the signatures (per
// Group) shared by more than one fetched row, the rows made db_duplicate,
// the jobs' counters and the run's wall time.
type DedupResult struct {
	Rows, Groups, Marked int64
	Counters             *mapreduce.Counters
	Duration             time.Duration
}

// Dedup marks duplicate pages (Nutch's DeduplicationJob): of the fetched
// rows (db_fetched, db_notmodified) sharing a non-empty signature (per
// Group) it keeps the highest score, then the newest fetch (PrevFetchTime;
// Nutch compares the next one), then the shortest URL (as stored; Nutch
// percent-decodes), then the first in byte order, and makes the others
// db_duplicate. As Nutch's, dedup-select writes the URLs to mark into a
// temporary directory of the CrawlDB and dedup-mark rewrites the CrawlDB by
// URL, in the parts updatedb would write, other columns unchanged; the new
// version is installed with crawldb.Install (nothing to mark: none is
// written). Dedup holds the CrawlDB lock, first repairs what a crash left
// (as updatedb does), and on failure leaves the CrawlDB as it was.
func Dedup(ctx context.Context, env Env, o DedupOptions) (res *DedupResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	if ok, err := storage.Exists(cp.fs, cp.dbPath); err != nil || !ok {
		return nil, fmt.Errorf("dedup: no CrawlDB at %s (run inject first): %w", cp.dbURI, cmp.Or(err, fs.ErrNotExist))
	}
	lock, err := env.lockRecovered(cp, "dedup", env.log())
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	dups := path.Base(crawldb.NewTempDir(cp.dbPath)) + "-dups"
	defer cp.fs.RemoveAll(path.Join(cp.dbPath, dups))
	sel := dedupSelect{CrawlDB: storage.Join(cp.dbURI, crawldb.CurrentName), Out: storage.Join(cp.dbURI, dups), Options: o, Reduces: parts}
	jr, err := env.Run(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	c := jr.Counters
	res = &DedupResult{Rows: c.Get(JobDedupSelect, ctrDedupRows), Groups: c.Get(JobDedupSelect, ctrDedupGroups),
		Marked: c.Get(JobDedupSelect, ctrDedupMarked), Counters: c}
	if res.Marked > 0 {
		newName := path.Base(crawldb.NewTempDir(cp.dbPath))
		mark := dedupMark{CrawlDB: sel.CrawlDB, Duplicates: sel.Out, Out: storage.Join(cp.dbURI, newName), Reduces: parts}
		jr, err := rewriteDB(ctx, env, cp, mark, path.Join(cp.dbPath, newName))
		if err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
		c.Merge(jr.Counters)
	}
	res.Duration = time.Since(start)
	env.log().Info("dedup done", "job", "dedup", "rows", res.Rows, "groups", res.Groups, "marked", res.Marked,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// dedupRow is what dedup-select reads of a Datum and shuffles; of the URLs
// it selects to be marked it writes only URL.
type dedupRow struct {
	URL           string         `parquet:"url"`
	Status        crawldb.Status `parquet:"status"`
	Score         float32        `parquet:"score"`
	Signature     []byte         `parquet:"signature,optional"`
	PrevFetchTime time.Time      `parquet:"prev_fetch_time,optional,timestamp(millisecond)"`
}

// dedupSelect is Dedup's first job (Nutch's DBFilter and DedupReducer).
type dedupSelect struct {
	CrawlDB, Out string // the current CrawlDB; the URLs to mark (URIs)
	Options      DedupOptions
	Reduces      int
}

func (dedupSelect) JobName() string { return JobDedupSelect }

func (s dedupSelect) Job() (mapreduce.Runnable, error) {
	if err := s.Options.Validate(); err != nil || s.CrawlDB == "" || s.Out == "" {
		return nil, errors.Join(err, errors.New("dedup-select job: needs a valid group, the CrawlDB and the output"))
	}
	return &mapreduce.Job[dedupRow, dedupRow]{
		Name:      JobDedupSelect,
		Inputs:    []mapreduce.Input[dedupRow]{mapreduce.From(s.CrawlDB, s.candidate, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())},
		Reduce:    selectDuplicates,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[dedupRow]{mapreduce.Write[dedupRow](s.Out)},
	}, nil
}

// candidate keys a fetched row with a signature by its group and signature.
func (s dedupSelect) candidate(t *mapreduce.Task, d dedupRow, emit mapreduce.Emit[dedupRow]) error {
	t.Count(ctrDedupRows, 1)
	if (d.Status != crawldb.StatusDBFetched && d.Status != crawldb.StatusDBNotModified) || len(d.Signature) == 0 {
		return nil
	}
	key := "\x00" + string(d.Signature)
	if part := dedupGroups[s.Options.Group]; part != nil {
		key = part(d.URL) + key
	}
	emit(key, dedupRow{URL: d.URL, Score: d.Score, PrevFetchTime: d.PrevFetchTime})
	return nil
}

// selectDuplicates outputs every row of a signature but the one kept.
func selectDuplicates(t *mapreduce.Task, _ string, rows iter.Seq[dedupRow], out func(dedupRow)) error {
	var best dedupRow
	n := int64(0)
	for d := range rows {
		if n++; n == 1 {
			best = d
			continue
		}
		if keepFirst(d, best) {
			d, best = best, d
		}
		out(dedupRow{URL: d.URL})
	}
	if n > 1 {
		t.Count(ctrDedupGroups, 1)
		t.Count(ctrDedupMarked, n-1)
	}
	return nil
}

// keepFirst reports whether a is kept rather than b: the higher score, then
// the newer fetch, then the shorter URL, then the smaller one.
func keepFirst(a, b dedupRow) bool {
	return cmp.Or(cmp.Compare(b.Score, a.Score), b.PrevFetchTime.Compare(a.PrevFetchTime),
		cmp.Compare(len(a.URL), len(b.URL)), strings.Compare(a.URL, b.URL)) < 0
}

// dedupMark is Dedup's second job (Nutch's StatusUpdateReducer): the
// CrawlDB by URL, a row with a mark (a Datum without URL) made db_duplicate.
type dedupMark struct {
	CrawlDB, Duplicates, Out string // URIs
	Reduces                  int    // the CrawlDB's parts
}

func (dedupMark) JobName() string { return JobDedupMark }

func (s dedupMark) Job() (mapreduce.Runnable, error) {
	if s.CrawlDB == "" || s.Duplicates == "" || s.Out == "" {
		return nil, errors.New("dedup-mark job: needs the CrawlDB, the duplicates and the output")
	}
	return &mapreduce.Job[crawldb.Datum, crawldb.Datum]{
		Name: JobDedupMark,
		Inputs: []mapreduce.Input[crawldb.Datum]{
			mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
				emit(d.URL, d)
				return nil
			}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
			mapreduce.From(s.Duplicates, func(t *mapreduce.Task, d dedupRow, emit mapreduce.Emit[crawldb.Datum]) error {
				emit(d.URL, crawldb.Datum{})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		Reduce:    markDuplicate,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}, nil
}

// markDuplicate writes a URL's row, db_duplicate if it has a mark.
func markDuplicate(t *mapreduce.Task, url string, values iter.Seq[crawldb.Datum], out func(crawldb.Datum)) error {
	var row crawldb.Datum
	marked := false
	for d := range values {
		marked = marked || d.URL == ""
		if d.URL != "" {
			row = d
		}
	}
	if row.URL == "" {
		return fmt.Errorf("dedup: %s was selected but is not in the CrawlDB", url)
	}
	if marked {
		row.Status = crawldb.StatusDBDuplicate
		t.Count(ctrDedupMarked, 1)
	}
	out(row)
	return nil
}
