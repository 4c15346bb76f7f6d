package warc

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// wwwPrefix is the host prefix SURT keys drop (www, www2, ...), as the
// surt library pywb uses does.
var wwwPrefix = regexp.MustCompile(`^www\d*\.`)

// Key returns the SURT (Sort-friendly URI Reordering Transform) key of
// rawURL as pywb computes it for its CDXJ indexes: scheme, user info and
// fragment dropped; the host lower-cased, a leading "www." (or www2.
// ...) dropped, and its labels reversed and joined by commas (an IP
// address is kept as it is); a port other than the scheme's default
// kept after a colon; then ")" and the path and query lower-cased, the
// path's trailing slash dropped (but "/" kept), and the query's
// arguments sorted, empty ones dropped. So
// "http://www.Example.com/A/?b=2&a=1" has the key
// "com,example)/a?a=1&b=2".
func Key(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("surt: %w", err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("surt: %q has no host", rawURL)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	var b strings.Builder
	if net.ParseIP(host) != nil {
		b.WriteString(host)
	} else {
		labels := strings.Split(wwwPrefix.ReplaceAllString(host, ""), ".")
		slices.Reverse(labels)
		b.WriteString(strings.Join(labels, ","))
	}
	if port != "" {
		b.WriteString(":")
		b.WriteString(port)
	}
	b.WriteString(")")
	p := strings.ToLower(u.EscapedPath())
	if p == "" {
		p = "/"
	} else if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	b.WriteString(p)
	if u.RawQuery != "" {
		var args []string
		for a := range strings.SplitSeq(strings.ToLower(u.RawQuery), "&") {
			if a != "" {
				args = append(args, a)
			}
		}
		slices.Sort(args)
		if len(args) > 0 {
			b.WriteString("?")
			b.WriteString(strings.Join(args, "&"))
		}
	}
	return b.String(), nil
}
