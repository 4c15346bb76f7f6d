package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/resolver/resolvertest"
	"github.com/trawl/trawl/urlutil"
)

// TestIPPartitionerWindow feeds one part through the IP partitioning's
// setup, map function and cleanup with a window of 2 hosts and 4 rows:
// candidates wait at most that long, every kept one is emitted once with
// its host's token, the dropped one is not, each host is asked once (a
// host seen again later too), and a cancelled task stops.
func TestIPPartitionerWindow(t *testing.T) {
	now := genNow()
	zone := resolvertest.Serve(t, ipWeb)
	dnsAddr, queries := zone.Addr, zone.Queries
	rows := partitionDB(now)
	// A host seen again after others, as a domain count orders them.
	rows = append(rows, mkDatum("http://a1.alpha.com/again", 2, now, crawldb.StatusDBUnfetched))
	drop := rows[5].URL
	cfg := ipPartConfig{
		// A time-out no loaded test machine reaches: one query per host.
		dns:         resolver.Config{Servers: []string{dnsAddr}, Timeout: time.Minute},
		windowHosts: 2, windowRows: 4,
	}
	keep := func(_ *mapreduce.Task, d *crawldb.Datum) (float32, bool) { return d.Score, d.URL != drop }
	p := partitioning{mode: PartitionIP}
	ip := newIPPartitioner(p, cfg, keep)
	mapFn := ip.mapRow
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	task := &mapreduce.Task{Ctx: ctx1, Job: JobGenerateTopN, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := ip.setup(task); err != nil {
		t.Fatal(err)
	}

	emitted := map[string]string{} // URL -> key
	emit := func(key string, d crawldb.Datum) {
		if _, dup := emitted[d.URL]; dup {
			t.Errorf("%s emitted twice", d.URL)
		}
		emitted[d.URL] = key
	}
	kept := 0
	for i, d := range rows {
		if err := mapFn(task, d, emit); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if d.URL != drop {
			kept++
		}
		if kept-len(emitted) > cfg.windowRows {
			t.Fatalf("after row %d: %d candidates waiting, window %d", i, kept-len(emitted), cfg.windowRows)
		}
	}
	if err := ip.cleanup(task, emit); err != nil {
		t.Fatal(err)
	}
	if len(emitted) != kept || emitted[drop] != "" {
		t.Fatalf("%d of %d candidates emitted (dropped one: %q)", len(emitted), kept, emitted[drop])
	}
	for _, d := range rows {
		if d.URL == drop {
			continue
		}
		host := urlutil.Host(d.URL)
		tok := ipToken(PartitionIP, host)
		want := candidateKey(p.group(host, host, tok), d.Score, d.URL)
		if key := emitted[d.URL]; key != want {
			t.Errorf("%s: key %q, want %q", d.URL, key, want)
		}
	}
	for _, h := range ipWebHosts() {
		_, err := netip.ParseAddr(h)
		if n := queries()[h]; (err == nil && n != 0) || (err != nil && n != 1) {
			t.Errorf("%s asked %d times", h, n)
		}
	}
	// The task's end closed its resolver.
	cancel1()
	if _, err := task.State.(*ipPartTask).dns.LookupNetIP(context.Background(), "not-asked.alpha.com"); !errors.Is(err, resolver.ErrClosed) {
		t.Errorf("after the task: lookup err = %v, want resolver.ErrClosed", err)
	}

	// A cancelled task stops at its next row.
	ctx, cancel := context.WithCancel(context.Background())
	task2 := &mapreduce.Task{Ctx: ctx, Job: JobGenerateTopN, Log: task.Log}
	if err := ip.setup(task2); err != nil {
		t.Fatal(err)
	}
	for _, d := range rows[:10] {
		if err := mapFn(task2, d, func(string, crawldb.Datum) {}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := mapFn(task2, rows[10], func(string, crawldb.Datum) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: err = %v, want context.Canceled", err)
	}
}

// TestPartitioningKeys checks the groups and the partitioner of each mode:
// the token before tokenSep decides the part, and each group's keys sort
// together.
func TestPartitioningKeys(t *testing.T) {
	for _, tc := range []struct {
		p               partitioning
		ck, host, token string
		group           string
		direct          bool
	}{
		{partitioning{mode: PartitionHost}, "a.b.com", "a.b.com", "a.b.com", "a.b.com", true},
		{partitioning{mode: PartitionDomain, countDomain: true}, "b.com", "a.b.com", "b.com", "b.com", true},
		{partitioning{mode: PartitionDomain}, "a.b.com", "a.b.com", "b.com", "b.com\x01a.b.com", true},
		{partitioning{mode: PartitionHost, countDomain: true}, "b.com", "a.b.com", "a.b.com", "a.b.com", false},
		{partitioning{mode: PartitionIP}, "a.b.com", "a.b.com", "10.0.0.1", "10.0.0.1\x01a.b.com", false},
		{partitioning{mode: PartitionIP, countDomain: true}, "b.com", "a.b.com", "10.0.0.1", "10.0.0.1\x01a.b.com", false},
		{partitioning{mode: PartitionIP}, "nx.b.com", "nx.b.com", "nx.b.com", "nx.b.com", false},
	} {
		if g := tc.p.group(tc.ck, tc.host, tc.token); g != tc.group {
			t.Errorf("%+v: group %q, want %q", tc.p, g, tc.group)
		}
		if tc.p.direct() != tc.direct {
			t.Errorf("%+v: direct %v, want %v", tc.p, tc.p.direct(), tc.direct)
		}
		key := candidateKey(tc.group, 1, "http://"+tc.host+"/")
		for n := 1; n < 9; n++ {
			if got, want := tokenPartitioner()(key, n), mapreduce.HashPartitioner(tc.token, n); got != want {
				t.Errorf("%+v: key of %q in part %d of %d, want %d", tc.p, tc.group, got, n, want)
			}
		}
	}
	// A literal host whose address prefixes another group sorts before it.
	lit := candidateKey("10.0.0.1", 0, "http://10.0.0.1/z")
	other := candidateKey("10.0.0.1\x01a.b.com", 9, "http://a.b.com/a")
	if !(lit < other) {
		t.Error("the keys of group 10.0.0.1 do not sort before those of 10.0.0.1\\x01a.b.com")
	}
	if _, _, _, _, err := parseSelectKey(other); err != nil {
		t.Error(err)
	}
}

// BenchmarkIPPartitioner partitions 20,000 candidates of 2,000 hosts by IP
// (a new task, so a new resolver and 2,000 lookups to a DNS server on
// loopback, per iteration).
func BenchmarkIPPartitioner(b *testing.B) {
	const hosts, perHost = 2000, 10
	web := map[string][]string{}
	var rows []crawldb.Datum
	for h := range hosts {
		name := fmt.Sprintf("h%04d.bench.com", h)
		web[name] = []string{fmt.Sprintf("10.%d.%d.1", h/250, h%250)}
		for i := range perHost {
			rows = append(rows, mkDatum(fmt.Sprintf("http://%s/p%d", name, i), float32(i), time.Time{}, crawldb.StatusDBUnfetched))
		}
	}
	dnsAddr := resolvertest.Serve(b, web).Addr
	cfg := ipPartConfig{dns: resolver.Config{Servers: []string{dnsAddr}}}
	keep := func(_ *mapreduce.Task, d *crawldb.Datum) (float32, bool) { return d.Score, true }
	ip := newIPPartitioner(partitioning{mode: PartitionIP}, cfg, keep)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	emitted := 0
	emit := func(string, crawldb.Datum) { emitted++ }
	b.ReportAllocs()
	for b.Loop() {
		task := &mapreduce.Task{Ctx: context.Background(), Job: JobGenerateTopN, Log: log}
		if err := ip.setup(task); err != nil {
			b.Fatal(err)
		}
		for _, d := range rows {
			if err := ip.mapRow(task, d, emit); err != nil {
				b.Fatal(err)
			}
		}
		if err := ip.cleanup(task, emit); err != nil {
			b.Fatal(err)
		}
	}
	if emitted != b.N*len(rows) {
		b.Fatalf("%d emitted, want %d", emitted, b.N*len(rows))
	}
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}
