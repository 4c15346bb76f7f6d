package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/resolver/resolvertest"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// TestGeneratePartitionModeIP runs `trawl generate --partition-mode ip
// --num-fetchers 3 --dns-server ADDR` on a crawl whose hosts share
// addresses: each host's part is FNV-1a of its lowest address mod 3 (of
// its name when it has none, which the log counts), so hosts of one
// address share a fetch task. A bad mode or DNS server is a usage error.
func TestGeneratePartitionModeIP(t *testing.T) {
	web := map[string][]string{
		"a.alpha.com":  {"10.5.0.1"},
		"b.alpha.com":  {"10.5.0.1"},
		"www.beta.org": {"10.5.0.1"},
		"c.gamma.net":  {"10.5.0.7", "10.5.0.3"},
		"d.delta.com":  {"10.5.0.3"},
		"e1.eps.com":   {"10.5.1.1"},
		"e2.eps.com":   {"10.5.1.2"},
		"e3.eps.com":   {"10.5.1.3"},
		"e4.eps.com":   {"10.5.1.4"},
	}
	token := func(host string) string {
		if ips, ok := web[host]; ok {
			return slices.Min(ips) // one-digit last parts: string order is address order
		}
		return host
	}
	addr := resolvertest.Serve(t, web).Addr
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	var seeds strings.Builder
	for _, h := range append(slices.Sorted(maps.Keys(web)), "nx.omega.com", "10.5.0.3") {
		for _, p := range []string{"", "x", "y"} {
			seeds.WriteString("http://" + h + "/" + p + "\n")
		}
	}
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), seeds.String())
	r.ok("--crawl", crawl, "inject", "seeds.txt", "--now", "2026-01-10T00:00:00Z")

	res := r.ok("--crawl", crawl, "generate", "--now", "2026-01-10T01:00:00Z",
		"--partition-mode", "ip", "--num-fetchers", "3", "--dns-server", addr)
	seg := strings.TrimSpace(res.stdout)
	fsys := storage.NewLocal()
	parts, err := parquetio.PartFiles(fsys, filepath.Join(seg, segment.DirGenerate))
	if err != nil {
		t.Fatal(err)
	}
	urls := 0
	for _, p := range parts {
		rows, err := parquetio.ReadAll[segment.Generate](fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rows {
			urls++
			host := urlutil.Host(d.URL)
			if want := mapreduce.HashPartitioner(token(host), 3); filepath.Base(p) != partFileName(want) {
				t.Errorf("%s (token %s) in %s, want %s", d.URL, token(host), filepath.Base(p), partFileName(want))
			}
		}
	}
	if urls != 33 {
		t.Errorf("fetch list of %d URLs, want 33", urls)
	}
	if !strings.Contains(res.stderr, "partition_mode=ip") || !strings.Contains(res.stderr, "unresolved_hosts=1") {
		t.Errorf("generate's log does not report the IP partitioning with 1 unresolved host:\n%s", res.stderr)
	}

	res = r.fails(exitUsage, "--crawl", crawl, "generate", "--partition-mode", "byIP")
	assertCleanError(t, res, "--partition-mode", "host, domain, ip")
	res = r.fails(exitUsage, "--crawl", crawl, "generate", "--partition-mode", "ip", "--dns-server", "dns.example.com")
	assertCleanError(t, res, "generate.partitionMode ip")
}

func partFileName(p int) string { return fmt.Sprintf("part-r-%05d.parquet", p) }
