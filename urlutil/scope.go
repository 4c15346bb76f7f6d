package urlutil

import (
	"fmt"
	"strings"
)

// Scope limits which outlinks a crawl follows, relative to the page they
// were found on (Nutch's db.ignore.external.links with its mode
// byHost / byDomain).
type Scope int

const (
	// ScopeAny follows every link.
	ScopeAny Scope = iota
	// ScopeHost follows links to the source page's host only.
	ScopeHost
	// ScopeDomain follows links within the source page's registered domain
	// (see Domain): www.example.com may link to shop.example.com.
	ScopeDomain
)

// ParseScope parses "any", "host" or "domain" (case-insensitive; "" is
// "any").
func ParseScope(s string) (Scope, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "any", "all":
		return ScopeAny, nil
	case "host":
		return ScopeHost, nil
	case "domain":
		return ScopeDomain, nil
	}
	return ScopeAny, fmt.Errorf("urlutil: unknown scope %q (want any, host or domain)", s)
}

// String returns "any", "host" or "domain".
func (s Scope) String() string {
	switch s {
	case ScopeAny:
		return "any"
	case ScopeHost:
		return "host"
	case ScopeDomain:
		return "domain"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// Allows reports whether a link from the URL from to the URL to is within
// the scope. Both should be normalized. A URL without a host is never
// within a host or domain scope.
func (s Scope) Allows(from, to string) bool {
	switch s {
	case ScopeAny:
		return true
	case ScopeHost:
		h := Host(to)
		return h != "" && h == Host(from)
	case ScopeDomain:
		ht, hf := Host(to), Host(from)
		if ht == "" || hf == "" {
			return false
		}
		return ht == hf || DomainOfHost(ht) == DomainOfHost(hf)
	}
	return false
}

// Check is Allows with a rejection reason for counters: "" when allowed,
// else "scope-host" or "scope-domain".
func (s Scope) Check(from, to string) (ok bool, reason string) {
	if s.Allows(from, to) {
		return true, ""
	}
	switch s {
	case ScopeHost:
		return false, "scope-host"
	case ScopeDomain:
		return false, "scope-domain"
	}
	return false, "scope-" + s.String()
}
