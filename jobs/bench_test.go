package jobs

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/hostdb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// benchRows is the size of the benchmarks' synthetic CrawlDB.
const benchRows = 200_000

var benchEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchURL is the i-th URL of the synthetic CrawlDB: 2,000 hosts of
// unequal size.
func benchURL(i int) string {
	h := (i * 7919) % 2000
	if i%5 == 0 {
		h = i % 40 // a few big hosts
	}
	return fmt.Sprintf("http://h%04d.bench.test/d%d/page-%d.html", h, i%50, i)
}

// benchDB is a CrawlDB of n rows: two thirds fetched before, with
// signatures, histories and features.
func benchDB(n int) []crawldb.Datum {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]crawldb.Datum, n)
	for i := range rows {
		u := benchURL(i)
		d := mkDatum(u, rng.Float32(), benchEpoch.Add(time.Duration(rng.IntN(60*24))*time.Hour), crawldb.StatusDBUnfetched)
		if i%3 != 0 {
			d.Status = crawldb.StatusDBFetched
			d.PrevFetchTime = d.FetchTime.Add(-30 * 24 * time.Hour)
			d.ModifiedTime = d.PrevFetchTime
			sig := sha256.Sum256([]byte(u))
			d.Signature = sig[:16]
			d.HTTPStatus, d.ContentType = 200, "text/html"
			d.FetchCount = int32(1 + i%5)
			for k := range int(d.FetchCount) {
				d.Observe(d.PrevFetchTime.Add(-time.Duration(k)*24*time.Hour), k%2 == 0, time.Time{})
			}
			d.Features = crawldb.Features{Words: int32(rng.IntN(3000)), Outlinks: int32(rng.IntN(100)), Inlinks: int32(rng.IntN(50)),
				Images: int32(rng.IntN(20)), Depth: 2, Bytes: int64(rng.IntN(200000))}
		}
		rows[i] = d
	}
	return rows
}

// benchCrawl writes the synthetic CrawlDB into a new crawl and keeps a copy
// of its files to restore between iterations.
func benchCrawl(b *testing.B) (Env, string) {
	b.Helper()
	env := testEnv(b)
	localRunner(env).MemoryBudget = 256 << 20
	localRunner(env).Parallelism = 0
	env.DBParts = 4
	writeDB(b, env, benchDB(benchRows), 4)
	saved := filepath.Join(b.TempDir(), "saved-current")
	copyDir(b, filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName), saved)
	return env, saved
}

func copyDir(b *testing.B, from, to string) {
	b.Helper()
	os.RemoveAll(to)
	if err := os.MkdirAll(to, 0o755); err != nil {
		b.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		in, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}

// BenchmarkCopyLimit reads every CrawlDB row and writes it back, part by
// part: the floor that generate and updatedb are measured against.
func BenchmarkCopyLimit(b *testing.B) {
	env, saved := benchCrawl(b)
	fsys := storage.NewLocal()
	files, err := parquetio.PartFiles(fsys, saved)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(env.Crawl, "copy")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.RemoveAll(out)
		for _, f := range files {
			rows, err := parquetio.ReadAll[crawldb.Datum](fsys, f)
			if err != nil {
				b.Fatal(err)
			}
			if err := parquetio.WriteFile(fsys, filepath.Join(out, filepath.Base(f)), rows); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGenerate generates a fetch list (topN 50,000, at most 100 per
// host, 4 parts) from the synthetic CrawlDB, where about 80% is due.
func BenchmarkGenerate(b *testing.B) {
	env, _ := benchCrawl(b)
	now := benchEpoch.Add(48 * 24 * time.Hour)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, TopN: 50_000, MaxPerHost: 100, NumFetchers: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if res.Selected != 50_000 {
			b.Fatalf("selected %d", res.Selected)
		}
		os.RemoveAll(res.Segment)
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGenerateNoLimits selects every due URL into 4 parts.
func BenchmarkGenerateNoLimits(b *testing.B) {
	env, _ := benchCrawl(b)
	now := benchEpoch.Add(48 * 24 * time.Hour)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, NumFetchers: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(res.Segment)
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkUpdateDB merges a segment of 20,000 fetches (with signatures
// and 10 outlinks each, half to new URLs) into the synthetic CrawlDB.
func BenchmarkUpdateDB(b *testing.B) {
	env, saved := benchCrawl(b)
	rng := rand.New(rand.NewPCG(3, 4))
	seg := filepath.Join(env.Crawl, "segments", "20260301000000")
	ft := benchEpoch.Add(60 * 24 * time.Hour)
	var fetches []segment.Fetch
	var updates []segment.ParseUpdate
	db := benchDB(benchRows)
	for n := 0; n < benchRows/10; n++ {
		d := db[n*10]
		f := fetchOf(d, crawldb.StatusFetchSuccess, ft)
		switch r := n % 100; {
		case r < 5:
			f = fetchOf(d, crawldb.StatusFetchNotModified, ft)
		case r < 10:
			f = fetchOf(d, crawldb.StatusFetchRetry, ft)
		case r < 13:
			f = fetchOf(d, crawldb.StatusFetchGone, ft)
		}
		fetches = append(fetches, f)
		if f.Status != crawldb.StatusFetchSuccess {
			continue
		}
		sig := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", d.URL, n%2)))
		updates = append(updates, segment.ParseUpdate{URL: d.URL, Status: crawldb.StatusSignature, Signature: sig[:16], FetchTime: ft,
			Features: crawldb.Features{Words: 500, Outlinks: 10, Images: 3, Depth: 2, Bytes: 20000}})
		for k := 0; k < 10; k++ {
			target := benchURL(rng.IntN(benchRows))
			if k%2 == 1 {
				target = benchURL(benchRows + rng.IntN(benchRows))
			}
			updates = append(updates, linkUpdate(d.URL, target, OPICLinkCash(d.Score, 10), ft))
		}
	}
	writeSegmentStage(b, seg, segment.DirFetch, fetches)
	writeSegmentStage(b, seg, segment.DirCrawlParse, updates)
	current := filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu0 := cpuTime()
		res, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{seg}, Now: ft, Remerge: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - cpu0
		if res.Fetched != int64(len(fetches)) {
			b.Fatalf("fetched %d", res.Fetched)
		}
		copyDir(b, saved, current)
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(benchRows)/float64(b.N), "cpu-ns/row")
}

// benchHostDb writes a HostDb of 2,000 hosts, the synthetic CrawlDB's
// among them, in which every tenth host has a failure streak of 5 (160 of
// them hold URLs).
func benchHostDb(b *testing.B, env Env) {
	b.Helper()
	var rows []hostdb.Host
	for h := range 2000 {
		row := hostdb.Host{Host: fmt.Sprintf("h%04d.bench.test", h), Successes: 10}
		if h%10 == 3 {
			row.Failures, row.FailureStreak = 5, 5
		}
		rows = append(rows, row)
	}
	cur := filepath.Join(env.Crawl, "hostdb", hostdb.CurrentName)
	writeParquet(b, filepath.Join(cur, partName(0)), rows)
	if err := hostdb.WriteVersion(storage.NewLocal(), cur, benchEpoch); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGenerateHostDb is BenchmarkGenerateNoLimits with the HostDb
// filter on (generate.hostdb.maxFailureStreak 3), skipping a tenth of the
// hosts.
func BenchmarkGenerateHostDb(b *testing.B) {
	env, _ := benchCrawl(b)
	benchHostDb(b, env)
	now := benchEpoch.Add(48 * 24 * time.Hour)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, NumFetchers: 4, HostDbMaxFailureStreak: 3})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if res.HostDbHosts != 200 || res.HostDbFailing == 0 {
			b.Fatalf("skipped %d hosts, %d URLs", res.HostDbHosts, res.HostDbFailing)
		}
		os.RemoveAll(res.Segment)
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkUpdateHostDb builds the HostDb of the synthetic CrawlDB (no
// segment), over the previous version.
func BenchmarkUpdateHostDb(b *testing.B) {
	env, _ := benchCrawl(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := UpdateHostDb(context.Background(), env, UpdateHostDbOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Hosts != 1608 { // benchURL's: 1,600 small hosts and 8 big ones
			b.Fatalf("%d hosts", res.Hosts)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
