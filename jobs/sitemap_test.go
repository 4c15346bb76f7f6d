package jobs

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/urlutil"
)

// sitemapSite is a loopback site whose robots.txt names a sitemap index
// of two sitemaps (one gzipped), listing pages no page links to.
type sitemapSite struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
	agents   map[string]bool
	// onRequest, if set, runs before each answer.
	onRequest func(path string)
}

func newSitemapSite(t *testing.T) *sitemapSite {
	t.Helper()
	s := &sitemapSite{requests: map[string]int{}, agents: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *sitemapSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[r.URL.Path]++
	s.agents[r.Header.Get("User-Agent")] = true
	hook := s.onRequest
	s.mu.Unlock()
	if hook != nil {
		hook(r.URL.Path)
	}
	base := s.URL
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\n\nSitemap: %s/sitemap_index.xml\nSitemap: http://elsewhere.example/sitemap.xml\n", base)
	case "/sitemap_index.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>%[1]s/maps/a.xml</loc></sitemap>
<sitemap><loc>%[1]s/maps/b.xml.gz</loc></sitemap>
<sitemap><loc>%[1]s/maps/a.xml</loc></sitemap>
<sitemap><loc>%[1]s/private/c.xml</loc></sitemap>
<sitemap><loc>http://elsewhere.example/d.xml</loc></sitemap>
</sitemapindex>`, base)
	case "/maps/a.xml":
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/hidden/one.html</loc><lastmod>2026-01-02</lastmod><changefreq>daily</changefreq><priority>0.9</priority></url>
<url><loc>%[1]s/hidden/two.html</loc></url>
<url><loc>%[1]s/</loc><priority>0.1</priority><changefreq>yearly</changefreq></url>
<url><loc>http://elsewhere.example/x.html</loc></url>
</urlset>`, base)
	case "/maps/b.xml.gz":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		fmt.Fprintf(zw, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/hidden/three.html</loc><lastmod>2026-02-03T04:05:06Z</lastmod><changefreq>weekly</changefreq><priority>0.3</priority></url>
<url><loc>%[1]s/files/archive.zip</loc></url>
<url><loc>%[1]s/hidden/./../hidden/four.html#top</loc></url>
</urlset>`, base)
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		_, _ = w.Write(b.Bytes())
	default:
		http.NotFound(w, r)
	}
}

func (s *sitemapSite) count(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[p]
}

// sitemapEnv injects the site's home page into a new crawl and returns
// the environment and sitemap options for it.
func sitemapEnv(t *testing.T, site *sitemapSite) (Env, SitemapOptions) {
	t.Helper()
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, site.URL+"/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}}); err != nil {
		t.Fatal(err)
	}
	o := SitemapOptions{
		FromRobots: true,
		Now:        time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Fetch:      FetchOptions{Agent: "sitemaptest", AllowPrivate: true, NoServerDelay: true},
	}
	return env, o
}

func TestSitemapFromRobotsIndexGzip(t *testing.T) {
	site := newSitemapSite(t)
	env, o := sitemapEnv(t, site)
	before := readDB(t, env)[site.URL+"/"]
	o.Filters = URLFilterOptions{Options: urlutil.DefaultFilterOptions()}
	res, err := Sitemap(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if len(db) != 5 {
		t.Fatalf("CrawlDB has %d rows: %v", len(db), db)
	}
	if four, ok := db[site.URL+"/hidden/four.html"]; !ok || four.Score != 0.5 {
		t.Errorf("four.html, normalized: %+v", four)
	}
	day := int32(86400)
	one := db[site.URL+"/hidden/one.html"]
	if one.Status != crawldb.StatusDBUnfetched || one.Score != 0.9 || one.FetchInterval != day ||
		!one.ModifiedTime.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) || one.Source != crawldb.SourceInjected ||
		!one.FetchTime.Equal(o.Now) {
		t.Errorf("one.html: %+v", one)
	}
	two := db[site.URL+"/hidden/two.html"]
	if two.Status != crawldb.StatusDBUnfetched || two.Score != 0.5 || two.FetchInterval != before.FetchInterval || !two.ModifiedTime.IsZero() {
		t.Errorf("two.html: %+v (default interval %d)", two, before.FetchInterval)
	}
	three := db[site.URL+"/hidden/three.html"]
	if three.Score != 0.3 || three.FetchInterval != 7*day || !three.ModifiedTime.Equal(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)) {
		t.Errorf("three.html: %+v", three)
	}
	if home := db[site.URL+"/"]; home.Score != before.Score || home.FetchInterval != before.FetchInterval {
		t.Errorf("the existing home page changed: %+v, was %+v", home, before)
	}
	want := SitemapResult{Hosts: 1, Fetched: 3, RobotsDenied: 1, OffHost: 2, Listed: 6, Refused: 1, OutOfScope: 1, Added: 4, Existing: 1, Total: 5}
	got := SitemapResult{Hosts: res.Hosts, Fetched: res.Fetched, Failed: res.Failed, RobotsDenied: res.RobotsDenied, OffHost: res.OffHost,
		Listed: res.Listed, Refused: res.Refused, OutOfScope: res.OutOfScope, Added: res.Added, Existing: res.Existing, Total: res.Total}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("result\n%+v\nwant\n%+v", got, want)
	}
	for _, p := range []string{"/robots.txt", "/sitemap_index.xml", "/maps/a.xml", "/maps/b.xml.gz"} {
		if n := site.count(p); n != 1 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	if n := site.count("/private/c.xml"); n != 0 {
		t.Errorf("a sitemap robots.txt disallows was fetched")
	}
	if !site.agents["sitemaptest/trawl/0.3"] || len(site.agents) != 1 {
		t.Errorf("user agents %v", site.agents)
	}
	assertNoTempDirs(t, env)
}

func TestSitemapSettingsOffAndOverwrite(t *testing.T) {
	site := newSitemapSite(t)
	env, o := sitemapEnv(t, site)
	o.IgnoreLastMod, o.IgnoreChangeFreq, o.IgnorePriority = true, true, true
	if _, err := Sitemap(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	home := db[site.URL+"/"]
	for _, p := range []string{"/hidden/one.html", "/hidden/three.html"} {
		d := db[site.URL+p]
		if d.Status != crawldb.StatusDBUnfetched || d.Score != DefaultInjectScore || d.FetchInterval != home.FetchInterval || !d.ModifiedTime.IsZero() {
			t.Errorf("%s with the settings off: %+v", p, d)
		}
	}
	// Overwrite: the existing home page takes the sitemap's fields.
	o = SitemapOptions{FromRobots: true, Overwrite: true, Fetch: o.Fetch}
	res, err := Sitemap(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	db = readDB(t, env)
	if h := db[site.URL+"/"]; h.Score != 0.1 || h.FetchInterval != 365*86400 {
		t.Errorf("home page overwritten: %+v", h)
	}
	if d := db[site.URL+"/hidden/one.html"]; d.Score != 0.9 || d.FetchInterval != 86400 {
		t.Errorf("one.html overwritten: %+v", d)
	}
	if res.Added != 0 || res.Existing != 6 || res.Updated != 6 {
		t.Errorf("overwrite run: %+v", res)
	}
}

func TestSitemapURLFileAndStrictScope(t *testing.T) {
	site := newSitemapSite(t)
	env, o := sitemapEnv(t, site)
	list := filepath.Join(t.TempDir(), "sitemaps.txt")
	// a.xml named directly: its scope is /maps/, so /hidden/ and / are
	// out of it; the bad lines are skipped.
	writeFile(t, list, "# sitemaps\n"+site.URL+"/maps/a.xml\nnot a url\nftp://example.com/x.xml\n\n")
	o.FromRobots, o.SitemapURLs = false, []string{list}
	res, err := Sitemap(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SitemapURLs != 1 || res.BadLines != 2 || res.Fetched != 1 || res.OutOfScope != 4 || res.Added != 0 {
		t.Errorf("strict: %+v", res)
	}
	if site.count("/sitemap_index.xml") != 0 {
		t.Error("robots.txt sitemaps read without FromRobots")
	}
	o.NotStrict = true
	if res, err = Sitemap(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if res.OutOfScope != 0 || res.Added != 3 || len(db) != 4 {
		t.Errorf("not strict: %+v, %d rows", res, len(db))
	}
	if _, ok := db["http://elsewhere.example/x.html"]; !ok {
		t.Error("not strict: the other host's URL was not added")
	}
}

func TestSitemapPrivateAddressRefused(t *testing.T) {
	site := newSitemapSite(t)
	env, o := sitemapEnv(t, site)
	o.Fetch.AllowPrivate = false
	res, err := Sitemap(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 0 || res.Fetched != 0 || site.count("/robots.txt") != 0 {
		t.Errorf("loopback fetched without AllowPrivate: %+v, %d robots requests", res, site.count("/robots.txt"))
	}
	if res.Counters.Get(JobSitemap, ctrSMHostsSkipped) != 1 {
		t.Errorf("host not counted as skipped: %v", res.Counters)
	}
}

func TestSitemapFailureLeavesCrawlDB(t *testing.T) {
	site := newSitemapSite(t)
	env, o := sitemapEnv(t, site)
	before := readDB(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	site.onRequest = func(p string) {
		if p == "/maps/b.xml.gz" {
			cancel()
		}
	}
	_, err := Sitemap(ctx, env, o)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	after := readDB(t, env)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("CrawlDB changed by a failed run:\n%v\nwas\n%v", after, before)
	}
	assertNoTempDirs(t, env)
}

func TestSitemapNothingToRead(t *testing.T) {
	env := testEnv(t)
	o := SitemapOptions{FromRobots: true, Fetch: FetchOptions{Agent: "x"}}
	if _, err := Sitemap(context.Background(), env, o); !errors.Is(err, ErrNoSitemaps) {
		t.Errorf("empty CrawlDB: %v", err)
	}
	if _, err := os.Stat(env.Crawl); !os.IsNotExist(err) {
		t.Errorf("a failed run on no crawl left its directory: %v", err)
	}
	list := filepath.Join(t.TempDir(), "s.txt")
	writeFile(t, list, "nothing here\n")
	o = SitemapOptions{SitemapURLs: []string{list}, Fetch: FetchOptions{Agent: "x"}}
	if _, err := Sitemap(context.Background(), env, o); !errors.Is(err, ErrNoSitemaps) || !strings.Contains(err.Error(), "1 lines rejected") {
		t.Errorf("file without URLs: %v", err)
	}
	if err := (SitemapOptions{FromRobots: true}).Validate(); err == nil {
		t.Error("no agent accepted")
	}
	if err := (SitemapOptions{Fetch: FetchOptions{Agent: "x"}}).Validate(); err == nil {
		t.Error("no source of sitemaps accepted")
	}
}

func TestSitemapSpecsRoundTrip(t *testing.T) {
	checkRoundTrip(t, sitemapHostsJob{CrawlDB: "/c/crawldb/current", URLs: "/c/u.parquet", Out: "/c/hosts", NumReduce: 3})
	checkRoundTrip(t, sitemapJob{CrawlDB: "/c/crawldb/current", Hosts: "/c/hosts", Out: "/c/out", NumReduce: 2,
		LastMod: true, Priority: true, Strict: true, MaxDepth: 3, Threads: 2, Score: 1,
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Filters: filterSpec{MaxLength: 100},
		Fetch: FetchOptions{Agent: "bot", AllowPrivate: true, ServerDelay: time.Second}})
}

// assertNoTempDirs checks that no temporary directory is left in the
// CrawlDB directory.
func assertNoTempDirs(t *testing.T, env Env) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), crawldb.TempPrefix) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestSitemapRobotsRules: a robots.txt Crawl-delay above the cap and a
// robots.txt answering 503 leave their hosts' sitemaps unread, as the
// fetcher leaves such hosts for the round.
func TestSitemapRobotsRules(t *testing.T) {
	var mu sync.Mutex
	sitemapHits := 0
	handler := func(robots func(w http.ResponseWriter)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robots(w)
				return
			}
			mu.Lock()
			sitemapHits++
			mu.Unlock()
			fmt.Fprint(w, "http://127.0.0.1/x\n")
		}
	}
	slow := httptest.NewServer(handler(func(w http.ResponseWriter) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 100\nSitemap: /s.txt\n")
	}))
	defer slow.Close()
	down := httptest.NewServer(handler(func(w http.ResponseWriter) { http.Error(w, "busy", http.StatusServiceUnavailable) }))
	defer down.Close()
	env := testEnv(t)
	list := filepath.Join(t.TempDir(), "sitemaps.txt")
	writeFile(t, list, slow.URL+"/s.txt\n"+down.URL+"/s.txt\n")
	o := SitemapOptions{SitemapURLs: []string{list}, Fetch: FetchOptions{Agent: "t", AllowPrivate: true, NoServerDelay: true, MaxCrawlDelay: time.Second}}
	res, err := Sitemap(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if sitemapHits != 0 || res.Fetched != 0 || res.Failed != 2 || res.Counters.Get(JobSitemap, ctrSMHostsSkipped) != 2 {
		t.Errorf("%d sitemap requests; %+v", sitemapHits, res)
	}
}
