package parser_test

import (
	"reflect"
	"testing"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
)

// TestTrickyPages pins what Parse gives for markup the scanner, the
// attribute reader, the text writer and the link resolution's fast paths
// have rules for: relative links against <base href>, fragments, entities
// in text and attributes, CRLF line ends, upper-case tags and attributes,
// javascript: and mailto: links, raw text, comments, <template>,
// rel=nofollow, alt texts, white space collapsing.
func TestTrickyPages(t *testing.T) {
	const page = "http://h.example/dir/page.html"
	type link = segment.Outlink
	for _, c := range []struct {
		name, body  string
		title, text string
		words       int
		links       []link
		found       int
		dropped     map[string]int
		refresh     string
		canonical   string
		meta        map[string]string
		noindex     bool
		images      int
		base        string
	}{
		{
			name: "links",
			body: `<html><HEAD><BASE HREF="/b/"><TITLE>  Big &amp;   Small </TITLE></HEAD><BODY>` +
				`<A HREF="x.html">X</A> <a href="../up.html#frag">Up</a> <a href="?q=1&amp;r=2">Q</a> <a href="#top">Top</a> ` +
				`<a href="javascript:void(0)">JS</a> <a href="mailto:a@b.example">M</a> <a href="//other.example/p">Other</a> ` +
				`<a href="HTTP://UP.EXAMPLE:80/A/./B/../C">Abs</a> <a href='./x.html'>again</a> <a href="/dir/page.html#self">self</a></BODY></html>`,
			title: "Big & Small", text: "X Up Q Top JS M Other Abs again self", words: 10,
			links: []link{{URL: "http://h.example/b/x.html", Anchor: "X"}, {URL: "http://h.example/up.html", Anchor: "Up"},
				{URL: "http://h.example/b/?q=1&r=2", Anchor: "Q"}, {URL: "http://h.example/b/", Anchor: "Top"},
				{URL: "http://other.example/p", Anchor: "Other"}, {URL: "http://up.example/A/C", Anchor: "Abs"}},
			found: 10, dropped: map[string]int{"invalid": 2, "duplicate": 1, "self": 1},
			meta: map[string]string{"charset": "utf-8"}, base: "http://h.example/b/",
		},
		{
			name:  "text",
			body:  "<p>one\r\ntwo&nbsp;three</p><p>f<b>o</b>ur   five&lt;six&gt;</p>\t<br>seven&#x41;&bogus;<pre>  a\r\n  b  </pre>",
			title: "", text: "one two three four five<six> sevenA&bogus; a b", words: 8,
			links: []link{}, found: 0, meta: map[string]string{"charset": "utf-8"}, base: page,
		},
		{
			name: "raw text, comments, templates",
			body: `<SCRIPT>document.write("<a href='/no'>x</a>")</SCRIPT><script><!-- if (a<b) {} --></script><STYLE>p{}</STYLE>` +
				`<!-- <a href="/c">c</a> --><noscript><a href="/ns">ns</a></noscript><template><a href="/t">t</a></template>` +
				`<Div>after</DIV><a href="/Y" REL="NoFollow">nf</a><a href=/z>z</a><textarea>t &amp; a</textarea><xmp>&amp;</xmp>`,
			text: "after nfz t & a &amp;", words: 6,
			links: []link{{URL: "http://h.example/z", Anchor: "z"}}, found: 2, dropped: map[string]int{"nofollow": 1},
			meta: map[string]string{"charset": "utf-8"}, base: page,
		},
		{
			name: "meta",
			body: "<meta http-equiv=\"Refresh\" content=\"5; URL='/r?a=1&amp;b=2'\"><link rel=\"canonical\" href=\" /canon\r\n\">" +
				"<meta name=\"Description\" content=\"line1\r\nline2 &amp; more\"><META NAME=robots CONTENT=\"NOINDEX\"><p>hidden</p>",
			text: "", words: 1, noindex: true,
			links: []link{{URL: "http://h.example/r?a=1&b=2"}, {URL: "http://h.example/canon"}}, found: 2,
			refresh: "http://h.example/r?a=1&b=2", canonical: "http://h.example/canon",
			meta: map[string]string{"charset": "utf-8", "description": "line1\nline2 & more", "robots": "NOINDEX"}, base: page,
		},
		{
			name: "alt texts and frames",
			body: `<a href=/img><img alt="  Pic   one "><img alt=two></a><map><area href=/area alt=" Area  alt"></map>` +
				`<iframe src="/frame">in frame</iframe><a href=/empty></a><a href=/empty>late</a>`,
			text: "late", words: 1, images: 2,
			links: []link{{URL: "http://h.example/img", Anchor: "Pic one"}, {URL: "http://h.example/area", Anchor: "Area alt"},
				{URL: "http://h.example/frame"}, {URL: "http://h.example/empty", Anchor: "late"}},
			found: 5, dropped: map[string]int{"duplicate": 1}, meta: map[string]string{"charset": "utf-8"}, base: page,
		},
	} {
		r, err := parser.Parse(segment.Content{URL: page, ContentType: "text/html", Body: []byte(c.body)}, parser.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Title != c.title || r.Text != c.text || int(r.Features.Words) != c.words || int(r.Features.Images) != c.images {
			t.Errorf("%s: title %q text %q (%d words, %d images), want %q %q (%d, %d)", c.name, r.Title, r.Text,
				r.Features.Words, r.Features.Images, c.title, c.text, c.words, c.images)
		}
		if !reflect.DeepEqual(r.Outlinks, c.links) && (len(r.Outlinks) > 0 || len(c.links) > 0) {
			t.Errorf("%s: outlinks\n got %q\nwant %q", c.name, r.Outlinks, c.links)
		}
		if r.Links.Found != c.found || !reflect.DeepEqual(r.Links.Dropped, c.dropped) {
			t.Errorf("%s: found %d dropped %v, want %d %v", c.name, r.Links.Found, r.Links.Dropped, c.found, c.dropped)
		}
		if r.RefreshURL != c.refresh || r.Canonical != c.canonical || r.NoIndex != c.noindex || r.BaseURL != c.base {
			t.Errorf("%s: refresh %q canonical %q noindex %v base %q", c.name, r.RefreshURL, r.Canonical, r.NoIndex, r.BaseURL)
		}
		if !reflect.DeepEqual(r.Meta, c.meta) {
			t.Errorf("%s: meta %q, want %q", c.name, r.Meta, c.meta)
		}
	}
}
