package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"

	"github.com/trawl/trawl/storage"
)

// Scheme is the URI scheme served by this package.
const Scheme = "hdfs"

// reconnectDelay is how long a pool slot whose connection failed is left
// alone before it is tried again.
const reconnectDelay = 30 * time.Second

// FS is one HDFS cluster (one namenode, HA nameservice or fs.defaultFS) as
// a storage.FS. Paths are absolute HDFS paths ("/crawl/crawldb"). It is
// safe for concurrent use: it holds a small pool of library clients and
// gives each call, and each open file, one client at a time. Close it
// when done (storage.Resolver does).
//
// FS does not implement storage.Locker: HDFS has no locks that die with
// their holder, so lock files are created exclusively and judged by age.
type FS struct {
	st      *settings
	connect func(ctx context.Context) (client, error)
	krb     *krbclient.Client // destroyed by Close; nil without Kerberos

	slots  []*slot
	next   atomic.Uint64 // round-robin start of the slot search
	dialMu sync.Mutex    // one connection attempt at a time
	closed atomic.Bool

	now   func() time.Time
	sleep func(time.Duration)
}

// slot is one client of the pool. Whoever holds mu may use c, and every
// reader and writer c opened.
type slot struct {
	id       int
	mu       sync.Mutex
	c        client      // nil until connected, and after Close
	ready    atomic.Bool // c != nil, readable without mu
	failedAt time.Time   // when connecting last failed; guarded by mu
}

var (
	_ storage.FS = (*FS)(nil)
	_ io.Closer  = (*FS)(nil)
)

// New connects to the HDFS cluster that authority names (the host:port or
// nameservice part of an hdfs:// URI; empty means fs.defaultFS) with
// Options o. It reads the Hadoop configuration, sets up Kerberos if the
// configuration asks for it, and opens the first connection to a
// namenode; further connections open when goroutines would otherwise wait.
func New(authority string, o Options) (*FS, error) {
	return NewContext(context.Background(), authority, o)
}

// NewContext is New with ctx bounding the first connection (the library's
// calls take no context, so ctx cannot bound anything later).
func NewContext(ctx context.Context, authority string, o Options) (*FS, error) {
	st, err := resolve(authority, o)
	if err != nil {
		if authority == "" {
			return nil, fmt.Errorf("hdfs: %w", err)
		}
		return nil, fmt.Errorf("hdfs: hdfs://%s: %w", authority, err)
	}
	var krb *krbclient.Client
	if st.kerberos != nil {
		if krb, err = newKerberosClient(st.kerberos); err != nil {
			return nil, fmt.Errorf("hdfs: %s: %w", st.describe(), err)
		}
		if err := login(krb, st.kerberos); err != nil {
			krb.Destroy()
			return nil, fmt.Errorf("hdfs: %s: %w", st.describe(), err)
		}
	}
	f := newFS(st, connectReal(st, krb))
	f.krb = krb
	if err := f.connectFirst(ctx); err != nil {
		if krb != nil {
			krb.Destroy()
		}
		return nil, err
	}
	return f, nil
}

// SchemeFunc returns a handler for storage.Resolver.Register that opens
// the FS of each authority with New and o.
func SchemeFunc(o Options) storage.SchemeFunc {
	return func(authority string) (storage.FS, error) {
		f, err := New(authority, o)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// Register registers SchemeFunc(o) for the hdfs scheme on r and returns
// r, so that a resolver is made in one expression:
//
//	r := hdfs.Register(storage.NewResolver(), hdfs.Options{})
//
// No connection is made until a URI is resolved.
func Register(r *storage.Resolver, o Options) *storage.Resolver {
	if err := r.Register(Scheme, SchemeFunc(o)); err != nil {
		// Register fails only for an invalid scheme or a nil handler.
		panic("hdfs: " + err.Error())
	}
	return r
}

// newFS makes an FS over connect, with no connection yet.
func newFS(st *settings, connect func(ctx context.Context) (client, error)) *FS {
	f := &FS{
		st:      st,
		connect: connect,
		now:     time.Now,
		sleep:   time.Sleep,
	}
	f.slots = make([]*slot, st.clients)
	for i := range f.slots {
		f.slots[i] = &slot{id: i}
	}
	return f
}

// connectFirst opens the first client, so that New fails at once on a
// wrong address, user or credential.
func (f *FS) connectFirst(ctx context.Context) error {
	f.dialMu.Lock()
	c, err := f.connect(ctx)
	f.dialMu.Unlock()
	if err != nil {
		return fmt.Errorf("hdfs: connect to %s: %w", f.st.describe(), err)
	}
	s := f.slots[0]
	s.c = c
	s.ready.Store(true)
	f.st.log.Debug("hdfs: connected", "fs", f.st.describe(), "conf", f.st.confDir)
	return nil
}

// acquire returns a slot with a client, locked. It prefers an idle
// connected client, then connects an idle unconnected slot, and otherwise
// waits for a connected one.
func (f *FS) acquire() (*slot, error) {
	if f.closed.Load() {
		return nil, fs.ErrClosed
	}
	n := len(f.slots)
	start := int(f.next.Add(1) % uint64(n))
	for i := range n {
		s := f.slots[(start+i)%n]
		if s.ready.Load() && s.mu.TryLock() {
			if s.c != nil {
				return s, nil
			}
			s.mu.Unlock()
		}
	}
	for i := range n {
		s := f.slots[(start+i)%n]
		if s.ready.Load() || !s.mu.TryLock() {
			continue
		}
		if s.c == nil && !f.closed.Load() &&
			(s.failedAt.IsZero() || f.now().Sub(s.failedAt) >= reconnectDelay) {
			f.dialMu.Lock()
			c, err := f.connect(context.Background())
			f.dialMu.Unlock()
			if err == nil {
				s.c = c
				s.ready.Store(true)
				f.st.log.Debug("hdfs: opened another connection", "fs", f.st.describe(), "client", s.id)
				return s, nil
			}
			s.failedAt = f.now()
			f.st.log.Warn("hdfs: could not open another connection; using the open ones", "fs", f.st.describe(), "err", err)
		}
		s.mu.Unlock()
	}
	for i := range n {
		s := f.slots[(start+i)%n]
		if s.ready.Load() {
			s.mu.Lock()
			if s.c != nil {
				return s, nil
			}
			s.mu.Unlock()
		}
	}
	return nil, fs.ErrClosed
}

// with runs fn with a client of the pool.
func (f *FS) with(fn func(c client) error) error {
	s, err := f.acquire()
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	return fn(s.c)
}

// uri is p as an hdfs URI, for messages.
func (f *FS) uri(p string) string { return "hdfs://" + f.st.authority + p }

// pathError wraps err from op on p.
func (f *FS) pathError(op, p string, err error) error {
	return &fs.PathError{Op: op, Path: f.uri(p), Err: mapError(err)}
}

// clean checks that p is absolute and cleans it.
func clean(op, p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("%w: HDFS paths must be absolute", fs.ErrInvalid)}
	}
	return path.Clean(p), nil
}

// Open opens a file for reading. Open reads the file's last FooterSize
// bytes at once (a Parquet footer); other reads are served from blocks of
// ReadBlockSize bytes read whole and cached (see the package doc). Opening
// a directory, or a file in an encryption zone or erasure-coded, is an
// error.
func (f *FS) Open(p string) (storage.File, error) {
	p, err := clean("open", p)
	if err != nil {
		return nil, err
	}
	s, err := f.acquire()
	if err != nil {
		return nil, f.pathError("open", p, err)
	}
	defer s.mu.Unlock()
	r, err := s.c.Open(p)
	if err != nil {
		return nil, f.pathError("open", p, err)
	}
	info := r.Stat()
	if info.IsDir() {
		r.Close()
		return nil, f.pathError("open", p, errIsDir)
	}
	if err := unsupported(info); err != nil {
		r.Close()
		return nil, f.pathError("open", p, err)
	}
	file := newFile(f, s, r, p, info.Size())
	if err := file.readTail(); err != nil {
		file.r.Close()
		return nil, err
	}
	return file, nil
}

// Create creates a new file for writing, creating missing parent
// directories (mode 0755). It fails with an error matching fs.ErrExist if
// path exists, as a file or a directory. Writes are buffered
// (WriteBufferSize); the file is complete only once Close returns nil.
// A parent in an encryption zone or with erasure coding is refused.
func (f *FS) Create(p string) (io.WriteCloser, error) {
	p, err := clean("create", p)
	if err != nil {
		return nil, err
	}
	s, err := f.acquire()
	if err != nil {
		return nil, f.pathError("create", p, err)
	}
	defer s.mu.Unlock()
	dir := path.Dir(p)
	st, err := s.c.Stat(dir)
	err = mapError(err)
	switch {
	case err == nil && !st.IsDir():
		return nil, f.pathError("create", p, fmt.Errorf("parent %s: %w", dir, syscall.ENOTDIR))
	case err == nil:
		if err := unsupported(st); err != nil {
			return nil, f.pathError("create", p, fmt.Errorf("parent %s: %w", dir, err))
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := s.c.MkdirAll(dir, 0o755); err != nil {
			return nil, f.pathError("create", p, fmt.Errorf("make parent %s: %w", dir, mapError(err)))
		}
	default:
		return nil, f.pathError("create", p, fmt.Errorf("parent %s: %w", dir, err))
	}
	w, err := s.c.Create(p)
	if err != nil {
		return nil, f.pathError("create", p, err)
	}
	return newWriter(f, s, w, p), nil
}

// Rename renames oldpath to newpath (rename2, atomic on the namenode). A
// file at newpath is replaced. If newpath is an existing directory, empty
// or not, the call fails with an error matching fs.ErrExist and nothing
// changes: the library's Rename overwrites, and HDFS's overwriting rename
// would replace an empty directory by a directory, so the FS checks
// newpath first. Another client creating a directory at newpath between
// the check and the rename is not detected (as with Local); trawl's jobs
// rename into paths only they write. Renaming a file onto itself does
// nothing, as on a local disk.
func (f *FS) Rename(oldpath, newpath string) error {
	oldp, err := clean("rename", oldpath)
	if err != nil {
		return err
	}
	newp, err := clean("rename", newpath)
	if err != nil {
		return err
	}
	linkErr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: f.uri(oldp), New: f.uri(newp), Err: mapError(err)}
	}
	return f.with(func(c client) error {
		dst, err := c.Stat(newp)
		err = mapError(err)
		switch {
		case err == nil && dst.IsDir():
			return linkErr(fmt.Errorf("destination is an existing directory: %w", fs.ErrExist))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return linkErr(fmt.Errorf("stat destination: %w", err))
		case err == nil && oldp == newp:
			return nil // a file onto itself
		}
		if err := c.Rename(oldp, newp); err != nil {
			return linkErr(err)
		}
		return nil
	})
}

// RemoveAll removes path and anything below it, at once and for good
// (HDFS's trash is a feature of the hadoop command, not of the namenode).
// A missing path is not an error. Removing "/" is refused.
func (f *FS) RemoveAll(p string) error {
	p, err := clean("removeall", p)
	if err != nil {
		return err
	}
	if p == "/" {
		return f.pathError("removeall", p, fmt.Errorf("%w: refusing to remove the root directory", fs.ErrInvalid))
	}
	err = f.with(func(c client) error { return c.RemoveAll(p) })
	if err != nil && !errors.Is(mapError(err), fs.ErrNotExist) {
		return f.pathError("removeall", p, err)
	}
	return nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(p string) ([]fs.FileInfo, error) {
	p, err := clean("readdir", p)
	if err != nil {
		return nil, err
	}
	var infos []os.FileInfo
	err = f.with(func(c client) error {
		var err error
		infos, err = c.ReadDir(p)
		return err
	})
	if err != nil {
		return nil, f.pathError("readdir", p, err)
	}
	slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return infos, nil
}

// Stat describes a file or directory; a missing path gives an error
// matching fs.ErrNotExist. The result's Sys() is the namenode's
// *gohdfs.FileStatus.
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	p, err := clean("stat", p)
	if err != nil {
		return nil, err
	}
	var info os.FileInfo
	err = f.with(func(c client) error {
		var err error
		info, err = c.Stat(p)
		return err
	})
	if err != nil {
		return nil, f.pathError("stat", p, err)
	}
	return info, nil
}

// MkdirAll creates a directory (mode 0755, before the cluster's umask)
// and any missing parents. An existing directory is not an error; an
// existing file is.
func (f *FS) MkdirAll(p string) error {
	p, err := clean("mkdir", p)
	if err != nil {
		return err
	}
	err = f.with(func(c client) error { return c.MkdirAll(p, 0o755) })
	if err != nil {
		return f.pathError("mkdir", p, err)
	}
	return nil
}

// Chmod sets the permission bits of a file or directory. Jobs do not need
// it; the contract suite (storagetest) uses it to make a directory
// read-only.
func (f *FS) Chmod(p string, mode fs.FileMode) error {
	p, err := clean("chmod", p)
	if err != nil {
		return err
	}
	err = f.with(func(c client) error { return c.Chmod(p, mode.Perm()) })
	if err != nil {
		return f.pathError("chmod", p, err)
	}
	return nil
}

// Close closes the FS's connections, after the calls in progress end.
// Files still open fail afterwards with fs.ErrClosed; files being written
// and not closed stay incomplete (their lease expires on the namenode).
// Calls after the first return nil.
func (f *FS) Close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	for _, s := range f.slots {
		s.mu.Lock()
		if s.c != nil {
			if err := s.c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("client %d: %w", s.id, err))
			}
			s.c = nil
		}
		s.ready.Store(false)
		s.mu.Unlock()
	}
	if f.krb != nil {
		f.krb.Destroy()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("hdfs: close hdfs://%s: %w", f.st.authority, err)
	}
	return nil
}

// String names the FS: its URI, namenodes and user.
func (f *FS) String() string { return f.st.describe() }
