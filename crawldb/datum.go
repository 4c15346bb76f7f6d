// Package crawldb holds the CrawlDB: one Datum per known URL, stored as zstd
// Parquet part files sorted by URL under crawl/crawldb/current. It defines the
// statuses (Nutch's codes and meanings), the fetch schedules that set when a
// page is due again, the lock that serializes writers, and the readers behind
// `trawl readdb`.
package crawldb

import "time"

// Datum is the CrawlDB record of one URL (Nutch's CrawlDatum). Times are UTC
// at millisecond precision; the zero time means "never" and is stored as a
// null timestamp (a zero time.Time in a required millisecond column would
// read back as 1754-08-30 from parquet-go, and year 1 breaks pandas).
// Intervals are in seconds.
//
// Where trawl differs from Nutch: the change history, features, cluster id
// and schedule source are first-class columns rather than metadata, so that
// revisit prediction and any Parquet reader can use them directly.
type Datum struct {
	// URL is the normalized URL, the record's key.
	URL string `parquet:"url"`
	// Host is the URL's host name (lower case, no port), for grouping.
	Host string `parquet:"host,dict"`
	// Status is one of the db_* statuses (see Status).
	Status Status `parquet:"status"`
	// FetchTime is when the URL is next due for fetching (Nutch's fetchTime).
	FetchTime time.Time `parquet:"fetch_time,optional,timestamp(millisecond)"`
	// PrevFetchTime is when the URL was last fetched.
	PrevFetchTime time.Time `parquet:"prev_fetch_time,optional,timestamp(millisecond)"`
	// ModifiedTime is when the content last changed, as far as known
	// (Last-Modified, or the fetch that saw a new signature).
	ModifiedTime time.Time `parquet:"modified_time,optional,timestamp(millisecond)"`
	// GenerateTime is when the URL was last put into a fetch list; a URL
	// generated within the generate-lock period is not generated again
	// (Nutch's _ngt_ metadata).
	GenerateTime time.Time `parquet:"generate_time,optional,timestamp(millisecond)"`
	// FetchInterval is the revisit interval in seconds.
	FetchInterval int32 `parquet:"fetch_interval"`
	// FixedInterval, when true, keeps FetchInterval as injected: schedules
	// do not adapt it (Nutch's fixedInterval seed metadata).
	FixedInterval bool `parquet:"fixed_interval"`
	// Retries counts consecutive transient fetch failures.
	Retries int32 `parquet:"retries"`
	// Score is the page's OPIC score.
	Score float32 `parquet:"score"`
	// Signature is the content digest of the last fetched version.
	Signature []byte `parquet:"signature,optional"`
	// HTTPStatus is the HTTP status code of the last fetch (0 if none).
	HTTPStatus int32 `parquet:"http_status"`
	// ContentType is the media type of the last fetched content.
	ContentType string `parquet:"content_type,dict"`
	// ETag and LastModified are the validators of the last 200 response,
	// sent back as If-None-Match / If-Modified-Since.
	ETag         string `parquet:"etag"`
	LastModified string `parquet:"last_modified"`
	// FetchCount counts successful fetches (200 or 304).
	FetchCount int32 `parquet:"fetch_count"`
	// ChangeCount is M, the number of fetches that observed a change.
	ChangeCount int32 `parquet:"change_count"`
	// History holds the most recent fetch observations, oldest first,
	// bounded to HistoryLimit entries. updatedb observes the first
	// successful fetch (an Initial observation, ObserveFirst) and every
	// later fetch whose change state is known (Observe).
	History []Observation `parquet:"history,list"`
	// Features describe the last fetched version, for clustering.
	Features Features `parquet:"features"`
	// ClusterID is the DBSCAN cluster the page was last assigned to, or -1.
	ClusterID int32 `parquet:"cluster_id"`
	// ClusterSample says the page is one of its cluster's samples (the
	// pages nearest the cluster's centre, revisited by the adaptive method
	// to learn the cluster's change period). It is false when ClusterID
	// is -1.
	ClusterSample bool `parquet:"cluster_sample"`
	// Source says which schedule set FetchInterval.
	Source Source `parquet:"schedule_source,dict"`
	// Metadata holds free-form key/value pairs (Nutch's metadata).
	Metadata map[string]string `parquet:"metadata"`
	// The focused crawl's columns (zero in a crawl without a topic):
	// Relevance is the fetched page's relevance to the topic (the cosine
	// of its terms with the topic's, in [0, 1]); LinkRelevance the
	// highest relevance RW of the links to the URL seen so far (their
	// anchor text and URL words against the topic); OffTopic marks a
	// fetched page whose Relevance is under the crawl's threshold; and
	// OffTopicHops counts the off-topic pages in a row on the path the URL
	// was found by (0: found on an on-topic page or a seed), which bounds
	// tunnelling through off-topic regions.
	Relevance     float32 `parquet:"relevance"`
	LinkRelevance float32 `parquet:"link_relevance"`
	OffTopic      bool    `parquet:"off_topic"`
	OffTopicHops  int32   `parquet:"off_topic_hops"`
}

// HistoryLimit bounds Datum.History.
const HistoryLimit = 32

// Observation is one fetch of a page: when, and whether it had changed since
// the previous fetch. Time is never zero (Observe ignores a zero time): the
// column is required because parquet-go v0.32 loses every value of an
// optional timestamp inside a list element.
//
// Modified is the server's Last-Modified date sent with that fetch, in
// Unix milliseconds, 0 when it sent none (an int, not a timestamp, for the
// same reason, and so that a CrawlDB written before the column existed
// reads as "none"). A Last-Modified inside the interval since the
// previous fetch dates the interval's last change, which the revisit
// estimators use (Cho and Garcia-Molina's last-modified estimator).
//
// Initial marks the observation of the page's first fetch, which has
// nothing to compare with (Changed is false): it dates the start of the
// history's first interval for the estimating schedule, while the dynamic
// schedule and the cluster periods read the history without it
// (ChangeHistory), as Hu and Wu's rules were defined.
type Observation struct {
	Time     time.Time `parquet:"time,timestamp(millisecond)"`
	Changed  bool      `parquet:"changed"`
	Modified int64     `parquet:"modified"`
	Initial  bool      `parquet:"initial"`
}

// LastModified returns the observation's Last-Modified date and whether
// the server sent one.
func (o Observation) LastModified() (time.Time, bool) {
	if o.Modified == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(o.Modified).UTC(), true
}

// Features are the page features used for clustering (Hu and Wu): counts of
// non-markup words, outlinks, inlinks and images, URL depth (path segments)
// and content size in bytes.
type Features struct {
	Words    int32 `parquet:"words"`
	Outlinks int32 `parquet:"outlinks"`
	Inlinks  int32 `parquet:"inlinks"`
	Images   int32 `parquet:"images"`
	Depth    int32 `parquet:"depth"`
	Bytes    int64 `parquet:"bytes"`
}

// Source names the schedule that last set a datum's interval.
type Source string

// The schedule sources.
const (
	SourceInjected Source = "injected" // the interval given at inject
	SourceDefault  Source = "default"  // Nutch's DefaultFetchSchedule
	SourceAdaptive Source = "adaptive" // Nutch's AdaptiveFetchSchedule
	SourceCluster  Source = "cluster"  // the page's DBSCAN cluster's period
	SourcePoisson  Source = "poisson"  // the page's own Poisson estimate
)

// Observe records a fetch at t that found the page changed or unchanged:
// it appends an Observation (t in UTC, at millisecond precision) to
// History, dropping the oldest entries beyond HistoryLimit, and counts a
// change in ChangeCount. lastModified is the server's Last-Modified date
// of the fetched content (zero: none sent). Callers observe fetches in
// time order. A zero t is ignored: an observation needs a time.
//
// Observe never writes into History's backing array, so a Datum copied by
// value keeps its own history.
func (d *Datum) Observe(t time.Time, changed bool, lastModified time.Time) {
	d.observe(t, changed, lastModified, false)
}

// ObserveFirst records the page's first fetch at t, with the server's
// Last-Modified date lastModified (zero: none), as an Initial observation
// (see Observe).
func (d *Datum) ObserveFirst(t time.Time, lastModified time.Time) {
	d.observe(t, false, lastModified, true)
}

// ChangeHistory returns History without a leading Initial observation
// (the page's first fetch): the observations of fetches that compared
// the page with a previous copy, as the dynamic schedule, its cluster
// periods and the Poisson estimators read them. It shares History's
// array.
func (d *Datum) ChangeHistory() []Observation {
	if len(d.History) > 0 && d.History[0].Initial {
		return d.History[1:]
	}
	return d.History
}

func (d *Datum) observe(t time.Time, changed bool, lastModified time.Time, initial bool) {
	if t.IsZero() {
		return
	}
	keep := d.History
	if len(keep) >= HistoryLimit {
		keep = keep[len(keep)-HistoryLimit+1:]
	}
	h := make([]Observation, len(keep), len(keep)+1)
	copy(h, keep)
	o := Observation{Time: t.UTC().Truncate(time.Millisecond), Changed: changed, Initial: initial}
	if !lastModified.IsZero() {
		o.Modified = lastModified.UnixMilli()
	}
	d.History = append(h, o)
	if changed {
		d.ChangeCount++
	}
}
