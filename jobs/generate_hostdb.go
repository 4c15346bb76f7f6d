package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"

	"github.com/trawl/trawl/hostdb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Generate's HostDb filter (Nutch's generate.hostdb): the driver reads the
// HostDb once and writes the hosts to skip, with the reason, to a side
// file in the new segment (hostSkipFile); each map task of generate-select
// reads that file once per process (hostSkipTable) and drops the
// candidates of those hosts, counting them by reason. Memory is one map
// entry per skipped host; with the filter off, or no HostDb, or no host to
// skip, the job has no side file and no per-URL lookup.

// The counters of the HostDb filter (URLs skipped, by reason).
const (
	ctrHostFailing   = "hostdb_failure_streak"
	ctrHostDNSFailed = "hostdb_dns_failed"
)

// hostSkipFile is the side file's name inside the new segment; it is
// removed when the selection is done.
const hostSkipFile = "_hostdb_skip.parquet"

// The reasons a host is skipped (hostSkipRow.Reason).
const (
	skipStreak uint8 = iota + 1
	skipDNS
)

// hostSkipRow is a host generate skips, and why.
type hostSkipRow struct {
	Host   string `parquet:"host"`
	Reason uint8  `parquet:"reason"`
}

// hostDbOn reports whether o asks for the HostDb filter.
func (o GenerateOptions) hostDbOn() bool {
	return o.HostDbMaxFailureStreak > 0 || o.HostDbSkipDNSFailed
}

// hostSkipReason returns why generate with o skips h, or 0.
func (o GenerateOptions) hostSkipReason(h *hostdb.Host) uint8 {
	switch {
	case o.HostDbMaxFailureStreak > 0 && h.FailureStreak >= o.HostDbMaxFailureStreak:
		return skipStreak
	case o.HostDbSkipDNSFailed && h.DNSFailed():
		return skipDNS
	}
	return 0
}

// prepareHostSkips reads the crawl's HostDb, if the filter is on and there
// is one, and writes the hosts to skip to the side file; it records the
// HostDb version and the number of hosts in the result, and returns the
// side file's URI ("" if none is needed).
func (g *generation) prepareHostSkips(ctx context.Context) (string, error) {
	if !g.o.hostDbOn() {
		return "", nil
	}
	r, err := hostdb.Open(g.cp.fs, hostDbPath(g.cp))
	if errors.Is(err, fs.ErrNotExist) {
		g.log.Info("no HostDb: no host is skipped", "hostdb", HostDbDir(g.cp.crawl))
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	var rows []hostSkipRow
	for h, err := range r.All(ctx) {
		if err != nil {
			return "", fmt.Errorf("generate: %w", err)
		}
		if why := g.o.hostSkipReason(&h); why != 0 {
			rows = append(rows, hostSkipRow{Host: h.Host, Reason: why})
		}
	}
	g.res.HostDbVersion, g.res.HostDbHosts = r.Version(), int64(len(rows))
	g.log.Info("HostDb read", "hostdb", HostDbDir(g.cp.crawl), "version", r.Version(), "hosts_skipped", len(rows))
	if len(rows) == 0 {
		return "", nil
	}
	if err := parquetio.WriteFile(g.cp.fs, path.Join(g.segPath, hostSkipFile), rows); err != nil {
		return "", fmt.Errorf("generate: write the hosts to skip: %w", err)
	}
	return storage.Join(g.segURI, hostSkipFile), nil
}

// removeHostSkips removes the side file, if any.
func (g *generation) removeHostSkips() {
	if g.res.HostDbHosts == 0 {
		return
	}
	if err := g.cp.fs.RemoveAll(path.Join(g.segPath, hostSkipFile)); err != nil {
		g.log.Warn("removing the hosts to skip failed", "file", storage.Join(g.segURI, hostSkipFile), "err", err)
	}
}

// hostSkips is a map task's view of the hosts to skip (Task.State).
type hostSkips map[string]uint8

// hostSkipTable is generate-select's side file, read once per process,
// when the first map task asks.
type hostSkipTable struct {
	uri   string
	mu    sync.Mutex
	hosts hostSkips // nil until read
}

// setup is the select job's MapSetup: it puts the table into t.State,
// reading it through t.Storage the first time (a failed read is tried
// again by the next task).
func (ht *hostSkipTable) setup(t *mapreduce.Task) error {
	ht.mu.Lock()
	defer ht.mu.Unlock()
	if ht.hosts == nil {
		res := t.Storage
		if res == nil {
			res = storage.NewResolver()
		}
		fsys, p, err := res.Resolve(ht.uri)
		if err != nil {
			return fmt.Errorf("generate: hosts to skip: %w", err)
		}
		rows, err := parquetio.ReadAll[hostSkipRow](fsys, p)
		if err != nil {
			return fmt.Errorf("generate: hosts to skip: %w", err)
		}
		hosts := make(hostSkips, len(rows))
		for _, r := range rows {
			hosts[r.Host] = r.Reason
		}
		ht.hosts = hosts
	}
	t.State = ht.hosts
	return nil
}

// hostSkipCounter returns the counter of the reason the candidate's host
// is skipped, or "" (always "" without a side file: t.State is then not a
// hostSkips).
func hostSkipCounter(t *mapreduce.Task, host string) string {
	hs, ok := t.State.(hostSkips)
	if !ok {
		return ""
	}
	switch hs[host] {
	case skipStreak:
		return ctrHostFailing
	case skipDNS:
		return ctrHostDNSFailed
	}
	return ""
}
