//go:build unix

package streamemu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// record is one map output record.
type record struct {
	key, value []byte
	seq        int // order of emission
}

// attemptResult is what a task attempt produced.
type attemptResult struct {
	counters map[string]map[string]int64
	order    []string
	parts    [][]record // map output by partition (reduce jobs' maps)
	outRecs  int64      // lines written to the task's output file
	inRecs   int64      // records fed to the task
	groups   int64      // reduce input groups fed
	outBytes int64
}

// attempt runs one attempt of task i of kind (0 map, 1 reduce) and
// commits it if it succeeds (FileOutputCommitter's task commit: its work
// directory becomes the task's committed directory; a map's output
// becomes available to the reduces). A failed attempt's work directory is
// removed.
func (r *run) attempt(ctx context.Context, kind, i, a int) (err error) {
	ph := []string{"m", "r"}[kind]
	attemptID := fmt.Sprintf("attempt_%d_0001_%s_%06d_%d", r.ts, ph, i, a)
	taskID := r.taskID(kind, i)
	r.mu.Lock()
	r.fw.launched[kind]++
	r.containerSeq++
	seq := r.containerSeq
	r.mu.Unlock()
	container := filepath.Join(r.appDir, "containers", fmt.Sprintf("container_%d_0001_01_%06d", r.ts, seq+1))
	logDir := filepath.Join(r.appDir, "logs", attemptID)
	work := filepath.Join(r.output, "_temporary", "1", "_temporary", attemptID)
	defer os.RemoveAll(container)
	defer func() {
		if err != nil {
			_ = os.RemoveAll(work) // abortTask
			r.mu.Lock()
			if ctx.Err() != nil {
				r.fw.killed[kind]++
			} else {
				r.fw.failed[kind]++
			}
			r.mu.Unlock()
			if ctx.Err() == nil {
				r.logf("INFO", "mapreduce.Job", "Task Id : %s, Status : FAILED", attemptID)
				fmt.Fprintf(r.errw, "%v\n", err)
			}
		}
	}()
	for _, d := range []string{filepath.Join(container, "tmp"), logDir, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("Error: %w", err)
		}
	}
	for _, f := range r.files {
		if err := os.Symlink(f.src, filepath.Join(container, f.name)); err != nil {
			return fmt.Errorf("Error: localizing %s: %w", f.name, err)
		}
	}
	argv := r.mapCmd
	if kind == 1 {
		argv = r.redCmd
	}
	prog := argv[0]
	if !filepath.IsAbs(prog) {
		if p := filepath.Join(container, prog); fileExists(p) {
			prog = p
		} else if p, err := exec.LookPath(prog); err == nil {
			prog = p
		} else {
			return fmt.Errorf("Error: java.io.IOException: Cannot run program %q: error=2, No such file or directory", argv[0])
		}
	}
	var input []record
	if kind == 1 {
		if input, err = r.reduceInput(i); err != nil {
			return fmt.Errorf("Error: reading the map outputs: %w", err)
		}
	}

	cmd := exec.Command(prog, argv[1:]...)
	cmd.Dir = container
	cmd.Env = r.taskEnv(kind, i, attemptID, taskID, container, work)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("Error: java.io.IOException: Cannot run program %q: %v", argv[0], err)
	}
	var active atomic.Int64
	touch := func() { active.Store(time.Now().UnixNano()) }
	touch()
	res := &attemptResult{counters: map[string]map[string]int64{}}
	if kind == 0 && !r.mapOnly {
		res.parts = make([][]record, r.reduces)
	}
	var sawOutput atomic.Bool
	var readers sync.WaitGroup
	readers.Add(2)
	var errMu sync.Mutex
	var ioErr error
	setErr := func(e error) {
		errMu.Lock()
		if ioErr == nil {
			ioErr = e
		}
		errMu.Unlock()
	}
	go func() {
		defer readers.Done()
		if err := r.readStderr(stderr, filepath.Join(logDir, "stderr"), res, touch); err != nil {
			setErr(err)
		}
	}()
	go func() {
		defer readers.Done()
		if err := r.readStdout(kind, i, stdout, work, res, touch, &sawOutput); err != nil {
			setErr(err)
		}
	}()

	failFirst := r.failFirst && a == 0
	var killMu sync.Mutex
	killedBy := "" // why the emulator killed the process
	kill := func(why string) {
		killMu.Lock()
		defer killMu.Unlock()
		if killedBy == "" {
			killedBy = why
			_ = cmd.Process.Kill()
		}
	}
	halfFed := make(chan struct{})
	var feeder sync.WaitGroup
	feeder.Add(1)
	go func() {
		defer feeder.Done()
		defer stdin.Close()
		w := bufio.NewWriter(stdin)
		if kind == 0 {
			sp := r.splits[i]
			for k, l := range sp.lines {
				fmt.Fprintf(w, "%d\t%s\n", sp.offsets[k], l)
			}
			res.inRecs = int64(len(sp.lines))
			_ = w.Flush()
			return
		}
		var prev []byte
		for k, rec := range input {
			if failFirst && k == len(input)/2 {
				_ = w.Flush()
				close(halfFed)
				return
			}
			if k == 0 || !bytes.Equal(rec.key, prev) {
				res.groups++
			}
			prev = rec.key
			w.Write(rec.key)
			w.WriteByte('\t')
			w.Write(rec.value)
			if err := w.WriteByte('\n'); err != nil {
				return
			}
			if w.Buffered() == 0 {
				touch()
			}
		}
		res.inRecs = int64(len(input))
		if failFirst && len(input) == 0 {
			close(halfFed)
		}
		_ = w.Flush()
	}()
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		started := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				kill("killed")
				return
			case <-halfFed:
				kill("emulated")
				return
			case <-tk.C:
			}
			if r.timeout > 0 && time.Since(time.Unix(0, active.Load())) > r.timeout {
				kill("timeout")
				return
			}
			if failFirst && kind == 0 && (sawOutput.Load() || hasFiles(work) || time.Since(started) > 10*time.Second) {
				kill("emulated")
				return
			}
		}
	}()
	readers.Wait()
	werr := cmd.Wait()
	close(stop)
	watch.Wait()
	feeder.Wait()

	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	} else if werr != nil {
		return fmt.Errorf("Error: %w", werr)
	}
	killMu.Lock()
	why := killedBy
	killMu.Unlock()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case why == "timeout":
		return fmt.Errorf("AttemptID:%s Timed out after %d secs", attemptID, int(r.timeout.Seconds()))
	case why == "emulated" || (failFirst && code == 0):
		return fmt.Errorf("Error: emulated failure (%s=1): the first attempt's process was killed (exit code %d) and its output discarded", EnvFailFirstAttempts, code)
	case code != 0:
		return fmt.Errorf("Error: java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code %d\n"+
			"\tat org.apache.hadoop.streaming.PipeMapRed.waitOutputThreads(PipeMapRed.java:326)\n"+
			"\tat org.apache.hadoop.streaming.PipeMapRed.mapRedFinished(PipeMapRed.java:539)\n"+
			"\tat org.apache.hadoop.streaming.Pipe%s.close(Pipe%s.java:130)", code, []string{"Mapper", "Reducer"}[kind], []string{"Mapper", "Reducer"}[kind])
	case ioErr != nil:
		return fmt.Errorf("Error: %w", ioErr)
	}
	return r.commitTask(kind, i, work, res)
}

// commitTask makes a successful attempt's output the task's.
func (r *run) commitTask(kind, i int, work string, res *attemptResult) error {
	if kind == 0 && !r.mapOnly {
		files, err := r.writeMapOutput(i, res.parts)
		if err != nil {
			return fmt.Errorf("Error: map output: %w", err)
		}
		r.mu.Lock()
		if r.mapOut == nil {
			r.mapOut = make([][]*os.File, len(r.splits))
		}
		r.mapOut[i] = files
		r.mu.Unlock()
	}
	committed := filepath.Join(r.output, "_temporary", "1", r.taskID(kind, i))
	if err := os.Rename(work, committed); err != nil {
		return fmt.Errorf("Error: task commit: %w", err)
	}
	r.addCounters(res.counters, res.order)
	r.mu.Lock()
	if kind == 0 {
		r.fw.mapIn += res.inRecs
		if r.mapOnly {
			r.fw.mapOut += res.outRecs
		} else {
			for _, p := range res.parts {
				r.fw.mapOut += int64(len(p))
				r.fw.spilled += int64(len(p))
			}
			r.fw.mapOutBytes += res.outBytes
		}
	} else {
		r.fw.redIn += res.inRecs
		r.fw.redGroups += res.groups
		r.fw.redOut += res.outRecs
		r.fw.spilled += res.inRecs
	}
	r.mu.Unlock()
	return nil
}

// taskEnv is a task attempt's environment: PATH, HOME and USER of the
// emulator's, TMPDIR in the container, the mapreduce.{map,reduce}.env
// variables, then every job property with each character that is not a
// letter or digit turned into '_' (Streaming's rule), then -cmdenv.
func (r *run) taskEnv(kind, i int, attemptID, taskID, container, work string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME"} {
		if v, ok := r.env[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "TMPDIR="+filepath.Join(container, "tmp"), "PWD="+container,
		"CONTAINER_ID="+filepath.Base(container))
	env = append(env, r.extraEnv[kind]...)
	conf := maps.Clone(r.o.conf)
	maps.Copy(conf, map[string]string{
		"mapreduce.job.id":                            r.jobID,
		"mapreduce.task.id":                           taskID,
		"mapreduce.task.attempt.id":                   attemptID,
		"mapreduce.task.partition":                    strconv.Itoa(i),
		"mapreduce.task.ismap":                        strconv.FormatBool(kind == 0),
		"mapreduce.task.output.dir":                   "file:" + work,
		"mapreduce.output.fileoutputformat.outputdir": "file:" + r.output,
		"mapreduce.job.reduces":                       strconv.Itoa(r.reduces),
	})
	if kind == 0 {
		sp := r.splits[i]
		conf["mapreduce.map.input.file"] = "file:" + sp.file
		conf["mapreduce.map.input.start"] = strconv.FormatInt(sp.offsets[0], 10)
	}
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		env = append(env, safeEnvName(k)+"="+conf[k])
	}
	return append(env, r.o.cmdenv...)
}

// safeEnvName is Streaming's PipeMapRed.safeEnvVarName.
func safeEnvName(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			b[i] = '_'
		}
	}
	return string(b)
}

// readStderr reads a task's stderr: reporter:counter lines count (for the
// attempt), reporter:status lines are dropped, and the rest goes to the
// attempt's log file.
func (r *run) readStderr(rd io.Reader, logFile string, res *attemptResult, touch func()) error {
	f, err := os.Create(logFile)
	if err != nil {
		_, _ = io.Copy(io.Discard, rd)
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(rd, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			touch()
			switch {
			case strings.HasPrefix(line, "reporter:counter:"):
				fs := strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "reporter:counter:")), ",")
				if len(fs) == 3 {
					if n, perr := strconv.ParseInt(fs[2], 10, 64); perr == nil {
						if res.counters[fs[0]] == nil {
							res.counters[fs[0]] = map[string]int64{}
							res.order = append(res.order, fs[0])
						}
						res.counters[fs[0]][fs[1]] += n
						break
					}
				}
				f.WriteString(line)
			case strings.HasPrefix(line, "reporter:status:"):
			default:
				f.WriteString(line)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readStdout reads a task's output lines: a map's of a job with reduces
// into its partitions, the others into the task's output file part-NNNNN
// in its work directory (TextOutputFormat: key, TAB, value).
func (r *run) readStdout(kind, i int, rd io.Reader, work string, res *attemptResult, touch func(), saw *atomic.Bool) error {
	br := bufio.NewReaderSize(rd, 256<<10)
	var out *bufio.Writer
	if kind == 1 || r.mapOnly {
		f, err := os.Create(filepath.Join(work, fmt.Sprintf("part-%05d", i)))
		if err != nil {
			_, _ = io.Copy(io.Discard, rd)
			return err
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
	}
	seq := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			saw.Store(true)
			touch()
			line = bytes.TrimSuffix(line, []byte{'\n'})
			key, val := splitKeyValue(line, r.mapSep, r.keyFields)
			if out != nil {
				out.Write(key)
				out.WriteByte('\t')
				out.Write(val)
				out.WriteByte('\n')
				res.outRecs++
			} else {
				p := r.part(key, r.reduces)
				res.parts[p] = append(res.parts[p], record{key: bytes.Clone(key), value: bytes.Clone(val), seq: seq})
				res.outBytes += int64(len(key) + len(val))
				seq++
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// writeMapOutput sorts a map's output partitions by key (as the map side
// does; records with equal keys in no particular order: here, the latest
// first) and writes each to a file of its own.
func (r *run) writeMapOutput(i int, parts [][]record) ([]*os.File, error) {
	dir := filepath.Join(r.appDir, "mapout")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := make([]*os.File, len(parts))
	for p, recs := range parts {
		sort.SliceStable(recs, func(a, b int) bool {
			if c := bytes.Compare(recs[a].key, recs[b].key); c != 0 {
				return c < 0
			}
			return recs[a].seq > recs[b].seq
		})
		f, err := os.CreateTemp(dir, fmt.Sprintf("m%06d-p%05d-", i, p))
		if err != nil {
			return nil, err
		}
		files[p] = f
		w := bufio.NewWriter(f)
		var n [binary.MaxVarintLen64]byte
		for _, rec := range recs {
			w.Write(n[:binary.PutUvarint(n[:], uint64(len(rec.key)))])
			w.Write(rec.key)
			w.Write(n[:binary.PutUvarint(n[:], uint64(len(rec.value)))])
			w.Write(rec.value)
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// reduceInput is reduce p's input: the committed map outputs of partition
// p merged by key; records with equal keys come in no particular order
// (here: later maps first, each map's in its own order).
func (r *run) reduceInput(p int) ([]record, error) {
	r.mu.Lock()
	outs := r.mapOut
	r.mu.Unlock()
	var all []record
	var mapOf []int
	for m := range outs {
		if outs[m] == nil {
			continue
		}
		f := outs[m][p]
		data, err := os.ReadFile(f.Name())
		if err != nil {
			return nil, err
		}
		for len(data) > 0 {
			var rec record
			for _, dst := range []*[]byte{&rec.key, &rec.value} {
				n, k := binary.Uvarint(data)
				if k <= 0 || uint64(len(data)-k) < n {
					return nil, errors.New("corrupt map output")
				}
				*dst = data[k : k+int(n)]
				data = data[k+int(n):]
			}
			rec.seq = len(all)
			all = append(all, rec)
			mapOf = append(mapOf, m)
		}
	}
	idx := make([]int, len(all))
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := all[idx[a]], all[idx[b]]
		if c := bytes.Compare(ra.key, rb.key); c != 0 {
			return c < 0
		}
		return mapOf[idx[a]] > mapOf[idx[b]]
	})
	out := make([]record, len(all))
	for k, j := range idx {
		out[k] = all[j]
	}
	return out, nil
}

// closeMapOutputs removes the map output files.
func (r *run) closeMapOutputs() {
	for _, fs := range r.mapOut {
		for _, f := range fs {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// hasFiles reports whether dir holds a file at any depth.
func hasFiles(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
