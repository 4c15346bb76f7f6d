package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// checkSite is a loopback web site for the checkers' tests: its
// robots.txt, pages and redirects, and the paths it was asked for.
type checkSite struct {
	*httptest.Server
	mu     sync.Mutex
	asked  []string
	robots func(w http.ResponseWriter) // nil: 404
	pages  map[string]string
}

func newCheckSite(t *testing.T, robots func(w http.ResponseWriter), pages map[string]string) *checkSite {
	t.Helper()
	s := &checkSite{robots: robots, pages: pages}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asked = append(s.asked, r.URL.RequestURI())
		s.mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt":
			if s.robots == nil {
				http.NotFound(w, r)
				return
			}
			s.robots(w)
		case strings.HasPrefix(r.URL.Path, "/moved"):
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		default:
			body, ok := s.pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("X-Check", "yes")
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// askedFor reports whether the site was asked for path.
func (s *checkSite) askedFor(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.asked {
		if p == path {
			return true
		}
	}
	return false
}

func robotsText(text string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, text)
	}
}

func robotsStatus(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

// checkPage is the page the parsechecker tests parse: a title, more than
// 400 characters of text, and links the parse job keeps and drops for
// various reasons.
var checkPage = `<html><head><title>The check page</title></head><body>
<p>` + strings.Repeat("lorem ipsum dolor sit amet ", 20) + `THE-END</p>
<a href="/a?b=1#frag">First link</a>
<a href="picture.JPG">a picture</a>
<a href="/a?b=1">again</a>
<a href="http://Other.Example:80/x/../y">elsewhere</a>
<a href="mailto:someone@example.com">mail</a>
</body></html>`

// pageJSON is the part of parsechecker --json the tests read.
type pageJSON struct {
	URL     string `json:"url"`
	Fetches []struct {
		URL    string `json:"url"`
		Status struct {
			Name   string `json:"name"`
			Number int    `json:"number"`
		} `json:"status"`
		HTTPStatus  int                 `json:"http_status"`
		RedirectURL string              `json:"redirect_url"`
		Headers     map[string][]string `json:"headers"`
		ContentType string              `json:"content_type"`
		Length      int                 `json:"content_length"`
	} `json:"fetches"`
	ParseStatus string `json:"parse_status"`
	Title       string `json:"title"`
	Text        string `json:"text"`
	Outlinks    []struct {
		URL    string `json:"url"`
		Anchor string `json:"anchor"`
	} `json:"outlinks"`
	Links []struct {
		Href    string `json:"href"`
		URL     string `json:"url"`
		Kept    bool   `json:"kept"`
		Dropped string `json:"dropped"`
	} `json:"links"`
	SignatureKind string `json:"signature_kind"`
	Signature     string `json:"signature"`
	Robots        []struct {
		Outcome string `json:"outcome"`
	} `json:"robots"`
}

// TestParsecheckerPage checks parsechecker on a real loopback server: the
// fetch, the headers, the parse, and per link what the normalizers and
// filters did.
func TestParsecheckerPage(t *testing.T) {
	site := newCheckSite(t, robotsText("User-agent: *\nDisallow: /private\n"), map[string]string{"/page": checkPage})
	r := newRunner(t)
	base := []string{"parsechecker", "--agent", "checkbot", "--allow-private", "--server-delay", "0"}

	res := r.ok(append(base, "--json", site.URL+"/page")...)
	var p pageJSON
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("parsechecker --json: %v\n%s", err, res.stdout)
	}
	if len(p.Fetches) != 1 || p.Fetches[0].Status.Name != "fetch_success" || p.Fetches[0].Status.Number != 0x21 ||
		p.Fetches[0].HTTPStatus != 200 || p.Fetches[0].ContentType != "text/html" || p.Fetches[0].Length != len(checkPage) {
		t.Errorf("fetches: %+v", p.Fetches)
	}
	if len(p.Fetches) > 0 && strings.Join(p.Fetches[0].Headers["X-Check"], "") != "yes" {
		t.Errorf("headers %v lack X-Check: yes", p.Fetches[0].Headers)
	}
	if p.ParseStatus != "success" || p.Title != "The check page" || !strings.Contains(p.Text, "THE-END") {
		t.Errorf("parse: status %q, title %q, text %q", p.ParseStatus, p.Title, p.Text)
	}
	if len(p.Robots) != 1 || p.Robots[0].Outcome != "parsed" || !site.askedFor("/robots.txt") {
		t.Errorf("robots: %+v", p.Robots)
	}
	if p.SignatureKind != "md5" || len(p.Signature) != 32 {
		t.Errorf("signature %s %q", p.SignatureKind, p.Signature)
	}
	want := []struct {
		href, url, dropped string
	}{
		{"/a?b=1#frag", site.URL + "/a?b=1", ""},
		{"picture.JPG", site.URL + "/picture.JPG", "filter-suffix"},
		{"/a?b=1", site.URL + "/a?b=1", "duplicate"},
		{"http://Other.Example:80/x/../y", "http://other.example/y", ""},
		{"mailto:someone@example.com", "", "invalid"},
	}
	if len(p.Links) != len(want) {
		t.Fatalf("links: %+v", p.Links)
	}
	for i, w := range want {
		l := p.Links[i]
		if l.Href != w.href || l.URL != w.url || l.Dropped != w.dropped || l.Kept != (w.dropped == "") {
			t.Errorf("link %d: %+v, want %+v", i, l, w)
		}
	}
	if len(p.Outlinks) != 2 || p.Outlinks[0].Anchor != "First link" || p.Outlinks[1].URL != "http://other.example/y" {
		t.Errorf("outlinks: %+v", p.Outlinks)
	}

	// For people: the excerpt, and all of the text with --text.
	res = r.ok(append(base, site.URL+"/page")...)
	for _, w := range []string{"fetch status:   fetch_success (33)", "HTTP status:    200", "X-Check: yes",
		"title:          The check page", "(first 400 of", "parse status:   success",
		"dropped " + site.URL + "/picture.JPG", "reason: filter-suffix", "signature:      md5 " + p.Signature} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("parsechecker output lacks %q:\n%s", w, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "THE-END") {
		t.Errorf("the excerpt shows the end of the text:\n%s", res.stdout)
	}
	if res = r.ok(append(base, "--text", site.URL+"/page")...); !strings.Contains(res.stdout, "THE-END") {
		t.Errorf("--text does not show all of the text:\n%s", res.stdout)
	}

	// The crawl's filter settings apply: with the suffix filter off, the
	// picture is kept.
	r.env = append(r.env, "TRAWL_URLFILTER_SUFFIX=false")
	res = r.ok(append(base, "--json", site.URL+"/page")...)
	if !strings.Contains(res.stdout, `"url": "`+site.URL+`/picture.JPG",`+"\n      \"anchor\"") {
		t.Errorf("with urlfilter.suffix off the picture is not an outlink:\n%s", res.stdout)
	}
}

// TestParsecheckerRobotsAndRedirects checks that parsechecker obeys
// robots.txt unless --no-robots, refuses loopback without --allow-private,
// and reports or follows a redirect as --follow-redirects says.
func TestParsecheckerRobotsAndRedirects(t *testing.T) {
	site := newCheckSite(t, robotsText("User-agent: checkbot\nDisallow: /page\n"), map[string]string{"/page": checkPage})
	r := newRunner(t)
	base := []string{"parsechecker", "--agent", "checkbot", "--allow-private", "--server-delay", "0"}

	res := r.fails(exitFailure, append(base, site.URL+"/page")...)
	if !strings.Contains(res.stdout, "fetch_robots_denied") || site.askedFor("/page") {
		t.Errorf("robots.txt disallows /page:\n%s", res)
	}
	assertCleanError(t, res, "not parsed")
	res = r.ok(append(base, "--no-robots", site.URL+"/page")...)
	if !strings.Contains(res.stdout, "not asked (--no-robots)") || !strings.Contains(res.stdout, "parse status:   success") {
		t.Errorf("--no-robots:\n%s", res)
	}

	res = r.fails(exitFailure, "parsechecker", "--agent", "checkbot", site.URL+"/page")
	if !strings.Contains(res.stdout, "fetch_refused") {
		t.Errorf("loopback without --allow-private:\n%s", res)
	}

	// Redirects: reported (the default, fetcher.followRedirects 0), or
	// followed.
	res = r.fails(exitFailure, append(base, "--no-robots", "--json", site.URL+"/moved")...)
	var p pageJSON
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if len(p.Fetches) != 1 || p.Fetches[0].Status.Name != "fetch_redir_perm" || p.Fetches[0].HTTPStatus != 301 ||
		p.Fetches[0].RedirectURL != site.URL+"/page" {
		t.Errorf("redirect not followed: %+v", p.Fetches)
	}
	res = r.ok(append(base, "--no-robots", "--follow-redirects", "1", "--json", site.URL+"/moved")...)
	p = pageJSON{}
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if len(p.Fetches) != 2 || p.Fetches[1].URL != site.URL+"/page" || p.Fetches[1].Status.Name != "fetch_success" || p.Title != "The check page" {
		t.Errorf("redirect followed: %+v", p)
	}

	res = r.fails(exitUsage, "parsechecker", "--agent", "checkbot", "ftp://example.com/")
	assertCleanError(t, res, "not an absolute http or https URL")
	res = r.fails(exitUsage, "parsechecker", site.URL)
	assertCleanError(t, res, "no user agent")
}

// robotsJSON is the part of robotscheck --json the tests read.
type robotsJSON struct {
	Verdict string `json:"verdict"`
	Allowed bool   `json:"allowed"`
	Group   *struct {
		Agent string `json:"user_agent"`
		Lines []int  `json:"lines"`
	} `json:"group"`
	Rule *struct {
		Line int    `json:"line"`
		Text string `json:"text"`
	} `json:"rule"`
	Reason     string   `json:"reason"`
	CrawlDelay string   `json:"crawl_delay"`
	Sitemaps   []string `json:"sitemaps"`
	Robots     *struct {
		Outcome  string `json:"outcome"`
		Requests []struct {
			URL        string `json:"url"`
			HTTPStatus int    `json:"http_status"`
		} `json:"requests"`
	} `json:"robots"`
}

const checkRobots = `# the test site
User-agent: *
Disallow: /private
Allow: /private/open

User-agent: checkbot
Disallow: /a
Allow: /a
Disallow: /*.pdf$
Crawl-delay: 0.5

Sitemap: http://example.com/sitemap.xml
`

func robotsCheck(t *testing.T, r *runner, args ...string) robotsJSON {
	t.Helper()
	res := r.ok(append([]string{"robotscheck", "--allow-private", "--json"}, args...)...)
	var out robotsJSON
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("robotscheck %v: %v\n%s", args, err, res)
	}
	return out
}

// TestRobotscheck checks robotscheck against real loopback servers: the
// verdict, group, rule, Crawl-delay and sitemaps of a 200 robots.txt
// reached through a redirect, 4xx and 5xx answers, and a local file.
func TestRobotscheck(t *testing.T) {
	site := newCheckSite(t, func(w http.ResponseWriter) {
		w.Header().Set("Location", "/real-robots.txt")
		w.WriteHeader(http.StatusMovedPermanently)
	}, map[string]string{"/real-robots.txt": checkRobots})
	r := newRunner(t)

	out := robotsCheck(t, r, site.URL+"/private/x", "otherbot")
	if out.Verdict != "denied" || out.Allowed || out.Group == nil || out.Group.Agent != "*" || out.Rule == nil ||
		out.Rule.Line != 3 || out.Rule.Text != "Disallow: /private" {
		t.Errorf("otherbot /private/x: %+v", out)
	}
	if out.Robots == nil || len(out.Robots.Requests) != 2 || out.Robots.Requests[0].HTTPStatus != 301 ||
		out.Robots.Requests[1].URL != site.URL+"/real-robots.txt" || out.Robots.Outcome != "parsed" {
		t.Errorf("robots.txt requests: %+v", out.Robots)
	}
	if len(out.Sitemaps) != 1 || out.Sitemaps[0] != "http://example.com/sitemap.xml" {
		t.Errorf("sitemaps %q", out.Sitemaps)
	}
	if site.askedFor("/private/x") {
		t.Error("robotscheck fetched the URL itself")
	}
	out = robotsCheck(t, r, site.URL+"/private/open/y", "otherbot")
	if out.Verdict != "allowed" || out.Rule == nil || out.Rule.Line != 4 {
		t.Errorf("otherbot /private/open/y: %+v", out)
	}
	out = robotsCheck(t, r, site.URL+"/a/b", "CheckBot/2.1")
	if out.Verdict != "denied" || out.Group == nil || out.Group.Agent != "checkbot" || out.Rule == nil || out.Rule.Line != 7 ||
		!strings.Contains(out.Reason, "first listed wins") || out.CrawlDelay != "500ms" {
		t.Errorf("checkbot /a/b: %+v", out)
	}
	out = robotsCheck(t, r, site.URL+"/docs/x.pdf", "checkbot")
	if out.Verdict != "denied" || out.Rule == nil || out.Rule.Line != 9 {
		t.Errorf("checkbot /docs/x.pdf: %+v", out)
	}
	out = robotsCheck(t, r, site.URL+"/private/x", "checkbot")
	if out.Verdict != "allowed" || out.Rule != nil || !strings.Contains(out.Reason, "allowed by default") {
		t.Errorf("checkbot /private/x: %+v", out)
	}
	// A Crawl-delay above the cap: the fetcher skips the host.
	out = robotsCheck(t, r, "--max-crawl-delay", "100ms", site.URL+"/b", "checkbot")
	if out.Verdict != "not fetched: fetch_skipped" || !strings.Contains(out.Reason, "above the cap") {
		t.Errorf("crawl-delay above the cap: %+v", out)
	}

	// The agent from the settings, and the output for people.
	r.env = append(r.env, "TRAWL_AGENT=checkbot")
	res := r.ok("robotscheck", "--allow-private", site.URL+"/a")
	for _, w := range []string{"verdict:      denied", "group:        User-agent: checkbot (line 6)", "rule:         line 7: Disallow: /a",
		"crawl-delay:  500ms", "sitemap:      http://example.com/sitemap.xml"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("robotscheck output lacks %q:\n%s", w, res.stdout)
		}
	}

	gone := newCheckSite(t, robotsStatus(http.StatusForbidden), nil)
	out = robotsCheck(t, r, gone.URL+"/anything", "checkbot")
	if out.Verdict != "allowed" || !strings.Contains(out.Reason, "HTTP 403") {
		t.Errorf("robots.txt 403: %+v", out)
	}
	down := newCheckSite(t, robotsStatus(http.StatusServiceUnavailable), nil)
	out = robotsCheck(t, r, down.URL+"/anything", "checkbot")
	if out.Allowed || out.Verdict != "not fetched: fetch_skipped" || !strings.Contains(out.Reason, "HTTP 503") {
		t.Errorf("robots.txt 503: %+v", out)
	}

	// A local file: no network.
	file := filepath.Join(r.dir, "robots.txt")
	if err := os.WriteFile(file, []byte(checkRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	out = robotsCheck(t, r, "--robots", file, "http://nowhere.invalid/private/x", "otherbot")
	if out.Verdict != "denied" || out.Rule == nil || out.Rule.Line != 3 {
		t.Errorf("--robots %s: %+v", file, out)
	}
	res = r.fails(exitUsage, "robotscheck", "--robots", filepath.Join(r.dir, "missing.txt"), "http://h.example/")
	assertCleanError(t, res, "missing.txt")
}

// TestParsecheckerURLCheck checks --normalize-only and --filter-only
// (Nutch's URLNormalizerChecker and URLFilterChecker): the crawl's
// normalizer, built-in filters and regex rule files, URLs from the
// arguments and from stdin, and no request sent.
func TestParsecheckerURLCheck(t *testing.T) {
	site := newCheckSite(t, nil, map[string]string{"/page": checkPage})
	r := newRunner(t)
	rules := filepath.Join(r.dir, "regex-urlfilter.txt")
	if err := os.WriteFile(rules, []byte("# test rules\n-/private/\n+^http://\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.env = append(r.env, "TRAWL_URLFILTER_REGEX_FILES="+rules)

	res := r.ok("parsechecker", "--normalize-only", "HTTP://Example.COM:80/a/./b/../c?x=1#frag", "no scheme")
	if res.stdout != "http://example.com/a/c?x=1\nERROR no scheme\turlutil: cannot normalize \"no scheme\": missing scheme (expected e.g. http://)\n" {
		t.Errorf("--normalize-only:\n%s", res)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, "parsechecker", "--filter-only", site.URL+"/page", "-", "https://example.com/")
	cmd.Stdin = strings.NewReader("http://a.example/x/../pic.JPG\n\nhttp://a.example/private/doc\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--filter-only: %v\n%s", err, out)
	}
	want := "+" + site.URL + "/page\n" +
		"-http://a.example/pic.JPG\tsuffix\n" +
		"-http://a.example/private/doc\tregex:" + rules + ":2\n" +
		"-https://example.com/\tregex-no-match\n"
	if string(out) != want {
		t.Errorf("--filter-only printed:\n%s\nwant:\n%s", out, want)
	}
	if site.askedFor("/page") || site.askedFor("/robots.txt") {
		t.Error("--filter-only sent a request")
	}
	res = r.fails(exitUsage, "parsechecker", "--filter-only")
	assertCleanError(t, res, "give the URLs to check")
}
