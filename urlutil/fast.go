package urlutil

import (
	"net/netip"
	"strings"
)

// The fast paths below recognise, with one scan and no allocation, URLs
// that Normalize would return unchanged: most links on most pages are
// written that way. They only ever answer "unchanged" or "don't know"; for
// anything they do not understand they say "don't know" and the caller
// takes the general path, so their results are those of the general path
// (FuzzFastPaths and TestFastPaths check that).

// normalPrefix reports whether s is a normalized absolute http or https
// URL up to its path, query or fragment: a lower-case scheme, "://", a
// lower-case host that appendHost keeps as it is, and no port or a
// non-default one without leading zeros. It returns the index where the
// authority ends and the scheme (a constant, not a substring of s).
func normalPrefix(s string) (end int, scheme string, ok bool) {
	var i int
	switch {
	case strings.HasPrefix(s, "http://"):
		scheme, i = "http", len("http://")
	case strings.HasPrefix(s, "https://"):
		scheme, i = "https", len("https://")
	default:
		return 0, "", false
	}
	hostStart := i
	labelStart := i
	for ; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' {
			continue
		}
		if c == '.' {
			if i == labelStart || i-labelStart > 63 {
				return 0, "", false
			}
			labelStart = i + 1
			continue
		}
		break
	}
	hostEnd := i
	// A non-empty last label of at most 63 bytes (no trailing dot, which
	// Normalize removes), and a host of at most 253 bytes.
	if hostEnd == labelStart || hostEnd-labelStart > 63 || hostEnd-hostStart > 253 {
		return 0, "", false
	}
	if allDigitsString(s[labelStart:hostEnd]) {
		if addr, err := netip.ParseAddr(s[hostStart:hostEnd]); err != nil || !addr.Is4() {
			return 0, "", false
		}
	}
	if i < len(s) && s[i] == ':' {
		j := i + 1
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		port := s[i+1 : j]
		if port == "" || port[0] == '0' || len(port) > 5 || (len(port) == 5 && port > "65535") || port == defaultPort(scheme) {
			return 0, "", false
		}
		i = j
	}
	if i < len(s) && s[i] != '/' && s[i] != '?' && s[i] != '#' {
		return 0, "", false
	}
	return i, scheme, true
}

func allDigitsString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isNormalEscape reports whether s[i] == '%' starts an escape that
// appendEscaped keeps as it is: two upper-case hex digits of a byte that
// is not unreserved.
func isNormalEscape(s string, i int) bool {
	if i+2 >= len(s) {
		return false
	}
	hi, lo := s[i+1], s[i+2]
	if !('0' <= hi && hi <= '9' || 'A' <= hi && hi <= 'F') || !('0' <= lo && lo <= '9' || 'A' <= lo && lo <= 'F') {
		return false
	}
	h, _ := unhex(hi)
	l, _ := unhex(lo)
	return !unreservedSet[h<<4|l]
}

// tailKind says what comes before the tail normalTail checks.
type tailKind uint8

const (
	// tailAuthority: t follows the authority; it must start the path with
	// '/' (an empty path is refused: Normalize makes it "/").
	tailAuthority tailKind = iota
	// tailAfterSlash: t continues a path that ends with '/'; it must not
	// start a dot or empty segment.
	tailAfterSlash
	// tailQuery: t follows a path and must be a query ("?...").
	tailQuery
)

// normalTail checks t, the part of an http or https URL after its
// authority (path, query and fragment), and reports whether Normalize keeps
// it unchanged but for the fragment, which it drops: n is then the length
// of t without the fragment. How t may start depends on what comes before
// it (see tailKind).
func (n *Normalizer) normalTail(t string, kind tailKind) (int, bool) {
	if h := strings.IndexByte(t, '#'); h >= 0 {
		// The fragment is dropped, but a control character in it makes
		// the URL invalid (see prepare).
		for j := h + 1; j < len(t); j++ {
			if c := t[j]; c < 0x20 || c == 0x7f {
				return 0, false
			}
		}
		t = t[:h]
	}
	i := 0
	switch kind {
	case tailAfterSlash:
		if t != "" && (t[0] == '.' || t[0] == '/') {
			return 0, false
		}
	case tailQuery:
		if t == "" || t[0] != '?' {
			return 0, false
		}
	default:
		if t == "" || t[0] != '/' {
			return 0, false
		}
	}
	// Path: pchars or '/', normal escapes, no "//" or "/." (needsCleaning),
	// no ';' unless session ids are kept.
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '?':
			goto query
		case c == '/':
			if i+1 < len(t) && (t[i+1] == '/' || t[i+1] == '.') {
				return 0, false
			}
		case c == ';':
			if !n.keepSessionIDs {
				return 0, false
			}
		case c == '%':
			if !isNormalEscape(t, i) {
				return 0, false
			}
			i += 2
		case !pathSet[c]:
			return 0, false
		}
	}
	return len(t), true
query:
	// Query: non-empty parameters of query characters and normal escapes,
	// none a session id (nor holding a ';') unless those are kept, and no
	// parameters to strip.
	if len(n.stripParams) > 0 {
		return 0, false
	}
	i++
	start := i
	for ; i <= len(t); i++ {
		if i == len(t) || t[i] == '&' {
			if i == start {
				return 0, false // an empty parameter, or an empty query
			}
			if !n.keepSessionIDs && mayBeSessionParam(t[start:i]) {
				return 0, false
			}
			start = i + 1
			continue
		}
		c := t[i]
		switch {
		case c == ';':
			if !n.keepSessionIDs {
				return 0, false
			}
		case c == '%':
			if !isNormalEscape(t, i) {
				return 0, false
			}
			i += 2
		case !querySet[c]:
			return 0, false
		}
	}
	return len(t), true
}

// mayBeSessionParam is isSessionParam for a string, without allocating: it
// says true, to be safe, for names longer than 32 bytes (which only
// aspsessionid... names can be).
func mayBeSessionParam(p string) bool {
	eq := strings.IndexByte(p, '=')
	if eq < 0 {
		return false
	}
	if eq > 32 {
		return true
	}
	var name [32]byte
	return isSessionName(name[:copy(name[:], p[:eq])])
}

// normalized returns what Normalize gives for raw when raw is a normalized
// http or https URL, but for a fragment (dropped): ok is false when it
// cannot tell.
func (n *Normalizer) normalized(raw string) (string, bool) {
	end, _, ok := normalPrefix(raw)
	if !ok {
		return "", false
	}
	k, ok := n.normalTail(raw[end:], tailAuthority)
	if !ok {
		return "", false
	}
	return raw[:end+k], true
}

// join returns Normalize(prefix + t) for prefix, a normalized http or
// https URL cut after its authority (kind tailAuthority), after a '/' of
// its path (tailAfterSlash) or at the end of its path (tailQuery): when t
// is already normal the result is just the concatenation.
func (n *Normalizer) join(prefix, t string, kind tailKind) (string, error) {
	p, rest := prefix, t
	if kind == tailAfterSlash {
		p, rest = popDots(prefix, t)
	}
	if k, ok := n.normalTail(rest, kind); ok {
		return p + rest[:k], nil
	}
	// The general path gets the link as written, so that its result and
	// its error are those of the concatenation.
	return n.Normalize(prefix + t)
}

// popDots resolves the leading "../" and "./" segments of a relative path
// t against dir, a normalized http or https URL cut after a '/' of its
// path, as Normalize's dot-segment removal would: "../" drops the last
// segment of dir (none at the root), "./" nothing.
func popDots(dir, t string) (string, string) {
	if t == "" || t[0] != '.' {
		return dir, t
	}
	se := strings.Index(dir, "://")
	root := se + 3 + strings.IndexByte(dir[se+3:], '/') + 1 // dir[:root] ends with the path's first '/'
	for {
		switch {
		case strings.HasPrefix(t, "../"):
			if len(dir) > root {
				dir = dir[:strings.LastIndexByte(dir[:len(dir)-1], '/')+1]
			}
			t = t[3:]
		case strings.HasPrefix(t, "./"):
			t = t[2:]
		default:
			return dir, t
		}
	}
}
