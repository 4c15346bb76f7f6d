package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, fsys FS, p string, data []byte) {
	t.Helper()
	w, err := fsys.Create(p)
	if err != nil {
		t.Fatalf("Create(%s): %v", p, err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("Write(%s): %v", p, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close(%s): %v", p, err)
	}
}

func TestLocalCreateMakesParentsAndIsExclusive(t *testing.T) {
	l := NewLocal()
	p := filepath.Join(t.TempDir(), "a", "b", "c", "part-r-00000.parquet")
	writeFile(t, l, p, []byte("hello"))

	got, err := os.ReadFile(p)
	if err != nil || string(got) != "hello" {
		t.Fatalf("ReadFile = %q, %v; want hello", got, err)
	}
	_, err = l.Create(p)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create: err = %v; want fs.ErrExist", err)
	}
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v does not name the path", err)
	}
	// The existing file is untouched.
	if got, _ := os.ReadFile(p); string(got) != "hello" {
		t.Fatalf("file changed to %q", got)
	}
}

func TestLocalCreateCloseTwice(t *testing.T) {
	l := NewLocal()
	w, err := l.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v; want fs.ErrClosed", err)
	}
}

func TestLocalCreateParentIsFile(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	writeFile(t, l, filepath.Join(dir, "file"), nil)
	_, err := l.Create(filepath.Join(dir, "file", "child"))
	if err == nil {
		t.Fatal("Create under a file succeeded")
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, "file")) {
		t.Fatalf("error %v does not name the path", err)
	}
}

func TestLocalOpenReadAtSize(t *testing.T) {
	l := NewLocal()
	p := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789"), 1000)
	writeFile(t, l, p, data)

	f, err := l.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != int64(len(data)) {
		t.Fatalf("Size = %d; want %d", f.Size(), len(data))
	}
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 9995)
	if n != 5 || !errors.Is(err, io.EOF) || string(buf[:n]) != "56789" {
		t.Fatalf("ReadAt past end = %q, %d, %v", buf[:n], n, err)
	}
	n, err = f.ReadAt(buf, 1234)
	if err != nil || n != 10 || string(buf) != "4567890123" {
		t.Fatalf("ReadAt(1234) = %q, %d, %v", buf, n, err)
	}
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("Read all: %d bytes, %v", len(all), err)
	}
}

func TestLocalOpenErrors(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	_, err := l.Open(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Open missing: %v", err)
	}
	_, err = l.Open(dir)
	if err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("Open dir: %v", err)
	}
	_, err = l.Stat(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing: %v", err)
	}
	_, err = l.ReadDir(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadDir missing: %v", err)
	}
}

func TestLocalRename(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "sub", "b")
	writeFile(t, l, a, []byte("new"))
	writeFile(t, l, b, []byte("old"))

	// A file replaces a file.
	if err := l.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(b); string(got) != "new" {
		t.Fatalf("after rename b = %q", got)
	}
	if ok, _ := Exists(l, a); ok {
		t.Fatal("old path still exists")
	}

	// A directory moves whole (how jobs publish _temporary output).
	tmp := filepath.Join(dir, "out", "_temporary", "0")
	writeFile(t, l, filepath.Join(tmp, "part-00000"), []byte("p0"))
	writeFile(t, l, filepath.Join(tmp, "part-00001"), []byte("p1"))
	final := filepath.Join(dir, "current")
	if err := l.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	infos, err := l.ReadDir(final)
	if err != nil || len(infos) != 2 {
		t.Fatalf("ReadDir after dir rename: %v, %v", infos, err)
	}

	// An existing directory, even an empty one, is never replaced.
	empty := filepath.Join(dir, "empty")
	if err := l.MkdirAll(empty); err != nil {
		t.Fatal(err)
	}
	writeFile(t, l, filepath.Join(dir, "x"), []byte("x"))
	for _, src := range []string{filepath.Join(dir, "x"), final} {
		err := l.Rename(src, empty)
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Rename(%s, existing dir) = %v; want fs.ErrExist", src, err)
		}
		if !strings.Contains(err.Error(), empty) {
			t.Fatalf("error %v does not name the destination", err)
		}
		if ok, _ := Exists(l, src); !ok {
			t.Fatalf("source %s lost after failed rename", src)
		}
	}

	// Missing source.
	err = l.Rename(filepath.Join(dir, "nope"), filepath.Join(dir, "nope2"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Rename missing = %v", err)
	}
}

func TestLocalRemoveAll(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	writeFile(t, l, filepath.Join(dir, "d", "e", "f"), []byte("x"))
	if err := l.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if ok, err := Exists(l, filepath.Join(dir, "d")); ok || err != nil {
		t.Fatalf("Exists after RemoveAll = %v, %v", ok, err)
	}
	if err := l.RemoveAll(filepath.Join(dir, "never")); err != nil {
		t.Fatalf("RemoveAll missing = %v", err)
	}
}

func TestLocalReadDirSorted(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	names := []string{"part-r-00010", "part-r-00002", "_SUCCESS", "a", "B", "part-r-00001"}
	for _, n := range names {
		writeFile(t, l, filepath.Join(dir, n), []byte(n))
	}
	if err := l.MkdirAll(filepath.Join(dir, "_temporary", "0")); err != nil {
		t.Fatal(err)
	}
	infos, err := l.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fi := range infos {
		got = append(got, fi.Name())
		if fi.Name() == "_temporary" && !fi.IsDir() {
			t.Error("_temporary not a dir")
		}
		if fi.Name() == "a" && fi.Size() != 1 {
			t.Errorf("size of a = %d", fi.Size())
		}
	}
	want := "B _SUCCESS _temporary a part-r-00001 part-r-00002 part-r-00010"
	if strings.Join(got, " ") != want {
		t.Fatalf("ReadDir = %v; want %s", got, want)
	}
}

func TestLocalMkdirAllIdempotent(t *testing.T) {
	l := NewLocal()
	p := filepath.Join(t.TempDir(), "x", "y")
	for range 2 {
		if err := l.MkdirAll(p); err != nil {
			t.Fatal(err)
		}
	}
	st, err := l.Stat(p)
	if err != nil || !st.IsDir() {
		t.Fatalf("Stat = %v, %v", st, err)
	}
}

// Create is exclusive, so it works as a lock: of many concurrent creators
// exactly one wins.
func TestLocalCreateAsLock(t *testing.T) {
	l := NewLocal()
	lock := filepath.Join(t.TempDir(), "crawldb", ".locked")
	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, exists := 0, 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := l.Create(lock)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
				w.Close()
			case errors.Is(err, fs.ErrExist):
				exists++
			default:
				t.Errorf("Create: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || exists != n-1 {
		t.Fatalf("wins = %d, exists = %d", wins, exists)
	}
}

func TestWriteFileAtomicAndReadFile(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "state.json")
	if err := WriteFileAtomic(l, p, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(l, p, []byte("version two")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(l, p)
	if err != nil || string(got) != "version two" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	// No temporary files left behind.
	infos, _ := l.ReadDir(filepath.Join(dir, "sub"))
	if len(infos) != 1 {
		t.Fatalf("dir holds %d entries, want 1", len(infos))
	}
	// Empty file.
	if err := WriteFileAtomic(l, p, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(l, p); err != nil || len(got) != 0 {
		t.Fatalf("ReadFile empty = %q, %v", got, err)
	}
	// Missing.
	_, err = ReadFile(l, filepath.Join(dir, "missing"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile missing = %v", err)
	}
}

func TestWriteFileAtomicOntoDirectoryFailsAndCleansUp(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	target := filepath.Join(dir, "d")
	writeFile(t, l, filepath.Join(target, "keep"), []byte("k"))
	err := WriteFileAtomic(l, target, []byte("x"))
	if err == nil || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteFileAtomic onto a dir = %v", err)
	}
	infos, _ := l.ReadDir(dir)
	if len(infos) != 1 || infos[0].Name() != "d" {
		t.Fatalf("leftovers: %v", infos)
	}
	if got, _ := ReadFile(l, filepath.Join(target, "keep")); string(got) != "k" {
		t.Fatal("directory content lost")
	}
}

// Concurrent writers and readers of one path: every read sees one whole
// version, never a torn or empty file.
func TestWriteFileAtomicConcurrent(t *testing.T) {
	l := NewLocal()
	p := filepath.Join(t.TempDir(), "f")
	versions := make(map[string]bool)
	for i := range 8 {
		v := strings.Repeat(fmt.Sprintf("writer-%d;", i), 2000)
		versions[v] = true
	}
	if err := WriteFileAtomic(l, p, []byte(strings.Repeat("writer-0;", 2000))); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := []byte(strings.Repeat(fmt.Sprintf("writer-%d;", i), 2000))
			for range 10 {
				if err := WriteFileAtomic(l, p, v); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := ReadFile(l, p)
				if err != nil {
					t.Error(err)
					return
				}
				if !versions[string(got)] {
					t.Errorf("torn read: %d bytes", len(got))
					return
				}
			}
		}()
	}
	wg.Wait()
	infos, _ := l.ReadDir(filepath.Dir(p))
	if len(infos) != 1 {
		t.Fatalf("%d entries left, want 1", len(infos))
	}
}

func TestExists(t *testing.T) {
	l := NewLocal()
	dir := t.TempDir()
	if ok, err := Exists(l, dir); !ok || err != nil {
		t.Fatalf("Exists(dir) = %v, %v", ok, err)
	}
	if ok, err := Exists(l, filepath.Join(dir, "x")); ok || err != nil {
		t.Fatalf("Exists(missing) = %v, %v", ok, err)
	}
	// A path through a file is an error other than "does not exist" on
	// Unix (ENOTDIR); Exists must not report it as absent silently unless
	// the OS says so.
	writeFile(t, l, filepath.Join(dir, "f"), nil)
	ok, err := Exists(l, filepath.Join(dir, "f", "g"))
	if ok {
		t.Fatalf("Exists(file/child) = true")
	}
	_ = err // ENOTDIR: either an error or absent is acceptable
}
