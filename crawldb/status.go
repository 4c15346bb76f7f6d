package crawldb

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/trawl/trawl/arrowio"
)

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

// The transient statuses (Nutch's CrawlDatum.STATUS_SIGNATURE,
// STATUS_INJECTED, STATUS_LINKED and STATUS_PARSE_META).
const (
	StatusSignature Status = 0x41 // a signature-only update
	StatusInjected  Status = 0x42 // a seed
	StatusLinked    Status = 0x43 // an outlink's target, found by parsing
	StatusParseMeta Status = 0x44 // parse metadata
)

// StatusInfo describes one status: its code, Nutch's name and what it
// means.
type StatusInfo struct {
	Status  Status
	Name    string
	Meaning string
}

// statusTable lists every status in code order.
var statusTable = []StatusInfo{
	{StatusDBUnfetched, "db_unfetched", "CrawlDB: not fetched yet, or due again"},
	{StatusDBFetched, "db_fetched", "CrawlDB: fetched successfully"},
	{StatusDBGone, "db_gone", "CrawlDB: gone (404, 410, too many retries, robots.txt denied)"},
	{StatusDBRedirTemp, "db_redir_temp", "CrawlDB: redirects temporarily"},
	{StatusDBRedirPerm, "db_redir_perm", "CrawlDB: redirects permanently"},
	{StatusDBNotModified, "db_notmodified", "CrawlDB: the last fetch found the page unchanged"},
	{StatusDBDuplicate, "db_duplicate", "CrawlDB: a duplicate of another page (dedup)"},
	{StatusDBOrphan, "db_orphan", "CrawlDB: no page links to it any more"},
	{StatusFetchSuccess, "fetch_success", "crawl_fetch: fetched (200)"},
	{StatusFetchRetry, "fetch_retry", "crawl_fetch: a transient failure, retried in a later round"},
	{StatusFetchGone, "fetch_gone", "crawl_fetch: gone (404, 410, ...)"},
	{StatusFetchRedirTemp, "fetch_redir_temp", "crawl_fetch: a temporary redirect (302, 303, 307)"},
	{StatusFetchRedirPerm, "fetch_redir_perm", "crawl_fetch: a permanent redirect (301, 308)"},
	{StatusFetchNotModified, "fetch_notmodified", "crawl_fetch: not modified (304)"},
	{StatusFetchSkipped, "fetch_skipped", "crawl_fetch (trawl's): not fetched this round by the fetcher's choice; the message says why"},
	{StatusFetchRefused, "fetch_refused", "crawl_fetch (trawl's): refused by trawl's policy (address guard, proxy), not by the server"},
	{StatusFetchRobotsDenied, "fetch_robots_denied", "crawl_fetch (trawl's): robots.txt disallows the URL; it becomes db_gone"},
	{StatusSignature, "signature", "crawl_parse: the parsed page's signature and features, and the links it follows with the score each passes on"},
	{StatusInjected, "injected", "inject: a seed"},
	{StatusLinked, "linked", "crawl_parse: a link's target outside the page's own links (a nofollow page's refresh target), with the score the link passes on"},
	{StatusParseMeta, "parse_metadata", "crawl_parse: metadata from a parser"},
}

// Statuses returns every status trawl knows, in code order.
func Statuses() []StatusInfo { return append([]StatusInfo(nil), statusTable...) }

// String returns Nutch's name of the status, as db_fetched.
func (s Status) String() string {
	for _, i := range statusTable {
		if i.Status == s {
			return i.Name
		}
	}
	return fmt.Sprintf("status_0x%02x", uint8(s))
}

// ParseStatus parses a status given by name (db_fetched, in any case) or
// by number, decimal (2) or hexadecimal (0x02). A bad one is an error
// listing the valid names and numbers.
func ParseStatus(s string) (Status, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, i := range statusTable {
		if i.Name == t {
			return i.Status, nil
		}
	}
	if n, err := strconv.ParseUint(t, 0, 8); err == nil {
		for _, i := range statusTable {
			if uint64(i.Status) == n {
				return i.Status, nil
			}
		}
	}
	return 0, fmt.Errorf("crawldb: unknown status %q (want a name or number: %s)", s, statusList())
}

// statusList lists the statuses as "db_unfetched (1), db_fetched (2), ...".
func statusList() string {
	parts := make([]string, len(statusTable))
	for k, i := range statusTable {
		parts[k] = fmt.Sprintf("%s (%d)", i.Name, i.Status)
	}
	return strings.Join(parts, ", ")
}

// StatusHelp is a table of every status, one per line with its number,
// name and meaning, for help texts; each line starts with indent.
func StatusHelp(indent string) string {
	var b strings.Builder
	for _, i := range statusTable {
		fmt.Fprintf(&b, "%s%3d  %-20s %s\n", indent, i.Status, i.Name, i.Meaning)
	}
	return b.String()
}

// StatusEnum names the statuses for an Arrow stream: a status column is
// followed by its name, dictionary encoded.
func StatusEnum() arrowio.Enum {
	names := make(map[uint64]string, len(statusTable))
	for _, i := range statusTable {
		names[uint64(i.Status)] = i.Name
	}
	return arrowio.Enum{Type: reflect.TypeFor[Status](), Names: names}
}

// IsDB reports whether s is a db_* status.
func (s Status) IsDB() bool { return s >= StatusDBUnfetched && s <= StatusDBOrphan }
