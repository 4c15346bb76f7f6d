package parser

import (
	"bytes"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// scan reads doc in one pass over its bytes, without the tokenizer's copy
// of them, and feeds the tokens to the same handlers the tokenizer loop
// does. It reads the markup most pages are made of: text, tags, comments,
// doctypes and the raw text of <script>, <style>, <title> and the like,
// splitting them exactly where golang.org/x/net/html's tokenizer does. On
// anything else (a NUL byte, a tag the input ends inside, a needed
// attribute value with a named reference other than safeEntities, a "</"
// not followed by a letter, a <script> that holds "<!--", a comment or declaration
// without its end) it returns false
// having done part of the work, which the caller then discards to read the
// page with the tokenizer.
func (st *htmlState) scan(doc []byte) bool {
	if bytes.IndexByte(doc, 0) >= 0 {
		return false
	}
	var endSpans [maxRawAttrs]attrSpan // an end tag's attributes, not kept
	for i := 0; i < len(doc); {
		// Text, up to a '<' that starts a tag, comment or declaration.
		k := len(doc)
		for j := i; ; {
			lt := bytes.IndexByte(doc[j:], '<')
			if lt < 0 || j+lt+1 >= len(doc) {
				break
			}
			j += lt
			if c := doc[j+1]; isASCIILetter(c) || c == '/' || c == '!' || c == '?' {
				k = j
				break
			}
			j++
		}
		if k > i {
			st.scanText(doc[i:k])
		}
		if k == len(doc) {
			break
		}
		switch c := doc[k+1]; {
		case isASCIILetter(c):
			end, n, ok := parseTag(doc[k:], 1, &st.spans)
			if !ok {
				return false
			}
			tag := doc[k : k+end+1]
			st.tag, st.nspans = tag, n
			// The tokenizer's test for "<br/>" (and not "<p a=/>").
			self := tag[end-1] == '/' && (n == 0 || end-1 != st.spans[n-1].v1-1)
			a := tagAtom(tag, len("<"))
			st.onStart(a, self)
			st.tag = nil
			if st.bail {
				return false
			}
			i = k + end + 1
			if isRawText(a) {
				i = st.scanRawText(doc, i, a)
				if i < 0 {
					return false
				}
			}
		case c == '/':
			if k+2 >= len(doc) || !isASCIILetter(doc[k+2]) {
				return false // "</>", "</ x>", "</": comments or text to the tokenizer
			}
			end, _, ok := parseTag(doc[k:], 2, &endSpans)
			if !ok {
				return false
			}
			st.onEnd(tagAtom(doc[k:k+end+1], len("</")))
			i = k + end + 1
		case c == '!':
			if k+4 > len(doc) {
				return false
			}
			var e int
			switch {
			case doc[k+2] == '-' && doc[k+3] == '-':
				e = commentEnd(doc, k+4)
			case len(doc)-k >= len("<!DOCTYPE") && equalASCIIFold(doc[k+2:k+9], []byte("doctype")):
				e = closeAngle(doc, k+9)
			default:
				e = closeAngle(doc, k+2)
			}
			if e < 0 {
				return false
			}
			i = e
		default: // '?': a bogus comment up to '>'
			e := closeAngle(doc, k+1)
			if e < 0 {
				return false
			}
			i = e
		}
	}
	st.onEOF()
	return true
}

// isASCIILetter reports [A-Za-z].
func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// closeAngle returns the index after the first '>' at or after i, or -1.
func closeAngle(doc []byte, i int) int {
	if j := bytes.IndexByte(doc[i:], '>'); j >= 0 {
		return i + j + 1
	}
	return -1
}

// commentEnd returns the index after the end of a comment whose text
// starts at i (after "<!--"), by the tokenizer's rules ("-->", "--!>", and
// "<!-->" or "<!--->" as empty comments), or -1 if the input ends first.
func commentEnd(doc []byte, i int) int {
	dashes, beginning := 0, true
	for ; i < len(doc); i++ {
		switch doc[i] {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return i + 1
			}
		case '!':
			if dashes >= 2 {
				i++
				if i >= len(doc) {
					return -1
				}
				switch doc[i] {
				case '>':
					return i + 1
				case '-':
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return -1
}

// scanRawText reads the content of the raw-text element a, which starts
// at i, up to its end tag (which is left for the caller to read as a tag)
// or the end of the input, and hands it over as one text token. It
// returns where the end tag starts, or -1 for a <script> whose content
// holds "<!--" (the tokenizer's escaping rules for those are left to it).
func (st *htmlState) scanRawText(doc []byte, i int, a atom.Atom) int {
	e := len(doc)
	if a != atom.Plaintext {
		name := a.String()
		for j := i; ; {
			lt := bytes.Index(doc[j:], []byte("</"))
			if lt < 0 {
				break
			}
			j += lt + 2
			if len(doc)-j > len(name) && equalASCIIFold(doc[j:j+len(name)], []byte(name)) {
				if c := doc[j+len(name)]; isTagSpace(c) || c == '/' || c == '>' {
					e = j - 2
					break
				}
			}
		}
	}
	if a == atom.Script && bytes.Contains(doc[i:e], []byte("<!--")) {
		return -1
	}
	if e > i {
		st.scanText(doc[i:e])
	}
	return e
}

// scanText hands a text token to where it goes, unescaped as the
// tokenizer's Text would give it (the input has no NUL): the entities of
// ordinary text and of <title> and <textarea> (RCDATA) are unescaped, the
// raw text of the other raw-text elements is not. Text does not turn CRs
// into newlines here, which makes no difference once white space
// collapses: entities end the same before either.
func (st *htmlState) scanText(t []byte) {
	switch st.textDest() {
	case destBody:
		if st.raw == 0 || st.raw == atom.Textarea {
			t = unescapeText(t)
		}
		st.text(t)
	case destTitle:
		st.title.write(unescapeText(t))
	}
}

// unescapeText unescapes the entities of text outside attributes.
func unescapeText(t []byte) []byte {
	if bytes.IndexByte(t, '&') < 0 {
		return t
	}
	return []byte(html.UnescapeString(string(t)))
}
