package urlutil

import (
	"fmt"
	"strings"
)

// ResolveReference resolves href, a link as written in a page, against the
// page's URL base (RFC 3986 section 5.2, with the WHATWG leniencies for
// http and https: a backslash counts as a slash, and "http:path" with the
// base's own scheme is relative) and returns the normalized result. The
// fragment is dropped, so "#top" resolves to the base itself. An href with
// another scheme (mailto:, javascript:) is normalized on its own and fails
// unless it has a host.
func (n *Normalizer) ResolveReference(base, href string) (string, error) {
	b, err := n.Normalize(base)
	if err != nil {
		return "", fmt.Errorf("urlutil: resolve %q: base URL: %w", shorten(Redact(href)), err)
	}
	h, err := prepare(href)
	if err != nil {
		return "", err
	}
	se := strings.Index(b, "://")
	scheme := b[:se]
	special := isSpecial(scheme)
	isSlash := func(c byte) bool { return c == '/' || (special && c == '\\') }

	if i := schemeEnd(h); i > 0 {
		hs := strings.ToLower(h[:i])
		rest := h[i+1:]
		if hs != scheme || !special || (len(rest) >= 2 && isSlash(rest[0]) && isSlash(rest[1])) {
			return n.Normalize(h) // an absolute URL
		}
		h = rest // "http:foo" against an http base: relative
	}

	// b is normalized: scheme://authority/path[?query].
	pathStart := se + 3 + strings.IndexByte(b[se+3:], '/')
	queryStart := len(b)
	if q := strings.IndexByte(b, '?'); q >= 0 {
		queryStart = q
	}
	// For http and https, join takes the short way when h is normal
	// already.
	web := scheme == "http" || scheme == "https"
	switch {
	case h == "" || h[0] == '#':
		return b, nil
	case len(h) >= 2 && isSlash(h[0]) && isSlash(h[1]):
		return n.Normalize(scheme + ":" + h)
	case isSlash(h[0]):
		if web {
			return n.join(b[:pathStart], h, tailAuthority)
		}
		return n.Normalize(b[:pathStart] + h)
	case h[0] == '?':
		if web {
			return n.join(b[:queryStart], h, tailQuery)
		}
		return n.Normalize(b[:queryStart] + h)
	default:
		dir := b[:strings.LastIndexByte(b[:queryStart], '/')+1]
		if web {
			return n.join(dir, h, tailAfterSlash)
		}
		return n.Normalize(dir + h)
	}
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
