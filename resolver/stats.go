package resolver

import (
	"math"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Resolver's counters.
type Stats struct {
	// Lookups counts LookupNetIP calls for names (IP literals and
	// localhost are counted in Literals instead).
	Lookups int64
	// Hits are lookups answered from the cache with addresses (Stale of
	// them after the refresh period, each starting a refresh);
	// NegativeHits with a cached failure.
	Hits, Stale, NegativeHits int64
	// Misses are lookups that started a resolution; Coalesced lookups
	// waited for one already running.
	Misses, Coalesced int64
	// Literals are lookups of IP literals and localhost (no query).
	Literals int64
	// Refreshes are background refreshes started by stale hits.
	Refreshes int64
	// Resolving is the number of resolutions in progress, InFlight the
	// number of queries sent and not yet answered or timed out.
	Resolving, InFlight int64
	// Queries counts queries sent over UDP, TCP those re-asked over TCP
	// after a truncated reply (Truncated counts those replies).
	Queries, TCP, Truncated int64
	// Timeouts counts queries no reply came for in time; Retries the
	// queries sent again after a time-out or server failure.
	Timeouts, Retries int64
	// Errors counts resolutions that failed.
	Errors int64
	// Ignored counts replies that matched no pending query, did not parse
	// or did not answer the question asked.
	Ignored int64
	// Prefetched counts names Prefetch queued; PrefetchDropped those it
	// dropped because its backlog was full.
	Prefetched, PrefetchDropped int64
	// Entries is the number of names cached, Evictions the entries
	// dropped to make room.
	Entries, Evictions int64
	// P50, P90 and P99 are percentiles of the time a resolution (a miss
	// or a refresh) took, from the log-scale histogram (upper bucket
	// bounds, within 9%); zero before the first resolution.
	P50, P90, P99 time.Duration
}

// Counters returns the additive counters by name (lookups, hits, ...),
// for a job's counter table: the gauges and percentiles, which do not add
// up across tasks, are left out.
func (s Stats) Counters() map[string]int64 {
	return map[string]int64{
		"lookups": s.Lookups, "hits": s.Hits, "stale_hits": s.Stale, "negative_hits": s.NegativeHits,
		"misses": s.Misses, "coalesced": s.Coalesced, "literals": s.Literals, "refreshes": s.Refreshes,
		"queries": s.Queries, "tcp": s.TCP, "truncated": s.Truncated, "timeouts": s.Timeouts,
		"retries": s.Retries, "errors": s.Errors, "ignored": s.Ignored, "prefetched": s.Prefetched,
		"prefetch_dropped": s.PrefetchDropped, "evictions": s.Evictions,
	}
}

// LogAttrs returns the snapshot as slog key-value pairs.
func (s Stats) LogAttrs() []any {
	return []any{"lookups", s.Lookups, "hits", s.Hits, "stale_hits", s.Stale, "negative_hits", s.NegativeHits,
		"misses", s.Misses, "coalesced", s.Coalesced, "queries", s.Queries, "timeouts", s.Timeouts,
		"retries", s.Retries, "tcp", s.TCP, "errors", s.Errors, "ignored", s.Ignored,
		"prefetched", s.Prefetched, "prefetch_dropped", s.PrefetchDropped, "entries", s.Entries,
		"evictions", s.Evictions, "in_flight", s.InFlight,
		"p50", s.P50, "p90", s.P90, "p99", s.P99}
}

// counters are the Resolver's live counters.
type counters struct {
	lookups, hits, stale, negHits, misses, coalesced, literals, refreshes atomic.Int64
	resolving, inFlight, queries, tcp, truncated, timeouts, retries       atomic.Int64
	errors, ignored, prefetched, prefetchDropped                          atomic.Int64
	latency                                                               histogram
}

// Histogram buckets: bucket i holds durations up to 2^(i/histPerOctave)
// microseconds; the last one holds everything longer.
const (
	histPerOctave = 8
	histBuckets   = 30*histPerOctave + 1 // up to 2^30 µs, about 18 minutes
)

// histogram is a fixed log-scale histogram of durations: constant
// memory, lock-free.
type histogram struct {
	buckets [histBuckets]atomic.Int64
}

func histBucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	i := int(math.Ceil(math.Log2(us) * histPerOctave))
	return min(i, histBuckets-1)
}

func histBound(i int) time.Duration {
	return time.Duration(math.Exp2(float64(i)/histPerOctave) * float64(time.Microsecond))
}

func (h *histogram) observe(d time.Duration) { h.buckets[histBucket(d)].Add(1) }

// percentiles returns the upper bounds of the buckets holding the given
// quantiles (0 < q <= 1), zeros when empty.
func (h *histogram) percentiles(qs ...float64) []time.Duration {
	var counts [histBuckets]int64
	var total int64
	for i := range h.buckets {
		counts[i] = h.buckets[i].Load()
		total += counts[i]
	}
	out := make([]time.Duration, len(qs))
	if total == 0 {
		return out
	}
	for j, q := range qs {
		rank := int64(math.Ceil(q * float64(total)))
		rank = max(rank, 1)
		var cum int64
		for i, c := range counts {
			cum += c
			if cum >= rank {
				out[j] = histBound(i)
				break
			}
		}
	}
	return out
}
