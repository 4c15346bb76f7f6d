package parser

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// prescanBytes is how much of an HTML body is searched for a <meta>
// charset declaration.
const prescanBytes = 4096

// Where an encoding was found (Result.CharsetSource).
const (
	CharsetFromBOM     = "bom"
	CharsetFromHeader  = "header"
	CharsetFromMeta    = "meta"
	CharsetFromSniff   = "sniff"   // the body is valid UTF-8
	CharsetFromDefault = "default" // windows-1252
)

// DefaultCharset is the encoding of a page that declares none and is not
// valid UTF-8 (Nutch's parser.character.encoding.default).
const DefaultCharset = "windows-1252"

// boms are the byte order marks the HTML standard recognizes.
var boms = [...]struct {
	bom   string
	label string
}{
	{"\xef\xbb\xbf", "utf-8"},
	{"\xfe\xff", "utf-16be"},
	{"\xff\xfe", "utf-16le"},
}

// detectCharset decides the encoding of body: see the package doc. ctype is
// the Content-Type header value (with parameters); html enables the meta
// prescan. It returns the encoding (nil for UTF-8), its canonical name, the
// source of the decision, and the length of a byte order mark to skip.
func detectCharset(body []byte, ctype string, isHTML bool) (enc encoding.Encoding, name, source string, skip int) {
	for _, b := range boms {
		if bytes.HasPrefix(body, []byte(b.bom)) {
			e, n := lookup(b.label)
			return e, n, CharsetFromBOM, len(b.bom)
		}
	}
	if ctype != "" {
		if label := headerCharset(ctype); label != "" {
			if e, n := lookup(label); n != "" {
				return e, n, CharsetFromHeader, 0
			}
		}
	}
	if isHTML {
		if label := prescan(body); label != "" {
			if e, n := lookup(label); n != "" {
				if strings.HasPrefix(n, "utf-16") {
					// A page that can declare its encoding in ASCII is not
					// UTF-16 (the standard's rule).
					return nil, "utf-8", CharsetFromMeta, 0
				}
				return e, n, CharsetFromMeta, 0
			}
		}
	}
	if utf8.Valid(body) {
		return nil, "utf-8", CharsetFromSniff, 0
	}
	e, n := lookup(DefaultCharset)
	return e, n, CharsetFromDefault, 0
}

// lookup maps a WHATWG label to its encoding (nil for UTF-8) and canonical
// name; the name is "" for an unknown label. x-user-defined and
// "replacement" are refused (they do not give text).
func lookup(label string) (encoding.Encoding, string) {
	e, name := charset.Lookup(label)
	if e == nil || name == "" || name == "replacement" || name == "x-user-defined" {
		return nil, ""
	}
	if name == "utf-8" {
		return nil, name
	}
	return e, name
}

// headerCharset returns the charset parameter of a Content-Type value.
func headerCharset(ctype string) string {
	if _, params, err := mime.ParseMediaType(ctype); err == nil {
		return params["charset"]
	}
	// A malformed value: look for charset= by hand.
	return charsetParam(ctype)
}

// charsetParam extracts the value after "charset=" in s (the standard's
// "extracting a character encoding from a meta element"), or "".
func charsetParam(s string) string {
	low := strings.ToLower(s)
	for i := 0; ; {
		j := strings.Index(low[i:], "charset")
		if j < 0 {
			return ""
		}
		k := i + j + len("charset")
		for k < len(s) && isHTMLSpace(s[k]) {
			k++
		}
		if k >= len(s) || s[k] != '=' {
			i = k
			continue
		}
		k++
		for k < len(s) && isHTMLSpace(s[k]) {
			k++
		}
		if k >= len(s) {
			return ""
		}
		if q := s[k]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[k+1:], q)
			if end < 0 {
				return ""
			}
			return s[k+1 : k+1+end]
		}
		end := k
		for end < len(s) && !isHTMLSpace(s[end]) && s[end] != ';' {
			end++
		}
		return s[k:end]
	}
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// hasMetaTag reports whether b holds "<meta", in any case: the tokenizer
// sees a meta start tag only where it does.
func hasMetaTag(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 || len(b)-i < 5 {
			return false
		}
		if m := b[i+1 : i+5]; m[0]|0x20 == 'm' && m[1]|0x20 == 'e' && m[2]|0x20 == 't' && m[3]|0x20 == 'a' {
			return true
		}
		b = b[i+1:]
	}
}

// prescan looks for a <meta charset> or <meta http-equiv=content-type
// content="...charset=..."> in the first prescanBytes of body and returns
// its label ("" if none).
func prescan(body []byte) string {
	if len(body) > prescanBytes {
		body = body[:prescanBytes]
	}
	if !hasMetaTag(body) {
		return "" // no tokenizer (4 KiB and more to allocate) for nothing
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) != "meta" {
				continue
			}
			var label, content string
			pragma := false
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "charset":
					if label == "" {
						label = strings.TrimSpace(string(v))
					}
				case "http-equiv":
					pragma = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
				case "content":
					content = string(v)
				}
			}
			if label != "" {
				return label
			}
			if pragma && content != "" {
				if l := charsetParam(content); l != "" {
					return l
				}
			}
		}
	}
}
