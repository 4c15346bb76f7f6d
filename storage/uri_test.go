package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rootedFS is a real FS: the local disk below a root directory, with
// absolute slash paths inside it, the way HDFS paths look. The tests use it
// as the file system of a registered scheme.
type rootedFS struct {
	root   string
	local  *Local
	closed *int
}

func (r rootedFS) p(name string) string { return filepath.Join(r.root, filepath.FromSlash(name)) }

func (r rootedFS) Open(name string) (File, error)             { return r.local.Open(r.p(name)) }
func (r rootedFS) Create(name string) (io.WriteCloser, error) { return r.local.Create(r.p(name)) }
func (r rootedFS) Rename(a, b string) error                   { return r.local.Rename(r.p(a), r.p(b)) }
func (r rootedFS) RemoveAll(name string) error                { return r.local.RemoveAll(r.p(name)) }
func (r rootedFS) ReadDir(name string) ([]fs.FileInfo, error) { return r.local.ReadDir(r.p(name)) }
func (r rootedFS) Stat(name string) (fs.FileInfo, error)      { return r.local.Stat(r.p(name)) }
func (r rootedFS) MkdirAll(name string) error                 { return r.local.MkdirAll(r.p(name)) }
func (r rootedFS) Close() error                               { *r.closed++; return nil }

func TestResolveLocal(t *testing.T) {
	r := NewResolver()
	cases := []struct{ in, want string }{
		{"", "."},
		{"crawl", "crawl"},
		{"crawl/./crawldb/../segments/", "crawl/segments"},
		{"/tmp/x//y/", "/tmp/x/y"},
		{"file:///tmp/crawl/", "/tmp/crawl"},
		{"file://localhost/tmp/crawl", "/tmp/crawl"},
		{"FILE:///tmp/a/../b", "/tmp/b"},
		{"file:/tmp/hadoop-style", "/tmp/hadoop-style"},
		{"file:///", "/"},
		{"C:/windows-ish", "C:/windows-ish"}, // one-letter scheme is a drive, not a URI
		{"seg:2026/part", "seg:2026/part"},   // ':' without ":/" stays a plain path
		{"dir/with%20percent", "dir/with%20percent"},
	}
	for _, c := range cases {
		fsys, p, err := r.Resolve(c.in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.in, err)
			continue
		}
		if _, ok := fsys.(*Local); !ok {
			t.Errorf("Resolve(%q) fs = %T; want *Local", c.in, fsys)
		}
		if p != filepath.FromSlash(c.want) {
			t.Errorf("Resolve(%q) path = %q; want %q", c.in, p, c.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	r := NewResolver()
	for _, c := range []struct{ in, wantSub string }{
		{"hdfs://nn:8020/crawl", `unknown scheme "hdfs"`},
		{"s3://bucket/x", `unknown scheme "s3"`},
		{"file://otherhost/tmp", "remote host"},
	} {
		_, _, err := r.Resolve(c.in)
		if err == nil || !strings.Contains(err.Error(), c.wantSub) || !strings.Contains(err.Error(), c.in) {
			t.Errorf("Resolve(%q) err = %v; want it to contain %q and the URI", c.in, err, c.wantSub)
		}
	}
	if err := r.Register("file", func(string) (FS, error) { return NewLocal(), nil }); err == nil {
		t.Error("Register(file) succeeded")
	}
	if err := r.Register("9bad", func(string) (FS, error) { return NewLocal(), nil }); err == nil {
		t.Error("Register(9bad) succeeded")
	}
	if err := r.Register("hdfs", nil); err == nil {
		t.Error("Register(nil) succeeded")
	}
	boom := errors.New("namenode unreachable")
	if err := r.Register("hdfs", func(string) (FS, error) { return nil, boom }); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.Resolve("hdfs://nn:8020/x")
	if !errors.Is(err, boom) {
		t.Errorf("handler error not wrapped: %v", err)
	}
}

func TestResolveRegisteredScheme(t *testing.T) {
	r := NewResolver()
	root := t.TempDir()
	var mu sync.Mutex
	opens := map[string]int{}
	closed := 0
	err := r.Register("HDFS", func(authority string) (FS, error) {
		mu.Lock()
		opens[authority]++
		mu.Unlock()
		return rootedFS{root: filepath.Join(root, authority), local: NewLocal(), closed: &closed}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Schemes(); len(got) != 1 || got[0] != "hdfs" {
		t.Fatalf("Schemes = %v", got)
	}

	// Many goroutines resolve and write through the handler's FS.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uri := Join("hdfs://nn:8020/crawl", "segments", fmt.Sprint(i), "part")
			fsys, p, err := r.Resolve(uri)
			if err != nil {
				t.Error(err)
				return
			}
			if want := fmt.Sprintf("/crawl/segments/%d/part", i); p != want {
				t.Errorf("path = %q; want %q", p, want)
			}
			if err := WriteFileAtomic(fsys, p, []byte(uri)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if opens["nn:8020"] != 1 {
		t.Fatalf("handler opened %d times for one authority; want 1 (cached)", opens["nn:8020"])
	}
	infos, err := NewLocal().ReadDir(filepath.Join(root, "nn:8020", "crawl", "segments"))
	if err != nil || len(infos) != 16 {
		t.Fatalf("written through handler: %d entries, %v", len(infos), err)
	}

	// A second authority gets its own FS; no path means "/".
	fsys, p, err := r.Resolve("hdfs://other:9000")
	if err != nil || p != "/" {
		t.Fatalf("Resolve(no path) = %q, %v", p, err)
	}
	if err := fsys.MkdirAll("/x"); err != nil {
		t.Fatal(err)
	}
	if ok, err := Exists(NewLocal(), filepath.Join(root, "other:9000", "x")); !ok || err != nil {
		t.Fatalf("second authority not rooted separately: %v, %v", ok, err)
	}
	if opens["other:9000"] != 1 {
		t.Fatalf("opens = %v", opens)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if closed != 2 {
		t.Fatalf("Close closed %d file systems; want 2", closed)
	}
	// Usable after Close: reopens.
	if _, _, err := r.Resolve("hdfs://nn:8020/"); err != nil || opens["nn:8020"] != 2 {
		t.Fatalf("after Close: %v, opens %v", err, opens)
	}
	// hdfs:/path (no authority): default namenode, authority "".
	if _, p, err := r.Resolve("hdfs:/a/b/../c"); err != nil || p != "/a/c" || opens[""] != 1 {
		t.Fatalf("hdfs:/ = %q, %v, %v", p, err, opens)
	}
}

func TestJoinDirBase(t *testing.T) {
	cases := []struct {
		fn, in string
		elem   []string
		want   string
	}{
		{"join", "hdfs://nn:8020/crawl", []string{"crawldb", "current"}, "hdfs://nn:8020/crawl/crawldb/current"},
		{"join", "hdfs://nn:8020", []string{"crawl"}, "hdfs://nn:8020/crawl"},
		{"join", "hdfs://nn:8020/crawl/", []string{"../x"}, "hdfs://nn:8020/x"},
		{"join", "file:///tmp/c", []string{"a"}, "file:///tmp/c/a"},
		{"join", "file:/tmp/c", []string{"a"}, "file:/tmp/c/a"},
		{"join", "crawl", []string{"segments", "2026"}, filepath.Join("crawl", "segments", "2026")},
		{"join", "", []string{"a"}, "a"},
		{"dir", "hdfs://nn/a/b", nil, "hdfs://nn/a"},
		{"dir", "hdfs://nn/a", nil, "hdfs://nn/"},
		{"dir", "hdfs://nn/", nil, "hdfs://nn/"},
		{"dir", "hdfs://nn", nil, "hdfs://nn/"},
		{"dir", "/tmp/a/b", nil, "/tmp/a"},
		{"dir", "b", nil, "."},
		{"base", "hdfs://nn/a/b", nil, "b"},
		{"base", "hdfs://nn/a/b/", nil, "b"},
		{"base", "hdfs://nn/", nil, "/"},
		{"base", "/tmp/a/part-0", nil, "part-0"},
		{"base", "file:///x/y.parquet", nil, "y.parquet"},
	}
	for _, c := range cases {
		var got string
		switch c.fn {
		case "join":
			got = Join(c.in, c.elem...)
		case "dir":
			got = Dir(c.in)
		case "base":
			got = Base(c.in)
		}
		if got != c.want {
			t.Errorf("%s(%q, %q) = %q; want %q", c.fn, c.in, c.elem, got, c.want)
		}
	}
	if !IsURI("hdfs://x/y") || !IsURI("file:/x") || IsURI("/x") || IsURI("c:/x") || IsURI("a:b") {
		t.Error("IsURI wrong")
	}
}

// Join then Resolve reaches the same file as Resolve then filepath.Join.
func TestJoinResolveRoundTrip(t *testing.T) {
	r := NewResolver()
	dir := t.TempDir()
	uri := "file://" + filepath.ToSlash(dir)
	for _, name := range []string{"a b", "50%", "x:y", "ünï"} {
		_, p, err := r.Resolve(Join(uri, "sub", name))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "sub", name); p != want {
			t.Errorf("Resolve(Join(%q)) = %q; want %q", name, p, want)
		}
	}
}
