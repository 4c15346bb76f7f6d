package parser_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// simwebCorpus is a small synthetic web with its truth, rendered as a
// server with canonical addressing would serve version 0 of every page.
type simwebCorpus struct {
	web   *simweb.Web
	truth []simweb.TruthPage
}

func newSimwebCorpus(t testing.TB, seed uint64, hosts, pages int) simwebCorpus {
	t.Helper()
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = seed, hosts, pages, simweb.HazardsAll
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "truth.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.WriteTruth(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	truth, err := parquetio.ReadAll[simweb.TruthPage](storage.NewLocal(), p)
	if err != nil {
		t.Fatal(err)
	}
	return simwebCorpus{web: web, truth: truth}
}

// content is page row as served: its body at version v and its
// Content-Type (with the charset when the server sends it).
func (c simwebCorpus) content(t testing.TB, row simweb.TruthPage, v int) segment.Content {
	t.Helper()
	body, err := c.web.Body(int(row.ID), v, simweb.Addressing{})
	if err != nil {
		t.Fatal(err)
	}
	ct := row.ContentType
	if row.CharsetIn == "header" || row.CharsetIn == "both" {
		ct += "; charset=" + row.Charset
	}
	return segment.Content{URL: row.URL, ContentType: ct, Body: body}
}

func isHTMLKind(k string) bool { return k == "home" || k == "directory" || k == "leaf" }

// TestSimwebTruth parses every page of a synthetic web and compares with
// its ground truth: word, image and outlink counts, the outlinks after
// resolving relative links and <base href>, meta robots, and text decoded
// from windows-1252 and Shift_JIS (declared in the header, a <meta>, both
// or not at all).
func TestSimwebTruth(t *testing.T) {
	c := newSimwebCorpus(t, 11, 40, 2000)
	p := parser.New(parser.Options{MaxOutlinks: -1})
	type link struct{ from, to, anchor string }
	var links []link
	titles := map[string]string{}
	charsetOf := map[string]string{}
	seen := map[string]int{}
	for _, row := range c.truth {
		if row.Kind == "document" {
			// A PDF: its text, word for word, and its title.
			content := c.content(t, row, 0)
			r, err := p.Parse(content)
			if err != nil {
				t.Errorf("%s: PDF: %v", row.URL, err)
				continue
			}
			if r.MediaType != "application/pdf" || r.Features.Words != row.Features.Words || r.Title == "" ||
				r.Features.Bytes != int64(len(content.Body)) {
				t.Errorf("%s: PDF parsed as %s, %d words (truth %d), title %q", row.URL, r.MediaType, r.Features.Words,
					row.Features.Words, r.Title)
			}
			seen["pdf"]++
			continue
		}
		if !isHTMLKind(row.Kind) || row.Status != 200 {
			continue
		}
		content := c.content(t, row, 0)
		r, err := p.Parse(content)
		if err != nil {
			t.Errorf("%s: %v", row.URL, err)
			continue
		}
		seen["html"]++
		seen["charset "+row.Charset+" in "+row.CharsetIn]++
		if row.BaseHref {
			seen["base"]++
		}
		if row.Noindex {
			seen["noindex"]++
		}
		if row.Nofollow {
			seen["nofollow"]++
		}
		f := r.Features
		if f.Words != row.Features.Words || f.Images != row.Features.Images || f.Depth != row.Features.Depth ||
			f.Bytes != row.Features.Bytes || f.Bytes != int64(len(content.Body)) {
			t.Errorf("%s: features %+v, truth %+v", row.URL, f, row.Features)
		}
		if r.NoIndex != row.Noindex || r.NoFollow != row.Nofollow {
			t.Errorf("%s: noindex %v nofollow %v, truth %v %v", row.URL, r.NoIndex, r.NoFollow, row.Noindex, row.Nofollow)
		}
		if r.Charset != strings.ToLower(row.Charset) {
			t.Errorf("%s: charset %s, truth %s (in %s)", row.URL, r.Charset, row.Charset, row.CharsetIn)
		}
		// Outlinks: the page's links in document order, resolved.
		var want []string
		dup := map[string]bool{row.URL: true}
		for _, id := range c.web.Outlinks(int(row.ID)) {
			u, err := urlutil.Normalize(c.web.URL(id, simweb.Addressing{}))
			if err != nil {
				t.Fatal(err)
			}
			if !dup[u] {
				dup[u] = true
				want = append(want, u)
			}
		}
		if len(want) != int(row.Features.Outlinks) {
			t.Fatalf("%s: %d distinct link targets, truth says %d", row.URL, len(want), row.Features.Outlinks)
		}
		if row.Nofollow {
			want = nil
		}
		if got := urls(r.Outlinks); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Errorf("%s (base href %v): outlinks\n got %v\nwant %v", row.URL, row.BaseHref, got, want)
		}
		if int(f.Outlinks) != len(want) {
			t.Errorf("%s: features.outlinks %d, want %d", row.URL, f.Outlinks, len(want))
		}
		// Text: valid, and in the page's script.
		if !utf8.ValidString(r.Text) || strings.ContainsRune(r.Text, utf8.RuneError) || strings.ContainsRune(r.Title, utf8.RuneError) {
			t.Errorf("%s: text has invalid or replaced characters", row.URL)
		}
		if row.Noindex != (r.Text == "") {
			t.Errorf("%s: noindex %v but text %q", row.URL, row.Noindex, r.Text)
		}
		for _, ch := range r.Title + r.Text {
			if ch < 0x80 {
				continue
			}
			switch row.Charset {
			case "Shift_JIS":
				if !unicode.In(ch, unicode.Hiragana, unicode.Katakana, unicode.Han) && ch != 'ー' {
					t.Errorf("%s: %q in a Japanese page", row.URL, ch)
				}
			case "windows-1252":
				if _, ok := charmap.Windows1252.EncodeRune(ch); !ok || (ch >= 0x80 && ch < 0xa0) {
					t.Errorf("%s: %q is not a windows-1252 character", row.URL, ch)
				}
			}
		}
		titles[row.URL] = r.Title
		charsetOf[row.URL] = row.Charset
		for _, l := range r.Outlinks {
			links = append(links, link{row.URL, l.URL, l.Anchor})
		}
	}
	// Anchor texts are the first words of the target's title (unless the
	// target's words cannot be written in the linking page's charset, when
	// simweb writes ASCII words instead): decoding the anchor from one page
	// and the title from another must give the same characters.
	checked, crossCharset := 0, 0
	for _, l := range links {
		title, ok := titles[l.to]
		if !ok || title == "" || l.anchor == "Home" || l.anchor == "ホーム" {
			continue
		}
		ascii := true
		for i := 0; i < len(l.anchor); i++ {
			if l.anchor[i] >= 0x80 {
				ascii = false
			}
		}
		if ascii {
			continue
		}
		checked++
		if charsetOf[l.from] != charsetOf[l.to] {
			crossCharset++
		}
		if title != l.anchor && !strings.HasPrefix(title, l.anchor+" ") {
			t.Errorf("%s -> %s: anchor %q is not the start of the title %q", l.from, l.to, l.anchor, title)
		}
	}
	seen["non-ASCII anchors"] = checked
	seen["anchors across charsets"] = crossCharset
	t.Logf("corpus: %v", seen)
	for _, k := range []string{"html", "pdf", "base", "noindex", "nofollow", "charset windows-1252 in header", "charset windows-1252 in meta",
		"charset Shift_JIS in both", "charset Shift_JIS in meta", "charset utf-8 in none", "non-ASCII anchors", "anchors across charsets"} {
		if seen[k] < 2 {
			t.Errorf("the corpus has %d pages of kind %q: the test would not show much", seen[k], k)
		}
	}
}

// TestSimwebVersions: every new version of a simweb page rewrites at least
// one paragraph; the MD5 signature always sees it, the text profile sees
// most (a rewrite that moves no frequent word's quantized count is, by
// design, not a change to it).
func TestSimwebVersions(t *testing.T) {
	c := newSimwebCorpus(t, 5, 10, 400)
	p := parser.New(parser.Options{})
	pages, fuzzyChanged := 0, 0
	for _, row := range c.truth {
		if !isHTMLKind(row.Kind) || row.Status != 200 {
			continue
		}
		r0, err := p.Parse(c.content(t, row, 0))
		if err != nil {
			t.Fatal(err)
		}
		r1, err := p.Parse(c.content(t, row, 1))
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if string(r0.MD5) == string(r1.MD5) {
			t.Errorf("%s: versions 0 and 1 have the same MD5 signature", row.URL)
		}
		if string(r0.TextProfile) != string(r1.TextProfile) {
			fuzzyChanged++
		}
		f0, f1 := r0.Features, r1.Features
		f0.Bytes, f1.Bytes = 0, 0
		if f0 != f1 {
			t.Errorf("%s: features changed between versions: %+v %+v", row.URL, r0.Features, r1.Features)
		}
	}
	t.Logf("%d pages: the text profile changed for %d between versions 0 and 1", pages, fuzzyChanged)
	if pages < 100 || fuzzyChanged < pages/2 {
		t.Errorf("%d pages, text profile changed for %d", pages, fuzzyChanged)
	}
}
