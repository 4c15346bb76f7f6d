package crawldb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/storage"
)

func writeLock(t *testing.T, dir string, info LockInfo) {
	t.Helper()
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LockFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileLocks hides the local disk's OS locks, so that a test sees the lock
// files of a file system without them (HDFS).
type fileLocks struct{ storage.FS }

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestLockExclusive(t *testing.T) {
	fsys := storage.NewLocal()
	dir := filepath.Join(t.TempDir(), "crawldb")
	h, err := Lock(fsys, dir, "updatedb", false)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if info := h.Info(); info.Holder != "updatedb" || info.Host != host || info.PID != os.Getpid() || info.Start.IsZero() {
		t.Errorf("info %+v", info)
	}
	raw, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk LockInfo
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk.Holder != "updatedb" {
		t.Errorf("lock file %q: %v", raw, err)
	}

	// A second writer fails at once, naming holder, host, pid and age;
	// force does not break a lock whose holder is alive on this host.
	for _, force := range []bool{false, true} {
		_, err = Lock(fsys, dir, "generate", force)
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
			t.Fatalf("force=%v: second lock: %v", force, err)
		}
		msg := err.Error()
		for _, want := range []string{`"updatedb"`, host, fmt.Sprint(os.Getpid()), "ago", "running"} {
			if !strings.Contains(msg, want) {
				t.Errorf("force=%v: message %q lacks %q", force, msg, want)
			}
		}
		if le.Stale || !le.Alive {
			t.Errorf("force=%v: stale=%v alive=%v", force, le.Stale, le.Alive)
		}
	}

	if err := h.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := h.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Unlock: %v", err)
	}
	h2, err := Lock(fsys, dir, "generate", false)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	h2.Unlock()
}

func TestLockStaleDeadProcess(t *testing.T) {
	fsys := fileLocks{storage.NewLocal()} // the lock-file semantics of HDFS
	dir := t.TempDir()
	host, _ := os.Hostname()
	pid := deadPID(t)
	writeLock(t, dir, LockInfo{Holder: "inject", Host: host, PID: pid, Start: time.Now().Add(-time.Minute)})

	_, err := Lock(fsys, dir, "updatedb", false)
	var le *LockedError
	if !errors.As(err, &le) || !le.Stale || !strings.Contains(err.Error(), "stale") ||
		!strings.Contains(err.Error(), fmt.Sprintf("process %d is not running", pid)) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("stale lock: %v", err)
	}

	var logs bytes.Buffer
	h, err := LockWith(fsys, dir, "updatedb", true, LockOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("force: %v", err)
	}
	defer h.Unlock()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "breaking lock") {
		t.Errorf("no warning logged: %q", logs.String())
	}
	if h.Info().Holder != "updatedb" {
		t.Errorf("holder %q", h.Info().Holder)
	}
}

func TestLockOtherHostAndAge(t *testing.T) {
	fsys := fileLocks{storage.NewLocal()} // the lock-file semantics of HDFS
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	opts := LockOptions{Now: func() time.Time { return now }, MaxAge: 2 * time.Hour, Host: "here", PID: 42}

	// Another host, one hour old: not known stale; force breaks it anyway
	// since it cannot be checked.
	dir := t.TempDir()
	writeLock(t, dir, LockInfo{Holder: "generate", Host: "elsewhere", PID: 7, Start: now.Add(-time.Hour)})
	_, err := LockWith(fsys, dir, "updatedb", false, opts)
	var le *LockedError
	if !errors.As(err, &le) || le.Stale || le.Alive || le.Age != time.Hour || !strings.Contains(err.Error(), "elsewhere") {
		t.Fatalf("young remote lock: %v (%+v)", err, le)
	}
	h, err := LockWith(fsys, dir, "updatedb", true, opts)
	if err != nil {
		t.Fatalf("force remote: %v", err)
	}
	if h.Info().Host != "here" || h.Info().PID != 42 || !h.Info().Start.Equal(now) {
		t.Errorf("info %+v", h.Info())
	}
	h.Unlock()

	// Three hours old: stale by age.
	writeLock(t, dir, LockInfo{Holder: "generate", Host: "elsewhere", PID: 7, Start: now.Add(-3 * time.Hour)})
	_, err = LockWith(fsys, dir, "updatedb", false, opts)
	if !errors.As(err, &le) || !le.Stale || !strings.Contains(err.Error(), "older than 2h0m0s") {
		t.Fatalf("old remote lock: %v", err)
	}

	// Our own live pid but too old: stale (pid reuse), force breaks it.
	writeLock(t, dir, LockInfo{Holder: "generate", Host: "here", PID: os.Getpid(), Start: now.Add(-3 * time.Hour)})
	h, err = LockWith(fsys, dir, "updatedb", true, LockOptions{Now: opts.Now, MaxAge: opts.MaxAge, Host: "here", PID: 43, Logger: slog.New(slog.NewTextHandler(new(bytes.Buffer), nil))})
	if err != nil {
		t.Fatalf("force old live-pid lock: %v", err)
	}
	h.Unlock()
}

func TestLockUnreadable(t *testing.T) {
	fsys := fileLocks{storage.NewLocal()} // the lock-file semantics of HDFS
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, LockFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Lock(fsys, dir, "updatedb", false)
	var le *LockedError
	if !errors.As(err, &le) || le.Unreadable == "" || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("empty lock file: %v", err)
	}
	h, err := LockWith(fsys, dir, "updatedb", true, LockOptions{Logger: slog.New(slog.NewTextHandler(new(bytes.Buffer), nil))})
	if err != nil {
		t.Fatalf("force: %v", err)
	}
	h.Unlock()
}

func TestUnlockBrokenLock(t *testing.T) {
	fsys := fileLocks{storage.NewLocal()} // the lock-file semantics of HDFS
	dir := t.TempDir()
	h, err := LockWith(fsys, dir, "updatedb", false, LockOptions{Host: "a", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Someone breaks it and takes it.
	writeLock(t, dir, LockInfo{Holder: "inject", Host: "b", PID: 2, Start: time.Now()})
	if err := h.Unlock(); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("Unlock of a retaken lock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("the other process's lock was removed: %v", err)
	}
}

func TestLockConcurrent(t *testing.T) {
	for name, fsys := range map[string]storage.FS{"os-locks": storage.NewLocal(), "lock-files": fileLocks{storage.NewLocal()}} {
		t.Run(name, func(t *testing.T) { testLockConcurrent(t, fsys) })
	}
}

func testLockConcurrent(t *testing.T, fsys storage.FS) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	handles := make(chan *LockHandle, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h, err := Lock(fsys, dir, fmt.Sprintf("job%d", i), false)
			if err != nil {
				errs <- err
				return
			}
			handles <- h
		}(i)
	}
	wg.Wait()
	close(handles)
	close(errs)
	if len(handles) != 1 {
		t.Fatalf("%d goroutines hold the lock, want 1", len(handles))
	}
	for err := range errs {
		if !errors.Is(err, ErrLocked) {
			t.Errorf("unexpected error: %v", err)
		}
	}
	(<-handles).Unlock()
}

// TestLockOSLock checks the local disk's OS lock: a lock file left by a
// dead holder is taken over without force (and the take-over is logged
// with the old holder), a held lock is refused even with force, naming
// its holder, and unlocking removes the file.
func TestLockOSLock(t *testing.T) {
	fsys := storage.NewLocal()
	dir := filepath.Join(t.TempDir(), "crawldb")
	writeLock(t, dir, LockInfo{Holder: "fetch", Host: "gone-host", PID: 1, Start: time.Now().Add(-time.Minute)})
	var logs bytes.Buffer
	h, err := LockWith(fsys, dir, "updatedb", false, LockOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("a lock file without a live holder: %v", err)
	}
	if !strings.Contains(logs.String(), "gone-host") {
		t.Errorf("the take-over was not logged with the old holder: %q", logs.String())
	}
	for _, force := range []bool{false, true} {
		_, err := LockWith(fsys, dir, "generate", force, LockOptions{What: "segment"})
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
			t.Fatalf("force=%v: %v, want a *LockedError", force, err)
		}
		if !le.Alive || le.Info.Holder != "updatedb" || le.Info.PID != os.Getpid() || le.Info.Command == "" {
			t.Errorf("force=%v: %+v", force, le)
		}
		if msg := err.Error(); !strings.Contains(msg, `segment `) || !strings.Contains(msg, `"updatedb"`) || !strings.Contains(msg, "running") {
			t.Errorf("force=%v: message %q", force, msg)
		}
	}
	if err := h.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !os.IsNotExist(err) {
		t.Errorf("Unlock left the lock file: %v", err)
	}
	h2, err := Lock(fsys, dir, "generate", false)
	if err != nil {
		t.Fatal(err)
	}
	h2.Unlock()
}
