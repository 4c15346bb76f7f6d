package parser

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func TestParseRefresh(t *testing.T) {
	for _, tc := range []struct {
		in    string
		delay int
		url   string
		ok    bool
	}{
		{"0; url=http://x/", 0, "http://x/", true},
		{"5;URL=/a", 5, "/a", true},
		{"  10 , url = '/q b' ", 10, "/q b", true},
		{`3; URL="/d"x`, 3, "/d", true},
		{"0;/plain", 0, "/plain", true},
		{"1.5; url=/f", 1, "/f", true},
		{".5; url=/g", 0, "/g", true},
		{"30", 30, "", true},
		{"7 ; urlx", 7, "urlx", true},
		{"url=/x", 0, "", false},
		{"", 0, "", false},
		{"5x; url=/y", 0, "", false},
		{"99999999999999999; url=/z", 999999999, "/z", true},
	} {
		d, u, ok := parseRefresh(tc.in)
		if d != tc.delay || u != tc.url || ok != tc.ok {
			t.Errorf("parseRefresh(%q) = %d %q %v, want %d %q %v", tc.in, d, u, ok, tc.delay, tc.url, tc.ok)
		}
	}
}

func TestCharsetParam(t *testing.T) {
	for in, want := range map[string]string{
		"text/html; charset=Shift_JIS":      "Shift_JIS",
		"text/html;charset = \"EUC-JP\"":    "EUC-JP",
		"text/html; CHARSET='x'; other=1":   "x",
		"text/html; charsetx; charset=utf8": "utf8",
		"text/html":                         "",
		"charset=":                          "",
		"charset=\"unterminated":            "",
	} {
		if got := charsetParam(in); got != want {
			t.Errorf("charsetParam(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextBuf(t *testing.T) {
	var b textBuf
	b.reset(0)
	b.write([]byte("  a\u00a0b\u3000c\x01d\r\n"))
	b.sep()
	b.write([]byte("e\xff"))
	b.write([]byte("f"))
	if got := b.String(); got != "a b c d e\ufffdf" || b.words != 5 {
		t.Errorf("got %q (%d words)", got, b.words)
	}
	b.reset(3)
	b.write([]byte("abcdef gh"))
	if b.String() != "abc" || !b.full {
		t.Errorf("limit: %q", b.String())
	}
}

// TestTitledMD5: titledMD5 is MD5Signature of the joined title and text,
// and of the body when both are empty.
func TestTitledMD5(t *testing.T) {
	body := []byte("<html>raw</html>")
	for _, c := range []struct{ title, text, joined string }{
		{"T", "some text", "T some text"}, {"", "some text", "some text"}, {"T", "", "T"}, {"", "", ""},
	} {
		got, want := titledMD5(c.title, c.text, body), MD5Signature(c.joined, body)
		if string(got) != string(want) || len(got) != 16 {
			t.Errorf("titledMD5(%q, %q) = %x, want %x", c.title, c.text, got, want)
		}
	}
}

// TestHasMetaTag: the prescan's shortcut finds "<meta" in any case, and
// only that.
func TestHasMetaTag(t *testing.T) {
	for in, want := range map[string]bool{
		`<html><META charset=utf-8>`: true, `<meta`: true, `<Meta http-equiv=x>`: true, `x<<meta`: true,
		`<html><head><title>`: false, `<met`: false, `meta charset`: false, `< meta`: false, ``: false,
	} {
		if got := hasMetaTag([]byte(in)); got != want {
			t.Errorf("hasMetaTag(%q) = %v", in, got)
		}
	}
	for _, in := range []string{`<html><meta charset="koi8-r">`, `<HTML><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-2">`} {
		if prescan([]byte(in)) == "" {
			t.Errorf("prescan(%q) found no charset", in)
		}
	}
}

// refText is textBuf the plain way, a rune at a time: what textBuf's
// faster loops must match.
type refText struct {
	b            []byte
	space, full  bool
	words, runes int
	limit        int
}

func (t *refText) write(s []byte) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if s[i] < utf8.RuneSelf {
			r, n = rune(s[i]), 1
		}
		i += n
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r) || r == '\ufeff' {
			t.space = true
			continue
		}
		if t.limit > 0 && t.runes >= t.limit {
			t.full = true
			continue
		}
		if len(t.b) == 0 || t.space {
			if len(t.b) > 0 {
				t.b = append(t.b, ' ')
			}
			t.words++
			t.space = false
		}
		t.runes++
		if r == utf8.RuneError && n == 1 {
			t.b = utf8.AppendRune(t.b, utf8.RuneError)
		} else {
			t.b = append(t.b, s[i-n:i]...)
		}
	}
}

// TestTextBufMatchesRunes: textBuf's runs of words, eight bytes at a
// time, give what writing a rune at a time gives, with and without a
// limit, across writes and separators.
func TestTextBufMatchesRunes(t *testing.T) {
	pieces := []string{"a", "word", "Ab1", " ", "  ", "\t", "\r\n", "\x00", "\x7f", "\x1f", "!", "~", "é", "日本", "\u00a0", "\u3000", "\u2028", "\ufeff",
		"\xff", "\xe6\x97", "\ufffd", "0123456789", "the quick brown fox ", "x y z w v u t s r", "abcdefgh abcdefg", "a  b", " a b c d e f g h i"}
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 20000; iter++ {
		limit := 0
		if r.IntN(3) == 0 {
			limit = 1 + r.IntN(40)
		}
		var got textBuf
		got.reset(limit)
		want := refText{limit: limit}
		for k := r.IntN(6); k >= 0; k-- {
			var s strings.Builder
			for n := r.IntN(12); n >= 0; n-- {
				s.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(4) == 0 {
				got.sep()
				want.space = true
			}
			got.write([]byte(s.String()))
			want.write([]byte(s.String()))
		}
		if string(got.b) != string(want.b) || got.words != want.words || got.runes != want.runes || got.full != want.full || got.space != want.space {
			t.Fatalf("limit %d: got %q (%d words, %d runes, full %v), want %q (%d, %d, %v)",
				limit, got.b, got.words, got.runes, got.full, want.b, want.words, want.runes, want.full)
		}
	}
}

// TestRawAttrs: for every start tag of generated markup that rawAttrs
// reads, it gives the attributes TagAttr gives, in the same order.
func TestRawAttrs(t *testing.T) {
	pieces := []string{"<a", "<A", "<img", "<br", "<meta", " ", "  ", "\n", "\t", "\f", "\r", "/", "//", "=", "==", ">", "'", "\"", "href", "HREF", "Href",
		"rel", "alt", "x", "a=b", "href=/p", "href='/q r'", "href=\"/s\"", "href = /t", "=x", "&amp;", "\x00", "é", "<", "data-x", "a>b", "'>'", "\">\""}
	r := rand.New(rand.NewPCG(5, 6))
	read, tags := 0, 0
	for iter := 0; iter < 30000; iter++ {
		var s strings.Builder
		for n := r.IntN(20); n >= 0; n-- {
			s.WriteString(pieces[r.IntN(len(pieces))])
		}
		z := html.NewTokenizer(strings.NewReader(s.String()))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			tags++
			raw := z.Raw()
			var spans [maxRawAttrs]attrSpan
			var got []string
			n, ok := rawAttrs(raw, &spans)
			if ok && plainTag(raw) {
				read++
				for _, a := range spans[:n] {
					got = append(got, strings.ToLower(string(raw[a.k0:a.k1]))+"="+string(raw[a.v0:a.v1]))
				}
			}
			rawCopy := string(raw)
			var want []string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if k != nil {
					want = append(want, string(k)+"="+string(v))
				}
			}
			if ok && plainTag([]byte(rawCopy)) && strings.Join(got, "\x01") != strings.Join(want, "\x01") {
				t.Fatalf("tag %q: rawAttrs gives %q, TagAttr %q", rawCopy, got, want)
			}
		}
	}
	if read < tags/2 {
		t.Errorf("rawAttrs read %d of %d tags", read, tags)
	}
	t.Logf("rawAttrs read %d of %d tags", read, tags)
}

// stateSnapshot is what a parse state has collected from a page.
type stateSnapshot struct {
	Body, Title                   string
	Words                         int
	Links                         []rawLink
	Overflow, Nofollow, Images    int
	GotTitle, HasBase, HasRefresh bool
	BaseHref, Canonical, Refresh  string
	RefreshDelay                  int
	Robots                        robots
	Meta                          map[string]string
}

func snapshot(st *htmlState) stateSnapshot {
	st.linkStrings()
	links := append([]rawLink(nil), st.links...)
	for i := range links {
		links[i].hrefOff, links[i].hrefEnd, links[i].anchorOff, links[i].anchorEnd = 0, 0, 0, 0
	}
	return stateSnapshot{
		Body: string(st.body.b), Title: string(st.title.b), Words: st.body.words, Links: links,
		Overflow: st.overflow, Nofollow: st.nofollowLinks, Images: st.images,
		GotTitle: st.gotTitle, HasBase: st.hasBase, HasRefresh: st.hasRefresh,
		BaseHref: st.baseHref, Canonical: st.canonical, Refresh: st.refresh, RefreshDelay: st.refreshDelay,
		Robots: st.robots, Meta: st.meta,
	}
}

// checkScan compares the scanner with the tokenizer on doc; it reports
// whether the scanner read doc.
func checkScan(t *testing.T, doc []byte) bool {
	t.Helper()
	var a, b htmlState
	a.reset()
	b.reset()
	if !a.scan(doc) {
		return false
	}
	b.tokenize(doc)
	if got, want := snapshot(&a), snapshot(&b); !reflect.DeepEqual(got, want) {
		t.Fatalf("doc %q:\nscanner   %+v\ntokenizer %+v", doc, got, want)
	}
	return true
}

// scanPieces are the bits TestScan and FuzzScan make pages of: the
// constructs the scanner reads and the ones it leaves to the tokenizer.
var scanPieces = []string{
	"<html>", "<HEAD>", "<title>", "</title>", "<TITLE>T &amp; t</TITLE>", "<body>", "</body>", "<p>", "</P>", "<br>", "<br/>", "<p a=/>",
	"<div>", "</div >", "<span class='x>y'>", "</span>", " ", "\n\t ", "\u00a0", "&nbsp;", "&amp;", "&lt;", "&#x41;", "&bogus;", "&amp",
	"word", "Wörter", "日本語", "\xff", "<!-- c -->", "<!---->", "<!-->", "<!--->", "<!-- a --!> b -->", "<!-- x --!-y -->", "<!DOCTYPE html>",
	"<!doctype x>", "<!x>", "<?pi?>", "<!-", "<!", "<", "< a", "<3", "</", "</>", "</ x>", "</3>", "<a", "<a href='", "<!--", "<!-- open",
	"<script>var a='<a href=x>';</script>", "<script>if (a<b) x()</SCRIPT >", "<script><!-- x --></script>", "<script>", "</script>",
	"<style>p{}</style>", "<noscript><a href=/ns>ns</a></noscript>", "<textarea>ta <b>x</b> &amp;</textarea>", "<xmp><a href=q>&amp;</xmp>",
	"<plaintext>", "<iframe src=/if>in <b>iframe</b></iframe>", "<title/>", "<script/>", "<a href=\"/abs\">", "<a href='rel/x.html'>",
	"<A HREF=\"../up\">", "<a href=\"#frag\">", "<a href=\"?q=1&amp;r=2\">", "<a href=/n rel=nofollow>", "<a href=/d href=/e>", "<a HREF=/f Href=/g>",
	"<a =x href=/h>", "<a href = /i >", "<a href=/j/>", "<a href=/k />", "</a>", "</A>", "<img alt=\" Alt  text \">", "<img>", "<IMG ALT=first><img alt=second>",
	"<area href=/area alt=\"  area alt \">", "<frame src=/frame>", "<link rel=canonical href=\" /canon \">", "<link rel=\"next\" href=/next>",
	"<base href=/base/>", "<meta name=robots content=\"noindex\">", "<meta http-equiv=refresh content=\"0; url=/refresh\">",
	"<meta name=description content=\"a description\">", "<meta property=og:title content=OG>", "<meta charset=\"windows-1252\">",
	"<template><a href=/tpl>t</a></template>", "<template>", "</template>", "<svg><title>svg title</title>", "</svg>", "<math>", "</math>",
	"<h1>Head</h1>", "<li>item", "<td>cell</td>", "<a href=/x>", "<a href=/dup>first</a>", "\r\n", "\r", "\x00", "<a b c d e f g h i j k l m n o p q r>",
	"<a href=\"/x\r\ny\ry\">", "<meta name=d content=\"a&amp;b&lt;c\">", "<a href='/p&amp;q'>", "<a href='/p&amp=q'>", "<area href=/a&amp;amp; alt='x&amp;y'>",
	"<meta name=e content=\"l1\r\nl2\">", "<img alt='a&#38;b'>", "<script>a\r\n</script\r>", "<title>t\r\nu</title\n>",
	"<meta name=f content='&quot;q&quot; &#39;s&#x27; &lt;&gt;&nbsp;&apos;'>", "<img alt='&copy;'>", "<img alt='&lt'>", "<a href='/&#'>",
	"<meta name=g content='&amp=x &ampx; &#65 &#x;'>", "<a href='/&lt=&gt;'>",
}

// TestScan: wherever the scanner reads a page, it collects what the
// tokenizer loop collects; and it reads most pages.
func TestScan(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	read := 0
	const n = 20000
	for iter := 0; iter < n; iter++ {
		var s strings.Builder
		for k := r.IntN(30); k >= 0; k-- {
			s.WriteString(scanPieces[r.IntN(len(scanPieces))])
		}
		if checkScan(t, []byte(s.String())) {
			read++
		}
	}
	t.Logf("the scanner read %d of %d pages", read, n)
	if read < n/10 {
		t.Errorf("the scanner read only %d of %d pages", read, n)
	}
}

// FuzzScan compares the scanner with the tokenizer on arbitrary pages.
func FuzzScan(f *testing.F) {
	for _, s := range scanPieces {
		f.Add([]byte(s))
	}
	f.Add([]byte(`<html><head><title>T</title></head><body><p>a <a href="x">b</a><script>x</script></p></body></html>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkScan(t, doc)
	})
}

// TestHashIndex: the text profile's hash index finds what a map finds,
// across growth, clustered hashes and resets.
func TestHashIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var x hashIndex
	for round := 0; round < 50; round++ {
		x.reset()
		m := map[uint64]int32{}
		for k := r.IntN(3000); k > 0; k-- {
			h := r.Uint64()
			if r.IntN(2) == 0 {
				h = uint64(r.IntN(64)) << 40 // same low bits: long probe runs
			}
			slot, i, ok := x.find(h)
			want, wok := m[h]
			if ok != wok || (ok && i != want) {
				t.Fatalf("round %d: find(%#x) = %d %v, want %d %v", round, h, i, ok, want, wok)
			}
			if !ok {
				v := int32(len(m))
				m[h] = v
				x.insert(slot, h, v)
			}
		}
	}
}

// TestTypeBits: typeBit gives each of Types its own bit, the bits allTypes
// holds, and no bit to anything else.
func TestTypeBits(t *testing.T) {
	var seen typeSet
	for _, m := range Types() {
		b := typeBit(m)
		if b == 0 || b&(b-1) != 0 || seen&b != 0 {
			t.Errorf("typeBit(%q) = %b (seen %b)", m, b, seen)
		}
		seen |= b
	}
	if seen != allTypes {
		t.Errorf("Types' bits %b, allTypes %b", seen, allTypes)
	}
	for _, m := range []string{"", "text/xml", "image/png", "TEXT/HTML"} {
		if typeBit(m) != 0 {
			t.Errorf("typeBit(%q) = %b, want 0", m, typeBit(m))
		}
	}
}
