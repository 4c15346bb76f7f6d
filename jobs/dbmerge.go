package jobs

import (
	"bytes"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// The kinds of updatedb's shuffle values. Kind is the first field of
// dbValue, so a URL's values arrive old first, then fetches, then parse
// updates, then links (the engine sorts a key's values by their encoding).
const (
	kindOld   uint8 = 1 // the CrawlDB row
	kindFetch uint8 = 2 // a crawl_fetch row
	kindParse uint8 = 3 // a crawl_parse row but a link: a signature
	// kindCluster: the page's row of the cluster result being applied
	// (its assignment/ or samples/ row).
	kindCluster uint8 = 4
	// kindLink: links to the URL, from crawl_parse (outlinks) or
	// crawl_fetch (a redirect target).
	kindLink uint8 = 5
)

// dbValue is updatedb's shuffle value: one input record of a URL, or a map
// task's links to it. Exactly one of Old, Fetch, Parse, Cluster and Links
// is set, as Kind says.
type dbValue struct {
	Kind    uint8
	Old     *crawldb.Datum
	Fetch   *segment.Fetch
	Parse   *segment.ParseUpdate
	Cluster *clusterValue
	Links   []dbLink
}

// dbLink is a link to a URL as it travels through updatedb's shuffle:
// only what the reduce uses of it, so that a link costs its linking URL,
// its cash and a few bytes (a crawl_parse row as read costs some 50 more,
// and twice the time to decode). A map task packs the links it reads to
// one URL into one value (linkCombiner), so that a URL many pages link to
// is sorted and merged once per task, not once per link. (The engine's
// Combine, which packs a key's values after sorting them all, was tried
// first: it cut the reduce's input records 2.9x but cost 0.7 s more CPU
// than it saved in a 5-round crawl of 20,000 pages.)
type dbLink struct {
	// From is the linking page and Cash the OPIC cash it passes.
	From pageID
	Cash float32
	// Relevance and Hops are a focused crawl's rating of the link: its
	// relevance RW and the off-topic hops its target inherits.
	Relevance float32
	Hops      int32
}

// Counter names of updatedb (job group "updatedb"); the per-status counts of
// the new CrawlDB are "status_<name>", as Nutch's "CrawlDB status" group.
const (
	ctrAdditionsRefused = "urls_not_added"       // new URLs dropped by NoAdditions
	ctrLoneSignature    = "lone_signature"       // a signature with no fetch and no row
	ctrParseMetaIgnored = "parse_meta_ignored"   // StatusParseMeta rows (no metadata in ParseUpdate)
	ctrUnknownParse     = "parse_status_ignored" // crawl_parse rows of another status
	ctrNewFromLinks     = "urls_added"           // URLs new to the CrawlDB, from links
	ctrRedirectLinks    = "redirect_targets"     // redirect targets taken from crawl_fetch
	ctrInlinksDropped   = "inlinks_over_limit"   // links beyond MaxInlinks, not counted
	ctrUnchanged        = "urls_unchanged"       // rows with no new information
	ctrFetched          = "urls_fetched"         // rows merged with a fetch
	ctrRobotsDenied     = "urls_robots_denied"   // rows made db_gone by robots.txt
	// ctrKeptPrefix + a fetch status counts crawl_fetch rows that leave
	// their CrawlDB row as it was (fetch_skipped, fetch_refused).
	ctrKeptPrefix       = "kept_"
	ctrSignatureChanged = "signature_changed"
	ctrSignatureSame    = "signature_unchanged"
	ctrForcedRefetch    = "forced_refetch" // interval beyond the maximum: refetch forced
	ctrPurgedGone       = "purged_gone"
	ctrClusterGone      = "clustered_urls_gone" // cluster result rows of URLs no longer in the CrawlDB
	ctrStatusPrefix     = "status_"
)

// statusCounters are the counter names of the db statuses.
var statusCounters = func() [256]string {
	var names [256]string
	for i := range names {
		names[i] = ctrStatusPrefix + crawldb.Status(i).String()
	}
	return names
}()

// statusCounter is the counter of rows with status s.
func statusCounter(s crawldb.Status) string { return statusCounters[s] }

// dbMerger is Nutch's CrawlDbReducer: it merges one URL's CrawlDB row with
// the fetches, links and signatures the segments hold for it.
type dbMerger struct {
	sched crawldb.Schedule
	// now is the time new URLs from links are due (Nutch uses the wall
	// clock in initializeSchedule; trawl takes it from the job's spec so
	// that a re-run gives the same CrawlDB).
	now time.Time
	// retryMax is db.fetch.retry.max: transient failures before db_gone.
	retryMax int32
	// maxInterval is db.fetch.interval.max in seconds: a page whose
	// interval grows beyond it is forced to be refetched.
	maxInterval int32
	// noAdditions is db.update.additions.allowed=false.
	noAdditions bool
	// maxInlinks is db.update.max.inlinks (<= 0: no limit).
	maxInlinks int
	// noLinkCash keeps scores as they are (LinkRank scoring).
	noLinkCash bool
	// applyClusters says a cluster result is being applied (kindCluster
	// values); clusterMaxChanges is its young-page threshold, and
	// clusterAnyChanges says it had none (see applyCluster).
	applyClusters     bool
	clusterMaxChanges int
	clusterAnyChanges bool
}

// mergeState is the per-call scratch space of merge, reused across keys by
// one reduce task.
type mergeState struct {
	links inlinkHeap
}

// urlValues are one URL's values but for its links (which go to the
// mergeState's heap): its CrawlDB row, its newest fetch, its newest
// signature, and its row of the applied cluster result (nil if absent).
type urlValues struct {
	old   *crawldb.Datum
	fetch *segment.Fetch
	sig   *segment.ParseUpdate
	cv    *clusterValue
	// linkRW is the highest relevance of the links seen and linkHops
	// the fewest off-topic hops they carry (focused crawls; links > 0).
	links    int
	linkRW   float32
	linkHops int32
}

// merge reduces the values of one URL to its new CrawlDB row; ok is false
// when the URL leaves (or does not enter) the CrawlDB. count adds to a job
// counter.
func (m *dbMerger) merge(url string, values iter.Seq[dbValue], st *mergeState, count func(string, int64)) (res crawldb.Datum, ok bool, err error) {
	st.links.reset(m.maxInlinks)
	in, err := collect(url, values, &st.links, count)
	if err != nil {
		return res, false, err
	}
	if dropped := st.links.dropped(); dropped > 0 {
		count(ctrInlinksDropped, int64(dropped))
	}
	links := st.links.sorted()

	// A URL not in the CrawlDB enters only if additions are allowed.
	if in.old == nil && m.noAdditions {
		if in.fetch != nil || len(links) > 0 {
			count(ctrAdditionsRefused, 1)
		}
		return res, false, nil
	}
	switch {
	case in.fetch == nil && len(links) == 0:
		return m.unchanged(in, count)
	case in.fetch != nil:
		count(ctrFetched, 1)
		if res, err = m.fetched(url, in, count); err != nil {
			return res, false, err
		}
	case in.old != nil:
		// Only links: the row stays as it is (its score grows below).
		res = *in.old
		m.applyCluster(&res, in.cv)
	default:
		count(ctrNewFromLinks, 1)
		res = m.newFromLinks(url)
	}
	addInlinks(&res, in.old, links, m.noLinkCash)
	applyFocus(&res, in)
	res.GenerateTime = time.Time{} // Nutch removes _ngt_
	count(statusCounter(res.Status), 1)
	return res, true, nil
}

// collect sorts one URL's values: the newest CrawlDB row, fetch and
// signature, the applied cluster result's row, and the links (into
// links).
func collect(url string, values iter.Seq[dbValue], links *inlinkHeap, count func(string, int64)) (in urlValues, err error) {
	for v := range values {
		switch v.Kind {
		case kindOld:
			// Nutch keeps the latest version (by fetch time); with one
			// CrawlDB there is one, but be as Nutch.
			if in.old == nil || in.old.FetchTime.Before(v.Old.FetchTime) {
				in.old = v.Old
			}
		case kindFetch:
			// Several segments may have fetched the URL: the latest wins.
			if in.fetch == nil || in.fetch.FetchTime.Before(v.Fetch.FetchTime) {
				in.fetch = v.Fetch
			}
		case kindParse:
			collectParse(&in, v.Parse, count)
		case kindLink:
			for i := range v.Links {
				collectLink(&in, &v.Links[i], links)
			}
		case kindCluster:
			// An assignment row gives the label, a samples row the flag
			// (and the same label).
			if in.cv == nil {
				in.cv = &clusterValue{Label: v.Cluster.Label}
			}
			if v.Cluster.Sample {
				in.cv.Sample = true
			} else {
				in.cv.Label = v.Cluster.Label
			}
		default:
			return in, fmt.Errorf("updatedb: %s: shuffle value of unknown kind %d", url, v.Kind)
		}
	}
	return in, nil
}

// collectLink takes a link: into the heap, and into the focused crawl's
// ratings.
func collectLink(in *urlValues, l *dbLink, links *inlinkHeap) {
	links.add(l.From, l.Cash)
	if in.links == 0 || l.Hops < in.linkHops {
		in.linkHops = l.Hops
	}
	in.linkRW = max(in.linkRW, l.Relevance)
	in.links++
}

// collectParse takes a crawl_parse row but a link: a signature (the newest
// wins).
func collectParse(in *urlValues, p *segment.ParseUpdate, count func(string, int64)) {
	switch p.Status {
	case crawldb.StatusSignature:
		if in.sig == nil || !p.FetchTime.Before(in.sig.FetchTime) {
			in.sig = p
		}
	case crawldb.StatusParseMeta:
		count(ctrParseMetaIgnored, 1)
	default:
		count(ctrUnknownParse, 1)
	}
}

// unchanged is merge for a URL with no fetch and no link: its row is kept
// as it is (but for the applied cluster result); without a row the URL
// stays out.
func (m *dbMerger) unchanged(in urlValues, count func(string, int64)) (res crawldb.Datum, ok bool, err error) {
	if in.old == nil {
		if in.cv != nil {
			// The page was clustered but has left the CrawlDB since.
			count(ctrClusterGone, 1)
			return res, false, nil
		}
		count(ctrLoneSignature, 1)
		return res, false, nil
	}
	count(ctrUnchanged, 1)
	count(statusCounter(in.old.Status), 1)
	res = *in.old
	m.applyCluster(&res, in.cv)
	return res, true, nil
}

// newFromLinks is the row of a URL new to the CrawlDB, known from links:
// db_unfetched, due at now.
func (m *dbMerger) newFromLinks(url string) crawldb.Datum {
	res := crawldb.Datum{
		URL:       url,
		Host:      urlutil.Host(url),
		Status:    crawldb.StatusDBUnfetched,
		ClusterID: -1,
	}
	res.Features.Depth = int32(urlutil.Depth(url))
	m.sched.InitializeSchedule(&res, m.now)
	res.Score = 0 // OPIC initialScore
	return res
}

// fetched is merge for a fetched URL: the fetch's datum, with the columns
// the CrawlDB row keeps, the applied cluster result, the parse's features,
// then the fetch's verdict (applyFetch).
func (m *dbMerger) fetched(url string, in urlValues, count func(string, int64)) (crawldb.Datum, error) {
	old := in.old
	u := fetchUpdate{old: old, fetch: in.fetch}
	if old != nil {
		u.prevFetchTime, u.prevModifiedTime, u.oldSig = old.FetchTime, old.ModifiedTime, old.Signature
	}
	if in.sig != nil && len(in.sig.Signature) > 0 {
		u.newSig = in.sig.Signature
	}
	res := fetchDatum(url, in.fetch, old)
	if old != nil {
		res.Metadata = overlay(old.Metadata, res.Metadata)
		if !old.ModifiedTime.IsZero() && res.ModifiedTime.IsZero() {
			res.ModifiedTime = old.ModifiedTime
		}
		// Columns other jobs maintain between generate and updatedb
		// (cluster assignment, change history) come from the CrawlDB
		// row, not from the fetch list's copy.
		res.History = old.History
		res.ChangeCount = old.ChangeCount
		res.FetchCount = old.FetchCount
		res.ClusterID = old.ClusterID
		res.ClusterSample = old.ClusterSample
		res.Features = old.Features
		res.LinkRelevance, res.OffTopicHops = old.LinkRelevance, old.OffTopicHops
	}
	// The schedule below sees the applied cluster result.
	m.applyCluster(&res, in.cv)
	if in.sig != nil {
		inl := res.Features.Inlinks
		res.Features = in.sig.Features
		res.Features.Inlinks = inl
	}
	return res, m.applyFetch(&res, u, count)
}

// applyFocus sets a focused crawl's columns from the page's parse (its
// relevance and mark) and the links to it (the best RW, the fewest
// off-topic hops), keeping what the row knew.
func applyFocus(res *crawldb.Datum, in urlValues) {
	if in.sig != nil && in.fetch != nil {
		res.Relevance, res.OffTopic = in.sig.Relevance, in.sig.OffTopic
	}
	if in.links == 0 {
		return
	}
	res.LinkRelevance = max(res.LinkRelevance, in.linkRW)
	if in.old == nil || in.linkHops < res.OffTopicHops {
		res.OffTopicHops = in.linkHops
	}
}

// addInlinks is OPIC's updateDbScore: the old score (or the new row's)
// plus the cash of every incoming link, summed in float64 in a fixed
// order. The inlink count rises to the distinct linking pages seen.
// With noCash (LinkRank scoring) the score stays the old one.
func addInlinks(res *crawldb.Datum, old *crawldb.Datum, links []inlink, noCash bool) {
	base := res.Score
	if old != nil {
		base = old.Score
	}
	if noCash {
		res.Score = base
	} else {
		res.Score = float32(float64(base) + sumCash(links))
	}
	if n := int32(distinctFrom(links)); n > res.Features.Inlinks {
		res.Features.Inlinks = n
	}
}

// fetchUpdate is a fetch being merged into a URL's row: the CrawlDB row
// before (nil for a new URL) and its times and signature, the fetch, and
// the parse's signature (nil if none).
type fetchUpdate struct {
	old                             *crawldb.Datum
	fetch                           *segment.Fetch
	oldSig, newSig                  []byte
	prevFetchTime, prevModifiedTime time.Time
}

// applyFetch sets res's status, schedule and signature from a fetch, as
// CrawlDbReducer's switch on the fetch status does.
func (m *dbMerger) applyFetch(res *crawldb.Datum, u fetchUpdate, count func(string, int64)) error {
	if u.fetch.Status != crawldb.StatusFetchRobotsDenied {
		dropProtocolStatus(res)
	}
	switch u.fetch.Status {
	case crawldb.StatusFetchSuccess, crawldb.StatusFetchRedirTemp, crawldb.StatusFetchRedirPerm, crawldb.StatusFetchNotModified:
		m.applyContent(res, u, count)
	case crawldb.StatusFetchRetry:
		res.Signature = u.oldSig
		m.sched.SetPageRetrySchedule(res, u.prevFetchTime, u.prevModifiedTime, u.fetch.FetchTime)
		if res.Retries < m.retryMax {
			res.Status = crawldb.StatusDBUnfetched
		} else {
			res.Status = crawldb.StatusDBGone
			m.sched.SetPageGoneSchedule(res, u.prevFetchTime, u.prevModifiedTime, u.fetch.FetchTime)
		}
	case crawldb.StatusFetchGone:
		res.Signature = u.oldSig
		res.Status = crawldb.StatusDBGone
		m.sched.SetPageGoneSchedule(res, u.prevFetchTime, u.prevModifiedTime, u.fetch.FetchTime)
	case crawldb.StatusFetchRobotsDenied:
		// Gone for this agent, as in Nutch, with the reason recorded so
		// that readers can tell it from a server's 404.
		res.Signature = u.oldSig
		res.Status = crawldb.StatusDBGone
		m.sched.SetPageGoneSchedule(res, u.prevFetchTime, u.prevModifiedTime, u.fetch.FetchTime)
		res.Metadata = overlay(res.Metadata, map[string]string{crawldb.ProtocolStatusKey: "robots_denied"})
		count(ctrRobotsDenied, 1)
	default:
		return fmt.Errorf("updatedb: %s: crawl_fetch status %v is not a fetch status", res.URL, u.fetch.Status)
	}
	return nil
}

// dropProtocolStatus removes the reason of an earlier verdict, which no
// longer holds, from res's metadata (as a new map).
func dropProtocolStatus(res *crawldb.Datum) {
	if _, ok := res.Metadata[crawldb.ProtocolStatusKey]; !ok {
		return
	}
	md := make(map[string]string, len(res.Metadata))
	for k, v := range res.Metadata {
		if k != crawldb.ProtocolStatusKey {
			md[k] = v
		}
	}
	res.Metadata = md
}

// applyContent is applyFetch for a fetch that reached the page (success,
// not modified, redirects): the change state, the schedule, the status
// and signature, the observation, and a refetch forced if the interval
// grew beyond the maximum.
func (m *dbMerger) applyContent(res *crawldb.Datum, u fetchUpdate, count func(string, int64)) {
	state := changeState(u, count)
	m.sched.SetFetchSchedule(res, u.prevFetchTime, u.prevModifiedTime, u.fetch.FetchTime, res.ModifiedTime, state)
	if state == crawldb.StateNotModified {
		res.Status = crawldb.StatusDBNotModified
		// NUTCH-1341: not modified, so the modification time is the
		// previous one.
		res.ModifiedTime = u.prevModifiedTime
		if u.old != nil {
			res.Signature = u.old.Signature
		}
	} else {
		setContentStatus(res, u)
	}
	if u.fetch.Status == crawldb.StatusFetchSuccess || u.fetch.Status == crawldb.StatusFetchNotModified {
		res.FetchCount++
		// The first fetch is observed too (there is nothing to compare
		// it with): it starts the history's first interval.
		switch lm := lastModified(res.LastModified); {
		case state != crawldb.StateUnknown:
			res.Observe(u.fetch.FetchTime, state == crawldb.StateModified, lm)
		case res.FetchCount == 1:
			res.ObserveFirst(u.fetch.FetchTime, lm)
		}
	}
	// An interval beyond the maximum forces a refetch, so that a page is
	// not stuck as not-modified after its segment is gone.
	if m.maxInterval < res.FetchInterval {
		count(ctrForcedRefetch, 1)
		m.sched.ForceRefetch(res, false, m.now)
	}
}

// changeState tells whether a fetch that reached the page found it
// modified: a 304 is not modified; a 200 is compared by signature when
// both the old and the new one are known; else the state is unknown.
func changeState(u fetchUpdate, count func(string, int64)) crawldb.ChangeState {
	switch {
	case u.fetch.Status == crawldb.StatusFetchNotModified:
		return crawldb.StateNotModified
	case u.fetch.Status != crawldb.StatusFetchSuccess || len(u.oldSig) == 0 || u.newSig == nil:
		// Only successful fetches, not redirects, are compared by
		// signature (NUTCH-1422).
		return crawldb.StateUnknown
	case bytes.Equal(u.oldSig, u.newSig):
		count(ctrSignatureSame, 1)
		return crawldb.StateNotModified
	default:
		count(ctrSignatureChanged, 1)
		return crawldb.StateModified
	}
}

// setContentStatus sets the status and signature of a page fetched and
// not found unmodified: db_fetched or a redirect's status, and the new
// signature.
func setContentStatus(res *crawldb.Datum, u fetchUpdate) {
	switch u.fetch.Status {
	case crawldb.StatusFetchSuccess:
		res.Status = crawldb.StatusDBFetched
	case crawldb.StatusFetchRedirPerm:
		res.Status = crawldb.StatusDBRedirPerm
	case crawldb.StatusFetchRedirTemp:
		res.Status = crawldb.StatusDBRedirTemp
	}
	switch {
	case u.newSig != nil:
		res.Signature = u.newSig
	case u.fetch.Status == crawldb.StatusFetchSuccess:
		// trawl: a fetch without a parse signature keeps the old one
		// (Nutch would take the fetch list's copy).
		res.Signature = u.oldSig
	default:
		res.Signature = nil // redirects have no content
	}
}

// fetchDatum is Nutch's crawl_fetch datum: the fetch list's copy of the
// CrawlDB row (or the row itself, if the fetch does not carry the copy)
// with the fetch's status, time and response fields. Its modification time
// is the fetch list's, as in Nutch: the response's Last-Modified header is
// kept (for conditional requests) but is not the time the schedule sees, so
// an old Last-Modified does not make AdaptiveFetchSchedule's sync_delta push
// a first fetch's interval past db.fetch.interval.max (which would force a
// refetch of every old page).
func fetchDatum(url string, f *segment.Fetch, old *crawldb.Datum) crawldb.Datum {
	d := f.Datum
	if d.URL == "" {
		// The fetcher did not carry the fetch list's datum: start from
		// the CrawlDB row, or from nothing.
		if old != nil {
			d = *old
		} else {
			d = crawldb.Datum{ClusterID: -1}
		}
	}
	d.URL = url
	if d.Host == "" {
		d.Host = urlutil.Host(url)
	}
	d.Status = f.Status
	d.PrevFetchTime = f.FetchTime
	d.FetchTime = f.FetchTime
	if f.HTTPStatus != 0 {
		d.HTTPStatus = f.HTTPStatus
	}
	if f.Status == crawldb.StatusFetchSuccess {
		d.ContentType, d.ETag, d.LastModified = f.ContentType, f.ETag, f.LastModified
	} else {
		if f.ContentType != "" {
			d.ContentType = f.ContentType
		}
		if f.ETag != "" {
			d.ETag = f.ETag
		}
		if f.LastModified != "" {
			d.LastModified = f.LastModified
		}
	}
	return d
}

// overlay returns base with over's entries put on top (Nutch's
// putAllMetaData of old, then of the fetch datum), as a new map; nil if
// both are empty.
func overlay(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	m := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// lastModified parses a Last-Modified header (any of HTTP's three date
// forms); the zero time if it is empty or malformed, as the date is only a
// hint to the revisit estimators.
func lastModified(h string) time.Time {
	if h == "" {
		return time.Time{}
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return time.Time{}
	}
	return t
}
