package crawldb

import (
	"fmt"
	"strings"
)

// PageKind is the kind of page a URL names, for the dynamic schedule's
// per-kind intervals (Hu and Wu: site home page, directory page, other
// page).
type PageKind int

// The page kinds, usable as indexes of DynamicConfig.Kinds.
const (
	// KindHome is a site's home page: the path is empty or "/".
	KindHome PageKind = iota
	// KindDirectory is a directory page: the path ends in "/".
	KindDirectory
	// KindOther is every other page.
	KindOther
	// NumKinds is the number of page kinds.
	NumKinds = 3
)

// String returns "home", "directory" or "other".
func (k PageKind) String() string {
	switch k {
	case KindHome:
		return "home"
	case KindDirectory:
		return "directory"
	case KindOther:
		return "other"
	}
	return fmt.Sprintf("kind_%d", int(k))
}

// PageKindOf classifies a URL by its path alone: KindHome when the path is
// empty or "/", KindDirectory when it ends in "/", KindOther otherwise.
//
// The query and the fragment are ignored: "http://h/?lang=en" is the home
// page and "http://h/news/?page=2" a directory page, because a query
// selects a view of the same page (a language, a listing's page) rather
// than another kind of page. A URL without "://" (such as "mailto:x") is
// KindOther. The URL is not parsed beyond finding the path, so the
// function does not allocate.
func PageKindOf(url string) PageKind {
	i := strings.Index(url, "://")
	if i < 0 {
		return KindOther
	}
	rest := url[i+3:]
	// The authority ends at the first '/', '?' or '#'.
	j := strings.IndexAny(rest, "/?#")
	if j < 0 || rest[j] != '/' {
		return KindHome // no path at all
	}
	p := rest[j:]
	if k := strings.IndexAny(p, "?#"); k >= 0 {
		p = p[:k]
	}
	switch {
	case p == "/":
		return KindHome
	case strings.HasSuffix(p, "/"):
		return KindDirectory
	}
	return KindOther
}
