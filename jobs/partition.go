package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/urlutil"
)

// Partition modes of GenerateOptions.PartitionMode (generate.partitionMode,
// Nutch's partition.url.mode byHost, byDomain and byIP).
const (
	PartitionHost   = "host"
	PartitionDomain = "domain"
	PartitionIP     = "ip"
)

// Counter names of the fetch-list partitioning by IP (group
// generate-topn).
const (
	// ctrPartResolved and ctrPartUnresolved count the distinct hosts of
	// the fetch list whose address was found, and those partitioned by
	// their name instead.
	ctrPartResolved   = "partition_resolved"
	ctrPartUnresolved = "partition_unresolved"
	// ctrPartRows counts the candidates the IP partitioning read, for the
	// driver's check that every task read its whole part.
	ctrPartRows = "partition_rows"
)

// tokenSep separates a group's partition token (a domain or an IP address)
// from its host in a selection key. Neither a host nor an address holds
// it, and it sorts after the key's 0 terminator, so a group that is a
// prefix of another still sorts before all of the other's keys.
const tokenSep = '\x01'

// The window of the IP partitioning: candidates wait in it, in input
// order, while the addresses of their hosts are prefetched; the oldest is
// keyed (its host looked up, usually answered by then) when more than
// ipWindowHosts hosts or ipWindowRows candidates wait. The hosts bound the
// queries in flight: with 512 at once (the resolver's prefetch limit),
// replies were lost on loopback (a default 208 KiB socket buffer holds
// some 160 of them) and 14% of the lookups waited out a time-out; with
// 128, none did, and 2,000 hosts took 50 ms.
const (
	ipWindowHosts = 128
	ipWindowRows  = 8192
)

// partitioning is how a fetch list is partitioned, as both generate jobs
// see it: part = FNV-1a(token) mod parts, the token being the host, its
// registered domain or its first IP address (by mode). The count key
// (host, or domain with countDomain) is what MaxPerHost counts.
type partitioning struct {
	mode        string
	countDomain bool
}

// validPartitionMode checks a partition mode.
func validPartitionMode(mode string) error {
	switch mode {
	case PartitionHost, PartitionDomain, PartitionIP:
		return nil
	}
	return fmt.Errorf("partition mode %q is not %q, %q or %q", mode, PartitionHost, PartitionDomain, PartitionIP)
}

// newPartitioning returns the partitioning of a partition mode and a count
// mode ("" meaning PartitionHost and CountHost).
func newPartitioning(mode, countMode string) (partitioning, error) {
	if mode == "" {
		mode = PartitionHost
	}
	if err := validPartitionMode(mode); err != nil {
		return partitioning{}, err
	}
	return partitioning{mode: mode, countDomain: countMode == CountDomain}, nil
}

// same reports whether the partition token is the count key itself (host
// and host, or domain and domain): the groups of the fetch list are then
// the count keys, as before partition modes existed.
func (p partitioning) same() bool {
	return (p.mode == PartitionHost && !p.countDomain) || (p.mode == PartitionDomain && p.countDomain)
}

// direct reports whether a URL's part is a function of its count key, so
// that the selection job, partitioned by it, can write the fetch list
// itself. Otherwise (by IP; by host with a domain count) the selection is
// partitioned by count key and generate-topn partitions the fetch list.
func (p partitioning) direct() bool {
	return p.same() || (p.mode == PartitionDomain && !p.countDomain)
}

// group is the group part of a candidate's key: the count key when it is
// the partition token, else the host, prefixed by the token and tokenSep
// when they differ (a domain's or an address's hosts sort together, each
// host's candidates together). The key's partitioner hashes the token.
func (p partitioning) group(countKey, host, token string) string {
	if p.same() {
		return countKey
	}
	if token == host {
		return host
	}
	return token + string(tokenSep) + host
}

// selectGroup is the group of a candidate in generate-select's key (see
// group): the count key, unless the select job writes the fetch list and
// its token is another (the domain, with a host count). ok is false for a
// URL without a usable host.
func (p partitioning) selectGroup(url, host string) (string, bool) {
	ck := countKey(url, host, p.countDomain)
	if ck == "" || strings.ContainsAny(ck, "\x00\x01") {
		return "", false
	}
	if !p.direct() {
		return ck, true
	}
	return p.nameGroup(ck, ck), true
}

// nameGroup is the group of a candidate whose count key is ck and host
// host, in the modes whose token needs no lookup.
func (p partitioning) nameGroup(ck, host string) string {
	if p.same() {
		return ck
	}
	return p.group(ck, host, p.nameToken(host))
}

// nameToken is the partition token of host in the modes that need no
// lookup: the host, or its registered domain.
func (p partitioning) nameToken(host string) string {
	if p.mode == PartitionDomain {
		return urlutil.DomainOfHost(host)
	}
	return host
}

// countKey is the host, or the registered domain in domain mode, of a URL
// ("" if it has none).
func countKey(url, host string, byDomain bool) string {
	if host == "" {
		host = urlutil.Host(url)
	}
	if host == "" {
		return ""
	}
	if byDomain {
		return urlutil.DomainOfHost(host)
	}
	return host
}

// tokenPartitioner partitions selection keys by their group's token:
// FNV-1a of the group up to tokenSep (mapreduce.HashPartitioner).
func tokenPartitioner() mapreduce.Partitioner {
	return selectPartitioner(func(group string, n int) int {
		if i := strings.IndexByte(group, tokenSep); i >= 0 {
			group = group[:i]
		}
		return mapreduce.HashPartitioner(group, n)
	})
}

// firstAddr is the partition token of a host's addresses: the lowest
// (IPv4 before IPv6), so that every lookup order gives the same one.
func firstAddr(addrs []netip.Addr) string {
	return slices.MinFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) }).String()
}

// ipPartConfig configures the IP partitioning of generate-topn: the
// resolver (its spec's DNS); and its window (0: ipWindowHosts and
// ipWindowRows).
type ipPartConfig struct {
	dns                     resolver.Config
	windowHosts, windowRows int
}

// queuedRow is a candidate waiting for its host's address.
type queuedRow struct {
	d        crawldb.Datum
	countKey string
	host     string
	rank     float32
}

// ipPartTask is one map task of the IP partitioning (its Task.State): it
// reads one whole part of the selection (WholeFiles) with a resolver of
// its own, which the task's end closes.
type ipPartTask struct {
	seen int64
	dns  *resolver.Resolver
	stop func() bool
	// tokens holds each host's token once looked up; "" while prefetched.
	tokens map[string]string
	queue  []queuedRow
	head   int
	// runs counts the runs of one host in the queue.
	runs int
}

// ipPartitioner is generate-topn's map side for the IP partitioning:
// keep(d) reports whether a candidate is within the topN cut-off (others
// are counted and dropped), and the kept ones are keyed by p.group with
// their host's first address as the token. Its setup, mapRow and cleanup
// are the job's MapSetup, map function and MapCleanup.
type ipPartitioner struct {
	p    partitioning
	cfg  ipPartConfig
	keep func(t *mapreduce.Task, d *crawldb.Datum) (float32, bool)
}

// newIPPartitioner returns the IP partitioning of p with cfg and keep.
func newIPPartitioner(p partitioning, cfg ipPartConfig, keep func(t *mapreduce.Task, d *crawldb.Datum) (float32, bool)) *ipPartitioner {
	if cfg.windowHosts <= 0 {
		cfg.windowHosts = ipWindowHosts
	}
	if cfg.windowRows <= 0 {
		cfg.windowRows = ipWindowRows
	}
	return &ipPartitioner{p: p, cfg: cfg, keep: keep}
}

// setup starts a task: its resolver, closed when the task attempt ends
// whether or not it succeeded.
func (ip *ipPartitioner) setup(t *mapreduce.Task) error {
	rc := ip.cfg.dns
	rc.Log = t.Log
	dns, err := resolver.New(rc)
	if err != nil {
		return fmt.Errorf("generate: partition by IP: %w", err)
	}
	st := &ipPartTask{dns: dns, tokens: map[string]string{}}
	st.stop = context.AfterFunc(t.Ctx, func() { dns.Close() })
	t.State = st
	return nil
}

// mapRow queues a kept candidate, prefetching its host's address, and
// keys the oldest waiting ones while the window is full.
func (ip *ipPartitioner) mapRow(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
	if err := t.Ctx.Err(); err != nil {
		return fmt.Errorf("generate: partition by IP: %w", err)
	}
	st := t.State.(*ipPartTask)
	st.seen++
	if rank, ok := ip.keep(t, &d); ok {
		host := countKey(d.URL, d.Host, false)
		if _, asked := st.tokens[host]; !asked {
			st.tokens[host] = ""
			st.dns.Prefetch(t.Ctx, []string{host})
		}
		if n := len(st.queue); n == st.head || st.queue[n-1].host != host {
			st.runs++
		}
		st.queue = append(st.queue, queuedRow{d: d, countKey: countKey(d.URL, d.Host, ip.p.countDomain), host: host, rank: rank})
	}
	for st.runs > ip.cfg.windowHosts || len(st.queue)-st.head > ip.cfg.windowRows {
		if err := st.emitHead(t, ip.p, emit); err != nil {
			return err
		}
	}
	return nil
}

// cleanup keys the candidates still waiting at the end of the task's part,
// then closes its resolver and counts what it did.
func (ip *ipPartitioner) cleanup(t *mapreduce.Task, emit mapreduce.Emit[crawldb.Datum]) error {
	st := t.State.(*ipPartTask)
	for len(st.queue) > st.head {
		if err := st.emitHead(t, ip.p, emit); err != nil {
			return err
		}
	}
	st.finish(t)
	return nil
}

// emitHead keys and emits the oldest waiting candidate, looking its host
// up if it is the first of its host.
func (st *ipPartTask) emitHead(t *mapreduce.Task, p partitioning, emit mapreduce.Emit[crawldb.Datum]) error {
	r := &st.queue[st.head]
	token := st.tokens[r.host]
	if token == "" {
		addrs, err := st.dns.LookupNetIP(t.Ctx, r.host)
		switch {
		case err == nil && len(addrs) > 0:
			token = firstAddr(addrs)
			t.Count(ctrPartResolved, 1)
		case t.Ctx.Err() != nil || errors.Is(err, resolver.ErrClosed):
			return fmt.Errorf("generate: partition by IP: %w", errors.Join(t.Ctx.Err(), err))
		default:
			// As Nutch's URLPartitioner: a host without an address is
			// partitioned by its name.
			token = r.host
			t.Count(ctrPartUnresolved, 1)
			t.Log.Debug("no address for a host: partitioned by its name", "host", r.host, "err", err)
		}
		st.tokens[r.host] = token
	}
	emit(candidateKey(p.group(r.countKey, r.host, token), r.rank, r.d.URL), r.d)
	host := r.host
	*r = queuedRow{}
	st.head++
	if st.head == len(st.queue) || st.queue[st.head].host != host {
		st.runs--
	}
	if st.head == len(st.queue) {
		st.queue, st.head = st.queue[:0], 0
	} else if st.head >= 1024 && st.head*2 >= len(st.queue) {
		n := copy(st.queue, st.queue[st.head:])
		clear(st.queue[n:])
		st.queue, st.head = st.queue[:n], 0
	}
	return nil
}

// finish closes the task's resolver and counts what it did.
func (st *ipPartTask) finish(t *mapreduce.Task) {
	st.stop()
	stats := st.dns.Stats()
	st.dns.Close()
	t.Count(ctrPartRows, st.seen)
	for name, n := range stats.Counters() {
		t.Count("dns_"+name, n)
	}
	t.Log.Info("partitioned by IP", append([]any{"rows", st.seen, "hosts", len(st.tokens)}, stats.LogAttrs()...)...)
}
