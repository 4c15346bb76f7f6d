package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// world is a synthetic web served on loopback for one test, with its
// truth indexed by URL.
type world struct {
	web   *simweb.Web
	srv   *simweb.Server
	pages []simweb.PageInfo
	urls  []string       // page id → URL as served
	byURL map[string]int // URL → page id
	trap  int            // the calendar trap's entry page id, -1 if none
}

func newWorld(t *testing.T, cfg simweb.Config) *world {
	t.Helper()
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{
		HTTPAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", Latency: 0,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	w := &world{web: web, srv: srv, byURL: map[string]int{}, trap: -1}
	for id := range web.NumPages() {
		p := web.Page(id)
		u := srv.URL(id)
		w.pages = append(w.pages, p)
		w.urls = append(w.urls, u)
		w.byURL[u] = id
		if p.Kind == simweb.KindTrap {
			w.trap = id
		}
	}
	return w
}

// testWriter sends server logs to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// seeds writes the web's seed file (the regular hosts' home pages).
func (w *world) seeds(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(p, []byte(strings.Join(w.srv.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// isTrapURL reports whether u is below the calendar trap's entry (those
// URLs are not pages of the web).
func (w *world) isTrapURL(u string) bool {
	if w.trap < 0 {
		return false
	}
	entry := w.urls[w.trap]
	return strings.HasPrefix(u, entry) && u != entry
}

// reach computes, from the truth, the hop distance from the seeds of every
// page a Nutch-style crawl reaches in rounds rounds: round r fetches the
// pages at distance r-1. A fetched HTML page links to its outlinks unless
// it is nofollow; a redirect links to its target (recorded, fetched the
// round after); anything else (404, robots-disallowed, PDF, unresolvable)
// links nowhere. The trap's months below its entry are not pages and are
// not in the result.
func (w *world) reach(rounds int) map[int]int {
	dist := map[int]int{}
	var frontier []int
	for _, u := range w.srv.Seeds() {
		id := w.byURL[u]
		dist[id] = 0
		frontier = append(frontier, id)
	}
	for d := 0; d+1 < rounds; d++ {
		var next []int
		add := func(id int) {
			if _, ok := dist[id]; !ok {
				dist[id] = d + 1
				next = append(next, id)
			}
		}
		for _, id := range frontier {
			p := w.pages[id]
			if !p.RobotsAllowed || p.Status == 0 {
				continue
			}
			switch p.Kind {
			case simweb.KindHome, simweb.KindDirectory, simweb.KindLeaf:
				if p.Status == 200 && !p.Nofollow {
					for _, t := range w.web.Outlinks(id) {
						add(t)
					}
				}
			case simweb.KindRedirect, simweb.KindLoop:
				add(p.Target)
			case simweb.KindTrap:
				for _, t := range w.web.Outlinks(id) {
					add(t)
				}
			}
		}
		frontier = next
	}
	return dist
}

// newEnv is a jobs.Env for a crawl directory, running two tasks at once.
func newEnv(t *testing.T, crawl string) jobs.Env {
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return jobs.Env{
		Engine: mapreduce.Engine{Runner: &mapreduce.LocalRunner{Parallelism: 2, Log: log, TempDir: t.TempDir()}, Log: log},
		Crawl:  crawl,
	}
}

// segmentFetch is a crawl_fetch row and the segment it is in.
type segmentFetch struct {
	segment.Fetch
	seg string
}

// readFetches reads the crawl_fetch rows of every segment, oldest first.
func readFetches(t *testing.T, crawl string) []segmentFetch {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(crawl, "segments", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(segs)
	var out []segmentFetch
	for _, s := range segs {
		parts, err := filepath.Glob(filepath.Join(s, segment.DirFetch, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			rows, err := parquetio.ReadAll[segment.Fetch](storage.NewLocal(), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				out = append(out, segmentFetch{r, filepath.Base(s)})
			}
		}
	}
	return out
}

// readDB reads the CrawlDB into a map by URL.
func readDB(t *testing.T, crawl string) map[string]crawldb.Datum {
	t.Helper()
	r, err := crawldb.Open(storage.NewLocal(), filepath.Join(crawl, "crawldb"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]crawldb.Datum{}
	for d, err := range r.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[d.URL]; dup {
			t.Errorf("CrawlDB holds %s twice", d.URL)
		}
		out[d.URL] = d
	}
	return out
}

// requests groups the access log's page requests (robots.txt and its
// redirect target excluded) by URL.
func (w *world) requests(entries []simweb.Access) map[string][]simweb.Access {
	out := map[string][]simweb.Access{}
	for _, a := range entries {
		if a.Host == "" || a.Path == "/robots.txt" || a.Path == "/robots-main.txt" {
			continue
		}
		u := "http://" + strings.ToLower(a.HostHeader) + a.Path
		out[u] = append(out[u], a)
	}
	return out
}

// fmtIDs lists a few pages for a failure message.
func (w *world) fmtIDs(ids []int) string {
	sort.Ints(ids)
	var b strings.Builder
	for i, id := range ids {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d in all)", len(ids))
			break
		}
		p := w.pages[id]
		fmt.Fprintf(&b, "\n  %s (%s, status %d, robots %v)", w.urls[id], p.Kind, p.Status, p.RobotsAllowed)
	}
	return b.String()
}

// waitIdle waits until the server has logged every request.
func (w *world) waitIdle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.srv.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}
