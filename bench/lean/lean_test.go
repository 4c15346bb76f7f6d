package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/simweb"
)

// TestCrawlSimweb crawls a small synthetic web served in-process until the
// frontier is empty and checks the crawl against the web's ground truth
// and the server's access log, and the Parquet files against the counts.
func TestCrawlSimweb(t *testing.T) {
	cfg := simweb.DefaultConfig()
	cfg.Hosts, cfg.Pages, cfg.Hazards = 6, 300, 0
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	const rounds = 50 // far more than the web's depth: the crawl ends when the frontier is empty
	out := t.TempDir()
	res, err := Crawl(context.Background(), Options{
		Seeds: srv.Seeds(), DNSAddr: srv.DNSAddr(), ClockURL: "http://" + srv.HTTPAddr() + "/_simweb/clock",
		Now: cfg.Epoch, Rounds: rounds, Workers: 4, Out: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.Unfetched != 0 || res.RoundsRun >= rounds {
		t.Fatalf("unfetched %d after %d rounds: want a complete crawl", res.Unfetched, res.RoundsRun)
	}

	// Every page reachable from the seeds by links of HTML pages and by
	// redirects was fetched, and nothing else; only the pages on hosts
	// whose names do not resolve failed.
	reach := reachable(web, srv)
	var want200, unresolvable int64
	for id := range reach {
		switch p := web.Page(id); {
		case p.Status == 200:
			want200++
		case p.Kind == simweb.KindUnresolvable:
			unresolvable++
		}
	}
	if res.Fetched != want200 || res.Responses+res.Errors != int64(len(reach)) || res.Errors != unresolvable {
		t.Errorf("fetched %d (200) of %d responses, %d errors (%s); the web has %d pages reachable, %d of them 200, %d unresolvable",
			res.Fetched, res.Responses, res.Errors, res.FirstError, len(reach), want200, unresolvable)
	}

	// The server saw each URL once: no URL fetched twice.
	seen := map[string]bool{}
	var requests int64
	for _, a := range srv.AccessLog().Entries() {
		if a.Host == "" {
			continue // the clock
		}
		requests++
		key := a.HostHeader + a.Path
		if seen[key] {
			t.Errorf("%s requested twice", key)
		}
		seen[key] = true
	}
	if requests != res.Responses {
		t.Errorf("the server answered %d requests, the crawl counted %d responses", requests, res.Responses)
	}

	// The files hold what the crawl counted.
	var content, parses, withLinks, withTitle int64
	for r := 1; r <= res.RoundsRun; r++ {
		c := readParquet[contentRow](t, filepath.Join(out, fmt.Sprintf("content-%d.parquet", r)))
		content += int64(len(c))
		for _, row := range c {
			if row.Status == 200 && len(row.Body) == 0 {
				t.Errorf("content of %s: 200 with an empty body", row.URL)
			}
		}
		p := readParquet[parsed](t, filepath.Join(out, fmt.Sprintf("parse-%d.parquet", r)))
		parses += int64(len(p))
		for _, row := range p {
			if len(row.Outlinks) > 0 {
				withLinks++
			}
			if row.Title != "" {
				withTitle++
			}
		}
	}
	if content != res.Responses || parses != res.Parsed {
		t.Errorf("content rows %d, parse rows %d; want %d and %d", content, parses, res.Responses, res.Parsed)
	}
	if res.Parsed == 0 || withLinks < res.Parsed*9/10 || withTitle < res.Parsed*9/10 {
		t.Errorf("%d pages parsed, %d with outlinks, %d with a title", res.Parsed, withLinks, withTitle)
	}
	db := readParquet[dbRow](t, filepath.Join(out, fmt.Sprintf("db-%d.parquet", res.RoundsRun)))
	if len(db) != res.DBSize || len(db) != len(reach) {
		t.Errorf("db has %d rows; the crawl counted %d URLs, the web %d reachable", len(db), res.DBSize, len(reach))
	}
	if !slices.IsSortedFunc(db, func(a, b dbRow) int { return strings.Compare(a.URL, b.URL) }) {
		t.Error("db not sorted")
	}
	for _, row := range db {
		if !row.Fetched {
			t.Errorf("db: %s not fetched", row.URL)
		}
	}
}

// reachable returns the ids of the pages reachable from the web's seeds,
// following the links of HTML content pages and redirects to their target.
func reachable(web *simweb.Web, srv *simweb.Server) map[int]bool {
	ids := map[string]int{}
	for id := range web.NumPages() {
		ids[srv.URL(id)] = id
	}
	seen := map[int]bool{}
	var queue []int
	add := func(id int) {
		if !seen[id] {
			seen[id] = true
			queue = append(queue, id)
		}
	}
	for _, s := range srv.Seeds() {
		add(ids[s])
	}
	for len(queue) > 0 {
		p := web.Page(queue[0])
		queue = queue[1:]
		switch {
		case p.Target >= 0:
			add(p.Target)
		case p.Status == 200 && p.Kind != simweb.KindDocument:
			for _, o := range web.Outlinks(p.ID) {
				add(o)
			}
		}
	}
	return seen
}

// readParquet reads every row of a Parquet file.
func readParquet[T any](t *testing.T, name string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](name)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return rows
}

// TestParseHTML checks the one-pass parse on a page with the cases that
// matter: relative, absolute, fragment-only and non-http links, script and
// style text, entities.
func TestParseHTML(t *testing.T) {
	body := `<!DOCTYPE html><html><head><title> A &amp; B </title>
<style>p{color:red}</style><script>var x = "<a href='/no'>";</script></head>
<body><h1>Hello</h1><p>one <b>two</b></p>
<a href="/x.html#frag">x</a> <a href="y/z.html">y</a> <a href="#top">top</a>
<a href="mailto:a@b.test">m</a> <a href="HTTPS://other.test/p?q=1">o</a> <a name="n">no href</a>
</body></html>`
	got := parseHTML("http://h.test:80/dir/page.html", []byte(body))
	if got.Title != "A & B" {
		t.Errorf("title %q", got.Title)
	}
	if got.Text != "Hello one two x y top m o no href" {
		t.Errorf("text %q", got.Text)
	}
	want := []string{"http://h.test:80/x.html", "http://h.test:80/dir/y/z.html", "http://h.test:80/dir/page.html", "https://other.test/p?q=1"}
	if !slices.Equal(got.Outlinks, want) {
		t.Errorf("outlinks %q, want %q", got.Outlinks, want)
	}
}

// TestDBMerge checks the linear merge: new URLs come in unfetched, known
// ones keep their flag, the order stays sorted.
func TestDBMerge(t *testing.T) {
	var d db
	d.merge([]string{"b", "d"})
	d.markAllFetched()
	d.merge([]string{"a", "b", "c", "e"})
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(d.urls, want) {
		t.Fatalf("urls %q, want %q", d.urls, want)
	}
	if want := []bool{false, true, false, true, false}; !slices.Equal(d.fetched, want) {
		t.Errorf("fetched %v, want %v", d.fetched, want)
	}
	if got := d.unfetched(); !slices.Equal(got, []string{"a", "c", "e"}) {
		t.Errorf("unfetched %q", got)
	}
}
