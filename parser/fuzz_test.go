package parser_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// FuzzParse feeds arbitrary bodies and content types to the parser and
// checks its invariants: HTML and plain text always parse (no error, no
// panic); text, title and anchors are valid UTF-8 with whitespace
// collapsed; Words counts the text's tokens; outlinks are normalized,
// distinct, not the page itself, within the cap, and Features.Outlinks
// counts them; the signatures are 16-byte digests. Seeds live in
// testdata/fuzz/FuzzParse (run with -fuzz=FuzzParse to grow them).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`<html><head><title>T</title><base href="/b/"></head><body><p>a <a href="x">b</a></p></body></html>`,
		`<meta charset="shift_jis"><p>` + "\x93\xfa\x96\x7b",
		`<meta http-equiv=refresh content="0;url=/r"><meta name=robots content="noindex,nofollow">`,
		`<a href="/1">1</a><a href="/1">one</a><area href="/2" alt="two"><iframe src="/3"></iframe><link rel="next" href="/4">`,
		"\xef\xbb\xbf<p>bom</p>",
		"\xff\xfe<\x00p\x00>\x00x\x00",
		`<title>unterminated <a href="/t">`,
		`<svg><title>s</title></svg><template><a href="/in">x</a></template><noscript><a href="/ns">`,
		"<p>\x00\x01\x7f\u00a0\u3000&#0;&amp;</p>",
	} {
		f.Add([]byte(s), "text/html")
	}
	f.Add([]byte("plain text\twith\nlines"), "text/plain; charset=utf-8")
	f.Add([]byte("\x89PNG"), "")
	f.Add(makePDF(f, "T", []string{"one", "two"}, []string{"http://h.example/l"}), "application/pdf")
	p := parser.New(parser.Options{MaxOutlinks: 5, Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions())})
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		const page = "http://h.example/dir/page.html"
		r, err := p.Parse(segment.Content{URL: page, ContentType: ctype, Body: body})
		if err != nil {
			if pe, ok := err.(*parser.Error); ok && pe.Panic {
				t.Fatalf("panic: %v", err)
			}
			return
		}
		if r.MediaType == "text/html" || r.MediaType == "text/plain" || r.MediaType == "application/pdf" {
			// fine
		} else if !strings.Contains(r.MediaType, "xhtml") {
			t.Fatalf("parsed media type %q", r.MediaType)
		}
		for name, s := range map[string]string{"text": r.Text, "title": r.Title} {
			if !utf8.ValidString(s) {
				t.Fatalf("%s is not valid UTF-8: %q", name, s)
			}
			if s != strings.Join(strings.Fields(s), " ") {
				t.Fatalf("%s has uncollapsed white space: %q", name, s)
			}
		}
		if !r.NoIndex && int(r.Features.Words) != len(strings.Fields(r.Text)) {
			t.Fatalf("words %d, text has %d", r.Features.Words, len(strings.Fields(r.Text)))
		}
		if len(r.Outlinks) > 5 || int(r.Features.Outlinks) != len(r.Outlinks) {
			t.Fatalf("%d outlinks, features say %d", len(r.Outlinks), r.Features.Outlinks)
		}
		seen := map[string]bool{}
		for _, l := range r.Outlinks {
			if n, err := urlutil.Normalize(l.URL); err != nil || n != l.URL {
				t.Fatalf("outlink %q is not normalized (%q, %v)", l.URL, n, err)
			}
			if l.URL == page || seen[l.URL] {
				t.Fatalf("outlink %q is the page or a duplicate", l.URL)
			}
			seen[l.URL] = true
			if !utf8.ValidString(l.Anchor) || utf8.RuneCountInString(l.Anchor) > parser.MaxAnchorLength {
				t.Fatalf("bad anchor %q", l.Anchor)
			}
		}
		if r.NoFollow && len(r.Outlinks) > 0 {
			t.Fatalf("nofollow page has outlinks")
		}
		if len(r.MD5) != 16 || len(r.TextProfile) != 16 || r.Features.Bytes != int64(len(body)) {
			t.Fatalf("signatures %x %x, bytes %d", r.MD5, r.TextProfile, r.Features.Bytes)
		}
	})
}
