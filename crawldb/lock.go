package crawldb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/storage"
)

// LockFile is the name of the lock file in a CrawlDB directory, held while
// a job writes the CrawlDB (Nutch's crawldb/.locked).
const LockFile = ".locked"

// DefaultLockMaxAge is the age past which a lock counts as stale even when
// its holder cannot be checked (another host).
const DefaultLockMaxAge = 24 * time.Hour

// LockInfo is the content of a lock file, as JSON.
type LockInfo struct {
	// Holder names the job holding the lock, e.g. "updatedb".
	Holder string `json:"holder"`
	// Host and PID identify the holding process.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Start is when the lock was taken (UTC).
	Start time.Time `json:"start"`
	// Command is the holding process's command line (at most 512 bytes).
	Command string `json:"command,omitempty"`
}

// LockOptions configures LockWith. The zero value is usable.
type LockOptions struct {
	// MaxAge is the age past which a lock is stale (on a file system
	// without OS locks); 0 means DefaultLockMaxAge (see NoMaxAge). It
	// must not be negative.
	MaxAge time.Duration
	// NoMaxAge turns the age test off: a lock is stale only when its
	// holder is known dead (the lock.maxAge setting 0). MaxAge must then
	// be 0.
	NoMaxAge bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Host and PID identify this process; empty and 0 mean os.Hostname
	// and os.Getpid.
	Host string
	PID  int
	// Logger receives the warning when a lock is broken; nil means
	// slog.Default.
	Logger *slog.Logger
	// What names the locked thing in errors ("crawldb", "segment",
	// "crawl directory"); empty means "crawldb".
	What string
}

// LockedError is returned when the CrawlDB is locked by someone else.
// errors.Is(err, ErrLocked) holds for it.
type LockedError struct {
	// What names the locked thing ("crawldb", "segment", ...).
	What string
	// Path is the lock file.
	Path string
	// Info is the lock's content; Unreadable says why it could not be
	// read (a writer that crashed between creating and writing it).
	Info       LockInfo
	Unreadable string
	// Age is how long the lock has been held.
	Age time.Duration
	// Stale says the holder is known dead or the lock is older than the
	// maximum age; StaleReason says which.
	Stale       bool
	StaleReason string
	// Alive says the holder runs on this host and is alive: such a lock
	// cannot be broken with force.
	Alive bool
}

// ErrLocked is matched by every *LockedError.
var ErrLocked = errors.New("locked")

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Error names the holder, host, pid and age, and says what to do.
func (e *LockedError) Error() string {
	var b bytes.Buffer
	what := e.What
	if what == "" {
		what = "crawldb"
	}
	fmt.Fprintf(&b, "%s %s is locked", what, path.Dir(e.Path))
	if e.Unreadable != "" {
		fmt.Fprintf(&b, " (lock file %s unreadable: %s; created %s ago)", e.Path, e.Unreadable, e.Age.Round(time.Second))
	} else {
		fmt.Fprintf(&b, " by %q (host %s, pid %d, since %s, %s ago)", e.Info.Holder, e.Info.Host, e.Info.PID,
			e.Info.Start.UTC().Format(time.RFC3339), e.Age.Round(time.Second))
	}
	switch {
	case e.Stale:
		fmt.Fprintf(&b, "; the lock is stale (%s): rerun with --force to break it", e.StaleReason)
	case e.Alive:
		fmt.Fprintf(&b, "; that process is running: wait for it to finish or stop it")
	default:
		fmt.Fprintf(&b, "; if no such job is running, rerun with --force to break the lock, or remove %s", e.Path)
	}
	return b.String()
}

// LockHandle is a held CrawlDB lock.
type LockHandle struct {
	fsys storage.FS
	path string
	info LockInfo
	raw  []byte
	held storage.HeldLock // the OS lock, on a storage.Locker
	once sync.Once
	err  error
}

// Info returns the lock's content.
func (h *LockHandle) Info() LockInfo { return h.info }

// Path returns the lock file's path.
func (h *LockHandle) Path() string { return h.path }

// Unlock removes the lock file, if it is still this handle's (a lock
// broken and retaken by another process is left alone, and reported).
// Calls after the first return the first call's result.
func (h *LockHandle) Unlock() error {
	h.once.Do(func() {
		if h.held != nil {
			if err := h.held.Remove(); err != nil {
				h.err = fmt.Errorf("unlock: %w", err)
			}
			return
		}
		cur, err := storage.ReadFile(h.fsys, h.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				h.err = fmt.Errorf("crawldb: unlock: lock %s was removed by someone else", h.path)
				return
			}
			h.err = fmt.Errorf("crawldb: unlock: %w", err)
			return
		}
		if !bytes.Equal(cur, h.raw) {
			h.err = fmt.Errorf("crawldb: unlock: lock %s was broken and is now held by another process: %s", h.path, bytes.TrimSpace(cur))
			return
		}
		if err := h.fsys.RemoveAll(h.path); err != nil {
			h.err = fmt.Errorf("crawldb: unlock %s: %w", h.path, err)
		}
	})
	return h.err
}

// Lock takes the lock of the CrawlDB at crawldbDir for the job holder,
// with the default LockOptions. See LockWith.
func Lock(fsys storage.FS, crawldbDir, holder string, force bool) (*LockHandle, error) {
	return LockWith(fsys, crawldbDir, holder, force, LockOptions{})
}

// LockWith takes the lock of the CrawlDB at crawldbDir for the job holder:
// the file crawldbDir/.locked, holding LockInfo as JSON (who holds it:
// the job, host, pid, start time and command line). It works on any
// directory (segments and the crawl directory use it too; opts.What names
// the thing in errors). If the lock is held it fails at once with a
// *LockedError.
//
// On a file system that can lock files (storage.Locker: the local disk,
// with flock(2)), the lock is an OS lock held for as long as the process
// runs: a holder killed with SIGKILL frees it, and the next job takes it
// with no --force (it logs whose lock it took over). force plays no part
// there: a held lock belongs to a live process and is never broken.
//
// Elsewhere (HDFS) the lock is the file itself, created exclusively. It
// is stale when its holder ran on this host and is no longer running, or
// when it is older than the maximum age (a lease). With force a lock is
// broken (a warning is logged) and taken, unless its holder is a process
// alive on this host and the lock is not too old: that is refused even
// with force. A holder on another host cannot be checked, so force breaks
// its lock.
func LockWith(fsys storage.FS, crawldbDir, holder string, force bool, opts LockOptions) (*LockHandle, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	lockPath := path.Join(crawldbDir, LockFile)
	info, raw, err := newLockInfo(holder, o)
	if err != nil {
		return nil, err
	}
	if lk, ok := fsys.(storage.Locker); ok {
		h, err := osLock(lk, fsys, lockPath, info, raw, o.Now(), o.What, o.Logger)
		if !errors.Is(err, errors.ErrUnsupported) {
			return h, err
		}
	}
	return fileLock(fsys, lockPath, info, raw, force, o)
}

// withDefaults returns o with its zero fields set: MaxAge (left 0 with
// NoMaxAge), Now, Host, PID and Logger.
func (o LockOptions) withDefaults() (LockOptions, error) {
	switch {
	case o.MaxAge < 0:
		return o, fmt.Errorf("crawldb: lock: negative maximum age %v", o.MaxAge)
	case o.NoMaxAge && o.MaxAge != 0:
		return o, fmt.Errorf("crawldb: lock: a maximum age of %v and none at once", o.MaxAge)
	case o.MaxAge == 0 && !o.NoMaxAge:
		o.MaxAge = DefaultLockMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("crawldb: lock: hostname: %w", err)
		}
		o.Host = h
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// newLockInfo returns the content of a lock taken now for holder by the
// process o names, and its JSON line.
func newLockInfo(holder string, o LockOptions) (LockInfo, []byte, error) {
	cmdline := strings.Join(os.Args, " ")
	if len(cmdline) > 512 {
		cmdline = cmdline[:512]
	}
	info := LockInfo{Holder: holder, Host: o.Host, PID: o.PID, Start: o.Now().UTC().Truncate(time.Millisecond), Command: cmdline}
	raw, err := json.Marshal(info)
	if err != nil {
		return LockInfo{}, nil, fmt.Errorf("lock: %w", err)
	}
	return info, append(raw, '\n'), nil
}

// fileLock takes the lock as a file created exclusively, on a file system
// without OS locks (o has its defaults set). A lock held already is judged
// (inspectLock) and, with force, broken unless its holder is alive and
// the lock not stale. A lock is broken at most once; a lock released
// while it is being inspected is retried a few times.
func fileLock(fsys storage.FS, lockPath string, info LockInfo, raw []byte, force bool, o LockOptions) (*LockHandle, error) {
	broke := false
	for attempt := 0; ; attempt++ {
		err := createLock(fsys, lockPath, raw)
		if err == nil {
			return &LockHandle{fsys: fsys, path: lockPath, info: info, raw: raw}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("crawldb: lock %s: %w", lockPath, err)
		}
		held, heldRaw, err := inspectLock(fsys, lockPath, o.Now(), o.MaxAge, o.Host)
		if held != nil {
			held.What = o.What
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
				continue // released meanwhile
			}
			return nil, err
		}
		if !force || held.Alive && !held.Stale || broke {
			return nil, held
		}
		if err := breakLock(fsys, lockPath, held, heldRaw, o.Logger); err != nil {
			return nil, err
		}
		broke = true
	}
}

// breakLock removes the lock at lockPath, judged as held (its content
// heldRaw), if it is still that lock, and logs a warning.
func breakLock(fsys storage.FS, lockPath string, held *LockedError, heldRaw []byte, logger *slog.Logger) error {
	cur, err := storage.ReadFile(fsys, lockPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("crawldb: break lock: %w", err)
	}
	if err == nil && !bytes.Equal(cur, heldRaw) {
		return fmt.Errorf("crawldb: %s changed while breaking it (another process took it); not breaking", lockPath)
	}
	logger.Warn("crawldb: breaking lock", "path", lockPath, "lock", held.Error())
	if err := fsys.RemoveAll(lockPath); err != nil {
		return fmt.Errorf("crawldb: break lock %s: %w", lockPath, err)
	}
	return nil
}

// osLock takes the lock with the file system's OS lock.
func osLock(lk storage.Locker, fsys storage.FS, lockPath string, info LockInfo, raw []byte, now time.Time, what string, logger *slog.Logger) (*LockHandle, error) {
	if err := fsys.MkdirAll(path.Dir(lockPath)); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	held, err := lk.TryLock(lockPath)
	if errors.Is(err, storage.ErrLockHeld) {
		e := &LockedError{What: what, Path: lockPath, Alive: true}
		start := now
		if st, err := fsys.Stat(lockPath); err == nil {
			start = st.ModTime()
		}
		data, rerr := readSmall(fsys, lockPath)
		switch {
		case rerr != nil:
			e.Unreadable = rerr.Error()
		case len(bytes.TrimSpace(data)) == 0:
			e.Unreadable = "empty (its holder is writing it)"
		default:
			if err := json.Unmarshal(data, &e.Info); err != nil {
				e.Unreadable = fmt.Sprintf("not lock JSON (%d bytes): %v", len(data), err)
			} else if !e.Info.Start.IsZero() {
				start = e.Info.Start
			}
		}
		e.Age = now.Sub(start)
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if old, err := held.Read(); err == nil && len(bytes.TrimSpace(old)) > 0 {
		logger.Info("taking over a lock its holder left behind when it ended", "path", lockPath,
			"previous_holder", string(bytes.TrimSpace(old)))
	}
	if err := held.Write(raw); err != nil {
		_ = held.Remove()
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	return &LockHandle{fsys: fsys, path: lockPath, info: info, raw: raw, held: held}, nil
}

// createLock creates the lock file exclusively and writes raw into it. If
// writing fails the file is removed.
func createLock(fsys storage.FS, lockPath string, raw []byte) error {
	w, err := fsys.Create(lockPath)
	if err != nil {
		return err
	}
	_, werr := w.Write(raw)
	cerr := w.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = fsys.RemoveAll(lockPath)
		return fmt.Errorf("write: %w", werr)
	}
	return nil
}

// inspectLock reads an existing lock and judges it.
func inspectLock(fsys storage.FS, lockPath string, now time.Time, maxAge time.Duration, host string) (*LockedError, []byte, error) {
	st, err := fsys.Stat(lockPath)
	if err != nil {
		return nil, nil, fmt.Errorf("crawldb: lock %s: %w", lockPath, err)
	}
	raw, err := readSmall(fsys, lockPath)
	if err != nil {
		return nil, nil, fmt.Errorf("crawldb: lock %s: %w", lockPath, err)
	}
	e := &LockedError{Path: lockPath}
	start := st.ModTime()
	if err := json.Unmarshal(raw, &e.Info); err != nil {
		e.Unreadable = fmt.Sprintf("not lock JSON (%d bytes): %v", len(raw), err)
	} else if !e.Info.Start.IsZero() {
		start = e.Info.Start
	}
	e.Age = now.Sub(start)
	if e.Unreadable == "" && e.Info.Host == host && e.Info.PID > 0 {
		switch processAlive(e.Info.PID) {
		case aliveNo:
			e.Stale, e.StaleReason = true, fmt.Sprintf("process %d is not running on %s", e.Info.PID, host)
		case aliveYes:
			e.Alive = true
		}
	}
	if !e.Stale && maxAge > 0 && e.Age > maxAge {
		e.Stale, e.StaleReason = true, fmt.Sprintf("older than %s", maxAge)
	}
	return e, raw, nil
}

// readSmall reads a lock file, refusing anything implausibly large.
func readSmall(fsys storage.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}
