// Package urlutil normalizes URLs, filters them, and derives the host and
// registered-domain keys that trawl partitions and scopes by. It plays the
// part of Nutch's urlnormalizer-basic and urlnormalizer-regex (with the
// default regex-normalize.xml), the urlfilter-suffix, urlfilter-regex and
// db.ignore.external.links settings.
//
// # Normalization
//
// Normalize maps every spelling of a URL to one canonical string, so the
// CrawlDB holds one row per page. It is idempotent:
// Normalize(Normalize(x)) == Normalize(x). The rules, in order:
//
//   - Leading and trailing spaces and C0 controls are trimmed, and tab, CR
//     and LF inside the URL are removed (as browsers do with links split
//     over lines); any other control character is an error.
//   - The scheme is lower-cased. For http, https, ftp, ws and wss a
//     backslash counts as a slash in the path (browsers' rule), and any
//     number of slashes may follow the colon.
//   - The host is percent-decoded, converted to punycode if it is an IDN
//     (golang.org/x/net/idna, Lookup profile), lower-cased, and loses one
//     trailing dot. It must consist of letters, digits, '-', '_' and dots,
//     with labels of 1 to 63 bytes. A host whose last label is numeric must
//     be a dotted-decimal IPv4 address; IPv6 literals are written in their
//     canonical form. Underscores and "--" labels are accepted because real
//     hosts use them (the IDNA Lookup profile alone would reject them).
//   - Userinfo (user name and password before '@' in the authority) is
//     removed, so credentials never reach the CrawlDB, a segment or a log;
//     HasUserinfo tells whether a URL had any. Redact removes userinfo
//     from raw text (a seed line, an error message) that is echoed in
//     logs, and NormalizeError holds its input redacted.
//   - The default port (80 for http and ws, 443 for https and wss, 21 for
//     ftp) and an empty port are dropped; leading zeros go.
//   - The fragment is dropped.
//   - Percent-encoding: escapes of unreserved characters (ALPHA DIGIT - . _
//     ~) are decoded, other escapes get upper-case hex digits, a '%' that
//     starts no valid escape becomes %25, and bytes that may not appear
//     raw (space, non-ASCII, "<>[]{}|^`\ and the like) are encoded as UTF-8
//     percent-escapes. Reserved characters are never decoded (%2F, %26, %3D
//     stay), and '+' in the query stays '+'.
//   - Path: dot segments are resolved (/a/./b/../c becomes /a/c, also when
//     written %2E), runs of slashes collapse to one, a trailing slash is
//     kept, and an empty path becomes "/".
//   - Session ids are removed from path parameters (;jsessionid=...) and
//     from the query (jsessionid, phpsessid, sid, sessionid with optional
//     leading '_' and l, j or bv_ prefixes, and aspsessionid*, all
//     case-insensitive), as Nutch's default regex-normalize.xml does.
//   - The query loses empty parameters (&&, a leading or trailing &) and a
//     trailing '?'. Parameter order is kept, as in Nutch.
//
// Where trawl differs from Nutch, deliberately: IDN hosts become punycode
// (Nutch keeps Unicode by default); control characters other than tab, CR
// and LF are rejected rather than percent-encoded; everything after '#' is
// dropped (Nutch's regex rule keeps a query written after a fragment); a
// trailing '.' is removed from the host only, not from the path; and a
// session id is removed as one path parameter or one query parameter, never
// the rest of the path after it.
//
// ResolveReference resolves a link against its page's URL and normalizes
// the result; Normalizer.Base takes a base URL apart once for the many
// links of one page. An http or https URL, or a link, that is normal
// already (the common case) is recognised in one scan and returned without
// being rebuilt; anything else takes the general path.
//
// # Filters
//
// A Filter accepts or rejects one URL and says why, so jobs can count
// rejections by reason. Filters is a chain; NewFilters builds the usual one
// (scheme, length, suffix, path loop, regex rules) from FilterOptions, and
// ParseRegexRules reads Nutch's regex-urlfilter.txt syntax. Scope decides
// whether an outlink stays within its source's host or registered domain.
//
// # Keys
//
// Host, Domain and Depth give the partition and scope keys of a URL.
//
// Nothing in this package has mutable global state; all values are safe for
// concurrent use once built.
package urlutil
