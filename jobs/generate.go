package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
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

// GenerateOptions configures Generate. The zero value generates one
// fetch list of every due URL, by host, at time.Now(), with the adaptive
// schedule. Validate reports the options Generate rejects.
type GenerateOptions struct {
	// TopN is the most URLs in the fetch list, best scores first
	// (generate.topN); 0 means no limit. A TopN no smaller than the
	// CrawlDB's row count cannot cut anything, and generate runs as
	// without one.
	TopN int64
	// MaxPerHost is the most URLs per host (or domain, see CountMode)
	// (generate.maxPerHost, Nutch's generate.max.count); 0 means no
	// limit.
	MaxPerHost int
	// CountMode is CountHost or CountDomain: what MaxPerHost counts
	// (generate.countMode, Nutch's generate.count.mode); "" means
	// CountHost.
	CountMode string
	// PartitionMode is PartitionHost, PartitionDomain or PartitionIP:
	// what the fetch list is partitioned by (generate.partitionMode,
	// Nutch's partition.url.mode; see Generate); "" means PartitionHost.
	PartitionMode string
	// DNSServers and DNS configure the resolver that PartitionIP looks
	// the hosts up with, as FetchOptions' fields of the same names do for
	// the fetch: DNSServers, if not empty, are DNS's Servers; DNS's Now
	// and Log are not used; the zero values mean the resolver's defaults
	// (the name servers of /etc/resolv.conf). Other partition modes do
	// not resolve.
	DNSServers []string
	DNS        resolver.Config
	// NumFetchers is the number of fetch-list parts, one per fetcher task
	// (generate.numFetchers), at most mapreduce.MaxReduce; 0 means 1.
	NumFetchers int
	// MaxPartURLs bounds the URLs of one fetch-list part on average
	// (generate.maxPartURLs): when more are selected than NumFetchers
	// parts of it hold, the fetch list gets as many more parts as it
	// takes (a host's URLs stay in one part, so a part is larger when one
	// host alone has more). A fetch task holds its whole part while it
	// runs, about 1.7 KiB of live memory a URL, so this bounds the
	// fetch's memory.
	// 0 means no bound.
	MaxPartURLs int64
	// Now is the time the due check compares with (Nutch's
	// generate.curTime; the CLI's "+Nd" adds days); zero means time.Now().
	Now time.Time
	// Delay is how long a pending segment holds its URLs back
	// (generate.delay, Nutch's crawl.gen.delay); 0 means
	// DefaultGenerateDelay.
	Delay time.Duration
	// Schedule decides whether a URL is due (ShouldFetch) and may rank
	// it; the zero value is the adaptive schedule with its defaults.
	Schedule ScheduleOptions
	// Filters are applied to every CrawlDB URL (generate.filter); the zero
	// value filters nothing.
	Filters URLFilterOptions
	// MinScore, if not nil, skips URLs with a lower score (Nutch's
	// generate.min.score); nil means no minimum.
	MinScore *float32
	// MaxInterval, if positive, skips URLs whose fetch interval is longer
	// (Nutch's generate.min.interval, despite its name); 0 means no
	// maximum.
	MaxInterval time.Duration
	// RestrictStatus, if not 0, selects only URLs with this status
	// (Nutch's generate.restrict.status); 0 means any status.
	// crawldb.StatusDBDuplicate is rejected: duplicates are never
	// selected.
	RestrictStatus crawldb.Status
	// SelectReducers is the number of reduce tasks of the selection job
	// when TopN is set or the partition mode needs a second job (it is
	// NumFetchers otherwise), at most mapreduce.MaxReduce; 0 means the
	// larger of NumFetchers and the runner's parallelism.
	SelectReducers int
	// HostDbMaxFailureStreak, if positive, skips every URL of a host
	// whose failure streak in the crawl's HostDb is at least this
	// (generate.hostdb.maxFailureStreak, as Nutch's generate.hostdb with
	// an expression on the host's failures); 0 means off.
	// HostDbSkipDNSFailed skips every URL of a host whose last fetch
	// failed to resolve its name (generate.hostdb.skipDNSFailed). Without
	// a HostDb neither skips anything.
	HostDbMaxFailureStreak int64
	HostDbSkipDNSFailed    bool
}

// Validate reports the first option Generate cannot use. Its messages
// name the settings of the options (generate.topN and so on).
func (o GenerateOptions) Validate() error {
	switch {
	case o.TopN < 0:
		return fmt.Errorf("generate.topN must be >= 0, not %d", o.TopN)
	case o.MaxPerHost < 0:
		return fmt.Errorf("generate.maxPerHost must be >= 0 (0: no limit), not %d", o.MaxPerHost)
	case o.CountMode != "" && o.CountMode != CountHost && o.CountMode != CountDomain:
		return fmt.Errorf("generate.countMode %q is neither %q nor %q", o.CountMode, CountHost, CountDomain)
	case o.NumFetchers < 0 || o.NumFetchers > mapreduce.MaxReduce:
		return fmt.Errorf("generate.numFetchers must be between 1 and %d (0: 1), not %d", mapreduce.MaxReduce, o.NumFetchers)
	case o.MaxPartURLs < 0:
		return fmt.Errorf("generate.maxPartURLs must be >= 0 (0: no bound), not %d", o.MaxPartURLs)
	case o.SelectReducers < 0 || o.SelectReducers > mapreduce.MaxReduce:
		return fmt.Errorf("generate: select reducers must be between 0 and %d, not %d", mapreduce.MaxReduce, o.SelectReducers)
	case o.Delay < 0:
		return fmt.Errorf("generate.delay must be >= 0 (0: %v), not %v", DefaultGenerateDelay, o.Delay)
	case o.MaxInterval < 0:
		return fmt.Errorf("generate: negative maximum fetch interval %v", o.MaxInterval)
	case o.HostDbMaxFailureStreak < 0:
		return fmt.Errorf("generate.hostdb.maxFailureStreak must be >= 0 (0: off), not %d", o.HostDbMaxFailureStreak)
	case o.RestrictStatus == crawldb.StatusDBDuplicate:
		return fmt.Errorf("generate: cannot restrict to status %v: duplicates are never selected", o.RestrictStatus)
	}
	if o.PartitionMode != "" {
		if err := validPartitionMode(o.PartitionMode); err != nil {
			return fmt.Errorf("generate.partitionMode: %w", err)
		}
	}
	if o.PartitionMode == PartitionIP {
		if err := o.resolverConfig().Validate(); err != nil {
			return fmt.Errorf("generate.partitionMode %s: DNS settings: %w", PartitionIP, err)
		}
	}
	if _, _, err := generateSchedule(o.Schedule); err != nil {
		return fmt.Errorf("generate: schedule: %w", err)
	}
	return nil
}

// withDefaults returns o with its zero fields given their meaning, and Now
// in UTC.
func (o GenerateOptions) withDefaults() GenerateOptions {
	if o.CountMode == "" {
		o.CountMode = CountHost
	}
	if o.PartitionMode == "" {
		o.PartitionMode = PartitionHost
	}
	if o.NumFetchers == 0 {
		o.NumFetchers = 1
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC()
	if o.Delay == 0 {
		o.Delay = DefaultGenerateDelay
	}
	return o
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
	// DBDuplicates counts the CrawlDB URLs skipped because dedup marked
	// them duplicates (status db_duplicate).
	DBDuplicates int64
	// PendingSegments are the segments whose fetch lists were excluded.
	PendingSegments []string
	// HostDbVersion is the version of the HostDb the selection read
	// (HostDbMaxFailureStreak, HostDbSkipDNSFailed), "" if none was
	// read; HostDbHosts counts the hosts it made generate skip, and
	// HostDbFailing and HostDbDNSFailed the due URLs skipped for a
	// failure streak and for a failed DNS lookup.
	HostDbVersion                  string
	HostDbHosts                    int64
	HostDbFailing, HostDbDNSFailed int64
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
	ctrDBDuplicate  = "db_duplicate"
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

// The temporary directories of a generate in its new segment: the
// selection, when a second job makes the fetch list, and the candidates'
// ranks for the topN cut-off.
const (
	selectDir = "_select"
	ranksDir  = "_ranks"
)

// Generate selects the URLs due for fetching into a new segment's fetch
// list (Nutch's Generator), and returns its path; ErrNothingDue if none.
//
// A CrawlDB URL is a candidate when it passes the filters, is not marked
// db_duplicate by dedup (counted as db_duplicate: a duplicate is never
// fetched again), has RestrictStatus (if set), is due by the schedule's
// ShouldFetch at Now (other statuses do not matter: gone and redirected
// pages come back when their schedule says so, as in Nutch), is not in a
// pending fetch list, has at least MinScore and at most MaxInterval. Candidates are
// ranked by score (Nutch's OPIC generatorSortValue), or by the schedule's
// GenerateSortValue if it is a crawldb.Ranker that ranks (the dynamic
// schedule: score times the probability that the page changed since its
// last fetch), ties by URL; each host (or domain) keeps its best
// MaxPerHost, and of those the best TopN overall are selected. The fetch list, segments/<name>/crawl_generate, holds their
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
// candidate by host and rank (see candidateKey), so that the engine's sort
// ranks them; a reducer walks one host at a time, holding only that host's
// pending URLs, takes its first MaxPerHost from the key alone (a dropped
// candidate is never decoded), and its output is the fetch list. Otherwise generate-select partitions by count key and
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
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	o = o.withDefaults()
	log := env.log().With("job", "generate")
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	filters, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	lock, err := env.lock(cp, "generate")
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	if err := checkCrawlDB(env, cp, log); err != nil {
		return nil, err
	}
	if o.Schedule, err = withEstimateModel(ctx, env, cp, o.Schedule); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	g, err := planGeneration(env, cp, o, filters, log)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	defer g.removeUnlessPublished()
	if g.hostSkip, err = g.prepareHostSkips(ctx); err != nil {
		return nil, err
	}
	if err := g.selectCandidates(ctx); err != nil {
		return nil, err
	}
	g.removeHostSkips()
	if err := g.finishFetchList(ctx); err != nil {
		return nil, err
	}
	return g.result(start)
}

// generation is one Generate run: its options (with their defaults), its
// new segment and the outputs of its jobs.
type generation struct {
	env     Env
	o       GenerateOptions
	cp      crawlPaths
	log     *slog.Logger
	part    partitioning
	filters filterSpec
	// current is the URI of the CrawlDB's current directory; pending the
	// names of the pending segments.
	current string
	pending []string
	// genTime is the new segment's time, from its name.
	genTime         time.Time
	segURI, segPath string
	// selectOut is generate-select's output: the fetch list, or _select
	// when generate-topn makes the fetch list; ranksOut, with a topN, is
	// where the candidates' ranks go. reduces is generate-select's reduce
	// tasks, parts the fetch list's (NumFetchers, or more to keep parts
	// within MaxPartURLs).
	selectOut, ranksOut string
	reduces, parts      int
	res                 *GenerateResult
	published           bool

	// hostSkip is the URI of the hosts the HostDb makes generate skip
	// (a side file of generate-select), "" if none.
	hostSkip string
}

// checkCrawlDB recovers the CrawlDB from a killed update and reports
// ErrNothingDue if it is empty.
func checkCrawlDB(env Env, cp crawlPaths, log *slog.Logger) error {
	if err := recoverDB(env, cp, log); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	n, err := countParts(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if n == 0 {
		log.Info("the CrawlDB is empty", "crawldb", cp.dbURI)
		return ErrNothingDue
	}
	return nil
}

// planGeneration lists the pending segments, names the new segment and
// decides the jobs' outputs. Without topN, and if the parts follow from
// the count keys, generate-select writes the fetch list; else it writes
// _select, in as many parts as can run at once, and with topN the
// candidates' ranks to _ranks for the cut-off; generate-topn then keeps
// the topN and partitions them into the fetch list.
func planGeneration(env Env, cp crawlPaths, o GenerateOptions, filters filterSpec, log *slog.Logger) (*generation, error) {
	// The CrawlDB's row count (from its parts' footers) bounds the
	// selection. A topN of at least that many rows cuts nothing, so the
	// selection runs as without one: in one job when the parts follow
	// from the count keys, with no ranks to write and no cut to find.
	// Without topN the selection may be the whole CrawlDB: if that could
	// exceed the parts' bound, select into _select, so that the fetch
	// list can get more parts once the selection is counted.
	bounded := true
	if o.TopN > 0 || o.MaxPartURLs > 0 {
		rows, err := countRows(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName))
		if err != nil {
			return nil, fmt.Errorf("count the CrawlDB's rows: %w", err)
		}
		if o.TopN >= rows {
			log.Debug("the topN is no smaller than the CrawlDB: nothing to cut", "topn", o.TopN, "rows", rows)
			o.TopN = 0
		}
		if o.TopN == 0 && o.MaxPartURLs > 0 {
			bounded = rows <= int64(o.NumFetchers)*o.MaxPartURLs
		}
	}
	// A segment is named by the wall clock when it was generated, so its
	// hold ends by the wall clock too: a simulated Now (--now) never
	// lifts it, or a page would be generated (and fetched) twice.
	pending, err := pendingSegments(cp, time.Now(), o.Delay, log)
	if err != nil {
		return nil, err
	}
	name, err := newSegmentName(cp, time.Now())
	if err != nil {
		return nil, err
	}
	genTime, _ := time.Parse(segment.NameLayout, name)
	part, _ := newPartitioning(o.PartitionMode, o.CountMode) // valid: o.Validate
	g := &generation{env: env, o: o, cp: cp, log: log, part: part, filters: filters,
		current: storage.Join(cp.dbURI, crawldb.CurrentName), pending: pending, genTime: genTime,
		segURI: storage.Join(cp.segURI, name), segPath: path.Join(cp.segPath, name)}
	g.res = &GenerateResult{Segment: g.segURI, Name: name, Parts: o.NumFetchers, Counters: &mapreduce.Counters{},
		FetchList: storage.Join(g.segURI, segment.DirGenerate)}
	for _, p := range pending {
		g.res.PendingSegments = append(g.res.PendingSegments, storage.Join(cp.segURI, p))
	}
	g.selectOut, g.reduces, g.parts = g.res.FetchList, o.NumFetchers, o.NumFetchers
	if o.TopN > 0 || !part.direct() || !bounded {
		g.selectOut = storage.Join(g.segURI, selectDir)
		g.reduces = max(o.NumFetchers, o.SelectReducers)
		if o.SelectReducers <= 0 {
			g.reduces = max(o.NumFetchers, env.parallelism())
		}
	}
	if o.TopN > 0 {
		g.ranksOut = storage.Join(g.segURI, ranksDir)
	}
	return g, nil
}

// finishFetchList makes the fetch list of a selection written to _select:
// renamed if it is the fetch list already (the topN kept everything in
// parts of the right number), else cut and partitioned by generate-topn.
func (g *generation) finishFetchList(ctx context.Context) error {
	if g.res.Selected == 0 || g.selectOut == g.res.FetchList {
		return nil
	}
	g.boundParts()
	selectPath := path.Join(g.segPath, selectDir)
	if g.part.direct() && (g.o.TopN == 0 || g.res.Selected <= g.o.TopN) && g.reduces == g.parts {
		if err := g.cp.fs.Rename(selectPath, path.Join(g.segPath, segment.DirGenerate)); err != nil {
			return fmt.Errorf("generate: publish the fetch list: %w", err)
		}
	} else if err := g.cutTopN(ctx); err != nil {
		return err
	}
	for _, d := range []string{selectDir, ranksDir} {
		if err := g.cp.fs.RemoveAll(path.Join(g.segPath, d)); err != nil {
			g.log.Warn("removing the candidates failed", "dir", storage.Join(g.segURI, d), "err", err)
		}
	}
	return nil
}

// boundParts raises the fetch list's parts, if need be, so that the
// selection (cut to the topN) holds at most MaxPartURLs URLs a part on
// average.
func (g *generation) boundParts() {
	n := g.res.Selected
	if g.o.TopN > 0 {
		n = min(n, g.o.TopN)
	}
	limit := g.o.MaxPartURLs
	if limit <= 0 || n <= int64(g.parts)*limit {
		return
	}
	g.parts = int(min(int64(mapreduce.MaxReduce), (n+limit-1)/limit))
	g.res.Parts = g.parts
	g.log.Info("fetch list in more parts, to bound each fetch task's memory", "urls", n,
		"num_fetchers", g.o.NumFetchers, "parts", g.parts, "max_part_urls", limit)
}

// result ends the run: ErrNothingDue if nothing was selected, else the
// result, and the segment is kept.
func (g *generation) result(start time.Time) (*GenerateResult, error) {
	res := g.res
	res.Duration = time.Since(start)
	if res.Selected == 0 {
		g.log.Info("nothing to fetch", "due", res.Due, "held_by_pending", res.Pending, "pending_segments", len(g.pending),
			"hostdb_hosts_skipped", res.HostDbHosts, "hostdb_failure_streak", res.HostDbFailing, "hostdb_dns_failed", res.HostDbDNSFailed)
		return nil, ErrNothingDue
	}
	g.published = true
	g.log.Info("generate done", "segment", res.Segment, "selected", res.Selected, "due", res.Due,
		"held_by_pending", res.Pending, "over_max_per_host", res.OverHostLimit, "over_topn", res.OverTopN,
		"db_duplicates", res.DBDuplicates, "parts", g.parts, "partition_mode", g.o.PartitionMode,
		"unresolved_hosts", res.Unresolved, "hostdb_version", res.HostDbVersion, "hostdb_hosts_skipped", res.HostDbHosts,
		"hostdb_failure_streak", res.HostDbFailing, "hostdb_dns_failed", res.HostDbDNSFailed,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// removeUnlessPublished removes the new segment unless the run published
// it.
func (g *generation) removeUnlessPublished() {
	if g.published {
		return
	}
	if err := g.cp.fs.RemoveAll(g.segPath); err != nil {
		g.log.Warn("removing the unfinished segment failed", "segment", g.segURI, "err", err)
	}
}
