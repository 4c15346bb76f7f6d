// Package flock takes exclusive advisory locks on local files with
// flock(2). The kernel releases such a lock when its holder's file
// descriptor closes, so a process killed with SIGKILL (or a crashed
// machine) never leaves a lock behind: the next process simply takes it.
// This is what makes trawl's locks on local disk need no --force after a
// crash, and what tells a scratch directory of a dead job from one of a
// live job.
//
// A lock file is created by the first TryLock and may be removed by the
// holder when it unlocks (Lock.Remove). TryLock checks, after locking,
// that the path still names the locked file, so a holder that removes the
// file while another process waits cannot hand out two locks on two
// different files of the same name.
//
// The locks are advisory: they exclude only processes that take them. On
// network file systems flock(2) may be emulated or local to one client;
// trawl uses these locks on local disks only.
package flock

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrHeld is matched (errors.Is) by the error of TryLock when another
// open file (another process, or another TryLock of this process) holds
// the lock.
var ErrHeld = errors.New("lock is held")

// ErrUnsupported is matched by the error of TryLock on platforms without
// flock(2).
var ErrUnsupported = errors.New("file locks are not supported on this platform")

// Lock is a held lock on a local file.
type Lock struct {
	f    *os.File
	path string
}

// TryLock creates path if it does not exist (mode 0644, parents are not
// created), opens it and takes an exclusive lock on it without waiting.
// If the lock is held it returns an error matching ErrHeld at once.
func TryLock(path string) (*Lock, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		// The holder before us may have removed (or replaced) the file
		// between our open and our lock: then we hold a lock on a file
		// nobody else can find, so try again on the current one.
		same, err := sameFile(f, path)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		if same {
			return &Lock{f: f, path: path}, nil
		}
		f.Close()
		if attempt == 9 {
			return nil, fmt.Errorf("flock %s: the file keeps being replaced: %w", path, ErrHeld)
		}
	}
}

func sameFile(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// Read returns the lock file's content.
func (l *Lock) Read() ([]byte, error) {
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("flock %s: %w", l.path, err)
	}
	data, err := io.ReadAll(io.LimitReader(l.f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("flock %s: %w", l.path, err)
	}
	return data, nil
}

// Write replaces the lock file's content with data (who holds the lock,
// for people and for tools that cannot test the lock) and syncs it.
func (l *Lock) Write(data []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("flock %s: %w", l.path, err)
	}
	if _, err := l.f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("flock %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("flock %s: %w", l.path, err)
	}
	return nil
}

// Unlock releases the lock and leaves the file in place.
func (l *Lock) Unlock() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("flock %s: unlock: %w", l.path, err)
	}
	return nil
}

// Remove removes the lock file, then releases the lock. Removing first,
// while the lock is held, means no other process can take the lock on the
// removed file and believe it holds the lock of the path (TryLock checks
// the path after locking).
func (l *Lock) Remove() error {
	rerr := os.Remove(l.path)
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	cerr := l.Unlock()
	if rerr != nil {
		return fmt.Errorf("flock %s: remove: %w", l.path, rerr)
	}
	return cerr
}
