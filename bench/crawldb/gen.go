package main

import (
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

func runtimeNumCPU() int { return runtime.NumCPU() }

// benchURL is the i-th URL of the synthetic CrawlDB: hosts hold a heavy-tailed
// number of pages (host of URL i drawn from i's hash with a Zipf-like skew).
func benchURL(i int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", i)
	x := h.Sum64()
	host := int(x%997) * int(x>>32%23+1) % 20000
	return fmt.Sprintf("http://h%05d.bench.test/d%d/page-%d.html", host, i%50, i)
}

// generateData writes crawl/crawldb/current (urls rows in parts partitioned
// by URL hash, sorted by URL within a part) and one segment with crawl_fetch
// and crawl_parse for fetched of the URLs, and returns the segment path.
// It is one function on purpose: a benchmark's data, written in the order
// its files are, reads best as one script.
func generateData(crawl string, urls, fetched, links, parts int) (string, error) {
	fsys := storage.NewLocal()
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))

	byPart := make([][]crawldb.Datum, parts)
	for i := range urls {
		u := benchURL(i)
		d := crawldb.Datum{
			URL:           u,
			Host:          u[len("http://") : strings.IndexByte(u[len("http://"):], '/')+len("http://")],
			Status:        crawldb.StatusDBUnfetched,
			FetchTime:     epoch.Add(time.Duration(rng.IntN(60*24)) * time.Hour),
			FetchInterval: 30 * 86400,
			Score:         rng.Float32(),
			ClusterID:     -1,
			Source:        crawldb.SourceAdaptive,
		}
		if i%3 != 0 { // two thirds fetched before, with a history
			d.Status = crawldb.StatusDBFetched
			d.PrevFetchTime = d.FetchTime.Add(-30 * 24 * time.Hour)
			d.ModifiedTime = d.PrevFetchTime
			sig := sha256.Sum256([]byte(u))
			d.Signature = sig[:16]
			d.HTTPStatus = 200
			d.ContentType = "text/html"
			d.FetchCount = int32(1 + i%5)
			for k := range int(d.FetchCount) {
				d.Observe(d.PrevFetchTime.Add(-time.Duration(k)*24*time.Hour), k%2 == 0, time.Time{})
			}
			d.Features = crawldb.Features{Words: int32(rng.IntN(3000)), Outlinks: int32(rng.IntN(100)),
				Inlinks: int32(rng.IntN(50)), Images: int32(rng.IntN(20)), Depth: 2, Bytes: int64(rng.IntN(200000))}
		}
		p := int(fnv1a(u) % uint64(parts))
		byPart[p] = append(byPart[p], d)
	}
	current := filepath.Join(crawl, "crawldb", "current")
	for p, rows := range byPart {
		slices.SortFunc(rows, func(a, b crawldb.Datum) int { return strings.Compare(a.URL, b.URL) })
		if err := parquetio.WriteFile(fsys, filepath.Join(current, fmt.Sprintf("part-r-%05d.parquet", p)), rows); err != nil {
			return "", err
		}
	}
	if err := touch(filepath.Join(current, "_SUCCESS")); err != nil {
		return "", err
	}

	seg := filepath.Join(crawl, "segments", "20260301000000")
	fetchTime := epoch.Add(60 * 24 * time.Hour)
	var fetches []segment.Fetch
	var updates []segment.ParseUpdate
	step := max(urls/fetched, 1)
	for n := 0; n < fetched; n++ {
		i := (n * step) % urls
		u := benchURL(i)
		f := segment.Fetch{URL: u, FetchTime: fetchTime, HTTPStatus: 200, ContentType: "text/html",
			Status: crawldb.StatusFetchSuccess}
		switch r := n % 100; {
		case r < 5:
			f.Status, f.HTTPStatus = crawldb.StatusFetchNotModified, 304
		case r < 10:
			f.Status, f.HTTPStatus, f.Message = crawldb.StatusFetchRetry, 503, "503 Service Unavailable"
		case r < 13:
			f.Status, f.HTTPStatus = crawldb.StatusFetchGone, 404
		case r < 15:
			f.Status, f.HTTPStatus, f.RedirectURL = crawldb.StatusFetchRedirPerm, 301, benchURL(urls+n)
		}
		fetches = append(fetches, f)
		if f.Status != crawldb.StatusFetchSuccess {
			continue
		}
		sig := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", u, n%2))) // half the pages changed
		row := segment.ParseUpdate{URL: u, Status: crawldb.StatusSignature,
			Signature: sig[:16], FetchTime: fetchTime, Score: 0.1,
			Features: crawldb.Features{Words: 500, Outlinks: int32(links), Images: 3, Depth: 2, Bytes: 20000}}
		for k := range links {
			target := benchURL(rng.IntN(urls))
			if k%2 == 1 {
				target = benchURL(urls + 1_000_000 + rng.IntN(urls))
			}
			row.Links = append(row.Links, segment.ParseLink{URL: target, Anchor: "link"})
		}
		updates = append(updates, row)
	}
	if err := writeStage(fsys, filepath.Join(seg, segment.DirFetch), "part-m-00000.parquet", fetches); err != nil {
		return "", err
	}
	if err := writeStage(fsys, filepath.Join(seg, segment.DirCrawlParse), "part-m-00000.parquet", updates); err != nil {
		return "", err
	}
	return seg, nil
}

func writeStage[T any](fsys storage.FS, dir, name string, rows []T) error {
	if err := parquetio.WriteFile(fsys, filepath.Join(dir, name), rows); err != nil {
		return err
	}
	return touch(filepath.Join(dir, "_SUCCESS"))
}

func touch(path string) error { return os.WriteFile(path, nil, 0o644) }

func fnv1a(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
