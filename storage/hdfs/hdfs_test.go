package hdfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/storagetest"
)

// TestContractFake runs the storage.FS contract suite on the FS over the
// in-memory client, with the default sizes and with sizes small enough
// that the suite's files span many read blocks, evictions and buffer
// flushes, and one client only.
func TestContractFake(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"defaults", Options{}},
		{"small", Options{Clients: 1, ReadBlockSize: 1000, ReadCacheBlocks: 2, FooterSize: 300, WriteBufferSize: 100}},
		{"nofooter", Options{Clients: 2, ReadBlockSize: 4096, ReadCacheBlocks: 1, FooterSize: -1, WriteBufferSize: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) (storage.FS, string) {
				f := testFS(t, newFakeCluster(), c.o)
				if err := f.MkdirAll("/test"); err != nil {
					t.Fatal(err)
				}
				return f, "/test"
			})
		})
	}
}

func writeFile(t *testing.T, f storage.FS, p string, data []byte) {
	t.Helper()
	w, err := f.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func bytesOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestFakeRenameClobbers shows the trap the FS guards against: the
// library's Rename (rename2 with OVERWRITE) replaces an empty directory by
// a directory. The FS refuses it.
func TestFakeRenameClobbers(t *testing.T) {
	cl := newFakeCluster()
	c, _ := cl.dial(t.Context())
	for _, d := range []string{"/crawldb/current", "/staged"} {
		if err := c.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rename("/staged", "/crawldb/current"); err != nil {
		t.Fatalf("the client's Rename should replace an empty directory: %v", err)
	}

	f := testFS(t, newFakeCluster(), Options{})
	for _, d := range []string{"/crawldb/current", "/staged"} {
		if err := f.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	err := f.Rename("/staged", "/crawldb/current")
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("FS.Rename onto an empty directory = %v; want fs.ErrExist", err)
	}
	var le *os.LinkError
	if !errors.As(err, &le) || le.Old != "hdfs://nn.test:8020/staged" || le.New != "hdfs://nn.test:8020/crawldb/current" {
		t.Errorf("error %#v does not name both URIs", err)
	}
	for _, d := range []string{"/crawldb/current", "/staged"} {
		if fi, err := f.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s after the refused rename: %v", d, err)
		}
	}
	// A file onto itself is a no-op, as on a local disk.
	writeFile(t, f, "/x", []byte("x"))
	if err := f.Rename("/x", "/x"); err != nil {
		t.Errorf("Rename of a file onto itself: %v", err)
	}
}

// TestReadBuffering checks the cost of reads in requests to the
// datanodes and streams opened.
func TestReadBuffering(t *testing.T) {
	const bs = 4 << 20
	cl := newFakeCluster()
	f := testFS(t, cl, Options{}) // 4 MiB blocks, 4 cached, 64 KiB footer
	size := 3*bs + 100_000
	data := bytesOf(size)
	writeFile(t, f, "/part-00000.parquet", data)

	reset := func() (fetches []int, streams int) {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		fetches, streams = cl.fetches, cl.streams
		cl.fetches, cl.streams = nil, 0
		return
	}
	reset()
	file, err := f.Open("/part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if fetches, _ := reset(); !slices.Equal(fetches, []int{64 << 10}) {
		t.Fatalf("Open read %v; want the last 64 KiB once", fetches)
	}

	readAt := func(off int64, n int) {
		t.Helper()
		buf := make([]byte, n)
		if got, err := file.ReadAt(buf, off); err != nil || got != n || !bytes.Equal(buf, data[off:off+int64(n)]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, got, err)
		}
	}
	// The footer as parquet reads it: all from the tail.
	readAt(int64(size-8), 8)
	readAt(int64(size-5000-8), 5000)
	if fetches, _ := reset(); len(fetches) != 0 {
		t.Fatalf("footer reads went to the datanodes: %v", fetches)
	}

	// A column chunk read page by page: one request per 4 MiB block.
	for off := int64(1000); off < 1000+6<<20; off += 8 << 10 {
		readAt(off, 8<<10)
	}
	fetches, streams := reset()
	if !slices.Equal(fetches, []int{bs, bs}) {
		t.Fatalf("pages of 6 MiB cost requests %v; want two 4 MiB blocks", fetches)
	}
	if streams != 1 {
		t.Errorf("two consecutive blocks opened %d datanode streams; want 1 (the second reads on)", streams)
	}

	// Two columns read side by side stay cached.
	for k := 0; k < 64; k++ {
		readAt(int64(100+k*1024), 512)      // block 0
		readAt(int64(2*bs+100+k*1024), 512) // block 2
	}
	if fetches, _ = reset(); !slices.Equal(fetches, []int{bs}) {
		t.Fatalf("interleaved columns cost %v; want block 2 once (block 0 cached)", fetches)
	}

	// A read of a block or more goes straight to the datanodes.
	readAt(500, bs+10)
	if fetches, _ = reset(); !slices.Equal(fetches, []int{bs + 10}) {
		t.Fatalf("a large read cost %v; want one request of its size", fetches)
	}

	// The cache holds 4 blocks: 0, 1 and 2 are there; 3, the short last
	// block, is read once; all four then stay.
	for _, blk := range []int64{0, 1, 2, 3, 0, 1, 2, 3} {
		readAt(blk*bs+7, 100)
	}
	if fetches, _ = reset(); !slices.Equal(fetches, []int{100_000}) {
		t.Fatalf("blocks 0-3 twice: requests %v; want only the short last block", fetches)
	}
}

// TestReadBufferingEviction checks the least-recently-used order.
func TestReadBufferingEviction(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{ReadBlockSize: 1000, ReadCacheBlocks: 2, FooterSize: -1})
	data := bytesOf(10_000)
	writeFile(t, f, "/f", data)
	file, err := f.Open("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cl.mu.Lock()
	cl.fetches = nil
	cl.mu.Unlock()
	var order []int64
	for _, blk := range []int64{0, 1, 0, 2, 0, 1} {
		buf := make([]byte, 10)
		if _, err := file.ReadAt(buf, blk*1000+5); err != nil || !bytes.Equal(buf, data[blk*1000+5:blk*1000+15]) {
			t.Fatalf("ReadAt block %d: %v", blk, err)
		}
		order = append(order, blk)
	}
	cl.mu.Lock()
	n := len(cl.fetches)
	cl.mu.Unlock()
	// 0 (miss), 1 (miss), 0 (hit), 2 (miss, evicts 1), 0 (hit), 1 (miss).
	if n != 4 {
		t.Errorf("blocks %v cost %d requests; want 4", order, n)
	}
}

// TestReadRetriesOnNewReader checks that a failed read is tried once more
// on a newly opened reader, and that two failures are an error.
func TestReadRetriesOnNewReader(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{ReadBlockSize: 1000, FooterSize: 100})
	data := bytesOf(5000)
	writeFile(t, f, "/f", data)
	file, err := f.Open("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cl.mu.Lock()
	cl.failReads, cl.reopens = 1, 0
	cl.mu.Unlock()
	buf := make([]byte, 10)
	if _, err := file.ReadAt(buf, 1500); err != nil || !bytes.Equal(buf, data[1500:1510]) {
		t.Fatalf("ReadAt after one failure: %v", err)
	}
	if cl.reopens != 1 {
		t.Errorf("reopened %d times; want 1", cl.reopens)
	}
	cl.mu.Lock()
	cl.failReads = 2
	cl.mu.Unlock()
	_, err = file.ReadAt(buf, 3500)
	if err == nil || !strings.Contains(err.Error(), "ERROR_ACCESS_TOKEN") || !strings.Contains(err.Error(), "hdfs://nn.test:8020/f") {
		t.Fatalf("ReadAt after two failures = %v; want the read error naming the file", err)
	}
	// The next read works again.
	if _, err := file.ReadAt(buf, 3500); err != nil || !bytes.Equal(buf, data[3500:3510]) {
		t.Fatalf("ReadAt after recovery: %v", err)
	}
}

// TestCloseRetriesReplicating checks Close's retries of ErrReplicating:
// with backoff until it completes, and bounded by CloseRetryTimeout.
func TestCloseRetriesReplicating(t *testing.T) {
	cl := newFakeCluster()
	cl.replicating = 3
	f := testFS(t, cl, Options{})
	var clock fakeClock
	f.now, f.sleep = clock.now, clock.sleep
	writeFile(t, f, "/a", []byte("abc"))
	if cl.completes != 4 {
		t.Errorf("Close asked the namenode %d times; want 4", cl.completes)
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}; !slices.Equal(clock.sleeps, want) {
		t.Errorf("backoff %v; want %v", clock.sleeps, want)
	}
	if !cl.nodes["/a"].complete {
		t.Error("file not complete")
	}

	cl.replicating = 1 << 30
	f.st.closeRetryTimeout = 20 * time.Second
	clock.sleeps = nil
	w, err := f.Create("/b")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("b"))
	err = w.Close()
	if !errors.Is(err, gohdfs.ErrReplicating) || !strings.Contains(err.Error(), "hdfs://nn.test:8020/b") {
		t.Fatalf("Close that never completes = %v; want ErrReplicating naming the file", err)
	}
	var total time.Duration
	for _, d := range clock.sleeps {
		total += d
		if d > closeMaxDelay {
			t.Errorf("a backoff of %s exceeds %s", d, closeMaxDelay)
		}
	}
	if total != 20*time.Second {
		t.Errorf("slept %s in all; want the 20s limit exactly", total)
	}
	if err := w.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close = %v; want fs.ErrClosed", err)
	}
}

// TestCloseOtherErrorNoRetry: an error other than ErrReplicating ends
// Close at once.
func TestCloseOtherErrorNoRetry(t *testing.T) {
	cl := newFakeCluster()
	cl.closeErr = &fakeRemote{"org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException", "No lease on /a\n\tat org.apache..."}
	f := testFS(t, cl, Options{})
	w, err := f.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	if err == nil || !strings.Contains(err.Error(), "LeaseExpiredException: No lease on /a") || strings.Contains(err.Error(), "at org.apache") {
		t.Fatalf("Close = %v; want the exception's class and first line", err)
	}
	if cl.completes != 1 {
		t.Errorf("Close asked %d times; want 1", cl.completes)
	}
}

// TestWriteErrorLeavesFileIncomplete: after a failed write, Close fails
// and does not complete the file (a short file must not pass for whole).
func TestWriteErrorLeavesFileIncomplete(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{WriteBufferSize: 10})
	w, err := f.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytesOf(5)); err != nil {
		t.Fatal(err) // buffered
	}
	cl.mu.Lock()
	cl.failWrites = 1
	cl.mu.Unlock()
	if _, err := w.Write(bytesOf(50)); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Write = %v; want the datanode's error", err)
	}
	if _, err := w.Write(bytesOf(1)); err == nil {
		t.Error("Write after a failed write succeeded")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("Close after a failed write = %v; want an error", err)
	}
	if cl.completes != 0 || cl.nodes["/a"].complete {
		t.Error("the file was completed after a failed write")
	}
}

// TestWriteBuffering: small writes reach the datanodes in buffer-sized
// pieces, and a large write goes straight through.
func TestWriteBuffering(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{WriteBufferSize: 1000})
	w, err := f.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	data := bytesOf(10_000)
	for off := 0; off < 5000; off += 10 {
		if _, err := w.Write(data[off : off+10]); err != nil {
			t.Fatal(err)
		}
	}
	fw := func() *fakeWriter {
		// The writer the FS holds.
		return w.(*writer).w.(*fakeWriter)
	}
	if n := len(fw().buf); n != 4000 {
		t.Errorf("after 5000 bytes in 10-byte writes, %d reached the datanodes; want 4000 (4 full buffers, the 5th held)", n)
	}
	if _, err := w.Write(data[5000:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := storage.ReadFile(f, "/a")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile: %d bytes, %v", len(got), err)
	}
}

// TestCreate checks parents, the parent checks and exclusivity.
func TestCreate(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{})
	writeFile(t, f, "/a/b/c", []byte("x"))
	if fi, err := f.Stat("/a/b"); err != nil || !fi.IsDir() {
		t.Fatalf("parent: %v", err)
	}
	_, err := f.Create("/a/b/c")
	if !errors.Is(err, fs.ErrExist) || err.Error() != "create hdfs://nn.test:8020/a/b/c: file already exists" {
		t.Errorf("Create of an existing file = %q; want fs.ErrExist naming the URI", err)
	}
	_, err = f.Create("/a/b/c/d")
	if !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), "parent /a/b/c") {
		t.Errorf("Create under a file = %v; want ENOTDIR naming the parent", err)
	}
	_, err = f.Create("/a/b/c/d/e")
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Create two levels under a file = %v; want ENOTDIR", err)
	}
	_, err = f.Create("relative/path")
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Create of a relative path = %v; want fs.ErrInvalid", err)
	}
}

// TestUnsupported: files and directories flagged as encrypted or
// erasure-coded are refused with errors.ErrUnsupported.
func TestUnsupported(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{})
	writeFile(t, f, "/zone/secret", []byte("ciphertext"))
	writeFile(t, f, "/ec/part", []byte("striped"))
	cl.mu.Lock()
	cl.nodes["/zone"].flags = 2
	cl.nodes["/zone/secret"].flags = 2
	cl.nodes["/ec"].flags = 4
	cl.mu.Unlock()
	_, err := f.Open("/zone/secret")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "encryption zone") {
		t.Errorf("Open of an encrypted file = %v", err)
	}
	_, err = f.Create("/ec/new")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "erasure-coded") {
		t.Errorf("Create in an erasure-coded directory = %v", err)
	}
	_, err = f.Create("/zone/new")
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Create in an encryption zone = %v", err)
	}
	// Stat and ReadDir still work.
	if _, err := f.ReadDir("/zone"); err != nil {
		t.Errorf("ReadDir: %v", err)
	}
}

// TestErrorMapping: namenode exceptions match the fs and syscall errors of
// the same meaning, and read as class and first line.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		exception string
		want      error
	}{
		{"java.io.FileNotFoundException", fs.ErrNotExist},
		{"org.apache.hadoop.security.AccessControlException", fs.ErrPermission},
		{"org.apache.hadoop.fs.FileAlreadyExistsException", fs.ErrExist},
		{"org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException", fs.ErrExist},
		{"org.apache.hadoop.fs.ParentNotDirectoryException", syscall.ENOTDIR},
		{"org.apache.hadoop.fs.PathIsNotEmptyDirectoryException", syscall.ENOTEMPTY},
		{"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException", syscall.EDQUOT},
		{"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException", syscall.EDQUOT},
		{"org.apache.hadoop.fs.InvalidPathException", fs.ErrInvalid},
	}
	for _, c := range cases {
		err := mapError(&os.PathError{Op: "x", Path: "/p", Err: &fakeRemote{c.exception, "the message\nat java..."}})
		if !errors.Is(err, c.want) {
			t.Errorf("%s does not match %v", c.exception, c.want)
		}
		short := c.exception[strings.LastIndexByte(c.exception, '.')+1:]
		if err.Error() != short+": the message" {
			t.Errorf("%s reads %q", c.exception, err)
		}
		var re gohdfs.Error
		if !errors.As(err, &re) {
			t.Errorf("%s: the library's error is not kept", c.exception)
		}
	}
	err := mapError(&fakeRemote{"org.apache.hadoop.hdfs.server.namenode.SafeModeException", "Name node is in safe mode."})
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || err.Error() != "SafeModeException: Name node is in safe mode." {
		t.Errorf("SafeModeException maps to %v", err)
	}

	// Through the FS: a path below a file.
	cl := newFakeCluster()
	f := testFS(t, cl, Options{})
	writeFile(t, f, "/file", nil)
	_, err = f.Stat("/file/below")
	if !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), "hdfs://nn.test:8020/file/below") {
		t.Errorf("Stat below a file = %v", err)
	}
	if err := f.MkdirAll("/file/below"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("MkdirAll below a file = %v", err)
	}
	if err := f.MkdirAll("/file"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("MkdirAll over a file = %v", err)
	}
}

// TestPaths: relative paths are refused, paths are cleaned, and "/" is
// never removed.
func TestPaths(t *testing.T) {
	f := testFS(t, newFakeCluster(), Options{})
	for _, p := range []string{"", "a", "./a", "hdfs://nn/a"} {
		if _, err := f.Stat(p); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v; want fs.ErrInvalid", p, err)
		}
	}
	writeFile(t, f, "/a/b", []byte("x"))
	if fi, err := f.Stat("/a//./c/../b/"); err != nil || fi.Name() != "b" {
		t.Errorf("Stat of an unclean path: %v", err)
	}
	if err := f.RemoveAll("/"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("RemoveAll(/) = %v; want a refusal", err)
	}
	if err := f.RemoveAll("/a/../"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("RemoveAll(/a/../) = %v; want a refusal", err)
	}
	if _, err := f.Stat("/a/b"); err != nil {
		t.Errorf("after refused removals: %v", err)
	}
	if _, err := f.Open("/a"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open of a directory = %v", err)
	}
}

// TestPool: many goroutines share up to Clients clients, each used by one
// goroutine at a time (testFS checks), with files open on each.
func TestPool(t *testing.T) {
	for _, clients := range []int{1, 3} {
		t.Run(fmt.Sprint(clients), func(t *testing.T) {
			cl := newFakeCluster()
			f := testFS(t, cl, Options{Clients: clients, ReadBlockSize: 512, FooterSize: 64, WriteBufferSize: 100})
			data := bytesOf(20_000)
			writeFile(t, f, "/common", data)
			var wg sync.WaitGroup
			for g := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := f.Open("/common")
					if err != nil {
						t.Error(err)
						return
					}
					defer r.Close()
					w, err := f.Create(fmt.Sprintf("/out/%d", g))
					if err != nil {
						t.Error(err)
						return
					}
					buf := make([]byte, 300)
					for k := range 40 {
						off := int64((g*1237 + k*941) % (len(data) - len(buf)))
						if _, err := r.ReadAt(buf, off); err != nil || !bytes.Equal(buf, data[off:off+300]) {
							t.Errorf("ReadAt: %v", err)
							return
						}
						if _, err := w.Write(buf); err != nil {
							t.Error(err)
							return
						}
						if _, err := f.Stat("/common"); err != nil {
							t.Error(err)
						}
					}
					if err := w.Close(); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if cl.dials > clients {
				t.Errorf("%d connections for a pool of %d", cl.dials, clients)
			}
			infos, err := f.ReadDir("/out")
			if err != nil || len(infos) != 12 {
				t.Fatalf("ReadDir: %d, %v", len(infos), err)
			}
		})
	}
}

// TestPoolConnectFailure: when another connection cannot be opened, the
// call waits for an open one, and the slot is tried again only after
// reconnectDelay.
func TestPoolConnectFailure(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{Clients: 2})
	var clock fakeClock
	f.now = clock.now

	// Client 0 is busy; the second connection fails.
	cl.mu.Lock()
	cl.failDial = 1
	cl.mu.Unlock()
	f.slots[0].mu.Lock()
	tried := make(chan struct{})
	cl.dialGate = func() { close(tried) }
	done := make(chan error)
	go func() {
		_, err := f.Stat("/")
		done <- err
	}()
	<-tried
	cl.dialGate = nil
	f.slots[0].mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("Stat while the second connection fails: %v", err)
	}
	if f.slots[1].ready.Load() || cl.dials != 1 {
		t.Fatalf("slot 1 connected: %v, dials %d", f.slots[1].ready.Load(), cl.dials)
	}

	// Within reconnectDelay a busy pool waits instead of dialing.
	f.slots[0].mu.Lock()
	go func() {
		_, err := f.Stat("/")
		done <- err
	}()
	f.slots[0].mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if cl.dials != 1 {
		t.Fatalf("dialed again within reconnectDelay: %d", cl.dials)
	}

	// After it, the slot connects.
	clock.sleep(reconnectDelay)
	f.slots[0].mu.Lock()
	go func() {
		_, err := f.Stat("/")
		done <- err
	}()
	err := <-done
	f.slots[0].mu.Unlock()
	if err != nil || cl.dials != 2 || !f.slots[1].ready.Load() {
		t.Fatalf("after reconnectDelay: %v, dials %d", err, cl.dials)
	}
}

// TestClose: Close closes every client once, waits for calls in
// progress, and later calls fail with fs.ErrClosed.
func TestClose(t *testing.T) {
	cl := newFakeCluster()
	f := testFS(t, cl, Options{Clients: 2})
	writeFile(t, f, "/a", bytesOf(100))
	r, err := f.Open("/a")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.Create("/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if cl.closed != cl.dials {
		t.Errorf("closed %d of %d clients", cl.closed, cl.dials)
	}
	if _, err := f.Stat("/a"); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Stat after Close = %v", err)
	}
	if _, err := r.ReadAt(make([]byte, 200), 0); err != io.EOF {
		// The file is small enough to be in the tail: reads still work.
		t.Errorf("ReadAt of a held tail after Close = %v", err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Errorf("buffered Write after Close = %v", err)
	}
	if err := w.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("writer Close after FS Close = %v; want fs.ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("reader Close after FS Close = %v", err)
	}
}

// TestNotLocker: HDFS has no locks that die with their holder, so the FS
// must not claim storage.Locker (lock files fall back to age limits).
func TestNotLocker(t *testing.T) {
	var fsys storage.FS = testFS(t, newFakeCluster(), Options{})
	if _, ok := fsys.(storage.Locker); ok {
		t.Fatal("the HDFS FS implements storage.Locker")
	}
}

// TestDeadlines: each datanode call has a deadline of IOTimeout, cleared
// when the call returns (an idle writer's heartbeats must get through);
// with a negative IOTimeout no deadline is set.
func TestDeadlines(t *testing.T) {
	for _, timeout := range []time.Duration{time.Minute, -1} {
		t.Run(fmt.Sprint(timeout), func(t *testing.T) {
			f := testFS(t, newFakeCluster(), Options{IOTimeout: timeout, WriteBufferSize: 10, FooterSize: 10, ReadBlockSize: 100})
			w, err := f.Create("/a")
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := w.Write(bytesOf(25)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := f.Open("/a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadAt(make([]byte, 10), 0); err != nil {
				t.Fatal(err)
			}
			wd := w.(*writer).w.(*fakeWriter).deadlines
			rd := r.(*file).r.(*fakeReader).deadlines
			r.Close()
			for what, ds := range map[string][]time.Time{"writer": wd, "reader": rd} {
				if timeout < 0 {
					if len(ds) != 0 {
						t.Errorf("%s: deadlines %v with no IOTimeout", what, ds)
					}
					continue
				}
				if len(ds) < 4 || len(ds)%2 != 0 {
					t.Fatalf("%s: deadlines %v; want pairs of set and clear", what, ds)
				}
				for i, d := range ds {
					if i%2 == 0 && (d.IsZero() || d.Sub(f.now()) != time.Minute) {
						t.Errorf("%s: deadline %d is %v; want now + 1m", what, i, d)
					}
					if i%2 == 1 && !d.IsZero() {
						t.Errorf("%s: deadline %d is %v; want it cleared", what, i, d)
					}
				}
			}
		})
	}
}
