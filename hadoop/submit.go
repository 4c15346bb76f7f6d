package hadoop

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

// ErrDryRun is the error of Run in a dry run, once it has printed the
// job's command instead of running it.
var ErrDryRun = errors.New("dry run: the job was not run")

// Submitter runs engine jobs as Hadoop Streaming jobs of the trawl binary:
// it is a mapreduce.Runner, which `trawl --engine hadoop` puts in the
// jobs' mapreduce.Engine. The zero values of its optional fields are
// usable.
type Submitter struct {
	// Hadoop is the hadoop command and StreamingJar the streaming jar
	// (see Locate).
	Hadoop, StreamingJar string
	// Binary is the trawl binary shipped to the tasks (os.Executable()).
	Binary string
	// Storage resolves the jobs' URIs: the split manifest is written and
	// the outputs are published through it. Required.
	Storage mapreduce.Resolver
	// Reducers is the most reduce tasks of a job; 0 means one per reduce
	// partition of the job. Fewer reducers than partitions is fine: a
	// reducer writes a part file for each partition it gets.
	Reducers int
	// Queue is the scheduler queue; empty means the cluster's default.
	Queue string
	// JobNamePrefix starts each Hadoop job's name (then the engine job's
	// name); empty means "trawl".
	JobNamePrefix string
	// MapMemoryMB and ReduceMemoryMB are the task containers' memory;
	// 0 means the cluster's default.
	MapMemoryMB, ReduceMemoryMB int64
	// TaskTimeout is how long a silent task lives; 0 means the
	// cluster's default.
	TaskTimeout time.Duration
	// Speculative allows speculative execution, except for jobs with side
	// effects (SideEffects), which never run twice at once.
	Speculative bool
	// SideEffects names the jobs whose tasks act outside their outputs;
	// nil means trawl's one such job, fetch.
	SideEffects []string
	// MaxAttempts bounds the attempts of each task; 0 means the cluster's
	// default (4).
	MaxAttempts int
	// EngineMemory is a map task's sort buffer in bytes; 0 means the
	// task's default.
	EngineMemory int64
	// TaskTempDir is the tasks' spill directory on the nodes; empty means
	// their temporary directory.
	TaskTempDir string
	// TaskUser is the HDFS user of the tasks without Kerberos (the
	// submitter's), passed as the job property trawl.task.user.
	TaskUser string
	// TaskEnv are extra environment variables of the tasks (NAME=VALUE
	// each, no commas; see CheckTaskEnv). They go in mapreduce.map.env and
	// mapreduce.reduce.env, which replace the cluster's values of those
	// properties: leave it empty unless the cluster sets neither.
	TaskEnv []string
	// Properties are extra job properties (KEY=VALUE; see
	// CheckProperties).
	Properties []string
	// Env is the hadoop command's environment; nil means the process's.
	// The tasks do not get it: they get the job configuration.
	Env []string
	// ProgressInterval is the least time between two progress log lines
	// of a job; 0 means 10s.
	ProgressInterval time.Duration
	// Log receives the submitter's logs; nil means slog.Default().
	Log *slog.Logger
	// DryRun, if set, makes Run print each job's command (shell-
	// quoted, one line) to it and return ErrDryRun instead of running
	// anything; DryRunNote, if set, is printed after it as a "# " comment.
	DryRun     io.Writer
	DryRunNote string
}

// maxConfBytes bounds a job's encoded configuration: Streaming hands it
// to the tasks as one environment variable, and Linux limits one to
// 128 KiB.
const maxConfBytes = 120 << 10

func (s *Submitter) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

var _ mapreduce.Runner = (*Submitter)(nil)

// Run runs the job spec describes as a Hadoop Streaming job and publishes
// its outputs (see the package doc): the tasks decode spec from the job's
// configuration and build the same job.
func (s *Submitter) Run(ctx context.Context, spec mapreduce.Spec) (*mapreduce.Result, error) {
	conf, err := mapreduce.SpecConf(spec)
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: %w", err)
	}
	job, err := spec.Job()
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", spec.JobName(), err)
	}
	return s.execute(ctx, spec.JobName(), conf, job)
}

// submission is one engine job on its way to Hadoop.
type submission struct {
	name     string
	conf     map[string]string // the job's Conf, from which the tasks rebuild it
	job      mapreduce.Runnable
	info     mapreduce.JobInfo
	log      *slog.Logger
	start    time.Time
	counters *mapreduce.Counters
}

// execute runs one engine job as a Hadoop Streaming job and publishes its
// outputs (see the package doc): it checks the job, lists its splits, and
// submits it, or publishes empty outputs if it has no input. name and
// conf are the job's Name and Conf, from which the tasks rebuild it.
func (s *Submitter) execute(ctx context.Context, name string, conf map[string]string, job mapreduce.Runnable) (*mapreduce.Result, error) {
	sub := &submission{name: name, conf: conf, job: job, start: time.Now(), counters: &mapreduce.Counters{}}
	if err := s.check(sub); err != nil {
		return nil, err
	}
	sub.log = s.log().With("job", name)
	splits, err := mapreduce.Splits(ctx, s.Storage, job)
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: %w", err)
	}
	sub.counters.Add("trawl", "map_tasks", int64(len(splits)))
	if len(splits) == 0 {
		return s.publishEmpty(ctx, sub)
	}
	return s.submit(ctx, sub, splits)
}

// check checks a job before any work: its name, that every URI means
// something on the nodes, that its configuration fits a task's
// environment, the Submitter's properties and task environment, and that
// no output exists (as on the local engine). It sets sub.info.
func (s *Submitter) check(sub *submission) error {
	name := sub.name
	if s.Storage == nil {
		return errors.New("hadoop engine: no storage resolver")
	}
	info, err := mapreduce.Describe(sub.job)
	if err != nil {
		return fmt.Errorf("hadoop engine: %w", err)
	}
	if info.Name != name {
		return fmt.Errorf("hadoop engine: job %q submitted as %q", info.Name, name)
	}
	sub.info = info
	for _, u := range append(append([]string(nil), info.Inputs...), info.Outputs...) {
		if _, err := hadoopURI(u); err != nil {
			return fmt.Errorf("hadoop engine: job %s: %w", name, err)
		}
	}
	if n := len(mapreduce.EncodeConf(sub.conf)); n > maxConfBytes {
		return fmt.Errorf("hadoop engine: job %s: its configuration takes %d bytes encoded, more than the %d a task's environment variable can hold", name, n, maxConfBytes)
	}
	if err := CheckProperties(s.Properties); err != nil {
		return fmt.Errorf("hadoop engine: %w", err)
	}
	if err := CheckTaskEnv(s.TaskEnv); err != nil {
		return fmt.Errorf("hadoop engine: %w", err)
	}
	for _, o := range info.Outputs {
		fsys, p, err := s.Storage.Resolve(o)
		if err != nil {
			return fmt.Errorf("hadoop engine: job %s: output %s: %w", name, o, err)
		}
		if ok, err := storage.Exists(fsys, p); err != nil {
			return fmt.Errorf("hadoop engine: job %s: output %s: %w", name, o, err)
		} else if ok {
			return fmt.Errorf("hadoop engine: job %s: output %s already exists; remove it or choose another output", name, o)
		}
	}
	return nil
}

// publishEmpty publishes the empty outputs of a job without map tasks, as
// on the local engine; no cluster is needed for that.
func (s *Submitter) publishEmpty(ctx context.Context, sub *submission) (*mapreduce.Result, error) {
	if s.DryRun != nil {
		fmt.Fprintf(s.DryRun, "# job %s has no input: it publishes empty outputs without a Hadoop job\n", sub.name)
		return nil, ErrDryRun
	}
	if err := mapreduce.PublishStreaming(ctx, s.Storage, sub.job, nil, sub.counters); err != nil {
		return nil, fmt.Errorf("hadoop engine: %w", err)
	}
	sub.log.Info("no input: published empty outputs without a Hadoop job")
	return &mapreduce.Result{Counters: sub.counters, Outputs: sub.info.Outputs, Duration: time.Since(sub.start)}, nil
}

// submit stages the job (its split manifest), runs the hadoop command
// (or, in a dry run, prints it), and publishes the outputs the tasks
// wrote; the staging directory is removed either way.
func (s *Submitter) submit(ctx context.Context, sub *submission, splits []string) (*mapreduce.Result, error) {
	name, log := sub.name, sub.log
	st, err := s.newStaging(sub.info)
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", name, err)
	}
	spec, err := s.spec(sub.info, sub.conf, st)
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", name, err)
	}
	argv := append([]string{spec.Hadoop}, spec.Args()...)
	if s.DryRun != nil {
		fmt.Fprintln(s.DryRun, ShellJoin(argv))
		if s.DryRunNote != "" {
			fmt.Fprintf(s.DryRun, "# %s\n", s.DryRunNote)
		}
		log.Info("dry run: not submitted", "map_tasks", len(splits), "manifest", st.manifest)
		return nil, ErrDryRun
	}

	if err := st.sweep(log); err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", name, err)
	}
	defer st.remove(log)
	if err := st.writeManifest(splits); err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", name, err)
	}
	log.Info("submitting to hadoop", "map_tasks", len(splits), "reducers", spec.Reducers, "partitions", sub.info.Reduces,
		"command", ShellJoin(argv[:min(len(argv), 2)])+" ...")
	log.Debug("hadoop command", "argv", ShellJoin(argv))
	mon, err := s.run(ctx, argv, log)
	if err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s: %w", name, err)
	}
	jobCounters(mon.Counters, sub.counters)
	if err := mapreduce.PublishStreaming(ctx, s.Storage, sub.job, []string{st.output}, sub.counters); err != nil {
		return nil, fmt.Errorf("hadoop engine: job %s (hadoop job %s): publish: %w", name, mon.JobID, err)
	}
	dur := time.Since(sub.start)
	log.Info("hadoop job done", "hadoop_job", mon.JobID, "duration", dur.Round(time.Millisecond),
		"outputs", strings.Join(sub.info.Outputs, ","))
	return &mapreduce.Result{Counters: sub.counters, Outputs: sub.info.Outputs, Duration: dur}, nil
}

// spec is the submission of a job staged in st.
func (s *Submitter) spec(info mapreduce.JobInfo, conf map[string]string, st *staging) (Spec, error) {
	bin := s.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return Spec{}, fmt.Errorf("the trawl binary to ship: %w", err)
		}
	}
	if strings.ContainsAny(bin, ",#") {
		return Spec{}, fmt.Errorf("the trawl binary's path %s holds a ',' or '#', which -files cannot take", bin)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return Spec{}, fmt.Errorf("the trawl binary to ship: %w", err)
	}
	input, err := hadoopURI(st.manifest)
	if err != nil {
		return Spec{}, err
	}
	output, err := hadoopURI(st.output)
	if err != nil {
		return Spec{}, err
	}
	reducers := s.Reducers
	if reducers <= 0 || reducers > info.Reduces {
		reducers = info.Reduces
	}
	prefix := s.JobNamePrefix
	if prefix == "" {
		prefix = "trawl"
	}
	side := s.SideEffects
	if side == nil {
		side = []string{"fetch"}
	}
	speculative := s.Speculative
	for _, j := range side {
		if j == info.Name {
			speculative = false
		}
	}
	return Spec{
		Hadoop: s.Hadoop, Jar: s.StreamingJar, Binary: "file://" + filepath.ToSlash(abs),
		Input: input, Output: output, Job: info.Name, Conf: conf,
		MapOnly: info.MapOnly, Reducers: reducers, JobName: prefix + " " + info.Name,
		Queue: s.Queue, MapMemoryMB: s.MapMemoryMB, ReduceMemoryMB: s.ReduceMemoryMB,
		TaskTimeout: s.TaskTimeout, Speculative: speculative, MaxAttempts: s.MaxAttempts,
		EngineMemory: s.EngineMemory, TaskTempDir: s.TaskTempDir, TaskUser: s.TaskUser, TaskEnv: s.TaskEnv, Properties: s.Properties,
	}, nil
}

// hadoopURI turns a trawl URI into the URI Hadoop reads: URIs as they are,
// absolute local paths as file:// URIs. A relative path means nothing on
// the cluster's nodes: an error.
func hadoopURI(u string) (string, error) {
	if storage.IsURI(u) {
		return u, nil
	}
	if !filepath.IsAbs(u) {
		return "", fmt.Errorf("the path %s is relative: on Hadoop every path must be absolute or a URI (hdfs://...)", u)
	}
	return "file://" + filepath.ToSlash(u), nil
}

// staging is a job's staging directory, DIR/_temporary/streaming-NAME-ID
// beside its first output DIR/NAME: the split manifest, and the streaming
// job's own output directory, from which the outputs are published.
type staging struct {
	fs       storage.FS
	tmp      string // DIR/_temporary in fs
	dir      string // the staging directory in fs
	prefix   string // streaming-NAME-
	manifest string // URI
	output   string // URI
}

func (s *Submitter) newStaging(info mapreduce.JobInfo) (*staging, error) {
	first := info.Outputs[0]
	fsys, p, err := s.Storage.Resolve(first)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", first, err)
	}
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	prefix := "streaming-" + path.Base(p) + "-"
	name := prefix + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(id[:])
	uri := storage.Join(storage.Dir(first), "_temporary", name)
	tmp := path.Join(path.Dir(p), "_temporary")
	// Dotted names: no job output is called so, and the engine removes
	// DIR/_temporary/*/NAME for each output NAME when it publishes.
	return &staging{fs: fsys, tmp: tmp, dir: path.Join(tmp, name), prefix: prefix,
		manifest: storage.Join(uri, "splits.txt"), output: storage.Join(uri, "streaming.out")}, nil
}

// sweep removes the staging directories of the same first output that
// killed runs left (as the engine removes stale stages of an output).
func (st *staging) sweep(log *slog.Logger) error {
	ents, err := st.fs.ReadDir(st.tmp)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("list %s: %w", st.tmp, err)
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), st.prefix) {
			p := path.Join(st.tmp, e.Name())
			log.Info("removing the staging directory of a killed run", "path", p)
			if err := st.fs.RemoveAll(p); err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
		}
	}
	return nil
}

// writeManifest writes the split manifest, one line per map task.
func (st *staging) writeManifest(lines []string) error {
	if err := st.fs.MkdirAll(st.dir); err != nil {
		return fmt.Errorf("staging directory: %w", err)
	}
	p := path.Join(st.dir, "splits.txt")
	w, err := st.fs.Create(p)
	if err != nil {
		return fmt.Errorf("split manifest: %w", err)
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	err = bw.Flush()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the split manifest %s: %w", p, err)
	}
	return nil
}

// remove removes the staging directory, and _temporary if that leaves it
// empty.
func (st *staging) remove(log *slog.Logger) {
	if err := st.fs.RemoveAll(st.dir); err != nil {
		log.Warn("cannot remove the staging directory", "path", st.dir, "err", err)
	}
	if ents, err := st.fs.ReadDir(st.tmp); err == nil && len(ents) == 0 {
		_ = st.fs.RemoveAll(st.tmp)
	}
}

// jobCounters adds trawl's groups of a Counters block to c: the engine's
// ("trawl"), the job's own (its name) and any other a task counted in
// (mapreduce.Task.InGroup), all from the tasks' reporter:counter lines;
// of Hadoop's own counters, the failed task attempts, as the local engine
// counts them. Hadoop names its own groups in words ("Job Counters",
// "File System Counters"); trawl's names have no space.
func jobCounters(block map[string]map[string]int64, c *mapreduce.Counters) {
	for g, names := range block {
		if strings.Contains(g, " ") {
			continue
		}
		for n, v := range names {
			c.Add(g, n, v)
		}
	}
	var failed int64
	for _, n := range []string{"Failed map tasks", "Failed reduce tasks"} {
		failed += block["Job Counters"][n]
	}
	if failed > 0 {
		c.Add("trawl", "failed_task_attempts", failed)
	}
}

// run runs the hadoop command, relaying its state changes to log, until
// the job ends; it kills the job when ctx is cancelled.
func (s *Submitter) run(ctx context.Context, argv []string, log *slog.Logger) (*Monitor, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.Env
	setProcessGroup(cmd)
	lines, err := startLines(cmd)
	if err != nil {
		return nil, err
	}
	mon := NewMonitor()
	var mu sync.Mutex // guards mon.JobID for the killer
	done := make(chan struct{})
	killed := s.killOnCancel(ctx, cmd, func() string {
		mu.Lock()
		defer mu.Unlock()
		return mon.JobID
	}, done, log)

	rep := newReporter(log, s.ProgressInterval)
	for l := range lines {
		log.Debug("hadoop", "line", l)
		mu.Lock()
		evs := mon.Line(l)
		mu.Unlock()
		rep.report(mon, evs)
	}
	rep.report(mon, mon.End())
	werr := cmd.Wait()
	close(done)
	if <-killed {
		return mon, fmt.Errorf("cancelled; hadoop job %s killed: %w", orNone(mon.JobID), ctx.Err())
	}
	return mon, exitErr(mon, werr, log)
}

// startLines starts cmd and returns the lines of its stdout and stderr,
// interleaved, without their newlines; the channel is closed when both
// reach their end.
func startLines(cmd *exec.Cmd) (<-chan string, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	lines := make(chan string, 64)
	var readers sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			br := bufio.NewReaderSize(r, 64<<10)
			for {
				l, err := br.ReadString('\n')
				if l != "" {
					lines <- strings.TrimSuffix(l, "\n")
				}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		readers.Wait()
		close(lines)
	}()
	return lines, nil
}

// killOnCancel kills the submission (see kill; jobID gives the job's id
// as far as it is known) if ctx is cancelled before done is closed. The
// channel it returns receives whether it did, once that is settled.
func (s *Submitter) killOnCancel(ctx context.Context, cmd *exec.Cmd, jobID func() string, done <-chan struct{}, log *slog.Logger) <-chan bool {
	killed := make(chan bool, 1)
	go func() {
		select {
		case <-done:
			killed <- false
			return
		case <-ctx.Done():
		}
		s.kill(cmd, jobID(), log)
		killed <- true
	}()
	return killed
}

// exitErr is the error of a hadoop command that ended by itself with
// werr (cmd.Wait's): its exit status explained by mon, or no counters.
func exitErr(mon *Monitor, werr error, log *slog.Logger) error {
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			return mon.Err(ee.ExitCode())
		}
		return fmt.Errorf("hadoop jar: %w", werr)
	}
	if mon.JobID != "" && !mon.Succeeded {
		log.Warn("hadoop jar exited 0 without saying the job completed successfully", "hadoop_job", mon.JobID)
	}
	if mon.Counters == nil {
		return fmt.Errorf("hadoop job %s: hadoop jar printed no counters", orNone(mon.JobID))
	}
	return nil
}

func orNone(id string) string {
	if id == "" {
		return "(no id yet)"
	}
	return id
}

// kill kills a running submission: the job on the cluster (mapred job
// -kill, when its id is known), then the hadoop command's process group.
func (s *Submitter) kill(cmd *exec.Cmd, jobID string, log *slog.Logger) {
	if jobID != "" {
		kctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		argv := append(mapredCommand(s.Hadoop), "job", "-kill", jobID)
		k := exec.CommandContext(kctx, argv[0], argv[1:]...)
		k.Env = s.Env
		out, err := k.CombinedOutput()
		cancel()
		if err != nil {
			log.Warn("killing the hadoop job failed", "hadoop_job", jobID, "command", ShellJoin(argv), "err", err,
				"output", strings.TrimSpace(string(out)))
		} else {
			log.Info("hadoop job killed", "hadoop_job", jobID)
		}
	}
	terminate(cmd.Process, 5*time.Second)
}

// reporter turns a Monitor's events into log lines: one per state change,
// progress at most every interval (and when a phase reaches 100%).
type reporter struct {
	log      *slog.Logger
	interval time.Duration
	last     time.Time
	lastMap  int
	lastRed  int
	started  time.Time
}

func newReporter(log *slog.Logger, interval time.Duration) *reporter {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	return &reporter{log: log, interval: interval, lastMap: -1, lastRed: -1, started: time.Now()}
}

func (r *reporter) report(m *Monitor, evs []EventKind) {
	for _, ev := range evs {
		switch ev {
		case Submitted:
			r.log.Info("hadoop job submitted", "hadoop_job", m.JobID, "tracking_url", m.TrackingURL)
		case Progress:
			full := (m.Map == 100 && r.lastMap != 100) || (m.Reduce == 100 && r.lastRed != 100)
			if time.Since(r.last) < r.interval && !full {
				continue
			}
			r.last, r.lastMap, r.lastRed = time.Now(), m.Map, m.Reduce
			r.log.Info("hadoop job progress", "hadoop_job", m.JobID, "map", fmt.Sprintf("%d%%", m.Map),
				"reduce", fmt.Sprintf("%d%%", m.Reduce))
		case AttemptFailed:
			f := m.Failures[len(m.Failures)-1]
			r.log.Warn("hadoop task attempt failed", "hadoop_job", m.JobID, "attempt", f.Attempt, "status", f.Status)
		case Finished:
			if m.Succeeded {
				r.log.Info("hadoop job finished", "hadoop_job", m.JobID, "state", m.State,
					"duration", time.Since(r.started).Round(time.Millisecond))
			} else {
				r.log.Error("hadoop job failed", "hadoop_job", m.JobID, "state", m.State, "reason", m.Reason)
			}
		}
	}
}
