package simweb

import (
	"bytes"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

// parsedPage is what an HTML parser finds in a page.
type parsedPage struct {
	title          string
	words          int
	links          []string // hrefs resolved against the base
	images         int
	metaRobots     string
	metaCharset    string
	base           string
	paragraphTexts []string
}

// parseHTML parses a UTF-8 page fetched from pageURL.
func parseHTML(t *testing.T, body []byte, pageURL string) parsedPage {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", pageURL, err)
	}
	var pp parsedPage
	var hrefs []string
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode {
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch n.Data {
			case "body":
				inBody = true
			case "title":
				if n.FirstChild != nil {
					pp.title = n.FirstChild.Data
				}
			case "a":
				hrefs = append(hrefs, attr("href"))
			case "img":
				pp.images++
			case "base":
				pp.base = attr("href")
			case "meta":
				switch {
				case attr("name") == "robots":
					pp.metaRobots = attr("content")
				case attr("charset") != "":
					pp.metaCharset = attr("charset")
				case strings.EqualFold(attr("http-equiv"), "content-type"):
					_, cs, _ := strings.Cut(attr("content"), "charset=")
					pp.metaCharset = cs
				}
			case "p":
				var sb strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						sb.WriteString(c.Data)
					}
				}
				pp.paragraphTexts = append(pp.paragraphTexts, sb.String())
			}
		}
		if n.Type == html.TextNode && inBody {
			pp.words += len(strings.Fields(n.Data))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(doc, false)
	base, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	if pp.base != "" {
		b, err := base.Parse(pp.base)
		if err != nil {
			t.Fatalf("%s: base %q: %v", pageURL, pp.base, err)
		}
		base = b
	}
	for _, h := range hrefs {
		u, err := base.Parse(h)
		if err != nil {
			t.Fatalf("%s: href %q: %v", pageURL, h, err)
		}
		pp.links = append(pp.links, u.String())
	}
	return pp
}

// decodeBody decodes a page body from its charset to UTF-8, checking that
// nothing was lost in encoding.
func decodeBody(t *testing.T, w *Web, id int32, body []byte) []byte {
	t.Helper()
	var out []byte
	var err error
	switch w.pages[id].enc {
	case encWindows1252:
		out, err = charmap.Windows1252.NewDecoder().Bytes(body)
	case encShiftJIS:
		out, err = japanese.ShiftJIS.NewDecoder().Bytes(body)
	default:
		return body
	}
	if err != nil {
		t.Fatalf("page %d: decode: %v", id, err)
	}
	if bytes.ContainsAny(out, "\x1a\ufffd") {
		t.Fatalf("page %d: characters lost in %s encoding", id, charsetName(w.pages[id].enc))
	}
	return out
}

// TestRenderedPages parses every content page of a web as a crawler would
// and checks it against the truth: word count, resolved links (relative,
// root-relative, protocol-relative, with and without <base>), images,
// meta robots, charset declarations; and that versions differ partly.
// A topical web is checked too, under one addressing.
func TestRenderedPages(t *testing.T) {
	checkRenderedPages(t, newWeb(t, smallConfig(17)), []Addressing{{}, {Port: 8080}, {Port: 8080, IPPerHost: true}})
	topical := smallConfig(17)
	topical.Topics = 4
	checkRenderedPages(t, newWeb(t, topical), []Addressing{{}})
}

// checkRenderedPages is TestRenderedPages for web w under the addressings
// as (all pages under the first, a sample under the others).
func checkRenderedPages(t *testing.T, w *Web, as []Addressing) {
	t.Helper()
	for _, a := range as {
		r := w.newRenderer()
		var encs [3]int
		var bases, relative int
		for id := range int32(len(w.pages)) {
			p := &w.pages[id]
			if !p.kind.IsContent() || p.flags&flagBroken != 0 {
				continue
			}
			if a != (Addressing{}) && id%4 != 0 {
				continue // a sample is enough for the other addressings
			}
			info := w.Page(int(id))
			pageURL := w.URL(int(id), a)
			b, words := r.body(id, 0, a)
			body := bytes.Clone(b)
			if p.kind == KindDocument {
				checkPDF(t, body, pageURL)
				if words != int(p.words) {
					t.Fatalf("%s: PDF with %d words, want %d", pageURL, words, p.words)
				}
				continue
			}
			encs[p.enc]++
			utf := decodeBody(t, w, id, body)
			pp := parseHTML(t, utf, pageURL)
			if a == (Addressing{}) && (pp.words != int(info.Features.Words) || words != pp.words) {
				t.Fatalf("%s: parser counts %d words, renderer %d, truth %d", pageURL, pp.words, words, info.Features.Words)
			}
			want := make([]string, 0)
			for _, o := range w.Outlinks(int(id)) {
				want = append(want, w.URL(o, a))
			}
			if !slices.Equal(pp.links, want) {
				t.Fatalf("%s (base %q): links\n%v\nwant\n%v", pageURL, pp.base, pp.links, want)
			}
			if pp.images != int(p.images) {
				t.Fatalf("%s: %d images, want %d", pageURL, pp.images, p.images)
			}
			wantRobots := map[uint16]string{0: "", flagNoindex: "noindex", flagNofollow: "nofollow", flagNoindex | flagNofollow: "noindex,nofollow"}[p.flags&(flagNoindex|flagNofollow)]
			if pp.metaRobots != wantRobots {
				t.Fatalf("%s: meta robots %q, want %q", pageURL, pp.metaRobots, wantRobots)
			}
			if (p.flags&flagCharsetMeta != 0) != (pp.metaCharset != "") || (pp.metaCharset != "" && !strings.EqualFold(pp.metaCharset, charsetName(p.enc))) {
				t.Fatalf("%s: meta charset %q, flags %b, encoding %s", pageURL, pp.metaCharset, p.flags, charsetName(p.enc))
			}
			if p.enc != encUTF8 && p.flags&(flagCharsetMeta|flagCharsetHead) == 0 {
				t.Fatalf("%s: %s page without a charset declaration", pageURL, charsetName(p.enc))
			}
			if pp.title == "" {
				t.Fatalf("%s: no title", pageURL)
			}
			if pp.base != "" {
				bases++
			}
			if bytes.Contains(utf, []byte(`href="../`)) {
				relative++
			}
			// A new version rewrites part of the page, never none of it.
			if id%3 == 0 {
				next, _ := r.body(id, 1, a)
				pn := parseHTML(t, decodeBody(t, w, id, bytes.Clone(next)), pageURL)
				if bytes.Equal(next, body) || pn.paragraphTexts[0] == pp.paragraphTexts[0] {
					t.Fatalf("%s: versions 0 and 1 have the same first paragraph", pageURL)
				}
				if !slices.Equal(pn.links, pp.links) || pn.words != pp.words {
					t.Fatalf("%s: links or word count changed between versions", pageURL)
				}
			}
		}
		if encs[encWindows1252] == 0 || encs[encShiftJIS] == 0 || bases == 0 || relative == 0 {
			t.Errorf("%+v: encodings %v, %d pages with <base>, %d with ../ links", a, encs, bases, relative)
		}
	}
}

// TestVersionsRewritePart checks that, over many versions of a long page,
// some paragraphs stay and some change.
func TestVersionsRewritePart(t *testing.T) {
	w := newWeb(t, smallConfig(17))
	r := w.newRenderer()
	for id := range int32(len(w.pages)) {
		p := &w.pages[id]
		if p.kind != KindLeaf || p.flags&flagBroken != 0 || p.enc != encUTF8 || paraCount(p.words) < 8 {
			continue
		}
		url := w.URL(int(id), Addressing{})
		b0, _ := r.body(id, 10, Addressing{})
		v10 := parseHTML(t, bytes.Clone(b0), url)
		b1, _ := r.body(id, 11, Addressing{})
		v11 := parseHTML(t, bytes.Clone(b1), url)
		same := 0
		for i := range v10.paragraphTexts {
			if v10.paragraphTexts[i] == v11.paragraphTexts[i] {
				same++
			}
		}
		if same == 0 || same == len(v10.paragraphTexts) {
			t.Fatalf("%s: %d of %d paragraphs unchanged from version 10 to 11", url, same, len(v10.paragraphTexts))
		}
		return
	}
	t.Fatal("no long UTF-8 leaf")
}

var pdfObjRE = regexp.MustCompile(`(?m)^(\d+) 0 obj$`)

// checkPDF checks a PDF's structure: header, trailer, and that the xref
// table points at the objects.
func checkPDF(t *testing.T, body []byte, name string) {
	t.Helper()
	if !bytes.HasPrefix(body, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(body, []byte("%%EOF\n")) {
		t.Fatalf("%s: not a PDF", name)
	}
	i := bytes.LastIndex(body, []byte("startxref\n"))
	if i < 0 {
		t.Fatalf("%s: no startxref", name)
	}
	rest := string(body[i+len("startxref\n"):])
	off, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(rest, "%%EOF\n")))
	if err != nil || off >= len(body) || !bytes.HasPrefix(body[off:], []byte("xref\n0 6\n")) {
		t.Fatalf("%s: startxref %q does not point at the xref table", name, rest)
	}
	lines := strings.Split(string(body[off:]), "\n")
	for n := 1; n <= 5; n++ {
		o, err := strconv.Atoi(lines[2+n][:10])
		if err != nil || !bytes.HasPrefix(body[o:], []byte(strconv.Itoa(n)+" 0 obj\n")) {
			t.Fatalf("%s: xref entry %d (%q) does not point at object %d", name, n, lines[2+n], n)
		}
	}
	if got := len(pdfObjRE.FindAll(body, -1)); got != 5 {
		t.Fatalf("%s: %d objects", name, got)
	}
}

func TestRelativeRef(t *testing.T) {
	for _, c := range []struct{ dir, target string }{
		{"/", "/"},
		{"/", "/a/"},
		{"/a/", "/"},
		{"/a/b/", "/a/c.html"},
		{"/a/b/", "/a/b/"},
		{"/a/b/", "/a/b/c/d.html"},
		{"/ab/", "/a/x.html"},
		{"/a/", "/ab/x.html"},
		{"/x/y/z/", "/q.pdf"},
	} {
		ref := relativeRef(c.dir, c.target)
		base, _ := url.Parse("http://h.sim.test" + c.dir + "page.html")
		u, err := base.Parse(ref)
		if err != nil || u.Path != c.target {
			t.Errorf("relativeRef(%q, %q) = %q resolves to %q (%v)", c.dir, c.target, ref, u, err)
		}
		if strings.HasPrefix(ref, "/") {
			t.Errorf("relativeRef(%q, %q) = %q is not relative", c.dir, c.target, ref)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	w := newWeb(b, Config{Seed: 1, Hosts: 50, Pages: 2000, Hazards: HazardsDefault})
	var ids []int32
	for id := range w.pages {
		if w.pages[id].kind.IsContent() && w.pages[id].flags&flagBroken == 0 {
			ids = append(ids, int32(id))
		}
	}
	r := w.newRenderer()
	var bytesOut int64
	i := 0
	for b.Loop() {
		body, _ := r.body(ids[i%len(ids)], i%7, Addressing{Port: 8080})
		bytesOut += int64(len(body))
		i++
	}
	b.ReportMetric(float64(bytesOut)/float64(b.N), "bytes/page")
}
