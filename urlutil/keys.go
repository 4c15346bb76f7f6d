package urlutil

import (
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// parts splits a URL of the form scheme://authority/path?query#fragment
// without validating it. ok is false if there is no "://".
func parts(u string) (authority, path, query string, ok bool) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", "", "", false
	}
	rest := u[i+3:]
	end := -1
	for j := 0; j < len(rest); j++ { // strings.IndexAny(rest, "/?#"), without building its set
		if c := rest[j]; c == '/' || c == '?' || c == '#' {
			end = j
			break
		}
	}
	if end < 0 {
		return rest, "", "", true
	}
	authority, rest = rest[:end], rest[end:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		return authority, rest[:q], rest[q+1:], true
	}
	return authority, rest, "", true
}

// hostOf returns the host of an authority: no userinfo, no port; an IPv6
// literal keeps its brackets.
func hostOf(auth string) string {
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	if strings.HasPrefix(auth, "[") {
		if j := strings.IndexByte(auth, ']'); j >= 0 {
			return auth[:j+1]
		}
		return auth
	}
	if k := strings.LastIndexByte(auth, ':'); k >= 0 {
		auth = auth[:k]
	}
	return auth
}

// Host returns the lower-cased host of u, without port or userinfo (an
// IPv6 literal keeps its brackets), or "" if u has no "://". It expects a
// normalized URL and does not validate; it is the key fetch lists are
// partitioned by (Nutch's partition.url.mode byHost).
func Host(u string) string {
	auth, _, _, ok := parts(u)
	if !ok {
		return ""
	}
	return strings.ToLower(hostOf(auth))
}

// Domain returns the registered domain of u's host: its effective TLD plus
// one label (golang.org/x/net/publicsuffix), e.g. "example.co.uk" for
// www.example.co.uk. For an IP address, a host that is itself a public
// suffix, and a host whose top-level label is not on the public suffix list
// (localhost, *.test, intranet names) it is the host itself. It is "" if u
// has no host.
func Domain(u string) string {
	return DomainOfHost(Host(u))
}

// DomainOfHost is Domain for a bare, lower-case host name.
func DomainOfHost(host string) string {
	if host == "" || host[0] == '[' {
		return host
	}
	if last := host[strings.LastIndexByte(host, '.')+1:]; last != "" && last[0] >= '0' && last[0] <= '9' {
		if _, err := netip.ParseAddr(host); err == nil {
			return host
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	if !icann && strings.IndexByte(suffix, '.') < 0 {
		// Only the list's default rule "*" matched: an unlisted TLD.
		return host
	}
	if len(host) <= len(suffix) {
		return host // the host is a public suffix itself
	}
	// eTLD+1: the label before the suffix, and the suffix.
	i := len(host) - len(suffix) - 1
	return host[strings.LastIndexByte(host[:i], '.')+1:]
}

// Depth returns the number of non-empty segments in u's path:
// 0 for http://h/, 2 for http://h/a/b/ and for http://h/a//b.
func Depth(u string) int {
	_, path, _, ok := parts(u)
	if !ok {
		return 0
	}
	return countSegments(path)
}

func countSegments(path string) int {
	n := 0
	inSeg := false
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			inSeg = false
		} else if !inSeg {
			inSeg = true
			n++
		}
	}
	return n
}
