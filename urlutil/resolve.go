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
	b, err := n.Base(base)
	if err != nil {
		return "", fmt.Errorf("urlutil: resolve %q: base URL: %w", shorten(Redact(href)), err)
	}
	return b.Resolve(href)
}

// Base is a base URL, normalized and taken apart once, against which the
// links of a page are resolved: b.Resolve(href) is
// n.ResolveReference(base, href) for the Normalizer n and base URL that
// made it. The zero Base is not usable; a Base is immutable and safe for
// concurrent use.
type Base struct {
	n *Normalizer
	// b is the normalized base URL: scheme://authority/path[?query].
	b                          string
	scheme                     string
	special, web               bool
	pathStart, queryStart, dir int // ends of b's authority, path and directory
}

// Base normalizes base for Resolve; it fails as Normalize(base) does.
func (n *Normalizer) Base(base string) (Base, error) {
	b, err := n.Normalize(base)
	if err != nil {
		return Base{}, err
	}
	se := strings.Index(b, "://")
	r := Base{n: n, b: b, scheme: b[:se]}
	r.special = isSpecial(r.scheme)
	r.web = r.scheme == "http" || r.scheme == "https"
	r.pathStart = se + 3 + strings.IndexByte(b[se+3:], '/')
	r.queryStart = len(b)
	if q := strings.IndexByte(b, '?'); q >= 0 {
		r.queryStart = q
	}
	r.dir = strings.LastIndexByte(b[:r.queryStart], '/') + 1
	return r, nil
}

// String returns the normalized base URL.
func (r Base) String() string { return r.b }

func (r *Base) isSlash(c byte) bool { return c == '/' || (r.special && c == '\\') }

// Resolve resolves href against the base and normalizes the result; see
// Normalizer.ResolveReference.
func (r Base) Resolve(href string) (string, error) {
	n, b := r.n, r.b
	h, err := prepare(href)
	if err != nil {
		return "", err
	}
	if i := schemeEnd(h); i > 0 {
		hs := strings.ToLower(h[:i])
		rest := h[i+1:]
		if hs != r.scheme || !r.special || (len(rest) >= 2 && r.isSlash(rest[0]) && r.isSlash(rest[1])) {
			return n.Normalize(h) // an absolute URL
		}
		h = rest // "http:foo" against an http base: relative
	}
	// For http and https, join takes the short way when h is normal
	// already.
	switch {
	case h == "" || h[0] == '#':
		return b, nil
	case len(h) >= 2 && r.isSlash(h[0]) && r.isSlash(h[1]):
		return n.Normalize(r.scheme + ":" + h)
	case r.isSlash(h[0]):
		if r.web {
			return n.join(b[:r.pathStart], h, tailAuthority)
		}
		return n.Normalize(b[:r.pathStart] + h)
	case h[0] == '?':
		if r.web {
			return n.join(b[:r.queryStart], h, tailQuery)
		}
		return n.Normalize(b[:r.queryStart] + h)
	default:
		if r.web {
			return n.join(b[:r.dir], h, tailAfterSlash)
		}
		return n.Normalize(b[:r.dir] + h)
	}
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
