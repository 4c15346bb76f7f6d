// Package faultfs wraps a storage.FS to make chosen calls fail: the Nth
// create, write, close, rename or remove of a path that matches a pattern
// returns an error (EIO by default), as a full disk, a dying disk or a
// network file system would. The fault-injection tests use it to show that
// every job either completes or leaves the CrawlDB as it was, and that a
// plain retry then ends where one clean run does.
//
// The wrapper passes storage.Locker through, so locks keep their OS
// semantics on a wrapped local disk.
package faultfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sync"
	"syscall"

	"github.com/trawl/trawl/storage"
)

// Op is a kind of file-system call.
type Op string

// The operations a Rule can fail.
const (
	Create Op = "create" // FS.Create
	Write  Op = "write"  // Write on a file from Create
	Close  Op = "close"  // Close of a file from Create (the commit of its bytes)
	Rename Op = "rename" // FS.Rename, matched on the new path
	Remove Op = "remove" // FS.RemoveAll
	Mkdir  Op = "mkdir"  // FS.MkdirAll
)

// Rule makes calls fail.
type Rule struct {
	// Op is the call to fail.
	Op Op
	// Pattern is a path.Match pattern matched against the path's base
	// name (e.g. "_updated", "part-*.parquet"); empty matches every path.
	Pattern string
	// Nth fails the Nth matching call (1 is the first); 0 fails every
	// matching call; a negative Nth fails none (the rule only counts).
	Nth int
	// Err is the error returned; nil means EIO.
	Err error
}

// FS is a storage.FS that fails the calls its rules match.
type FS struct {
	inner storage.FS

	mu     sync.Mutex
	rules  []Rule
	counts []int // matching calls seen, per rule
	failed []string
}

// New wraps inner with rules.
func New(inner storage.FS, rules ...Rule) *FS {
	return &FS{inner: inner, rules: rules, counts: make([]int, len(rules))}
}

// SetRules replaces the rules (and their counts).
func (f *FS) SetRules(rules ...Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules, f.counts = rules, make([]int, len(rules))
}

// Failed lists the calls that were made to fail, as "op path".
func (f *FS) Failed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.failed...)
}

// Matched returns how many calls each rule matched so far.
func (f *FS) Matched() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.counts...)
}

// check counts a call and returns the error to fail it with, if any.
func (f *FS) check(op Op, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := path.Base(p)
	for i, r := range f.rules {
		if r.Op != op {
			continue
		}
		if r.Pattern != "" {
			if ok, _ := path.Match(r.Pattern, base); !ok {
				continue
			}
		}
		f.counts[i]++
		if r.Nth == 0 || r.Nth > 0 && f.counts[i] == r.Nth {
			f.failed = append(f.failed, string(op)+" "+p)
			err := r.Err
			if err == nil {
				err = syscall.EIO
			}
			return &fs.PathError{Op: string(op) + " (injected)", Path: p, Err: err}
		}
	}
	return nil
}

var (
	_ storage.FS     = (*FS)(nil)
	_ storage.Locker = (*FS)(nil)
)

// Open opens a file of the inner FS.
func (f *FS) Open(p string) (storage.File, error) { return f.inner.Open(p) }

// Create creates a file whose writes and close may fail.
func (f *FS) Create(p string) (io.WriteCloser, error) {
	if err := f.check(Create, p); err != nil {
		return nil, err
	}
	w, err := f.inner.Create(p)
	if err != nil {
		return nil, err
	}
	return &writer{fs: f, w: w, path: p}, nil
}

// Rename renames, unless a rule fails it (matched on newpath).
func (f *FS) Rename(oldpath, newpath string) error {
	if err := f.check(Rename, newpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

// RemoveAll removes, unless a rule fails it.
func (f *FS) RemoveAll(p string) error {
	if err := f.check(Remove, p); err != nil {
		return err
	}
	return f.inner.RemoveAll(p)
}

// ReadDir lists a directory of the inner FS.
func (f *FS) ReadDir(p string) ([]fs.FileInfo, error) { return f.inner.ReadDir(p) }

// Stat describes a path of the inner FS.
func (f *FS) Stat(p string) (fs.FileInfo, error) { return f.inner.Stat(p) }

// MkdirAll creates directories, unless a rule fails it.
func (f *FS) MkdirAll(p string) error {
	if err := f.check(Mkdir, p); err != nil {
		return err
	}
	return f.inner.MkdirAll(p)
}

// TryLock passes through to the inner FS's locks; an inner FS without
// them gives an error matching errors.ErrUnsupported, and callers fall
// back to lock files.
func (f *FS) TryLock(p string) (storage.HeldLock, error) {
	if lk, ok := f.inner.(storage.Locker); ok {
		return lk.TryLock(p)
	}
	return nil, fmt.Errorf("faultfs: %s: %w", p, errors.ErrUnsupported)
}

// writer is a file being written.
type writer struct {
	fs   *FS
	w    io.WriteCloser
	path string
}

func (w *writer) Write(p []byte) (int, error) {
	if err := w.fs.check(Write, w.path); err != nil {
		return 0, err
	}
	return w.w.Write(p)
}

func (w *writer) Close() error {
	if err := w.fs.check(Close, w.path); err != nil {
		w.w.Close()
		return err
	}
	return w.w.Close()
}
