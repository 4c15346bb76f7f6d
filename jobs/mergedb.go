package jobs

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

// JobMergeDB is the engine job of MergeDB, as Registry knows it.
const JobMergeDB = "mergedb"

// The counters of the mergedb job (group "mergedb").
const (
	ctrMergeDBRead     = "rows_read"     // rows of the input CrawlDBs
	ctrMergeDBFiltered = "rows_filtered" // dropped by the URL filters
	ctrMergeDBWritten  = "urls_written"  // rows of the new CrawlDB
)

// ErrOutputExists is matched by MergeDB's error when the output is a
// CrawlDB already and Replace is not set.
var ErrOutputExists = errors.New("the output CrawlDB exists")

// MergeDBOptions configures MergeDB.
type MergeDBOptions struct {
	// Out is the directory (URI) of the merged CrawlDB; its current/
	// is written.
	Out string
	// CrawlDBs are the input CrawlDB directories (URIs), at least one;
	// their order breaks ties (see MergeDB).
	CrawlDBs []string
	// Replace allows an Out that holds a CrawlDB already: the merge
	// becomes its new version (its previous one is removed, or kept as
	// old with Env.KeepOldDB). False refuses it with ErrOutputExists.
	Replace bool
	// Filters, if set, drop the rows whose URL they reject (Nutch's
	// mergedb -filter).
	Filters URLFilterOptions
}

// Validate checks the options as MergeDB does before it locks anything.
func (o MergeDBOptions) Validate() error {
	out := strings.TrimRight(o.Out, "/")
	if out == "" {
		return errors.New("mergedb: no output CrawlDB given")
	}
	if len(o.CrawlDBs) == 0 {
		return errors.New("mergedb: no input CrawlDB given")
	}
	seen := map[string]bool{}
	for _, d := range o.CrawlDBs {
		d = strings.TrimRight(d, "/")
		switch {
		case d == "":
			return errors.New("mergedb: an empty CrawlDB name")
		case seen[d]:
			return fmt.Errorf("mergedb: CrawlDB %s given twice", d)
		case path.Clean(d) == path.Clean(out):
			return fmt.Errorf("mergedb: the output %s is also an input: write to a new directory", out)
		}
		seen[d] = true
	}
	return nil
}

// MergeDBResult reports a MergeDB run.
type MergeDBResult struct {
	// CrawlDB is the installed version (Out/current).
	CrawlDB string
	// Read counts the input rows, Filtered those the filters dropped,
	// URLs the rows of the merged CrawlDB.
	Read, Filtered, URLs int64
	Counters             *mapreduce.Counters
	Duration             time.Duration
}

// MergeDB merges CrawlDBs into one (Nutch's CrawlDbMerger, `nutch
// mergedb`). One engine job reads the current version of every input,
// each under its lock (so no updatedb changes it meanwhile), and writes
// one row per URL by CrawlDbMerger's rule: the row with the latest last
// fetch time wins, where the last fetch time is Nutch's
// calculateLastFetchTime (0 for a db_unfetched row, else the next fetch
// time minus the interval); on a tie the row of the CrawlDB given first
// wins. The metadata of all rows are merged, a newer row's entries over
// an older's, so the winner's entries take precedence.
//
// trawl's own columns are the winner's, whole, as everything else in it
// (Nutch keeps the winner's score too): its change history, change and
// fetch counts, features, relevance columns and score. The cluster id
// and sample flag are the winner's too, though cluster ids of different
// CrawlDBs come from different clusterings: the next `trawl cluster` and
// updatedb with the dynamic schedule reassign them. The records kept
// beside a version (its cluster record, the estimating schedule's model,
// the segments merged into it) are not carried over.
//
// The new version is written beside Out's current one and installed with
// crawldb.Install under Out's lock: a failure or a kill leaves Out as it
// was (no CrawlDB, or its previous version). An Out that holds a CrawlDB
// is refused unless Replace.
func MergeDB(ctx context.Context, env Env, o MergeDBOptions) (res *MergeDBResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := env.log().With("job", JobMergeDB)
	outURI := strings.TrimRight(o.Out, "/")
	outFS, outPath, err := env.resolver().Resolve(outURI)
	if err != nil {
		return nil, fmt.Errorf("mergedb: output %s: %w", outURI, err)
	}
	existed, err := storage.Exists(outFS, outPath)
	if err != nil {
		return nil, fmt.Errorf("mergedb: output %s: %w", outURI, err)
	}
	if err := outFS.MkdirAll(outPath); err != nil {
		return nil, fmt.Errorf("mergedb: create %s: %w", outURI, err)
	}
	defer func() {
		if err != nil && !existed {
			removeIfEmpty(outFS, outPath)
		}
	}()
	lockOpts := crawldb.LockOptions{MaxAge: env.LockMaxAge, NoMaxAge: env.NoLockMaxAge, Logger: env.log()}
	outLock, err := crawldb.LockWith(outFS, outPath, JobMergeDB, env.ForceLock, lockOpts)
	if err != nil {
		return nil, fmt.Errorf("mergedb: %w", err)
	}
	defer env.unlock(outLock, &err)
	if _, err := crawldb.Recover(outFS, outPath, env.KeepOldDB); err != nil {
		return nil, fmt.Errorf("mergedb: %w", err)
	}
	if ok, err := storage.Exists(outFS, crawldb.Current(outPath)); err != nil {
		return nil, fmt.Errorf("mergedb: %w", err)
	} else if ok && !o.Replace {
		return nil, fmt.Errorf("mergedb: %w: %s holds a CrawlDB; give another directory, or replace it on purpose (--force)", ErrOutputExists, outURI)
	}
	var spec mergeDB
	if spec.Filters, err = o.Filters.spec(env.resolver()); err != nil {
		return nil, fmt.Errorf("mergedb: %w", err)
	}
	var held []*crawldb.LockHandle
	defer func() {
		for _, h := range slices.Backward(held) {
			env.unlock(h, &err)
		}
	}()
	parts := 0
	for _, in := range o.CrawlDBs {
		in = strings.TrimRight(in, "/")
		fsys, p, err := env.resolver().Resolve(in)
		if err != nil {
			return nil, fmt.Errorf("mergedb: CrawlDB %s: %w", in, err)
		}
		if ok, err := storage.Exists(fsys, p); err != nil {
			return nil, fmt.Errorf("mergedb: CrawlDB %s: %w", in, err)
		} else if !ok {
			return nil, fmt.Errorf("mergedb: CrawlDB %s does not exist", in)
		}
		h, err := crawldb.LockWith(fsys, p, JobMergeDB, env.ForceLock, lockOpts)
		if err != nil {
			return nil, fmt.Errorf("mergedb: %w", err)
		}
		held = append(held, h)
		ok, err := storage.Exists(fsys, path.Join(crawldb.Current(p), "_SUCCESS"))
		if err != nil {
			return nil, fmt.Errorf("mergedb: CrawlDB %s: %w", in, err)
		}
		if !ok {
			return nil, fmt.Errorf("mergedb: %s holds no CrawlDB (no published %s; if an install was interrupted, any job of its crawl repairs it)",
				in, crawldb.CurrentName)
		}
		n, err := countParts(fsys, crawldb.Current(p))
		if err != nil {
			return nil, fmt.Errorf("mergedb: CrawlDB %s: %w", in, err)
		}
		parts = max(parts, n)
		spec.Inputs = append(spec.Inputs, storage.Join(in, crawldb.CurrentName))
	}
	spec.Parts = max(1, min(parts, mapreduce.MaxReduce))
	if env.DBParts > 0 {
		spec.Parts = min(env.DBParts, mapreduce.MaxReduce)
	}
	tmp := crawldb.NewTempDir(outPath)
	spec.Out = storage.Join(outURI, path.Base(tmp))
	jr, err := env.Run(ctx, spec)
	if err != nil {
		_ = outFS.RemoveAll(tmp)
		return nil, fmt.Errorf("mergedb: %w", err)
	}
	killpoint.Reached(JobMergeDB, "before-install")
	if err := crawldb.Install(outFS, outPath, tmp, env.KeepOldDB); err != nil {
		_ = outFS.RemoveAll(tmp)
		return nil, fmt.Errorf("mergedb: install the merged CrawlDB: %w", err)
	}
	res = &MergeDBResult{
		CrawlDB: storage.Join(outURI, crawldb.CurrentName),
		Read:    jr.Counters.Get(JobMergeDB, ctrMergeDBRead), Filtered: jr.Counters.Get(JobMergeDB, ctrMergeDBFiltered),
		URLs: jr.Counters.Get(JobMergeDB, ctrMergeDBWritten), Counters: jr.Counters, Duration: time.Since(start),
	}
	log.Info("mergedb done", "inputs", len(spec.Inputs), "read", res.Read, "urls", res.URLs,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// removeIfEmpty removes dir if it exists and is empty.
func removeIfEmpty(fsys storage.FS, dir string) {
	if ents, err := fsys.ReadDir(dir); err == nil && len(ents) == 0 {
		_ = fsys.RemoveAll(dir)
	}
}

// mergeDB is MergeDB's engine job.
type mergeDB struct {
	// Inputs are the inputs' current directories (URIs), in the order
	// given.
	Inputs []string
	// Out is the new version's directory, written in Parts parts.
	Out   string
	Parts int
	// Filters are the URL filters (the zero value filters nothing).
	Filters filterSpec
}

func (mergeDB) JobName() string { return JobMergeDB }

// dbRow is a CrawlDB row in mergedb's shuffle with the index of its
// CrawlDB, which comes first so a URL's rows arrive in input order.
type dbRow struct {
	Input int
	Row   crawldb.Datum
}

// Job builds the merge: every input's rows by URL, reduced by
// mergeDatums.
func (s mergeDB) Job() (mapreduce.Runnable, error) {
	if len(s.Inputs) == 0 || s.Out == "" || s.Parts < 1 {
		return nil, errors.New("mergedb job: needs inputs, an output and parts")
	}
	filters, err := s.Filters.filters()
	if err != nil {
		return nil, err
	}
	keep := urlKeeper{filters}
	var ins []mapreduce.Input[dbRow]
	for i, in := range s.Inputs {
		ins = append(ins, mapreduce.From(in, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[dbRow]) error {
			t.Count(ctrMergeDBRead, 1)
			if !keep.keep(t, d.URL) {
				t.Count(ctrMergeDBFiltered, 1)
				return nil
			}
			emit(d.URL, dbRow{Input: i, Row: d})
			return nil
		}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()))
	}
	return &mapreduce.Job[dbRow, crawldb.Datum]{
		Name:   JobMergeDB,
		Inputs: ins,
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[dbRow], out func(crawldb.Datum)) error {
			var rows []dbRow
			for v := range values {
				rows = append(rows, v)
			}
			// The engine sorts a key's values by their encoding, which
			// starts with Input; sort anyway, as the rule depends on it.
			slices.SortStableFunc(rows, func(a, b dbRow) int { return a.Input - b.Input })
			t.Count(ctrMergeDBWritten, 1)
			out(mergeDatums(rows))
			return nil
		},
		NumReduce: s.Parts,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}, nil
}

// mergeDatums is CrawlDbMerger's reduce over one URL's rows in input
// order: the first row with the latest last fetch time (lastFetched)
// wins; metadata are merged with a newer row's entries over an older's.
func mergeDatums(rows []dbRow) crawldb.Datum {
	res := rows[0].Row
	resTime := lastFetched(&res)
	meta := overlay(nil, res.Metadata)
	for _, r := range rows[1:] {
		t := lastFetched(&r.Row)
		if t.After(resTime) {
			meta = overlay(meta, r.Row.Metadata)
			res, resTime = r.Row, t
		} else {
			meta = overlay(r.Row.Metadata, meta)
		}
	}
	res.Metadata = meta
	return res
}

// lastFetched is Nutch's AbstractFetchSchedule.calculateLastFetchTime:
// the zero time for a db_unfetched row, else the next fetch time minus
// the interval.
func lastFetched(d *crawldb.Datum) time.Time {
	if d.Status == crawldb.StatusDBUnfetched || d.FetchTime.IsZero() {
		return time.Time{}
	}
	return d.FetchTime.Add(-time.Duration(d.FetchInterval) * time.Second)
}
