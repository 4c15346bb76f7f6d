//go:build unix

package flock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestTryLockExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(p); !errors.Is(err, ErrHeld) {
		t.Fatalf("second TryLock: %v, want ErrHeld", err)
	}
	if held, err := isHeld(p); err != nil || !held {
		t.Fatalf("Held = %v, %v; want true", held, err)
	}
	if err := l.Write([]byte("holder 1\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Read(); err != nil || string(got) != "holder 1\n" {
		t.Fatalf("Read = %q, %v", got, err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if held, err := isHeld(p); err != nil || held {
		t.Fatalf("Held after Unlock = %v, %v; want false", held, err)
	}
	l2, err := TryLock(p)
	if err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	if got, _ := l2.Read(); string(got) != "holder 1\n" {
		t.Fatalf("the file kept %q, want the old content", got)
	}
	if err := l2.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove left the file: %v", err)
	}
	if held, err := isHeld(p); err != nil || held {
		t.Fatalf("Held of a missing file = %v, %v", held, err)
	}
}

// TestKilledHolderReleases kills a process holding a lock with SIGKILL:
// the lock is free at once, with no stale-lock handling.
func TestKilledHolderReleases(t *testing.T) {
	if os.Getenv("FLOCK_TEST_HOLD") != "" {
		l, err := TryLock(os.Getenv("FLOCK_TEST_HOLD"))
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		_ = l.Write([]byte("child\n"))
		os.Stdout.WriteString("locked\n")
		select {} // hold until killed
	}
	p := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledHolderReleases$")
	cmd.Env = append(os.Environ(), "FLOCK_TEST_HOLD="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q, %v", line, err)
	}
	if _, err := TryLock(p); !errors.Is(err, ErrHeld) {
		cmd.Process.Kill()
		t.Fatalf("TryLock while the child holds it: %v, want ErrHeld", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, err := TryLock(p)
	if err != nil {
		t.Fatalf("TryLock after the holder was killed: %v", err)
	}
	if got, _ := l.Read(); string(got) != "child\n" {
		t.Fatalf("lock file = %q, want the dead holder's info", got)
	}
	l.Unlock()
}

// isHeld reports whether some open file holds a lock on path. A missing
// file is not held. The answer may be stale as soon as it is returned: the
// tests use it only to look.
func isHeld(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock %s: %w", path, err)
	}
	defer f.Close()
	err = lockFile(f)
	if errors.Is(err, ErrHeld) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock %s: %w", path, err)
	}
	return false, nil // closing f releases the test lock
}
