// Package segment defines a crawl segment's layout and record types.
//
// A segment is one round's work, a directory named by its generation time
// (segments/20261121103000) holding one subdirectory per stage output, each a
// published job output (Parquet part files plus _SUCCESS):
//
//	crawl_generate  Datum rows: the fetch list, partitioned by host
//	crawl_fetch     Fetch rows: the outcome of fetching each URL
//	content         Content rows: raw bytes and headers
//	parse_data      ParseData rows: outlinks, title, features, signature
//	parse_text      ParseText rows: extracted text
//	crawl_parse     ParseUpdate rows: CrawlDB updates found by parsing
//	warc            WARC files and CDXJ indexes (fetch --warc, warc export)
//
// The segment's life (lifecycle.go) has one home here: its states
// (incomplete, generated, fetched, parsed, merged) as its files show them
// (Inspect), the marker updatedb writes once it merged the segment
// (MergedMarker, MarkMerged), and the lock a job holds while it works on
// the segment (Lock: fetch, parse and updatedb take it, so two jobs never
// work on one segment at once). A stage publishes its outputs in a fixed
// order (content before crawl_fetch, crawl_parse last), so the last output
// published says the stage is done; Clean and RemoveOutputs clear what a
// killed job left, under the lock.
package segment

import (
	"time"

	"github.com/trawl/trawl/crawldb"
)

// The stage subdirectories of a segment.
const (
	DirGenerate   = "crawl_generate"
	DirFetch      = "crawl_fetch"
	DirContent    = "content"
	DirParseData  = "parse_data"
	DirParseText  = "parse_text"
	DirCrawlParse = "crawl_parse"
	// DirWARC holds WARC/1.1 files and their CDXJ indexes (package warc),
	// written by a fetch with fetcher.warc or by warc export; a fetch
	// publishes it before crawl_fetch.
	DirWARC = "warc"
)

// Generate is a fetch-list row: the CrawlDB datum of a URL selected for
// fetching, as it was when selected.
type Generate = crawldb.Datum

// Fetch is the outcome of fetching one URL (Nutch's crawl_fetch datum).
type Fetch struct {
	// URL is the URL as generated.
	URL string `parquet:"url"`
	// Status is a fetch_* status.
	Status crawldb.Status `parquet:"status"`
	// FetchTime is when the fetch happened (UTC); zero (stored as null)
	// when no fetch was attempted.
	FetchTime time.Time `parquet:"fetch_time,optional,timestamp(millisecond)"`
	// HTTPStatus is the response code (0 when no response).
	HTTPStatus int32 `parquet:"http_status"`
	// ContentType is the response's media type.
	ContentType string `parquet:"content_type,dict"`
	// RedirectURL is the normalized target of a redirect, if any.
	RedirectURL string `parquet:"redirect_url"`
	// ETag and LastModified are the response's validators.
	ETag         string `parquet:"etag"`
	LastModified string `parquet:"last_modified"`
	// Message explains failures (protocol status text).
	Message string `parquet:"message"`
	// ResponseMillis is how long the request took, in milliseconds, from
	// sending it to having the body (0: no response; segments written
	// before trawl recorded it have no such column, and readers take it
	// as 0).
	ResponseMillis int32 `parquet:"response_ms"`
	// Datum is the fetch-list datum the fetch started from, carried so
	// updatedb can apply the schedule without the old CrawlDB row.
	Datum crawldb.Datum `parquet:"datum"`
}

// Content is a fetched page's raw bytes and response headers.
type Content struct {
	URL         string            `parquet:"url"`
	BaseURL     string            `parquet:"base_url"`
	ContentType string            `parquet:"content_type,dict"`
	Headers     map[string]string `parquet:"headers"`
	Body        []byte            `parquet:"body" parquetio:"blob"`
	// Truncated is true when Body was cut at the content limit.
	Truncated bool      `parquet:"truncated"`
	FetchTime time.Time `parquet:"fetch_time,optional,timestamp(millisecond)"`
}

// Outlink is a link found on a page, with its anchor text.
type Outlink struct {
	URL    string `parquet:"url"`
	Anchor string `parquet:"anchor"`
}

// ParseData is what parsing learnt about one page.
type ParseData struct {
	URL string `parquet:"url"`
	// Success is false when the page failed to parse; Message says why.
	Success  bool      `parquet:"success"`
	Message  string    `parquet:"message"`
	Title    string    `parquet:"title"`
	Outlinks []Outlink `parquet:"outlinks,list"`
	// Signature is the content digest used for change detection;
	// FuzzySignature is a text-profile signature that ignores trivial edits.
	Signature      []byte            `parquet:"signature,optional"`
	FuzzySignature []byte            `parquet:"fuzzy_signature,optional"`
	Features       crawldb.Features  `parquet:"features"`
	NoIndex        bool              `parquet:"noindex"`
	NoFollow       bool              `parquet:"nofollow"`
	Canonical      string            `parquet:"canonical"`
	RefreshURL     string            `parquet:"refresh_url"`
	Meta           map[string]string `parquet:"meta"`
}

// ParseText is a page's extracted visible text.
type ParseText struct {
	URL  string `parquet:"url"`
	Text string `parquet:"text" parquetio:"blob"`
}

// ParseUpdate is one CrawlDB update produced by parsing (Nutch's crawl_parse
// datums): the parsed page's signature (StatusSignature) with the links it
// follows, or a single link to a target URL (StatusLinked).
//
// Nutch writes a LINKED datum per outlink; a parsed page's row here
// carries its followed outlinks in Links instead, with the OPIC cash each
// passes on in Score, so that a link is one list entry rather than a row
// of every column. A StatusLinked row is a link that is not among the
// page's outlinks (the refresh target of a nofollow page); updatedb,
// invertlinks and mergesegs read both forms.
type ParseUpdate struct {
	// URL is the datum the update is for: the parsed page, or a link target.
	URL string `parquet:"url"`
	// Status is StatusSignature, StatusParseMeta or StatusLinked.
	Status crawldb.Status `parquet:"status"`
	// FromURL is the page the link was found on (StatusLinked only).
	FromURL string `parquet:"from_url"`
	// Anchor is the link's anchor text (StatusLinked only).
	Anchor string `parquet:"anchor"`
	// Score is the OPIC cash passed along the link (StatusLinked), or
	// along each of Links (StatusSignature).
	Score float32 `parquet:"score"`
	// Signature and Features describe the parsed page (StatusSignature).
	Signature []byte           `parquet:"signature,optional"`
	Features  crawldb.Features `parquet:"features"`
	// FetchTime is the parsed page's fetch time.
	FetchTime time.Time `parquet:"fetch_time,optional,timestamp(millisecond)"`
	// A focused crawl's ratings (zero otherwise): for StatusSignature the
	// page's relevance to the topic, whether it is off topic and its own
	// off-topic hops, which the targets of its Links inherit; for
	// StatusLinked the link's relevance RW and the off-topic hops its
	// target inherits (the linking page's).
	Relevance    float32 `parquet:"relevance"`
	OffTopic     bool    `parquet:"off_topic"`
	OffTopicHops int32   `parquet:"off_topic_hops"`
	// Links are the outlinks of the parsed page that the CrawlDB learns
	// (StatusSignature only): filtered, normalized and, in a focused
	// crawl, those the page's rating follows.
	Links []ParseLink `parquet:"links,list"`
}

// Linked returns u's links in Nutch's form, one StatusLinked update per
// link: u itself when it is one, else an update per entry of u.Links, from
// u.URL, passing on u.Score, with the entry's anchor and relevance and
// u's off-topic hops and fetch time. It returns nil for a row without
// links.
func (u *ParseUpdate) Linked() []ParseUpdate {
	if u.Status == crawldb.StatusLinked {
		return []ParseUpdate{*u}
	}
	if len(u.Links) == 0 {
		return nil
	}
	out := make([]ParseUpdate, len(u.Links))
	for i, l := range u.Links {
		out[i] = ParseUpdate{URL: l.URL, Status: crawldb.StatusLinked, FromURL: u.URL, Anchor: l.Anchor,
			Score: u.Score, FetchTime: u.FetchTime, Relevance: l.Relevance, OffTopicHops: u.OffTopicHops}
	}
	return out
}

// ParseLink is one followed outlink of a parsed page in its crawl_parse
// row (ParseUpdate.Links).
type ParseLink struct {
	// URL is the link's target.
	URL string `parquet:"url"`
	// Anchor is the link's anchor text.
	Anchor string `parquet:"anchor"`
	// Relevance is a focused crawl's rating RW of the link (zero
	// otherwise).
	Relevance float32 `parquet:"relevance"`
}
