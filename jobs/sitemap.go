package jobs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/sitemap"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// The sitemap job names, as Registry knows them.
const (
	JobSitemapHosts = "sitemap-hosts"
	JobSitemap      = "sitemap"
)

// Defaults of SitemapOptions.
const (
	// DefaultSitemapMaxDepth is SitemapOptions.MaxDepth when 0: a sitemap
	// named by a file or robots.txt, and the sitemaps of an index. The
	// protocol forbids an index to list indexes.
	DefaultSitemapMaxDepth = 2
	// DefaultSitemapThreads is SitemapOptions.Threads when 0 (Nutch's
	// SitemapProcessor -threads).
	DefaultSitemapThreads = 8
)

// SitemapOptions configures Sitemap. Fetch.Agent and a source of sitemap
// URLs (SitemapURLs or FromRobots) are required.
type SitemapOptions struct {
	// SitemapURLs are files (paths or URIs) of sitemap URLs, one a line;
	// blank lines and lines starting with # are skipped, and a line's
	// first field is the URL.
	SitemapURLs []string
	// FromRobots reads the sitemaps that the robots.txt of every host of
	// the CrawlDB names (Sitemap: lines), as Nutch does for the hosts of
	// its HostDB.
	FromRobots bool
	// IgnoreLastMod, IgnoreChangeFreq and IgnorePriority leave a
	// sitemap's <lastmod>, <changefreq> and <priority> unused (the
	// settings sitemap.lastmod, sitemap.changefreq and sitemap.priority,
	// false); by default they become the page's modified time, fetch
	// interval and score.
	IgnoreLastMod, IgnoreChangeFreq, IgnorePriority bool
	// NotStrict accepts URLs outside a sitemap's scope (sitemap.strict
	// false; Nutch's -noStrict).
	NotStrict bool
	// Overwrite lets a sitemap set the modified time, interval and score
	// of URLs already in the CrawlDB (Nutch's
	// sitemap.url.overwrite.existing); by default they are kept as they
	// are.
	Overwrite bool
	// MaxDepth bounds the nesting of indexes: 1 reads the named sitemaps
	// only, 2 also the sitemaps of a named index. 0 means
	// DefaultSitemapMaxDepth.
	MaxDepth int
	// Threads is how many hosts a map task reads sitemaps of at once; 0
	// means DefaultSitemapThreads.
	Threads int
	// Score is the score of a new URL when its priority is not used; 0
	// means DefaultInjectScore.
	Score float32
	// Now is when new URLs are due; zero means time.Now().
	Now time.Time
	// Schedule gives new URLs their interval when the sitemap gives none.
	Schedule ScheduleOptions
	// Filters are applied to every URL a sitemap lists after
	// normalization, as inject applies them to seeds (not to the
	// sitemaps' own URLs, which are only normalized).
	Filters URLFilterOptions
	// Fetch supplies the fetching settings: Agent (required), the server
	// delay, the robots.txt Crawl-delay cap, the timeouts, AllowPrivate
	// and the DNS settings. Its other fields are not used.
	Fetch FetchOptions
}

// Validate checks o as Sitemap does before it starts.
func (o SitemapOptions) Validate() error {
	switch {
	case len(o.SitemapURLs) == 0 && !o.FromRobots:
		return errors.New("no sitemap URLs: give a file of sitemap URLs, or read the robots.txt of the CrawlDB's hosts")
	case strings.TrimSpace(o.Fetch.Agent) == "":
		return errors.New("no crawler name (fetcher.agent) to fetch sitemaps with")
	case o.MaxDepth < 0:
		return fmt.Errorf("sitemap.maxDepth %d is negative", o.MaxDepth)
	case o.Threads < 0:
		return fmt.Errorf("sitemap threads %d is negative", o.Threads)
	case o.Score < 0 || math.IsNaN(float64(o.Score)) || math.IsInf(float64(o.Score), 0):
		return fmt.Errorf("score %g is not a finite number >= 0", o.Score)
	}
	if _, err := injectSchedule(o.Schedule); err != nil {
		return err
	}
	return nil
}

// SitemapResult reports a Sitemap run.
type SitemapResult struct {
	// SitemapURLs counts the valid URLs of the sitemap URL files;
	// BadLines the lines skipped (not a URL, or filtered).
	SitemapURLs int64
	BadLines    int64
	// Hosts counts the hosts whose sitemaps were read.
	Hosts int64
	// Fetched and Failed count sitemap files read and not read (network
	// errors, HTTP errors, not a sitemap, robots.txt unavailable);
	// RobotsDenied those robots.txt disallows; OffHost sitemap URLs refused
	// for being on another host than their robots.txt or index; Cut the
	// files cut at the protocol's limits or broken part way.
	Fetched, Failed, RobotsDenied, OffHost, Cut int64
	// Listed counts the page URLs the sitemaps gave; Refused those that
	// did not normalize, were not absolute http(s) URLs or the filters
	// rejected; OutOfScope those outside their sitemap's scope (strict).
	Listed, Refused, OutOfScope int64
	// Added counts URLs new to the CrawlDB; Updated existing URLs whose
	// fields the sitemap set (Overwrite); Existing all existing URLs a
	// sitemap listed; Total the CrawlDB's rows afterwards.
	Added, Updated, Existing, Total int64
	// CrawlDB is the installed CrawlDB directory.
	CrawlDB string
	// Counters are the jobs' counters (groups "sitemap-hosts" and
	// "sitemap").
	Counters *mapreduce.Counters
	// Duration is the wall time of the whole run.
	Duration time.Duration
}

// ErrNoSitemaps is wrapped by the error of a Sitemap run that has no
// sitemap to read: the URL files hold no valid URL, or there is no host
// to read robots.txt of. The CrawlDB is then left as it was.
var ErrNoSitemaps = errors.New("no sitemaps to read")

// Counter names of the sitemap jobs.
const (
	ctrSMAdded    = "urls_added"
	ctrSMUpdated  = "urls_updated"
	ctrSMExisting = "urls_existing"
	ctrSMDup      = "urls_listed_again"
	ctrSMRows     = "crawldb_rows"
	ctrSMHostRows = "hosts"
)

// Sitemap reads sitemaps and merges the URLs they list into the CrawlDB,
// as Nutch's SitemapProcessor (bin/nutch sitemap) does.
//
// The sitemap URLs come from the files SitemapURLs (normalized and
// filtered by the driver, bad lines logged with file:line) and, with
// FromRobots, from the Sitemap: lines of the robots.txt of every host
// (scheme, host and port) of the CrawlDB. Two engine jobs do the work:
//
//   - sitemap-hosts groups them by host: its map reads the CrawlDB (only
//     with FromRobots) and the URL list, its reduce writes one row per
//     host with its sitemap URLs.
//   - sitemap reads those host rows and the CrawlDB. Its map tasks fetch
//     the sitemaps of their hosts (Threads hosts at a time): for each host
//     its robots.txt first, then its sitemaps one request at a time with
//     the server delay (or a longer Crawl-delay) between two, robots.txt
//     honoured for every sitemap URL, the crawler's User-Agent, and
//     private addresses refused unless Fetch.AllowPrivate, as the fetcher
//     does; an index's sitemaps are fetched in turn up to MaxDepth, each
//     sitemap once. Sitemaps on another host than their robots.txt or
//     index are refused. Every listed URL is normalized and filtered as
//     inject does a seed, keyed by URL and merged in the reduce with the
//     URL's CrawlDB row.
//
// The merge follows Nutch's SitemapProcessor: a URL new to the CrawlDB is
// added as db_unfetched, due at Now, its score the sitemap's <priority>
// (0.5 when absent; Score with IgnorePriority), its fetch interval the
// <changefreq> (sitemap.ChangeFreq.Interval; the schedule's default when
// absent or with IgnoreChangeFreq, schedule source "injected" otherwise)
// and its modified time the <lastmod> (none with IgnoreLastMod). A URL
// already in the CrawlDB is kept unchanged, whatever its status; with
// Overwrite (Nutch's sitemap.url.overwrite.existing) its score, interval
// and modified time are set from the sitemap where it gives them and the
// setting allows. A URL listed by several sitemaps takes the entry with
// the latest <lastmod>.
//
// Where trawl differs from Nutch: robots.txt is checked for the sitemap
// URLs themselves, and the fetches of one host are spaced by the server
// delay (Nutch's mapper does neither); sitemaps on another host than
// their robots.txt or index are refused (crawler-commons accepts an
// index's cross-host sitemaps); Nutch's fallback to /sitemap.xml when
// robots.txt names none is not done.
//
// Sitemap holds the CrawlDB lock for the whole run and installs the new
// CrawlDB with crawldb.Install, as Inject does: any failure leaves the
// CrawlDB as it was. A sitemap that cannot be fetched or parsed is
// logged and counted, not a failure of the run.
func Sitemap(ctx context.Context, env Env, o SitemapOptions) (res *SitemapResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	if o.Score == 0 {
		o.Score = DefaultInjectScore
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Schedule = o.Schedule.resolved()
	log := env.log().With("job", JobSitemap)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	fspec, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	if _, err := fspec.filters(); err != nil { // the rules parse, before anything is locked
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	created, err := missingDirs(cp.fs, cp.dbPath, path.Dir(cp.dbPath))
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	defer func() {
		if err != nil {
			removeEmptyDirs(cp.fs, created, log)
		}
	}()
	lock, err := env.lockRecovered(cp, JobSitemap, log)
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)

	res = &SitemapResult{Counters: &mapreduce.Counters{}}
	tmpName := path.Base(crawldb.NewTempDir(cp.dbPath)) + "-sitemaps"
	tmpPath, tmpURI := path.Join(cp.dbPath, tmpName), storage.Join(cp.dbURI, tmpName)
	defer func() {
		if rerr := cp.fs.RemoveAll(tmpPath); rerr != nil {
			log.Warn("removing the sitemap job's temporary directory failed", "dir", tmpURI, "err", rerr)
		}
	}()
	if err := cp.fs.MkdirAll(tmpPath); err != nil {
		return nil, fmt.Errorf("sitemap: create %s: %w", tmpURI, err)
	}
	urlsFile := path.Join(tmpPath, "sitemap-urls.parquet")
	if err := readSitemapURLs(ctx, env, o.SitemapURLs, cp.fs, urlsFile, res, log); err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	if len(o.SitemapURLs) > 0 && res.SitemapURLs == 0 && !o.FromRobots {
		return nil, fmt.Errorf("sitemap: %w: the sitemap URL files hold no valid URL (%d lines rejected)", ErrNoSitemaps, res.BadLines)
	}
	current := storage.Join(cp.dbURI, crawldb.CurrentName)
	hosts := sitemapHostsJob{
		URLs:      storage.Join(tmpURI, "sitemap-urls.parquet"),
		Out:       storage.Join(tmpURI, "hosts"),
		NumReduce: min(env.parallelism(), 16),
	}
	if o.FromRobots {
		hosts.CrawlDB = current
	}
	hr, err := env.Run(ctx, hosts)
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	res.Counters.Merge(hr.Counters)
	if hr.Counters.Get(JobSitemapHosts, ctrSMHostRows) == 0 {
		return nil, fmt.Errorf("sitemap: %w: no host to read sitemaps of (an empty CrawlDB and no sitemap URL file)", ErrNoSitemaps)
	}
	parts, err := env.dbParts(cp, path.Join(cp.dbPath, crawldb.CurrentName))
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	outName := path.Base(crawldb.NewTempDir(cp.dbPath))
	spec := sitemapJob{
		CrawlDB: current, Hosts: hosts.Out, Out: storage.Join(cp.dbURI, outName), NumReduce: parts,
		LastMod: !o.IgnoreLastMod, ChangeFreq: !o.IgnoreChangeFreq, Priority: !o.IgnorePriority,
		Strict: !o.NotStrict, Overwrite: o.Overwrite, MaxDepth: o.MaxDepth, Threads: o.Threads,
		Score: o.Score, Now: o.Now.UTC(), Schedule: o.Schedule, Filters: fspec, Fetch: o.Fetch,
	}
	jr, err := rewriteDB(ctx, env, cp, spec, path.Join(cp.dbPath, outName))
	if err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	res.Counters.Merge(jr.Counters)
	res.finish(spec.Out, start)
	log.Info("sitemap done", "hosts", res.Hosts, "sitemaps_fetched", res.Fetched, "sitemaps_failed", res.Failed,
		"robots_denied", res.RobotsDenied, "off_host", res.OffHost, "cut", res.Cut, "urls_listed", res.Listed,
		"added", res.Added, "updated", res.Updated, "existing", res.Existing, "refused", res.Refused,
		"out_of_scope", res.OutOfScope, "crawldb_rows", res.Total, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// finish sets r's numbers from its counters.
func (r *SitemapResult) finish(crawlDB string, start time.Time) {
	g := func(name string) int64 { return r.Counters.Get(JobSitemap, name) }
	r.Hosts = g(ctrSMHosts)
	r.Fetched, r.Failed, r.RobotsDenied, r.OffHost, r.Cut = g(ctrSMFetched), g(ctrSMFailed), g(ctrSMRobotsDenied), g(ctrSMOffHost), g(ctrSMCut)
	r.Listed, r.Refused, r.OutOfScope = g(ctrSMEntries), g(ctrSMRefused), g(ctrSMOutOfScope)
	r.Added, r.Updated, r.Existing, r.Total = g(ctrSMAdded), g(ctrSMUpdated), g(ctrSMExisting), g(ctrSMRows)
	r.CrawlDB = crawlDB
	r.Duration = time.Since(start)
}

// sitemapURLRow is one sitemap URL of the URL files.
type sitemapURLRow struct {
	URL string `parquet:"url"`
}

// readSitemapURLs reads the sitemap URL files into a Parquet file of
// sitemapURLRow (always written, possibly empty): each line's first field,
// normalized; bad lines are logged (the first 20 in detail) and counted.
// The URL filters are for the pages the sitemaps list, not for the
// sitemaps themselves (whose ".gz" names the suffix filter would refuse).
func readSitemapURLs(ctx context.Context, env Env, files []string, fsys storage.FS, out string,
	res *SitemapResult, log interface{ Warn(string, ...any) }) (err error) {
	f, err := fsys.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	w := parquetio.NewWriter[sitemapURLRow](f)
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	bad := func(name string, no int, why string) {
		res.BadLines++
		res.Counters.Add(JobSitemap, "sitemap_url_lines_rejected", 1)
		if res.BadLines <= defaultMaxReportedLines {
			log.Warn("sitemap URL line skipped", "line", fmt.Sprintf("%s:%d", urlutil.Redact(name), no), "why", why)
		}
	}
	for _, file := range files {
		sfs, p, err := env.resolver().Resolve(file)
		if err != nil {
			return fmt.Errorf("sitemap URLs %s: %w", urlutil.Redact(file), err)
		}
		r, err := sfs.Open(p)
		if err != nil {
			return fmt.Errorf("sitemap URLs %s: %w", urlutil.Redact(file), err)
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		no := 0
		var rows []sitemapURLRow
		for sc.Scan() {
			if no++; no%1024 == 0 && ctx.Err() != nil {
				_ = r.Close()
				return ctx.Err()
			}
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			n, err := urlutil.Normalize(fields[0])
			if err != nil {
				bad(file, no, "not a valid URL: "+urlutil.Redact(err.Error()))
				continue
			}
			if u, _ := url.Parse(n); u == nil || (u.Scheme != "http" && u.Scheme != "https") {
				bad(file, no, "not an http or https URL")
				continue
			}
			rows = append(rows, sitemapURLRow{URL: n})
		}
		serr := sc.Err()
		_ = r.Close()
		if serr != nil {
			return fmt.Errorf("sitemap URLs %s: %w", urlutil.Redact(file), serr)
		}
		if len(rows) > 0 {
			if err := w.Write(rows...); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
		}
		res.SitemapURLs += int64(len(rows))
	}
	return nil
}

// originOf is the scheme://host[:port] of a URL, lower case; "" if it
// has none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// smHostValue is the sitemap-hosts job's shuffle value: a sitemap URL of
// the files, or a mark that the host is in the CrawlDB (read its
// robots.txt sitemaps).
type smHostValue struct {
	Sitemap string
	Robots  bool
}

// sitemapHostRow is one host whose sitemaps the sitemap job reads.
type sitemapHostRow struct {
	Origin   string   `parquet:"origin"`
	Sitemaps []string `parquet:"sitemaps,list"`
	Robots   bool     `parquet:"robots"`
}

// sitemapHostsJob is the sitemap-hosts engine job: it groups the sitemap
// URLs of the files, and with CrawlDB the hosts of the CrawlDB, by host.
type sitemapHostsJob struct {
	// CrawlDB, when set, is the current CrawlDB (URI; it may be missing):
	// each of its hosts gets Robots.
	CrawlDB string
	// URLs is the Parquet file of sitemapURLRow; Out the host rows' directory.
	URLs, Out string
	// NumReduce is the number of host row parts.
	NumReduce int
}

func (sitemapHostsJob) JobName() string { return JobSitemapHosts }

// Job builds the job.
func (s sitemapHostsJob) Job() (mapreduce.Runnable, error) {
	if s.URLs == "" || s.Out == "" {
		return nil, errors.New("sitemap-hosts job: no input or no output")
	}
	inputs := []mapreduce.Input[smHostValue]{
		mapreduce.From(s.URLs, func(t *mapreduce.Task, r sitemapURLRow, emit mapreduce.Emit[smHostValue]) error {
			if o := originOf(r.URL); o != "" {
				emit(o, smHostValue{Sitemap: r.URL})
			}
			return nil
		}),
	}
	if s.CrawlDB != "" {
		inputs = append(inputs, mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[smHostValue]) error {
			if o := originOf(d.URL); o != "" {
				emit(o, smHostValue{Robots: true})
			}
			return nil
		}, mapreduce.Optional(), mapreduce.AllowMissingColumns()))
	}
	return &mapreduce.Job[smHostValue, sitemapHostRow]{
		Name:   JobSitemapHosts,
		Inputs: inputs,
		Combine: func(t *mapreduce.Task, key string, values iter.Seq[smHostValue], emit func(smHostValue)) error {
			row := hostRow(key, values)
			if row.Robots {
				emit(smHostValue{Robots: true})
			}
			for _, s := range row.Sitemaps {
				emit(smHostValue{Sitemap: s})
			}
			return nil
		},
		Reduce: func(t *mapreduce.Task, key string, values iter.Seq[smHostValue], out func(sitemapHostRow)) error {
			t.Count(ctrSMHostRows, 1)
			out(hostRow(key, values))
			return nil
		},
		NumReduce: s.NumReduce,
		Outputs:   []mapreduce.Output[sitemapHostRow]{mapreduce.Write[sitemapHostRow](s.Out)},
	}, nil
}

// hostRow merges a host's values: Robots if any says so, and its
// sitemap URLs sorted, each once.
func hostRow(origin string, values iter.Seq[smHostValue]) sitemapHostRow {
	row := sitemapHostRow{Origin: origin}
	for v := range values {
		row.Robots = row.Robots || v.Robots
		if v.Sitemap != "" {
			row.Sitemaps = append(row.Sitemaps, v.Sitemap)
		}
	}
	slices.Sort(row.Sitemaps)
	row.Sitemaps = slices.Compact(row.Sitemaps)
	return row
}

// smValue is the sitemap job's shuffle value: a CrawlDB row or a sitemap
// entry.
type smValue struct {
	Kind  uint8 // kindOld or kindSitemap
	Old   *crawldb.Datum
	Entry *smEntry
}

const kindSitemap uint8 = 3

// smEntry is what a sitemap says of one URL.
type smEntry struct {
	LastMod    time.Time
	ChangeFreq string
	Priority   float32
	// Sitemap is the sitemap that listed it.
	Sitemap string
}

// sitemapJob is the sitemap engine job (see Sitemap): its map tasks
// fetch the sitemaps of the host rows, its reduce merges their entries
// into the CrawlDB.
type sitemapJob struct {
	// CrawlDB is the current CrawlDB (URI; it may be missing); Hosts the
	// sitemap-hosts job's output; Out the new CrawlDB.
	CrawlDB, Hosts, Out string
	// NumReduce is the number of parts of the new CrawlDB.
	NumReduce int
	// LastMod, ChangeFreq and Priority use the sitemap's fields; Strict
	// checks scope; Overwrite updates existing URLs (see SitemapOptions).
	LastMod, ChangeFreq, Priority, Strict, Overwrite bool
	// MaxDepth and Threads are SitemapOptions'.
	MaxDepth, Threads int
	// Score is the score of a new URL without Priority.
	Score float32
	// Now is when new URLs are due (UTC).
	Now time.Time
	// Schedule gives new URLs their interval.
	Schedule ScheduleOptions
	// Filters are the URL filters, with the rules of their regex files.
	Filters filterSpec
	// Fetch are the fetching settings (SitemapOptions.Fetch).
	Fetch FetchOptions
}

func (sitemapJob) JobName() string { return JobSitemap }

func (s sitemapJob) maxDepth() int {
	if s.MaxDepth <= 0 {
		return DefaultSitemapMaxDepth
	}
	return s.MaxDepth
}

func (s sitemapJob) threads() int {
	if s.Threads <= 0 {
		return DefaultSitemapThreads
	}
	return s.Threads
}

func (s sitemapJob) strict() bool { return s.Strict }

// serverDelay is the delay between two requests to a host.
func (s sitemapJob) serverDelay() time.Duration {
	switch {
	case s.Fetch.NoServerDelay:
		return 0
	case s.Fetch.ServerDelay > 0:
		return s.Fetch.ServerDelay
	}
	return fetcher.DefaultServerDelay
}

// maxCrawlDelay is the longest robots.txt Crawl-delay honoured; 0 means
// no cap.
func (s sitemapJob) maxCrawlDelay() time.Duration {
	switch {
	case s.Fetch.NoCrawlDelayCap:
		return 0
	case s.Fetch.MaxCrawlDelay > 0:
		return s.Fetch.MaxCrawlDelay
	}
	return fetcher.DefaultMaxCrawlDelay
}

// sitemapTask is a map task's state: the host rows it read.
type sitemapTask struct {
	hosts []sitemapHostRow
}

// Job builds the job.
func (s sitemapJob) Job() (mapreduce.Runnable, error) {
	if s.Hosts == "" || s.Out == "" {
		return nil, errors.New("sitemap job: no host input or no output")
	}
	o := SitemapOptions{FromRobots: true, MaxDepth: s.MaxDepth, Threads: s.Threads, Score: s.Score, Schedule: s.Schedule, Fetch: s.Fetch}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("sitemap job: %w", err)
	}
	sched, err := injectSchedule(s.Schedule)
	if err != nil {
		return nil, fmt.Errorf("sitemap job: %w", err)
	}
	filters, err := s.Filters.filters()
	if err != nil {
		return nil, fmt.Errorf("sitemap job: %w", err)
	}
	return &mapreduce.Job[smValue, crawldb.Datum]{
		Name: JobSitemap,
		Inputs: []mapreduce.Input[smValue]{
			mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[smValue]) error {
				emit(d.URL, smValue{Kind: kindOld, Old: &d})
				return nil
			}, mapreduce.Optional(), mapreduce.AllowMissingColumns()),
			mapreduce.From(s.Hosts, func(t *mapreduce.Task, h sitemapHostRow, emit mapreduce.Emit[smValue]) error {
				st, _ := t.State.(*sitemapTask)
				if st == nil {
					st = &sitemapTask{}
					t.State = st
				}
				st.hosts = append(st.hosts, h)
				return nil
			}, mapreduce.WholeFiles(), mapreduce.RequireSuccess()),
		},
		// A host part is read: fetch its hosts' sitemaps.
		MapCleanup: func(t *mapreduce.Task, emit mapreduce.Emit[smValue]) error {
			st, _ := t.State.(*sitemapTask)
			if st == nil || len(st.hosts) == 0 {
				return nil
			}
			f, err := newSitemapFetcher(t, s, filters, emit)
			if err != nil {
				return err
			}
			defer f.close()
			f.fetchAll(t.Ctx, st.hosts)
			return t.Ctx.Err()
		},
		Reduce:    sitemapMerge{s: s, sched: sched}.reduce,
		NumReduce: s.NumReduce,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}, nil
}

// sitemapMerge is the sitemap job's reduce.
type sitemapMerge struct {
	s     sitemapJob
	sched crawldb.Schedule
}

func (m sitemapMerge) reduce(t *mapreduce.Task, url string, values iter.Seq[smValue], out func(crawldb.Datum)) error {
	var old *crawldb.Datum
	var e *smEntry
	for v := range values {
		switch v.Kind {
		case kindOld:
			if old == nil || old.FetchTime.Before(v.Old.FetchTime) {
				old = v.Old
			}
		case kindSitemap:
			if e != nil {
				t.Count(ctrSMDup, 1)
			}
			if e == nil || v.Entry.LastMod.After(e.LastMod) {
				e = v.Entry
			}
		}
	}
	t.Count(ctrSMRows, 1)
	switch {
	case e == nil:
		out(*old)
	case old == nil:
		t.Count(ctrSMAdded, 1)
		out(m.added(url, e))
	default:
		t.Count(ctrSMExisting, 1)
		d := *old
		if m.s.Overwrite {
			t.Count(ctrSMUpdated, 1)
			m.apply(&d, e)
		}
		out(d)
	}
	return nil
}

// added is the new CrawlDB row of a URL a sitemap listed.
func (m sitemapMerge) added(url string, e *smEntry) crawldb.Datum {
	d := crawldb.Datum{
		URL:       url,
		Host:      urlutil.Host(url),
		Status:    crawldb.StatusDBUnfetched,
		Score:     m.s.Score,
		ClusterID: -1,
	}
	d.Features.Depth = int32(urlutil.Depth(url))
	m.sched.InitializeSchedule(&d, m.s.Now)
	m.apply(&d, e)
	return d
}

// apply sets d's score, interval and modified time from e, where e gives
// them and the settings allow.
func (m sitemapMerge) apply(d *crawldb.Datum, e *smEntry) {
	if m.s.Priority {
		d.Score = e.Priority
	}
	if iv, ok := sitemap.ChangeFreq(e.ChangeFreq).Interval(); ok && m.s.ChangeFreq {
		d.FetchInterval = int32(iv / time.Second)
		d.Source = crawldb.SourceInjected
	}
	if !e.LastMod.IsZero() && m.s.LastMod {
		d.ModifiedTime = e.LastMod
	}
}
