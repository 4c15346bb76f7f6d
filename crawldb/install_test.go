package crawldb

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/storage"
)

// crashFS is the local file system that "crashes" at a chosen rename: that
// rename and every operation after it fail, as if the process had died.
type crashFS struct {
	storage.FS
	crashAt string // oldpath of the rename that crashes
	crashed bool
}

var errCrashed = errors.New("simulated crash")

func (c *crashFS) Rename(oldpath, newpath string) error {
	if c.crashed || oldpath == c.crashAt {
		c.crashed = true
		return errCrashed
	}
	return c.FS.Rename(oldpath, newpath)
}

func (c *crashFS) RemoveAll(p string) error {
	if c.crashed {
		return errCrashed
	}
	return c.FS.RemoveAll(p)
}

// version writes a CrawlDB version directory holding one marker file.
func version(t *testing.T, dir, marker string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "part-r-00000.parquet"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
}

// marker returns the marker of the version in dir, or "" if there is none.
func marker(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "part-r-00000.parquet"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstall(t *testing.T) {
	fsys := storage.NewLocal()
	db := filepath.Join(t.TempDir(), "crawldb")

	// First install: no current yet.
	v1 := NewTempDir(db)
	if !strings.HasPrefix(path.Base(v1), TempPrefix) || path.Dir(v1) != db {
		t.Fatalf("NewTempDir %s", v1)
	}
	version(t, v1, "v1")
	if err := Install(fsys, db, v1, false); err != nil {
		t.Fatal(err)
	}
	if marker(t, Current(db)) != "v1" || marker(t, Old(db)) != "" {
		t.Fatalf("after first install: current %q old %q", marker(t, Current(db)), marker(t, Old(db)))
	}
	if _, err := os.Stat(v1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new dir still there: %v", err)
	}

	// Second install, keeping the old version.
	v2 := NewTempDir(db)
	version(t, v2, "v2")
	if err := Install(fsys, db, v2, true); err != nil {
		t.Fatal(err)
	}
	if marker(t, Current(db)) != "v2" || marker(t, Old(db)) != "v1" {
		t.Fatalf("after keepOld install: current %q old %q", marker(t, Current(db)), marker(t, Old(db)))
	}

	// Third install replaces the kept old version and removes it.
	v3 := NewTempDir(db)
	version(t, v3, "v3")
	if err := Install(fsys, db, v3, false); err != nil {
		t.Fatal(err)
	}
	if marker(t, Current(db)) != "v3" {
		t.Fatalf("current %q", marker(t, Current(db)))
	}
	if _, err := os.Stat(Old(db)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old still there: %v", err)
	}

	// Bad new versions leave current alone.
	if err := Install(fsys, db, filepath.Join(db, "missing"), false); err == nil {
		t.Error("missing new dir installed")
	}
	if err := Install(fsys, db, Current(db), false); err == nil {
		t.Error("current installed over itself")
	}
	file := filepath.Join(db, "afile")
	os.WriteFile(file, nil, 0o644)
	if err := Install(fsys, db, file, false); err == nil {
		t.Error("a file installed")
	}
	if marker(t, Current(db)) != "v3" {
		t.Fatalf("current damaged: %q", marker(t, Current(db)))
	}
}

func TestInstallCrashBetweenRenamesAndRecover(t *testing.T) {
	local := storage.NewLocal()
	db := filepath.Join(t.TempDir(), "crawldb")
	version(t, Current(db), "v1")
	v2 := NewTempDir(db)
	version(t, v2, "v2")

	// Crash at the second rename (new -> current): current was already
	// moved to old and the rollback cannot run either.
	cfs := &crashFS{FS: local, crashAt: v2}
	err := Install(cfs, db, v2, false)
	if !errors.Is(err, errCrashed) {
		t.Fatalf("Install with crash: %v", err)
	}
	if marker(t, Current(db)) != "" || marker(t, Old(db)) != "v1" {
		t.Fatalf("after crash: current %q old %q", marker(t, Current(db)), marker(t, Old(db)))
	}
	// Also a stale engine staging dir.
	os.MkdirAll(filepath.Join(db, "_temporary", "attempt_0"), 0o755)
	// And a file that only looks like a temp dir, and a kept dir: untouched.
	os.WriteFile(filepath.Join(db, "tmp-notadir"), nil, 0o644)

	r, err := Recover(local, db, true)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Restored || marker(t, Current(db)) != "v1" {
		t.Fatalf("recover: %+v current %q", r, marker(t, Current(db)))
	}
	wantRemoved := []string{filepath.Join(db, "_temporary"), v2}
	slices.Sort(wantRemoved)
	got := slices.Clone(r.Removed)
	slices.Sort(got)
	if !slices.Equal(got, wantRemoved) {
		t.Errorf("removed %v, want %v", got, wantRemoved)
	}
	if _, err := os.Stat(filepath.Join(db, "tmp-notadir")); err != nil {
		t.Errorf("a file was removed: %v", err)
	}

	// Recovering a healthy CrawlDB changes nothing, and keeps a backup.
	version(t, Old(db), "v0")
	r, err = Recover(local, db, true)
	if err != nil || r.Restored || len(r.Removed) != 0 {
		t.Fatalf("healthy recover: %+v %v", r, err)
	}
	if marker(t, Current(db)) != "v1" || marker(t, Old(db)) != "v0" {
		t.Errorf("healthy recover changed versions")
	}

	// A CrawlDB that does not exist yet needs no recovery.
	if r, err := Recover(local, filepath.Join(db, "nope"), true); err != nil || r.Restored {
		t.Errorf("missing dir: %+v %v", r, err)
	}
}

func TestInstallRollsBackOnFailedRename(t *testing.T) {
	local := storage.NewLocal()
	db := filepath.Join(t.TempDir(), "crawldb")
	version(t, Current(db), "v1")
	v2 := NewTempDir(db)
	version(t, v2, "v2")
	// Only the new -> current rename fails; the rollback works.
	ffs := &failOnceFS{FS: local, failAt: v2}
	if err := Install(ffs, db, v2, false); err == nil {
		t.Fatal("no error")
	}
	if marker(t, Current(db)) != "v1" || marker(t, v2) != "v2" {
		t.Errorf("after rollback: current %q new %q", marker(t, Current(db)), marker(t, v2))
	}
}

type failOnceFS struct {
	storage.FS
	failAt string
}

func (f *failOnceFS) Rename(oldpath, newpath string) error {
	if oldpath == f.failAt {
		return errors.New("rename refused")
	}
	return f.FS.Rename(oldpath, newpath)
}
