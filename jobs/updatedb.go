package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// DefaultRetryMax is how many transient fetch failures make a page
// db_gone (Nutch's db.fetch.retry.max).
const DefaultRetryMax = 3

// UpdateOptions configures UpdateDB.
type UpdateOptions struct {
	// Segments are the segment directories (URIs) to merge. Each must
	// hold a published crawl_fetch; crawl_parse is read when present.
	Segments []string
	// NoAdditions keeps URLs not yet in the CrawlDB out of it, whether
	// fetched or linked (Nutch's db.update.additions.allowed=false).
	NoAdditions bool
	// RetryMax is db.fetch.retry.max; 0 means DefaultRetryMax.
	RetryMax int
	// MaxInlinks bounds the incoming links counted per URL and run
	// (db.update.max.inlinks); 0 means DefaultMaxInlinks, -1 no limit.
	MaxInlinks int
	// PurgeGone drops db_gone rows (Nutch's db.update.purge.404).
	PurgeGone bool
	// Filters, if set, are applied to the URL of every input record, as
	// Nutch's updatedb -filter (CrawlDbFilter) does: a rejected URL leaves
	// the CrawlDB, and rejected link and redirect targets do not enter it.
	// The zero value filters nothing.
	Filters URLFilterOptions
	// Now is when URLs new from links are due; zero means time.Now().
	Now time.Time
	// Schedule sets the next fetch of every fetched or new URL.
	Schedule ScheduleOptions
	// Remerge merges segments already merged (they hold
	// segment.MergedMarker) again; merging one twice counts its fetches
	// and its links' OPIC cash twice. Without it such segments are
	// skipped, and UpdateDB fails with ErrAlreadyMerged if no segment is
	// left.
	Remerge bool
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

// Conf keys of the updatedb job.
const (
	confSegments   = "updatedb.segments"
	confAdditions  = "updatedb.additions"
	confRetryMax   = "updatedb.retryMax"
	confMaxInlinks = "updatedb.maxInlinks"
	confPurgeGone  = "updatedb.purgeGone"
	// The dynamic schedule's inputs: the cluster result to apply (URI,
	// absent: none), its young-page threshold, and the cluster periods
	// (JSON crawldb.ClusterPeriods).
	confClusters          = "updatedb.clusters"
	confClusterMaxChanges = "updatedb.clusterMaxChanges"
	confClusterPeriods    = "updatedb.clusterPeriods"
)

// segmentInput is one segment's inputs to updatedb.
type segmentInput struct {
	Fetch string `json:"fetch"`
	Parse string `json:"parse,omitempty"` // "" if the segment was not parsed
}

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
//     which travel to the reduce tasks in the job's Conf as JSON (so a
//     Hadoop Streaming task rebuilds the same schedule) for
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
	if len(o.Segments) == 0 {
		return nil, errors.New("updatedb: no segments given")
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.MaxInlinks == 0 {
		o.MaxInlinks = DefaultMaxInlinks
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	log := env.log().With("job", jobUpdateDB)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	if _, err := crawldb.NewSchedule(o.Schedule.resolved().Name, o.Schedule.resolved().Config); err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	spec, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}

	// The segments, resolved and deduplicated.
	type segDir struct {
		uri  string
		fs   storage.FS
		path string
	}
	var given []segDir
	seen := map[string]bool{}
	for _, s := range o.Segments {
		s = strings.TrimRight(s, "/")
		if seen[s] {
			return nil, fmt.Errorf("updatedb: segment %s given twice", s)
		}
		seen[s] = true
		fsys, p, err := env.resolver().Resolve(s)
		if err != nil {
			return nil, fmt.Errorf("updatedb: segment %s: %w", s, err)
		}
		given = append(given, segDir{uri: s, fs: fsys, path: p})
	}

	// Take the CrawlDB's lock, then each segment's, then recover what a
	// crash left: only then are the segments' states decided. A segment
	// that recovery marks merged (its merge was installed, its marker not
	// written) is never merged again.
	lock, err := env.lock(cp, jobUpdateDB)
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	for _, s := range given {
		sl, err := segment.Lock(s.fs, s.path, jobUpdateDB, env.segmentLockOptions())
		if err != nil {
			return nil, fmt.Errorf("updatedb: %w", err)
		}
		defer env.unlock(sl, &err)
	}
	if err := recoverDB(env, cp, log); err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	var segs []segDir
	var inputs []segmentInput
	var skipped []string
	for _, s := range given {
		if _, err := segment.Clean(s.fs, s.path, log); err != nil {
			return nil, fmt.Errorf("updatedb: %w", err)
		}
		st, err := segment.Inspect(s.fs, s.path)
		if err != nil {
			return nil, fmt.Errorf("updatedb: %w", err)
		}
		if st.State == segment.StateMerged && !o.Remerge {
			log.Warn("segment already merged into the CrawlDB: skipped (merging it again would count its fetches and links twice)",
				"segment", s.uri)
			skipped = append(skipped, s.uri)
			continue
		}
		if !st.Has(segment.DirFetch) {
			return nil, fmt.Errorf("updatedb: segment %s has no published %s (was it fetched?)", s.uri, segment.DirFetch)
		}
		in := segmentInput{Fetch: storage.Join(s.uri, segment.DirFetch)}
		if st.Has(segment.DirCrawlParse) {
			in.Parse = storage.Join(s.uri, segment.DirCrawlParse)
		} else {
			log.Info("segment not parsed: merging its fetch status only", "segment", s.uri)
		}
		segs = append(segs, s)
		inputs = append(inputs, in)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("updatedb: %w: %s (merging again would count their fetches and links twice; --remerge does it anyway)",
			ErrAlreadyMerged, strings.Join(skipped, ", "))
	}
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	newName := path.Base(crawldb.NewTempDir(cp.dbPath))
	c := newConf()
	c.set(confCurrent, storage.Join(cp.dbURI, crawldb.CurrentName))
	c.setJSON(confSegments, inputs)
	c.set(confOut, storage.Join(cp.dbURI, newName))
	c.setInt(confNumReduce, int64(parts))
	c.setBool(confAdditions, !o.NoAdditions)
	c.setInt(confRetryMax, int64(o.RetryMax))
	c.setInt(confMaxInlinks, int64(o.MaxInlinks))
	c.setBool(confPurgeGone, o.PurgeGone)
	c.setJSON(confFilters, spec)
	c.setTime(confNow, o.Now)
	c.setSchedule(o.Schedule)
	var plan *dynamicPlan
	if o.Schedule.resolved().Name == "dynamic" {
		if plan, err = planDynamic(ctx, env, cp, o.Now); err != nil {
			return nil, fmt.Errorf("updatedb: dynamic schedule: %w", err)
		}
		if plan.apply != "" {
			c.set(confClusters, plan.apply)
			c.setInt(confClusterMaxChanges, int64(plan.maxChanges))
			log.Info("applying a cluster result", "result", plan.apply)
		}
		c.setJSON(confClusterPeriods, plan.record.Periods)
		log.Info("cluster periods", "clusters", len(plan.record.Periods), "rows_scanned", plan.scanned,
			"duration", plan.took.Round(time.Millisecond))
	}
	if c.err != nil {
		return nil, fmt.Errorf("updatedb: %w", c.err)
	}
	job, err := newUpdateDBJob(c.m)
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	jr, err := env.execute(ctx, job.Name, job.Conf, job)
	if err != nil {
		_ = cp.fs.RemoveAll(path.Join(cp.dbPath, newName))
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	// Record the merged segments inside the new version before installing
	// it, so the install itself records them (see recoverDB).
	merged := mergedSegments{MergeRecord: segment.MergeRecord{Time: time.Now().UTC(), CrawlDB: cp.dbURI}}
	for _, s := range segs {
		merged.Segments = append(merged.Segments, s.uri)
	}
	list, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	if err := storage.WriteFileAtomic(cp.fs, path.Join(cp.dbPath, newName, mergedSegmentsFile), list); err != nil {
		_ = cp.fs.RemoveAll(path.Join(cp.dbPath, newName))
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	if err := writeClustersRecord(cp, newName, plan); err != nil {
		_ = cp.fs.RemoveAll(path.Join(cp.dbPath, newName))
		return nil, fmt.Errorf("updatedb: %w", err)
	}
	killpoint.Reached(jobUpdateDB, "before-install")
	if err := crawldb.Install(cp.fs, cp.dbPath, path.Join(cp.dbPath, newName), env.KeepOldDB); err != nil {
		return nil, fmt.Errorf("updatedb: install the new CrawlDB: %w", err)
	}
	killpoint.Reached(jobUpdateDB, "installed")
	for i, s := range segs {
		if i > 0 {
			killpoint.Reached(jobUpdateDB, "marked-1")
		}
		if err := segment.MarkMerged(s.fs, s.path, merged.MergeRecord); err != nil {
			return nil, fmt.Errorf("updatedb: the CrawlDB is updated, but marking segment %s as merged failed (the next job holding the CrawlDB lock marks it): %w", s.uri, err)
		}
	}

	res = &UpdateResult{CrawlDB: storage.Join(cp.dbURI, crawldb.CurrentName), Segments: merged.Segments, Skipped: skipped,
		Counters: jr.Counters, StatusCounts: map[string]int64{}}
	for name, v := range jr.Counters.Snapshot()[jobUpdateDB] {
		if s, ok := strings.CutPrefix(name, ctrStatusPrefix); ok {
			res.StatusCounts[s] = v
			res.Rows += v
		}
	}
	if plan != nil {
		res.Clusters = &plan.record
		res.ClustersApplied = plan.apply
		res.PeriodsScan, res.PeriodsRows = plan.took, plan.scanned
	}
	res.Fetched = jr.Counters.Get(jobUpdateDB, ctrFetched)
	res.Added = jr.Counters.Get(jobUpdateDB, ctrNewFromLinks)
	res.Duration = time.Since(start)
	log.Info("updatedb done", "segments", len(segs), "rows", res.Rows, "fetched", res.Fetched, "added", res.Added,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// newUpdateDBJob builds the updatedb engine job from its Conf.
func newUpdateDBJob(m map[string]string) (*mapreduce.Job[dbValue, crawldb.Datum], error) {
	c := &conf{m: m}
	current := c.str(confCurrent)
	var segs []segmentInput
	c.json(confSegments, &segs)
	out := c.str(confOut)
	parts := int(c.integer(confNumReduce))
	now := c.time(confNow)
	sched, cfg := c.schedule()
	clusters := c.str(confClusters)
	if sched != nil && sched.Name() == "dynamic" {
		var periods crawldb.ClusterPeriods
		c.json(confClusterPeriods, &periods)
		if c.err == nil {
			dyn, err := crawldb.NewDynamicSchedule(cfg, periods)
			if err != nil {
				c.fail(confClusterPeriods, err)
			}
			sched = dyn
		}
	}
	merger := &dbMerger{
		sched:       sched,
		now:         now,
		retryMax:    int32(c.integer(confRetryMax)),
		maxInterval: intervalSeconds(cfg.MaxInterval),
		additions:   c.boolean(confAdditions),
		maxInlinks:  int(c.integer(confMaxInlinks)),
	}
	if clusters != "" {
		merger.applyClusters = true
		merger.clusterMaxChanges = int(c.integer(confClusterMaxChanges))
	}
	purgeGone := c.boolean(confPurgeGone)
	filters := c.filters()
	// keep applies the filters to a record's URL.
	keep := func(t *mapreduce.Task, url string) bool {
		if filters == nil {
			return true
		}
		ok, reason := filters.Filter(url)
		if !ok {
			t.Count("filtered_"+reason, 1)
		}
		return ok
	}
	if c.err != nil {
		return nil, c.err
	}
	if current == "" || out == "" || len(segs) == 0 {
		return nil, errors.New("updatedb job: conf lacks the CrawlDB, the segments or the output")
	}
	inputs := []mapreduce.Input[dbValue]{
		mapreduce.From(current, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[dbValue]) error {
			if purgeGone && d.Status == crawldb.StatusDBGone {
				t.Count(ctrPurgedGone, 1)
				return nil
			}
			if !keep(t, d.URL) {
				return nil
			}
			emit(d.URL, dbValue{Kind: kindOld, Old: &d})
			return nil
		}, mapreduce.Optional(), mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
	}
	for _, s := range segs {
		inputs = append(inputs, mapreduce.From(s.Fetch, func(t *mapreduce.Task, f segment.Fetch, emit mapreduce.Emit[dbValue]) error {
			switch f.Status {
			case crawldb.StatusFetchSuccess, crawldb.StatusFetchRetry, crawldb.StatusFetchGone,
				crawldb.StatusFetchRedirTemp, crawldb.StatusFetchRedirPerm, crawldb.StatusFetchNotModified,
				crawldb.StatusFetchRobotsDenied:
			case crawldb.StatusFetchSkipped, crawldb.StatusFetchRefused:
				// Left for a later round, or refused by trawl's own
				// policy: no verdict on the page. Its row stays as it
				// was, so it is due again.
				t.Count(ctrKeptPrefix+f.Status.String(), 1)
				return nil
			default:
				return fmt.Errorf("%s: %s has status %v, not a fetch status", s.Fetch, f.URL, f.Status)
			}
			if !keep(t, f.URL) {
				return nil
			}
			emit(f.URL, dbValue{Kind: kindFetch, Fetch: &f})
			if (f.Status == crawldb.StatusFetchRedirTemp || f.Status == crawldb.StatusFetchRedirPerm) &&
				f.RedirectURL != "" && f.RedirectURL != f.URL && keep(t, f.RedirectURL) {
				t.Count(ctrRedirectLinks, 1)
				emit(f.RedirectURL, dbValue{Kind: kindParse, Parse: &segment.ParseUpdate{
					URL: f.RedirectURL, Status: crawldb.StatusLinked, FromURL: f.URL, FetchTime: f.FetchTime}})
			}
			return nil
		}, mapreduce.RequireSuccess()))
		if s.Parse != "" {
			inputs = append(inputs, mapreduce.From(s.Parse, func(t *mapreduce.Task, p segment.ParseUpdate, emit mapreduce.Emit[dbValue]) error {
				if !keep(t, p.URL) {
					return nil
				}
				p.Anchor = "" // not used here: keep the shuffle small
				emit(p.URL, dbValue{Kind: kindParse, Parse: &p})
				return nil
			}, mapreduce.RequireSuccess()))
		}
	}
	if clusters != "" {
		inputs = append(inputs,
			mapreduce.From(storage.Join(clusters, dbscan.DirAssignment), func(t *mapreduce.Task, a dbscan.Assignment, emit mapreduce.Emit[dbValue]) error {
				emit(a.Key, dbValue{Kind: kindCluster, Cluster: &clusterValue{Label: a.Label}})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(storage.Join(clusters, dbscan.DirSamples), func(t *mapreduce.Task, s dbscan.Sample, emit mapreduce.Emit[dbValue]) error {
				emit(s.Key, dbValue{Kind: kindCluster, Cluster: &clusterValue{Label: s.Label, Sample: true}})
				return nil
			}, mapreduce.RequireSuccess()))
	}
	states := sync.Pool{New: func() any { return new(mergeState) }}
	return &mapreduce.Job[dbValue, crawldb.Datum]{
		Name:   jobUpdateDB,
		Conf:   m,
		Inputs: inputs,
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[dbValue], out func(crawldb.Datum)) error {
			st := states.Get().(*mergeState)
			defer states.Put(st)
			d, ok, err := merger.merge(url, values, st, t.Count)
			if err != nil {
				return err
			}
			if ok {
				out(d)
			}
			return nil
		},
		NumReduce: parts,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](out)},
	}, nil
}
