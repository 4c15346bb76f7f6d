package jobs

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// ErrNothingDue is returned by Generate when no URL was selected; no
// segment is left behind. The CLI exits with status 1 on it, as Nutch's
// generate does.
var ErrNothingDue = errors.New("generate: no URLs due for fetching")

// Count modes of GenerateOptions.CountMode (generate.count.mode).
const (
	CountHost   = "host"
	CountDomain = "domain"
)

// DefaultGenerateDelay is how long a generated but not yet merged segment
// holds its URLs back (Nutch's crawl.gen.delay, 7 days).
const DefaultGenerateDelay = 7 * 24 * time.Hour

// GenerateOptions configures Generate.
type GenerateOptions struct {
	// TopN is the most URLs in the fetch list, best scores first; 0 means
	// no limit.
	TopN int64
	// MaxPerHost is the most URLs per host (or domain, see CountMode);
	// 0 or -1 means no limit (Nutch's generate.max.count).
	MaxPerHost int
	// CountMode is CountHost (default) or CountDomain: what MaxPerHost
	// counts (Nutch's generate.count.mode).
	CountMode string
	// PartitionMode is PartitionHost (default), PartitionDomain or
	// PartitionIP: what the fetch list is partitioned by (Nutch's
	// partition.url.mode); see Generate.
	PartitionMode string
	// DNSServers and DNS configure the resolver that PartitionIP looks
	// the hosts up with, as FetchOptions' fields of the same names do for
	// the fetch (DNSServers, if given, are DNS's Servers; Now and Log are
	// not used). Other partition modes do not resolve.
	DNSServers []string
	DNS        resolver.Config
	// NumFetchers is the number of fetch-list parts (one per fetcher
	// task); 0 means 1.
	NumFetchers int
	// Now is the time the due check compares with (Nutch's
	// generate.curTime; the CLI's "+Nd" adds days); zero means time.Now().
	Now time.Time
	// Delay is how long a pending segment holds its URLs back; 0 means
	// DefaultGenerateDelay.
	Delay time.Duration
	// Schedule decides whether a URL is due (ShouldFetch).
	Schedule ScheduleOptions
	// Filters are applied to every CrawlDB URL (Nutch's generate.filter);
	// the zero value filters nothing.
	Filters URLFilterOptions
	// MinScore, if set, skips URLs with a lower score
	// (generate.min.score).
	MinScore *float32
	// MaxInterval, if positive, skips URLs whose fetch interval is longer
	// (Nutch's generate.min.interval, despite its name).
	MaxInterval time.Duration
	// RestrictStatus, if set, selects only URLs with this status
	// (generate.restrict.status).
	RestrictStatus crawldb.Status
	// SelectReducers is the number of reduce tasks of the selection job
	// when TopN is set (it is NumFetchers otherwise); 0 means the larger
	// of NumFetchers and the runner's parallelism.
	SelectReducers int
}

// GenerateResult reports a Generate run.
type GenerateResult struct {
	// Segment is the new segment's URI and Name its base name.
	Segment string
	Name    string
	// FetchList is the segment's crawl_generate directory URI.
	FetchList string
	// Selected counts the URLs in the fetch list; Hosts the hosts they
	// belong to (the domains when both CountMode and PartitionMode are
	// domain); Parts the fetch-list parts.
	Selected int64
	Hosts    int64
	Parts    int
	// Unresolved counts the hosts that PartitionIP found no address for
	// (partitioned by their name instead).
	Unresolved int64
	// Due counts the CrawlDB URLs that were due (before the per-host
	// limit, pending lists and topN); Pending those held back by a
	// pending segment; OverHostLimit those beyond MaxPerHost; OverTopN
	// those beyond TopN.
	Due           int64
	Pending       int64
	OverHostLimit int64
	OverTopN      int64
	// PendingSegments are the segments whose fetch lists were excluded.
	PendingSegments []string
	// Counters are the engine's and the jobs' counters (groups
	// "generate-select" and "generate-topn").
	Counters *mapreduce.Counters
	// Duration is the wall time of the whole generation.
	Duration time.Duration
}

// Counter names of generate's jobs.
const (
	ctrDue          = "due"
	ctrNotDue       = "not_due"
	ctrGenLocked    = "generate_time_locked"
	ctrBelowScore   = "below_min_score"
	ctrOverInterval = "over_max_interval"
	ctrOtherStatus  = "status_not_selected"
	ctrBadGenURL    = "malformed_url"
	ctrDuplicateURL = "duplicate_url"
	ctrPendingURLs  = "pending_urls"
	ctrPendingHeld  = "held_by_pending_segment"
	ctrOverHost     = "over_max_per_host"
	ctrOverTopN     = "over_topn"
	ctrSelected     = "selected"
	ctrHosts        = "hosts"
)

const (
	jobGenerateSelect = JobGenerateSelect
	jobGenerateTopN   = JobGenerateTopN
	selectDir         = "_select"
	ranksDir          = "_ranks"
)

// Generate selects the URLs due for fetching into a new segment's fetch
// list (Nutch's Generator), and returns its path; ErrNothingDue if none.
//
// A CrawlDB URL is a candidate when it passes the filters, has
// RestrictStatus (if set), is due by the schedule's ShouldFetch at Now (the
// status does not matter: gone, redirected or duplicate pages come back
// when their schedule says so, as in Nutch), is not in a pending fetch
// list, has at least MinScore and at most MaxInterval. Candidates are
// ranked by score (Nutch's OPIC generatorSortValue), or by the schedule's
// GenerateSortValue if it is a crawldb.Ranker that ranks (the dynamic
// schedule: score times the probability that the page changed since its
// last fetch), ties by URL; each host
// (or domain) keeps its best MaxPerHost, and of those the best TopN overall
// are selected. The fetch list, segments/<name>/crawl_generate, holds their
// CrawlDB rows with GenerateTime set to the segment's time, in NumFetchers
// part files, one per fetch task, partitioned by PartitionMode (Nutch's
// partition.url.mode): part = FNV-1a(token) mod NumFetchers, the token
// being the host (PartitionHost, the default), its registered domain
// (PartitionDomain), or its first IP address (PartitionIP: the lowest of
// its addresses, IPv4 first, from the cached asynchronous resolver of
// package resolver configured by DNSServers and DNS, as the fetch's is).
// PartitionIP keeps the hosts of one address in one fetch task, which
// politeness per IP address (FetchOptions.QueueMode "ip") needs; a host
// that does not resolve is partitioned by its name, as in Nutch, and
// counted (Unresolved, counter partition_unresolved); IP literals need no
// lookup. Each task of the IP partitioning resolves each of its distinct
// hosts once, prefetching them as they come. Within a part each host's
// URLs are together, best first (with CountMode and PartitionMode both
// domain, each domain's URLs). The count mode and the partition mode are
// independent, as in Nutch; the count stays exact whatever the partition
// mode (see below).
// Segment names are the UTC wall clock as yyyyMMddHHmmss, the next second
// if that name is taken.
//
// The generate lock, done trawl's way: Nutch writes the generate time into
// every selected CrawlDB row (generate.update.crawldb) so that the next
// generate skips them until updatedb; trawl does not rewrite the CrawlDB.
// Instead a segment is pending until updatedb has merged it (UpdatedMarker
// in the segment) or until Delay (crawl.gen.delay) has passed since it was
// generated; Generate reads the fetch lists of the pending segments as a
// second input and excludes their URLs. (A CrawlDB row whose GenerateTime
// is within Delay is skipped too, as in Nutch.)
//
// Generate holds the CrawlDB lock for the whole run, as Nutch does: the
// CrawlDB must not be replaced while it is read, and two generates must see
// each other's segments.
//
// Memory is bounded. Without TopN, when a URL's part follows from its
// count key (host or domain partitioning, except host partitioning with a
// domain count), one engine job does the work: generate-select keys each
// candidate by host and rank (see candidateKey),
// so that the engine's sort ranks them; a reducer walks one host at a
// time, holding only that host's pending URLs, takes its first MaxPerHost
// from the key alone (a dropped candidate is never decoded), and its output
// is the fetch list. Otherwise generate-select partitions by count key and
// generate-topn partitions its output into the fetch list (looking the
// hosts up, by IP). With TopN the selection runs with more reducers
// (SelectReducers), each dropping what cannot be in the TopN because it
// already selected TopN better ones (a heap of TopN score keys), and writes
// the scores of what it keeps beside the candidates; the TopN cut-off is
// found from that score column (a heap of TopN score keys, and only if the
// URLs tied at the cut-off do not all fit, the smallest of them), and
// generate-topn keeps the candidates within it and partitions them into
// the fetch list.
func Generate(ctx context.Context, env Env, o GenerateOptions) (res *GenerateResult, err error) {
	start := time.Now()
	if o.CountMode == "" {
		o.CountMode = CountHost
	}
	if o.CountMode != CountHost && o.CountMode != CountDomain {
		return nil, fmt.Errorf("generate: count mode %q is neither %q nor %q", o.CountMode, CountHost, CountDomain)
	}
	if o.PartitionMode == "" {
		o.PartitionMode = PartitionHost
	}
	if err := validPartitionMode(o.PartitionMode); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	part := partitioning{mode: o.PartitionMode, countDomain: o.CountMode == CountDomain}
	if o.PartitionMode == PartitionIP {
		if err := o.resolverConfig().Validate(); err != nil {
			return nil, fmt.Errorf("generate: DNS settings of the IP partitioning: %w", err)
		}
	}
	if o.NumFetchers <= 0 {
		o.NumFetchers = 1
	}
	if o.NumFetchers > mapreduce.MaxReduce {
		return nil, fmt.Errorf("generate: %d fetch-list parts is more than %d", o.NumFetchers, mapreduce.MaxReduce)
	}
	if o.TopN < 0 {
		return nil, fmt.Errorf("generate: negative topN %d", o.TopN)
	}
	if o.MaxPerHost < 0 {
		o.MaxPerHost = 0
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Delay <= 0 {
		o.Delay = DefaultGenerateDelay
	}
	log := env.log().With("job", "generate")
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	spec, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if _, err := crawldb.NewSchedule(o.Schedule.resolved().Name, o.Schedule.resolved().Config); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}

	lock, err := env.lock(cp, "generate")
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	if err := recoverDB(env, cp, log); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	currentPath := path.Join(cp.dbPath, crawldb.CurrentName)
	if n, err := countParts(cp.fs, currentPath); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	} else if n == 0 {
		log.Info("the CrawlDB is empty", "crawldb", cp.dbURI)
		return nil, ErrNothingDue
	}

	// A segment is named by the wall clock when it was generated, so its
	// hold ends by the wall clock too: a simulated Now (--now) never
	// lifts it, or a page would be generated (and fetched) twice.
	pending, err := pendingSegments(cp, time.Now(), o.Delay, log)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	name, err := newSegmentName(cp, time.Now())
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	genTime, _ := time.Parse(segmentNameLayout, name)
	segURI := storage.Join(cp.segURI, name)
	segPath := path.Join(cp.segPath, name)
	res = &GenerateResult{Segment: segURI, Name: name, Parts: o.NumFetchers, Counters: &mapreduce.Counters{},
		FetchList: storage.Join(segURI, segment.DirGenerate)}
	for _, p := range pending {
		res.PendingSegments = append(res.PendingSegments, storage.Join(cp.segURI, p))
	}
	done := false
	defer func() {
		if !done {
			if rerr := cp.fs.RemoveAll(segPath); rerr != nil {
				log.Warn("removing the unfinished segment failed", "segment", segURI, "err", rerr)
			}
		}
	}()

	// Job 1: select the due candidates, apply the generate lock and the
	// per-host limit, partition by host. Without topN, and if the parts
	// follow from the count keys, its output is the fetch list; else it
	// goes to _select, in as many parts as can run at once, and with topN
	// the candidates' scores to _ranks for the cut-off; job 2 then keeps
	// the topN and partitions them into the fetch list.
	selectOut, ranksOut := res.FetchList, ""
	reduces := o.NumFetchers
	if o.TopN > 0 || !part.direct() {
		selectOut = storage.Join(segURI, selectDir)
		reduces = max(o.NumFetchers, o.SelectReducers)
		if o.SelectReducers <= 0 {
			reduces = max(o.NumFetchers, env.parallelism())
		}
	}
	if o.TopN > 0 {
		ranksOut = storage.Join(segURI, ranksDir)
	}
	c := newConf()
	c.set(confCurrent, storage.Join(cp.dbURI, crawldb.CurrentName))
	c.setJSON(confPending, segmentFetchLists(cp.segURI, pending))
	c.set(confOut, selectOut)
	c.set(confRanks, ranksOut)
	c.setInt(confNumReduce, int64(reduces))
	c.setInt(confTopN, o.TopN)
	c.setInt(confMaxPerHost, int64(o.MaxPerHost))
	c.set(confCountMode, o.CountMode)
	c.set(confPartMode, o.PartitionMode)
	c.setTime(confNow, o.Now)
	c.setTime(confGenTime, genTime)
	c.setDuration(confDelay, o.Delay)
	c.setSchedule(o.Schedule)
	c.setJSON(confFilters, spec)
	if o.MinScore != nil {
		c.setFloat(confMinScore, float64(*o.MinScore))
	}
	c.setDuration(confMaxInterval, o.MaxInterval)
	c.setInt(confRestrict, int64(o.RestrictStatus))
	if c.err != nil {
		return nil, fmt.Errorf("generate: %w", c.err)
	}
	job, err := newGenerateSelectJob(c.m)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	jr, err := env.execute(ctx, job.Name, job.Conf, job)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	res.Counters.Merge(jr.Counters)
	g := func(name string) int64 { return res.Counters.Get(jobGenerateSelect, name) }
	res.Due, res.Pending, res.OverHostLimit = g(ctrDue), g(ctrPendingHeld), g(ctrOverHost)
	res.OverTopN = g(ctrOverTopN)
	selected, hosts := g(ctrSelected), g(ctrHosts)

	if selected > 0 && selectOut != res.FetchList {
		selectPath := path.Join(segPath, selectDir)
		if part.direct() && selected <= o.TopN && reduces == o.NumFetchers {
			if err := cp.fs.Rename(selectPath, path.Join(segPath, segment.DirGenerate)); err != nil {
				return nil, fmt.Errorf("generate: publish the fetch list: %w", err)
			}
		} else {
			cut := cutoff{key: math.MaxUint32, all: true} // everything
			if o.TopN > 0 && selected > o.TopN {
				// As the select job ranked: its schedule and now, from c.
				sched, _ := c.schedule()
				ranker, _ := sched.(crawldb.Ranker)
				now := c.time(confNow)
				rank := func(d *crawldb.Datum) float32 { return rankOf(ranker, d, now) }
				if cut, err = topNCut(cp.fs, path.Join(segPath, ranksDir), selectPath, o.TopN, rank); err != nil {
					return nil, fmt.Errorf("generate: topN: %w", err)
				}
			}
			c2 := newConf()
			c2.set(confIn, selectOut)
			c2.set(confOut, res.FetchList)
			c2.setInt(confNumReduce, int64(o.NumFetchers))
			c2.set(confCountMode, o.CountMode)
			c2.set(confPartMode, o.PartitionMode)
			c2.setInt(confCutKey, int64(cut.key))
			c2.set(confCutURL, cut.url)
			c2.setBool(confCutAll, cut.all)
			c2.setTime(confNow, o.Now)
			c2.setSchedule(o.Schedule)
			var rows int64
			if o.PartitionMode == PartitionIP {
				// Each task reads a whole part: together, every row
				// (checked below).
				_, rows, err = fetchListParts(cp.fs, selectPath, selectOut)
				if err != nil {
					return nil, fmt.Errorf("generate: %w", err)
				}
				c2.setJSON(confPartResolver, o.resolverConfig())
			}
			if c2.err != nil {
				return nil, fmt.Errorf("generate: %w", c2.err)
			}
			job2, err := newGenerateTopNJob(c2.m)
			if err != nil {
				return nil, fmt.Errorf("generate: %w", err)
			}
			jr2, err := env.execute(ctx, job2.Name, job2.Conf, job2)
			if err != nil {
				return nil, fmt.Errorf("generate: %w", err)
			}
			res.Counters.Merge(jr2.Counters)
			if got := res.Counters.Get(jobGenerateTopN, ctrPartRows); o.PartitionMode == PartitionIP && got != rows {
				return nil, fmt.Errorf("generate: the IP partitioning read %d of the %d candidates in %s (did they change during the job?)",
					got, rows, selectOut)
			}
			res.OverTopN += res.Counters.Get(jobGenerateTopN, ctrOverTopN)
			res.Unresolved = res.Counters.Get(jobGenerateTopN, ctrPartUnresolved)
			selected = res.Counters.Get(jobGenerateTopN, ctrSelected)
			hosts = res.Counters.Get(jobGenerateTopN, ctrHosts)
		}
		for _, d := range []string{selectDir, ranksDir} {
			if err := cp.fs.RemoveAll(path.Join(segPath, d)); err != nil {
				log.Warn("removing the candidates failed", "dir", storage.Join(segURI, d), "err", err)
			}
		}
	}
	res.Selected, res.Hosts = selected, hosts
	res.Duration = time.Since(start)
	if selected == 0 {
		log.Info("nothing to fetch", "due", res.Due, "held_by_pending", res.Pending, "pending_segments", len(pending))
		return nil, ErrNothingDue
	}
	done = true
	log.Info("generate done", "segment", segURI, "selected", selected, "due", res.Due,
		"held_by_pending", res.Pending, "over_max_per_host", res.OverHostLimit, "over_topn", res.OverTopN,
		"parts", o.NumFetchers, "partition_mode", o.PartitionMode, "unresolved_hosts", res.Unresolved,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// resolverConfig returns the resolver configuration of the IP
// partitioning: DNS with DNSServers, if given, as its servers.
func (o *GenerateOptions) resolverConfig() resolver.Config {
	c := o.DNS
	if len(o.DNSServers) > 0 {
		c.Servers = o.DNSServers
	}
	c.Now, c.Log = nil, nil
	return c
}

// segmentNameLayout is the time layout of segment names.
const segmentNameLayout = segment.NameLayout

// newSegmentName is the UTC time t as a segment name, one second later
// while that name is taken.
func newSegmentName(cp crawlPaths, t time.Time) (string, error) {
	t = t.UTC().Truncate(time.Second)
	for range 3600 {
		name := t.Format(segmentNameLayout)
		_, err := cp.fs.Stat(path.Join(cp.segPath, name))
		if isNotExist(err) {
			return name, nil
		}
		if err != nil {
			return "", fmt.Errorf("segment name: %w", err)
		}
		t = t.Add(time.Second)
	}
	return "", errors.New("segment name: an hour of names from now is taken")
}

// pendingSegments lists the segments whose fetch lists still hold their
// URLs: a published crawl_generate, no UpdatedMarker, generated less than
// delay before now (the wall clock: segment names are wall-clock times). It also removes what a killed generate left behind: a
// segment directory holding only _-prefixed entries, and a stale _select.
func pendingSegments(cp crawlPaths, now time.Time, delay time.Duration, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) ([]string, error) {
	infos, err := cp.fs.ReadDir(cp.segPath)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir() {
			continue
		}
		t, err := time.Parse(segmentNameLayout, fi.Name())
		if err != nil {
			continue // not a segment
		}
		dir := path.Join(cp.segPath, fi.Name())
		entries, err := cp.fs.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("list segment %s: %w", fi.Name(), err)
		}
		leftovers, updated := true, false
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "_") {
				leftovers = false
			}
			updated = updated || e.Name() == segment.MergedMarker
		}
		if leftovers {
			log.Warn("removing a segment left unfinished by a killed generate", "segment", fi.Name())
			if err := cp.fs.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("remove unfinished segment %s: %w", fi.Name(), err)
			}
			continue
		}
		for _, stale := range []string{selectDir, ranksDir} {
			if ok, _ := storage.Exists(cp.fs, path.Join(dir, stale)); ok {
				if err := cp.fs.RemoveAll(path.Join(dir, stale)); err != nil {
					return nil, fmt.Errorf("remove stale %s in segment %s: %w", stale, fi.Name(), err)
				}
			}
		}
		if updated {
			continue
		}
		published, err := storage.Exists(cp.fs, path.Join(dir, segment.DirGenerate, segment.SuccessFile))
		if err != nil {
			return nil, err
		}
		if !published {
			continue
		}
		if !t.Add(delay).After(now) {
			log.Info("a segment not merged by updatedb no longer holds its URLs back", "segment", fi.Name(), "delay", delay)
			continue
		}
		out = append(out, fi.Name())
	}
	return out, nil
}

func segmentFetchLists(segURI string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, storage.Join(segURI, n, segment.DirGenerate))
	}
	return out
}

// Conf keys of generate's jobs.
const (
	confPending     = "generate.pending"
	confTopN        = "generate.topN"
	confMaxPerHost  = "generate.maxPerHost"
	confCountMode   = "generate.countMode"
	confGenTime     = "generate.time"
	confDelay       = "generate.delay"
	confMinScore    = "generate.minScore"
	confMaxInterval = "generate.maxInterval"
	confRestrict    = "generate.restrictStatus"
	confIn          = "in"
	confCutKey      = "generate.cut.key"
	confCutURL      = "generate.cut.url"
	confCutAll      = "generate.cut.all"
	confRanks       = "generate.ranks"
)

// urlHost is the projection of a fetch-list row that the pending input
// reads.
type urlHost struct {
	URL  string `parquet:"url"`
	Host string `parquet:"host,dict"`
}

// countKey is the host, or the registered domain in domain mode, of a URL
// ("" if it has none).
func countKey(url, host string, byDomain bool) string {
	if host == "" {
		host = urlutil.Host(url)
	}
	if host == "" {
		return ""
	}
	if byDomain {
		return urlutil.DomainOfHost(host)
	}
	return host
}

// selState is one reduce task's state across the keys of a host: Nutch's
// SelectorReducer likewise counts per host across reduce calls, which the
// engine makes in key order, one task at a time.
type selState struct {
	host  string
	taken int64
	held  map[string]struct{}
	// best holds the score keys of the task's best topN outputs so far
	// (worst on top): a candidate worse than all of them cannot be in the
	// topN of all tasks.
	best keyHeap
}

// newGenerateSelectJob builds generate's selection job from its Conf.
func newGenerateSelectJob(m map[string]string) (*mapreduce.Job[crawldb.Datum, crawldb.Datum], error) {
	c := &conf{m: m}
	current := c.str(confCurrent)
	var pending []string
	c.json(confPending, &pending)
	out := c.str(confOut)
	ranks := c.str(confRanks)
	parts := int(c.integer(confNumReduce))
	topN := c.integer(confTopN)
	maxPerHost := c.integer(confMaxPerHost)
	part, err := confPartitioning(c)
	if err != nil {
		return nil, fmt.Errorf("generate-select job: %w", err)
	}
	now := c.time(confNow)
	genTime := c.time(confGenTime)
	delay := c.duration(confDelay)
	sched, _ := c.schedule()
	ranker, _ := sched.(crawldb.Ranker)
	filters := c.filters()
	_, hasMin := m[confMinScore]
	minScore := float32(c.float(confMinScore))
	maxInterval := intervalSeconds(c.duration(confMaxInterval))
	restrict := crawldb.Status(c.integer(confRestrict))
	if c.err != nil {
		return nil, c.err
	}
	if current == "" || out == "" {
		return nil, errors.New("generate-select job: conf lacks the CrawlDB or the output")
	}
	// limit is the most URLs one host can contribute.
	limit := int64(0)
	if maxPerHost > 0 {
		limit = maxPerHost
	}
	if topN > 0 && (limit == 0 || topN < limit) {
		limit = topN
	}

	inputs := []mapreduce.Input[crawldb.Datum]{
		mapreduce.From(current, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
			if strings.IndexByte(d.URL, 0) >= 0 {
				t.Count(ctrBadGenURL, 1)
				return nil
			}
			if filters != nil {
				if ok, reason := filters.Filter(d.URL); !ok {
					t.Count("filtered_"+reason, 1)
					return nil
				}
			}
			if !sched.ShouldFetch(&d, now) {
				t.Count(ctrNotDue, 1)
				return nil
			}
			if !d.GenerateTime.IsZero() && d.GenerateTime.Add(delay).After(now) {
				t.Count(ctrGenLocked, 1)
				return nil
			}
			if restrict != 0 && d.Status != restrict {
				t.Count(ctrOtherStatus, 1)
				return nil
			}
			if hasMin && d.Score < minScore {
				t.Count(ctrBelowScore, 1)
				return nil
			}
			if maxInterval > 0 && d.FetchInterval > maxInterval {
				t.Count(ctrOverInterval, 1)
				return nil
			}
			group, ok := part.selectGroup(d.URL, d.Host)
			if !ok {
				t.Count(ctrBadGenURL, 1)
				return nil
			}
			t.Count(ctrDue, 1)
			emit(candidateKey(group, rankOf(ranker, &d, now), d.URL), d)
			return nil
		}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
	}
	for _, p := range pending {
		inputs = append(inputs, mapreduce.From(p, func(t *mapreduce.Task, r urlHost, emit mapreduce.Emit[crawldb.Datum]) error {
			group, ok := part.selectGroup(r.URL, r.Host)
			if !ok || strings.IndexByte(r.URL, 0) >= 0 {
				return nil
			}
			t.Count(ctrPendingURLs, 1)
			emit(pendingKey(group, r.URL), crawldb.Datum{})
			return nil
		}, mapreduce.RequireSuccess()))
	}
	reduce := func(t *mapreduce.Task, key string, values iter.Seq[crawldb.Datum], out func(crawldb.Datum)) error {
		host, kind, rank, url, err := parseSelectKey(key)
		if err != nil {
			return err
		}
		// The partition's state (Task.State starts nil at each
		// partition).
		st, _ := t.State.(*selState)
		if st == nil {
			st = &selState{held: map[string]struct{}{}}
			t.State = st
		}
		if st.host != host {
			st.host, st.taken = host, 0
			clear(st.held)
		}
		if kind == selPending {
			st.held[url] = struct{}{}
			return nil
		}
		// Decide from the key alone: the engine decodes a value only when
		// it is read, so dropped candidates cost no decoding.
		switch {
		case hasKey(st.held, url):
			t.Count(ctrPendingHeld, 1)
			return nil
		case limit > 0 && st.taken >= limit:
			if maxPerHost > 0 && st.taken >= maxPerHost {
				t.Count(ctrOverHost, 1)
			} else {
				t.Count(ctrOverTopN, 1)
			}
			return nil
		case topN > 0 && !st.best.admit(rank, topN):
			// This task already selected topN better candidates.
			t.Count(ctrOverTopN, 1)
			return nil
		}
		first := true
		for d := range values {
			if !first {
				t.Count(ctrDuplicateURL, 1) // the same URL twice in the CrawlDB
				continue
			}
			first = false
			d.GenerateTime = genTime
			out(d)
			if st.taken == 0 {
				t.Count(ctrHosts, 1)
			}
			st.taken++
			t.Count(ctrSelected, 1)
		}
		return nil
	}
	outputs := []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](out)}
	if ranks != "" {
		outputs = append(outputs, mapreduce.WriteRouted(ranks, func(d crawldb.Datum) (scoreOnly, bool) {
			return scoreOnly{Score: rankOf(ranker, &d, now)}, true
		}))
	}
	return &mapreduce.Job[crawldb.Datum, crawldb.Datum]{
		Name:      jobGenerateSelect,
		Conf:      m,
		Inputs:    inputs,
		Reduce:    reduce,
		Partition: tokenPartitioner(),
		NumReduce: parts,
		Outputs:   outputs,
	}, nil
}

func hasKey(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

// cutoff is the last (worst) candidate of the topN: a candidate is in the
// topN if its score key is lower, or equal with a URL not after url (all:
// every candidate with an equal key).
type cutoff struct {
	key uint32
	url string
	all bool
}

// in reports whether a candidate is within the cut-off.
func (c cutoff) in(key uint32, url string) bool {
	return key < c.key || (key == c.key && (c.all || url <= c.url))
}

// rankOf is a candidate's rank: the schedule's GenerateSortValue if it
// ranks, else the score. It is a function of the datum's stored fields and
// now, so the select and topN jobs compute the same rank.
func rankOf(r crawldb.Ranker, d *crawldb.Datum, now time.Time) float32 {
	if r != nil {
		if v, ok := r.GenerateSortValue(d, now); ok {
			return v
		}
	}
	return d.Score
}

// scoreOnly is the rank of a selected candidate (the score, or the
// schedule's sort value), written beside the candidates for the topN
// cut-off.
type scoreOnly struct {
	Score float32 `parquet:"score"`
}

// rankRow is the projection of a candidate that rankOf needs (the
// CrawlDB's columns), read only to break ties at the topN cut-off.
type rankRow struct {
	URL           string         `parquet:"url"`
	Status        crawldb.Status `parquet:"status"`
	FetchTime     time.Time      `parquet:"fetch_time,optional,timestamp(millisecond)"`
	FetchInterval int32          `parquet:"fetch_interval"`
	Score         float32        `parquet:"score"`
}

// keyHeap is a max-heap of score keys (the worst kept candidate on top).
type keyHeap []uint32

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(uint32)) }
func (h *keyHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// admit keeps the n best keys offered: it reports false, keeping nothing,
// when k is worse than n kept keys (ties are admitted).
func (h *keyHeap) admit(k uint32, n int64) bool {
	if int64(len(*h)) < n {
		heap.Push(h, k)
		return true
	}
	if k > (*h)[0] {
		return false
	}
	if k < (*h)[0] {
		(*h)[0] = k
		heap.Fix(h, 0)
	}
	return true
}

// urlHeap is a max-heap of URLs.
type urlHeap []string

func (h urlHeap) Len() int           { return len(h) }
func (h urlHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h urlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *urlHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *urlHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// readRows calls f for every row of the part files of dir.
func readRows[T any](fsys storage.FS, dir string, f func(T)) error {
	files, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		return err
	}
	for _, p := range files {
		file, err := fsys.Open(p)
		if err != nil {
			return err
		}
		r, err := parquetio.Open[T](file, p)
		if err != nil {
			return err
		}
		for row, err := range r.All() {
			if err != nil {
				r.Close()
				return err
			}
			f(row)
		}
		if err := r.Close(); err != nil {
			return err
		}
	}
	return nil
}

// topNCut finds the n-th best of the candidates, whose ranks are in
// ranksDir (more than n of them) and rows in candDir: a pass over the
// ranks keeps the n best rank keys (memory: n keys); a second pass counts
// the candidates tied at the n-th key; only if not all of them fit, a pass
// over the candidates (their rank again from rank) keeps the smallest tied
// URLs that fit.
func topNCut(fsys storage.FS, ranksDir, candDir string, n int64, rank func(d *crawldb.Datum) float32) (cutoff, error) {
	h := make(keyHeap, 0, min(n, 1<<20))
	err := readRows(fsys, ranksDir, func(r scoreOnly) { h.admit(scoreKey(r.Score), n) })
	if err != nil {
		return cutoff{}, err
	}
	if int64(len(h)) < n {
		return cutoff{}, fmt.Errorf("%s holds %d candidates, not more than %d", ranksDir, len(h), n)
	}
	cut := cutoff{key: h[0]}
	var better, tied int64
	for _, k := range h {
		if k < cut.key {
			better++
		}
	}
	need := n - better // how many of the tied candidates fit
	if err := readRows(fsys, ranksDir, func(r scoreOnly) {
		if scoreKey(r.Score) == cut.key {
			tied++
		}
	}); err != nil {
		return cutoff{}, err
	}
	if tied <= need {
		cut.all = true
		return cut, nil
	}
	ties := make(urlHeap, 0, min(need, 1<<16))
	err = readRows(fsys, candDir, func(r rankRow) {
		d := crawldb.Datum{URL: r.URL, Status: r.Status, FetchTime: r.FetchTime, FetchInterval: r.FetchInterval, Score: r.Score}
		if scoreKey(rank(&d)) != cut.key {
			return
		}
		if int64(len(ties)) < need {
			heap.Push(&ties, r.URL)
		} else if r.URL < ties[0] {
			ties[0] = r.URL
			heap.Fix(&ties, 0)
		}
	})
	if err != nil {
		return cutoff{}, err
	}
	if len(ties) == 0 {
		return cutoff{}, fmt.Errorf("%s changed while it was read", candDir)
	}
	cut.url = ties[0]
	return cut, nil
}

// newGenerateTopNJob builds generate's second job: it keeps the selected
// candidates within the topN cut-off and partitions them into the fetch
// list by the partition mode (looking the hosts up, by IP), each host's
// URLs together and best first.
func newGenerateTopNJob(m map[string]string) (*mapreduce.Job[crawldb.Datum, crawldb.Datum], error) {
	c := &conf{m: m}
	in, out := c.str(confIn), c.str(confOut)
	parts := int(c.integer(confNumReduce))
	cut := cutoff{key: uint32(c.integer(confCutKey)), url: c.str(confCutURL), all: c.boolean(confCutAll)}
	now := c.time(confNow)
	sched, _ := c.schedule()
	ranker, _ := sched.(crawldb.Ranker)
	part, err := confPartitioning(c)
	if err != nil {
		return nil, fmt.Errorf("generate-topn job: %w", err)
	}
	var ipc ipPartConfig
	if part.mode == PartitionIP {
		c.json(confPartResolver, &ipc.dns)
	}
	if c.err != nil {
		return nil, c.err
	}
	if in == "" || out == "" {
		return nil, errors.New("generate-topn job: conf lacks the input or the output")
	}
	if part.mode == PartitionIP {
		if err := ipc.dns.Validate(); err != nil {
			return nil, fmt.Errorf("generate-topn job: DNS settings: %w", err)
		}
	}
	// keep reports whether a candidate is within the cut-off, and its rank.
	keep := func(t *mapreduce.Task, d *crawldb.Datum) (float32, bool) {
		rank := rankOf(ranker, d, now)
		if !cut.in(scoreKey(rank), d.URL) {
			t.Count(ctrOverTopN, 1)
			return 0, false
		}
		return rank, true
	}
	var input mapreduce.Input[crawldb.Datum]
	var setup func(*mapreduce.Task) error
	var cleanup func(*mapreduce.Task, mapreduce.Emit[crawldb.Datum]) error
	if part.mode == PartitionIP {
		ip := newIPPartitioner(part, ipc, keep)
		input = mapreduce.From(in, ip.mapRow,
			mapreduce.WholeFiles(), mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())
		setup, cleanup = ip.setup, ip.cleanup
	} else {
		input = mapreduce.From(in, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
			rank, ok := keep(t, &d)
			if !ok {
				return nil
			}
			group := part.nameGroup(countKey(d.URL, d.Host, part.countDomain), countKey(d.URL, d.Host, false))
			emit(candidateKey(group, rank, d.URL), d)
			return nil
		}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())
	}
	return &mapreduce.Job[crawldb.Datum, crawldb.Datum]{
		Name:       jobGenerateTopN,
		Conf:       m,
		Inputs:     []mapreduce.Input[crawldb.Datum]{input},
		MapSetup:   setup,
		MapCleanup: cleanup,
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[crawldb.Datum], out func(crawldb.Datum)) error {
			host, _, _, _, err := parseSelectKey(key)
			if err != nil {
				return err
			}
			// The partition's current host (Task.State starts nil at
			// each partition).
			cur, _ := t.State.(*string)
			if cur == nil {
				cur = new(string)
				t.State = cur
			}
			if *cur != host {
				*cur = host
				t.Count(ctrHosts, 1)
			}
			for d := range values {
				t.Count(ctrSelected, 1)
				out(d)
			}
			return nil
		},
		Partition: tokenPartitioner(),
		NumReduce: parts,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](out)},
	}, nil
}
