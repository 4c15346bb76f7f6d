package storage

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// SchemeFunc opens the file system of one URI scheme for one authority
// (the "host:port" part of scheme://host:port/path; empty for scheme:/path).
type SchemeFunc func(authority string) (FS, error)

// Resolver turns URIs into a file system and a path within it.
//
// Plain paths and file: URIs name the local disk. Other schemes (hdfs) are
// served by handlers registered with Register; the file system a handler
// returns is cached per scheme and authority, so one connection serves every
// path under it. Close closes the cached file systems that are io.Closers.
//
// The zero value is not usable; make one with NewResolver. A Resolver is
// safe for concurrent use.
type Resolver struct {
	local FS

	mu       sync.Mutex
	handlers map[string]SchemeFunc
	opened   map[string]FS // key: scheme + "://" + authority
}

// NewResolver returns a Resolver that knows the local file system only.
func NewResolver() *Resolver {
	return &Resolver{
		local:    NewLocal(),
		handlers: make(map[string]SchemeFunc),
		opened:   make(map[string]FS),
	}
}

// NewResolverWith returns a Resolver whose plain paths and file: URIs go to
// local instead of the local disk: a wrapper of Local that injects faults
// (package faultfs) or counts calls.
func NewResolverWith(local FS) *Resolver {
	r := NewResolver()
	r.local = local
	return r
}

// Register sets the handler for a URI scheme (case-insensitive), replacing
// any earlier one. The "file" scheme is built in and cannot be registered.
func (r *Resolver) Register(scheme string, open SchemeFunc) error {
	s := strings.ToLower(scheme)
	if !validScheme(s) {
		return fmt.Errorf("storage: register scheme %q: not a valid URI scheme", scheme)
	}
	if s == "file" {
		return fmt.Errorf("storage: register scheme %q: the file scheme is built in", scheme)
	}
	if open == nil {
		return fmt.Errorf("storage: register scheme %q: nil handler", scheme)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[s] = open
	return nil
}

// Schemes lists the registered schemes (without "file"), sorted.
func (r *Resolver) Schemes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.handlers))
	for s := range r.handlers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Resolve returns the file system that uri names and the path within it.
//
//   - "" or a plain path: the local disk and the cleaned path (a relative
//     path stays relative to the working directory; "" becomes ".").
//   - file:///abs/path, file://localhost/abs/path or file:/abs/path: the
//     local disk and /abs/path.
//   - scheme://authority/path (e.g. hdfs://namenode:8020/crawl): the file
//     system of the registered handler for the scheme and the cleaned
//     absolute path ("/" if empty).
//
// The path part of a URI is taken literally (no percent-decoding), so that
// Join and Resolve round-trip any file name. A string is a URI only if it
// starts with a scheme of two or more letters followed by ":/", so Windows
// drive letters and file names containing ':' stay plain paths.
// An unknown scheme is an error that lists the known ones.
func (r *Resolver) Resolve(uri string) (FS, string, error) {
	u, ok := splitURI(uri)
	if !ok {
		return r.local, filepath.Clean(uri), nil
	}
	if u.scheme == "file" {
		if u.authority != "" && !strings.EqualFold(u.authority, "localhost") {
			return nil, "", fmt.Errorf("storage: resolve %q: file URI with a remote host %q", uri, u.authority)
		}
		return r.local, filepath.FromSlash(path.Clean(u.path)), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	open, ok := r.handlers[u.scheme]
	if !ok {
		known := make([]string, 0, len(r.handlers)+1)
		known = append(known, "file")
		for s := range r.handlers {
			known = append(known, s)
		}
		sort.Strings(known)
		return nil, "", fmt.Errorf("storage: resolve %q: unknown scheme %q (known: %s, or a plain path)",
			uri, u.scheme, strings.Join(known, ", "))
	}
	key := u.scheme + "://" + u.authority
	fsys, ok := r.opened[key]
	if !ok {
		var err error
		fsys, err = open(u.authority)
		if err != nil {
			return nil, "", fmt.Errorf("storage: resolve %q: open %s file system: %w", uri, u.scheme, err)
		}
		if fsys == nil {
			return nil, "", fmt.Errorf("storage: resolve %q: %s handler returned no file system", uri, u.scheme)
		}
		r.opened[key] = fsys
	}
	return fsys, path.Clean(u.path), nil
}

// Close closes every file system the Resolver opened through a handler
// that implements io.Closer, and forgets them. The Resolver stays usable.
func (r *Resolver) Close() error {
	r.mu.Lock()
	opened := r.opened
	r.opened = make(map[string]FS)
	r.mu.Unlock()
	keys := make([]string, 0, len(opened))
	for k := range opened {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		if c, ok := opened[k].(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("storage: close %s: %w", k, err))
			}
		}
	}
	return errors.Join(errs...)
}

// uriParts is a URI split into its scheme (lower-cased), authority and path
// ("/" or starting with "/").
type uriParts struct {
	scheme, authority, path string
}

// prefix is "scheme://authority" (or "scheme:" when the URI had no "//").
func (u uriParts) prefix(hadSlashes bool) string {
	if hadSlashes {
		return u.scheme + "://" + u.authority
	}
	return u.scheme + ":"
}

// splitURI splits s if it is a URI as Resolve defines it.
func splitURI(s string) (uriParts, bool) {
	i := strings.Index(s, ":/")
	if i < 2 || !validScheme(s[:i]) {
		return uriParts{}, false
	}
	u := uriParts{scheme: strings.ToLower(s[:i])}
	rest := s[i+1:] // starts with "/"
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			u.authority, rest = rest, "/"
		} else {
			u.authority, rest = rest[:j], rest[j:]
		}
	}
	u.path = rest
	return u, true
}

// hasSlashes reports whether the URI s is written scheme://... .
func hasSlashes(s string) bool {
	i := strings.Index(s, ":/")
	return strings.HasPrefix(s[i+1:], "//")
}

func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// Join joins path elements onto a plain path or a URI. For a URI the
// elements are joined to its path with slashes and the scheme and authority
// are kept: Join("hdfs://nn:8020/crawl", "crawldb", "current") is
// "hdfs://nn:8020/crawl/crawldb/current". For a plain path it is
// filepath.Join.
func Join(uri string, elem ...string) string {
	u, ok := splitURI(uri)
	if !ok {
		return filepath.Join(append([]string{uri}, elem...)...)
	}
	p := path.Join(append([]string{u.path}, elem...)...)
	return u.prefix(hasSlashes(uri)) + p
}

// Dir returns all but the last element of a plain path or a URI's path,
// keeping the scheme and authority: Dir("hdfs://nn/a/b") is "hdfs://nn/a"
// and Dir("hdfs://nn/") is "hdfs://nn/".
func Dir(uri string) string {
	u, ok := splitURI(uri)
	if !ok {
		return filepath.Dir(uri)
	}
	return u.prefix(hasSlashes(uri)) + path.Dir(u.path)
}

// Base returns the last element of a plain path or a URI's path:
// Base("hdfs://nn/a/b") is "b"; Base("hdfs://nn/") is "/".
func Base(uri string) string {
	u, ok := splitURI(uri)
	if !ok {
		return filepath.Base(uri)
	}
	return path.Base(u.path)
}

// IsURI reports whether s is a URI (scheme:/...) rather than a plain path,
// by the rule Resolve uses.
func IsURI(s string) bool {
	_, ok := splitURI(s)
	return ok
}
