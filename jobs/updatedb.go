package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// DefaultRetryMax is how many transient fetch failures make a page
// db_gone (Nutch's db.fetch.retry.max).
const DefaultRetryMax = 3

// UpdateOptions configures UpdateDB. The zero value of every field but
// Segments is a valid setting (see each field).
type UpdateOptions struct {
	// Segments are the segment directories (URIs) to merge. Each must
	// hold a published crawl_fetch; crawl_parse is read when present.
	// UpdateDB needs at least one; Validate accepts none, as Crawl fills
	// them in each round.
	Segments []string
	// NoAdditions keeps URLs not yet in the CrawlDB out of it, whether
	// fetched or linked (Nutch's db.update.additions.allowed=false); false
	// adds them.
	NoAdditions bool
	// RetryMax is db.fetch.retry.max, the transient fetch failures after
	// which a page is db_gone; 0 means DefaultRetryMax.
	RetryMax int
	// MaxInlinks bounds the incoming links counted per URL and run, the
	// highest-cash ones (db.update.max.inlinks); 0 means
	// DefaultMaxInlinks. NoInlinkLimit lifts the bound.
	MaxInlinks int
	// NoInlinkLimit counts every incoming link (MaxInlinks must then be
	// 0); false bounds them by MaxInlinks.
	NoInlinkLimit bool
	// PurgeGone drops db_gone rows (Nutch's db.update.purge.404); false
	// keeps them.
	PurgeGone bool
	// Filters, if set, are applied to the URL of every input record, as
	// Nutch's updatedb -filter (CrawlDbFilter) does: a rejected URL leaves
	// the CrawlDB, and rejected link and redirect targets do not enter it.
	// The zero value filters nothing.
	Filters URLFilterOptions
	// Now is when URLs new from links are due; zero means time.Now().
	Now time.Time
	// Schedule sets the next fetch of every fetched or new URL; the zero
	// value is trawl's default (see ScheduleOptions).
	Schedule ScheduleOptions
	// Scoring is how pages are scored: "" or "opic" adds each link's OPIC
	// cash to its target's score (Nutch's scoring-opic); "linkrank" leaves
	// scores to LinkRank, which sets every score from the LinkDB (a URL new
	// from links starts at 0 until then).
	Scoring string
	// Remerge merges segments already merged (they hold
	// segment.MergedMarker) again; merging one twice counts its fetches
	// and its links' OPIC cash twice. False skips such segments, and
	// UpdateDB fails with ErrAlreadyMerged if no segment is left.
	Remerge bool
}

// Validate checks o as UpdateDB does before it takes any lock: no
// segment given twice or empty, no negative count, a schedule that
// exists with a valid configuration. It accepts an empty Segments (see
// there).
func (o UpdateOptions) Validate() error {
	if err := checkSegmentNames(o.Segments); err != nil {
		return err
	}
	if o.RetryMax < 0 {
		return fmt.Errorf("RetryMax (db.fetch.retry.max) must be >= 0 (0: %d), not %d", DefaultRetryMax, o.RetryMax)
	}
	if o.MaxInlinks < 0 {
		return fmt.Errorf("MaxInlinks (db.update.max.inlinks) must be >= 0 (0: %d), not %d", DefaultMaxInlinks, o.MaxInlinks)
	}
	if o.NoInlinkLimit && o.MaxInlinks != 0 {
		return fmt.Errorf("MaxInlinks %d with NoInlinkLimit: give one or the other", o.MaxInlinks)
	}
	if err := ValidateScoring(o.Scoring); err != nil {
		return err
	}
	s := o.Schedule.resolved()
	if _, err := crawldb.NewSchedule(s.Name, s.Config); err != nil {
		return err
	}
	return nil
}

// checkSegmentNames reports an empty segment name or a segment given twice
// (trailing slashes ignored).
func checkSegmentNames(segs []string) error {
	seen := make(map[string]bool, len(segs))
	for _, s := range segs {
		s = strings.TrimRight(s, "/")
		if s == "" {
			return errors.New("an empty segment name")
		}
		if seen[s] {
			return fmt.Errorf("segment %s given twice", s)
		}
		seen[s] = true
	}
	return nil
}

// withDefaults returns o with its zero fields set to what they mean and
// its segments without trailing slashes.
func (o UpdateOptions) withDefaults() UpdateOptions {
	o.Segments = slices.Clone(o.Segments)
	for i, s := range o.Segments {
		o.Segments[i] = strings.TrimRight(s, "/")
	}
	if o.RetryMax == 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.MaxInlinks == 0 {
		o.MaxInlinks = DefaultMaxInlinks
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Schedule = o.Schedule.resolved()
	return o
}

// inlinkLimit is the bound on the links counted per URL as the job takes
// it: 0 for none.
func (o UpdateOptions) inlinkLimit() int {
	if o.NoInlinkLimit {
		return 0
	}
	return o.MaxInlinks
}

// UpdateResult reports an UpdateDB run.
type UpdateResult struct {
	// CrawlDB is the installed CrawlDB (crawldb/current).
	CrawlDB string
	// Segments are the merged segments; Skipped those given but already
	// merged (see ErrAlreadyMerged).
	Segments []string
	Skipped  []string
	// Rows is the CrawlDB's size afterwards; Fetched the rows merged with
	// a fetch; Added the URLs new from links; StatusCounts the rows by
	// status name, as Nutch's "CrawlDB status" counters.
	Rows         int64
	Fetched      int64
	Added        int64
	StatusCounts map[string]int64
	// Counters are the engine's and the job's counters (group "updatedb").
	Counters *mapreduce.Counters
	// Duration is the wall time of the whole update.
	Duration time.Duration
	// Clusters is, with the dynamic schedule, the CrawlDB's record of its
	// cluster result and the periods this run scheduled with.
	Clusters *ClustersApplied
	// ClustersApplied is the URI of the cluster result this run applied
	// ("" if none was new).
	ClustersApplied string
	// PeriodsScan is the wall time of the dynamic schedule's pre-pass
	// over the CrawlDB (the cluster periods), PeriodsRows the rows it read.
	PeriodsScan time.Duration
	PeriodsRows int64
}

const jobUpdateDB = JobUpdateDB

// ErrAlreadyMerged is matched by UpdateDB's error when every segment
// given was already merged into the CrawlDB: nothing to do. A retry of an
// updatedb whose marker write failed ends this way, never with a second
// merge.
var ErrAlreadyMerged = errors.New("every segment given is already merged into the CrawlDB")

// UpdateDB merges segments' fetch and parse results into the CrawlDB
// (Nutch's CrawlDb job with CrawlDbReducer semantics).
//
// One engine job reads crawldb/current and, for each segment, crawl_fetch
// (required) and crawl_parse (when present), keyed by URL. Per URL the
// reducer takes the newest fetch, the signature from parsing, and the
// incoming links (at most MaxInlinks, the highest cash first), and applies
// Nutch's transitions:
//
//   - no fetch, no link: the row is kept as it is; no row and only links:
//     a new db_unfetched row, due at Now with the schedule's default
//     interval (unless NoAdditions);
//   - fetch_success / fetch_notmodified / redirects: the schedule's
//     SetFetchSchedule with the change state (a 304, or for a 200 the same
//     signature as before, is "not modified" and gives db_notmodified; a
//     new signature is "modified"; without an old or a new signature
//     "unknown"); then db_fetched, db_redir_perm or db_redir_temp; an
//     interval beyond the maximum forces a refetch;
//   - fetch_retry: retries+1 and the retry schedule; db_unfetched, or
//     db_gone with the gone schedule once retries reach RetryMax;
//   - fetch_gone: db_gone with the gone schedule.
//
// A redirect's target (Fetch.RedirectURL) enters as a link with no cash,
// as Nutch's fetcher records it. Scores are OPIC (see OPICLinkCash): a
// row's score grows by its incoming links' cash; a new row starts at 0.
// Every observed change or non-change is recorded (Datum.Observe), and the
// page features come from the parse, with the inlink count raised to the
// distinct linking pages seen in this run when that is more.
//
// Where trawl differs from Nutch: the CrawlDB's cluster id, change history
// and counts are taken from the CrawlDB row rather than the fetch list's
// copy (other jobs update them between generate and updatedb); a
// successful fetch without a parse signature keeps the old signature
// (Nutch keeps the fetch list's copy, the same thing unless the CrawlDB
// changed); redirects clear the signature (NUTCH-1422); StatusParseMeta
// updates are counted and ignored (segment.ParseUpdate has no metadata).
//
// UpdateDB holds the CrawlDB lock for the whole run and each segment's lock
// (segment.Lock), then repairs what a crash left (recoverDB), and only then
// decides each segment's state: a segment already merged is skipped, and if
// none is left UpdateDB fails with ErrAlreadyMerged (unless Remerge). It
// writes the new CrawlDB beside the current one, installs it with
// crawldb.Install, then writes UpdatedMarker into every merged segment
// (which ends the segment's generate lock). On any failure before the
// install the old CrawlDB is left as it was. The new CrawlDB version lists
// the segments merged into it, so if the process dies, or a marker write
// fails, after the install, the next job that takes the lock writes the
// missing markers (recoverDB) and a retry finds the segments merged: a
// segment is never merged twice by accident.
//
// With the dynamic schedule (Schedule.Name "dynamic"), UpdateDB first
// applies cluster results and computes the cluster periods:
//
//   - if the crawl's newest published clusters/<name> (see Cluster) is
//     newer than the one the current CrawlDB version records in its
//     _clusters.json, this run applies it: the job also reads its
//     assignment/ and samples/ (keyed by URL), so every page in the
//     assignment takes its label as ClusterID and ClusterSample if it is
//     a sample, and every page not in it stops being a sample and, if
//     young (ChangeCount at most the result's threshold), gets -1; the
//     schedule then sees the new assignment;
//   - a pre-pass over the current CrawlDB, reading only the url, cluster
//     id, sample flag, change count and history columns, averages
//     crawldb.ObservedChangePeriod over each cluster's samples (the new
//     result's samples when one is applied) into crawldb.ClusterPeriods,
//     which travel to the reduce tasks in the job's spec (so a Hadoop
//     Streaming task rebuilds the same schedule) for
//     crawldb.NewDynamicSchedule. The periods lag the samples' fetches
//     merged by this run by one round;
//   - the new version's _clusters.json records the applied result and
//     the periods, written before the install, so the CrawlDB and its
//     record change together.
//
// Other schedules carry the current version's _clusters.json forward
// unchanged.
func UpdateDB(ctx context.Context, env Env, o UpdateOptions) (res *UpdateResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	if len(o.Segments) == 0 {
		return nil, errors.New("updatedb: no segments given")
	}
	o = o.withDefaults()
	log := env.log().With("job", jobUpdateDB)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	filters, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	given, err := resolveSegments(env, o.Segments)
	if err != nil {
		return nil, err
	}
	// Lock the CrawlDB, then each segment, then recover what a crash
	// left: only then are the segments' states decided. A segment that
	// recovery marks merged (its merge was installed, its marker not
	// written) is never merged again.
	release, err := lockForUpdate(env, cp, given, log)
	if err != nil {
		return nil, err
	}
	defer release(&err)
	if err := recoverDB(env, cp, log); err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	segs, skipped, err := inspectSegments(given, o.Remerge, log)
	if err != nil {
		return nil, err
	}
	run, err := planUpdate(ctx, env, cp, o, filters, segs, log)
	if err != nil {
		return nil, err
	}
	jr, err := env.Run(ctx, run.spec)
	if err != nil {
		_ = cp.fs.RemoveAll(run.dir)
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	// The estimating schedule's model of the new version, for the next
	// round's generate and updatedb; a failure leaves the CrawlDB as it
	// was.
	if err := writeEstimateRecord(ctx, env, cp, run.dir, o.Schedule); err != nil {
		_ = cp.fs.RemoveAll(run.dir)
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	merged, err := installUpdate(env, cp, run, segs)
	if err != nil {
		return nil, err
	}
	if err := markMerged(segs, merged.MergeRecord); err != nil {
		return nil, err
	}
	res = updateResult(cp, jr, merged.Segments, skipped, run.plan, start)
	log.Info("updatedb done", "segments", len(segs), "rows", res.Rows, "fetched", res.Fetched, "added", res.Added,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// segDir is a segment given to updatedb, resolved; in is its inputs to
// the job (once inspected).
type segDir struct {
	uri  string
	fs   storage.FS
	path string
	in   segmentInput
}

// resolveSegments resolves the segments' URIs (Validate made sure none is
// given twice).
func resolveSegments(env Env, uris []string) ([]segDir, error) {
	segs := make([]segDir, 0, len(uris))
	for _, s := range uris {
		fsys, p, err := env.resolver().Resolve(s)
		if err != nil {
			return nil, fmt.Errorf("updatedb: segment %s: %w", s, err)
		}
		segs = append(segs, segDir{uri: s, fs: fsys, path: p})
	}
	return segs, nil
}

// lockForUpdate takes the CrawlDB's lock, then each segment's. release
// lets them go in the reverse order, joining the CrawlDB lock's release
// error into *errp (a segment lock that cannot be released is logged).
func lockForUpdate(env Env, cp crawlPaths, segs []segDir, log *slog.Logger) (release func(errp *error), err error) {
	lock, err := env.lock(cp, jobUpdateDB)
	if err != nil {
		return nil, err
	}
	var held []*crawldb.LockHandle
	release = func(errp *error) {
		for _, sl := range slices.Backward(held) {
			if err := sl.Unlock(); err != nil {
				log.Error("releasing a segment lock failed", "err", err)
			}
		}
		env.unlock(lock, errp)
	}
	for _, s := range segs {
		sl, err := segment.Lock(s.fs, s.path, jobUpdateDB, env.segmentLockOptions())
		if err != nil {
			release(&err)
			return nil, fmt.Errorf("updatedb: %w", err)
		}
		held = append(held, sl)
	}
	return release, nil
}

// inspectSegments removes what killed jobs left in each segment and
// decides what to merge: every segment with a published crawl_fetch (and
// its crawl_parse, if published), but for those already merged, which are
// skipped unless remerge. It fails with ErrAlreadyMerged if none is left.
// The caller holds the segments' locks.
func inspectSegments(given []segDir, remerge bool, log *slog.Logger) (segs []segDir, skipped []string, err error) {
	for _, s := range given {
		if _, err := segment.Clean(s.fs, s.path, log); err != nil {
			return nil, nil, fmt.Errorf("updatedb: %w", err)
		}
		st, err := segment.Inspect(s.fs, s.path)
		if err != nil {
			return nil, nil, fmt.Errorf("updatedb: %w", err)
		}
		if st.State == segment.StateMerged && !remerge {
			log.Warn("segment already merged into the CrawlDB: skipped (merging it again would count its fetches and links twice)",
				"segment", s.uri)
			skipped = append(skipped, s.uri)
			continue
		}
		if !st.Has(segment.DirFetch) {
			return nil, nil, fmt.Errorf("updatedb: segment %s has no published %s (was it fetched?)", s.uri, segment.DirFetch)
		}
		s.in = segmentInput{Fetch: storage.Join(s.uri, segment.DirFetch)}
		if st.Has(segment.DirCrawlParse) {
			s.in.Parse = storage.Join(s.uri, segment.DirCrawlParse)
		} else {
			log.Info("segment not parsed: merging its fetch status only", "segment", s.uri)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, nil, fmt.Errorf("updatedb: %w: %s (merging again would count their fetches and links twice; --remerge does it anyway)",
			ErrAlreadyMerged, strings.Join(skipped, ", "))
	}
	return segs, skipped, nil
}

// updateRun is a planned updatedb job: its spec, the directory it writes
// the new CrawlDB version in (a path in the crawl's file system), and,
// with the dynamic schedule, what it does about clusters.
type updateRun struct {
	spec updateDB
	dir  string
	plan *dynamicPlan
}

// planUpdate describes the job: the CrawlDB's part count, a fresh
// directory for the new version, and with the dynamic schedule the
// cluster result to apply and the cluster periods (planDynamic). The
// caller holds the CrawlDB lock.
func planUpdate(ctx context.Context, env Env, cp crawlPaths, o UpdateOptions, filters filterSpec, segs []segDir, log *slog.Logger) (updateRun, error) {
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return updateRun{}, fmt.Errorf("updatedb: %w", err)
	}
	newName := path.Base(crawldb.NewTempDir(cp.dbPath))
	run := updateRun{dir: path.Join(cp.dbPath, newName), spec: updateDB{
		Current:     storage.Join(cp.dbURI, crawldb.CurrentName),
		Out:         storage.Join(cp.dbURI, newName),
		Parts:       parts,
		Now:         o.Now.UTC(),
		NoAdditions: o.NoAdditions,
		RetryMax:    o.RetryMax,
		MaxInlinks:  o.inlinkLimit(),
		PurgeGone:   o.PurgeGone,
		NoLinkCash:  o.Scoring == ScoringLinkRank,
		Filters:     filters,
		Schedule:    o.Schedule,
	}}
	for _, s := range segs {
		run.spec.Segments = append(run.spec.Segments, s.in)
	}
	if run.spec.Schedule, err = withEstimateModel(ctx, env, cp, o.Schedule); err != nil {
		return updateRun{}, fmt.Errorf("updatedb: %w", err)
	}
	if o.Schedule.Name != "dynamic" {
		return run, nil
	}
	if run.plan, err = planDynamic(ctx, env, cp, o.Now); err != nil {
		return updateRun{}, fmt.Errorf("updatedb: dynamic schedule: %w", err)
	}
	if run.plan.apply != nil {
		run.spec.Clusters = run.plan.apply
		log.Info("applying a cluster result", "result", run.plan.apply.Result)
	}
	run.spec.ClusterPeriods = run.plan.record.Periods
	log.Info("cluster periods", "clusters", len(run.plan.record.Periods), "rows_scanned", run.plan.scanned,
		"duration", run.plan.took.Round(time.Millisecond))
	return run, nil
}

// installUpdate records in the new version the segments merged into it
// and its cluster record, then installs it as the CrawlDB: the install
// itself records the merge (see recoverDB). Before the install a failure
// removes the new version and leaves the CrawlDB as it was.
func installUpdate(env Env, cp crawlPaths, run updateRun, segs []segDir) (mergedSegments, error) {
	merged := mergedSegments{MergeRecord: segment.MergeRecord{Time: time.Now().UTC(), CrawlDB: cp.dbURI}}
	for _, s := range segs {
		merged.Segments = append(merged.Segments, s.uri)
	}
	list, err := json.Marshal(merged)
	if err != nil {
		return merged, fmt.Errorf("updatedb: %w", err)
	}
	if err := storage.WriteFileAtomic(cp.fs, path.Join(run.dir, mergedSegmentsFile), list); err != nil {
		_ = cp.fs.RemoveAll(run.dir)
		return merged, fmt.Errorf("updatedb: %w", err)
	}
	if err := writeClustersRecord(cp, run.dir, run.plan); err != nil {
		_ = cp.fs.RemoveAll(run.dir)
		return merged, fmt.Errorf("updatedb: %w", err)
	}
	killpoint.Reached(jobUpdateDB, "before-install")
	if err := crawldb.Install(cp.fs, cp.dbPath, run.dir, env.KeepOldDB); err != nil {
		return merged, fmt.Errorf("updatedb: install the new CrawlDB: %w", err)
	}
	killpoint.Reached(jobUpdateDB, "installed")
	return merged, nil
}

// markMerged writes the merged marker into every merged segment, which
// ends its generate lock. The CrawlDB is installed already: a marker not
// written is written by the next job that takes the CrawlDB lock.
func markMerged(segs []segDir, rec segment.MergeRecord) error {
	for i, s := range segs {
		if i > 0 {
			killpoint.Reached(jobUpdateDB, "marked-1")
		}
		if err := segment.MarkMerged(s.fs, s.path, rec); err != nil {
			return fmt.Errorf("updatedb: the CrawlDB is updated, but marking segment %s as merged failed (the next job holding the CrawlDB lock marks it): %w", s.uri, err)
		}
	}
	return nil
}

// updateResult reports a finished updatedb from its job's counters.
func updateResult(cp crawlPaths, jr *mapreduce.Result, merged, skipped []string, plan *dynamicPlan, start time.Time) *UpdateResult {
	res := &UpdateResult{CrawlDB: storage.Join(cp.dbURI, crawldb.CurrentName), Segments: merged, Skipped: skipped,
		Counters: jr.Counters, StatusCounts: map[string]int64{}}
	for name, v := range jr.Counters.Snapshot()[jobUpdateDB] {
		if s, ok := strings.CutPrefix(name, ctrStatusPrefix); ok {
			res.StatusCounts[s] = v
			res.Rows += v
		}
	}
	if plan != nil {
		res.Clusters = &plan.record
		if plan.apply != nil {
			res.ClustersApplied = plan.apply.Result
		}
		res.PeriodsScan, res.PeriodsRows = plan.took, plan.scanned
	}
	res.Fetched = jr.Counters.Get(jobUpdateDB, ctrFetched)
	res.Added = jr.Counters.Get(jobUpdateDB, ctrNewFromLinks)
	res.Duration = time.Since(start)
	return res
}
