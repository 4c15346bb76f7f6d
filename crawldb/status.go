package crawldb

import "fmt"

// Status is a CrawlDatum status, with Nutch's codes. The db_* statuses are
// stored in the CrawlDB; the fetch_* statuses describe one fetch (segment
// crawl_fetch); the others are transient values of updatedb.
type Status uint8

// The CrawlDB statuses (Nutch's CrawlDatum.STATUS_DB_*).
const (
	// StatusDBUnfetched: the page was not yet fetched (or is due again).
	StatusDBUnfetched Status = 0x01
	// StatusDBFetched: the page was fetched successfully.
	StatusDBFetched Status = 0x02
	// StatusDBGone: the page no longer exists (404, 410, too many retries,
	// robots denied).
	StatusDBGone Status = 0x03
	// StatusDBRedirTemp: the page redirects temporarily.
	StatusDBRedirTemp Status = 0x04
	// StatusDBRedirPerm: the page redirects permanently.
	StatusDBRedirPerm Status = 0x05
	// StatusDBNotModified: the last fetch found the page unchanged.
	StatusDBNotModified Status = 0x06
	// StatusDBDuplicate: the page duplicates another (dedup).
	StatusDBDuplicate Status = 0x07
	// StatusDBOrphan: no page links to it any more.
	StatusDBOrphan Status = 0x08
)

// The fetch statuses (Nutch's CrawlDatum.STATUS_FETCH_*).
const (
	StatusFetchSuccess     Status = 0x21
	StatusFetchRetry       Status = 0x22
	StatusFetchGone        Status = 0x23
	StatusFetchRedirTemp   Status = 0x24
	StatusFetchRedirPerm   Status = 0x25
	StatusFetchNotModified Status = 0x26
)

// The fetch statuses trawl adds to Nutch's, so that every URL of a fetch
// list ends with a recorded outcome (Nutch leaves these URLs out of
// crawl_fetch, or records them as gone).
const (
	// StatusFetchSkipped: not fetched this round by the fetcher's own
	// choice (the time limit, an interrupt, the exception limit of its
	// host, robots.txt unavailable, a Crawl-delay above the cap, the
	// throughput threshold); the message says which. updatedb leaves the
	// CrawlDB row as it was, so the URL is due again.
	StatusFetchSkipped Status = 0x27
	// StatusFetchRefused: refused by trawl's own policy, not by the
	// server: the address guard (a private, loopback or link-local
	// address without allow-private), a robots.txt redirect to such an
	// address, an unusable proxy setting. It is no verdict on the page:
	// updatedb leaves the row as it was, so a crawl with another policy
	// fetches it.
	StatusFetchRefused Status = 0x28
	// StatusFetchRobotsDenied: robots.txt disallows the URL for this
	// agent. updatedb makes the row db_gone with the gone schedule, as
	// Nutch does, and records the reason in the row's metadata under
	// ProtocolStatusKey.
	StatusFetchRobotsDenied Status = 0x29
)

// ProtocolStatusKey is the Datum.Metadata key recording why a page is
// db_gone when the reason is not the server's answer (Nutch's "_pst_"),
// e.g. "robots_denied".
const ProtocolStatusKey = "_pst_"

// The transient statuses.
const (
	StatusSignature Status = 0x41 // a signature-only update
	StatusParseMeta Status = 0x42 // parse metadata
	StatusLinked    Status = 0x43 // an outlink's target, found by parsing
	StatusInjected  Status = 0x44 // a seed
)

var statusNames = map[Status]string{
	StatusDBUnfetched:       "db_unfetched",
	StatusDBFetched:         "db_fetched",
	StatusDBGone:            "db_gone",
	StatusDBRedirTemp:       "db_redir_temp",
	StatusDBRedirPerm:       "db_redir_perm",
	StatusDBNotModified:     "db_notmodified",
	StatusDBDuplicate:       "db_duplicate",
	StatusDBOrphan:          "db_orphan",
	StatusFetchSuccess:      "fetch_success",
	StatusFetchRetry:        "fetch_retry",
	StatusFetchGone:         "fetch_gone",
	StatusFetchRedirTemp:    "fetch_redir_temp",
	StatusFetchRedirPerm:    "fetch_redir_perm",
	StatusFetchNotModified:  "fetch_notmodified",
	StatusFetchSkipped:      "fetch_skipped",
	StatusFetchRefused:      "fetch_refused",
	StatusFetchRobotsDenied: "fetch_robots_denied",
	StatusSignature:         "signature",
	StatusParseMeta:         "parse_metadata",
	StatusLinked:            "linked",
	StatusInjected:          "injected",
}

// String returns Nutch's name of the status, as db_fetched.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status_0x%02x", uint8(s))
}

// ParseStatus parses a status name as String returns it.
func ParseStatus(name string) (Status, error) {
	for s, n := range statusNames {
		if n == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("crawldb: unknown status %q", name)
}

// IsDB reports whether s is a db_* status.
func (s Status) IsDB() bool { return s >= StatusDBUnfetched && s <= StatusDBOrphan }
