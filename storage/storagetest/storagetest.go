// Package storagetest is the contract suite of storage.FS: the behaviour
// trawl's jobs rely on, checked the same way on every file system. The
// local disk, the fault-injecting wrapper (faultfs) and HDFS (the package's
// in-memory stand-in always, a real cluster when TRAWL_TEST_HDFS is set)
// all run it:
//
//	func TestContract(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) (storage.FS, string) {
//			return storage.NewLocal(), t.TempDir()
//		})
//	}
//
// What it checks: exclusive Create that makes parents, with the file
// whole once Close returns; ReadAt at many offsets with io.ReaderAt's
// io.EOF rules, Read, Size; ReadDir sorted, and its error for a missing
// directory; Rename of a file to a new name and over a file, the refusal
// (fs.ErrExist) to rename anything onto an existing directory, which is
// left intact, and the rename of a staged directory that publishes a job's
// output; RemoveAll of a tree and of a missing path; Stat and its
// fs.ErrNotExist; MkdirAll twice; storage.WriteFileAtomic and
// storage.ReadFile; all of it from several goroutines at once (run with
// -race); and an error, not a panic, for a directory that cannot be
// written to.
//
// The permission check needs a way to make a directory read-only: a
// Chmod(path string, mode fs.FileMode) error method on the FS (package
// hdfs has one), or an FS that is the local disk (os.Chmod, found by
// seeing a file the FS created appear on disk). Root writes into any
// directory, so on the local disk as root it uses /sys instead (which
// root cannot create files in), and is skipped if that does not give a
// permission error either; it is skipped too when the FS's user is not
// subject to permissions (an HDFS superuser).
package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trawl/trawl/storage"
)

// Run runs the contract suite as subtests of t. newFS is called once per
// subtest and returns the FS to test and an existing, empty directory in
// it that the subtest may fill (a plain path of the FS, not a URI); it
// should remove the directory when the subtest ends (t.Cleanup) if the
// FS does not (t.TempDir does).
func Run(t *testing.T, newFS func(t *testing.T) (fsys storage.FS, root string)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fsys storage.FS, root string)
	}{
		{"Create", testCreate},
		{"ReadAt", testReadAt},
		{"Read", testRead},
		{"Size", testSize},
		{"ReadDir", testReadDir},
		{"Rename", testRename},
		{"RenameOntoDirectory", testRenameOntoDirectory},
		{"RenamePublishesDirectory", testRenamePublishesDirectory},
		{"RemoveAll", testRemoveAll},
		{"Stat", testStat},
		{"MkdirAll", testMkdirAll},
		{"WriteFileAtomic", testWriteFileAtomic},
		{"Concurrent", testConcurrent},
		{"Permission", testPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, root := newFS(t)
			tt.fn(t, fsys, root)
		})
	}
}

// pattern returns n bytes that differ from one offset to the next, so
// that a read at a wrong offset shows.
func pattern(n int, salt uint32) []byte {
	b := make([]byte, n)
	x := 2463534242 ^ salt
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func join(root string, elem ...string) string { return storage.Join(root, elem...) }

// write creates p with data through fsys.
func write(t *testing.T, fsys storage.FS, p string, data []byte) {
	t.Helper()
	w, err := fsys.Create(p)
	if err != nil {
		t.Fatalf("Create(%s): %v", p, err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		t.Fatalf("Write(%s): %v", p, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close(%s): %v", p, err)
	}
}

// read reads p whole with storage.ReadFile.
func read(t *testing.T, fsys storage.FS, p string) []byte {
	t.Helper()
	b, err := storage.ReadFile(fsys, p)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", p, err)
	}
	return b
}

// mustExist and mustNotExist check p with Stat.
func mustExist(t *testing.T, fsys storage.FS, p string) fs.FileInfo {
	t.Helper()
	fi, err := fsys.Stat(p)
	if err != nil {
		t.Fatalf("Stat(%s): %v; want it to exist", p, err)
	}
	return fi
}

func mustNotExist(t *testing.T, fsys storage.FS, p string) {
	t.Helper()
	if _, err := fsys.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat(%s) = %v; want an error matching fs.ErrNotExist", p, err)
	}
}

// names lists the names of a directory.
func names(t *testing.T, fsys storage.FS, dir string) []string {
	t.Helper()
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir(%s): %v", dir, err)
	}
	out := make([]string, len(infos))
	for i, fi := range infos {
		out[i] = fi.Name()
	}
	return out
}

// namesPath checks that err names p.
func namesPath(t *testing.T, what string, err error, p string) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), p) {
		t.Errorf("%s: error %q does not name %s", what, err, p)
	}
}

func testCreate(t *testing.T, fsys storage.FS, root string) {
	// Parents are created; the bytes are all there once Close returns.
	p := join(root, "a", "b", "c", "part-r-00000.parquet")
	data := pattern(100_000, 1)
	w, err := fsys.Create(p)
	if err != nil {
		t.Fatalf("Create(%s) with missing parents: %v", p, err)
	}
	// The file exists from Create on: another Create fails at once.
	if w2, err := fsys.Create(p); !errors.Is(err, fs.ErrExist) {
		if w2 != nil {
			w2.Close()
		}
		t.Errorf("Create(%s) while it is being written = %v; want fs.ErrExist", p, err)
	}
	for off := 0; off < len(data); off += 7_000 {
		end := min(off+7_000, len(data))
		if n, err := w.Write(data[off:end]); err != nil || n != end-off {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := read(t, fsys, p); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes; want the %d written", len(got), len(data))
	}
	if fi := mustExist(t, fsys, join(root, "a", "b")); !fi.IsDir() {
		t.Errorf("parent %s is not a directory", join(root, "a", "b"))
	}

	// Exclusive: an existing file is an error matching fs.ErrExist that
	// names it, and is left as it was.
	_, err = fsys.Create(p)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of an existing file = %v; want fs.ErrExist", err)
	}
	namesPath(t, "Create of an existing file", err, p)
	if got := read(t, fsys, p); !bytes.Equal(got, data) {
		t.Fatal("a refused Create changed the file")
	}
	// So is an existing directory.
	if _, err := fsys.Create(join(root, "a")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing directory = %v; want fs.ErrExist", err)
	}

	// An empty file.
	empty := join(root, "empty")
	write(t, fsys, empty, nil)
	if fi := mustExist(t, fsys, empty); fi.Size() != 0 || fi.IsDir() {
		t.Errorf("empty file: size %d, dir %v", fi.Size(), fi.IsDir())
	}

	// Close twice, Write after Close: errors.
	w, err = fsys.Create(join(root, "twice"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("second Close returned nil")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close returned nil")
	}

	// A parent that is a file.
	under := join(p, "child")
	if w, err := fsys.Create(under); err == nil {
		w.Close()
		t.Errorf("Create(%s) under a file succeeded", under)
	} else {
		namesPath(t, "Create under a file", err, p)
	}
}

// readAtSize is the length of testReadAt's file: a few 64 KiB blocks and
// an odd byte, so that reads cross block boundaries and end off them.
const readAtSize = 300_001

// testReadAt checks ReadAt of a file at many offsets, past its end and of
// an empty file, and Open's errors.
func testReadAt(t *testing.T, fsys storage.FS, root string) {
	readAtFile(t, fsys, root)
	readAtEmpty(t, fsys, root)
	openErrors(t, fsys, root)
}

// readAtFile writes a readAtSize file and checks its Size, ReadAt within
// it, past its end and at a negative offset, a section reader over it, and
// Close.
func readAtFile(t *testing.T, fsys storage.FS, root string) {
	const size = readAtSize
	data := pattern(size, 2)
	p := join(root, "f")
	write(t, fsys, p, data)
	f, err := fsys.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != size {
		t.Fatalf("Size = %d; want %d", f.Size(), size)
	}
	readAtWithin(t, f, data)
	readAtPastEnd(t, f, data)
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at a negative offset returned nil")
	}
	// Reading the same file through a section reader, as ReadFile does.
	if got, err := io.ReadAll(io.NewSectionReader(f, 0, size)); err != nil || !bytes.Equal(got, data) {
		t.Errorf("SectionReader: %d bytes, %v", len(got), err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// readAtWithin checks reads that lie within f, which holds data (of
// readAtSize bytes): each gives all the bytes asked for and a nil error.
func readAtWithin(t *testing.T, f storage.File, data []byte) {
	const size = readAtSize
	cases := []struct {
		off int64
		n   int
	}{
		{0, 1}, {0, 4096}, {1, 10}, {4095, 2}, {65_535, 3}, {65_536, 100},
		{size - 65_536 - 10, 20}, // across the last 64 KiB
		{size - 65_536, 65_536},  // the last 64 KiB exactly
		{size - 8, 8},            // a Parquet footer's length and magic
		{100_000, 150_000},       // a large read
		{size - 1, 1},
		{0, size}, // everything
		{12_345, 0},
	}
	for _, c := range cases {
		buf := make([]byte, c.n)
		n, err := f.ReadAt(buf, c.off)
		if err != nil || n != c.n {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d, nil", c.n, c.off, n, err, c.n)
			continue
		}
		if !bytes.Equal(buf, data[c.off:c.off+int64(c.n)]) {
			t.Errorf("ReadAt(%d bytes at %d): wrong bytes", c.n, c.off)
		}
	}
}

// readAtPastEnd checks reads that reach past the end of f, which holds
// data (of readAtSize bytes): the bytes there are, and io.EOF.
func readAtPastEnd(t *testing.T, f storage.File, data []byte) {
	const size = readAtSize
	for _, c := range []struct {
		off  int64
		n    int
		want int
	}{
		{size - 5, 10, 5}, {size - 1, 2, 1}, {0, size + 1, size}, {size, 1, 0}, {size + 100, 10, 0},
	} {
		buf := make([]byte, c.n)
		n, err := f.ReadAt(buf, c.off)
		if n != c.want || err != io.EOF {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d, io.EOF", c.n, c.off, n, err, c.want)
		}
		if c.off < size && !bytes.Equal(buf[:n], data[c.off:c.off+int64(n)]) {
			t.Errorf("ReadAt(%d bytes at %d): wrong bytes", c.n, c.off)
		}
	}
}

// readAtEmpty checks that ReadAt of an empty file gives 0 and io.EOF.
func readAtEmpty(t *testing.T, fsys storage.FS, root string) {
	empty := join(root, "empty")
	write(t, fsys, empty, nil)
	e, err := fsys.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n, err := e.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Errorf("ReadAt of an empty file = %d, %v; want 0, io.EOF", n, err)
	}
}

// openErrors checks that Open of a directory fails and that Open of a
// missing file fails with fs.ErrNotExist and names the path.
func openErrors(t *testing.T, fsys storage.FS, root string) {
	if f, err := fsys.Open(root); err == nil {
		f.Close()
		t.Error("Open of a directory succeeded")
	}
	missing := join(root, "missing")
	_, err := fsys.Open(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file = %v; want fs.ErrNotExist", err)
	}
	namesPath(t, "Open of a missing file", err, missing)
}

func testRead(t *testing.T, fsys storage.FS, root string) {
	data := pattern(250_000, 3)
	p := join(root, "f")
	write(t, fsys, p, data)
	f, err := fsys.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Reads of odd sizes, then the rest with io.ReadAll.
	var got []byte
	buf := make([]byte, 10_007)
	for range 5 {
		n, err := f.Read(buf)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		got = append(got, buf[:n]...)
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	got = append(got, rest...)
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes sequentially; want the %d written", len(got), len(data))
	}
	if n, err := f.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("Read at the end = %d, %v; want 0, io.EOF", n, err)
	}
}

func testSize(t *testing.T, fsys storage.FS, root string) {
	for _, n := range []int{0, 1, 8, 65_535, 65_537, 1 << 20} {
		p := join(root, fmt.Sprintf("f%d", n))
		write(t, fsys, p, pattern(n, uint32(n)))
		if fi := mustExist(t, fsys, p); fi.Size() != int64(n) {
			t.Errorf("Stat(%s).Size() = %d; want %d", p, fi.Size(), n)
		}
		f, err := fsys.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if f.Size() != int64(n) {
			t.Errorf("Open(%s).Size() = %d; want %d", p, f.Size(), n)
		}
		f.Close()
		if got := read(t, fsys, p); len(got) != n {
			t.Errorf("ReadFile(%s): %d bytes; want %d", p, len(got), n)
		}
	}
}

func testReadDir(t *testing.T, fsys storage.FS, root string) {
	dir := join(root, "d")
	for _, name := range []string{"b", "a", "part-00010", "part-00002", "A", "_SUCCESS", ".locked"} {
		write(t, fsys, join(dir, name), []byte(name))
	}
	if err := fsys.MkdirAll(join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fi := range infos {
		got = append(got, fi.Name())
		switch {
		case fi.Name() == "c" && !fi.IsDir():
			t.Errorf("c is not a directory")
		case fi.Name() != "c" && (fi.IsDir() || fi.Size() != int64(len(fi.Name()))):
			t.Errorf("%s: dir %v, size %d", fi.Name(), fi.IsDir(), fi.Size())
		}
	}
	want := []string{".locked", "A", "_SUCCESS", "a", "b", "c", "part-00002", "part-00010"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir = %q; want %q (sorted by name)", got, want)
	}
	if got := names(t, fsys, join(dir, "c")); len(got) != 0 {
		t.Errorf("ReadDir of an empty directory = %q", got)
	}
	missing := join(root, "missing")
	_, err = fsys.ReadDir(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir of a missing directory = %v; want fs.ErrNotExist", err)
	}
	namesPath(t, "ReadDir of a missing directory", err, missing)
	if _, err := fsys.ReadDir(join(dir, "a")); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
}

func testRename(t *testing.T, fsys storage.FS, root string) {
	a, b := join(root, "a"), join(root, "b")
	write(t, fsys, a, []byte("first"))

	// A file to a new name.
	if err := fsys.Rename(a, b); err != nil {
		t.Fatalf("Rename to a new name: %v", err)
	}
	mustNotExist(t, fsys, a)
	if got := read(t, fsys, b); string(got) != "first" {
		t.Fatalf("after Rename: %q", got)
	}

	// A file over a file replaces it.
	write(t, fsys, a, []byte("second"))
	if err := fsys.Rename(a, b); err != nil {
		t.Fatalf("Rename over a file: %v", err)
	}
	mustNotExist(t, fsys, a)
	if got := read(t, fsys, b); string(got) != "second" {
		t.Fatalf("after Rename over a file: %q; want second", got)
	}

	// Into another existing directory.
	sub := join(root, "sub")
	if err := fsys.MkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(b, join(sub, "b")); err != nil {
		t.Fatalf("Rename into a directory: %v", err)
	}
	if got := read(t, fsys, join(sub, "b")); string(got) != "second" {
		t.Fatalf("after Rename into a directory: %q", got)
	}

	// A missing source.
	missing := join(root, "missing")
	err := fsys.Rename(missing, join(root, "x"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename of a missing path = %v; want fs.ErrNotExist", err)
	}
	namesPath(t, "Rename of a missing path", err, missing)
	mustNotExist(t, fsys, join(root, "x"))
}

func testRenameOntoDirectory(t *testing.T, fsys storage.FS, root string) {
	// The published CrawlDB: a directory with a part file.
	current := join(root, "crawldb", "current")
	part := join(current, "part-r-00000.parquet")
	write(t, fsys, part, []byte("published"))
	empty := join(root, "empty")
	if err := fsys.MkdirAll(empty); err != nil {
		t.Fatal(err)
	}

	check := func(what, oldpath, newpath string) {
		t.Helper()
		err := fsys.Rename(oldpath, newpath)
		if !errors.Is(err, fs.ErrExist) {
			t.Errorf("%s: Rename(%s, %s) = %v; want an error matching fs.ErrExist", what, oldpath, newpath, err)
		}
		mustExist(t, fsys, oldpath)
		if got := read(t, fsys, part); string(got) != "published" {
			t.Fatalf("%s: the existing directory's file changed: %q", what, got)
		}
		if fi := mustExist(t, fsys, empty); !fi.IsDir() {
			t.Fatalf("%s: %s is no longer a directory", what, empty)
		}
	}

	// A file onto a directory.
	file := join(root, "file")
	write(t, fsys, file, []byte("file"))
	check("a file onto a non-empty directory", file, current)
	check("a file onto an empty directory", file, empty)

	// A staged directory onto a published one, non-empty or empty: this
	// is the rename that must never replace another job's output.
	staged := join(root, "staged")
	write(t, fsys, join(staged, "part-r-00000.parquet"), []byte("staged"))
	check("a directory onto a non-empty directory", staged, current)
	check("a directory onto an empty directory", staged, empty)
	if got := names(t, fsys, empty); len(got) != 0 {
		t.Errorf("the empty directory now holds %q", got)
	}
	if got := read(t, fsys, join(staged, "part-r-00000.parquet")); string(got) != "staged" {
		t.Errorf("the staged directory's file changed: %q", got)
	}
	// A directory onto itself.
	check("a directory onto itself", current, current)
}

func testRenamePublishesDirectory(t *testing.T, fsys storage.FS, root string) {
	// What every job does: write into _temporary, then rename the whole
	// directory into place.
	out := join(root, "segments", "20261121103000")
	staging := join(out, "_temporary", "0")
	files := map[string][]byte{
		"crawl_fetch/part-00000.parquet": pattern(5_000, 4),
		"crawl_fetch/part-00001.parquet": pattern(7_000, 5),
		"crawl_fetch/_SUCCESS":           nil,
		"content/part-00000.parquet":     pattern(9_000, 6),
	}
	for name, data := range files {
		write(t, fsys, join(staging, filepath.FromSlash(name)), data)
	}
	for _, dir := range []string{"crawl_fetch", "content"} {
		if err := fsys.Rename(join(staging, dir), join(out, dir)); err != nil {
			t.Fatalf("publish %s: %v", dir, err)
		}
	}
	for name, data := range files {
		if got := read(t, fsys, join(out, filepath.FromSlash(name))); !bytes.Equal(got, data) {
			t.Errorf("%s after publishing: %d bytes; want %d", name, len(got), len(data))
		}
	}
	if got := names(t, fsys, staging); len(got) != 0 {
		t.Errorf("staging still holds %q", got)
	}
	if got := names(t, fsys, out); !slices.Equal(got, []string{"_temporary", "content", "crawl_fetch"}) {
		t.Errorf("published directory holds %q", got)
	}
	// A whole directory tree to a new name in another directory.
	if err := fsys.MkdirAll(join(root, "old")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(out, join(root, "old", "20261121103000")); err != nil {
		t.Fatalf("Rename of a tree: %v", err)
	}
	mustNotExist(t, fsys, out)
	if got := read(t, fsys, join(root, "old", "20261121103000", "content", "part-00000.parquet")); !bytes.Equal(got, files["content/part-00000.parquet"]) {
		t.Error("the moved tree lost its bytes")
	}
}

func testRemoveAll(t *testing.T, fsys storage.FS, root string) {
	tree := join(root, "tree")
	for _, name := range []string{"a", "b/c", "b/d/e", "b/d/f"} {
		write(t, fsys, join(tree, filepath.FromSlash(name)), []byte(name))
	}
	keep := join(root, "keep")
	write(t, fsys, keep, []byte("keep"))
	// A file.
	if err := fsys.RemoveAll(join(tree, "a")); err != nil {
		t.Fatal(err)
	}
	mustNotExist(t, fsys, join(tree, "a"))
	// A tree.
	if err := fsys.RemoveAll(tree); err != nil {
		t.Fatalf("RemoveAll of a tree: %v", err)
	}
	mustNotExist(t, fsys, tree)
	mustNotExist(t, fsys, join(tree, "b", "d", "e"))
	// Missing paths, and paths below them.
	if err := fsys.RemoveAll(tree); err != nil {
		t.Errorf("RemoveAll of a missing path = %v; want nil", err)
	}
	if err := fsys.RemoveAll(join(root, "never", "was")); err != nil {
		t.Errorf("RemoveAll below a missing path = %v; want nil", err)
	}
	if got := read(t, fsys, keep); string(got) != "keep" {
		t.Error("RemoveAll touched a sibling")
	}
	if got := names(t, fsys, root); !slices.Equal(got, []string{"keep"}) {
		t.Errorf("root holds %q; want [keep]", got)
	}
}

func testStat(t *testing.T, fsys storage.FS, root string) {
	p := join(root, "dir", "file")
	write(t, fsys, p, []byte("12345"))
	fi := mustExist(t, fsys, p)
	if fi.Name() != "file" || fi.Size() != 5 || fi.IsDir() || fi.Mode().IsDir() {
		t.Errorf("Stat(file): name %q size %d dir %v mode %v", fi.Name(), fi.Size(), fi.IsDir(), fi.Mode())
	}
	fi = mustExist(t, fsys, join(root, "dir"))
	if fi.Name() != "dir" || !fi.IsDir() || !fi.Mode().IsDir() {
		t.Errorf("Stat(dir): name %q dir %v mode %v", fi.Name(), fi.IsDir(), fi.Mode())
	}
	missing := join(root, "dir", "missing")
	_, err := fsys.Stat(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a missing path = %v; want fs.ErrNotExist", err)
	}
	namesPath(t, "Stat of a missing path", err, missing)
	if _, err := fsys.Stat(join(root, "nodir", "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat below a missing directory = %v; want fs.ErrNotExist", err)
	}
	for _, c := range []struct {
		p    string
		want bool
	}{{p, true}, {join(root, "dir"), true}, {missing, false}} {
		if ok, err := storage.Exists(fsys, c.p); err != nil || ok != c.want {
			t.Errorf("Exists(%s) = %v, %v; want %v", c.p, ok, err, c.want)
		}
	}
}

func testMkdirAll(t *testing.T, fsys storage.FS, root string) {
	p := join(root, "a", "b", "c")
	for i := range 2 {
		if err := fsys.MkdirAll(p); err != nil {
			t.Fatalf("MkdirAll #%d: %v", i+1, err)
		}
	}
	if fi := mustExist(t, fsys, p); !fi.IsDir() {
		t.Fatal("not a directory")
	}
	if err := fsys.MkdirAll(root); err != nil {
		t.Errorf("MkdirAll of the existing root: %v", err)
	}
	write(t, fsys, join(p, "f"), []byte("x"))
	if err := fsys.MkdirAll(p); err != nil {
		t.Errorf("MkdirAll of a non-empty directory: %v", err)
	}
	if got := names(t, fsys, p); !slices.Equal(got, []string{"f"}) {
		t.Errorf("MkdirAll changed the directory: %q", got)
	}
	if err := fsys.MkdirAll(join(p, "f")); err == nil {
		t.Error("MkdirAll over a file succeeded")
	}
	if err := fsys.MkdirAll(join(p, "f", "g")); err == nil {
		t.Error("MkdirAll below a file succeeded")
	}
}

func testWriteFileAtomic(t *testing.T, fsys storage.FS, root string) {
	p := join(root, "dir", "_counters.json")
	if err := storage.WriteFileAtomic(fsys, p, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("WriteFileAtomic (new file, missing parent): %v", err)
	}
	if got := read(t, fsys, p); string(got) != `{"a":1}` {
		t.Fatalf("ReadFile = %q", got)
	}
	big := pattern(300_000, 7)
	if err := storage.WriteFileAtomic(fsys, p, big); err != nil {
		t.Fatalf("WriteFileAtomic (replace): %v", err)
	}
	if got := read(t, fsys, p); !bytes.Equal(got, big) {
		t.Fatalf("ReadFile after replacing: %d bytes; want %d", len(got), len(big))
	}
	if err := storage.WriteFileAtomic(fsys, p, nil); err != nil {
		t.Fatalf("WriteFileAtomic (empty): %v", err)
	}
	if got := read(t, fsys, p); len(got) != 0 {
		t.Fatalf("ReadFile after writing nothing: %d bytes", len(got))
	}
	if got := names(t, fsys, join(root, "dir")); !slices.Equal(got, []string{"_counters.json"}) {
		t.Errorf("directory holds %q; want only the file (no temporary left)", got)
	}
	// Onto a directory: an error, and the directory stays.
	d := join(root, "adir")
	if err := fsys.MkdirAll(d); err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFileAtomic(fsys, d, []byte("x")); err == nil {
		t.Error("WriteFileAtomic onto a directory succeeded")
	}
	if fi := mustExist(t, fsys, d); !fi.IsDir() {
		t.Error("WriteFileAtomic replaced a directory")
	}
	if got := names(t, fsys, root); !slices.Equal(got, []string{"adir", "dir"}) {
		t.Errorf("root holds %q; want [adir dir] (no temporary left)", got)
	}
	if _, err := storage.ReadFile(fsys, join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v; want fs.ErrNotExist", err)
	}
}

// testConcurrent runs workers that each write, read, publish and remove
// files of their own while reading one shared file and replacing another,
// alongside as many goroutines racing to create one lock file, of which
// exactly one must win.
func testConcurrent(t *testing.T, fsys storage.FS, root string) {
	const workers = 8
	common := join(root, "common")
	data := pattern(200_000, 8)
	write(t, fsys, common, data)
	f, err := fsys.Open(common)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var wg sync.WaitGroup
	errc := make(chan error, workers*16)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			concurrentWorker(fsys, root, f, data, w, errc)
		}()
	}
	// Every worker creates the same lock file: exactly one wins.
	var won sync.Map
	lock := join(root, ".locked")
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raceForLock(fsys, lock, w, &won, errc)
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	winners := 0
	won.Range(func(any, any) bool { winners++; return true })
	if winners != 1 {
		t.Errorf("%d goroutines created the lock file; want exactly 1", winners)
	}
	if got := read(t, fsys, join(root, "last")); len(got) != 1 {
		t.Errorf("the file every worker replaced holds %q", got)
	}
}

// concurrentWorker is worker w of testConcurrent: it writes a file of its
// own under a staging directory, reads the shared file f (which holds
// data), publishes its directory by Rename and reads its file back,
// replaces root/last, lists root, and removes what it published. It sends
// every failure to errc.
func concurrentWorker(fsys storage.FS, root string, f storage.File, data []byte, w int, errc chan<- error) {
	fail := func(format string, args ...any) {
		errc <- fmt.Errorf("worker %d: "+format, append([]any{w}, args...)...)
	}
	dir := join(root, fmt.Sprintf("w%d", w))
	mine := pattern(10_000+w*1_000, uint32(100+w))
	if !writeStaged(fsys, join(dir, "tmp", "part"), mine, fail) {
		return
	}
	readShared(f, data, w, fail)
	if err := fsys.Rename(join(dir, "tmp"), join(dir, "out")); err != nil {
		fail("Rename: %v", err)
	}
	got, err := storage.ReadFile(fsys, join(dir, "out", "part"))
	if err != nil || !bytes.Equal(got, mine) {
		fail("ReadFile: %d bytes, %v", len(got), err)
	}
	if err := storage.WriteFileAtomic(fsys, join(root, "last"), []byte(fmt.Sprint(w))); err != nil {
		fail("WriteFileAtomic: %v", err)
	}
	if _, err := fsys.ReadDir(root); err != nil {
		fail("ReadDir: %v", err)
	}
	if _, err := fsys.Stat(join(dir, "out")); err != nil {
		fail("Stat: %v", err)
	}
	if err := fsys.RemoveAll(join(dir, "out")); err != nil {
		fail("RemoveAll: %v", err)
	}
}

// writeStaged creates p with data for concurrentWorker; it reports false,
// after calling fail, when Create or Close failed (a failed Write is
// reported and the file still closed).
func writeStaged(fsys storage.FS, p string, data []byte, fail func(format string, args ...any)) bool {
	wr, err := fsys.Create(p)
	if err != nil {
		fail("Create: %v", err)
		return false
	}
	if _, err := wr.Write(data); err != nil {
		fail("Write: %v", err)
	}
	if err := wr.Close(); err != nil {
		fail("Close: %v", err)
		return false
	}
	return true
}

// readShared reads 1,000 bytes at 20 offsets of the shared file f, which
// holds data, at offsets that differ from worker to worker: one file, read
// by every worker at once.
func readShared(f storage.File, data []byte, w int, fail func(format string, args ...any)) {
	buf := make([]byte, 1_000)
	for k := range 20 {
		off := int64((w*7919 + k*10_007) % (len(data) - len(buf)))
		if n, err := f.ReadAt(buf, off); err != nil || n != len(buf) || !bytes.Equal(buf, data[off:off+int64(n)]) {
			fail("ReadAt(%d): %d, %v", off, n, err)
		}
	}
}

// raceForLock is goroutine w of the race to create the lock file: if its
// Create wins, it records w in won and writes w into the file. A loser's
// Create must fail with fs.ErrExist; any other error goes to errc.
func raceForLock(fsys storage.FS, lock string, w int, won *sync.Map, errc chan<- error) {
	wr, err := fsys.Create(lock)
	if err != nil {
		if !errors.Is(err, fs.ErrExist) {
			errc <- fmt.Errorf("lock %d: %v", w, err)
		}
		return
	}
	won.Store(w, true)
	if _, err := wr.Write([]byte(fmt.Sprint(w))); err != nil {
		errc <- err
	}
	if err := wr.Close(); err != nil {
		errc <- err
	}
}

func testPermission(t *testing.T, fsys storage.FS, root string) {
	dir, why := readOnlyDir(t, fsys, root)
	if dir == "" {
		t.Skip(why)
	}
	p := join(dir, "f")
	w, err := fsys.Create(p)
	if err == nil {
		w.Close()
		_ = fsys.RemoveAll(p)
		t.Skip("permissions are not enforced for this FS's user (an HDFS superuser, or dfs.permissions.enabled=false)")
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Create in a read-only directory = %v; want an error matching fs.ErrPermission", err)
	}
	namesPath(t, "Create in a read-only directory", err, p)
	if err := fsys.MkdirAll(join(dir, "sub")); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("MkdirAll in a read-only directory = %v; want fs.ErrPermission", err)
	}
	if err := storage.WriteFileAtomic(fsys, join(dir, "g"), []byte("x")); err == nil {
		t.Error("WriteFileAtomic in a read-only directory succeeded")
	}
	src := join(root, "src")
	write(t, fsys, src, []byte("src"))
	if err := fsys.Rename(src, join(dir, "src")); err == nil {
		t.Error("Rename into a read-only directory succeeded")
	}
	if got := read(t, fsys, src); string(got) != "src" {
		t.Errorf("a refused Rename changed its source: %q", got)
	}
}

// readOnlyDir returns a directory fsys cannot create files in, restored
// when the test ends, or "" and why there is none.
func readOnlyDir(t *testing.T, fsys storage.FS, root string) (string, string) {
	dir := join(root, "readonly")
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if c, ok := fsys.(interface {
		Chmod(path string, mode fs.FileMode) error
	}); ok {
		if err := c.Chmod(dir, 0o555); err != nil {
			t.Fatalf("Chmod(%s): %v", dir, err)
		}
		t.Cleanup(func() { _ = c.Chmod(dir, 0o755) })
		return dir, ""
	}
	if !onLocalDisk(t, fsys, root) {
		return "", "the FS has no Chmod method and is not the local disk: no way to make a directory read-only"
	}
	if os.Geteuid() == 0 {
		// Root writes into any directory, but not into sysfs.
		probe := "/sys/trawl-storagetest-probe"
		w, err := fsys.Create(probe)
		if err == nil {
			w.Close()
			_ = fsys.RemoveAll(probe)
		}
		if errors.Is(err, fs.ErrPermission) {
			return "/sys", ""
		}
		return "", "running as root, which writes into any directory, and /sys is not read-only here: run the tests as another user to check permission errors"
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatalf("chmod %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	return dir, ""
}

// onLocalDisk reports whether fsys is the local disk at root's path: a
// file created through it shows on disk.
func onLocalDisk(t *testing.T, fsys storage.FS, root string) bool {
	p := join(root, ".storagetest-probe")
	write(t, fsys, p, []byte("probe"))
	defer func() {
		if err := fsys.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}()
	b, err := os.ReadFile(p)
	return err == nil && string(b) == "probe"
}
