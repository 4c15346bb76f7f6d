// Package scratch makes scratch directories whose owner is known, so that a
// job removes those left behind by jobs that died.
//
// A job's spill files live in a directory it removes when it ends; a job
// killed with SIGKILL (or by the OOM killer, or a crash of the machine)
// never gets to, and its directory would stay forever. Here every scratch
// directory holds a file owner.lock on which its owner holds a flock(2)
// lock (package flock) for as long as it lives; the kernel releases that
// lock when the owner dies, however it dies. New first sweeps: it removes
// every scratch directory whose lock nobody holds, then makes the caller's.
// So each job cleans up after its killed predecessors, and a live job's
// directory is never touched.
//
// # Layout
//
// Under a base directory (a job's temp dir; "" means os.TempDir()):
//
//	BASE/trawl-scratch-UID/                   one per user, mode 0700
//	BASE/trawl-scratch-UID/JOB-HOST-PID-RAND/ one per New, mode 0700
//	BASE/trawl-scratch-UID/JOB-HOST-PID-RAND/owner.lock
//
// owner.lock holds, for people, JSON naming the owner: job, host, pid,
// start time and command line.
//
// The per-user directory is what makes a /tmp used by several users work:
// only its owner can create, read or remove anything in it (spill files
// hold crawl data), another user can neither plant a directory for a sweep
// to remove nor remove a user's live files, and a sweep only ever meets
// its own user's directories, whose locks it can test (a lock file must be
// opened for writing to test its lock). New and Sweep refuse a per-user
// directory that is a symbolic link or belongs to someone else, and narrow
// its mode to 0700 if it is wider. A user's dead directories are
// thus removed by that user's next job, and by no one else's. On platforms
// without user IDs the directory is BASE/trawl-scratch.
//
// A directory without owner.lock is one whose owner died between making it
// and locking it: a sweep removes it once it is five minutes old.
//
// # Without locks
//
// flock(2) exists on Unix only, and only on local file systems is it
// reliable; BASE must be local. Where locks are not available (other
// platforms, or a file system that refuses flock), New still works and
// Sweep removes a directory only when nothing directly in it has changed
// for 24 hours (on platforms without flock, this holds for directories
// without owner.lock too).
package scratch

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawl/trawl/flock"
)

// LockName is the name of the owner's lock file in a scratch directory.
const LockName = "owner.lock"

const (
	// rootPrefix starts the name of the per-user directory.
	rootPrefix = "trawl-scratch"
	// orphanAge is how old a directory without a lock file must be to be
	// removed: New locks within microseconds of making the directory.
	orphanAge = 5 * time.Minute
	// unlockedAge is how long a directory whose lock cannot be tested
	// must have been left unchanged to be removed.
	unlockedAge = 24 * time.Hour
	// maxNamePart bounds the job and host parts of a directory name.
	maxNamePart = 48
)

// Dir is a scratch directory owned by this process. Its owner.lock stays
// locked until Close. A Dir is not safe for concurrent Close.
type Dir struct {
	path   string
	lock   *flock.Lock // nil where locks are not available
	closed bool
}

// owner is the JSON content of owner.lock.
type owner struct {
	Job     string    `json:"job"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Start   time.Time `json:"start"`
	Command []string  `json:"command"`
}

// Option configures New.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger sets the logger of New's sweep (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// New sweeps base (see Sweep; a failed sweep is logged, not returned), then
// makes a scratch directory for job under base's per-user directory
// (creating that one if needed) and locks its owner.lock. base "" means
// os.TempDir(); base must exist. The caller must Close the directory.
func New(base, job string, opts ...Option) (*Dir, error) {
	o := options{log: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	root, err := openRoot(base, true)
	if err != nil {
		return nil, fmt.Errorf("scratch dir for %s: %w", job, err)
	}
	if _, err := sweepRoot(root, o.log); err != nil {
		o.log.Warn("scratch: sweep failed", "dir", root, "err", err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	info := owner{Job: job, Host: host, PID: os.Getpid(), Start: time.Now(), Command: os.Args}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("scratch dir for %s: %w", job, err)
	}
	data = append(data, '\n')
	prefix := fmt.Sprintf("%s-%s-%d-", namePart(job, "job"), namePart(host, "host"), info.PID)
	for attempt := 0; ; attempt++ {
		d, err := makeDir(root, prefix, data)
		if err == nil {
			return d, nil
		}
		// Only a clash of random names is worth another try.
		if attempt == 4 || !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("scratch dir for %s: %w", job, err)
		}
	}
}

// makeDir makes root/prefix+RANDOM and locks its owner.lock.
//
// The lock is taken on a file of another name, which is renamed to
// owner.lock once locked and written: a sweep never sees owner.lock
// unlocked while its owner lives (testing a lock takes it for an instant,
// and would make the owner's own TryLock fail), nor empty. A directory
// without owner.lock is not swept until it is orphanAge old.
func makeDir(root, prefix string, info []byte) (*Dir, error) {
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("random name: %w", err)
	}
	p := filepath.Join(root, prefix+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(p, 0o700); err != nil {
		return nil, err
	}
	lp := filepath.Join(p, LockName)
	l, err := flock.TryLock(lp + ".new")
	if lockUnsupported(err) {
		if err := os.WriteFile(lp, info, 0o600); err != nil {
			os.RemoveAll(p)
			return nil, err
		}
		os.Remove(lp + ".new") // TryLock created it before failing
		return &Dir{path: p}, nil
	}
	if err == nil {
		err = l.Write(info)
		if err == nil {
			err = os.Rename(lp+".new", lp)
		}
		if err != nil {
			l.Unlock()
		}
	}
	if err != nil {
		os.RemoveAll(p)
		return nil, err
	}
	return &Dir{path: p, lock: l}, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Close removes the directory and everything in it, then releases its
// lock (so no sweep can remove it while this process still uses it). Later
// calls do nothing.
func (d *Dir) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	err := removeAll(d.path)
	if err != nil {
		err = fmt.Errorf("scratch: %w", err)
	}
	if d.lock != nil {
		if uerr := d.lock.Unlock(); err == nil && uerr != nil {
			err = fmt.Errorf("scratch: %w", uerr)
		}
	}
	return err
}

// Sweep removes every scratch directory under base's per-user directory
// (base "" means os.TempDir()) whose owner is dead: whose owner.lock
// nobody holds, or that has no owner.lock and has not changed for five
// minutes. It never removes a directory whose lock is held. Where locks
// cannot be tested, it removes only directories left unchanged for 24
// hours.
// Each removal is logged at Info with the owner's information and the
// bytes freed (log nil means slog.Default()).
//
// It returns the paths removed, and the errors met (joined) on the way; an
// error on one directory does not stop the sweep of the others. A missing
// per-user directory is not an error.
func Sweep(base string, log *slog.Logger) (removed []string, err error) {
	if log == nil {
		log = slog.Default()
	}
	root, err := openRoot(base, false)
	if err != nil {
		return nil, fmt.Errorf("scratch sweep: %w", err)
	}
	if root == "" {
		return nil, nil
	}
	return sweepRoot(root, log)
}

// openRoot returns base's per-user directory after checking it is safe to
// use, creating it if create is set. Without create, a missing directory
// gives "".
func openRoot(base string, create bool) (string, error) {
	if base == "" {
		base = os.TempDir()
	}
	root := filepath.Join(base, rootName())
	if create {
		if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	fi, err := os.Lstat(root)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory (%v)", root, fi.Mode().Type())
	}
	if err := checkOwner(root, fi); err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(root, 0o700); err != nil {
			return "", err
		}
	}
	return root, nil
}

// sweepRoot removes the dead directories of root.
func sweepRoot(root string, log *slog.Logger) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("scratch sweep: %w", err)
	}
	var removed []string
	var errs []error
	now := time.Now()
	for _, e := range ents {
		if !e.IsDir() { // symbolic links included: never followed
			continue
		}
		p := filepath.Join(root, e.Name())
		ok, err := sweepDir(p, now, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("scratch sweep: %s: %w", p, err))
		}
		if ok {
			removed = append(removed, p)
		}
	}
	return removed, errors.Join(errs...)
}

// sweepDir removes the directory p if its owner is dead, and reports
// whether it did.
func sweepDir(p string, now time.Time, log *slog.Logger) (bool, error) {
	lp := filepath.Join(p, LockName)
	var info []byte
	var why string
	if _, err := os.Lstat(lp); errors.Is(err, fs.ErrNotExist) {
		// Locks are taken right after the directory is made; only an
		// owner that died in between leaves none.
		limit := orphanAge
		if !locksAvailable {
			limit = unlockedAge
		}
		age, err := unchangedFor(p, now)
		if err != nil || age < limit {
			return false, ignoreNotExist(err)
		}
		why = fmt.Sprintf("no %s, unchanged for %s", LockName, age.Round(time.Second))
	} else if err != nil {
		return false, ignoreNotExist(err)
	} else {
		// Taking the lock, rather than testing it, lets only one sweep
		// remove a directory when several run at once.
		l, err := flock.TryLock(lp)
		switch {
		case err == nil:
			defer l.Unlock()
			info, _ = l.Read()
			why = LockName + " not held"
		case errors.Is(err, flock.ErrHeld):
			return false, nil // the owner is alive
		case lockUnsupported(err):
			age, err := unchangedFor(p, now)
			if err != nil || age < unlockedAge {
				return false, ignoreNotExist(err)
			}
			info, _ = os.ReadFile(lp)
			why = fmt.Sprintf("locks unavailable, unchanged for %s", age.Round(time.Second))
		case errors.Is(err, fs.ErrNotExist):
			return false, nil // removed meanwhile (by its owner or a sweep)
		default:
			return false, err
		}
	}
	size := diskUsage(p)
	if err := removeAll(p); err != nil {
		return false, err
	}
	attrs := []any{"dir", p, "reason", why, "bytes", size}
	var o owner
	if len(info) > 0 && json.Unmarshal(info, &o) == nil {
		attrs = append(attrs, "job", o.Job, "host", o.Host, "pid", o.PID,
			"started", o.Start.Format(time.RFC3339), "command", strings.Join(o.Command, " "))
	}
	log.Info("scratch: removed the directory of a dead job", attrs...)
	return true, nil
}

// removeAll is os.RemoveAll, tried again if it fails: a sweep testing a
// lock may recreate owner.lock in a directory as it is being removed.
func removeAll(p string) error {
	var err error
	for range 3 {
		if err = os.RemoveAll(p); err == nil {
			return nil
		}
	}
	return err
}

// unchangedFor is the time since the directory p or an entry directly in
// it last changed.
func unchangedFor(p string, now time.Time) (time.Duration, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	latest := fi.ModTime()
	ents, err := os.ReadDir(p)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if ei, err := e.Info(); err == nil && ei.ModTime().After(latest) {
			latest = ei.ModTime()
		}
	}
	return now.Sub(latest), nil
}

// diskUsage is the size of the regular files under p (best effort).
func diskUsage(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// namePart makes s usable in a directory name: bytes other than ASCII
// letters, digits, '.', '_' and '-' become '_', and it is cut to
// maxNamePart bytes; empty gives def.
func namePart(s, def string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > maxNamePart {
		b = b[:maxNamePart]
	}
	if len(b) == 0 || b[0] == '.' {
		return def + string(b)
	}
	return string(b)
}
