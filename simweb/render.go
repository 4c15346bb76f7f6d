package simweb

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

// A page's body at version v is a pure function of (seed, page, v) and the
// addressing (which only changes how links spell hosts). The page is cut
// into paragraphs; paragraph 0 is rewritten at every version, the others
// each have a period (1, 2, 4, 8 or 16 versions, or never) and an offset,
// so a change rewrites part of the page, as real edits do. The title,
// links, images and the length of every paragraph stay fixed, so the word
// count and link set are the same at every version.

// renderer renders pages into a reusable buffer. Not safe for concurrent use.
type renderer struct {
	w       *Web
	buf     []byte
	words   int
	scratch []string
	title   []string
	mix     wordMix // of the page being rendered: its body ...
	tmix    wordMix // ... and its headings
}

func (w *Web) newRenderer() *renderer {
	return &renderer{w: w, buf: make([]byte, 0, 32<<10)}
}

// body renders content page id at version v under addressing a and returns
// the body as served (encoded in the page's charset; valid until the next
// call) and its word count.
func (r *renderer) body(id int32, v int, a Addressing) ([]byte, int) {
	r.buf, r.words = r.buf[:0], 0
	p := &r.w.pages[id]
	if p.kind == KindDocument {
		r.pdf(id, v)
		return r.buf, r.words
	}
	r.html(id, v, a)
	var enc encoding.Encoding
	switch p.enc {
	case encWindows1252:
		enc = charmap.Windows1252
	case encShiftJIS:
		enc = japanese.ShiftJIS
	default:
		return r.buf, r.words
	}
	// The vocabularies only hold encodable characters (a test checks the
	// round trip); ReplaceUnsupported keeps a slip from failing a request.
	out, err := encoding.ReplaceUnsupported(enc.NewEncoder()).Bytes(r.buf)
	if err != nil {
		return r.buf, r.words // cannot happen with ReplaceUnsupported
	}
	return out, r.words
}

// charsetName is the charset label of an encoding.
func charsetName(enc uint8) string {
	switch enc {
	case encWindows1252:
		return "windows-1252"
	case encShiftJIS:
		return "Shift_JIS"
	}
	return "utf-8"
}

// pageLocale is the locale of the words of page p's host.
func (w *Web) pageLocale(p *page) uint8 { return w.hosts[p.host].locale }

// compatible reports whether words of locale loc can be written in encoding enc.
func compatible(enc, loc uint8) bool {
	switch enc {
	case encWindows1252:
		return loc != 2
	case encShiftJIS:
		return loc != 1
	}
	return true
}

// titleWords appends page id's title words to dst. asciiOnly draws plain
// pseudo-words instead (for pages whose encoding cannot hold the title).
func (w *Web) titleWords(dst []string, id int32, asciiOnly bool) []string {
	p := &w.pages[id]
	loc := w.pageLocale(p)
	var b uint64
	if asciiOnly {
		loc, b = 0, 1
	}
	r := newRNG(w.cfg.Seed, sTitle, uint64(id), b)
	n := r.between(3, 8)
	if p.kind == KindHome {
		n = r.between(2, 4)
	}
	m := w.pageMix(id, true)
	for i := range n {
		word := w.mixWord(&m, r.next(), loc)
		if i == 0 {
			word = capitalize(word)
		}
		dst = append(dst, word)
	}
	return dst
}

// anchorLen is how many title words of page id make its anchor text.
func (w *Web) anchorLen(id int32, titleLen int) int {
	return min(titleLen, 2+int(hash3(w.cfg.Seed, sTitle, uint64(id), 2)%4))
}

func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// paragraph layout: count and lengths of paragraphs for a page with n
// paragraph words.
func paraCount(n int32) int { return max(1, int(n+49)/50) }

func paraLen(n int32, count, j int) int {
	base, rem := int(n)/count, int(n)%count
	if j < rem {
		return base + 1
	}
	return base
}

// paraEpoch is the content epoch of paragraph j at version v: the
// paragraph's text is a function of (page, j, epoch).
func (w *Web) paraEpoch(id int32, j, v int) uint64 {
	if j == 0 {
		return uint64(v)
	}
	h := hash3(w.cfg.Seed, sPara, uint64(id), uint64(j))
	var period int
	switch x := h % 100; {
	case x < 15:
		period = 1
	case x < 30:
		period = 2
	case x < 45:
		period = 4
	case x < 60:
		period = 8
	case x < 70:
		period = 16
	default:
		return 0 // never rewritten
	}
	off := int(h>>32) % period
	return uint64((v + off) / period)
}

// paraRNG is the random sequence of paragraph j at its epoch.
func (w *Web) paraRNG(id int32, j, v int) rng {
	return newRNG(w.cfg.Seed, sPara, uint64(id)<<20|uint64(j)&(1<<20-1), w.paraEpoch(id, j, v)+1)
}

func (r *renderer) str(s string) { r.buf = append(r.buf, s...) }

// text appends words separated by spaces and counts them.
func (r *renderer) text(words []string) {
	for i, w := range words {
		if i > 0 {
			r.buf = append(r.buf, ' ')
		}
		r.buf = append(r.buf, w...)
	}
	r.words += len(words)
}

// html renders HTML page id at version v under addressing a: the head,
// the title heading, the navigation links, the paragraphs with their
// headings and images, and the list of the other links.
func (r *renderer) html(id int32, v int, a Addressing) {
	w := r.w
	p := &w.pages[id]
	r.mix, r.tmix = w.pageMix(id, false), w.pageMix(id, true)
	r.title = w.titleWords(r.title[:0], id, false)
	baseDir := r.head(id, a)
	r.str("<body>\n<h1>")
	r.text(r.title)
	r.str("</h1>\n")
	links := w.links[p.linkBeg:p.linkEnd]
	nav := r.navList(id, links, a, baseDir)
	r.paragraphs(id, v, a)
	if len(links) > nav {
		r.linkList(id, links, nav, a, baseDir)
	}
	r.str("</body>\n</html>\n")
}

// head writes the doctype, the <html> tag and the <head> of page id (whose
// title is in r.title) and returns the directory its relative links
// resolve against (the <base> one if it has one).
func (r *renderer) head(id int32, a Addressing) string {
	w := r.w
	p := &w.pages[id]
	h := &w.hosts[p.host]
	r.str("<!DOCTYPE html>\n<html lang=\"")
	r.str([...]string{"en", "fr", "ja"}[h.locale])
	r.str("\">\n<head>\n")
	r.charsetMeta(p)
	r.str("<title>")
	for i, t := range r.title {
		if i > 0 {
			r.str(" ")
		}
		r.str(t)
	}
	r.str("</title>\n")
	if h.style != "" {
		r.str("<style>\n")
		r.str(h.style)
		r.str("</style>\n")
	}
	r.robotsMeta(p)
	baseDir := dirOf(p.path)
	if p.flags&flagBase != 0 {
		if p.flags&flagBaseParent != 0 {
			baseDir = dirOf(strings.TrimSuffix(baseDir, "/"))
		}
		r.str("<base href=\"http://")
		r.str(w.authority(p.host, a))
		r.str(baseDir)
		r.str("\">\n")
	}
	r.str("</head>\n")
	return baseDir
}

// charsetMeta writes page p's charset <meta>, if it declares its charset
// there, in the form it uses.
func (r *renderer) charsetMeta(p *page) {
	if p.flags&flagCharsetMeta == 0 {
		return
	}
	if p.flags&flagMetaEquiv != 0 {
		r.str(`<meta http-equiv="Content-Type" content="text/html; charset=`)
		r.str(charsetName(p.enc))
		r.str("\">\n")
	} else {
		r.str(`<meta charset="`)
		r.str(charsetName(p.enc))
		r.str("\">\n")
	}
}

// robotsMeta writes page p's robots <meta>, if it has one.
func (r *renderer) robotsMeta(p *page) {
	switch p.flags & (flagNoindex | flagNofollow) {
	case flagNoindex:
		r.str("<meta name=\"robots\" content=\"noindex\">\n")
	case flagNofollow:
		r.str("<meta name=\"robots\" content=\"nofollow\">\n")
	case flagNoindex | flagNofollow:
		r.str("<meta name=\"robots\" content=\"noindex,nofollow\">\n")
	}
}

// navList writes the navigation list of page id: its leading links to
// the home page and its parent directory (at most two). It returns how
// many links it wrote.
func (r *renderer) navList(id int32, links []int32, a Addressing, baseDir string) int {
	w := r.w
	p := &w.pages[id]
	h := &w.hosts[p.host]
	nav := 0
	for nav < len(links) && nav < 2 && (links[nav] == h.home || links[nav] == p.parent) {
		nav++
	}
	if nav > 0 {
		r.str("<ul class=\"nav\">\n")
		for i := range nav {
			r.link(id, i, links[i], a, baseDir, h.locale)
		}
		r.str("</ul>\n")
	}
	return nav
}

// paragraphs writes the paragraphs of page id at version v, a heading
// before every third, with the page's images spread evenly among them.
func (r *renderer) paragraphs(id int32, v int, a Addressing) {
	w := r.w
	p := &w.pages[id]
	loc := w.hosts[p.host].locale
	count := paraCount(p.words)
	img := 0
	for j := range count {
		pr := w.paraRNG(id, j, v)
		if j%3 == 0 {
			r.heading(id, j, &pr, loc)
		}
		r.str("<p>")
		r.scratch = r.scratch[:0]
		for range paraLen(p.words, count, j) {
			r.scratch = append(r.scratch, w.mixWord(&r.mix, pr.next(), loc))
		}
		if len(r.scratch) > 0 {
			r.scratch[0] = capitalize(r.scratch[0])
		}
		r.text(r.scratch)
		r.str("</p>\n")
		for ; img < int(p.images) && img*count/int(p.images) <= j; img++ {
			r.image(id, img, a, loc)
		}
	}
}

// heading writes the <h2> before paragraph j of page id: words drawn from
// the paragraph's sequence pr, of a length fixed for the page and j.
func (r *renderer) heading(id int32, j int, pr *rng, loc uint8) {
	w := r.w
	r.str("<h2>")
	r.scratch = r.scratch[:0]
	for range 2 + hash3(w.cfg.Seed, sPara, uint64(id), uint64(j)|1<<40)%3 { // fixed length
		r.scratch = append(r.scratch, w.mixWord(&r.tmix, pr.next(), loc))
	}
	r.scratch[0] = capitalize(r.scratch[0])
	r.text(r.scratch)
	r.str("</h2>\n")
}

// linkList writes the links of page id after the first nav under a
// heading: "Contents" on home pages and directories, "Related" elsewhere
// (in Japanese on Japanese hosts).
func (r *renderer) linkList(id int32, links []int32, nav int, a Addressing, baseDir string) {
	w := r.w
	p := &w.pages[id]
	loc := w.hosts[p.host].locale
	label := "Related"
	switch {
	case loc == 2:
		label = "関連"
	case p.kind == KindDirectory || p.kind == KindHome:
		label = "Contents"
	}
	r.str("<h2>")
	r.text([]string{label})
	r.str("</h2>\n<ul>\n")
	for i := nav; i < len(links); i++ {
		r.link(id, i, links[i], a, baseDir, loc)
	}
	r.str("</ul>\n")
}

// image appends the i-th <img> of page id.
func (r *renderer) image(id int32, i int, a Addressing, loc uint8) {
	w := r.w
	p := &w.pages[id]
	hh := hash3(w.cfg.Seed, sImage, uint64(id), uint64(i))
	n := hh % uint64(max(w.hosts[p.host].images, 1))
	r.str("<img src=\"")
	if hh>>60 < 4 { // a quarter of images by absolute URL
		r.str("http://")
		r.str(w.authority(p.host, a))
	}
	r.str("/img/")
	r.buf = strconv.AppendUint(r.buf, n, 10)
	r.str(".png\" alt=\"")
	r.str(w.mixWord(&r.mix, mix64(hh), loc))
	r.str("\">\n")
}

// link appends the i-th link of page src, to page t.
func (r *renderer) link(src int32, i int, t int32, a Addressing, baseDir string, loc uint8) {
	w := r.w
	r.str("<li><a href=\"")
	r.href(src, i, t, a, baseDir)
	r.str("\">")
	r.title = w.anchorText(r.title[:0], src, i, t, loc)
	r.text(r.title)
	r.str("</a></li>\n")
}

// anchorText appends the anchor text of the i-th link of page src, to page
// t, to dst: "Home" (in the page's locale loc) for its own home page, in a
// topical web sometimes a generic text, else the first words of the
// target's title.
func (w *Web) anchorText(dst []string, src int32, i int, t int32, loc uint8) []string {
	sp, tp := &w.pages[src], &w.pages[t]
	if t == w.hosts[sp.host].home && sp.host == tp.host {
		if loc == 2 {
			return append(dst, "ホーム")
		}
		return append(dst, "Home")
	}
	if w.topical() {
		if g := w.genericAnchor(src, i); g != nil {
			return append(dst, g...)
		}
	}
	ascii := !compatible(sp.enc, w.pageLocale(tp))
	n := len(dst)
	dst = w.titleWords(dst, t, ascii)
	return dst[:n+w.anchorLen(t, len(dst)-n)]
}

// href appends the link's URL in the form the page uses for it: absolute,
// protocol-relative (other hosts), root-relative or relative to baseDir.
func (r *renderer) href(src int32, i int, t int32, a Addressing, baseDir string) {
	w := r.w
	sp, tp := &w.pages[src], &w.pages[t]
	hh := hash3(w.cfg.Seed, sRender, uint64(src), uint64(i))
	if sp.host != tp.host {
		if hh%20 == 0 {
			r.str("//")
		} else {
			r.str("http://")
		}
		r.str(w.authority(tp.host, a))
		r.str(tp.path)
		return
	}
	style := 0 // absolute
	switch {
	case sp.flags&flagRelative != 0:
		style = 2
	case sp.flags&flagRootRel != 0:
		style = 1
	}
	if (hh>>8)%5 == 0 { // one link in five in another form
		style = int((hh >> 16) % 3)
	}
	switch style {
	case 0:
		r.str("http://")
		r.str(w.authority(tp.host, a))
		r.str(tp.path)
	case 1:
		r.str(tp.path)
	default:
		r.str(relativeRef(baseDir, tp.path))
	}
}

// dirOf returns the directory part of a path, ending with "/".
func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "/"
}

// relativeRef returns a relative reference that resolves to target (an
// absolute path) against a base whose directory is dir (ending in "/").
func relativeRef(dir, target string) string {
	tdir := dirOf(target)
	file := target[len(tdir):]
	// Length of the common directory prefix, at a segment boundary.
	c := 0
	for i := 0; i < len(dir) && i < len(tdir) && dir[i] == tdir[i]; i++ {
		if dir[i] == '/' {
			c = i + 1
		}
	}
	ups := strings.Count(dir[c:], "/")
	var b strings.Builder
	for range ups {
		b.WriteString("../")
	}
	b.WriteString(tdir[c:])
	b.WriteString(file)
	if b.Len() == 0 {
		return "./"
	}
	return b.String()
}

// pdf renders a small valid PDF document whose text is the page's
// paragraphs.
func (r *renderer) pdf(id int32, v int) {
	w := r.w
	p := &w.pages[id]
	var content strings.Builder
	content.WriteString("BT /F1 11 Tf 72 740 Td 14 TL\n")
	r.title = w.titleWords(r.title[:0], id, true)
	r.mix = w.pageMix(id, false)
	count := paraCount(p.words)
	for j := range count {
		pr := w.paraRNG(id, j, v)
		n := paraLen(p.words, count, j)
		for k := 0; k < n; k += 12 {
			content.WriteString("(")
			for x := k; x < min(k+12, n); x++ {
				if x > k {
					content.WriteByte(' ')
				}
				content.WriteString(w.mixWord(&r.mix, pr.next(), 0))
			}
			content.WriteString(") Tj T*\n")
		}
		r.words += n
	}
	content.WriteString("ET\n")
	stream := content.String()
	var offs [6]int
	r.str("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj := func(n int, body string) {
		offs[n] = len(r.buf)
		r.buf = fmt.Appendf(r.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R /Lang (en) >>")
	obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	obj(4, fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(stream), stream))
	obj(5, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	xref := len(r.buf)
	r.str("xref\n0 6\n0000000000 65535 f \n")
	for n := 1; n <= 5; n++ {
		r.buf = fmt.Appendf(r.buf, "%010d 00000 n \n", offs[n])
	}
	r.buf = fmt.Appendf(r.buf, "trailer\n<< /Size 6 /Root 1 0 R /Info << /Title (%s) >> >>\nstartxref\n%d\n%%%%EOF\n",
		strings.Join(r.title, " "), xref)
}
