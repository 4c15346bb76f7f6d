package urlutil

import "strings"

// Redact returns s with the userinfo (a user name and maybe a password,
// and the '@' after them) removed from everything URL-like in it, so that
// raw input (a seed line, a link, a Location header) can be echoed in logs
// and error messages. It removes, up to the last '@' of the authority:
//
//   - the userinfo of a URL whose scheme is followed by "//", or, for the
//     http, https, ftp, ws and wss schemes, by any number of slashes or
//     backslashes, even none, as Normalize reads them;
//   - the userinfo of a scheme-relative reference ("//user:pw@host") that
//     starts s or follows a space, a quote or a bracket;
//   - a "user:password@" that starts a word without a scheme
//     ("user:pw@host/path"), except in mailto: addresses.
//
// An authority ends as Normalize ends it, at '/', '?', '#' (or '\' after a
// special scheme) or the end of s, not at a space or a line break, so that
// a password with a space in it is removed whole; a word without a scheme
// ends at a space or a control character too.
//
// Redact errs on the side of removing: in free text, a word like "a:b@c"
// loses "a:b@" even where it was not a password, and an '@' further on,
// before any '/', can make it remove text up to that '@'. Text without an
// '@' is returned as it is.
//
// Tabs and line breaks count as Normalize counts them, which removes them
// first: "h\ttp://u@h" and "A\r://u@h" have a scheme and lose "u@".
//
// Removing a userinfo can join what was around it into a new one
// ("http:/@/0@" becomes "http://0@"), so Redact repeats until nothing
// more is removed; every pass that changes s makes it shorter.
func Redact(s string) string {
	for {
		r := redactOnce(s)
		if r == s {
			return r
		}
		s = r
	}
}

// redactOnce is one pass of Redact.
func redactOnce(s string) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	var b strings.Builder
	copied := 0 // s[:copied] is in b, or dropped
	for i := 0; i < len(s); i++ {
		if i > 0 && isSchemeByte(s[i-1]) {
			continue // inside a word: not where a URL starts
		}
		start, end, ok := authorityAt(s, i)
		if !ok {
			continue
		}
		if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
			b.WriteString(s[copied:start])
			copied = start + at + 1
		}
		i = end - 1
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// authorityAt reports whether something URL-like starts at s[i], and where
// its authority (or, for a word without a scheme, the word) starts and
// ends. s[i-1], if any, is not a scheme character.
func authorityAt(s string, i int) (start, end int, ok bool) {
	if j, scheme := looseSchemeEnd(s[i:]); j > 0 {
		special := isSpecial(scheme)
		// Count the slashes after the colon as Normalize does, after it
		// has removed tabs and line breaks.
		k, slashes := i+j+1, 0
		for ; k < len(s); k++ {
			if c := s[k]; c == '/' || c == '\\' {
				slashes++
			} else if c != '\t' && c != '\n' && c != '\r' {
				break
			}
		}
		if slashes >= 2 || special {
			return k, authorityEnd(s, k, special, false), true
		}
		if scheme == "mailto" {
			return 0, 0, false
		}
	}
	if i > 0 && !isWordBoundary(s[i-1]) {
		return 0, 0, false
	}
	if strings.HasPrefix(s[i:], "//") || strings.HasPrefix(s[i:], `\\`) {
		k := i
		for k < len(s) && (s[k] == '/' || s[k] == '\\') {
			k++
		}
		return k, authorityEnd(s, k, true, false), true
	}
	// A word without a scheme: redact it when it reads user:password@.
	end = authorityEnd(s, i, true, true)
	at := strings.LastIndexByte(s[i:end], '@')
	if at <= 0 || strings.IndexByte(s[i:i+at], ':') < 0 {
		return 0, 0, false
	}
	return i, end, true
}

// looseSchemeEnd is schemeEnd for text where tabs and line breaks may
// still be inside the scheme, as Normalize removes them before it reads
// one ("h\ttp://"): it returns the index of the ':' and the scheme in
// lower case without them, or -1.
func looseSchemeEnd(s string) (int, string) {
	var b []byte // the scheme so far, in lower case
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\t' || c == '\n' || c == '\r':
			if len(b) == 0 {
				return -1, ""
			}
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', len(b) > 0 && isSchemeByte(c):
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		case len(b) > 0 && c == ':':
			return i, string(b)
		default:
			return -1, ""
		}
	}
	return -1, ""
}

// authorityEnd returns the end of an authority starting at s[i]: the
// first '/', '?' or '#', or '\' if backslash; inWord also ends it at a
// space, a control character, a quote or an angle bracket.
func authorityEnd(s string, i int, backslash, inWord bool) int {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/' || c == '?' || c == '#' || (backslash && c == '\\'):
			return i
		case inWord && (c <= ' ' || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '`'):
			return i
		}
	}
	return len(s)
}

// isSchemeByte reports whether c may appear in a URL scheme.
func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isWordBoundary reports whether a word may start after c.
func isWordBoundary(c byte) bool {
	switch c {
	case '"', '\'', '`', '<', '>', '(', ')', '[', ']', '{', '}', ',', ';', '=', '|':
		return true
	}
	return c <= ' ' || c == 0x7f
}
