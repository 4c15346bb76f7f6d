package parser_test

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/urlutil"
)

// The golden test records what Parse and urlutil.ResolveReference give for
// a large corpus (simweb pages, the fuzz seeds, generated markup and
// links) into a file, and later compares the current code's outputs with
// that file, field by field. It is how a rewrite of the parser shows that
// it changed no output: record with the old code, compare with the new.
//
//	go test -run TestGolden -golden.record /tmp/parser.golden ./parser/
//	go test -run TestGolden -golden.compare /tmp/parser.golden ./parser/
var (
	goldenRecord  = flag.String("golden.record", "", "record the golden corpus's outputs into this file")
	goldenCompare = flag.String("golden.compare", "", "compare outputs with the golden file recorded earlier")
)

// goldenCase is one input and what the code gave for it: a Parse (Content
// with option set Opts) or a ResolveReference (Base, Href with
// normalizer Opts).
type goldenCase struct {
	Name    string
	Content segment.Content
	Base    string
	Href    string
	Resolve bool
	Opts    int
	Out     string
}

// goldenOptions are the option sets every page is parsed with.
func goldenOptions() []parser.Options {
	keep := urlutil.NewNormalizer(urlutil.NormalizerOptions{KeepSessionIDs: true, StripParams: []string{"utm_source", "ref"}})
	return []parser.Options{
		{},
		{Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions()), MaxOutlinks: 5},
		{MaxOutlinks: -1, Scope: urlutil.ScopeDomain, IgnoreExternalLinks: true, NoTextProfile: true},
		{Normalizer: keep, Scope: urlutil.ScopeHost, IgnoreInternalLinks: true, MaxOutlinks: 2},
	}
}

func goldenNormalizers() []*urlutil.Normalizer {
	return []*urlutil.Normalizer{
		urlutil.NewNormalizer(urlutil.NormalizerOptions{}),
		urlutil.NewNormalizer(urlutil.NormalizerOptions{KeepSessionIDs: true, StripParams: []string{"utm_source", "Ref"}}),
	}
}

// dump renders a result exactly: %#v shows nil and empty slices and maps
// apart and prints maps sorted.
func dump(r *parser.Result, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%#v", *r)
}

func TestGolden(t *testing.T) {
	if *goldenRecord == "" && *goldenCompare == "" {
		t.Skip("needs -golden.record or -golden.compare")
	}
	if *goldenRecord != "" {
		cases := goldenInputs(t)
		run(cases)
		f, err := os.Create(*goldenRecord)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		if err := gob.NewEncoder(w).Encode(cases); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d cases", len(cases))
		return
	}
	f, err := os.Open(*goldenCompare)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []goldenCase
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&want); err != nil {
		t.Fatal(err)
	}
	got := make([]goldenCase, len(want))
	copy(got, want)
	for i := range got {
		got[i].Out = ""
	}
	run(got)
	bad := 0
	for i := range want {
		if got[i].Out != want[i].Out {
			bad++
			if bad <= 10 {
				t.Errorf("%s (opts %d): differs\n got %s\nwant %s", want[i].Name, want[i].Opts, got[i].Out, want[i].Out)
			}
		}
	}
	t.Logf("compared %d cases, %d differ", len(want), bad)
}

// run fills in the outputs.
func run(cases []goldenCase) {
	opts := goldenOptions()
	ps := make([]*parser.Parser, len(opts))
	for i, o := range opts {
		ps[i] = parser.New(o)
	}
	norms := goldenNormalizers()
	for i := range cases {
		c := &cases[i]
		if c.Resolve {
			u, err := norms[c.Opts].ResolveReference(c.Base, c.Href)
			if err != nil {
				c.Out = "error: " + err.Error()
			} else {
				c.Out = strconv.Quote(u)
			}
			continue
		}
		r, err := ps[c.Opts].Parse(c.Content)
		c.Out = dump(r, err)
	}
}

// goldenInputs builds the corpus.
func goldenInputs(t *testing.T) []goldenCase {
	var pages []goldenCase
	add := func(name string, c segment.Content) {
		pages = append(pages, goldenCase{Name: name, Content: c})
	}
	// The fuzz seeds.
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzParse/*")
	for _, s := range seeds {
		body, ctype, ok := readSeed(t, s)
		if ok {
			add(s, segment.Content{URL: "http://h.example/dir/page.html", ContentType: ctype, Body: body})
		}
	}
	// simweb pages, several versions, every kind.
	for _, seed := range []uint64{11, 21} {
		c := newSimwebCorpus(t, seed, 40, 2000)
		for _, row := range c.truth {
			for v := 0; v < 2; v++ {
				body, err := c.web.Body(int(row.ID), v, []simweb.Addressing{{}, {Port: 8080, IPPerHost: true}}[v])
				if err != nil {
					continue
				}
				ct := row.ContentType
				if row.CharsetIn == "header" || row.CharsetIn == "both" {
					ct += "; charset=" + row.Charset
				}
				add(fmt.Sprintf("simweb %d %s v%d", seed, row.URL, v), segment.Content{URL: row.URL, ContentType: ct, Body: body})
			}
		}
	}
	// Generated markup.
	rng := rand.New(rand.NewPCG(7, 8))
	urls := []string{"http://h.example/dir/page.html", "HTTP://H.Example:80/dir/./page.html?b=2&a=1#f", "https://x.example.co.uk/a/b/", "http://h.example", "http://[::1]:8080/p;jsessionid=9?x=1"}
	for i := 0; i < 6000; i++ {
		c := segment.Content{URL: urls[rng.IntN(len(urls))], Body: []byte(genHTML(rng))}
		switch rng.IntN(8) {
		case 0:
			c.ContentType = ""
		case 1:
			c.ContentType = "text/plain"
		case 2:
			c.Headers = map[string]string{"content-type": "text/html; charset=windows-1252", "X-Robots-Tag": pick(rng, "noindex", "googlebot: nofollow", "none, unavailable_after: x", "NOCACHE")}
		case 3:
			c.ContentType = "application/xhtml+xml; charset=iso-8859-2"
		case 4:
			c.BaseURL = pick(rng, "http://other.example/x/y", "http://h.example/dir/page.html", "::bad", "http://h.example/r/")
			c.ContentType = "text/html"
		default:
			c.ContentType = "text/html"
		}
		add(fmt.Sprintf("gen %d", i), c)
	}
	var cases []goldenCase
	n := len(goldenOptions())
	for _, p := range pages {
		for o := 0; o < n; o++ {
			p.Opts = o
			cases = append(cases, p)
		}
	}
	// Links: every href in the simweb and generated pages, and generated
	// ones, against several bases.
	hrefs := map[string]bool{}
	for _, p := range pages {
		for _, h := range hrefsOf(p.Content.Body) {
			hrefs[h] = true
		}
	}
	for i := 0; i < 20000; i++ {
		hrefs[genHref(rng)] = true
	}
	bases := []string{"http://h.example/a/b/c?q=1", "http://h.example", "HTTPS://user:pw@H.example:443/x/./y/../z;sid=1?a=&b=1#f", "http://h.example/d/", "ftp://f.example/p/q", "foo://bar/baz", "mailto:x@y", "http://h.example/a\\b\\c", "http://1.2.3.4/~x/%7euser/"}
	for h := range hrefs {
		for _, b := range bases {
			for o := 0; o < 2; o++ {
				cases = append(cases, goldenCase{Name: "resolve", Base: b, Href: h, Resolve: true, Opts: o})
			}
		}
	}
	return cases
}

func pick(rng *rand.Rand, s ...string) string { return s[rng.IntN(len(s))] }

// genHTML makes a page of random fragments chosen to exercise the
// parser's corners.
func genHTML(rng *rand.Rand) string {
	frags := []string{
		"<html>", "<HEAD>", "<title>", "</title>", "<TITLE>Big &amp; Small</TITLE>", "<body>", "</body>", "<p>", "</P>", "<br>", "<br/>",
		"<div>", "</div>", "<span>", "</span>", "<b>", "</b>", " ", "\n\t ", "\u00a0", "\u3000", "&nbsp;", "&amp;", "&lt;", "&#x41;", "&#0;", "&bogus;",
		"word", "Wörter", "日本語", "\xff\xfe", "\x00", "\x7f", "\x1f", "<!-- c -->", "<!DOCTYPE html>", "<script>var a='<a href=x>';</script>",
		"<style>p{}</style>", "<noscript><a href=/ns>ns</a></noscript>", "<textarea>ta <b>x</b></textarea>", "<xmp><a href=q></xmp>", "<plaintext>",
		"<a href=\"/abs\">", "<a href='rel/x.html'>", "<A HREF=\"../up\">", "<a href=\"#frag\">", "<a href=\"javascript:void(0)\">", "<a href=\"mailto:x@y\">",
		"<a href=\"//other.example/p\">", "<a href=\"http://h.example/dir/page.html\">", "<a href=\"?q=1&amp;utm_source=x\">", "<a href=\" /sp ace \">",
		"<a href=\"http:rel\">", "<a href=\"\\back\\slash\">", "<a href=\"HTTP://UP.EXAMPLE/A/./B/../C\">", "<a href=\"/x;jsessionid=1?sid=2&a=1\">",
		"<a href=\"http://bücher.example/ü\">", "<a href=\"http://[::1]/\">", "<a href=\"http://bad host/\">", "<a href=\"\">", "<a>", "<a href=/n rel=nofollow>",
		"<a href=/2 rel=\"NoFollow ugc\">", "<a href=\"/t\ta\nb\">", "<a href=\"%zz/%41%7e\">", "</a>", "</A>", "<img alt=\" Alt  text \">", "<img>", "<IMG ALT=first><img alt=second>",
		"<area href=/area alt=\"  area alt \">", "<area alt=x>", "<area href=/anf rel=nofollow>", "<frame src=/frame>", "<iframe src=/if>in iframe</iframe>",
		"<link rel=canonical href=\" /canon \">", "<link rel=\"next\" href=/next>", "<link rel=stylesheet href=/s.css>", "<LINK REL=\"Canonical nofollow\" HREF=/c2>",
		"<link rel=alternate href=/alt>", "<base href=/base/>", "<BASE HREF=\"http://b.example/x/\">", "<base target=_blank>", "<base href=\"::\">",
		"<meta name=robots content=\"noindex\">", "<meta name=ROBOTS content=\"nofollow, noarchive\">", "<meta name=robots content=none>",
		"<meta http-equiv=refresh content=\"0; url=/refresh\">", "<meta http-equiv=Refresh content=\"5\">", "<META HTTP-EQUIV=REFRESH CONTENT=\"3;URL='http://r.example/'\">",
		"<meta name=description content=\"  a description \">", "<meta property=og:title content=OG>", "<meta name=Keywords content=k1,k2>", "<meta name=x>",
		"<meta charset=\"windows-1252\">", "<meta http-equiv=content-type content=\"text/html; charset=shift_jis\">", "<meta name=description content=second>",
		"<template><a href=/tpl>t</a><meta name=intpl content=x></template>", "<template>", "</template>", "<svg><title>svg title</title>", "</svg>", "<math>", "</math>",
		"<svg/>", "<h1>Head</h1>", "<li>item", "<td>cell</td>", "<table>", "<input>", "<select><option>o1<option>o2</select>", "<button>b</button>",
		"<pre>  pre  text  </pre>", "<a href=/x>", "<a href=/x>", "\r\n", "<p", "<a href=\"/unterminated", "<![CDATA[x]]>", "<?pi?>", "</>", "< a>", "<a\nhref=/nl>",
		"<a href=/dup>first</a>", "<a href=/dup>second</a>", "<a href=/dup></a>", "<a href=/dupe2></a><a href=/dupe2>late</a>",
		"<a href=\"http://other.example/\">ext</a>", "<a href=\"http://sub.h.example/\">sub</a>", "<a href=\"/img.png\">png</a>",
	}
	var b strings.Builder
	n := rng.IntN(60)
	for i := 0; i < n; i++ {
		b.WriteString(frags[rng.IntN(len(frags))])
	}
	if rng.IntN(20) == 0 {
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&b, "<a href=/l%d>l %d</a>", rng.IntN(150), i)
		}
	}
	return b.String()
}

// genHref makes a random link.
func genHref(rng *rand.Rand) string {
	parts := []string{"", "/", "//", "./", "../", ".", "..", "a", "B", "x.html", "?", "#", "&", "=", "q=1", "%", "%2", "%41", "%7e", "%2F", "%zz",
		"\\", ":", "@", ";", "jsessionid=1", "sid=2", "utm_source=z", "ref=1", " ", "\t", "\n", "\x01", "ü", "日", "\xff", "http:", "https:", "HTTP://",
		"ftp://", "mailto:", "javascript:", "h.example", "H.EXAMPLE", "other.example", ":80", ":8080", ":0", ":99999", "[::1]", "1.2.3.4", "xn--", "-", "_", "~", "+", "!", "$", "'", "(", "*", ",", "|", "^", "`", "{", "\"", "<"}
	var b strings.Builder
	n := 1 + rng.IntN(8)
	for i := 0; i < n; i++ {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// hrefsOf returns the attribute values of a page's tags.
func hrefsOf(body []byte) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			for _, more := z.TagName(); more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if s := string(k); s == "href" || s == "src" {
					out = append(out, string(v))
				}
			}
		}
	}
}

// readSeed reads a FuzzParse corpus file.
func readSeed(t *testing.T, path string) ([]byte, string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		return nil, "", false
	}
	b, err1 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	s, err2 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[2], "string("), ")"))
	if err1 != nil || err2 != nil {
		t.Logf("seed %s: %v %v", path, err1, err2)
		return nil, "", false
	}
	return []byte(b), s, true
}
