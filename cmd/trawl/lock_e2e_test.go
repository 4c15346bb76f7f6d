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

func TestLock(t *testing.T) {
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), "http://a.test/\nhttp://b.test/\n")
	r.ok("--crawl", crawl, "inject", "seeds.txt")
	before := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	// A live holder (this test process): every writer fails at once, with
	// exit status 4 and a message naming the holder; --force does not
	// break it; readers are not blocked.
	lock := writeLock(t, crawl, crawldb.LockInfo{Holder: "updatedb", Host: host, PID: os.Getpid(), Start: time.Now().Add(-time.Minute)})
	for _, args := range [][]string{
		{"inject", "seeds.txt"},
		{"inject", "--force", "seeds.txt"},
		{"generate"},
	} {
		res := r.fails(exitLocked, append([]string{"--crawl", crawl}, args...)...)
		assertCleanError(t, res, "locked", `"updatedb"`, "pid "+strconv.Itoa(os.Getpid()), host)
	}
	r.ok("--crawl", crawl, "readdb", "stats")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the live lock was removed: %v", err)
	}
	if got := r.ok("--crawl", crawl, "readdb", "dump", "--format", "csv").stdout; got != before {
		t.Errorf("the CrawlDB changed while locked")
	}

	// A dead holder: reported as stale, and --force breaks it.
	pid := deadPID(t)
	writeLock(t, crawl, crawldb.LockInfo{Holder: "inject", Host: host, PID: pid, Start: time.Now().Add(-time.Minute)})
	res := r.fails(exitLocked, "--crawl", crawl, "inject", "seeds.txt")
	assertCleanError(t, res, "stale", "--force", "pid "+strconv.Itoa(pid))
	writeTestFile(t, filepath.Join(r.dir, "more.txt"), "http://c.test/\n")
	r.ok("--crawl", crawl, "inject", "--force", "more.txt")
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("lock still there after a forced run: %v", err)
	}
	if rep := statsJSON(t, r, crawl); rep.Total != 3 {
		t.Errorf("after forced inject: %d URLs, want 3", rep.Total)
	}

	// A lock from another host older than lock.maxAge is stale; younger, it
	// is not (its holder cannot be checked, so only --force breaks it).
	writeLock(t, crawl, crawldb.LockInfo{Holder: "generate", Host: "elsewhere.invalid", PID: 1, Start: time.Now().Add(-2 * time.Hour)})
	res = r.fails(exitLocked, "--crawl", crawl, "inject", "more.txt")
	assertCleanError(t, res, "elsewhere.invalid", "--force")
	if strings.Contains(res.stderr, "stale (") {
		t.Errorf("a 2h-old remote lock is stale with the 24h default:\n%s", res.stderr)
	}
	r.env = []string{"TRAWL_LOCK_MAX_AGE=1h"}
	res = r.fails(exitLocked, "--crawl", crawl, "inject", "more.txt")
	assertCleanError(t, res, "stale", "elsewhere.invalid")
	r.ok("--crawl", crawl, "inject", "--force", "more.txt")
}
