package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// fakeCluster is an in-memory namenode with its datanodes, behind fake
// clients that do what *gohdfs.Client v2.4.0 does, call for call: the same
// errors (an *os.PathError around os.ErrNotExist, os.ErrExist,
// os.ErrPermission or ErrReplicating, or a namenode exception), Create
// without parents, Rename with rename2's OVERWRITE (which replaces a file,
// or an empty directory by a directory), ReadDir in an order of its own,
// and a reader whose ReadAt drops the datanode stream. It counts what the
// FS asks of it, and detects a client used by two goroutines at once.
type fakeCluster struct {
	mu    sync.Mutex
	nodes map[string]*fakeNode

	// Knobs, set before use.
	replicating int    // Close answers ErrReplicating this many times per file
	failReads   int    // this many reads from datanodes fail
	failWrites  int    // this many writes to datanodes fail
	closeErr    error  // Close of a written file fails with it (once)
	failDial    int    // this many connections fail
	dialGate    func() // called by each connection, if set

	// Counters.
	dials     int
	closed    int
	streams   int   // datanode streams opened (a new connection each)
	fetches   []int // the length of each read from datanodes
	reopens   int   // Opens of a file
	completes int   // Close calls on written files

	violations atomic.Int64 // calls overlapping on one client
	clientSeq  int
}

type fakeNode struct {
	dir      bool
	data     []byte
	mode     os.FileMode
	mtime    time.Time
	flags    uint32 // HAS_CRYPT 2, HAS_EC 4
	complete bool
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{nodes: map[string]*fakeNode{"/": {dir: true, mode: 0o755}}}
}

// fakeRemote is a namenode exception, as the library passes it on.
type fakeRemote struct{ exception, message string }

func (e *fakeRemote) Method() string    { return "call" }
func (e *fakeRemote) Desc() string      { return "ERROR_APPLICATION" }
func (e *fakeRemote) Exception() string { return e.exception }
func (e *fakeRemote) Message() string   { return e.message }
func (e *fakeRemote) Error() string {
	return "call failed with ERROR_APPLICATION (" + e.exception + ")"
}

var _ gohdfs.Error = (*fakeRemote)(nil)

// dial opens a client, as gohdfs.NewClient does.
func (cl *fakeCluster) dial(ctx context.Context) (client, error) {
	if g := cl.dialGate; g != nil {
		g()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.failDial > 0 {
		cl.failDial--
		return nil, errors.New("no available namenodes: dial tcp: connection refused")
	}
	cl.dials++
	cl.clientSeq++
	return &fakeClient{cl: cl, name: fmt.Sprintf("go-hdfs-%d", cl.clientSeq)}, nil
}

// fakeClient is one client connection. It is not safe for concurrent use,
// like the library's: overlapping calls are counted as violations.
type fakeClient struct {
	cl     *fakeCluster
	name   string
	busy   atomic.Int32
	closed bool
}

// enter marks the client busy for one call (of the client, or of a reader
// or writer it opened).
func (c *fakeClient) enter() func() {
	if !c.busy.CompareAndSwap(0, 1) {
		c.cl.violations.Add(1)
		return func() {}
	}
	runtime.Gosched() // widen the window in which misuse would show
	return func() { c.busy.Store(0) }
}

func parentOf(p string) string { return path.Dir(p) }

// lookup returns the node of p, or why not: a missing component, or one
// that is a file.
func (cl *fakeCluster) lookup(p string) (*fakeNode, error) {
	if n, ok := cl.nodes[p]; ok {
		return n, nil
	}
	for d := parentOf(p); ; d = parentOf(d) {
		if n, ok := cl.nodes[d]; ok && !n.dir {
			return nil, &fakeRemote{"org.apache.hadoop.fs.ParentNotDirectoryException", d + " (is not a directory)"}
		}
		if d == "/" {
			break
		}
	}
	return nil, os.ErrNotExist
}

// writable checks the owner's write bit of dir (the client's user owns
// everything and is no superuser).
func (cl *fakeCluster) writable(op, name, dir string) error {
	if n, ok := cl.nodes[dir]; ok && n.mode&0o200 == 0 {
		return &os.PathError{Op: op, Path: name, Err: os.ErrPermission}
	}
	return nil
}

func (c *fakeClient) Open(name string) (fileReader, error) {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n, err := cl.lookup(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	cl.reopens++
	return &fakeReader{c: c, name: name, info: cl.info(name, n), data: n.data}, nil
}

func (cl *fakeCluster) info(name string, n *fakeNode) *fakeInfo {
	flags := n.flags
	return &fakeInfo{name: path.Base(name), size: int64(len(n.data)), mode: n.mode, dir: n.dir, mtime: n.mtime,
		sys: &gohdfs.FileStatus{Flags: &flags}}
}

func (c *fakeClient) Create(name string) (fileWriter, error) {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if _, ok := cl.nodes[name]; ok {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrExist}
	}
	dir := parentOf(name)
	d, err := cl.lookup(dir)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		// FileNotFoundException "Parent directory doesn't exist", which
		// interpretCreateException turns into os.ErrNotExist.
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrNotExist}
	case err != nil:
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	case !d.dir:
		return nil, &os.PathError{Op: "create", Path: name, Err: &fakeRemote{"org.apache.hadoop.fs.ParentNotDirectoryException", dir}}
	}
	if err := cl.writable("create", name, dir); err != nil {
		return nil, err
	}
	cl.nodes[name] = &fakeNode{mode: 0o644}
	return &fakeWriter{c: c, name: name, replicating: cl.replicating}, nil
}

func (c *fakeClient) Rename(oldpath, newpath string) error {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	src, ok := cl.nodes[oldpath]
	if !ok {
		return &os.PathError{Op: "rename", Path: oldpath, Err: os.ErrNotExist}
	}
	d, err := cl.lookup(parentOf(newpath))
	if err != nil || !d.dir {
		return &os.PathError{Op: "rename", Path: oldpath, Err: os.ErrNotExist}
	}
	if err := cl.writable("rename", oldpath, parentOf(oldpath)); err != nil {
		return err
	}
	if err := cl.writable("rename", oldpath, parentOf(newpath)); err != nil {
		return err
	}
	if newpath == oldpath || strings.HasPrefix(newpath, oldpath+"/") {
		return &os.PathError{Op: "rename", Path: oldpath, Err: &fakeRemote{"java.io.IOException", "cannot rename to itself or a subdirectory"}}
	}
	if dst, ok := cl.nodes[newpath]; ok {
		// rename2 with OVERWRITE.
		if dst.dir != src.dir {
			return &os.PathError{Op: "rename", Path: oldpath, Err: &fakeRemote{"java.io.IOException", "Source and destination must both be directories or both files"}}
		}
		if dst.dir && len(cl.children(newpath)) > 0 {
			return &os.PathError{Op: "rename", Path: oldpath, Err: &fakeRemote{"java.io.IOException", "rename destination directory is not empty: " + newpath}}
		}
		delete(cl.nodes, newpath)
	}
	for p, n := range cl.nodes {
		if p == oldpath || strings.HasPrefix(p, oldpath+"/") {
			delete(cl.nodes, p)
			cl.nodes[newpath+strings.TrimPrefix(p, oldpath)] = n
		}
	}
	return nil
}

// children lists the direct children of dir.
func (cl *fakeCluster) children(dir string) []string {
	var out []string
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p := range cl.nodes {
		if p != "/" && strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			out = append(out, p)
		}
	}
	return out
}

func (c *fakeClient) RemoveAll(name string) error {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if _, ok := cl.nodes[name]; !ok {
		return nil
	}
	if err := cl.writable("remove", name, parentOf(name)); err != nil {
		return err
	}
	for p := range cl.nodes {
		if p == name || strings.HasPrefix(p, name+"/") {
			delete(cl.nodes, p)
		}
	}
	return nil
}

func (c *fakeClient) ReadDir(dirname string) ([]os.FileInfo, error) {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n, err := cl.lookup(dirname)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dirname, Err: err}
	}
	if !n.dir {
		return nil, &os.PathError{Op: "readdir", Path: dirname, Err: errors.New("the file is not a directory")}
	}
	kids := cl.children(dirname)
	slices.Sort(kids)
	slices.Reverse(kids) // an order of its own: the FS must sort
	out := make([]os.FileInfo, 0, len(kids))
	for _, k := range kids {
		out = append(out, cl.info(k, cl.nodes[k]))
	}
	return out, nil
}

func (c *fakeClient) Stat(name string) (os.FileInfo, error) {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n, err := cl.lookup(name)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return cl.info(name, n), nil
}

func (c *fakeClient) MkdirAll(dirname string, perm os.FileMode) error {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if n, ok := cl.nodes[dirname]; ok {
		if n.dir {
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: dirname, Err: os.ErrExist}
	}
	var missing []string
	d := dirname
	for {
		n, ok := cl.nodes[d]
		if ok && !n.dir {
			return &os.PathError{Op: "mkdir", Path: dirname, Err: &fakeRemote{"org.apache.hadoop.fs.ParentNotDirectoryException", d + " (is not a directory)"}}
		}
		if ok {
			if err := cl.writable("mkdir", dirname, d); err != nil {
				return err
			}
			break
		}
		missing = append(missing, d)
		d = parentOf(d)
	}
	for _, m := range missing {
		cl.nodes[m] = &fakeNode{dir: true, mode: perm}
	}
	return nil
}

func (c *fakeClient) Chmod(name string, perm os.FileMode) error {
	defer c.enter()()
	cl := c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n, ok := cl.nodes[name]
	if !ok {
		return &os.PathError{Op: "chmod", Path: name, Err: os.ErrNotExist}
	}
	n.mode = perm
	return nil
}

func (c *fakeClient) Close() error {
	defer c.enter()()
	c.cl.mu.Lock()
	defer c.cl.mu.Unlock()
	if c.closed {
		panic("fake client closed twice") // the library's Close would panic too
	}
	c.closed = true
	c.cl.closed++
	return nil
}

// fakeReader is a FileReader: a seek offset and maybe an open datanode
// stream, with the library's Seek rule (the stream survives only a skip
// ahead of at most 64 KiB).
type fakeReader struct {
	c      *fakeClient
	name   string
	info   *fakeInfo
	data   []byte
	offset int64
	stream bool
	closed bool
	// deadlines lists the SetDeadline calls.
	deadlines []time.Time
}

func (r *fakeReader) Stat() os.FileInfo { return r.info }

func (r *fakeReader) SetDeadline(t time.Time) error {
	r.deadlines = append(r.deadlines, t)
	return nil
}

func (r *fakeReader) Read(b []byte) (int, error) {
	defer r.c.enter()()
	r.c.cl.mu.Lock()
	r.c.cl.fetches = append(r.c.cl.fetches, len(b))
	r.c.cl.mu.Unlock()
	return r.read(b)
}

func (r *fakeReader) read(b []byte) (int, error) {
	if r.closed {
		return 0, io.ErrClosedPipe
	}
	if r.offset >= int64(len(r.data)) {
		return 0, io.EOF
	}
	cl := r.c.cl
	cl.mu.Lock()
	fail := cl.failReads > 0
	if fail {
		cl.failReads--
	}
	if !r.stream {
		cl.streams++
		r.stream = true
	}
	cl.mu.Unlock()
	if fail {
		r.stream = false
		return 0, errors.New("read failed: ERROR_ACCESS_TOKEN (block token expired)")
	}
	n := copy(b, r.data[r.offset:])
	r.offset += int64(n)
	return n, nil
}

// ReadAt is Seek and ReadFull, as in the library.
func (r *fakeReader) ReadAt(b []byte, off int64) (int, error) {
	defer r.c.enter()()
	if r.closed {
		return 0, io.ErrClosedPipe
	}
	if off < 0 || off > int64(len(r.data)) {
		return 0, fmt.Errorf("invalid resulting offset: %d", off)
	}
	if skip := off - r.offset; !(r.stream && skip > 0 && skip <= 65536) {
		r.stream = false
	}
	r.offset = off
	r.c.cl.mu.Lock()
	r.c.cl.fetches = append(r.c.cl.fetches, len(b))
	r.c.cl.mu.Unlock()
	n, err := io.ReadFull(readerFunc(r.read), b)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

func (r *fakeReader) Close() error {
	defer r.c.enter()()
	r.closed = true
	r.stream = false
	return nil
}

// fakeWriter is a FileWriter: its bytes show in the file from its first
// Close, and the file is complete once a Close succeeds.
type fakeWriter struct {
	c           *fakeClient
	name        string
	buf         []byte
	replicating int
	closes      int
	// deadlines lists the SetDeadline calls.
	deadlines []time.Time
}

func (w *fakeWriter) SetDeadline(t time.Time) error {
	w.deadlines = append(w.deadlines, t)
	return nil
}

func (w *fakeWriter) Write(b []byte) (int, error) {
	defer w.c.enter()()
	cl := w.c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.failWrites > 0 {
		cl.failWrites--
		return 0, errors.New("write to datanode: broken pipe")
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

func (w *fakeWriter) Close() error {
	defer w.c.enter()()
	cl := w.c.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.completes++
	w.closes++
	if cl.closeErr != nil {
		err := cl.closeErr
		cl.closeErr = nil
		return &os.PathError{Op: "create", Path: w.name, Err: err}
	}
	n, ok := cl.nodes[w.name]
	if !ok {
		return &os.PathError{Op: "create", Path: w.name, Err: &fakeRemote{"org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException", "No lease on " + w.name}}
	}
	if w.closes == 1 {
		n.data = w.buf
	}
	if w.replicating > 0 {
		w.replicating--
		return &os.PathError{Op: "create", Path: w.name, Err: gohdfs.ErrReplicating}
	}
	n.complete = true
	return nil
}

// fakeInfo is an os.FileInfo with the namenode's status as Sys().
type fakeInfo struct {
	name  string
	size  int64
	mode  os.FileMode
	dir   bool
	mtime time.Time
	sys   *gohdfs.FileStatus
}

func (i *fakeInfo) Name() string { return i.name }
func (i *fakeInfo) Size() int64  { return i.size }
func (i *fakeInfo) Mode() os.FileMode {
	if i.dir {
		return i.mode | os.ModeDir
	}
	return i.mode
}
func (i *fakeInfo) ModTime() time.Time { return i.mtime }
func (i *fakeInfo) IsDir() bool        { return i.dir }
func (i *fakeInfo) Sys() any           { return i.sys }

// testFS returns an FS over cl with Options o (sizes only), connected, and
// checks when the test ends that no client was used by two goroutines at
// once.
func testFS(t *testing.T, cl *fakeCluster, o Options) *FS {
	t.Helper()
	st := &settings{authority: "nn.test:8020", log: slog.New(slog.DiscardHandler)}
	if err := st.sizes(o); err != nil {
		t.Fatal(err)
	}
	st.client.Addresses = []string{"nn.test:8020"}
	st.client.User = "trawl"
	f := newFS(st, cl.dial)
	var clock fakeClock
	f.now, f.sleep = clock.now, clock.sleep
	if err := f.connectFirst(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if v := cl.violations.Load(); v > 0 {
			t.Errorf("a client was used by two goroutines at once (%d times)", v)
		}
	})
	return f
}

// fakeClock is a clock that sleeping advances.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Duration
	sleeps []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Unix(1_800_000_000, 0).Add(c.t)
}

func (c *fakeClock) sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t += d
	c.sleeps = append(c.sleeps, d)
}
