//go:build unix

package streamemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The class names the emulator accepts.
var (
	nlineFormats = []string{"org.apache.hadoop.mapred.lib.NLineInputFormat", "org.apache.hadoop.mapreduce.lib.input.NLineInputFormat"}
	keyFieldPart = []string{"org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner", "org.apache.hadoop.mapreduce.lib.partition.KeyFieldBasedPartitioner"}
)

// split is one map task's input: lines of the input files, each with its
// byte offset in its file.
type split struct {
	file    string
	offsets []int64
	lines   []string
}

// fileLink is a -files entry: a local file and its link name.
type fileLink struct{ src, name string }

// run is one `hadoop jar` job.
type run struct {
	o      *options
	env    map[string]string
	stdout io.Writer
	errw   *lockedWriter

	ts           int64
	jobID, appID string
	splits       []split
	outURI       string // the -output as given
	output       string // local path
	reduces      int
	mapOnly      bool
	mapCmd       []string
	redCmd       []string
	part         partitioner
	keyFields    int
	mapSep       byte
	maxAttempts  [2]int // map, reduce
	timeout      time.Duration
	countersMax  int
	failFirst    bool
	slots        int
	files        []fileLink
	extraEnv     [2][]string // map, reduce: mapreduce.*.env
	appDir       string
	containerSeq int

	mu        sync.Mutex
	counters  map[string]map[string]int64 // of successful attempts
	order     []string                    // user groups in order of appearance
	fw        frameworkCounters
	done      [2]int // tasks done: map, reduce
	lastPct   string
	failedOne string // the task that failed the job
	tooMany   string
	mapOut    [][]*os.File // map output per map task and partition (reduce jobs)
}

// frameworkCounters are the Hadoop counters the emulator keeps.
type frameworkCounters struct {
	launched, failed, killed          [2]int64
	mapIn, mapOut, mapOutBytes        int64
	redGroups, redIn, redOut, spilled int64
}

// lockedWriter serializes the job's and its goroutines' lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newRun checks the job `hadoop jar` was given (options o, environment
// e) and reads its splits; the job's lines go to stdout and stderr.
func newRun(o *options, e map[string]string, stdout, stderr io.Writer) (*run, error) {
	r := &run{o: o, env: e, stdout: stdout, errw: &lockedWriter{w: stderr}, ts: time.Now().UnixMilli(),
		counters: map[string]map[string]int64{}, slots: 2}
	r.jobID = fmt.Sprintf("job_%d_0001", r.ts)
	r.appID = fmt.Sprintf("application_%d_0001", r.ts)
	c := jobConf(o.conf)
	var err error
	if !slices.Contains(nlineFormats, o.inFmt) {
		return nil, fmt.Errorf("emulator: input format %q: only NLineInputFormat is emulated", o.inFmt)
	}
	if r.reduces, err = c.atoi("mapreduce.job.reduces", "1"); err != nil || r.reduces < 0 {
		return nil, fmt.Errorf("bad number of reduces: %v", err)
	}
	r.mapOnly = r.reduces == 0
	perMap, err := c.atoi("mapreduce.input.lineinputformat.linespermap", "1")
	if err != nil || perMap < 1 {
		return nil, fmt.Errorf("bad lines per map: %v", err)
	}
	if err := r.shuffleConf(c); err != nil {
		return nil, err
	}
	if err := r.taskConf(c); err != nil {
		return nil, err
	}
	r.failFirst = e[EnvFailFirstAttempts] == "1"
	if s := e[EnvSlots]; s != "" {
		if r.slots, err = strconv.Atoi(s); err != nil || r.slots < 1 {
			return nil, fmt.Errorf("emulator: %s=%q", EnvSlots, s)
		}
	}
	if r.mapCmd, err = splitCommand(o.mapper); err != nil {
		return nil, err
	}
	if !r.mapOnly {
		if r.redCmd, err = splitCommand(o.reducer); err != nil {
			return nil, err
		}
	}
	if err := r.linkFiles(); err != nil {
		return nil, err
	}
	r.outURI = o.output
	if r.output, err = localPath(o.output); err != nil {
		return nil, err
	}
	if _, err := os.Stat(r.output); err == nil {
		return nil, fmt.Errorf("Output directory file:%s already exists", r.output)
	}
	if err := r.readSplits(perMap); err != nil {
		return nil, err
	}
	r.appDir = filepath.Join(stateDir(e), r.appID)
	return r, nil
}

// jobConf is a job's -D properties.
type jobConf map[string]string

// get is property k, or def if it is not set.
func (c jobConf) get(k, def string) string {
	if v, ok := c[k]; ok {
		return v
	}
	return def
}

// atoi is property k (or def) as an integer.
func (c jobConf) atoi(k, def string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(c.get(k, def)))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not an integer", k, c.get(k, def))
	}
	return n, nil
}

// shuffleConf reads how map output lines split into key and value, and
// the partitioner of a job with reduces.
func (r *run) shuffleConf(c jobConf) error {
	var err error
	if r.keyFields, err = c.atoi("stream.num.map.output.key.fields", "1"); err != nil || r.keyFields < 1 {
		return fmt.Errorf("bad stream.num.map.output.key.fields: %v", err)
	}
	sep := c.get("stream.map.output.field.separator", "\t")
	keySep := c.get("mapreduce.map.output.key.field.separator", "\t")
	if len(sep) != 1 || len(keySep) != 1 {
		return errors.New("emulator: field separators of one byte only")
	}
	r.mapSep = sep[0]
	if r.mapOnly {
		return nil
	}
	if r.o.reducer == "" {
		return errors.New("emulator: a job with reduces needs -reducer (the emulator has no identity reducer)")
	}
	switch {
	case r.o.part == "":
		r.part = hashPartitioner
	case slices.Contains(keyFieldPart, r.o.part):
		opts, ok := c["mapreduce.partition.keypartitioner.options"]
		if !ok {
			return errors.New("emulator: KeyFieldBasedPartitioner without mapreduce.partition.keypartitioner.options is not emulated")
		}
		if r.part, err = keyFieldPartitioner(opts, keySep[0]); err != nil {
			return err
		}
	default:
		return fmt.Errorf("emulator: partitioner %q is not emulated", r.o.part)
	}
	return nil
}

// taskConf reads the tasks' attempts, timeout, counter limit and extra
// environment.
func (r *run) taskConf(c jobConf) error {
	var err error
	for i, k := range []string{"mapreduce.map.maxattempts", "mapreduce.reduce.maxattempts"} {
		if r.maxAttempts[i], err = c.atoi(k, "4"); err != nil || r.maxAttempts[i] < 1 {
			return fmt.Errorf("bad %s: %v", k, err)
		}
	}
	ms, err := c.atoi("mapreduce.task.timeout", "600000")
	if err != nil {
		return err
	}
	r.timeout = time.Duration(ms) * time.Millisecond
	if r.countersMax, err = c.atoi("mapreduce.job.counters.max", "120"); err != nil {
		return err
	}
	for i, k := range []string{"mapreduce.map.env", "mapreduce.reduce.env"} {
		if v := c.get(k, ""); v != "" {
			for _, kv := range strings.Split(v, ",") {
				if !strings.Contains(kv, "=") {
					return fmt.Errorf("%s: %q is not NAME=VALUE", k, kv)
				}
				r.extraEnv[i] = append(r.extraEnv[i], kv)
			}
		}
	}
	return nil
}

// linkFiles checks the -files and names their links in the containers
// (SRC#NAME, or SRC's base name).
func (r *run) linkFiles() error {
	for _, f := range r.o.files {
		src, name, _ := strings.Cut(f, "#")
		p, err := localPath(src)
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("File %s does not exist.", src)
		}
		if name == "" {
			name = filepath.Base(p)
		}
		r.files = append(r.files, fileLink{src: p, name: name})
	}
	return nil
}

// readSplits reads the -input files into splits of perMap lines each, as
// NLineInputFormat does (a split does not span files).
func (r *run) readSplits(perMap int) error {
	for _, in := range r.o.inputs {
		p, err := localPath(in)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("Input path does not exist: file:%s", p)
		}
		var cur *split
		off := int64(0)
		for len(data) > 0 {
			line := data
			n := len(data)
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, n = data[:i], i+1
			}
			if cur == nil || len(cur.lines) == perMap {
				r.splits = append(r.splits, split{file: p})
				cur = &r.splits[len(r.splits)-1]
			}
			cur.offsets = append(cur.offsets, off)
			cur.lines = append(cur.lines, strings.TrimSuffix(string(line), "\r"))
			off += int64(n)
			data = data[n:]
		}
	}
	return nil
}

// splitCommand splits a streaming command line into words, as Streaming
// does: on spaces, with single or double quotes grouping.
func splitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, c := range s {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("emulator: unbalanced quote in command %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("emulator: empty command")
	}
	return out, nil
}

func (r *run) logf(level, logger, format string, args ...any) {
	logf(r.errw, level, logger, format, args...)
}

// run runs the job and returns the command's exit status.
func (r *run) run(ctx context.Context) int {
	pidFile, err := r.writePID()
	if err != nil {
		r.logf("ERROR", "streaming.StreamJob", "Error Launching job : %v", err)
		return 1
	}
	defer os.Remove(pidFile)
	r.submit()

	ok := false
	defer func() {
		if ok {
			_ = os.RemoveAll(r.appDir)
		} else {
			_ = os.RemoveAll(filepath.Join(r.appDir, "containers"))
			_ = os.RemoveAll(filepath.Join(r.appDir, "mapout"))
		}
	}()
	for _, d := range []string{filepath.Join(r.output, "_temporary", "1"), filepath.Join(r.appDir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r.logf("ERROR", "streaming.StreamJob", "Error Launching job : %v", err)
			return 1
		}
	}
	r.logf("INFO", "mapreduce.Job", "Job %s running in uber mode : false", r.jobID)
	r.progress()
	if err := r.runTasks(ctx); err != nil {
		r.failJob(ctx, err)
		return 1
	}
	r.logf("INFO", "mapreduce.Job", "Job %s completed successfully", r.jobID)
	r.printCounters()
	r.logf("INFO", "streaming.StreamJob", "Output directory: %s", r.outURI)
	ok = true
	return 0
}

// writePID writes the emulator's pid to STATE/jobs/JOBID.pid, where
// `mapred job -kill` finds it, and returns the file's path.
func (r *run) writePID() (string, error) {
	jobsDir := filepath.Join(stateDir(r.env), "jobs")
	if err := os.MkdirAll(jobsDir, 0o755); err != nil {
		return "", err
	}
	pidFile := filepath.Join(jobsDir, r.jobID+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return "", err
	}
	return pidFile, nil
}

// submit prints the lines of a job's submission, as `hadoop jar` does.
func (r *run) submit() {
	fmt.Fprintf(r.stdout, "packageJobJar: [] [%s] %s tmpDir=null\n", r.o.jar, filepath.Join(os.TempDir(), fmt.Sprintf("streamjob%d.jar", r.ts)))
	r.logf("INFO", "streamemu.Emulator", "trawl's emulation of Hadoop Streaming: no cluster, no HDFS; tasks run as local processes under %s", r.appDir)
	r.logf("INFO", "mapred.FileInputFormat", "Total input files to process : %d", len(r.o.inputs))
	r.logf("INFO", "mapreduce.JobSubmitter", "number of splits:%d", len(r.splits))
	r.logf("INFO", "mapreduce.JobSubmitter", "Submitting tokens for job: %s", r.jobID)
	r.logf("INFO", "mapreduce.JobSubmitter", "Executing with tokens: []")
	r.logf("INFO", "impl.YarnClientImpl", "Submitted application %s", r.appID)
	r.logf("INFO", "mapreduce.Job", "The url to track the job: file://%s/", filepath.Join(r.appDir, "logs"))
	r.logf("INFO", "mapreduce.Job", "Running job: %s", r.jobID)
}

// runTasks runs the map phase, then the reduce phase, and commits the
// job.
func (r *run) runTasks(ctx context.Context) error {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := r.phase(jctx, cancel, 0, len(r.splits))
	if err == nil && !r.mapOnly {
		err = r.phase(jctx, cancel, 1, r.reduces)
	}
	r.closeMapOutputs()
	if err == nil && r.tooMany != "" {
		err = errors.New(r.tooMany)
	}
	if err == nil {
		if err = r.commitJob(); err != nil {
			r.logf("ERROR", "output.FileOutputCommitter", "Job commit failed: %v", err)
		}
	}
	return err
}

// failJob removes the job's temporary output and prints its end: KILLED
// if ctx was cancelled, else FAILED, naming the task that failed it.
func (r *run) failJob(ctx context.Context, err error) {
	state, reason := "FAILED", err.Error()
	if ctx.Err() != nil {
		state, reason = "KILLED", "Job received Kill while in RUNNING state."
	} else if r.failedOne != "" {
		kind := 0
		if strings.Contains(r.failedOne, "_r_") {
			kind = 1
		}
		reason = fmt.Sprintf("Task failed %s\nJob failed as tasks failed. failedMaps:%d failedReduces:%d killedMaps:0 killedReduces: 0\n",
			r.failedOne, 1-kind, kind)
	}
	_ = os.RemoveAll(filepath.Join(r.output, "_temporary"))
	r.logf("INFO", "mapreduce.Job", "Job %s failed with state %s due to: %s", r.jobID, state, reason)
	r.printCounters()
	r.logf("ERROR", "streaming.StreamJob", "Job not successful!")
	fmt.Fprintln(r.errw, "Streaming Command Failed!")
}

// phase runs n tasks of kind (0 map, 1 reduce), at most r.slots attempts
// at once, each task until an attempt succeeds or its attempts run out;
// the first task out of attempts fails the job.
func (r *run) phase(ctx context.Context, cancel context.CancelFunc, kind, n int) error {
	sem := make(chan struct{}, r.slots)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			for a := 0; a < r.maxAttempts[kind]; a++ {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				err = r.attempt(ctx, kind, i, a)
				<-sem
				if err == nil {
					r.taskDone(kind)
					return
				}
				if ctx.Err() != nil {
					return
				}
			}
			once.Do(func() {
				first = err
				r.mu.Lock()
				r.failedOne = r.taskID(kind, i)
				r.mu.Unlock()
				cancel()
			})
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func (r *run) taskDone(kind int) {
	r.mu.Lock()
	r.done[kind]++
	r.mu.Unlock()
	r.progress()
}

// progress prints the map and reduce percentages when they change.
func (r *run) progress() {
	r.mu.Lock()
	pct := func(done, total int) int {
		if total == 0 {
			return 100
		}
		return done * 100 / total
	}
	mp := pct(r.done[0], len(r.splits))
	rp := 0
	if !r.mapOnly {
		rp = pct(r.done[1], r.reduces)
	}
	line := fmt.Sprintf(" map %d%% reduce %d%%", mp, rp)
	changed := line != r.lastPct
	r.lastPct = line
	r.mu.Unlock()
	if changed {
		r.logf("INFO", "mapreduce.Job", "%s", line)
	}
}

func (r *run) taskID(kind, i int) string {
	return fmt.Sprintf("task_%d_0001_%s_%06d", r.ts, []string{"m", "r"}[kind], i)
}

// addCounters merges a successful attempt's counters and checks the
// job's counter limit.
func (r *run) addCounters(c map[string]map[string]int64, order []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range order {
		if r.counters[g] == nil {
			r.counters[g] = map[string]int64{}
			r.order = append(r.order, g)
		}
		for n, v := range c[g] {
			r.counters[g][n] += v
		}
	}
	total := 0
	for _, g := range r.frameworkGroups() {
		total += len(g.counters)
	}
	for _, g := range r.counters {
		total += len(g)
	}
	if total > r.countersMax && r.tooMany == "" {
		r.tooMany = fmt.Sprintf("Too many counters: %d max=%d", total, r.countersMax)
	}
}

// counterGroup is a group of the Counters block.
type counterGroup struct {
	name     string
	counters [][2]string
}

// frameworkGroups are Hadoop's own counters, as far as the emulator keeps
// them (caller holds r.mu).
func (r *run) frameworkGroups() []counterGroup {
	f := r.fw
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	jobc := counterGroup{name: "Job Counters ", counters: [][2]string{
		{"Launched map tasks", n(f.launched[0])},
	}}
	if f.failed[0] > 0 {
		jobc.counters = append(jobc.counters, [2]string{"Failed map tasks", n(f.failed[0])})
	}
	if f.failed[1] > 0 {
		jobc.counters = append(jobc.counters, [2]string{"Failed reduce tasks", n(f.failed[1])})
	}
	if f.killed[0]+f.killed[1] > 0 {
		jobc.counters = append(jobc.counters, [2]string{"Killed map tasks", n(f.killed[0])}, [2]string{"Killed reduce tasks", n(f.killed[1])})
	}
	if !r.mapOnly {
		jobc.counters = append(jobc.counters, [2]string{"Launched reduce tasks", n(f.launched[1])})
	}
	jobc.counters = append(jobc.counters, [2]string{"Other local map tasks", n(f.launched[0])})
	mr := counterGroup{name: "Map-Reduce Framework", counters: [][2]string{
		{"Map input records", n(f.mapIn)},
		{"Map output records", n(f.mapOut)},
	}}
	if !r.mapOnly {
		mr.counters = append(mr.counters, [2]string{"Map output bytes", n(f.mapOutBytes)},
			[2]string{"Reduce input groups", n(f.redGroups)}, [2]string{"Reduce input records", n(f.redIn)},
			[2]string{"Reduce output records", n(f.redOut)}, [2]string{"Spilled Records", n(f.spilled)})
	}
	return []counterGroup{jobc, mr}
}

// printCounters prints the Counters block as Hadoop's
// AbstractCounters.toString does.
func (r *run) printCounters() {
	r.mu.Lock()
	groups := r.frameworkGroups()
	order := append([]string(nil), r.order...)
	sort.Strings(order)
	for _, g := range order {
		cg := counterGroup{name: g}
		names := make([]string, 0, len(r.counters[g]))
		for k := range r.counters[g] {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			cg.counters = append(cg.counters, [2]string{k, strconv.FormatInt(r.counters[g][k], 10)})
		}
		groups = append(groups, cg)
	}
	r.mu.Unlock()
	total := 0
	var b strings.Builder
	for _, g := range groups {
		total += len(g.counters)
		fmt.Fprintf(&b, "\n\t%s", g.name)
		for _, c := range g.counters {
			fmt.Fprintf(&b, "\n\t\t%s=%s", c[0], c[1])
		}
	}
	r.logf("INFO", "mapreduce.Job", "Counters: %d%s", total, b.String())
}

// commitJob is FileOutputCommitter's job commit (algorithm 1): every
// committed task directory is merged into the output, _temporary goes and
// _SUCCESS is written.
func (r *run) commitJob() error {
	root := filepath.Join(r.output, "_temporary", "1")
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "task_") {
			continue
		}
		if err := mergePaths(filepath.Join(root, e.Name()), r.output); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(r.output, "_temporary")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.output, "_SUCCESS"), nil, 0o644)
}

// mergePaths moves the entries of src into dst, merging directories, as
// FileOutputCommitter.mergePaths does (a file replaces a file).
func mergePaths(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		st, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Rename(s, d); err != nil {
				return err
			}
		case err != nil:
			return err
		case e.IsDir() && st.IsDir():
			if err := mergePaths(s, d); err != nil {
				return err
			}
		default:
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			if err := os.Rename(s, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// Invocation is the line the emulator appends to $STREAMEMU_LOG per
// `hadoop jar` run.
type Invocation struct {
	Time     time.Time `json:"time"`
	JobID    string    `json:"job_id"`
	JobName  string    `json:"job_name"`
	TrawlJob string    `json:"trawl_job"`
	Exit     int       `json:"exit"`
	// FailedAttempts counts the task attempts that failed.
	FailedAttempts int64    `json:"failed_attempts"`
	Args           []string `json:"args"`
}

func logInvocation(e map[string]string, o *options, jobID string, code int, failed int64) {
	p := e[EnvInvocationLog]
	if p == "" {
		return
	}
	b, err := json.Marshal(Invocation{Time: time.Now().UTC(), JobID: jobID, JobName: o.conf["mapreduce.job.name"],
		TrawlJob: o.conf["trawl.job.name"], Exit: code, FailedAttempts: failed, Args: o.args})
	if err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	f.Close()
}
