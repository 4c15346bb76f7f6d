package jobs

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// parseOutputs are a parsed segment's three outputs, in file order, and
// the crawl_parse links one per link (segment.ParseUpdate.Linked).
type parseOutputs struct {
	data    []segment.ParseData
	text    []segment.ParseText
	updates []segment.ParseUpdate
	links   []segment.ParseUpdate
}

func readParse(t *testing.T, seg string) parseOutputs {
	t.Helper()
	out := parseOutputs{
		data:    readParts[segment.ParseData](t, filepath.Join(seg, segment.DirParseData)),
		text:    readParts[segment.ParseText](t, filepath.Join(seg, segment.DirParseText)),
		updates: readParts[segment.ParseUpdate](t, filepath.Join(seg, segment.DirCrawlParse)),
	}
	for _, u := range out.updates {
		out.links = append(out.links, u.Linked()...)
	}
	return out
}

// testSegment writes a fetched segment (crawl_fetch and content) by hand.
func testSegment(t *testing.T, env Env, fetches []segment.Fetch, contents []segment.Content) string {
	t.Helper()
	seg := filepath.Join(env.Crawl, "segments", "20260101000000")
	writeSegmentStage(t, seg, segment.DirFetch, fetches)
	writeSegmentStage(t, seg, segment.DirContent, contents)
	return seg
}

// fetched is a fetch_success row and its content.
func fetched(url string, score float32, at time.Time, ctype, body string) (segment.Fetch, segment.Content) {
	return segment.Fetch{URL: url, Status: crawldb.StatusFetchSuccess, FetchTime: at, HTTPStatus: 200, ContentType: ctype,
			Datum: crawldb.Datum{URL: url, Score: score, Status: crawldb.StatusDBUnfetched}},
		segment.Content{URL: url, BaseURL: url, ContentType: ctype, Headers: map[string]string{"Content-Type": ctype},
			Body: []byte(body), FetchTime: at}
}

// TestParseRound runs a real round on a synthetic web: inject its home
// pages and some leaves, generate, "fetch" (the test writes crawl_fetch
// and content from simweb's pages, as served), parse, and updatedb; then
// checks the parse outputs against simweb's truth and the CrawlDB against
// the parse outputs: features, signatures, OPIC cash of new URLs.
func TestParseRound(t *testing.T) {
	env := testEnv(t)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = 7, 8, 300, simweb.HazardsAll
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	truthPath := filepath.Join(t.TempDir(), "truth.parquet")
	f, err := os.Create(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.WriteTruth(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rows, err := parquetio.ReadAll[simweb.TruthPage](storage.NewLocal(), truthPath)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]simweb.TruthPage{}
	var seeds strings.Builder
	for i, r := range rows {
		truth[r.URL] = r
		if r.Kind == "home" || r.Kind == "document" || (r.Kind == "leaf" && i%3 == 0) || r.Kind == "missing" {
			fmt.Fprintf(&seeds, "%s\tscore=%d\n", r.URL, 1+i%4)
		}
	}
	gen, fl := generateOne(t, env, now, seeds.String())

	// Fetch: content pages succeed; a 404 comes with its body (skipped by
	// parse, Nutch's rule); one page is retried, one truncated, one has no
	// content row; one content row has no fetch row.
	at := now.Add(time.Hour)
	var fetches []segment.Fetch
	var contents []segment.Content
	want := map[string]string{} // URL -> expected outcome
	urls := make([]string, 0, len(fl))
	for u := range fl {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	retried, truncated, lost, unsupported := false, false, false, false
	for _, u := range urls {
		g := fl[u]
		tr := truth[u]
		switch {
		case tr.Kind == "missing":
			fetches = append(fetches, fetchOf(g, crawldb.StatusFetchGone, at))
			contents = append(contents, segment.Content{URL: u, ContentType: "text/html", Body: []byte("<title>Not found</title>"), FetchTime: at})
			want[u] = "skipped"
			continue
		case tr.Kind == "leaf" && !retried:
			retried = true
			fetches = append(fetches, fetchOf(g, crawldb.StatusFetchRetry, at))
			want[u] = "none"
			continue
		}
		body, err := web.Body(int(tr.ID), 0, simweb.Addressing{})
		if err != nil {
			t.Fatal(err)
		}
		ct := tr.ContentType
		if tr.CharsetIn == "header" || tr.CharsetIn == "both" {
			ct += "; charset=" + tr.Charset
		}
		fe := fetchOf(g, crawldb.StatusFetchSuccess, at)
		fe.ContentType = tr.ContentType
		fetches = append(fetches, fe)
		c := segment.Content{URL: u, BaseURL: u, ContentType: tr.ContentType, Headers: map[string]string{"Content-Type": ct}, Body: body, FetchTime: at}
		switch {
		case tr.Kind == "leaf" && !truncated:
			truncated = true
			c.Truncated = true
			want[u] = "truncated"
		case tr.Kind == "leaf" && !lost:
			lost = true
			want[u] = "none"
			continue
		case tr.Kind == "document" && !unsupported:
			// Served under a type no parser takes: the parse fails.
			unsupported = true
			c.ContentType, c.Headers = "image/png", map[string]string{"Content-Type": "image/png"}
			want[u] = "failed"
		default:
			want[u] = "parsed"
		}
		contents = append(contents, c)
	}
	contents = append(contents, segment.Content{URL: "http://stray.example/", ContentType: "text/html", Body: []byte("<p>x")})
	writeSegmentStage(t, gen.Segment, segment.DirFetch, fetches)
	writeSegmentStage(t, gen.Segment, segment.DirContent, contents)

	res, err := Parse(context.Background(), env, ParseOptions{Segment: gen.Segment, MaxOutlinks: 20})
	if err != nil {
		t.Fatal(err)
	}
	count := func(outcome string) (n int64) {
		for _, w := range want {
			if w == outcome {
				n++
			}
		}
		return n
	}
	if res.Parsed != count("parsed") || res.Failed != count("failed") || res.Skipped != count("skipped")+count("truncated")+1 ||
		count("failed") == 0 || count("parsed") < 20 {
		t.Errorf("parsed %d failed %d skipped %d; want %d %d %d", res.Parsed, res.Failed, res.Skipped,
			count("parsed"), count("failed"), count("skipped")+count("truncated")+1)
	}
	ctr := res.Counters.Snapshot()[JobParse]
	if ctr[ctrSkipNoFetch] != 1 || ctr[ctrSkipTruncated] != 1 || ctr[ctrNoContent] != 1 || ctr[ctrFailedPrefix+"unsupported_type"] != count("failed") {
		t.Errorf("counters %v", ctr)
	}

	out := readParse(t, gen.Segment)
	// Each part file is sorted by URL (the reduce order), as Nutch's
	// parse_data and parse_text MapFiles are.
	for _, p := range mustParts(t, filepath.Join(gen.Segment, segment.DirParseData)) {
		rs := readRowsOf[segment.ParseData](t, p)
		if !slices.IsSortedFunc(rs, func(a, b segment.ParseData) int { return strings.Compare(a.URL, b.URL) }) {
			t.Errorf("%s is not sorted by URL", p)
		}
	}
	data := map[string]segment.ParseData{}
	for _, d := range out.data {
		if _, dup := data[d.URL]; dup {
			t.Errorf("parse_data holds %s twice", d.URL)
		}
		data[d.URL] = d
	}
	texts := map[string]string{}
	for _, x := range out.text {
		texts[x.URL] = x.Text
	}
	sigs := map[string]segment.ParseUpdate{}
	links := map[string][]segment.ParseUpdate{}
	for _, u := range out.updates {
		switch u.Status {
		case crawldb.StatusSignature:
			sigs[u.URL] = u
		case crawldb.StatusLinked:
		default:
			t.Errorf("crawl_parse row of status %v", u.Status)
		}
	}
	for _, l := range out.links {
		links[l.FromURL] = append(links[l.FromURL], l)
	}
	for u, outcome := range want {
		d, hasData := data[u]
		tr := truth[u]
		switch outcome {
		case "none", "skipped":
			if hasData || sigs[u].URL != "" {
				t.Errorf("%s (%s): has parse output", u, outcome)
			}
		case "truncated":
			if !hasData || d.Success || !strings.Contains(d.Message, "truncated") || sigs[u].URL != "" || len(links[u]) > 0 {
				t.Errorf("%s: truncated page: %+v", u, d)
			}
		case "failed":
			body, _ := web.Body(int(tr.ID), 0, simweb.Addressing{})
			sum := md5.Sum(body)
			if !hasData || d.Success || !strings.Contains(d.Message, "unsupported content type") ||
				!reflect.DeepEqual(d.Signature, sum[:]) || !reflect.DeepEqual(sigs[u].Signature, sum[:]) || sigs[u].Features.Bytes != int64(len(body)) {
				t.Errorf("%s: failed page: %+v, update %+v", u, d, sigs[u])
			}
		case "parsed":
			if !hasData || !d.Success {
				t.Errorf("%s: not parsed: %+v", u, d)
				continue
			}
			wantOut := min(tr.Features.Outlinks, 20)
			if tr.Nofollow {
				wantOut = 0
			}
			if d.Features.Words != tr.Features.Words || d.Features.Images != tr.Features.Images || d.Features.Bytes != tr.Features.Bytes ||
				d.Features.Depth != tr.Features.Depth || d.Features.Outlinks != wantOut || len(d.Outlinks) != int(wantOut) {
				t.Errorf("%s: features %+v (%d outlinks), truth %+v", u, d.Features, len(d.Outlinks), tr.Features)
			}
			if d.NoIndex != tr.Noindex || d.NoFollow != tr.Nofollow {
				t.Errorf("%s: noindex/nofollow %v %v, truth %v %v", u, d.NoIndex, d.NoFollow, tr.Noindex, tr.Nofollow)
			}
			text, ok := texts[u]
			if !ok || (text == "") != tr.Noindex {
				t.Errorf("%s: parse_text %q (present %v)", u, text, ok)
			}
			s := sigs[u]
			if len(d.Signature) != 16 || !reflect.DeepEqual(s.Signature, d.Signature) || len(d.FuzzySignature) != 0 ||
				!s.FetchTime.Equal(at) || s.Features != d.Features {
				t.Errorf("%s: signature update %+v vs parse data %x", u, s, d.Signature)
			}
			if !tr.Noindex {
				sum := md5.Sum([]byte(d.Title + " " + text))
				if !reflect.DeepEqual(d.Signature, sum[:]) {
					t.Errorf("%s: signature is not the MD5 of title and text", u)
				}
			}
			ls := links[u]
			if len(ls) != len(d.Outlinks) {
				t.Fatalf("%s: %d linked updates for %d outlinks", u, len(ls), len(d.Outlinks))
			}
			cash := OPICLinkCash(fl[u].Score, len(d.Outlinks))
			for i, l := range ls {
				if l.URL != d.Outlinks[i].URL || l.Anchor != d.Outlinks[i].Anchor || l.Score != cash || !l.FetchTime.Equal(at) || cash <= 0 {
					t.Errorf("%s: linked update %+v for outlink %+v, cash %v", u, l, d.Outlinks[i], cash)
				}
			}
		}
	}
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: gen.Segment}); !errors.Is(err, ErrSegmentParsed) {
		t.Errorf("second parse: %v", err)
	}

	// updatedb takes the signatures, features and links.
	before := readDB(t, env)
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}, Now: at, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	cashIn := map[string]float64{}
	for _, l := range out.links {
		cashIn[l.URL] += float64(l.Score)
	}
	for u, outcome := range want {
		if outcome != "parsed" {
			continue
		}
		d, ok := db[u]
		if !ok || d.Status != crawldb.StatusDBFetched || !reflect.DeepEqual(d.Signature, data[u].Signature) ||
			d.Features.Words != data[u].Features.Words || d.Features.Outlinks != data[u].Features.Outlinks {
			t.Errorf("%s: CrawlDB row %+v after parse %+v", u, d, data[u])
		}
	}
	added := 0
	for u, c := range cashIn {
		if _, old := before[u]; old {
			continue
		}
		added++
		d, ok := db[u]
		if !ok || d.Status != crawldb.StatusDBUnfetched || math.Abs(float64(d.Score)-c) > 1e-5 {
			t.Errorf("%s: new CrawlDB row %+v, want score %v", u, d, c)
		}
	}
	if added == 0 {
		t.Errorf("no URL was added from links")
	}
}

// mustParts lists a directory's part files.
func mustParts(t *testing.T, dir string) []string {
	t.Helper()
	ps, err := parquetio.PartFiles(storage.NewLocal(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func readRowsOf[T any](t *testing.T, p string) []T {
	t.Helper()
	rs, err := parquetio.ReadAll[T](storage.NewLocal(), p)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestParseCapCashAndOptions checks the outlink cap and the OPIC cash, the
// options that reach the parser through the job's Conf (scope, filters,
// ignore internal links, signature kind), and a meta refresh under
// nofollow.
func TestParseCapCashAndOptions(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var many strings.Builder
	many.WriteString("<html><head><title>Many links</title></head><body><p>A page with links.</p>\n")
	for i := range 150 {
		fmt.Fprintf(&many, "<a href=\"/p%03d.html\">page %d</a>\n", i, i)
	}
	many.WriteString(`<a href="http://other.example/">elsewhere</a><a href="/doc.pdf">pdf</a></body></html>`)
	pages := map[string]string{
		"http://h.example/many":    many.String(),
		"http://h.example/refresh": `<html><head><meta name="robots" content="nofollow"><meta http-equiv="refresh" content="0; url=/target"></head><body><a href="/x">x</a></body></html>`,
		"http://h.example/noindex": `<html><head><title>Hidden</title><meta name="robots" content="noindex"></head><body><p>secret words</p><a href="/y">y</a></body></html>`,
	}
	build := func(env Env) string {
		var fs []segment.Fetch
		var cs []segment.Content
		for u, body := range pages {
			f, c := fetched(u, 3, at, "text/html", body)
			fs = append(fs, f)
			cs = append(cs, c)
		}
		return testSegment(t, env, fs, cs)
	}
	linkedFrom := func(out parseOutputs, from string) []segment.ParseUpdate {
		var ls []segment.ParseUpdate
		for _, l := range out.links {
			if l.FromURL == from {
				ls = append(ls, l)
			}
		}
		return ls
	}

	// Defaults: Nutch's cap of 100, cash 3/100 each.
	env := testEnv(t)
	seg := build(env)
	res, err := Parse(context.Background(), env, ParseOptions{Segment: seg})
	if err != nil {
		t.Fatal(err)
	}
	out := readParse(t, seg)
	ls := linkedFrom(out, "http://h.example/many")
	if len(ls) != 100 || ls[0].Score != OPICLinkCash(3, 100) || ls[0].URL != "http://h.example/p000.html" || ls[0].Anchor != "page 0" {
		t.Errorf("default cap: %d links, first %+v", len(ls), ls[0])
	}
	if res.Parsed != 3 || res.NoIndex != 1 || res.NoFollow != 1 || res.Outlinks != 100+1 {
		t.Errorf("result %+v", res)
	}
	// The refresh target of a nofollow page is a link without cash.
	rl := linkedFrom(out, "http://h.example/refresh")
	if len(rl) != 1 || rl[0].URL != "http://h.example/target" || rl[0].Score != 0 {
		t.Errorf("refresh links %+v", rl)
	}
	for _, d := range out.data {
		switch d.URL {
		case "http://h.example/refresh":
			if d.RefreshURL != "http://h.example/target" || len(d.Outlinks) != 0 || !d.NoFollow {
				t.Errorf("refresh page %+v", d)
			}
		case "http://h.example/noindex":
			if d.Title != "" || !d.NoIndex || d.Features.Words != 3 || len(d.Outlinks) != 1 {
				t.Errorf("noindex page %+v", d)
			}
		}
	}
	for _, x := range out.text {
		if x.URL == "http://h.example/noindex" && x.Text != "" {
			t.Errorf("noindex text %q", x.Text)
		}
	}

	// No cap, host scope, a suffix filter, text-profile signatures.
	env = testEnv(t)
	seg = build(env)
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg, AllOutlinks: true, Scope: urlutil.ScopeHost,
		Filters:   URLFilterOptions{Options: urlutil.FilterOptions{DenySuffixes: []string{".pdf"}}},
		Signature: parser.SignatureTextProfile, Reducers: 3}); err != nil {
		t.Fatal(err)
	}
	out = readParse(t, seg)
	ls = linkedFrom(out, "http://h.example/many")
	if len(ls) != 150 || ls[0].Score != OPICLinkCash(3, 150) {
		t.Errorf("no cap: %d links, cash %v", len(ls), ls[0].Score)
	}
	for _, l := range ls {
		if !strings.HasPrefix(l.URL, "http://h.example/p") {
			t.Errorf("link %s passed the scope or the filter", l.URL)
		}
	}
	for _, d := range out.data {
		if !reflect.DeepEqual(d.Signature, d.FuzzySignature) {
			t.Errorf("%s: text-profile signature %x, fuzzy %x", d.URL, d.Signature, d.FuzzySignature)
		}
		if m := d.Meta["signature.md5"]; len(m) != 32 {
			t.Errorf("%s: no MD5 kept in meta: %v", d.URL, d.Meta)
		}
		if d.URL == "http://h.example/many" {
			if d.Meta["signature.md5"] != hex.EncodeToString(parser.MD5Signature("Many links A page with links. "+linkTexts(150)+" elsewherepdf", nil)) {
				for _, x := range out.text {
					if x.URL == d.URL {
						t.Errorf("signature.md5 %s is not the MD5 of the page's title and text %q", d.Meta["signature.md5"], x.Text)
					}
				}
			}
		}
	}
	for _, u := range out.updates {
		if u.Status == crawldb.StatusSignature {
			for _, d := range out.data {
				if d.URL == u.URL && !reflect.DeepEqual(u.Signature, d.FuzzySignature) {
					t.Errorf("%s: crawl_parse carries %x, not the text profile", u.URL, u.Signature)
				}
			}
		}
	}
	if n := len(mustParts(t, filepath.Join(seg, segment.DirParseData))); n < 1 || n > 3 {
		t.Errorf("%d parse_data parts with 3 reducers", n)
	}

	// Ignore internal links: only the external one is left.
	env = testEnv(t)
	seg = build(env)
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg, IgnoreInternalLinks: true}); err != nil {
		t.Fatal(err)
	}
	ls = linkedFrom(readParse(t, seg), "http://h.example/many")
	if len(ls) != 1 || ls[0].URL != "http://other.example/" || ls[0].Score != 3 {
		t.Errorf("ignore internal: %+v", ls)
	}
}

func linkTexts(n int) string {
	var b []string
	for i := range n {
		b = append(b, fmt.Sprintf("page %d", i))
	}
	return strings.Join(b, " ")
}

// TestParsePartialRerun: a parse that died between publishing its outputs
// is parsed again from scratch, to the same result; bad inputs fail
// clearly.
func TestParsePartialRerun(t *testing.T) {
	env := testEnv(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var fs []segment.Fetch
	var cs []segment.Content
	for i := range 30 {
		f, c := fetched(fmt.Sprintf("http://h%d.example/p%d", i%4, i), float32(i), at, "text/html",
			fmt.Sprintf("<title>P%d</title><p>text %d</p><a href=\"/next%d\">next</a>", i, i, i+1))
		fs = append(fs, f)
		cs = append(cs, c)
	}
	seg := testSegment(t, env, fs, cs)
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg}); err != nil {
		t.Fatal(err)
	}
	first := readParse(t, seg)
	if len(first.data) != 30 || len(first.text) != 30 || len(first.updates) != 30 || len(first.links) != 30 {
		t.Fatalf("%d data, %d text, %d updates with %d links", len(first.data), len(first.text), len(first.updates), len(first.links))
	}
	if err := os.RemoveAll(filepath.Join(seg, segment.DirCrawlParse)); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg}); err != nil {
		t.Fatalf("rerun after a partial publish: %v", err)
	}
	if again := readParse(t, seg); !reflect.DeepEqual(again, first) {
		t.Errorf("the rerun gave different outputs")
	}

	// Missing inputs and bad options.
	empty := filepath.Join(env.Crawl, "segments", "20260102000000")
	writeSegmentStage(t, empty, segment.DirFetch, fs)
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: empty}); err == nil || !strings.Contains(err.Error(), "no published content") {
		t.Errorf("segment without content: %v", err)
	}
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg, Signature: "sha1"}); err == nil {
		t.Errorf("unknown signature accepted")
	}
	if _, err := Parse(context.Background(), env, ParseOptions{}); err == nil {
		t.Errorf("no segment accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad-rules.txt")
	writeFile(t, bad, "+(unclosed\n")
	if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg, Filters: URLFilterOptions{RegexFiles: []string{bad}}}); err == nil ||
		!strings.Contains(err.Error(), "bad-rules.txt") {
		t.Errorf("bad filter rules: %v", err)
	}
}

// TestParseStreamingEqualsLocal: the parse job rebuilt from its Conf by
// Registry and run as Hadoop Streaming tasks writes what the local runner
// writes.
func TestParseStreamingEqualsLocal(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	run := func(streaming bool) parseOutputs {
		env := testEnv(t)
		if streaming {
			env.Runner = streamingRunner(t, env.Storage, filepath.Join(t.TempDir(), "work"))
		}
		var fs []segment.Fetch
		var cs []segment.Content
		for i := range 40 {
			body := fmt.Sprintf("<title>P%d</title><p>text\n%d</p><a href=\"/n%d\">next</a><a href=\"http://x%d.example/\">x</a>", i, i, i+1, i%3)
			if i%10 == 0 {
				body = "\x00binary\xff\xfe"
			}
			ctype := "text/html"
			if i%10 == 0 {
				ctype = "application/pdf"
			}
			f, c := fetched(fmt.Sprintf("http://h%d.example/p%d", i%5, i), 1+float32(i)/7, at, ctype, body)
			fs = append(fs, f)
			cs = append(cs, c)
		}
		seg := testSegment(t, env, fs, cs)
		if _, err := Parse(context.Background(), env, ParseOptions{Segment: seg, Reducers: 2, Signature: parser.SignatureTextProfile,
			Filters: URLFilterOptions{Options: urlutil.DefaultFilterOptions()}, Scope: urlutil.ScopeDomain}); err != nil {
			t.Fatal(err)
		}
		return readParse(t, seg)
	}
	local, streamed := run(false), run(true)
	if len(local.data) != 40 || !reflect.DeepEqual(local, streamed) {
		t.Errorf("local and streamed parse outputs differ (%d and %d parse_data rows)", len(local.data), len(streamed.data))
	}
}

// BenchmarkParseJob runs the parse job over a segment of simweb pages as
// served (about 2000 HTML pages of a 40-host web, one content part), on
// the local runner with the machine's parallelism, with the map-side join
// and with the shuffle; reports pages/s and MB/s of content.
func BenchmarkParseJob(b *testing.B) {
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages = 21, 40, 2000
	web, err := simweb.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var fs []segment.Fetch
	var cs []segment.Content
	var total int64
	for id := range web.NumPages() {
		info := web.Page(id)
		if info.Kind != simweb.KindHome && info.Kind != simweb.KindDirectory && info.Kind != simweb.KindLeaf || info.Status != 200 {
			continue
		}
		body, err := web.Body(id, 0, simweb.Addressing{})
		if err != nil {
			b.Fatal(err)
		}
		f, c := fetched(web.URL(id, simweb.Addressing{}), 1, at, "text/html", string(body))
		fs = append(fs, f)
		cs = append(cs, c)
		total += int64(len(body))
	}
	env := testEnv(b)
	lr := localRunner(env)
	lr.Parallelism, lr.MemoryBudget = 0, 0
	seg := filepath.Join(env.Crawl, "segments", "20260101000000")
	writeSegmentStage(b, seg, segment.DirFetch, fs)
	writeSegmentStage(b, seg, segment.DirContent, cs)
	filters, err := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}.spec(env.resolver())
	if err != nil {
		b.Fatal(err)
	}
	for _, join := range []string{"map-side", "shuffle"} {
		b.Run(join, func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				b.StopTimer()
				for _, d := range []string{segment.DirParseData, segment.DirParseText, segment.DirCrawlParse} {
					if err := os.RemoveAll(filepath.Join(seg, d)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				job := planParse(env, seg, ParseOptions{Segment: seg}, filters)
				job.MapSide = join == "map-side"
				res, err := env.Run(context.Background(), job)
				if err != nil {
					b.Fatal(err)
				}
				if n := res.Counters.Get(JobParse, ctrParsed); n != int64(len(cs)) {
					b.Fatalf("parsed %d of %d", n, len(cs))
				}
			}
			b.ReportMetric(float64(len(cs))*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

func TestParseOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    ParseOptions
		want string // in the error; "" for none
	}{
		{ParseOptions{Segment: "s"}, ""},
		{ParseOptions{Segment: "s", AllOutlinks: true, Scope: urlutil.ScopeDomain, Signature: "text-profile", Reducers: 2}, ""},
		{ParseOptions{}, "no segment"},
		{ParseOptions{Segment: "s", MaxOutlinks: -1}, "negative"},
		{ParseOptions{Segment: "s", MaxOutlinks: 5, AllOutlinks: true}, "both"},
		{ParseOptions{Segment: "s", Reducers: -1}, "negative"},
		{ParseOptions{Segment: "s", Scope: urlutil.Scope(7)}, "scope"},
		{ParseOptions{Segment: "s", Signature: "sha1"}, "sha1"},
		{ParseOptions{Segment: "s", Types: []string{"text/html", "text/plain"}}, ""},
		{ParseOptions{Segment: "s", Types: []string{"text/html", "image/png"}}, "image/png"},
	} {
		err := tc.o.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: Validate() = %v, want an error with %q", tc.o, err, tc.want)
		}
	}
}

// TestParseJobSpecRoundTrip: the parse job's spec, regex rules included,
// survives its JSON (as Hadoop Streaming tasks receive it) unchanged, and
// builds.
func TestParseJobSpecRoundTrip(t *testing.T) {
	spec := parseJob{Segment: "file:///c/segments/20260101000000", NumReduce: 2, AllOutlinks: true,
		Scope: urlutil.ScopeHost, IgnoreExternalLinks: true, ParseTruncated: true, Signature: parser.SignatureTextProfile,
		Types: []string{"text/html", "application/pdf"},
		Filters: filterSpec{Schemes: []string{"http", "https"}, MaxLength: 512,
			Regex: []regexSpec{{Name: "rules.txt", Rules: "-\\.gif$\n+.\n"}}}}
	checkRoundTrip(t, spec)
	bad := spec
	bad.Filters.Regex = []regexSpec{{Name: "bad.txt", Rules: "-(\n"}}
	if _, err := bad.Job(); err == nil || !strings.Contains(err.Error(), "bad.txt") {
		t.Errorf("a parse job with a bad rule built, or its error does not name the file: %v", err)
	}
}

// TestParseTypes: with ParseOptions.Types leaving plain text out, a plain
// text page fails to parse as a page of an unknown type does (its body's
// MD5 as its signature, no text, no outlinks) while the HTML page parses;
// with every type, the same segment's plain text page parses.
func TestParseTypes(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const htmlURL, textURL = "http://h.example/", "http://h.example/notes.txt"
	textBody := "Plain   notes,\n\nwith http://h.example/not-a-link here.\n"
	build := func(env Env) string {
		fh, ch := fetched(htmlURL, 1, at, "text/html", `<title>Home</title><p>Welcome <a href="/notes.txt">notes</a>`)
		ft, ct := fetched(textURL, 1, at, "text/plain", textBody)
		return testSegment(t, env, []segment.Fetch{fh, ft}, []segment.Content{ch, ct})
	}
	for _, tc := range []struct {
		types      []string
		textParsed bool
	}{
		{[]string{"text/html", "application/pdf"}, false},
		{nil, true},
	} {
		env := testEnv(t)
		seg := build(env)
		res, err := Parse(context.Background(), env, ParseOptions{Segment: seg, Types: tc.types})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: 2, false: 1}[tc.textParsed]; res.Parsed != want || res.Parsed+res.Failed != 2 {
			t.Errorf("types %v: parsed %d, failed %d", tc.types, res.Parsed, res.Failed)
		}
		out := readParse(t, seg)
		for _, d := range out.data {
			switch d.URL {
			case htmlURL:
				if d.Title != "Home" || len(d.Outlinks) != 1 {
					t.Errorf("types %v: the HTML page: %+v", tc.types, d)
				}
			case textURL:
				bodySum := parser.MD5Signature("", []byte(textBody))
				if tc.textParsed && (d.Message != "" || bytes.Equal(d.Signature, bodySum)) {
					t.Errorf("types %v: the text page did not parse: %+v", tc.types, d)
				}
				if !tc.textParsed && (!strings.Contains(d.Message, "not among the types") || !bytes.Equal(d.Signature, bodySum)) {
					t.Errorf("types %v: the text page: message %q, signature %x, want the body's MD5 %x",
						tc.types, d.Message, d.Signature, bodySum)
				}
			}
		}
		var texts int
		for _, x := range out.text {
			if x.URL == textURL {
				texts++
			}
		}
		if tc.textParsed != (texts == 1) {
			t.Errorf("types %v: %d parse_text rows for the text page", tc.types, texts)
		}
	}
}
