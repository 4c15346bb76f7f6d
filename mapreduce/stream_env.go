package mapreduce

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Job properties a submitter may set for the engine of its streaming tasks,
// and the environment variables Streaming turns them into (every
// character but letters and digits becomes '_'). They win over the task
// entry's own options, so that a task takes its engine settings from the
// job configuration rather than from wherever it runs.
const (
	// PropEngineMemory bounds a map task's sort buffer, in bytes
	// (WithMemoryBudget).
	PropEngineMemory = "trawl.engine.memory"
	EnvEngineMemory  = "trawl_engine_memory"
	// PropTaskTempDir is the directory of a task's spills and spool files
	// (WithTempDir), a local directory on the node running the task.
	PropTaskTempDir = "trawl.task.tempDir"
	EnvTaskTempDir  = "trawl_task_tempDir"
	// PropTaskUser is the HDFS user the tasks act as without Kerberos:
	// the submitter's, so that a job's files belong to whoever submitted
	// it, not to whoever runs the containers. The task entry reads it.
	PropTaskUser = "trawl.task.user"
	EnvTaskUser  = "trawl_task_user"
)

// applyTaskEnv applies the engine properties of the job configuration
// that the task's environment carries.
func applyTaskEnv(o *streamOpts, env func(string) string) error {
	if v := env(EnvEngineMemory); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1<<20 {
			return fmt.Errorf("%s=%q: want a byte count of at least 1MiB", EnvEngineMemory, v)
		}
		o.budget = n
	}
	if v := env(EnvTaskTempDir); v != "" {
		o.tempDir = v
	}
	return nil
}

// trimKeyOnlyTab removes the TAB Hadoop Streaming appends to a reduce
// input line whose map output line was all key: a submitter that makes
// the whole PPPPP<TAB>KEY<TAB>VALUE line the key (so that the shuffle
// sorts whole lines) has its reducers read "LINE<TAB>", the key, the
// separator and an empty value. A streaming line has exactly two TABs
// (EscapeField leaves none in a key or value), so a third one at the end
// is that separator.
func trimKeyOnlyTab(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\t' && bytes.Count(line, []byte{'\t'}) == 3 {
		return line[:n-1]
	}
	return line
}

// statusInterval is the period of a streaming task's status lines.
const statusInterval = time.Minute

// heartbeat writes a reporter:status line to w every interval until the
// returned function is called: Hadoop kills a task that reports no
// progress for mapreduce.task.timeout, and a task that reads and sorts a
// large split, or writes its files directly (map-only jobs), prints
// nothing else for a long time.
func heartbeat(w io.Writer, job, id string, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				fmt.Fprintf(w, "reporter:status:trawl %s %s running for %s\n", job, id, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// syncWriter serializes the writes of a task's logger, counter lines and
// status lines to its stderr.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
