package fetcher

import (
	"strconv"

	"github.com/trawl/trawl/crawldb"
)

// Code is the protocol outcome of one fetch, before it becomes a CrawlDB
// fetch status: Nutch's ProtocolStatus codes, with their numbers.
type Code int

// The protocol codes trawl uses (Nutch's ProtocolStatus constants).
const (
	CodeSuccess      Code = 1  // 200: a page
	CodeFailed       Code = 2  // an unexpected failure in the fetcher
	CodeGone         Code = 11 // 400, 410
	CodeMoved        Code = 12 // 300, 301, 305, 308 and other 3xx
	CodeTempMoved    Code = 13 // 302, 303, 307
	CodeNotFound     Code = 14 // 404
	CodeRetry        Code = 15 // try again later (not used for HTTP codes)
	CodeException    Code = 16 // network errors, timeouts, 5xx, 403, other codes
	CodeAccessDenied Code = 17 // 401
	CodeRobotsDenied Code = 18 // robots.txt disallows the URL
	CodeNotModified  Code = 21 // 304
)

// The protocol codes trawl adds to Nutch's, numbered above them. Neither
// is a verdict on the page: the CrawlDB keeps its row as it was.
const (
	// CodeSkipped: the URL was not fetched this round by the fetcher's
	// own choice (the time limit, a stop, the throughput threshold, the
	// exception limit of its server, robots.txt unavailable, a
	// Crawl-delay above the cap); the result's Message says which.
	CodeSkipped Code = 40
	// CodeRefused: the fetcher's policy refused the URL, not the server:
	// its host (or its robots.txt's redirect target) resolves to a
	// private, loopback or link-local address and Options.AllowPrivate
	// is off.
	CodeRefused Code = 41
)

var codeNames = map[Code]string{
	CodeSuccess: "success", CodeFailed: "failed", CodeGone: "gone", CodeMoved: "moved",
	CodeTempMoved: "temp_moved", CodeNotFound: "notfound", CodeRetry: "retry",
	CodeException: "exception", CodeAccessDenied: "access_denied",
	CodeRobotsDenied: "robots_denied", CodeNotModified: "notmodified",
	CodeSkipped: "skipped", CodeRefused: "refused",
}

// String is Nutch's name of the code, in lower case.
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "code_" + strconv.Itoa(int(c))
}

// FetchStatus maps the code to the CrawlDB fetch status, as Nutch's
// FetcherThread does: success → fetch_success; moved → fetch_redir_perm;
// temp_moved → fetch_redir_temp; notmodified → fetch_notmodified; gone,
// notfound and access_denied → fetch_gone; exception, retry and failed →
// fetch_retry. trawl's own statuses: robots_denied →
// fetch_robots_denied (Nutch: fetch_gone), skipped → fetch_skipped,
// refused → fetch_refused.
func (c Code) FetchStatus() crawldb.Status {
	switch c {
	case CodeSuccess:
		return crawldb.StatusFetchSuccess
	case CodeMoved:
		return crawldb.StatusFetchRedirPerm
	case CodeTempMoved:
		return crawldb.StatusFetchRedirTemp
	case CodeNotModified:
		return crawldb.StatusFetchNotModified
	case CodeGone, CodeNotFound, CodeAccessDenied:
		return crawldb.StatusFetchGone
	case CodeRobotsDenied:
		return crawldb.StatusFetchRobotsDenied
	case CodeSkipped:
		return crawldb.StatusFetchSkipped
	case CodeRefused:
		return crawldb.StatusFetchRefused
	default:
		return crawldb.StatusFetchRetry
	}
}

// IsException reports whether the code counts against a server's
// exception limit (Nutch counts ProtocolStatus.EXCEPTION).
func (c Code) IsException() bool { return c == CodeException }

// IsRedirect reports whether the code is a redirect.
func (c Code) IsRedirect() bool { return c == CodeMoved || c == CodeTempMoved }

// HTTPCode maps an HTTP response status to a protocol code, as Nutch's
// HttpBase.getProtocolOutput does: 200 is a success and every other 2xx
// an exception; 304 is not modified; 302, 303 and 307 are temporary
// redirects and every other 3xx permanent; 400 and 410 are gone, 404 not
// found, 401 access denied; everything else (403, 429, 5xx, ...) is an
// exception, which the fetcher records as fetch_retry.
func HTTPCode(status int) Code {
	switch {
	case status == 200:
		return CodeSuccess
	case status == 304:
		return CodeNotModified
	case status == 302 || status == 303 || status == 307:
		return CodeTempMoved
	case status >= 300 && status < 400:
		return CodeMoved
	case status == 400 || status == 410:
		return CodeGone
	case status == 401:
		return CodeAccessDenied
	case status == 404:
		return CodeNotFound
	default:
		return CodeException
	}
}
