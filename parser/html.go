package parser

import (
	"bytes"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/encoding"
)

// Link kinds, by the element they come from.
const (
	linkA uint8 = iota
	linkArea
	linkFrame
	linkLink
	linkEmbed // an embedded resource (Options.EmbeddedLinks)
)

// rawLink is a link as written in the page. While the page is read its
// href and anchor are spans of the state's arena; linkStrings then makes
// them strings.
type rawLink struct {
	href, anchor                           string
	hrefOff, hrefEnd, anchorOff, anchorEnd int
	kind                                   uint8
}

// htmlState is the scratch state of one HTML parse; Parsers pool them.
type htmlState struct {
	body, anchor, title textBuf
	links               []rawLink
	overflow            int // links past MaxRawLinks
	nofollowLinks       int // links with rel=nofollow
	open                int // index in links of the open <a>, or -1
	anchorAlt           []byte
	alt                 textBuf // scratch for alt texts
	arena               []byte  // the links' hrefs and anchors
	images              int
	template            int // depth of <template>
	foreign             int // depth of <svg> / <math>
	gotTitle            bool
	baseHref            string
	hasBase             bool
	canonical           string
	refresh             string
	refreshDelay        int
	hasRefresh          bool
	robots              robots
	meta                map[string]string
	embedded            bool           // take embedded resources (Options.EmbeddedLinks)
	seen                map[string]int // resolveLinks' scratch: URL -> index in Outlinks, or -1

	// The token stream's state: the raw-text element whose content comes
	// next, and whether the first <title> is open.
	raw     atom.Atom
	inTitle bool
	// The current start tag's attributes: from the tokenizer z, or else
	// (the scanner) spans[:nspans] of tag.
	z      *html.Tokenizer
	tag    []byte
	spans  [maxRawAttrs]attrSpan
	nspans int
	val    []byte // scratch for an attribute value
	bail   bool   // the scanner met what it does not read: start again with the tokenizer
}

func (st *htmlState) reset() {
	st.body.reset(0)
	st.anchor.reset(MaxAnchorLength)
	st.title.reset(MaxTitleLength)
	clear(st.links)
	st.links = st.links[:0]
	st.overflow, st.nofollowLinks, st.open, st.anchorAlt = 0, 0, -1, st.anchorAlt[:0]
	st.arena = st.arena[:0]
	st.images, st.template, st.foreign = 0, 0, 0
	st.gotTitle, st.baseHref, st.hasBase, st.canonical = false, "", false, ""
	st.refresh, st.refreshDelay, st.hasRefresh = "", 0, false
	st.robots = robots{}
	st.meta = nil
	clear(st.seen)
	st.raw, st.inTitle = 0, false
	st.z, st.tag, st.nspans, st.bail = nil, nil, 0, false
}

// tooBig reports whether the state holds buffers too large to keep pooled.
func (st *htmlState) tooBig() bool {
	return cap(st.body.b) > 4<<20 || cap(st.arena) > 4<<20 || cap(st.val) > 1<<20 || cap(st.links) > 1<<14 || len(st.seen) > 1<<12
}

// decode converts b to UTF-8 (enc nil: b is UTF-8 already). Decoders of
// legacy encodings replace invalid bytes, so this cannot fail in practice;
// if it does, the bytes are used as they are.
func decode(b []byte, enc encoding.Encoding) []byte {
	if enc == nil {
		return b
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return b
	}
	return out
}

// parseHTML fills res from an HTML body.
func (p *Parser) parseHTML(res *Result, body []byte, ctype, pageURL string) {
	enc, name, src, skip := detectCharset(body, ctype, true)
	res.Charset, res.CharsetSource = name, src
	doc := decode(body[skip:], enc)

	st := p.scratch.Get().(*htmlState)
	st.reset()
	st.embedded = p.o.EmbeddedLinks
	defer func() {
		if !st.tooBig() {
			st.reset()
			p.scratch.Put(st)
		}
	}()
	st.run(doc)
	st.linkStrings()

	res.Text = st.body.String()
	res.Features.Words = int32(st.body.words)
	res.Title = st.title.String()
	res.Features.Images = int32(st.images)
	res.NoIndex, res.NoFollow, res.NoCache = st.robots.noindex, st.robots.nofollow, st.robots.nocache
	res.Meta = st.meta
	if res.Meta == nil {
		res.Meta = make(map[string]string, 1)
	}
	res.Meta["charset"] = name
	p.resolveLinks(res, st, pageURL)
}

// parsePlain fills res from a text/plain body.
func (p *Parser) parsePlain(res *Result, body []byte, ctype string) {
	enc, name, src, skip := detectCharset(body, ctype, false)
	res.Charset, res.CharsetSource = name, src
	var t textBuf
	t.write(decode(body[skip:], enc))
	res.Text = t.String()
	res.Features.Words = int32(t.words)
	res.Meta = map[string]string{"charset": name}
}

// isRawText reports the elements whose content the tokenizer returns as
// one text token.
func isRawText(a atom.Atom) bool {
	switch a {
	case atom.Title, atom.Textarea, atom.Xmp, atom.Plaintext, atom.Script, atom.Style,
		atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// isBlock reports the elements that separate words (block-level elements,
// line breaks, table cells, list items, form controls).
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br, atom.Button,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl,
		atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frameset,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header, atom.Hgroup,
		atom.Hr, atom.Html, atom.Img, atom.Input, atom.Legend, atom.Li, atom.Main, atom.Menu, atom.Nav,
		atom.Ol, atom.Optgroup, atom.Option, atom.P, atom.Pre, atom.Section, atom.Select, atom.Summary,
		atom.Table, atom.Tbody, atom.Td, atom.Textarea, atom.Tfoot, atom.Th, atom.Thead, atom.Tr,
		atom.Ul, atom.Title, atom.Iframe:
		return true
	}
	return false
}

// run reads doc and collects text, links and directives: with the
// scanner (see scan) when it can read the whole page, else with the
// tokenizer.
func (st *htmlState) run(doc []byte) {
	if st.scan(doc) {
		return
	}
	st.reset()
	st.tokenize(doc)
}

// tokenize reads doc with golang.org/x/net/html's tokenizer.
func (st *htmlState) tokenize(doc []byte) {
	z := html.NewTokenizer(bytes.NewReader(doc))
	st.z = z
	defer func() { st.z = nil }()
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken: // io.EOF; the tokenizer reads from memory
			st.onEOF()
			return
		case html.TextToken:
			switch st.textDest() {
			case destBody:
				if st.raw != 0 {
					st.text(z.Text())
				} else if t := z.Raw(); bytes.IndexByte(t, '&') < 0 {
					// Outside raw-text elements Text is the raw text
					// with newlines converted and entities unescaped;
					// white space collapses the same with or without the
					// conversion, so without an '&' the raw text will do.
					st.text(t)
				} else {
					st.text(z.Text())
				}
			case destTitle:
				st.title.write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			st.onStart(tagAtom(z.Raw(), len("<")), tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			st.onEnd(tagAtom(z.Raw(), len("</")))
		}
	}
}

// Where a text token goes.
const (
	destNone = iota
	destBody
	destTitle
)

// textDest says where the next text token goes: the visible text (outside
// raw-text elements, or in a <textarea>, <xmp> or <plaintext>), the title,
// or nowhere.
func (st *htmlState) textDest() int {
	switch st.raw {
	case 0, atom.Textarea, atom.Xmp, atom.Plaintext:
		if st.template == 0 {
			return destBody
		}
	case atom.Title:
		if st.inTitle {
			return destTitle
		}
	}
	return destNone
}

// onStart handles a start tag a (attributes from st.attrs).
func (st *htmlState) onStart(a atom.Atom, selfClosing bool) {
	st.raw = 0
	if isRawText(a) {
		st.raw = a
	}
	if a == atom.Title && !st.gotTitle && st.foreign == 0 && st.template == 0 {
		st.inTitle = true
	}
	st.startTag(a, selfClosing)
}

// onEnd handles an end tag a.
func (st *htmlState) onEnd(a atom.Atom) {
	if a == atom.Title && st.inTitle {
		st.inTitle = false
		st.gotTitle = true
	}
	st.raw = 0
	st.endTag(a)
}

// onEOF ends the page.
func (st *htmlState) onEOF() {
	st.closeAnchor()
	if st.inTitle {
		st.gotTitle = true
	}
}

// text appends visible text.
func (st *htmlState) text(s []byte) {
	st.body.write(s)
	if st.open >= 0 {
		st.anchor.write(s)
	}
}

// sep separates words.
func (st *htmlState) sep() {
	st.body.sep()
	if st.open >= 0 {
		st.anchor.sep()
	}
}

// tagAtom returns the atom of the current tag's name, read from its raw
// text after the skip bytes of "<" or "</" as the tokenizer reads it (up to
// white space, '/' or '>', lower-cased), without the copy TagName makes; 0
// for a name that is no atom.
func tagAtom(raw []byte, skip int) atom.Atom {
	var name [32]byte // longer than any atom
	n := 0
	for _, c := range raw[skip:] {
		switch c {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return atom.Lookup(name[:n])
		}
		if n == len(name) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		name[n] = c
		n++
	}
	return atom.Lookup(name[:n])
}

// attrs passes the attributes of the current start tag to f: the
// lower-case key and the unescaped value, valid only during the call. A tag
// without attributes may give one call with a nil key, which matches none.
// Tags are read from their raw text without the tokenizer's copies (see
// parseTag and attrValue); under the tokenizer, TagAttr reads those with
// an '&', CR or NUL, and the scanner gives up (st.bail) on a value with a
// reference attrValue leaves to the tokenizer.
func (st *htmlState) attrs(f func(key, val []byte)) {
	tag, spans := st.tag, st.spans[:st.nspans]
	if z := st.z; z != nil {
		raw := z.Raw()
		n, ok := 0, false
		if plainTag(raw) {
			n, ok = rawAttrs(raw, &st.spans)
		}
		if !ok {
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				f(k, v)
			}
			return
		}
		tag, spans = raw, st.spans[:n]
	}
	var low [32]byte
	for _, a := range spans {
		k := tag[a.k0:a.k1]
		if len(k) <= len(low) {
			k = lowerASCII(low[:len(k)], k)
		}
		v, ok := st.attrValue(tag[a.v0:a.v1])
		if !ok {
			st.bail = true
			return
		}
		f(k, v)
	}
}

// attrValue returns an attribute's raw value v (without NUL) as TagAttr
// gives it: newlines converted ("\r\n" and "\r" to "\n") and character
// references unescaped. ok is false if v has a reference other than a
// numeric one or one of safeEntities, whose unescaping in attributes
// differs from that in text (html.UnescapeString) and is left to the
// tokenizer.
func (st *htmlState) attrValue(v []byte) ([]byte, bool) {
	if bytes.IndexByte(v, '\r') < 0 && bytes.IndexByte(v, '&') < 0 {
		return v, true
	}
	b := append(st.val[:0], v...)
	st.val = b
	w, amp := 0, false
	for r := 0; r < len(b); r++ {
		c := b[r]
		switch c {
		case '\r':
			c = '\n'
			if r+1 < len(b) && b[r+1] == '\n' {
				r++
			}
		case '&':
			if !safeEntity(b[r+1:]) {
				return nil, false
			}
			amp = true
		}
		b[w] = c
		w++
	}
	if amp {
		return []byte(html.UnescapeString(string(b[:w]))), true
	}
	return b[:w], true
}

// safeEntities are named references that attributes and text unescape
// alike: complete names, with their ';'.
var safeEntities = [...]string{"amp;", "lt;", "gt;", "quot;", "apos;", "nbsp;"}

// safeEntity reports whether b, what follows an '&', starts a reference
// unescaped alike in attributes and text: a numeric one ("&#...") or one of
// safeEntities.
func safeEntity(b []byte) bool {
	if len(b) > 0 && b[0] == '#' {
		return true
	}
	for _, e := range safeEntities {
		if bytes.HasPrefix(b, []byte(e)) {
			return true
		}
	}
	return false
}

// maxRawAttrs is the most attributes rawAttrs reads; a tag with more is
// read through TagAttr.
const maxRawAttrs = 16

// attrSpan is an attribute's key raw[k0:k1] and value raw[v0:v1].
type attrSpan struct{ k0, k1, v0, v1 int }

// plainTag reports whether the raw text of a tag has no '&', CR or NUL:
// its attribute values are then what TagAttr would give (no entity to
// unescape, no newline to convert, no NUL to replace).
func plainTag(raw []byte) bool {
	for _, c := range raw {
		if c == '&' || c == '\r' || c == 0 {
			return false
		}
	}
	return true
}

// isTagSpace is the tokenizer's white space in tags.
func isTagSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

// rawAttrs reads the attributes of a start tag from its raw text (from
// '<' to its '>') with parseTag; ok is false if parseTag cannot or does not
// end at the raw text's end.
func rawAttrs(raw []byte, spans *[maxRawAttrs]attrSpan) (n int, ok bool) {
	end, n, ok := parseTag(raw, 1, spans)
	return n, ok && end == len(raw)-1
}

// parseTag reads a tag in b, which starts with its '<', the way the
// tokenizer's readTag does, from the first byte of its name at b[name]
// (1 for a start tag, 2 for an end tag): it returns the index of the '>'
// that ends the tag and the attributes, the same keys and values, in
// order, that TagAttr gives for a tag without '&', CR or NUL (empty keys
// and repeated keys, compared in lower case, dropped). ok is false if the
// input ends inside the tag (the tokenizer gives no tag token then) or the
// tag has more than maxRawAttrs attributes.
func parseTag(b []byte, name int, spans *[maxRawAttrs]attrSpan) (end, n int, ok bool) {
	p := name + 1 // the name's first byte is read
	for ; ; p++ {
		if p >= len(b) {
			return 0, 0, false
		}
		if c := b[p]; isTagSpace(c) {
			p++
			break
		} else if c == '/' || c == '>' {
			break
		}
	}
	skip := func() {
		for p < len(b) && isTagSpace(b[p]) {
			p++
		}
	}
	skip()
	for {
		if p >= len(b) {
			return 0, 0, false
		}
		if b[p] == '>' {
			return p, n, true
		}
		// The key: up to white space, '/', '>' or an '=' that is not its
		// first byte.
		k0 := p
		for {
			if p >= len(b) {
				return 0, 0, false
			}
			c := b[p]
			p++
			if c == '=' && p == k0+1 {
				continue
			}
			if c == '=' || isTagSpace(c) || c == '/' || c == '>' {
				p--
				break
			}
		}
		k1 := p
		// The value.
		v0, v1 := p, p
		skip()
		if p >= len(b) {
			return 0, 0, false
		}
		switch c := b[p]; {
		case c == '/':
			p++
		case c != '=': // another key, or the '>'
		default:
			p++
			skip()
			if p >= len(b) {
				return 0, 0, false
			}
			switch q := b[p]; q {
			case '>':
			case '\'', '"':
				p++
				v0 = p
				for p < len(b) && b[p] != q {
					p++
				}
				if p >= len(b) {
					return 0, 0, false
				}
				v1 = p
				p++
			default:
				v0 = p
				p++
				for p < len(b) && !isTagSpace(b[p]) && b[p] != '>' {
					p++
				}
				if p >= len(b) {
					return 0, 0, false
				}
				v1 = p
			}
		}
		if k0 != k1 && !seenKey(b, spans[:n], b[k0:k1]) {
			if n == maxRawAttrs {
				return 0, 0, false
			}
			spans[n] = attrSpan{k0, k1, v0, v1}
			n++
		}
		skip()
	}
}

// seenKey reports whether one of spans has key k, in ASCII lower case.
func seenKey(raw []byte, spans []attrSpan, k []byte) bool {
	for _, a := range spans {
		if equalASCIIFold(raw[a.k0:a.k1], k) {
			return true
		}
	}
	return false
}

func equalASCIIFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// lowerASCII writes b in ASCII lower case into dst (as long as b) and
// returns it.
func lowerASCII(dst, b []byte) []byte {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}

// relTokens reports whether the rel value has nofollow, and whether it
// names a navigational relation (for <link>) and canonical.
func relTokens(rel string) (nofollow, nav, canonical bool) {
	for _, t := range strings.Fields(strings.ToLower(rel)) {
		switch t {
		case "nofollow":
			nofollow = true
		case "canonical":
			canonical, nav = true, true
		case "alternate", "next", "prev", "previous", "first", "last", "up", "home", "index",
			"start", "contents", "author", "archives":
			nav = true
		}
	}
	return
}

// startTag handles a start (or self-closing) tag: a block element
// separates words, and each tag family has a handler of its own.
func (st *htmlState) startTag(a atom.Atom, selfClosing bool) {
	if isBlock(a) {
		st.sep()
	}
	switch a {
	case atom.A:
		st.anchorTag()
	case atom.Area:
		st.areaTag()
	case atom.Frame, atom.Iframe:
		st.frameTag()
	case atom.Link:
		st.linkTag()
	case atom.Base:
		st.baseTag()
	case atom.Meta:
		st.metaTag()
	case atom.Img:
		st.imgTag()
		if st.embedded {
			st.srcTag()
		}
	case atom.Script, atom.Source, atom.Video, atom.Audio, atom.Embed:
		if st.embedded {
			st.srcTag()
		}
	case atom.Template:
		if !selfClosing {
			st.template++
		}
	case atom.Svg, atom.Math:
		if !selfClosing {
			st.foreign++
		}
	}
}

// hrefRel reads the first href (has: there is one; it is kept in the
// arena at [off:end] while there is room for links) and the last rel of
// the current tag.
func (st *htmlState) hrefRel() (off, end int, rel string, has bool) {
	st.attrs(func(k, v []byte) {
		switch string(k) {
		case "href":
			if !has {
				off, end, has = st.keep(v), len(st.arena), true
			}
		case "rel":
			rel = string(v)
		}
	})
	return off, end, rel, has
}

// keep appends b to the arena (unless the links are at MaxRawLinks) and
// returns where it starts.
func (st *htmlState) keep(b []byte) int {
	off := len(st.arena)
	if len(st.links) < MaxRawLinks {
		st.arena = append(st.arena, b...)
	}
	return off
}

// anchorTag handles an <a>: it closes an open one (the tree builder's
// rule) and, outside a <template>, opens a link that collects the anchor
// text up to its end, unless it has no href or is rel=nofollow.
func (st *htmlState) anchorTag() {
	st.closeAnchor()
	if st.template > 0 {
		return
	}
	off, end, rel, has := st.hrefRel()
	if !has {
		return
	}
	if nf, _, _ := relTokens(rel); nf {
		st.nofollowLinks++
		return
	}
	st.open = st.addLink(off, end, nil, linkA)
	st.anchor.reset(MaxAnchorLength)
	st.anchorAlt = st.anchorAlt[:0]
}

// areaTag handles an image map's <area>: a link whose anchor is its alt
// text, unless it has no href or is rel=nofollow.
func (st *htmlState) areaTag() {
	if st.template > 0 {
		return
	}
	var off, end int
	var rel string
	has := false
	st.alt.reset(MaxAnchorLength)
	st.attrs(func(k, v []byte) {
		switch string(k) {
		case "href":
			if !has {
				off, end, has = st.keep(v), len(st.arena), true
			}
		case "rel":
			rel = string(v)
		case "alt": // the last one
			st.alt.reset(MaxAnchorLength)
			st.alt.write(v)
		}
	})
	if !has {
		return
	}
	if nf, _, _ := relTokens(rel); nf {
		st.nofollowLinks++
		return
	}
	st.addLink(off, end, st.alt.b, linkArea)
}

// frameTag handles a <frame> or <iframe>: its first src is a link.
func (st *htmlState) frameTag() {
	if st.template > 0 {
		return
	}
	var off, end int
	has := false
	st.attrs(func(k, v []byte) {
		if string(k) == "src" && !has {
			off, end, has = st.keep(v), len(st.arena), true
		}
	})
	if has {
		st.addLink(off, end, nil, linkFrame)
	}
}

// linkTag handles a <link>: the first rel=canonical gives the canonical
// URL (nofollow or not), and a navigational relation (see relTokens) not
// marked nofollow is a link.
func (st *htmlState) linkTag() {
	if st.template > 0 {
		return
	}
	var href string
	var rel string
	has := false
	st.attrs(func(k, v []byte) {
		switch string(k) {
		case "href":
			if !has {
				href, has = string(v), true
			}
		case "rel":
			rel = string(v)
		}
	})
	if !has {
		return
	}
	nf, nav, canon := relTokens(rel)
	if canon && st.canonical == "" {
		st.canonical = strings.TrimSpace(href)
	}
	if nf {
		st.nofollowLinks++
		return
	}
	if nav {
		off := st.keep([]byte(href))
		st.addLink(off, len(st.arena), nil, linkLink)
	} else if st.embedded && embeddedRel(rel) {
		off := st.keep([]byte(href))
		st.addLink(off, len(st.arena), nil, linkEmbed)
	}
}

// embeddedRel reports whether a <link rel> names a resource the page
// embeds: a style sheet, an icon, a preload or a manifest.
func embeddedRel(rel string) bool {
	for _, t := range strings.Fields(strings.ToLower(rel)) {
		switch t {
		case "stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload", "manifest":
			return true
		}
	}
	return false
}

// srcTag records the src of an embedded resource (Options.EmbeddedLinks)
// outside a <template>.
func (st *htmlState) srcTag() {
	if st.template > 0 {
		return
	}
	var off, end int
	has := false
	st.attrs(func(k, v []byte) {
		if string(k) == "src" && !has {
			off, end, has = st.keep(v), len(st.arena), true
		}
	})
	if has {
		st.addLink(off, end, nil, linkEmbed)
	}
}

// baseTag handles a <base>: the first href of the first <base> that has
// one is the base URL.
func (st *htmlState) baseTag() {
	if st.hasBase {
		return
	}
	st.attrs(func(k, v []byte) {
		if string(k) == "href" && !st.hasBase {
			st.baseHref, st.hasBase = string(v), true
		}
	})
}

// imgTag handles an <img> outside a <template>: it counts the image and,
// inside an <a>, keeps the first alt text as the anchor's fallback.
func (st *htmlState) imgTag() {
	if st.template > 0 {
		return
	}
	st.images++
	if st.open >= 0 && len(st.anchorAlt) == 0 {
		st.attrs(func(k, v []byte) {
			if string(k) == "alt" && len(st.anchorAlt) == 0 {
				st.alt.reset(MaxAnchorLength)
				st.alt.write(v)
				st.anchorAlt = append(st.anchorAlt, st.alt.b...)
			}
		})
	}
}

// endTag handles an end tag: it closes an open <a>, leaves a <template>,
// <svg> or <math>, and a block element separates words.
func (st *htmlState) endTag(a atom.Atom) {
	switch a {
	case atom.A:
		st.closeAnchor()
	case atom.Template:
		if st.template > 0 {
			st.template--
		}
	case atom.Svg, atom.Math:
		if st.foreign > 0 {
			st.foreign--
		}
	}
	if isBlock(a) {
		st.sep()
	}
}

// addLink records a link whose href is arena[off:end], copying its
// anchor into the arena, and returns its index (-1 past MaxRawLinks).
func (st *htmlState) addLink(off, end int, anchor []byte, kind uint8) int {
	if len(st.links) >= MaxRawLinks {
		st.overflow++
		return -1
	}
	a := len(st.arena)
	st.arena = append(st.arena, anchor...)
	st.links = append(st.links, rawLink{hrefOff: off, hrefEnd: end, anchorOff: a, anchorEnd: len(st.arena), kind: kind})
	return len(st.links) - 1
}

// linkStrings gives the links their href and anchor strings, all cut from
// one copy of the arena.
func (st *htmlState) linkStrings() {
	all := string(st.arena)
	for i := range st.links {
		l := &st.links[i]
		l.href, l.anchor = all[l.hrefOff:l.hrefEnd], all[l.anchorOff:l.anchorEnd]
	}
}

// closeAnchor ends the open <a>, giving it its anchor text.
func (st *htmlState) closeAnchor() {
	if st.open < 0 {
		return
	}
	anchor := st.anchor.b
	if len(anchor) == 0 {
		anchor = st.anchorAlt
	}
	l := &st.links[st.open]
	l.anchorOff = len(st.arena)
	st.arena = append(st.arena, anchor...)
	l.anchorEnd = len(st.arena)
	st.open = -1
	st.anchorAlt = st.anchorAlt[:0]
	st.anchor.reset(MaxAnchorLength)
}

// metaTag handles a <meta>.
func (st *htmlState) metaTag() {
	var name, equiv, content, property string
	hasContent := false
	st.attrs(func(k, v []byte) {
		switch string(k) {
		case "name":
			name = strings.ToLower(strings.TrimSpace(string(v)))
		case "http-equiv":
			equiv = strings.ToLower(strings.TrimSpace(string(v)))
		case "property":
			property = strings.ToLower(strings.TrimSpace(string(v)))
		case "content":
			if !hasContent {
				content, hasContent = string(v), true
			}
		}
	})
	if !hasContent {
		return
	}
	if name == "robots" {
		st.robots.parse(content)
	}
	if equiv == "refresh" && !st.hasRefresh {
		if delay, u, ok := parseRefresh(content); ok && u != "" {
			st.refresh, st.refreshDelay, st.hasRefresh = u, delay, true
		}
	}
	key := name
	if key == "" {
		key = property
	}
	if key == "" || st.template > 0 {
		return
	}
	if st.meta == nil {
		st.meta = make(map[string]string, 4)
	}
	if _, dup := st.meta[key]; dup || len(st.meta) >= MaxMeta {
		return
	}
	if len(content) > maxMetaValue {
		content = cutUTF8(content, maxMetaValue)
	}
	st.meta[cutUTF8(key, 128)] = strings.ToValidUTF8(content, "\ufffd")
}

// cutUTF8 cuts s to at most n bytes, at a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// robots holds robots directives.
type robots struct {
	noindex, nofollow, nocache bool
}

func (r *robots) directive(d string) {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "noindex":
		r.noindex = true
	case "nofollow":
		r.nofollow = true
	case "none":
		r.noindex, r.nofollow = true, true
	case "noarchive", "nocache":
		r.nocache = true
	}
}

// parse reads a meta robots content value (directives separated by commas
// or spaces).
func (r *robots) parse(content string) {
	for _, d := range strings.FieldsFunc(content, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' }) {
		r.directive(d)
	}
}

// parseHeader reads an X-Robots-Tag value. Directives after a "name:"
// prefix are for that user agent only and are ignored, as are valued
// directives (unavailable_after: ...).
func (r *robots) parseHeader(v string) {
	agent := false
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if k, _, ok := strings.Cut(part, ":"); ok {
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
			default:
				agent = true
			}
			continue
		}
		if !agent {
			r.directive(part)
		}
	}
}

// parseRefresh parses a refresh value: "N", "N; url=U", "N, U", "N;
// URL='U'" and the other spellings the HTML standard's declarative refresh
// accepts. u is "" for a refresh of the page itself.
func parseRefresh(s string) (delay int, u string, ok bool) {
	s = strings.TrimLeft(s, " \t\n\f\r")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && (i >= len(s) || s[i] != '.') {
		return 0, "", false
	}
	if i > 0 {
		d, err := strconv.Atoi(s[:min(i, 9)])
		if err != nil {
			return 0, "", false
		}
		delay = d
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	rest := strings.TrimLeft(s[i:], " \t\n\f\r")
	if rest == "" {
		return delay, "", true
	}
	if rest[0] != ';' && rest[0] != ',' && len(rest) == len(s[i:]) {
		return 0, "", false // "5x": not a refresh value
	}
	if rest[0] == ';' || rest[0] == ',' {
		rest = strings.TrimLeft(rest[1:], " \t\n\f\r")
	}
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		r := strings.TrimLeft(rest[3:], " \t\n\f\r")
		if strings.HasPrefix(r, "=") {
			rest = strings.TrimLeft(r[1:], " \t\n\f\r")
		}
	}
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		q := rest[0]
		rest = rest[1:]
		if j := strings.IndexByte(rest, q); j >= 0 {
			rest = rest[:j]
		}
	}
	return delay, strings.TrimSpace(rest), true
}
