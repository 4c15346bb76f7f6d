package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/trawl/trawl/flock"
)

// Local is the FS of the local disk. Paths are operating-system paths;
// relative paths are relative to the process's working directory. The zero
// value is ready to use and is safe for concurrent use (it has no state).
type Local struct{}

// NewLocal returns the local file system.
func NewLocal() *Local { return &Local{} }

var _ FS = (*Local)(nil)

// localFile is an *os.File with the size it had when it was opened.
type localFile struct {
	*os.File
	size int64
}

// Size is the file's length in bytes when it was opened.
func (f *localFile) Size() int64 { return f.size }

// Open opens a regular file for reading. Opening a directory is an error.
func (l *Local) Open(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError: names the op and the path
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errIsDir}
	}
	return &localFile{File: f, size: st.Size()}, nil
}

var errIsDir = errors.New("is a directory")

// localWriter syncs the file to stable storage before closing it, so that a
// nil error from Close means the bytes are on disk.
type localWriter struct {
	f      *os.File
	closed bool
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

// Close fsyncs and closes the file. Calling Close twice returns an error
// the second time, as *os.File does.
func (w *localWriter) Close() error {
	if w.closed {
		return &fs.PathError{Op: "close", Path: w.f.Name(), Err: fs.ErrClosed}
	}
	w.closed = true
	serr := w.f.Sync()
	cerr := w.f.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// Create creates a new file for writing, creating missing parent
// directories. It fails with an error satisfying errors.Is(err,
// fs.ErrExist) if path exists (O_EXCL), as HDFS does. Close fsyncs the file;
// the file is complete only once Close returns nil.
func (l *Local) Create(path string) (io.WriteCloser, error) {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &localWriter{f: f}, nil
}

// Rename renames oldpath to newpath with os.Rename, which is atomic within
// one file system. A file at newpath is replaced; if newpath is an existing
// directory the call fails with an error satisfying errors.Is(err,
// fs.ErrExist) (os.Rename alone would replace an empty directory on Unix).
// The check and the rename are two steps, so a directory created at newpath
// between them by another process is not detected; trawl's jobs rename into
// paths only they write. After the rename the parent directories are synced
// so that the new name survives a crash.
func (l *Local) Rename(oldpath, newpath string) error {
	if st, err := os.Lstat(newpath); err == nil && st.IsDir() {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath,
			Err: fmt.Errorf("destination is an existing directory: %w", fs.ErrExist)}
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		return err // *os.LinkError: names both paths
	}
	oldDir, newDir := filepath.Dir(oldpath), filepath.Dir(newpath)
	if err := syncDir(newDir); err != nil {
		return fmt.Errorf("rename %s %s: %w", oldpath, newpath, err)
	}
	if oldDir != newDir {
		if err := syncDir(oldDir); err != nil {
			return fmt.Errorf("rename %s %s: %w", oldpath, newpath, err)
		}
	}
	return nil
}

// syncDir fsyncs a directory so that entries created or renamed in it are
// durable. File systems that do not support syncing a directory (EINVAL)
// are accepted silently.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// RemoveAll removes path and anything below it. A missing path is not an
// error.
func (l *Local) RemoveAll(path string) error {
	return os.RemoveAll(path)
}

// ReadDir lists a directory, sorted by name. Entries removed while the
// listing is read are left out.
func (l *Local) ReadDir(path string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(path) // sorted by file name
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("readdir %s: %w", path, err)
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// Stat describes a file or directory; a missing path gives an error for
// which errors.Is(err, fs.ErrNotExist) is true.
func (l *Local) Stat(path string) (fs.FileInfo, error) {
	return os.Stat(path)
}

// MkdirAll creates a directory (mode 0755 before umask) and any missing
// parents. An existing directory is not an error.
func (l *Local) MkdirAll(path string) error {
	return os.MkdirAll(path, 0o755)
}

var _ Locker = (*Local)(nil)

// TryLock takes an flock(2) lock on the file at path (created if missing),
// which the kernel releases when this process ends, even by SIGKILL. On
// systems without flock it fails with an error matching
// errors.ErrUnsupported, and callers fall back to exclusive creation.
func (l *Local) TryLock(path string) (HeldLock, error) {
	lk, err := flock.TryLock(path)
	switch {
	case errors.Is(err, flock.ErrHeld):
		return nil, fmt.Errorf("%w: %w", ErrLockHeld, err)
	case errors.Is(err, flock.ErrUnsupported):
		return nil, fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	case err != nil:
		return nil, err
	}
	return lk, nil
}
