package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/storage"
)

// writeLock writes a CrawlDB lock file as another process would have.
func writeLock(t *testing.T, crawl string, info crawldb.LockInfo) string {
	t.Helper()
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(crawl, "crawldb", crawldb.LockFile)
	writeTestFile(t, p, string(b))
	return p
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Pid()
}

// TestLock checks the CrawlDB lock on the local disk, an OS lock held for
// the holder's life: while a live process holds it every writer fails at
// once with exit status 4 and a message naming the holder, --force does
// not break it, and readers are not blocked; the lock file a dead holder
// left (a kill -9) stops nobody, with no --force. (The lock-file rules of
// file systems without OS locks, stale holders and lock.maxAge, are tested
// in package crawldb.)
func TestLock(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), "http://a.test/\nhttp://b.test/\n")
	r.ok("--crawl", crawl, "inject", "seeds.txt")
	before := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	// A live holder: this test process.
	held, err := crawldb.Lock(storage.NewLocal(), filepath.Join(crawl, "crawldb"), "updatedb", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inject", "seeds.txt"},
		{"inject", "--force", "seeds.txt"},
		{"generate"},
	} {
		res := r.fails(exitLocked, append([]string{"--crawl", crawl}, args...)...)
		assertCleanError(t, res, "locked", `"updatedb"`, "pid "+strconv.Itoa(os.Getpid()), host, "running")
	}
	r.ok("--crawl", crawl, "readdb", "stats")
	if got := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout; got != before {
		t.Errorf("the CrawlDB changed while locked")
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}

	// A dead holder's lock file: the next writer takes the lock over,
	// without --force, and says whose it was.
	pid := deadPID(t)
	lock := writeLock(t, crawl, crawldb.LockInfo{Holder: "inject", Host: host, PID: pid, Start: time.Now().Add(-time.Minute)})
	writeTestFile(t, filepath.Join(r.dir, "more.txt"), "http://c.test/\n")
	res := r.ok("--crawl", crawl, "inject", "more.txt")
	if !strings.Contains(res.stderr, "taking over a lock") || !strings.Contains(res.stderr, strconv.Itoa(pid)) {
		t.Errorf("the take-over of the dead holder's lock was not logged:\n%s", res.stderr)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("lock still there after the run: %v", err)
	}
	if rep := statsJSON(t, r, crawl); rep.Total != 3 {
		t.Errorf("after the inject: %d URLs, want 3", rep.Total)
	}
}
