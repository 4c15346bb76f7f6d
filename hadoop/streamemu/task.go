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

// taskAttempt is one attempt of a task: its ids and directories, its
// process, and what it produced.
type taskAttempt struct {
	r         *run
	kind, i   int    // the task: kind 0 map, 1 reduce; i its number
	id        string // Hadoop's attempt id, attempt_...
	taskID    string
	container string // the container's working directory
	logDir    string
	work      string // the attempt's work output directory
	failFirst bool   // this attempt fails as EnvFailFirstAttempts asks

	res       *attemptResult
	active    atomic.Int64 // UnixNano of the task's last sign of life
	sawOutput atomic.Bool
	halfFed   chan struct{} // closed when a failing reduce attempt got half its input

	mu       sync.Mutex
	ioErr    error  // the first error reading the task's output
	killedBy string // why the emulator killed the process
}

// attempt runs one attempt of task i of kind (0 map, 1 reduce) and
// commits it if it succeeds (FileOutputCommitter's task commit: its work
// directory becomes the task's committed directory; a map's output
// becomes available to the reduces). A failed attempt's work directory is
// removed.
func (r *run) attempt(ctx context.Context, kind, i, a int) (err error) {
	ta := r.newAttempt(kind, i, a)
	defer os.RemoveAll(ta.container)
	defer func() {
		if err != nil {
			r.abortAttempt(ctx, ta, err)
		}
	}()
	if err := ta.localize(); err != nil {
		return err
	}
	cmd, err := ta.command()
	if err != nil {
		return err
	}
	var input []record
	if kind == 1 {
		if input, err = r.reduceInput(i); err != nil {
			return fmt.Errorf("Error: reading the map outputs: %w", err)
		}
	}
	code, err := ta.run(ctx, cmd, input)
	if err != nil {
		return err
	}
	if err := ta.outcome(ctx, code); err != nil {
		return err
	}
	return r.commitTask(kind, i, ta.work, ta.res)
}

// newAttempt counts a launched attempt a of task i of kind and names its
// container and directories.
func (r *run) newAttempt(kind, i, a int) *taskAttempt {
	ph := []string{"m", "r"}[kind]
	id := fmt.Sprintf("attempt_%d_0001_%s_%06d_%d", r.ts, ph, i, a)
	r.mu.Lock()
	r.fw.launched[kind]++
	r.containerSeq++
	seq := r.containerSeq
	r.mu.Unlock()
	ta := &taskAttempt{r: r, kind: kind, i: i, id: id, taskID: r.taskID(kind, i),
		container: filepath.Join(r.appDir, "containers", fmt.Sprintf("container_%d_0001_01_%06d", r.ts, seq+1)),
		logDir:    filepath.Join(r.appDir, "logs", id),
		work:      filepath.Join(r.output, "_temporary", "1", "_temporary", id),
		failFirst: r.failFirst && a == 0,
		res:       &attemptResult{counters: map[string]map[string]int64{}},
		halfFed:   make(chan struct{})}
	if kind == 0 && !r.mapOnly {
		ta.res.parts = make([][]record, r.reduces)
	}
	return ta
}

// abortAttempt removes a failed attempt's work directory (abortTask) and
// counts it as failed, or as killed if the job was.
func (r *run) abortAttempt(ctx context.Context, ta *taskAttempt, err error) {
	_ = os.RemoveAll(ta.work) // abortTask
	r.mu.Lock()
	if ctx.Err() != nil {
		r.fw.killed[ta.kind]++
	} else {
		r.fw.failed[ta.kind]++
	}
	r.mu.Unlock()
	if ctx.Err() == nil {
		r.logf("INFO", "mapreduce.Job", "Task Id : %s, Status : FAILED", ta.id)
		fmt.Fprintf(r.errw, "%v\n", err)
	}
}

// localize makes the attempt's directories and links the job's -files
// into its container.
func (ta *taskAttempt) localize() error {
	for _, d := range []string{filepath.Join(ta.container, "tmp"), ta.logDir, ta.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("Error: %w", err)
		}
	}
	for _, f := range ta.r.files {
		if err := os.Symlink(f.src, filepath.Join(ta.container, f.name)); err != nil {
			return fmt.Errorf("Error: localizing %s: %w", f.name, err)
		}
	}
	return nil
}

// command is the task's -mapper or -reducer command, run in the
// container; a relative program is looked for there, then in PATH.
func (ta *taskAttempt) command() (*exec.Cmd, error) {
	argv := ta.argv()
	prog := argv[0]
	if !filepath.IsAbs(prog) {
		if p := filepath.Join(ta.container, prog); fileExists(p) {
			prog = p
		} else if p, err := exec.LookPath(prog); err == nil {
			prog = p
		} else {
			return nil, fmt.Errorf("Error: java.io.IOException: Cannot run program %q: error=2, No such file or directory", argv[0])
		}
	}
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Dir = ta.container
	cmd.Env = ta.r.taskEnv(ta.kind, ta.i, ta.id, ta.taskID, ta.container, ta.work)
	return cmd, nil
}

// argv is the task's -mapper or -reducer command line.
func (ta *taskAttempt) argv() []string {
	if ta.kind == 1 {
		return ta.r.redCmd
	}
	return ta.r.mapCmd
}

// run runs the task's process: feeds it its input (a map's split lines,
// a reduce's records), reads its output and stderr, and kills it when
// the job is killed, the task times out or an emulated failure is due.
// It returns the process's exit code (128+signal if a signal ended it).
func (ta *taskAttempt) run(ctx context.Context, cmd *exec.Cmd, input []record) (int, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("Error: java.io.IOException: Cannot run program %q: %v", ta.argv()[0], err)
	}
	ta.touch()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		ta.setIOErr(ta.r.readStderr(stderr, filepath.Join(ta.logDir, "stderr"), ta.res, ta.touch))
	}()
	go func() {
		defer readers.Done()
		ta.setIOErr(ta.r.readStdout(ta.kind, ta.i, stdout, ta.work, ta.res, ta.touch, &ta.sawOutput))
	}()
	var feeder sync.WaitGroup
	feeder.Add(1)
	go func() {
		defer feeder.Done()
		ta.feed(stdin, input)
	}()
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		ta.watch(ctx, cmd, stop)
	}()
	readers.Wait()
	werr := cmd.Wait()
	close(stop)
	watch.Wait()
	feeder.Wait()

	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	} else if werr != nil {
		return 0, fmt.Errorf("Error: %w", werr)
	}
	return 0, nil
}

// touch records a sign of life of the task.
func (ta *taskAttempt) touch() { ta.active.Store(time.Now().UnixNano()) }

// setIOErr keeps err if it is the first error reading the task's output.
func (ta *taskAttempt) setIOErr(err error) {
	if err == nil {
		return
	}
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.ioErr == nil {
		ta.ioErr = err
	}
}

// kill kills the task's process for why ("killed", "timeout",
// "emulated"), unless the emulator killed it already.
func (ta *taskAttempt) kill(cmd *exec.Cmd, why string) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.killedBy == "" {
		ta.killedBy = why
		_ = cmd.Process.Kill()
	}
}

// feed writes the task's input to stdin and closes it: a map's split
// lines (OFFSET<TAB>LINE, as NLineInputFormat gives them), or a reduce's
// records (KEY<TAB>VALUE), counting its groups. A first attempt that is
// to fail stops half way through a reduce's input and closes halfFed.
func (ta *taskAttempt) feed(stdin io.WriteCloser, input []record) {
	defer stdin.Close()
	res := ta.res
	w := bufio.NewWriter(stdin)
	if ta.kind == 0 {
		sp := ta.r.splits[ta.i]
		for k, l := range sp.lines {
			fmt.Fprintf(w, "%d\t%s\n", sp.offsets[k], l)
		}
		res.inRecs = int64(len(sp.lines))
		_ = w.Flush()
		return
	}
	var prev []byte
	for k, rec := range input {
		if ta.failFirst && k == len(input)/2 {
			_ = w.Flush()
			close(ta.halfFed)
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
			ta.touch()
		}
	}
	res.inRecs = int64(len(input))
	if ta.failFirst && len(input) == 0 {
		close(ta.halfFed)
	}
	_ = w.Flush()
}

// watch kills the task's process, until stop is closed, when the job is
// killed, when the task has been silent longer than the task timeout, or
// when a first attempt that is to fail has started writing output (a
// map) or got half its input (a reduce).
func (ta *taskAttempt) watch(ctx context.Context, cmd *exec.Cmd, stop <-chan struct{}) {
	r := ta.r
	tk := time.NewTicker(5 * time.Millisecond)
	defer tk.Stop()
	started := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			ta.kill(cmd, "killed")
			return
		case <-ta.halfFed:
			ta.kill(cmd, "emulated")
			return
		case <-tk.C:
		}
		if r.timeout > 0 && time.Since(time.Unix(0, ta.active.Load())) > r.timeout {
			ta.kill(cmd, "timeout")
			return
		}
		if ta.failFirst && ta.kind == 0 && (ta.sawOutput.Load() || hasFiles(ta.work) || time.Since(started) > 10*time.Second) {
			ta.kill(cmd, "emulated")
			return
		}
	}
}

// outcome is the error of an attempt whose process exited with code, as
// Hadoop reports it, or nil if the attempt succeeded.
func (ta *taskAttempt) outcome(ctx context.Context, code int) error {
	ta.mu.Lock()
	why, ioErr := ta.killedBy, ta.ioErr
	ta.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case why == "timeout":
		return fmt.Errorf("AttemptID:%s Timed out after %d secs", ta.id, int(ta.r.timeout.Seconds()))
	case why == "emulated" || (ta.failFirst && code == 0):
		return fmt.Errorf("Error: emulated failure (%s=1): the first attempt's process was killed (exit code %d) and its output discarded", EnvFailFirstAttempts, code)
	case code != 0:
		kind := []string{"Mapper", "Reducer"}[ta.kind]
		return fmt.Errorf("Error: java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code %d\n"+
			"\tat org.apache.hadoop.streaming.PipeMapRed.waitOutputThreads(PipeMapRed.java:326)\n"+
			"\tat org.apache.hadoop.streaming.PipeMapRed.mapRedFinished(PipeMapRed.java:539)\n"+
			"\tat org.apache.hadoop.streaming.Pipe%s.close(Pipe%s.java:130)", code, kind, kind)
	case ioErr != nil:
		return fmt.Errorf("Error: %w", ioErr)
	}
	return nil
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
