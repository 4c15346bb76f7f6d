//go:build unix

package scratch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/flock"
)

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func bufLogger() (*slog.Logger, *lockedBuffer) {
	var buf lockedBuffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func userRoot(base string) string {
	return filepath.Join(base, "trawl-scratch-"+strconv.Itoa(os.Getuid()))
}

func TestNewClose(t *testing.T) {
	base := t.TempDir()
	log, _ := bufLogger()
	d, err := New(base, "update db/x", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	root := userRoot(base)
	if filepath.Dir(d.Path()) != root {
		t.Fatalf("Path %s is not in %s", d.Path(), root)
	}
	name := filepath.Base(d.Path())
	host, _ := os.Hostname()
	if want := "update_db_x-" + namePart(host, "host") + "-" + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(name, want) {
		t.Fatalf("name %q, want prefix %q", name, want)
	}
	for _, p := range []string{root, d.Path()} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v, want a directory with mode 0700", p, fi.Mode())
		}
	}
	lp := filepath.Join(d.Path(), LockName)
	if l, err := flock.TryLock(lp); !errors.Is(err, flock.ErrHeld) {
		if err == nil {
			l.Unlock()
		}
		t.Fatalf("TryLock(owner.lock) = %v; want the directory's lock held", err)
	}
	data, err := os.ReadFile(lp)
	if err != nil {
		t.Fatal(err)
	}
	var o owner
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("owner.lock %q: %v", data, err)
	}
	if o.Job != "update db/x" || o.PID != os.Getpid() || o.Host != host || len(o.Command) == 0 || time.Since(o.Start) < 0 {
		t.Fatalf("owner info %+v", o)
	}
	// Other owners' live directories are left alone, this one included.
	d2, err := New(base, "other", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path()); err != nil {
		t.Fatalf("New of another job removed a live directory: %v", err)
	}
	if removed, err := Sweep(base, log); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep with live owners removed %v, %v", removed, err)
	}
	if err := os.WriteFile(filepath.Join(d.Path(), "m-00000_0-0000.run"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(d.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Close left %s: %v", d.Path(), err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 {
		t.Fatalf("%s holds %v, %v after Close", root, ents, err)
	}
}

// TestSweepFreeAndOrphan sweeps a directory whose lock was released without
// removing it, and directories without a lock file, old and new.
func TestSweepFreeAndOrphan(t *testing.T) {
	base := t.TempDir()
	log, logs := bufLogger()
	if removed, err := Sweep(base, log); err != nil || removed != nil {
		t.Fatalf("Sweep without a scratch directory: %v, %v", removed, err)
	}
	live, err := New(base, "live", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	free, err := New(base, "free", WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(free.Path(), "spill"), make([]byte, 12345), 0o600); err != nil {
		t.Fatal(err)
	}
	freeBytes := 12345 + fileSize(t, filepath.Join(free.Path(), LockName))
	// What a dead owner leaves: the lock released, the directory kept.
	if err := free.lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	root := userRoot(base)
	oldOrphan := filepath.Join(root, "old-orphan")
	newOrphan := filepath.Join(root, "new-orphan")
	for _, p := range []string{oldOrphan, newOrphan} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * orphanAge)
	if err := os.Chtimes(oldOrphan, old, old); err != nil {
		t.Fatal(err)
	}
	// A file directly in the root is not a scratch directory: left alone.
	stray := filepath.Join(root, "stray")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(base, log)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{free.Path(), oldOrphan}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Fatalf("Sweep removed %v, want %v", removed, want)
	}
	for _, p := range []string{live.Path(), newOrphan, stray} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("Sweep removed %s: %v", p, err)
		}
	}
	l := logs.String()
	if !strings.Contains(l, "job=free") || !strings.Contains(l, "bytes="+strconv.FormatInt(freeBytes, 10)) || !strings.Contains(l, "pid="+strconv.Itoa(os.Getpid())) {
		t.Fatalf("removal log lacks the owner or the size:\n%s", l)
	}
}

// TestRootChecks: the per-user directory is narrowed to 0700, and refused
// when it is a symbolic link.
func TestRootChecks(t *testing.T) {
	base := t.TempDir()
	root := userRoot(base)
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	d, err := New(base, "j")
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if fi, err := os.Stat(root); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("root mode %v, %v; want 0700", fi.Mode(), err)
	}

	base2 := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, userRoot(base2)); err != nil {
		t.Fatal(err)
	}
	if d, err := New(base2, "j"); err == nil {
		d.Close()
		t.Fatal("New accepted a symbolic link as the per-user directory")
	}
	if _, err := Sweep(base2, nil); err == nil {
		t.Fatal("Sweep accepted a symbolic link as the per-user directory")
	}
	if _, err := New(filepath.Join(base, "missing"), "j"); err == nil {
		t.Fatal("New made a missing base directory")
	}
}

// TestMain lets the test binary hold a scratch directory in a child
// process: with SCRATCH_TEST_HOLD=BASE it makes one, writes a file into it,
// prints its path and waits until killed (or until its stdin closes).
func TestMain(m *testing.M) {
	if base := os.Getenv("SCRATCH_TEST_HOLD"); base != "" {
		d, err := New(base, "child-job", WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(d.Path(), "spill"), make([]byte, 4321), 0o600); err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(d.Path() + "\n")
		io.Copy(io.Discard, os.Stdin) // until the parent dies
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// TestSweepKilledOwner holds a scratch directory in a child process: Sweep
// keeps it while the child lives, even when it is old, and removes it once
// the child is killed with SIGKILL.
func TestSweepKilledOwner(t *testing.T) {
	base := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SCRATCH_TEST_HOLD="+base)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error ") {
		t.Fatalf("child: %q, %v", line, err)
	}
	child := strings.TrimSuffix(line, "\n")
	if filepath.Dir(child) != userRoot(base) {
		t.Fatalf("child's directory %s is not in %s", child, userRoot(base))
	}
	childBytes := 4321 + fileSize(t, filepath.Join(child, LockName))
	old := time.Now().Add(-2 * unlockedAge)
	if err := os.Chtimes(child, old, old); err != nil {
		t.Fatal(err)
	}
	log, logs := bufLogger()
	if removed, err := Sweep(base, log); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep while the child lives removed %v, %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(child, "spill")); err != nil {
		t.Fatalf("the live child's file: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	waited = true
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", err)
	}
	if _, err := os.Stat(child); err != nil {
		t.Fatalf("the killed child's directory should still be there before a sweep: %v", err)
	}
	removed, err := Sweep(base, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != child {
		t.Fatalf("Sweep after the kill removed %v, want [%s]", removed, child)
	}
	if _, err := os.Lstat(child); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is still there: %v", child, err)
	}
	l := logs.String()
	if !strings.Contains(l, "job=child-job") || !strings.Contains(l, "pid="+strconv.Itoa(cmd.Process.Pid)) ||
		!strings.Contains(l, "bytes="+strconv.FormatInt(childBytes, 10)) || !strings.Contains(l, "level=INFO") {
		t.Fatalf("removal log lacks the owner or the size:\n%s", l)
	}
}

// TestNewSweepsKilledOwner: New removes the directory of a killed owner
// before making its own.
func TestNewSweepsKilledOwner(t *testing.T) {
	base := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SCRATCH_TEST_HOLD="+base)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	child := strings.TrimSuffix(line, "\n")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	d, err := New(base, "next", WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Lstat(child); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("New left the killed owner's %s: %v", child, err)
	}
	ents, err := os.ReadDir(userRoot(base))
	if err != nil || len(ents) != 1 || ents[0].Name() != filepath.Base(d.Path()) {
		t.Fatalf("scratch root holds %v, %v; want only %s", ents, err, d.Path())
	}
}

// TestConcurrentNewAndSweep makes and closes directories while other
// goroutines sweep: no live directory is ever removed from under its owner.
func TestConcurrentNewAndSweep(t *testing.T) {
	base := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := Sweep(base, log); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var owners sync.WaitGroup
	for g := range 4 {
		owners.Add(1)
		go func() {
			defer owners.Done()
			for i := range 50 {
				d, err := New(base, "j"+strconv.Itoa(g), WithLogger(log))
				if err != nil {
					errs <- err
					return
				}
				f := filepath.Join(d.Path(), "f"+strconv.Itoa(i))
				if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
					errs <- err
					return
				}
				if _, err := os.Stat(f); err != nil {
					errs <- err
					return
				}
				if err := d.Close(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	owners.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ents, err := os.ReadDir(userRoot(base)); err != nil || len(ents) != 0 {
		t.Fatalf("scratch root holds %v, %v", ents, err)
	}
}

func TestNamePart(t *testing.T) {
	for in, want := range map[string]string{
		"updatedb":                 "updatedb",
		"a/b c":                    "a_b_c",
		"":                         "job",
		".hidden":                  "job.hidden",
		"é":                        "__",
		strings.Repeat("x", 100):   strings.Repeat("x", maxNamePart),
		"host-1.example.org":       "host-1.example.org",
		"generate_topn-2024.01.01": "generate_topn-2024.01.01",
	} {
		if got := namePart(in, "job"); got != want {
			t.Errorf("namePart(%q) = %q, want %q", in, got, want)
		}
	}
}
