//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hiddenSite is a loopback site whose home page links to one page only,
// and whose robots.txt names a sitemap index of two sitemaps (the second
// gzipped) listing three pages no page links to.
type hiddenSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newHiddenSite(t *testing.T) *hiddenSite {
	t.Helper()
	s := &hiddenSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *hiddenSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	base := s.URL
	page := func(title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>%s</p></body></html>", title, body)
	}
	switch r.URL.Path {
	case "/":
		page("Home", `Welcome. <a href="/linked.html">the only linked page</a>`)
	case "/linked.html":
		page("Linked", "A page the home page links to.")
	case "/hidden/one.html", "/hidden/two.html", "/hidden/three.html":
		page("Hidden "+r.URL.Path, "A page no page links to; only the sitemaps list it.")
	case "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\n\nSitemap: %s/sitemap_index.xml\n", base)
	case "/sitemap_index.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%[1]s/maps/pages.xml</loc><lastmod>2026-01-03</lastmod></sitemap>
  <sitemap><loc>%[1]s/maps/more.xml.gz</loc></sitemap>
</sitemapindex>`, base)
	case "/maps/pages.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>%[1]s/hidden/one.html</loc><lastmod>2026-01-02T03:04:05+00:00</lastmod><changefreq>daily</changefreq><priority>0.9</priority></url>
  <url><loc>%[1]s/hidden/two.html</loc></url>
</urlset>`, base)
	case "/maps/more.xml.gz":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		fmt.Fprintf(zw, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>%[1]s/hidden/three.html</loc><lastmod>2025-12-24</lastmod><changefreq>weekly</changefreq><priority>0.3</priority></url>
</urlset>`, base)
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		_, _ = w.Write(b.Bytes())
	default:
		http.NotFound(w, r)
	}
}

// hiddenPage is what the test expects of a page only the sitemaps list.
type hiddenPage struct {
	path     string
	score    float64
	interval float64 // seconds
	lastmod  string  // RFC 3339, "" for none
}

var hiddenPages = []hiddenPage{
	{"/hidden/one.html", 0.9, 86400, "2026-01-02T03:04:05Z"},
	{"/hidden/two.html", 0.5, 0, ""},
	{"/hidden/three.html", 0.3, 7 * 86400, "2025-12-24T00:00:00Z"},
}

// crawlHidden runs one round of `trawl crawl` of the site with extra
// arguments and returns the runner and the crawl directory.
func crawlHidden(t *testing.T, r *runner, site *hiddenSite, name string, extra ...string) string {
	t.Helper()
	crawl := filepath.Join(r.dir, name)
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), site.URL+"/\n")
	args := []string{"--crawl", crawl, "crawl", "--seeds", "seeds.txt", "--agent", "e2ebot", "--allow-private",
		"--server-delay", "0s", "--rounds", "1", "--schedule", "default", "--now", "2026-02-01T00:00:00Z"}
	r.ok(append(args, extra...)...)
	return crawl
}

// TestCrawlSitemapsFindUnlinkedPages crawls a site whose robots.txt names
// a sitemap index with the real binary: with --sitemaps the pages only the
// sitemaps list are fetched in the first round, with their sitemap's
// lastmod, changefreq and priority mapped; with the sitemap.* settings
// off they are fetched without them; without --sitemaps they are never
// found.
func TestCrawlSitemapsFindUnlinkedPages(t *testing.T) {
	t.Parallel()
	site := newHiddenSite(t)
	r := newRunner(t)

	crawl := crawlHidden(t, r, site, "with", "--sitemaps")
	defaultInterval := datumJSON(t, r, crawl, site.URL+"/")["fetch_interval"].(float64)
	for _, p := range hiddenPages {
		d := datumJSON(t, r, crawl, site.URL+p.path)
		want := p.interval
		if want == 0 {
			want = defaultInterval
		}
		if d["status"] != "db_fetched" || d["score"] != p.score || d["fetch_interval"] != want {
			t.Errorf("%s: status %v score %v interval %v, want db_fetched %v %v", p.path, d["status"], d["score"], d["fetch_interval"], p.score, want)
		}
		if p.lastmod != "" && d["modified_time"] != p.lastmod {
			t.Errorf("%s: modified_time %v, want the sitemap's lastmod %s", p.path, d["modified_time"], p.lastmod)
		}
	}
	site.mu.Lock()
	for _, p := range []string{"/sitemap_index.xml", "/maps/pages.xml", "/maps/more.xml.gz", "/hidden/one.html"} {
		if site.hits[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, site.hits[p])
		}
	}
	site.mu.Unlock()

	// The settings off: found and fetched, but with inject's score and
	// the schedule's interval, and no lastmod.
	crawl = crawlHidden(t, r, site, "off", "--sitemaps", "--no-lastmod", "--no-changefreq", "--no-priority")
	for _, p := range hiddenPages {
		d := datumJSON(t, r, crawl, site.URL+p.path)
		if d["status"] != "db_fetched" || d["score"] == p.score || d["fetch_interval"] != defaultInterval ||
			(p.lastmod != "" && d["modified_time"] == p.lastmod) {
			t.Errorf("settings off, %s: %v", p.path, d)
		}
	}

	// Without --sitemaps no link leads to them.
	crawl = crawlHidden(t, r, site, "without")
	dump := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout
	if strings.Contains(dump, "/hidden/") || !strings.Contains(dump, site.URL+"/linked.html") {
		t.Errorf("without --sitemaps:\n%s", dump)
	}
}

// TestSitemapCommand runs trawl sitemap on a CrawlDB: from robots.txt by
// default, from a file of sitemap URLs, and a clean error for a file
// without any.
func TestSitemapCommand(t *testing.T) {
	t.Parallel()
	site := newHiddenSite(t)
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), site.URL+"/\n")
	r.ok("--crawl", crawl, "inject", "seeds.txt")
	base := []string{"--crawl", crawl, "sitemap", "--agent", "e2ebot", "--allow-private", "--server-delay", "0s"}

	res := r.fails(exitUsage, "--crawl", crawl, "sitemap", "--allow-private")
	assertCleanError(t, res, "user agent")
	writeTestFile(t, filepath.Join(r.dir, "none.txt"), "# nothing\nnot-a-url\n")
	res = r.run(append(base, "--sitemap-urls", "none.txt")...)
	if res.code == 0 || !strings.Contains(res.stderr, "no sitemaps to read") {
		t.Errorf("a file without sitemap URLs: %s", res)
	}

	// Only the gzipped sitemap, named in a file: robots.txt is read for
	// its rules, not its sitemaps; the page is outside /maps/, so strict
	// scope refuses it, and --no-strict takes it.
	writeTestFile(t, filepath.Join(r.dir, "maps.txt"), site.URL+"/maps/more.xml.gz\n")
	r.ok(append(base, "--sitemap-urls", "maps.txt")...)
	if res := r.run("--crawl", crawl, "readdb", "url", site.URL+"/hidden/three.html"); res.code == 0 {
		t.Errorf("an out-of-scope URL was added: %s", res.stdout)
	}
	r.ok(append(base, "--sitemap-urls", "maps.txt", "--no-strict")...)
	if d := datumJSON(t, r, crawl, site.URL+"/hidden/three.html"); d["status"] != "db_unfetched" || d["score"] != 0.3 {
		t.Errorf("three.html: %v", d)
	}
	// From robots.txt, the default without a file: the index's pages.
	r.ok(base...)
	dump := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout
	for _, p := range hiddenPages {
		if !strings.Contains(dump, site.URL+p.path) {
			t.Errorf("%s missing from the CrawlDB:\n%s", p.path, dump)
		}
	}
	res = r.ok("sitemap", "--help")
	if !strings.Contains(res.stdout, "Examples:") {
		t.Errorf("sitemap --help has no examples:\n%s", res.stdout)
	}
}

// TestCrawlSitemapsHadoopEngine runs the crawl with --sitemaps under
// --engine hadoop through the Hadoop Streaming emulator: the sitemap jobs
// go through `hadoop jar`, and the pages the sitemaps list are fetched
// with their fields mapped, as on the local engine.
func TestCrawlSitemapsHadoopEngine(t *testing.T) {
	t.Parallel()
	home := fakeHadoopHome(t)
	site := newHiddenSite(t)
	r := newRunner(t)
	r.bin = plainBinPath
	invLog := filepath.Join(r.dir, "invocations.jsonl")
	r.env = []string{"HADOOP_HOME=" + home, "STREAMEMU_STATE=" + filepath.Join(r.dir, "emu"), "STREAMEMU_LOG=" + invLog}
	crawl := crawlHidden(t, r, site, "hadoop", "--engine", "hadoop", "--sitemaps")
	r.env = nil
	for _, p := range hiddenPages {
		d := datumJSON(t, r, crawl, site.URL+p.path)
		if d["status"] != "db_fetched" || d["score"] != p.score {
			t.Errorf("%s under hadoop: %v", p.path, d)
		}
	}
	var jobs []string
	for _, inv := range invocations(t, invLog) {
		if inv.Exit != 0 {
			t.Errorf("hadoop jar of %s exited %d", inv.TrawlJob, inv.Exit)
		}
		jobs = append(jobs, inv.TrawlJob)
	}
	if !slices.Contains(jobs, "sitemap-hosts") || !slices.Contains(jobs, "sitemap") {
		t.Errorf("the sitemap jobs did not run through hadoop jar: %v", jobs)
	}
}
