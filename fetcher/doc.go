// Package fetcher fetches web pages politely, as Apache Nutch's fetcher
// does, on a two-level queue that the crawl scheduling policies of the
// high-performance crawler paper (Cao, Jiang and Singh) plug into.
//
// # Model
//
// A run (Fetcher.Run) takes a list of requests. URLs wait in per-server
// queues (a server is a host name: politeness is per host, whatever the
// scheme or port; or, with Options.QueueMode QueueByIP, an IP address);
// servers wait in a server queue: ready (their politeness delay has
// passed) in the order a Policy ranks them, or waiting for their next
// turn. Options.MaxConnections workers each hold at most one connection:
// a worker takes the best ready server, fetches its URLs in policy order
// over one kept-alive HTTP/1.1 connection, and ends the session when the
// server's queue is empty, the server closes the connection, the
// policy's session limit is reached, or the server's next turn is
// further away than Options.HoldConnection. A session that ends while
// the server still has URLs, its turn is near (within HoldConnection)
// and no ready server ranks above it goes on with the same worker: over
// the same connection if it is open, else over a new one at once (a
// server that closes after every response, HTTP/1.0 style, is not sent
// to the back of the queue after each page). Otherwise the worker closes
// the connection and takes the next server. Scheduling is
// non-preemptive, as in the paper: an open connection is never closed
// for a better-ranked server. So there is never more than one connection
// per server, nor more than MaxConnections in all, and with a politeness
// delay every request starts at least the delay after the previous
// request to the server ended (robots.txt included). With
// Options.DelayBetween DelayBetweenConnections the delay separates
// connections instead (a per-server delay between connections): the
// requests of a connection go back to back (a robots.txt Crawl-delay
// still separates them), and a server's next connection starts at least
// the delay after the last request of its previous one ended; a session
// is then up to P requests on one kept-alive connection, as in the
// paper. Each server's transport dials through Options.Resolver, refuses
// private addresses (after resolution, so names that resolve to
// 127.0.0.1 are refused too, and so are robots.txt redirects to them)
// unless Options.AllowPrivate, and keeps per-server measurements
// (ServerStats: connections, requests per connection, smoothed connect and
// response times) for the ranking policies. A Resolver that is also a
// Prefetcher is given every host name when the run starts, and each new
// host of a followed redirect target before the target is queued, so
// that an asynchronous resolver can resolve ahead of the fetch.
//
// # Scheduling policies
//
// The four policies of the crawl scheduling paper (Cao, Jiang and
// Singh), chosen by name with PolicyByName:
//
//   - BreadthFirst ("breadth-first", the default): URLs in fetch-list
//     order, servers in the order they become ready, sessions unlimited.
//     Nutch's order.
//   - Performance ("performance"): servers by R(s,i) = P(s,i)/T(s,i),
//     URLs in fetch-list order.
//   - Quality ("quality"): URLs by Request.Priority (the CrawlDB score),
//     servers by the Priority of their best URL.
//   - Capacity ("capacity"): servers by C(s,i) = Q(s,i)/T(s,i), where
//     Q(s,i) is the sum of the Priorities of the P(s,i) best URLs of s;
//     URLs by Priority.
//
// Performance, Quality and Capacity end a session after P(s,i) URLs, so
// the server is ranked again with what was measured (it keeps its
// worker if it is still the best). A server's rank is computed each time
// it enters the ready heap, so new measurements count from its next turn.
//
// P(s,i), the pages the i-th connection to s is expected to fetch, is
// the paper's min(RequestsPerConnection(s), TaskURLs(s)): the requests
// per connection learnt from the connections s closed
// (ServerStats.RequestsPerConnection, smoothed; 1 for a server that
// closes after every response), 50 while s has closed none, and the
// length of s's URL queue. P is 1 when keep-alive is off
// (Options.DisableKeepAlive) or when s's politeness delay is longer than
// Options.HoldConnection (each request then has a connection of its
// own).
//
// T(s,i), the time that connection is expected to take, is the paper's
// "opening and closing the connection plus transferring P pages", with
// the HTTP/1.1 factor p = 1.2 (KeepAliveGain), plus the politeness delay
// between the requests of a session, which the paper's impolite crawler
// did not have and which dominates polite crawls:
//
//	T = (2·c + P·r/g + (P−1)·d) / a
//
// where c is s's smoothed connect time (ServerStats.ConnectTime: name
// resolution and TCP connect; doubled, for opening and closing, as the
// paper does), r its smoothed response time (request sent to body read;
// a request that failed after taking time, a read timeout for one,
// counts too, so a hanging or trickling server looks slow), g = p = 1.2
// when P > 1 (the pages of a kept-alive session overlap connection
// reuse and TCP slow start: the paper's gain of HTTP/1.1) and 1 when
// P = 1, d the politeness delay between the requests of a session
// (ServerDelay or robots.txt Crawl-delay; with DelayBetweenConnections
// only Crawl-delay, which also decides P's comparison with the hold),
// and a = (Requests+1)/(Requests+Exceptions+1) the share of s's
// requests that did not fail (Laplace-smoothed), which stretches T for
// failing servers so that they sink below working ones. c and r of a
// server not measured yet are the run's means over the servers measured
// so far (DefaultTimeEstimate, 100 ms, before any), so that a new server
// is neither starved nor always first. Smoothing is the paper's
// new = 0.8·old + 0.2·measured. R = P/T is then the expected pages per
// second of a connection to s, C = Q/T its expected quality per second;
// both are in ServerInfo (Session, Time) for any Policy to use, and
// ServerInfo.SumPriorities gives Q in O(P log P) by walking the top of
// the server's URL heap.
//
// Performance, Quality and Capacity rank slow servers last; on a finite
// fetch list such a server would start late and then need its queued
// URLs one after another, each a politeness delay and a response apart,
// making the crawl's tail. So these policies (MakespanGuard) put a
// makespan guard above their ranking, as a bare client's "busiest host
// first" rule: with
//
//	W(s) = n·(d + r)
//
// the serial time of s (n its queued URLs, d the delay between its
// requests, r its smoothed response time, or the run's mean while
// unmeasured; with DelayBetweenConnections plus (⌈n/P⌉−1)·ServerDelay;
// ServerInfo.Serial) and E = ΣW / Options.MaxConnections the
// estimated remaining crawl time (ServerInfo.Remaining), a ready server
// with W(s) ≥ E is served before any other, the one with the largest W
// first (when the largest W is above ΣW/MaxConnections it is the
// remaining crawl time, and that server is the first served). The
// scheduler keeps ΣW up to date as URLs are queued and taken and
// measurements come in (O(1) each) and the ready servers in a second
// heap by W, so a decision costs O(log n); a server that is not urgent
// ends its session (keeps no worker) while an urgent one is ready.
//
// # Politeness by IP
//
// With QueueByIP (Nutch's fetcher.queue.mode byIP), each host name is
// resolved when the run starts (all of them at once, through the
// Resolver, as many at a time as there are connections) or, for a
// redirect target, when it is queued; hosts that resolve to one address
// (the lowest the dialer may use) share one server: one connection at a
// time, one politeness delay, one exception count, one robots.txt
// Crawl-delay (the longest of its hosts'). A host that does not resolve
// is a server of its own, and fails as it would by host. The connection
// is closed before a request to another host (or scheme or port) of the
// server, so one address never has two connections from the fetcher. A
// robots.txt that defers visits (5xx) or an unreachable one ends all the
// server's hosts for the round, as it does for Nutch's byIP queues.
//
// # Never stalling
//
// Options.ReadTimeout bounds every response and Options.ConnectTimeout
// every resolution and connect; exceptions back the server off and,
// after MaxExceptionsPerHost, drop it for the round; the ranking
// policies sink slow and failing servers (see T). A run as a whole ends
// at Options.Deadline (Nutch's fetcher.timelimit.mins) or when its
// throughput stays below Options.ThroughputThreshold pages per second
// for ThroughputRetries checks in a row after ThroughputCheckAfter
// (Nutch's fetcher.throughput.threshold.*), or when Options.Stop is
// closed (an interrupt): requests in flight are abandoned, and the URLs
// not fetched get skipped results (Stats.Unfetched), so the CrawlDB keeps
// them due for the next round. Only a cancelled context aborts a run
// without them.
//
// # Outcomes
//
// Every request gets exactly one Result. Besides the page's own outcome
// (below), the fetcher reports three of its own choices with statuses
// trawl adds to Nutch's:
//
//   - fetch_skipped (CodeSkipped): not fetched this round, for a reason
//     the Message gives: "skipped: robots.txt unavailable (HTTP 503)",
//     "skipped: Crawl-delay 60s above the cap 30s", "skipped: 10
//     exceptions on the host", "skipped: fetch time limit reached",
//     "skipped: fetch stopped by an interrupt", "skipped: throughput
//     below the threshold". The CrawlDB keeps the URL as it was, due
//     again. Nutch leaves these URLs out of its segment.
//   - fetch_refused (CodeRefused): the address guard refused the URL's
//     host, or its robots.txt's redirect target (a private, loopback or
//     link-local address without Options.AllowPrivate); the Message
//     names the setting that allows it, and the run logs one warning
//     with the number of URLs and hosts refused. It is no verdict on the
//     page: the CrawlDB keeps the URL as it was (Nutch has no such
//     guard).
//   - fetch_robots_denied (CodeRobotsDenied): robots.txt disallows the
//     URL; the CrawlDB makes it gone, as Nutch does with fetch_gone, but
//     it is counted apart from the pages that are gone (Stats.Gone and
//     Stats.RobotsDenied are disjoint).
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
// skipped for the round (fetcher.max.exceptions.per.queue), and
// each exception delays the server's next request (an exponential
// backoff, fetcher.exceptions.per.queue.delay).
//
// A 429 (Too Many Requests) or 503 (Service Unavailable) answer with a
// Retry-After header (RFC 9110: delay-seconds, or an HTTP-date taken
// relative to the answer's Date) holds the server's next request back at
// least that long, as polite crawlers do; a server asking for more than
// Options.MaxRetryAfter is skipped for the round, as one whose
// Crawl-delay is above the cap. The answers are counted by host
// (Stats.RetryAfter) and the page's Result carries the wait. Nutch
// ignores the header.
//
// robots.txt (parsed by github.com/temoto/robotstxt) is fetched once per
// origin and run and follows HttpRobotRulesParser: up to 5 redirects are
// followed; 200 is parsed (an unparsable file allows everything); 4xx,
// 401 and 403 included, allows everything (http.robots.403.allow); 5xx
// defers the server's visits: its URLs are skipped for the round
// (http.robots.5xx.defer.visits). A disallowed URL is never requested and
// is reported fetch_robots_denied (protocol code robots_denied; Nutch's
// fetch_gone). Crawl-delay is honoured up to Options.MaxCrawlDelay.
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
//     delay with Crawl-delay). Crawl-delay above the cap skips the
//     server's URLs for the round (Nutch reports them fetch_gone).
//   - A robots.txt that cannot be fetched because of a network or DNS
//     error ends the server for the run: all its URLs get fetch_retry with
//     the error, at the cost of one failed request (Nutch allows all,
//     does not cache, and lets every URL fail on its own until the
//     exception limit). A refused private address, the server's own or
//     a robots.txt redirect target's, gives all its URLs fetch_refused
//     (protocol code refused).
//   - Options.ReadTimeout bounds the whole response (headers and body)
//     once connected, not each socket read, so a server that trickles a
//     byte per second is cut off too.
//   - The exception backoff doubles with exceptions in a row and resets on
//     a response that is not one.
//   - Followed redirect targets wait for their own server's turn instead
//     of being fetched at once by the same thread.
//   - Conditional requests use the stored ETag and Last-Modified strings
//     only (Nutch sends its own modified time as If-Modified-Since).
//   - The throughput threshold counts low checks in a row (a check that
//     is not low starts the count again); Nutch counts all low checks.
//     It counts responses of any status, not only successes.
//   - A URL that is not http(s) or does not parse is reported fetch_gone;
//     a URL given twice is fetched once.
package fetcher
