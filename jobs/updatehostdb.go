package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/hostdb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// The engine job of UpdateHostDb, as Registry knows it, and its counters.
const (
	JobUpdateHostDb      = "updatehostdb"
	ctrHostURLs          = "crawldb_urls"    // CrawlDB rows read
	ctrHostFetches       = "fetches_read"    // crawl_fetch rows read
	ctrHostFetchesOld    = "fetches_counted" // rows at or before the host's last recorded fetch
	ctrHostFetchesIgnore = "fetches_ignored" // skipped or refused rows (no verdict on the host)
	ctrHostOld           = "hosts_old"       // rows of the previous HostDb
	ctrHostsWritten      = "hosts"           // rows of the new HostDb
	ctrHostsFailing      = "hosts_failing"   // with a failure streak
	dirHostDb            = "hostdb"
)

// HostDbDir returns the URI of the crawl's HostDb directory.
func HostDbDir(crawl string) string { return storage.Join(crawl, dirHostDb) }

// hostDbPath is the crawl's HostDb directory in its file system.
func hostDbPath(cp crawlPaths) string { return path.Join(path.Dir(cp.dbPath), dirHostDb) }

// UpdateHostDbOptions configures UpdateHostDb.
type UpdateHostDbOptions struct {
	// Segments are the URIs of fetched segments whose crawl_fetch rows are
	// added; none updates the per-status counts from the CrawlDB only.
	Segments []string
	// Now is the version's time (zero: time.Now()).
	Now time.Time
}

// Validate reports a segment named twice.
func (o UpdateHostDbOptions) Validate() error {
	seen := map[string]bool{}
	for _, s := range o.Segments {
		if seen[s] {
			return fmt.Errorf("updatehostdb: segment %s given twice", s)
		}
		seen[s] = true
	}
	return nil
}

// UpdateHostDbResult reports an UpdateHostDb run.
type UpdateHostDbResult struct {
	// Hosts counts the rows of the new HostDb, Failing those with a
	// failure streak; URLs the CrawlDB rows read; Fetches the crawl_fetch
	// rows read, Counted those already in the previous version (at or
	// before the host's last recorded fetch) and Ignored those that say
	// nothing about the host (skipped or refused by the fetcher's own
	// policy).
	Hosts, Failing, URLs, Fetches, Counted, Ignored int64
	// Version is the new version's name (hostdb.VersionFile).
	Version  string
	Counters *mapreduce.Counters
	Duration time.Duration
}

// UpdateHostDb builds a new version of the crawl's HostDb (Nutch's
// UpdateHostDb, `nutch updatehostdb`): per host, the CrawlDB's URLs by
// status, and from the segments' crawl_fetch the host's fetch record
// (hostdb.Host: successes, failures and the failure streak, robots.txt
// and DNS failures, last fetch), merged with the previous version; then
// installs it with one rename. The per-status counts are those of the
// current CrawlDB; the fetch record adds each segment's fetches in fetch
// time order to the host's previous record, so a fetch at or before the
// host's last recorded fetch is not counted again (updating with the same
// segment twice changes nothing). It holds the CrawlDB lock (it reads the
// CrawlDB, as generate does) and the HostDb's own; a failure or a kill
// leaves the HostDb as it was.
func UpdateHostDb(ctx context.Context, env Env, o UpdateHostDbOptions) (res *UpdateHostDbResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	log := env.log().With("job", JobUpdateHostDb)
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("updatehostdb: %w", err)
	}
	dbLock, err := env.lockRecovered(cp, JobUpdateHostDb, log)
	if err != nil {
		return nil, err
	}
	defer env.unlock(dbLock, &err)
	hdURI, hdPath := HostDbDir(cp.crawl), hostDbPath(cp)
	if err := cp.fs.MkdirAll(hdPath); err != nil {
		return nil, fmt.Errorf("updatehostdb: create %s: %w", hdURI, err)
	}
	lock, err := env.lockHostDb(cp)
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	if n, err := countParts(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName)); err != nil {
		return nil, fmt.Errorf("updatehostdb: %w", err)
	} else if n == 0 {
		return nil, fmt.Errorf("updatehostdb: the CrawlDB %s is empty: inject first", cp.dbURI)
	}
	spec := updateHostDb{CrawlDB: storage.Join(cp.dbURI, crawldb.CurrentName)}
	for _, s := range o.Segments {
		fsys, p, err := env.resolver().Resolve(s)
		if err != nil {
			return nil, fmt.Errorf("updatehostdb: segment %s: %w", s, err)
		}
		st, err := segment.Inspect(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("updatehostdb: %w", err)
		}
		if !st.Has(segment.DirFetch) {
			return nil, fmt.Errorf("updatehostdb: segment %s is not fetched (state %s): run fetch first", s, st.State)
		}
		spec.Fetches = append(spec.Fetches, storage.Join(s, segment.DirFetch))
	}
	cur := hostdb.Current(hdPath)
	if ok, err := storage.Exists(cp.fs, cur); err != nil {
		return nil, fmt.Errorf("updatehostdb: %w", err)
	} else if ok {
		spec.Current = storage.Join(hdURI, hostdb.CurrentName)
	}
	if spec.Reduces, err = env.dbParts(cp, cur); err != nil {
		return nil, fmt.Errorf("updatehostdb: %w", err)
	}
	out := crawldb.NewTempDir(hdPath)
	spec.Out = storage.Join(hdURI, path.Base(out))
	jr, err := env.Run(ctx, spec)
	if err == nil {
		err = hostdb.WriteVersion(cp.fs, out, o.Now)
	}
	if err != nil {
		_ = cp.fs.RemoveAll(out)
		return nil, fmt.Errorf("updatehostdb: %w", err)
	}
	if err := crawldb.Install(cp.fs, hdPath, out, false); err != nil {
		return nil, fmt.Errorf("updatehostdb: install the new HostDb: %w", err)
	}
	c := jr.Counters
	get := func(n string) int64 { return c.Get(JobUpdateHostDb, n) }
	res = &UpdateHostDbResult{
		Hosts: get(ctrHostsWritten), Failing: get(ctrHostsFailing), URLs: get(ctrHostURLs),
		Fetches: get(ctrHostFetches), Counted: get(ctrHostFetchesOld), Ignored: get(ctrHostFetchesIgnore),
		Version: o.Now.UTC().Format(hostdb.VersionLayout), Counters: c, Duration: time.Since(start),
	}
	log.Info("updatehostdb done", "segments", len(o.Segments), "hosts", res.Hosts, "failing", res.Failing,
		"urls", res.URLs, "fetches", res.Fetches, "version", res.Version, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// lockHostDb takes the HostDb's lock and repairs what a killed job left
// (an interrupted install, temporary directories), as lockLinkDB does for
// the LinkDB. On error the lock is released again.
func (e Env) lockHostDb(cp crawlPaths) (*crawldb.LockHandle, error) {
	hdPath := hostDbPath(cp)
	lock, err := crawldb.LockWith(cp.fs, hdPath, JobUpdateHostDb, e.ForceLock,
		crawldb.LockOptions{MaxAge: e.LockMaxAge, NoMaxAge: e.NoLockMaxAge, Logger: e.log()})
	if err != nil {
		return nil, fmt.Errorf("updatehostdb: %w", err)
	}
	if _, err := crawldb.Recover(cp.fs, hdPath, false); err != nil {
		e.unlock(lock, &err)
		return nil, fmt.Errorf("updatehostdb: %w", err)
	}
	return lock, nil
}

// FetchedSegments returns the URIs of the crawl's segments that have a
// crawl_fetch, in name order (what updatehostdb --dir reads).
func FetchedSegments(env Env) ([]string, error) {
	cp, err := env.paths()
	if err != nil {
		return nil, err
	}
	infos, err := listSegments(cp)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		name := fi.Name()
		if !fi.IsDir() || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		st, err := segment.Inspect(cp.fs, path.Join(cp.segPath, name))
		if err != nil {
			return nil, err
		}
		if st.Has(segment.DirFetch) {
			out = append(out, storage.Join(cp.segURI, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// hostDatumRow is what updatehostdb reads of a CrawlDB row.
type hostDatumRow struct {
	URL    string         `parquet:"url"`
	Host   string         `parquet:"host"`
	Status crawldb.Status `parquet:"status"`
}

// hostFetchRow is what updatehostdb reads of a crawl_fetch row.
type hostFetchRow struct {
	URL       string         `parquet:"url"`
	Status    crawldb.Status `parquet:"status"`
	FetchTime time.Time      `parquet:"fetch_time,optional,timestamp(millisecond)"`
	Message   string         `parquet:"message"`
}

// The kinds of fetch outcomes updatehostdb tells apart (fetchEvent.Kind).
const (
	evSuccess      uint8 = iota + 1 // the server answered
	evFailure                       // the fetch failed
	evRobotsDenied                  // robots.txt disallowed the URL
)

// fetchEvent is one fetch of a host in the shuffle.
type fetchEvent struct {
	Time   time.Time
	Kind   uint8
	DNS    bool // a failure to resolve the host
	Robots bool // a failure to get robots.txt
	URL    string
}

// hostValue is one input's contribution to a host: CrawlDB counts (a
// map task's sums), a fetch, or the previous HostDb row.
type hostValue struct {
	Counts   []int64 // by StatusColumns, nil if none
	Homepage string
	Fetch    *fetchEvent
	Old      *hostdb.Host
}

// classifyFetch tells what a crawl_fetch row says about its host, and
// false if nothing (skipped or refused by the fetcher's own policy, or not
// a fetch status). The fetcher records a failure to resolve the host as
// fetch_retry with a message "exception: resolve HOST: ..." (or
// "exception: robots.txt: resolve HOST: ..." when the robots.txt request
// found it), a robots.txt that cannot be had as "exception: robots.txt:
// ..." (unreachable) or a fetch_skipped "skipped: robots.txt unavailable
// (HTTP 503)".
func classifyFetch(r *hostFetchRow) (fetchEvent, bool) {
	ev := fetchEvent{Time: r.FetchTime, URL: r.URL}
	switch r.Status {
	case crawldb.StatusFetchSuccess, crawldb.StatusFetchNotModified, crawldb.StatusFetchRedirTemp,
		crawldb.StatusFetchRedirPerm, crawldb.StatusFetchGone:
		ev.Kind = evSuccess
	case crawldb.StatusFetchRobotsDenied:
		ev.Kind = evRobotsDenied
	case crawldb.StatusFetchRetry:
		ev.Kind = evFailure
		msg, _ := strings.CutPrefix(r.Message, "exception: ")
		msg, ev.Robots = strings.CutPrefix(msg, "robots.txt: ")
		ev.DNS = strings.HasPrefix(msg, "resolve ")
		ev.Robots = ev.Robots && !ev.DNS // the name, not robots.txt, failed
	case crawldb.StatusFetchSkipped:
		if !strings.HasPrefix(r.Message, "skipped: robots.txt unavailable") {
			return ev, false
		}
		ev.Kind, ev.Robots = evFailure, true
	default:
		return ev, false
	}
	return ev, !r.FetchTime.IsZero()
}

// statusColumn is the index in hostdb.StatusColumns of a db_* status, or
// -1.
func statusColumn(s crawldb.Status) int {
	if !s.IsDB() {
		return -1
	}
	return int(s - crawldb.StatusDBUnfetched)
}

// isHomepage reports whether u (normalized) is a host's root URL: path
// "/" and no query.
func isHomepage(u string) bool {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return false
	}
	i := strings.IndexByte(rest, '/')
	return i >= 0 && rest[i:] == "/"
}

// betterHomepage prefers https, then the smaller URL.
func betterHomepage(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	as, bs := strings.HasPrefix(a, "https:"), strings.HasPrefix(b, "https:")
	if as != bs {
		if as {
			return a
		}
		return b
	}
	return min(a, b)
}

// updateHostDb is UpdateHostDb's job: the CrawlDB (counted per host in
// each map task), the segments' fetches and the previous HostDb, by host,
// into a new HostDb.
type updateHostDb struct {
	CrawlDB string   // the CrawlDB's current directory (URI)
	Fetches []string // crawl_fetch directories (URIs)
	Current string   // the current HostDb, if any
	Out     string
	Reduces int
}

// JobName returns JobUpdateHostDb.
func (updateHostDb) JobName() string { return JobUpdateHostDb }

// hostCounts is a map task's per-host sums of the CrawlDB (Task.State):
// memory is bounded by the hosts of one split.
type hostCounts map[string]*hostValue

// Job builds the job.
func (s updateHostDb) Job() (mapreduce.Runnable, error) {
	if s.CrawlDB == "" || s.Out == "" || s.Reduces < 1 {
		return nil, errors.New("updatehostdb job: needs the CrawlDB, an output and reduce tasks")
	}
	ins := []mapreduce.Input[hostValue]{
		mapreduce.From(s.CrawlDB, mapDatumHost, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
	}
	for _, dir := range s.Fetches {
		ins = append(ins, mapreduce.From(dir, mapFetchHost, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()))
	}
	if s.Current != "" {
		ins = append(ins, mapreduce.From(s.Current, func(t *mapreduce.Task, h hostdb.Host, emit mapreduce.Emit[hostValue]) error {
			t.Count(ctrHostOld, 1)
			emit(h.Host, hostValue{Old: &h})
			return nil
		}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()))
	}
	return &mapreduce.Job[hostValue, hostdb.Host]{
		Name:   JobUpdateHostDb,
		Inputs: ins,
		MapSetup: func(t *mapreduce.Task) error {
			t.State = hostCounts{}
			return nil
		},
		MapCleanup: func(t *mapreduce.Task, emit mapreduce.Emit[hostValue]) error {
			hc, _ := t.State.(hostCounts)
			hosts := make([]string, 0, len(hc))
			for h := range hc {
				hosts = append(hosts, h)
			}
			slices.Sort(hosts)
			for _, h := range hosts {
				emit(h, *hc[h])
			}
			return nil
		},
		Reduce:    reduceHost,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[hostdb.Host]{mapreduce.Write[hostdb.Host](s.Out)},
	}, nil
}

// mapDatumHost counts a CrawlDB row into its map task's per-host sums.
func mapDatumHost(t *mapreduce.Task, d hostDatumRow, _ mapreduce.Emit[hostValue]) error {
	t.Count(ctrHostURLs, 1)
	host := d.Host
	if host == "" {
		host = urlutil.Host(d.URL)
	}
	if host == "" {
		return nil
	}
	hc, ok := t.State.(hostCounts)
	if !ok {
		return errors.New("updatehostdb: no per-host counts (MapSetup did not run)")
	}
	v := hc[host]
	if v == nil {
		v = &hostValue{Counts: make([]int64, len(hostdb.StatusColumns))}
		hc[host] = v
	}
	if i := statusColumn(d.Status); i >= 0 {
		v.Counts[i]++
	}
	if isHomepage(d.URL) {
		v.Homepage = betterHomepage(v.Homepage, d.URL)
	}
	return nil
}

// mapFetchHost keys a crawl_fetch row that says something about its host
// by the host.
func mapFetchHost(t *mapreduce.Task, r hostFetchRow, emit mapreduce.Emit[hostValue]) error {
	t.Count(ctrHostFetches, 1)
	ev, ok := classifyFetch(&r)
	host := urlutil.Host(r.URL)
	if !ok || host == "" {
		t.Count(ctrHostFetchesIgnore, 1)
		return nil
	}
	emit(host, hostValue{Fetch: &ev})
	return nil
}

// reduceHost merges a host's counts, fetches and previous row.
func reduceHost(t *mapreduce.Task, host string, values iter.Seq[hostValue], out func(hostdb.Host)) error {
	h := hostdb.Host{Host: host}
	counts := make([]int64, len(hostdb.StatusColumns))
	var evs []fetchEvent
	var old *hostdb.Host
	for v := range values {
		for i, n := range v.Counts {
			counts[i] += n
		}
		h.Homepage = betterHomepage(h.Homepage, v.Homepage)
		if v.Fetch != nil {
			evs = append(evs, *v.Fetch)
		}
		if v.Old != nil {
			if old != nil {
				return fmt.Errorf("updatehostdb: host %s twice in the previous HostDb", host)
			}
			old = v.Old
		}
	}
	if old != nil {
		// The fetch record goes on from the previous version; the
		// counts are the CrawlDB's of now.
		h.Successes, h.Failures, h.FailureStreak = old.Successes, old.Failures, old.FailureStreak
		h.RobotsDenied, h.RobotsFailures, h.RobotsFailed = old.RobotsDenied, old.RobotsFailures, old.RobotsFailed
		h.DNSFailures, h.LastDNSFailure = old.DNSFailures, old.LastDNSFailure
		h.LastFetch, h.LastSuccess = old.LastFetch, old.LastSuccess
		h.Homepage = betterHomepage(h.Homepage, old.Homepage)
	}
	h.Unfetched, h.Fetched, h.Gone, h.RedirTemp = counts[0], counts[1], counts[2], counts[3]
	h.RedirPerm, h.NotModified, h.Duplicate, h.Orphan = counts[4], counts[5], counts[6], counts[7]
	slices.SortFunc(evs, func(a, b fetchEvent) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Kind, b.Kind), strings.Compare(a.URL, b.URL))
	})
	seen := h.LastFetch
	for _, ev := range evs {
		if !seen.IsZero() && !ev.Time.After(seen) {
			t.Count(ctrHostFetchesOld, 1)
			continue
		}
		applyFetch(&h, ev)
	}
	if h.FailureStreak > 0 {
		t.Count(ctrHostsFailing, 1)
	}
	t.Count(ctrHostsWritten, 1)
	out(h)
	return nil
}

// applyFetch adds one fetch, later than every fetch h has, to h's record.
func applyFetch(h *hostdb.Host, ev fetchEvent) {
	h.LastFetch = ev.Time
	switch ev.Kind {
	case evSuccess:
		h.Successes++
		h.FailureStreak = 0
		h.RobotsFailed = false
		h.LastSuccess = ev.Time
	case evRobotsDenied:
		// robots.txt was had: the host answers.
		h.RobotsDenied++
		h.RobotsFailed = false
	case evFailure:
		h.Failures++
		h.FailureStreak++
		h.RobotsFailed = ev.Robots
		if ev.Robots {
			h.RobotsFailures++
		}
		if ev.DNS {
			h.DNSFailures++
			h.LastDNSFailure = ev.Time
		}
	}
}
