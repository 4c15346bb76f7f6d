//go:build unix

package mapreduce

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/flock"
	"github.com/trawl/trawl/storage"
)

// envKilledJob makes the test binary run killedJobHelper on the directory
// it names.
const envKilledJob = "TRAWL_SCRATCHTEST_DIR"

// killedJobHelper runs, in a child process, a job over DIR/docs whose map
// stops once it has spilled several times: it prints "blocked" and waits
// for its stdin to close (the parent kills it before that).
func killedJobHelper(dir string) {
	const blockAfter = 4000 // docs mapped before blocking
	r := &LocalRunner{TempDir: filepath.Join(dir, "tmp"), MemoryBudget: 64 << 10, Parallelism: 1,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	docs := filepath.Join(dir, "docs")
	job := wordCountJob(docs, filepath.Join(dir, "nolinks"), filepath.Join(dir, "out-killed"), 2, false)
	var n atomic.Int64
	job.Inputs[0] = From(docs, func(t *Task, d Doc, emit Emit[wcValue]) error {
		for _, w := range strings.Fields(d.Text) {
			emit(w, wcValue{N: 1})
		}
		// Spills are written as emit fills the buffer: those of the
		// records before this one are on disk.
		if n.Add(1) == blockAfter {
			os.Stdout.WriteString("blocked\n")
			io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}
		return nil
	})
	_, err := Run(context.Background(), r, job)
	fmt.Printf("error: the job ended without blocking: %v\n", err)
	os.Exit(1)
}

// TestKilledJobScratchRemoved kills a job with SIGKILL while its spill
// files are on disk, then runs another job with the same TempDir: that job
// removes the killed one's scratch directory, and leaves TempDir empty but
// for the (empty) per-user scratch directory.
func TestKilledJobScratchRemoved(t *testing.T) {
	if dir := os.Getenv(envKilledJob); dir != "" {
		killedJobHelper(dir)
	}
	dir := t.TempDir()
	docs := makeDocs(8000, 41)
	writeParts(t, filepath.Join(dir, "docs"), docs, 1)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledJobScratchRemoved$")
	cmd.Env = append(os.Environ(), envKilledJob+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
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
	if line != "blocked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		waited = true
		t.Fatalf("child: %q, %v\n%s", line, err, stderr.String())
	}
	// The directory of the child's spill files.
	var killed string
	var runs []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		runs = findFiles(tmp, ".run")
		if len(runs) >= 2 {
			killed = filepath.Dir(runs[0])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no spill files under %s: %v", tmp, runs)
		}
	}
	if filepath.Base(filepath.Dir(killed)) != userScratch() {
		t.Errorf("spill files in %s, want a directory in %s", killed, userScratch())
	}
	if l, err := flock.TryLock(filepath.Join(killed, "owner.lock")); !errors.Is(err, flock.ErrHeld) {
		if err == nil {
			l.Unlock()
		}
		t.Errorf("the running job's owner.lock: TryLock = %v; want it held", err)
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
	for _, r := range runs {
		if _, err := os.Stat(r); err != nil {
			t.Fatalf("a killed job removed its spill file: %v", err)
		}
	}

	var logs lockedBuffer
	r := &LocalRunner{TempDir: tmp, MemoryBudget: 64 << 10, Parallelism: 2,
		Log: slog.New(slog.NewTextHandler(&logs, nil))}
	res, err := Run(context.Background(), r, wordCountJob(filepath.Join(dir, "docs"), filepath.Join(dir, "nolinks"), filepath.Join(dir, "out"), 2, false))
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Counters.Get("trawl", "spills"); s < 2 {
		t.Fatalf("the second job spilled %d times", s)
	}
	_, all := readOutput(t, filepath.Join(dir, "out"), func(w WordCount) string { return w.Word })
	if want := expectedCounts(docs, nil); len(all) != len(want) {
		t.Fatalf("%d words, want %d", len(all), len(want))
	}
	if _, err := os.Lstat(killed); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the killed job's scratch directory %s is still there: %v", killed, err)
	}
	assertOnlyEmptyScratchRoot(t, tmp)
	l := logs.String()
	if !strings.Contains(l, "removed the directory of a dead job") || !strings.Contains(l, fmt.Sprintf("pid=%d", cmd.Process.Pid)) ||
		!strings.Contains(l, "job=wordcount") {
		t.Fatalf("no log of the removal of the killed job's directory:\n%s", l)
	}
}

// findFiles lists the files under dir whose name ends with suffix.
func findFiles(dir, suffix string) []string {
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, suffix) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// userScratch is the name of this user's scratch directory in a temp dir.
func userScratch() string { return fmt.Sprintf("trawl-scratch-%d", os.Getuid()) }

// assertOnlyEmptyScratchRoot checks that tmp holds one entry, the per-user
// scratch directory, and that it is empty.
func assertOnlyEmptyScratchRoot(t *testing.T, tmp string) {
	t.Helper()
	var found []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if p != tmp {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 || filepath.Base(found[0]) != userScratch() {
		t.Fatalf("%s holds %v, want only the empty per-user scratch directory", tmp, found)
	}
}

// TestStreamingMapScratch runs a streaming map task that spills: it leaves
// nothing in its temp dir but the per-user scratch directory, and removes a
// scratch directory left there by a killed task (its owner.lock unlocked).
func TestStreamingMapScratch(t *testing.T) {
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "docs"), makeDocs(3000, 43), 1)
	tmp := t.TempDir()
	conf := map[string]string{"docs": filepath.Join(dir, "docs"), "links": filepath.Join(dir, "nolinks"),
		"out": filepath.Join(dir, "out"), "reduces": "2", "combine": "false"}
	job, err := testRegistry()["wordcount"](conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lines, err := Splits(ctx, storage.NewResolver(), job)
	if err != nil || len(lines) == 0 {
		t.Fatalf("splits %v, %v", lines, err)
	}
	env := map[string]string{EnvJobName: "wordcount", EnvJobConf: EncodeConf(conf), EnvTaskPartition: "0",
		EnvTaskAttempt: "attempt_1_0001_m_000000_0", EnvJobReduces: "2"}
	runMap := func() {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := RunStreamingTask(ctx, testRegistry(), "map", func(k string) string { return env[k] },
			strings.NewReader(lines[0]+"\n"), &stdout, &stderr, WithTempDir(tmp), WithMemoryBudget(32<<10))
		if err != nil {
			t.Fatalf("map task: %v\n%s", err, stderr.String())
		}
		c := &Counters{}
		if err := ParseCounterLines(&stderr, c); err != nil {
			t.Fatal(err)
		}
		if s := c.Get("trawl", "spills"); s < 2 {
			t.Fatalf("the map task spilled %d times", s)
		}
		if stdout.Len() == 0 {
			t.Fatal("no map output")
		}
	}
	runMap()
	assertOnlyEmptyScratchRoot(t, tmp)

	dead := filepath.Join(tmp, userScratch(), "wordcount-otherhost-1-0badf00d")
	if err := os.Mkdir(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "owner.lock"), []byte(`{"job":"wordcount","pid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "m-00000-0000.run"), make([]byte, 5000), 0o600); err != nil {
		t.Fatal(err)
	}
	runMap()
	if _, err := os.Lstat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dead task's scratch directory is still there: %v", err)
	}
	assertOnlyEmptyScratchRoot(t, tmp)
}

// Blob is the output record of TestSpoolFilesInScratchDir.
type Blob struct {
	Key  string `parquet:"key"`
	Data string `parquet:"data"`
}

// TestSpoolFilesInScratchDir writes reduce output large enough for the
// Parquet writer to spool pages to files, and looks at the files the
// process has open while it does (Linux's /proc/self/fd): the spool files
// are in the job's scratch directory under TempDir, and already unlinked.
func TestSpoolFilesInScratchDir(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "docs"), makeDocs(100, 44), 1)
	tmp := t.TempDir()
	var mu sync.Mutex
	var spools []string
	job := &Job[int64, Blob]{
		Name: "blobs",
		Inputs: []Input[int64]{From(filepath.Join(dir, "docs"), func(t *Task, d Doc, emit Emit[int64]) error {
			emit(fmt.Sprint(d.ID%2), d.ID)
			return nil
		})},
		Reduce: func(t *Task, key string, vs iter.Seq[int64], out func(Blob)) error {
			for range vs {
			}
			r := rand.New(rand.NewPCG(uint64(len(key)), 45))
			raw := make([]byte, 512)
			for range 3000 { // about 3 MB of incompressible text
				for i := range raw {
					raw[i] = byte(r.Uint32())
				}
				out(Blob{Key: key, Data: hex.EncodeToString(raw)})
			}
			open, err := openFiles("trawl-pages-")
			if err != nil {
				return err
			}
			mu.Lock()
			spools = append(spools, open...)
			mu.Unlock()
			return nil
		},
		NumReduce: 1,
		Outputs:   []Output[Blob]{Write[Blob](filepath.Join(dir, "out"))},
	}
	r := &LocalRunner{TempDir: tmp, Parallelism: 1, Log: testLogger(t)}
	if _, err := Run(context.Background(), r, job); err != nil {
		t.Fatal(err)
	}
	if len(spools) == 0 {
		t.Fatal("the writer spooled no page to a file: the test writes too little")
	}
	root := filepath.Join(tmp, userScratch())
	for _, s := range spools {
		// ROOT/JOB-HOST-PID-RAND/trawl-pages-N (deleted)
		f, ok := strings.CutSuffix(s, " (deleted)")
		if !ok || filepath.Dir(filepath.Dir(f)) != root || !strings.HasPrefix(filepath.Base(filepath.Dir(f)), "blobs-") {
			t.Fatalf("spool file %q: want an unlinked file in the job's scratch directory under %s", s, root)
		}
	}
	assertOnlyEmptyScratchRoot(t, tmp)
}

// openFiles lists the targets of this process's open file descriptors
// whose name contains sub.
func openFiles(sub string) ([]string, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.Contains(target, sub) {
			out = append(out, target)
		}
	}
	return out, nil
}
