// Package fetcher fetches web pages politely, as Apache Nutch's fetcher
// does, on a two-level queue that the crawl scheduling policies of the
// high-performance crawler paper (Cao, Jiang and Singh) plug into.
//
// # Model
//
// A run (Fetcher.Run) takes a list of requests. URLs wait in per-server
// queues (a server is a host name: politeness is per host, whatever the
// scheme or port); servers wait in a server queue: ready (their politeness
// delay has passed) in the order a Policy ranks them, or waiting for their
// next turn. Options.MaxConnections workers each hold at most one
// connection: a worker takes the best ready server, fetches its URLs in
// policy order over one kept-alive HTTP/1.1 connection, and gives the
// server back when its queue is empty, the server closes the connection,
// the policy's session limit is reached, or the server's next turn is
// further away than Options.HoldConnection; then it closes the connection
// and takes the next server. So there is never more than one connection
// per server, nor more than MaxConnections in all, and with a politeness
// delay every request starts at least the delay after the previous
// request to the server ended (robots.txt included). Each server's
// transport dials through Options.Resolver, refuses private addresses
// (after resolution, so names that resolve to 127.0.0.1 are refused too)
// unless Options.AllowPrivate, and keeps per-server measurements
// (ServerStats: connections, requests per connection, smoothed connect and
// response times) for ranking policies. BreadthFirst, the default policy,
// is Nutch's order: fetch-list order within a server, servers round-robin.
// A Resolver that is also a Prefetcher is given every host name when the
// run starts, so that an asynchronous resolver can resolve ahead of the
// fetch.
//
// # Nutch's semantics
//
// HTTP statuses map to protocol codes as in Nutch's HttpBase (HTTPCode),
// and codes to CrawlDB fetch statuses as in FetcherThread
// (Code.FetchStatus): 200 → fetch_success; 304 → fetch_notmodified;
// 301, 308 and other 3xx → fetch_redir_perm; 302, 303, 307 →
// fetch_redir_temp; 400, 401, 404, 410 → fetch_gone; everything else
// (403, 429, 5xx, other 2xx) and network errors, timeouts, resets and DNS
// failures → fetch_retry, counted as exceptions of the server. After
// Options.MaxExceptionsPerHost exceptions the server's remaining URLs are
// left unfetched for the round (fetcher.max.exceptions.per.queue), and
// each exception delays the server's next request (an exponential
// backoff, fetcher.exceptions.per.queue.delay).
//
// robots.txt (parsed by github.com/temoto/robotstxt) is fetched once per
// origin and run and follows HttpRobotRulesParser: up to 5 redirects are
// followed; 200 is parsed (an unparsable file allows everything); 4xx,
// 401 and 403 included, allows everything (http.robots.403.allow); 5xx
// defers the server's visits: its URLs are left unfetched for the round
// (http.robots.5xx.defer.visits). A disallowed URL is never requested and
// is reported fetch_gone (protocol code robots_denied). Crawl-delay is
// honoured up to Options.MaxCrawlDelay.
//
// Requests are GETs with the configured agent (required, as Nutch's
// http.agent.name), conditional when the stored copy has an ETag or
// Last-Modified (If-None-Match, If-Modified-Since), accepting gzip and
// deflate, which the fetcher decodes itself with both the decoded and the
// network bytes bounded by Options.ContentLimit, so a compression bomb is
// cut at the limit (Result.Truncated) rather than inflated. Redirects are
// reported with their normalized target (urlutil); with
// Options.FollowRedirects N the fetcher also queues the target as a
// request of its own on its server, up to N hops, each URL at most once
// per run (Nutch's http.redirect.max).
//
// # Where trawl differs from Nutch
//
//   - A robots.txt Crawl-delay longer than Options.ServerDelay lengthens
//     the delay; a shorter one does not shorten it (Nutch replaces the
//     delay with Crawl-delay). Crawl-delay above the cap leaves the
//     server's URLs unfetched for the round (Nutch reports them
//     fetch_gone).
//   - A robots.txt that cannot be fetched because of a network or DNS
//     error ends the server for the run: all its URLs get fetch_retry with
//     the error, at the cost of one failed request (Nutch allows all,
//     does not cache, and lets every URL fail on its own until the
//     exception limit). A refused private address gives fetch_gone
//     (protocol code access_denied).
//   - Options.ReadTimeout bounds the whole response (headers and body)
//     once connected, not each socket read, so a server that trickles a
//     byte per second is cut off too.
//   - The exception backoff doubles with exceptions in a row and resets on
//     a response that is not one.
//   - Followed redirect targets wait for their own server's turn instead
//     of being fetched at once by the same thread.
//   - Conditional requests use the stored ETag and Last-Modified strings
//     only (Nutch sends its own modified time as If-Modified-Since).
//   - A URL that is not http(s) or does not parse is reported fetch_gone;
//     a URL given twice is fetched once.
package fetcher
