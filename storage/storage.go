// Package storage is the file-system interface trawl's jobs read and write
// through, so the same job runs on a local disk or on HDFS.
//
// Paths are URIs: a plain path or a file:// URI names the local file system;
// hdfs://namenode:port/path names HDFS (added with the Hadoop runner). Open
// returns an io.ReaderAt with a size, which is what a Parquet reader needs.
// Create writes a new file; Rename is atomic for a file or a directory on
// both local disks and HDFS, which is how every job publishes its output.
//
// Local is the local-disk FS. Resolver maps URIs to an FS and a path (hdfs
// and other schemes through handlers the CLI registers; no global
// registry). WriteFileAtomic, ReadFile and Exists are helpers on any FS;
// Join, Dir and Base work on plain paths and URIs alike.
//
// # HDFS
//
// The interface is shaped so that github.com/colinmarc/hdfs/v2 (v2.4.0)
// implements it with thin wrappers; each FS method is backed by one
// *hdfs.Client method (signatures checked against that version):
//
//   - Open: Client.Open(name) (*FileReader, error); FileReader has Read,
//     ReadAt and Close, and Stat().Size() gives Size.
//   - Create: Client.Create(name) (*FileWriter, error), which fails with
//     os.ErrExist if the file exists (exclusive, like Local). HDFS's Create
//     does not create parents (CreateParent false), so the wrapper calls
//     Client.MkdirAll(dir, 0755) first. FileWriter.Close completes the file.
//   - Rename: Client.Rename(oldpath, newpath), a rename2 with overwrite;
//     the wrapper Stats newpath first and fails if it is a directory, as
//     Local does.
//   - RemoveAll: Client.RemoveAll(name); a missing path returns nil.
//   - ReadDir: Client.ReadDir(dirname) ([]os.FileInfo, error), sorted.
//   - Stat: Client.Stat(name) (os.FileInfo, error); a missing path gives
//     an *os.PathError wrapping os.ErrNotExist.
//   - MkdirAll: Client.MkdirAll(dirname, perm).
package storage

import (
	"errors"
	"io"
	"io/fs"
)

// File is an open file for random-access reading.
type File interface {
	io.ReaderAt
	io.Reader
	io.Closer
	// Size is the file's length in bytes.
	Size() int64
}

// FS is a file system. Paths passed to an FS are paths within it (not URIs);
// use Resolve to turn a URI into an FS and a path.
//
// Implementations must be safe for concurrent use.
type FS interface {
	// Open opens a file for reading.
	Open(path string) (File, error)
	// Create creates a new file for writing, creating missing parent
	// directories. It fails with an error satisfying
	// errors.Is(err, fs.ErrExist) if the file exists (as HDFS does), which
	// makes it usable for lock files. The file is complete only once Close
	// returns nil.
	Create(path string) (io.WriteCloser, error)
	// Rename renames oldpath to newpath atomically. If newpath exists and is
	// a file it is replaced; if it is a directory the call fails.
	Rename(oldpath, newpath string) error
	// RemoveAll removes path and anything below it. A missing path is not
	// an error.
	RemoveAll(path string) error
	// ReadDir lists a directory, sorted by name.
	ReadDir(path string) ([]fs.FileInfo, error)
	// Stat describes a file or directory; a missing path gives an error
	// for which errors.Is(err, fs.ErrNotExist) is true.
	Stat(path string) (fs.FileInfo, error)
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(path string) error
}

// Locker is implemented by file systems that can hold an exclusive lock on
// a file for as long as the holding process lives, released by the system
// when the process ends however it ends (Local: flock(2)). Lock files on
// such a file system need no stale-lock handling; on others (HDFS) a lock
// is a file created exclusively, judged by its age.
type Locker interface {
	// TryLock creates the file at path if it is missing and locks it
	// without waiting. If another holder has it the error matches
	// ErrLockHeld.
	TryLock(path string) (HeldLock, error)
}

// HeldLock is a lock taken with Locker.TryLock.
type HeldLock interface {
	// Read returns the lock file's content; Write replaces it (who holds
	// the lock, for people and tools).
	Read() ([]byte, error)
	Write(data []byte) error
	// Remove removes the lock file and releases the lock.
	Remove() error
}

// ErrLockHeld is matched by the error of Locker.TryLock when the lock is
// held by another holder.
var ErrLockHeld = errors.New("lock is held")
