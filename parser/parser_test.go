package parser_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

func htmlPage(url, body string) segment.Content {
	return segment.Content{URL: url, ContentType: "text/html", Body: []byte(body)}
}

func mustParse(t *testing.T, c segment.Content, o parser.Options) *parser.Result {
	t.Helper()
	r, err := parser.Parse(c, o)
	if err != nil {
		t.Fatalf("parse %s: %v", c.URL, err)
	}
	return r
}

func urls(ls []segment.Outlink) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.URL)
	}
	return out
}

func TestHTMLBasics(t *testing.T) {
	page := `<!DOCTYPE html>
<html><head>
<meta charset="utf-8">
<title>  The   Title
</title>
<meta name="Description" content="A page">
<meta property="og:title" content="OG">
<link rel="stylesheet" href="/style.css">
<link rel="icon" href="/favicon.ico">
<link rel="canonical" href="/canon.html">
<link rel="next" href="page2.html">
<script>document.write("<a href='/from-script'>x</a> hidden words");</script>
<style>body { color: red }</style>
</head>
<body>
<h1>Heading <em>one</em></h1>
<p>Para<b>graph</b> text &amp; more&nbsp;words.</p>
<noscript>enable scripts</noscript>
<!-- a comment with words -->
<ul>
 <li><a href="a.html">First   <i>link</i></a></li>
 <li><a href="/abs/b.html" rel="nofollow">Not followed</a></li>
 <li><a href="a.html#frag"></a></li>
 <li><a href="http://other.example/">Other</a></li>
 <li><a href="mailto:x@y.z">Mail</a></li>
 <li><a href="javascript:void(0)">JS</a></li>
 <li><a href="http://site.example/dir/page.html">Self</a></li>
 <li><a href="c.html"><img src="c.png" alt="Image   alt"></a></li>
</ul>
<map><area href="/area" alt="Area text"></map>
<iframe src="/frame.html">fallback text</iframe>
<template><a href="/tmpl">T</a><p>inert</p><img src=t.png></template>
<img src="x.png"><img src="y.png">
<textarea>typed text</textarea>
</body></html>`
	r := mustParse(t, htmlPage("http://site.example/dir/page.html", page), parser.Options{MaxOutlinks: -1})
	if r.Title != "The Title" {
		t.Errorf("title %q", r.Title)
	}
	wantText := "Heading one Paragraph text & more words. First link Not followed Other Mail JS Self typed text"
	if r.Text != wantText {
		t.Errorf("text\n got %q\nwant %q", r.Text, wantText)
	}
	if r.Features.Words != int32(len(strings.Fields(wantText))) {
		t.Errorf("words %d, want %d", r.Features.Words, len(strings.Fields(wantText)))
	}
	want := []segment.Outlink{
		{URL: "http://site.example/dir/page2.html"},
		{URL: "http://site.example/dir/a.html", Anchor: "First link"},
		{URL: "http://other.example/", Anchor: "Other"},
		{URL: "http://site.example/dir/c.html", Anchor: "Image alt"},
		{URL: "http://site.example/area", Anchor: "Area text"},
		{URL: "http://site.example/frame.html"},
		{URL: "http://site.example/canon.html"},
	}
	// canonical is a navigational link too, but comes first in the head:
	want = append([]segment.Outlink{want[6]}, want[:6]...)
	if !reflect.DeepEqual(r.Outlinks, want) {
		t.Errorf("outlinks\n got %v\nwant %v", r.Outlinks, want)
	}
	if r.Canonical != "http://site.example/canon.html" {
		t.Errorf("canonical %q", r.Canonical)
	}
	if r.Features.Images != 3 || r.Features.Outlinks != int32(len(want)) || r.Features.Depth != 2 || r.Features.Bytes != int64(len(page)) {
		t.Errorf("features %+v", r.Features)
	}
	if r.Meta["description"] != "A page" || r.Meta["og:title"] != "OG" || r.Meta["charset"] != "utf-8" {
		t.Errorf("meta %v", r.Meta)
	}
	d := r.Links.Dropped
	if d["nofollow"] != 1 || d["duplicate"] != 1 || d["invalid"] != 2 || d["self"] != 1 {
		t.Errorf("dropped %v", d)
	}
	if r.Links.Found != 12 || r.Links.Kept != 7 {
		t.Errorf("found %d kept %d", r.Links.Found, r.Links.Kept)
	}
	if r.NoIndex || r.NoFollow || r.RefreshURL != "" {
		t.Errorf("directives %+v", r)
	}
	if len(r.MD5) != 16 || len(r.TextProfile) != 16 {
		t.Errorf("signatures %x %x", r.MD5, r.TextProfile)
	}
	if got := parser.MD5Signature(r.Title+" "+r.Text, nil); string(got) != string(r.MD5) {
		t.Errorf("MD5 is not the digest of title and text")
	}
}

func TestBaseHref(t *testing.T) {
	for _, tc := range []struct{ page, base, link string }{
		{`<base href="http://cdn.example/x/"><a href="y">y</a>`, "http://cdn.example/x/", "http://cdn.example/x/y"},
		{`<base href="../up/"><a href="y">y</a>`, "http://h.example/a/up/", "http://h.example/a/up/y"},
		{`<a href="y">y</a><base href="/late/">`, "http://h.example/late/", "http://h.example/late/y"}, // base applies to the whole document
		{`<base target="_top"><base href="/second/"><a href="y">y</a>`, "http://h.example/second/", "http://h.example/second/y"},
		{`<base href="http://[bad/"><a href="y">y</a>`, "http://h.example/a/b/c.html", "http://h.example/a/b/y"},
	} {
		r := mustParse(t, htmlPage("http://h.example/a/b/c.html", tc.page), parser.Options{})
		if r.BaseURL != tc.base || len(r.Outlinks) != 1 || r.Outlinks[0].URL != tc.link {
			t.Errorf("%s: base %q links %v; want %q, %q", tc.page, r.BaseURL, r.Outlinks, tc.base, tc.link)
		}
	}
	// Content.BaseURL (after a redirect) is the base when there is no <base>.
	c := htmlPage("http://h.example/old", `<a href="rel">r</a>`)
	c.BaseURL = "http://h.example/new/"
	if r := mustParse(t, c, parser.Options{}); r.Outlinks[0].URL != "http://h.example/new/rel" {
		t.Errorf("BaseURL ignored: %v", r.Outlinks)
	}
}

func TestMetaRobots(t *testing.T) {
	body := func(robots string) string {
		return `<html><head><title>T</title><meta name="ROBOTS" content="` + robots + `"></head><body><p>words here</p><a href="/l">l</a></body></html>`
	}
	for _, tc := range []struct {
		content           string
		noindex, nofollow bool
	}{
		{"index,follow", false, false},
		{"noindex", true, false},
		{"NOFOLLOW", false, true},
		{"noindex, nofollow", true, true},
		{"none", true, true},
		{"noarchive", false, false},
	} {
		r := mustParse(t, htmlPage("http://h.example/p", body(tc.content)), parser.Options{})
		if r.NoIndex != tc.noindex || r.NoFollow != tc.nofollow {
			t.Errorf("%q: noindex %v nofollow %v", tc.content, r.NoIndex, r.NoFollow)
		}
		if tc.noindex != (r.Text == "" && r.Title == "") {
			t.Errorf("%q: text %q title %q", tc.content, r.Text, r.Title)
		}
		if r.Features.Words != 3 {
			t.Errorf("%q: words %d; features describe the page whatever noindex says", tc.content, r.Features.Words)
		}
		if tc.nofollow != (len(r.Outlinks) == 0) || int(r.Features.Outlinks) != len(r.Outlinks) {
			t.Errorf("%q: outlinks %v features %d", tc.content, r.Outlinks, r.Features.Outlinks)
		}
		if tc.content == "noarchive" && !r.NoCache {
			t.Errorf("noarchive: NoCache not set")
		}
	}
	// The signature does not depend on noindex.
	a := mustParse(t, htmlPage("http://h.example/p", body("noindex")), parser.Options{})
	b := mustParse(t, htmlPage("http://h.example/p", body("index")), parser.Options{})
	if string(a.MD5) != string(b.MD5) || string(a.TextProfile) != string(b.TextProfile) {
		t.Errorf("noindex changed the signatures")
	}
	// X-Robots-Tag.
	for _, tc := range []struct {
		h                 string
		noindex, nofollow bool
	}{
		{"noindex", true, false},
		{"nofollow, noarchive", false, true},
		{"googlebot: noindex", false, false},
		{"none", true, true},
		{"unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow", false, true},
	} {
		c := htmlPage("http://h.example/p", `<p>x</p><a href="/l">l</a>`)
		c.Headers = map[string]string{"x-robots-tag": tc.h}
		r := mustParse(t, c, parser.Options{})
		if r.NoIndex != tc.noindex || r.NoFollow != tc.nofollow {
			t.Errorf("X-Robots-Tag %q: noindex %v nofollow %v", tc.h, r.NoIndex, r.NoFollow)
		}
	}
}

func TestMetaRefresh(t *testing.T) {
	page := `<html><head><meta http-equiv="Refresh" content="5; URL='/moved.html'"></head><body><a href="/x">x</a></body></html>`
	r := mustParse(t, htmlPage("http://h.example/p", page), parser.Options{})
	if r.RefreshURL != "http://h.example/moved.html" || r.RefreshDelay != 5 || r.Redirect != r.RefreshURL {
		t.Fatalf("refresh %q delay %d redirect %q", r.RefreshURL, r.RefreshDelay, r.Redirect)
	}
	if got := urls(r.Outlinks); !reflect.DeepEqual(got, []string{"http://h.example/moved.html", "http://h.example/x"}) {
		t.Errorf("outlinks %v", got)
	}
	// The refresh target survives the cap...
	r = mustParse(t, htmlPage("http://h.example/p", page), parser.Options{MaxOutlinks: 1})
	if got := urls(r.Outlinks); !reflect.DeepEqual(got, []string{"http://h.example/moved.html"}) || r.Links.Dropped["cap"] != 1 {
		t.Errorf("capped outlinks %v, dropped %v", got, r.Links.Dropped)
	}
	// ...is reported as Redirect under nofollow, with no outlinks...
	nf := strings.Replace(page, "<head>", `<head><meta name=robots content=nofollow>`, 1)
	r = mustParse(t, htmlPage("http://h.example/p", nf), parser.Options{})
	if len(r.Outlinks) != 0 || r.Redirect != "http://h.example/moved.html" {
		t.Errorf("nofollow: outlinks %v redirect %q", r.Outlinks, r.Redirect)
	}
	// ...and is not a Redirect when the filters reject it.
	deny := urlutil.FilterFunc(func(u string) (bool, string) { return !strings.Contains(u, "moved"), "test" })
	r = mustParse(t, htmlPage("http://h.example/p", page), parser.Options{Filter: deny})
	if r.Redirect != "" || r.RefreshURL == "" || r.Links.Dropped["filter-test"] != 1 {
		t.Errorf("filtered refresh: redirect %q refresh %q dropped %v", r.Redirect, r.RefreshURL, r.Links.Dropped)
	}
	// A refresh of the page itself is no redirect.
	r = mustParse(t, htmlPage("http://h.example/p", `<meta http-equiv=refresh content="30">`), parser.Options{})
	if r.RefreshURL != "" || r.Redirect != "" {
		t.Errorf("self refresh: %q %q", r.RefreshURL, r.Redirect)
	}
}

func TestOutlinkChecks(t *testing.T) {
	page := `<a href="/a">a</a><a href="http://www.h.com/b">b</a><a href="http://shop.h.com/c">c</a>
<a href="http://other.com/d">d</a><a href="/a">a again</a><a href="/e">e</a>`
	c := htmlPage("http://www.h.com/", page)
	for _, tc := range []struct {
		name    string
		o       parser.Options
		want    []string
		dropped map[string]int
	}{
		{"any", parser.Options{}, []string{"http://www.h.com/a", "http://www.h.com/b", "http://shop.h.com/c", "http://other.com/d", "http://www.h.com/e"},
			map[string]int{"duplicate": 1}},
		{"host", parser.Options{Scope: urlutil.ScopeHost}, []string{"http://www.h.com/a", "http://www.h.com/b", "http://www.h.com/e"},
			map[string]int{"duplicate": 1, "scope-host": 2}},
		{"domain", parser.Options{Scope: urlutil.ScopeDomain}, []string{"http://www.h.com/a", "http://www.h.com/b", "http://shop.h.com/c", "http://www.h.com/e"},
			map[string]int{"duplicate": 1, "scope-domain": 1}},
		{"ignore external", parser.Options{IgnoreExternalLinks: true}, []string{"http://www.h.com/a", "http://www.h.com/b", "http://www.h.com/e"},
			map[string]int{"duplicate": 1, "external": 2}},
		{"ignore external by domain", parser.Options{IgnoreExternalLinks: true, Scope: urlutil.ScopeDomain}, []string{"http://www.h.com/a", "http://www.h.com/b", "http://shop.h.com/c", "http://www.h.com/e"},
			map[string]int{"duplicate": 1, "external": 1}},
		{"ignore internal", parser.Options{IgnoreInternalLinks: true}, []string{"http://shop.h.com/c", "http://other.com/d"},
			map[string]int{"duplicate": 1, "internal": 3}},
		{"cap", parser.Options{MaxOutlinks: 2}, []string{"http://www.h.com/a", "http://www.h.com/b"},
			map[string]int{"duplicate": 1, "cap": 3}},
		{"filter", parser.Options{Filter: urlutil.NewFilters(urlutil.FilterOptions{MaxSegments: 0, DenySuffixes: []string{"/b"}})},
			[]string{"http://www.h.com/a", "http://shop.h.com/c", "http://other.com/d", "http://www.h.com/e"},
			map[string]int{"duplicate": 1, "filter-" + urlutil.ReasonSuffix: 1}},
	} {
		r := mustParse(t, c, tc.o)
		if got := urls(r.Outlinks); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: outlinks %v, want %v", tc.name, got, tc.want)
		}
		if !reflect.DeepEqual(r.Links.Dropped, tc.dropped) {
			t.Errorf("%s: dropped %v, want %v", tc.name, r.Links.Dropped, tc.dropped)
		}
		if int(r.Features.Outlinks) != len(tc.want) {
			t.Errorf("%s: features.outlinks %d", tc.name, r.Features.Outlinks)
		}
	}
	// The first non-empty anchor of a target wins.
	r := mustParse(t, htmlPage("http://h.example/", `<a href="/x"><img src=i></a><a href="/x">second</a><a href="/x">third</a>`), parser.Options{})
	if len(r.Outlinks) != 1 || r.Outlinks[0].Anchor != "second" {
		t.Errorf("anchors %v", r.Outlinks)
	}
	// The default cap is Nutch's 100.
	var b strings.Builder
	for i := range 150 {
		b.WriteString(`<a href="/p` + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + `">x</a>`)
	}
	r = mustParse(t, htmlPage("http://h.example/", b.String()), parser.Options{})
	if len(r.Outlinks) != parser.DefaultMaxOutlinks || r.Links.Dropped["cap"] != 50 {
		t.Errorf("default cap: %d kept, dropped %v", len(r.Outlinks), r.Links.Dropped)
	}
	r = mustParse(t, htmlPage("http://h.example/", b.String()), parser.Options{MaxOutlinks: -1})
	if len(r.Outlinks) != 150 {
		t.Errorf("no cap: %d kept", len(r.Outlinks))
	}
}

func TestCharsets(t *testing.T) {
	latin := "Crème brûlée à Zürich – “quoted” œuvre €5"
	w1252, err := charmap.Windows1252.NewEncoder().String(latin)
	if err != nil {
		t.Fatal(err)
	}
	jp := "日本語のテキスト、カタカナ ひらがな"
	sjis, err := japanese.ShiftJIS.NewEncoder().String(jp)
	if err != nil {
		t.Fatal(err)
	}
	eucjp, err := japanese.EUCJP.NewEncoder().String(jp)
	if err != nil {
		t.Fatal(err)
	}
	pad := "<!-- " + strings.Repeat("padding ", 200) + "-->" // pushes a <meta> past 1024 bytes
	for _, tc := range []struct {
		name, ctype, body, want, charset, source string
	}{
		{"header", "text/html; charset=windows-1252", "<p>" + w1252, latin, "windows-1252", parser.CharsetFromHeader},
		{"header latin1 label", "text/html; charset=ISO-8859-1", "<p>" + w1252, latin, "windows-1252", parser.CharsetFromHeader},
		{"meta charset", "text/html", `<meta charset="shift_jis"><p>` + sjis, jp, "shift_jis", parser.CharsetFromMeta},
		{"meta http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP"><p>` + eucjp, jp, "euc-jp", parser.CharsetFromMeta},
		{"late meta", "text/html", pad + `<meta charset="windows-1252"><p>` + w1252, latin, "windows-1252", parser.CharsetFromMeta},
		{"header beats meta", "text/html;charset=Shift_JIS", `<meta charset="utf-8"><p>` + sjis, jp, "shift_jis", parser.CharsetFromHeader},
		{"BOM beats header", "text/html; charset=windows-1252", "\xef\xbb\xbf<p>" + latin, latin, "utf-8", parser.CharsetFromBOM},
		{"utf-16 BOM", "text/html", utf16le("<p>" + jp), jp, "utf-16le", parser.CharsetFromBOM},
		{"meta utf-16 means utf-8", "text/html", `<meta charset="utf-16"><p>` + latin, latin, "utf-8", parser.CharsetFromMeta},
		{"sniffed utf-8", "text/html", "<p>" + latin, latin, "utf-8", parser.CharsetFromSniff},
		{"default windows-1252", "text/html", "<p>" + w1252, latin, "windows-1252", parser.CharsetFromDefault},
		{"unknown label", "text/html; charset=no-such-thing", "<p>" + latin, latin, "utf-8", parser.CharsetFromSniff},
		{"plain text", "text/plain; charset=shift_jis", sjis, jp, "shift_jis", parser.CharsetFromHeader},
	} {
		c := segment.Content{URL: "http://h.example/", ContentType: tc.ctype, Body: []byte(tc.body)}
		r, err := parser.Parse(c, parser.Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Text != strings.Join(strings.Fields(tc.want), " ") || r.Charset != tc.charset || r.CharsetSource != tc.source {
			t.Errorf("%s: text %q charset %s (%s); want %q %s (%s)", tc.name, r.Text, r.Charset, r.CharsetSource, tc.want, tc.charset, tc.source)
		}
	}
	// The charset parameter may come in the Content-Type header while
	// ContentType holds the media type only.
	c := segment.Content{URL: "http://h.example/", ContentType: "text/html", Body: []byte("<p>" + w1252),
		Headers: map[string]string{"Content-Type": "text/html; charset=windows-1252"}}
	if r := mustParse(t, c, parser.Options{}); r.Text != latin {
		t.Errorf("charset from headers: %q", r.Text)
	}
}

func utf16le(s string) string {
	var b []byte
	b = append(b, 0xff, 0xfe)
	for _, r := range s {
		if r > 0xffff {
			panic("BMP only")
		}
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func TestContentTypes(t *testing.T) {
	r := mustParse(t, segment.Content{URL: "http://h.example/a.txt", ContentType: "text/plain", Body: []byte("Plain\ttext,\n\n  http://not.a.link/ here")}, parser.Options{})
	if r.Text != "Plain text, http://not.a.link/ here" || r.Features.Words != 4 || len(r.Outlinks) != 0 || r.Title != "" || r.MediaType != "text/plain" {
		t.Errorf("plain: %+v", r)
	}
	// Sniffed when the type is missing.
	r = mustParse(t, segment.Content{URL: "http://h.example/", Body: []byte("<html><title>Sniffed</title><p>x")}, parser.Options{})
	if r.Title != "Sniffed" || r.MediaType != "text/html" {
		t.Errorf("sniffed: %+v", r)
	}
	r = mustParse(t, segment.Content{URL: "http://h.example/", ContentType: "application/xhtml+xml; charset=utf-8", Body: []byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head><body><p>Body</p></body></html>`)}, parser.Options{})
	if r.Title != "X" || r.Text != "Body" {
		t.Errorf("xhtml: %+v", r)
	}
	// A PDF that is not one (here cut short) fails as a PDF.
	for _, c := range []segment.Content{
		{URL: "http://h.example/d.pdf", ContentType: "application/pdf", Body: []byte("%PDF-1.4\n...")},
		{URL: "http://h.example/s", ContentType: "application/octet-stream", Body: []byte("%PDF-1.4\n")},
	} {
		_, err := parser.Parse(c, parser.Options{})
		var pe *parser.Error
		if err == nil || errors.Is(err, parser.ErrUnsupportedType) || !errors.As(err, &pe) || pe.URL != c.URL || pe.Panic ||
			!strings.Contains(err.Error(), "pdf") {
			t.Errorf("%s: err %v, want a PDF error", c.URL, err)
		}
	}
	for _, c := range []segment.Content{
		{URL: "http://h.example/i", ContentType: "image/png", Body: []byte("\x89PNG\r\n\x1a\n")},
		{URL: "http://h.example/z", ContentType: "application/zip", Body: []byte("PK\x03\x04")},
	} {
		_, err := parser.Parse(c, parser.Options{})
		var pe *parser.Error
		if !errors.Is(err, parser.ErrUnsupportedType) || !errors.As(err, &pe) || pe.URL != c.URL || pe.Panic {
			t.Errorf("%s: err %v", c.URL, err)
		}
	}
	if _, err := parser.Parse(htmlPage("no scheme", "<p>x"), parser.Options{}); err == nil {
		t.Errorf("a page without a valid URL parsed")
	}
}

func TestPanicRecovered(t *testing.T) {
	boom := urlutil.FilterFunc(func(u string) (bool, string) {
		if strings.HasSuffix(u, "/boom") {
			panic("filter exploded")
		}
		return true, ""
	})
	p := parser.New(parser.Options{Filter: boom})
	_, err := p.Parse(htmlPage("http://h.example/", `<a href="/ok">ok</a><a href="/boom">boom</a>`))
	var pe *parser.Error
	if !errors.As(err, &pe) || !pe.Panic || !strings.Contains(err.Error(), "filter exploded") {
		t.Fatalf("panic not recovered as an error: %v", err)
	}
	// The parser is still usable.
	if r, err := p.Parse(htmlPage("http://h.example/", `<a href="/ok">ok</a>`)); err != nil || len(r.Outlinks) != 1 {
		t.Errorf("after a panic: %v %v", r, err)
	}
}

// TestBrokenHTML: markup that is broken in every way still parses, gives
// valid UTF-8 and sane counts.
func TestBrokenHTML(t *testing.T) {
	huge := strings.Repeat("A", 4<<20)
	cases := map[string]string{
		"unclosed":         `<html><head><title>Unclosed<body><p>one<p>two<div><a href="/x">anchor<a href="/y">next`,
		"garbage":          "\x00\xff\xfe<p>\x80\x81 text \xc3\x28 <a href=\"/\xff\">\x00link</a>\x1b[31m",
		"huge attribute":   `<p>before</p><a href="/big" title="` + huge + `">big</a><img alt="` + huge[:1<<20] + `"><p>after</p>`,
		"huge attr unterm": `<a href="` + huge,
		"deep nesting":     strings.Repeat("<div><span><a href=/d>", 100000) + "deep" + strings.Repeat("</a></span></div>", 3),
		"unterminated":     `<p>text<!-- never closed <a href="/c">c</a>`,
		"script unterm":    `<p>shown</p><script>var a = "<a href='/s'>";`,
		"title unterm":     `<title>runs to the end <a href="/t">t</a>`,
		"broken tags":      `<<p>>a<</p> <a href=/q <b>bold</b> <a/b/c href=/r>r</a> </ > <p =x>y`,
		"entities":         `<p>&amp &lt;&gt; &#0; &#x110000; &#xD800; &nosuch; &copy&eacute;</p>`,
		"nul in tags":      "<a\x00 href=\"/n\x00\">n\x00</a><ti\x00tle>x",
		"empty":            "",
		"only whitespace":  " \n\t ",
		"plaintext":        `<plaintext><a href="/p">not a link</a>`,
		"frameset":         `<frameset><frame src="/f1"><frame src="/f2"><noframes>no frames</noframes></frameset>`,
		"svg title":        `<svg><title>svg title</title><text>drawn</text></svg><title>Real</title>`,
	}
	for name, body := range cases {
		r, err := parser.Parse(htmlPage("http://h.example/", body), parser.Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !utf8.ValidString(r.Text) || !utf8.ValidString(r.Title) {
			t.Errorf("%s: invalid UTF-8 in text or title", name)
		}
		for _, l := range r.Outlinks {
			if !utf8.ValidString(l.Anchor) || len([]rune(l.Anchor)) > parser.MaxAnchorLength {
				t.Errorf("%s: bad anchor %q", name, l.Anchor)
			}
		}
		if int(r.Features.Words) != len(strings.Fields(r.Text)) {
			t.Errorf("%s: %d words counted, text has %d", name, r.Features.Words, len(strings.Fields(r.Text)))
		}
		switch name {
		case "unclosed":
			if r.Title != "Unclosed<body><p>one<p>two<div><a href=\"/x\">anchor<a href=\"/y\">next" || len(r.Outlinks) != 0 {
				t.Errorf("%s: an unclosed title runs to the end: %+v", name, r)
			}
		case "huge attribute":
			if r.Text != "before big after" || len(r.Outlinks) != 1 || r.Outlinks[0].Anchor != "big" {
				t.Errorf("%s: %q %v", name, r.Text, r.Outlinks)
			}
		case "deep nesting":
			// Links past MaxRawLinks are not collected: the innermost
			// anchor, the only one with text, is one of them.
			if r.Text != "deep" || len(r.Outlinks) != 1 || r.Outlinks[0].Anchor != "" || r.Links.Found != 100000 ||
				r.Links.Dropped["limit"] != 100000-parser.MaxRawLinks {
				t.Errorf("%s: %q %v found %d", name, r.Text, r.Outlinks, r.Links.Found)
			}
		case "script unterm":
			if r.Text != "shown" || len(r.Outlinks) != 0 {
				t.Errorf("%s: %q %v", name, r.Text, r.Outlinks)
			}
		case "plaintext":
			if r.Text != `<a href="/p">not a link</a>` || len(r.Outlinks) != 0 {
				t.Errorf("%s: %q %v", name, r.Text, r.Outlinks)
			}
		case "frameset":
			if got := urls(r.Outlinks); !reflect.DeepEqual(got, []string{"http://h.example/f1", "http://h.example/f2"}) || r.Text != "" {
				t.Errorf("%s: %q %v", name, r.Text, got)
			}
		case "svg title":
			if r.Title != "Real" || r.Text != "drawn" {
				t.Errorf("%s: title %q text %q", name, r.Title, r.Text)
			}
		case "entities":
			if !strings.HasPrefix(r.Text, "& <> ") || !strings.HasSuffix(r.Text, "©é") {
				t.Errorf("%s: %q", name, r.Text)
			}
		}
	}
}

// TestNoTextProfile: with NoTextProfile the text profile is not computed,
// and everything else is as without it.
func TestNoTextProfile(t *testing.T) {
	page := []byte(`<html><head><title>T</title></head><body><p>some words to profile, words again</p><a href="/x">x</a></body></html>`)
	c := segment.Content{URL: "http://site.example/a/b.html", ContentType: "text/html", Body: page}
	full, err := parser.New(parser.Options{}).Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	md5Only, err := parser.New(parser.Options{NoTextProfile: true}).Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.TextProfile) != 16 || md5Only.TextProfile != nil {
		t.Errorf("text profiles %x and, with NoTextProfile, %x", full.TextProfile, md5Only.TextProfile)
	}
	full.TextProfile = nil
	if !reflect.DeepEqual(full, md5Only) {
		t.Errorf("results differ beyond the text profile:\n%+v\n%+v", full, md5Only)
	}
}

// TestEmbeddedLinks: with Options.EmbeddedLinks the resources a page
// embeds are outlinks too, read the same by the scanner and by the
// tokenizer (the second page has a NUL, which the scanner leaves to the
// tokenizer); without it only navigational links are.
func TestEmbeddedLinks(t *testing.T) {
	const page = `<html><head><link rel="stylesheet" href="/s.css"><link rel="icon" href="/f.ico">` +
		`<link rel="next" href="/2.html"><link rel="author" href="/me.html"><script src="/app.js"></script></head>` +
		`<body><a href="/a.html"><img src="/i.png" alt="pic"></a><video src="/v.mp4"><source src="/v.webm"></video>` +
		`<template><img src="/t.png"></template><script>var s = "<img src=/no.png>";</script></body></html>`
	want := []string{"http://h.example/s.css", "http://h.example/f.ico", "http://h.example/2.html",
		"http://h.example/me.html", "http://h.example/app.js", "http://h.example/a.html", "http://h.example/i.png",
		"http://h.example/v.mp4", "http://h.example/v.webm"}
	for _, body := range []string{page, page + "\x00"} {
		r := mustParse(t, htmlPage("http://h.example/", body), parser.Options{EmbeddedLinks: true})
		var got []string
		for _, o := range r.Outlinks {
			got = append(got, o.URL)
		}
		if !slices.Equal(got, want) {
			t.Errorf("embedded links:\n got %v\nwant %v", got, want)
		}
	}
	r := mustParse(t, htmlPage("http://h.example/", page), parser.Options{})
	var got []string
	for _, o := range r.Outlinks {
		got = append(got, o.URL)
	}
	if want := []string{"http://h.example/2.html", "http://h.example/me.html", "http://h.example/a.html"}; !slices.Equal(got, want) {
		t.Errorf("navigational links: %v, want %v", got, want)
	}
}
