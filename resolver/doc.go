// Package resolver is trawl's cached asynchronous DNS resolver, after the
// crawler resolver of Chen and Yan: a name cache in front of a
// non-blocking DNS client that keeps many queries in flight over a few UDP
// sockets. It is the only resolver the fetcher uses (fetcher.Resolver and
// fetcher.Prefetcher), and `trawl resolve` looks names up through it.
//
// # Cache
//
// A hash map from the lower-cased name to an entry, the entries also on an
// intrusive doubly linked LRU list: a hit moves its entry to the front, a
// new entry beyond Config.CacheSize (50,000) reuses the least recently used
// one. An answer is kept for Config.RefreshPeriod (30 minutes) whatever
// its upstream TTL, as the paper does. The first hit after that period
// serves the old answer at once and refreshes the entry in the background
// (stale-while-refresh: a crawler would rather connect to a ten-minute-old
// address than wait for a query); a refresh that fails with a server
// failure or time-out keeps the old answer and is tried again after
// Config.NegativeTTL, one that finds the name gone (NXDOMAIN, no address)
// replaces it with the failure. Failures (NXDOMAIN, no address record,
// SERVFAIL, time-out, malformed replies) are cached for Config.NegativeTTL
// (60 s). IP literals are returned as they are, and "localhost" (and names
// under .localhost, RFC 6761) as the loopback addresses, without a query
// or a cache entry; /etc/hosts is not read.
//
// # Client
//
// A lookup that misses starts one resolution of the name; concurrent
// lookups of the same name wait for it (coalescing) rather than query
// again, and a caller whose context ends stops waiting without cancelling
// it for the others. A resolution sends its queries through a bounded send
// queue (Config.QueueSize, 1,024) to one sender goroutine, which gives
// each a random message id unused on its socket, records the query as
// pending under that id and writes it to a connected UDP socket of the
// chosen upstream (Config.SocketsPerServer per server). One receiver
// goroutine per socket reads the replies and hands each to the query
// pending under its id; a reply that is too short, does not parse, is not
// a response, or whose question is not the pending query's (an id reused
// after a time-out, a stray or forged packet) is counted and ignored, so a
// server that answers garbage costs a time-out, never a wrong answer.
//
// Upstream servers are chosen by fewest queries outstanding, skipping
// servers that timed out recently (each consecutive time-out doubles the
// skip, from 100 ms up to 10 s; any reply clears it); a query that times
// out (Config.Timeout, 2 s) or gets SERVFAIL, REFUSED or a malformed
// reply is retried up to Config.Retries (2) times, each on a server not
// yet tried for it when there is one. NXDOMAIN is final. A truncated
// reply (TC bit) is asked again over TCP to the same server. CNAME chains
// are followed within an answer and, when the answer stops at a CNAME,
// with a further query for its target, up to Config.MaxCNAME links; a
// chain that comes back to a name it passed is an error. A records are
// asked; with Config.IPv6, AAAA records too, in parallel, IPv4 addresses
// first.
//
// Prefetch queues names in a bounded backlog (Config.PrefetchBacklog,
// 65,536; names beyond it are dropped and counted) that a dispatcher turns
// into resolutions, at most Config.PrefetchConcurrency at once so that
// lookups a connection is waiting for still find room in the send queue.
//
// # Counters
//
// Stats returns a snapshot of the counters: lookups, hits (fresh and
// stale), negative hits, misses, coalesced waits, refreshes, resolutions
// and queries in flight, queries sent, time-outs, retries, truncated
// replies re-asked over TCP, failed resolutions, ignored replies,
// prefetched and dropped names, evictions, and the 50th, 90th and 99th
// percentile of the time a resolution took (a fixed log-scale histogram:
// eight buckets per doubling, so a percentile is exact to within 9%).
//
// Close stops every goroutine, closes the sockets and fails the lookups
// still waiting with ErrClosed.
package resolver
