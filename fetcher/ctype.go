package fetcher

import (
	"fmt"
	"strings"
)

// TypeMatcher reports whether a media type is one of a list of patterns:
// "type/subtype", "type/*" or "*/*" ("*" alone is "*/*"), compared
// without case. It is how Options.ContentTypes decides which pages are
// stored.
type TypeMatcher struct {
	all   bool
	exact map[string]bool // "text/html"
	major map[string]bool // "image" for image/*
}

// NewTypeMatcher checks patterns and returns their matcher. An empty list
// is an error: it would store nothing.
func NewTypeMatcher(patterns []string) (*TypeMatcher, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("no content types given")
	}
	m := &TypeMatcher{exact: map[string]bool{}, major: map[string]bool{}}
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "*" || p == "*/*" {
			m.all = true
			continue
		}
		major, minor, ok := strings.Cut(p, "/")
		if !ok || major == "" || minor == "" || major == "*" || strings.ContainsAny(p, " ;,") ||
			strings.Contains(minor, "/") || (strings.Contains(minor, "*") && minor != "*") {
			return nil, fmt.Errorf("content type %q: want type/subtype, type/* or */*", p)
		}
		if minor == "*" {
			m.major[major] = true
		} else {
			m.exact[p] = true
		}
	}
	return m, nil
}

// Match reports whether mediaType (without parameters) is in the list.
func (m *TypeMatcher) Match(mediaType string) bool {
	if m == nil || m.all {
		return true
	}
	mt := strings.ToLower(mediaType)
	if m.exact[mt] {
		return true
	}
	major, _, _ := strings.Cut(mt, "/")
	return m.major[major]
}
