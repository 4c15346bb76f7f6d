package mapreduce

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/scratch"
	"github.com/trawl/trawl/storage"
)

// Hadoop Streaming task entry.
//
// The CLI's hidden `task` command calls RunStreamingTask as the mapper
// ("map") or reducer ("reduce") of a Hadoop Streaming job. The job is
// rebuilt in the task from a Registry by name and configuration, which
// reach the task as the job properties trawl.job.name and trawl.job.conf
// (Streaming exports them as the environment variables trawl_job_name and
// trawl_job_conf; the conf is EncodeConf's base64url text).
//
// Map tasks read split manifests (lines written by Splits; NLineInputFormat
// may prefix them with "OFFSET<TAB>") and write one line per shuffle record:
//
//	PPPPP<TAB>KEY<TAB>VALUE
//
// PPPPP is the five-digit reduce partition from the job's Partitioner; KEY
// and VALUE (the shuffle encoding of the value) are escaped by
// EscapeField, which keeps their byte order, so `LC_ALL=C sort` of whole
// lines orders records by (partition, key, value) exactly as the local
// runner's merge does. A combiner runs in the map, as on the local runner.
//
// The submitter partitions by the first field (KeyFieldBasedPartitioner
// -k1,1) and sorts whole lines. A reduce process may therefore receive
// several partitions: it writes one part file per partition number it
// sees, named by that number, into its work output directory
// (mapreduce_task_output_dir) as OUTPUT-NAME/part-r-PPPPP.parquet, one
// subdirectory per job output (the output's base name, or BASE-INDEX when
// two outputs share a base name). A part file exists only if it has rows,
// on both engines, so a reduce that sees no lines writes nothing and the
// outputs are identical to the local runner's whatever Hadoop's hash does.
// Map-only jobs write OUTPUT-NAME/part-m-NNNNN.parquet, NNNNN being the
// split's index; a WriteFiles output's sink writes OUTPUT-NAME/NAME files
// of the names it chooses. PublishStreaming moves the task files into the
// outputs.
//
// Counters go to stderr as reporter:counter:GROUP,NAME,N lines.

// Registry builds jobs by name for the task entry; the CLI builds it (there
// is no global registration).
type Registry map[string]func(conf map[string]string) (Runnable, error)

// The job properties and the environment variables Streaming turns them
// into, and the task environment the entry reads.
const (
	PropJobName = "trawl.job.name"
	PropJobConf = "trawl.job.conf"
	EnvJobName  = "trawl_job_name"
	EnvJobConf  = "trawl_job_conf"

	EnvTaskPartition = "mapreduce_task_partition"
	EnvTaskAttempt   = "mapreduce_task_attempt_id"
	EnvTaskOutputDir = "mapreduce_task_output_dir"
	EnvJobReduces    = "mapreduce_job_reduces"
)

// EncodeConf encodes a job configuration for trawl.job.conf: base64url
// (unpadded) of the shuffle encoding of the map (keys sorted).
func EncodeConf(conf map[string]string) string {
	c, err := NewCodec[map[string]string]()
	if err != nil {
		panic(err) // map[string]string is always supported
	}
	return base64.RawURLEncoding.EncodeToString(c.Append(nil, &conf))
}

// DecodeConf decodes EncodeConf's text.
func DecodeConf(s string) (map[string]string, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("job conf: %w", err)
	}
	c, err := NewCodec[map[string]string]()
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := c.Decode(b, &m); err != nil {
		return nil, fmt.Errorf("job conf: %w", err)
	}
	return m, nil
}

// StreamingOption configures RunStreamingTask.
type StreamingOption func(*streamOpts)

type streamOpts struct {
	res     Resolver
	tempDir string
	budget  int64
}

// WithStorage sets the resolver of input and output URIs (default
// storage.NewResolver()).
func WithStorage(r Resolver) StreamingOption { return func(o *streamOpts) { o.res = r } }

// WithTempDir sets the directory of a map task's spills and of the files
// where Parquet writers spool row groups (default os.TempDir()). A map
// task's spills go to a scratch directory of its own under it (see package
// scratch); the spool files are unlinked as soon as they are created.
func WithTempDir(dir string) StreamingOption { return func(o *streamOpts) { o.tempDir = dir } }

// WithMemoryBudget bounds a map task's sort buffer (default
// DefaultMemoryBudget); the buffer grows up to it with the task's output
// (see Memory in the package documentation).
func WithMemoryBudget(n int64) StreamingOption { return func(o *streamOpts) { o.budget = n } }

const manifestMarker = "trawl-split "

// Splits returns the manifest lines of a job's map tasks, one per split, to
// be written to the file that NLineInputFormat (one line per map) reads.
func Splits(ctx context.Context, res Resolver, job Runnable) ([]string, error) {
	ej, err := job.compile()
	if err != nil {
		return nil, err
	}
	sps, err := ej.listSplits(ctx, res)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", ej.jobName(), err)
	}
	lines := make([]string, len(sps))
	for i, sp := range sps {
		if strings.ContainsAny(sp.URI, "\r\n") {
			return nil, fmt.Errorf("job %s: input file name %q has a line break", ej.jobName(), sp.URI)
		}
		lines[i] = fmt.Sprintf("%sv1 %d %d %d %d %s", manifestMarker, sp.Index, sp.Input, sp.Start, sp.End, strconv.Quote(sp.URI))
	}
	return lines, nil
}

// parseManifest parses a manifest line (anything before the marker is
// ignored).
func parseManifest(line string) (split, error) {
	i := strings.Index(line, manifestMarker)
	if i < 0 {
		return split{}, fmt.Errorf("no %q marker in %q", strings.TrimSpace(manifestMarker), line)
	}
	f := strings.SplitN(strings.TrimRight(line[i+len(manifestMarker):], "\r\n"), " ", 6)
	if len(f) != 6 || f[0] != "v1" {
		return split{}, fmt.Errorf("bad manifest %q", line)
	}
	var sp split
	var nums [4]int
	for k := 0; k < 4; k++ {
		n, err := strconv.Atoi(f[k+1])
		if err != nil {
			return split{}, fmt.Errorf("bad manifest %q: %w", line, err)
		}
		nums[k] = n
	}
	sp.Index, sp.Input, sp.Start, sp.End = nums[0], nums[1], nums[2], nums[3]
	uri, err := strconv.Unquote(f[5])
	if err != nil {
		return split{}, fmt.Errorf("bad manifest %q: %w", line, err)
	}
	sp.URI = uri
	return sp, nil
}

// RunStreamingTask runs one Hadoop Streaming map or reduce task (phase
// "map" or "reduce") of the job named by the environment.
func RunStreamingTask(ctx context.Context, reg Registry, phase string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer, opts ...StreamingOption) (err error) {
	o := streamOpts{budget: DefaultMemoryBudget}
	for _, f := range opts {
		f(&o)
	}
	if o.res == nil {
		o.res = storage.NewResolver()
	}
	if err := applyTaskEnv(&o, env); err != nil {
		return fmt.Errorf("streaming task: %w", err)
	}
	stderr = &syncWriter{w: stderr}
	name := env(EnvJobName)
	build, ok := reg[name]
	if !ok {
		known := make([]string, 0, len(reg))
		for k := range reg {
			known = append(known, k)
		}
		sort.Strings(known)
		return fmt.Errorf("streaming task: unknown job %q (%s not set or not one of %s)", name, EnvJobName, strings.Join(known, ", "))
	}
	conf, err := DecodeConf(env(EnvJobConf))
	if err != nil {
		return fmt.Errorf("streaming task %s: %s: %w", name, EnvJobConf, err)
	}
	job, err := build(conf)
	if err != nil {
		return fmt.Errorf("streaming task %s: build job: %w", name, err)
	}
	ej, err := job.compile()
	if err != nil {
		return fmt.Errorf("streaming task %s: %w", name, err)
	}
	if r := env(EnvJobReduces); r != "" && !ej.isMapOnly() {
		if n, err := strconv.Atoi(r); err == nil && n == 0 {
			return fmt.Errorf("streaming task %s: %s is 0 but the job has a reduce", name, EnvJobReduces)
		}
	}
	part, _ := strconv.Atoi(env(EnvTaskPartition))
	id := fmt.Sprintf("%s-%05d", phase[:1], part)
	attempt := 0
	if a := env(EnvTaskAttempt); a != "" {
		if i := strings.LastIndexByte(a, '_'); i >= 0 {
			attempt, _ = strconv.Atoi(a[i+1:])
		}
	}
	c := &Counters{}
	t := &Task{Ctx: ctx, Job: name, ID: id, Partition: part, Attempt: attempt,
		Log: slogTo(stderr).With("job", name, "task", id), Storage: o.res, counters: c}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("streaming task %s %s: panic: %v", name, id, p)
		}
		writeCounterLines(stderr, c)
	}()
	defer heartbeat(stderr, name, id, statusInterval)()
	switch phase {
	case "map":
		err = streamMap(t, ej, o, env, stdin, stdout, c)
	case "reduce":
		err = streamReduce(t, ej, o, env, stdin, c)
	default:
		return fmt.Errorf("streaming task: phase %q is neither map nor reduce", phase)
	}
	if err != nil {
		return fmt.Errorf("streaming task %s %s: %w", name, id, err)
	}
	return nil
}

func writeCounterLines(w io.Writer, c *Counters) {
	snap := c.Snapshot()
	for _, g := range c.Groups() {
		names := make([]string, 0, len(snap[g]))
		for n := range snap[g] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "reporter:counter:%s,%s,%d\n", g, n, snap[g][n])
		}
	}
}

// ParseCounterLines adds the reporter:counter lines of a task's stderr to c
// (other lines are ignored).
func ParseCounterLines(r io.Reader, c *Counters) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), "reporter:counter:")
		if !ok {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) != 3 {
			return fmt.Errorf("bad counter line %q", sc.Text())
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad counter line %q: %w", sc.Text(), err)
		}
		c.Add(f[0], f[1], n)
	}
	return sc.Err()
}

// workOutputs creates the files of a task's outputs under its work output
// directory.
func workOutputs(ej engineJob, o streamOpts, env func(string) string) (func(out int, name string) (io.WriteCloser, error), error) {
	dir := env(EnvTaskOutputDir)
	if dir == "" {
		return nil, fmt.Errorf("%s is not set", EnvTaskOutputDir)
	}
	fsys, p, err := o.res.Resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTaskOutputDir, err)
	}
	specs := ej.outSpecs()
	return func(out int, name string) (io.WriteCloser, error) {
		f := path.Join(p, specs[out].name, name)
		w, err := fsys.Create(f)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", f, err)
		}
		return w, nil
	}, nil
}

// streamMap runs a streaming map task over the splits whose manifest
// lines stdin holds: a map-only job writes part files into the task's
// work output directory; a job with a reduce writes its sorted shuffle
// lines to stdout.
func streamMap(t *Task, ej engineJob, o streamOpts, env func(string) string, stdin io.Reader, stdout io.Writer, c *Counters) error {
	sps, err := readManifest(stdin, o.res)
	if err != nil {
		return err
	}
	var records int64
	defer func() { c.Add(engineGroup, "map_input_records", records) }()
	if ej.isMapOnly() {
		return streamMapOnly(t, ej, o, env, sps, c, &records)
	}
	return streamMapShuffle(t, ej, o, sps, stdout, c, &records)
}

// readManifest reads the split manifest lines of a map task (blank lines
// skipped) and resolves their files.
func readManifest(stdin io.Reader, res Resolver) ([]split, error) {
	var sps []split
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		sp, err := parseManifest(sc.Text())
		if err != nil {
			return nil, err
		}
		sps = append(sps, sp)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	for i := range sps {
		fsys, p, err := res.Resolve(sps[i].URI)
		if err != nil {
			return nil, err
		}
		sps[i].fs, sps[i].path = fsys, p
	}
	return sps, nil
}

// streamMapOnly runs the splits of a map-only job's task, each into part
// files part-m-NNNNN (NNNNN the split's index) of the work output
// directory.
func streamMapOnly(t *Task, ej engineJob, o streamOpts, env func(string) string, sps []split, c *Counters, records *int64) error {
	create, err := workOutputs(ej, o, env)
	if err != nil {
		return err
	}
	outs := ej.newOutputs('m', create, o.tempDir)
	for _, sp := range sps {
		if err := outs.setPart(sp.Index); err != nil {
			return err
		}
		if err := ej.runMap(t, sp, nil, outs, records); err != nil {
			outs.close()
			return err
		}
	}
	if err := outs.close(); err != nil {
		return err
	}
	rows, n := outs.stats()
	c.Add(engineGroup, "output_records", rows)
	c.Add(engineGroup, "output_bytes", n)
	return nil
}

// streamMapShuffle runs the splits of a task into one sort buffer,
// spilling sorted runs to a spill directory of the task's own, and writes
// the merged runs to stdout as shuffle lines, partition by partition.
func streamMapShuffle(t *Task, ej engineJob, o streamOpts, sps []split, stdout io.Writer, c *Counters, records *int64) error {
	// An owned directory (see package scratch): if this task is killed,
	// the next task or job with the same temp dir removes it.
	sd, err := scratch.New(o.tempDir, t.Job, scratch.WithLogger(t.Log))
	if err != nil {
		return fmt.Errorf("spill dir: %w", err)
	}
	defer func() {
		if err := sd.Close(); err != nil {
			t.Log.Warn("cannot remove the spill directory", "err", err)
		}
	}()
	sh := &mapShuffle{buf: newSortBuffer(o.budget), parts: ej.reduces(), dir: sd.Path(), prefix: t.ID,
		combine: ej.combiner(t, c), c: c}
	for _, sp := range sps {
		if err := ej.runMap(t, sp, sh, nil, records); err != nil {
			return err
		}
	}
	if err := sh.finish(); err != nil {
		return err
	}
	return writeShuffleLines(stdout, sh.runs, ej.reduces())
}

// writeShuffleLines merges partitions 0..parts-1 of runs and writes their
// records to w as streaming lines (see appendLine).
func writeShuffleLines(stdout io.Writer, runs []run, parts int) error {
	w := bufio.NewWriterSize(stdout, 256<<10)
	var line []byte
	for p := 0; p < parts; p++ {
		m, err := newMerger(runs, p, 64<<10)
		if err != nil {
			return err
		}
		for {
			_, k, v, err := m.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				m.close()
				return err
			}
			line = appendLine(line[:0], p, k, v)
			if _, err := w.Write(line); err != nil {
				m.close()
				return fmt.Errorf("write map output: %w", err)
			}
		}
		m.close()
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write map output: %w", err)
	}
	return nil
}

// appendLine appends the streaming line of a shuffle record.
func appendLine(dst []byte, part int, key, val []byte) []byte {
	dst = fmt.Appendf(dst, "%05d\t", part)
	dst = EscapeField(dst, key)
	dst = append(dst, '\t')
	dst = EscapeField(dst, val)
	return append(dst, '\n')
}

// EscapeField appends b to dst with every byte below 0x10 (which includes
// TAB, LF and CR) written as 0x0B followed by 0x40+byte, and every other
// byte as is. The escape preserves byte order: for any a and b,
// bytes.Compare(a, b) equals the comparison of their escapes each followed
// by a TAB (which sorts below every byte an escape starts with).
func EscapeField(dst, b []byte) []byte {
	for _, c := range b {
		if c < 0x10 {
			dst = append(dst, 0x0B, 0x40+c)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

// UnescapeField reverses EscapeField.
func UnescapeField(dst, b []byte) ([]byte, error) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == 0x0B:
			if i+1 >= len(b) || b[i+1] < 0x40 || b[i+1] >= 0x50 {
				return dst, fmt.Errorf("bad escape at byte %d", i)
			}
			dst = append(dst, b[i+1]-0x40)
			i++
		case c < 0x10:
			return dst, fmt.Errorf("unescaped byte %#x at %d", c, i)
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// lineSource reads streaming lines as shuffle records, checking that they
// come sorted.
type lineSource struct {
	r       *bufio.Reader
	nReduce int
	lineNo  int
	line    []byte
	key     []byte
	val     []byte
	pkey    []byte
	pval    []byte
	ppart   int
}

func (s *lineSource) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.line = append(s.line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(s.line) > 0 {
			return s.line, nil
		}
		if err != nil {
			return nil, err
		}
		return s.line[:len(s.line)-1], nil
	}
}

func (s *lineSource) next() (int, []byte, []byte, error) {
	line, err := s.readLine()
	if err != nil {
		if err == io.EOF {
			return 0, nil, nil, io.EOF
		}
		return 0, nil, nil, fmt.Errorf("read stdin: %w", err)
	}
	s.lineNo++
	line = bytes.TrimSuffix(line, []byte{'\r'})
	line = trimKeyOnlyTab(line)
	f1 := bytes.IndexByte(line, '\t')
	if f1 < 0 {
		return 0, nil, nil, fmt.Errorf("stdin line %d: no TAB", s.lineNo)
	}
	rest := line[f1+1:]
	f2 := bytes.IndexByte(rest, '\t')
	if f2 < 0 {
		return 0, nil, nil, fmt.Errorf("stdin line %d: one TAB, want two", s.lineNo)
	}
	part, err := strconv.Atoi(string(line[:f1]))
	if err != nil || part < 0 || part >= s.nReduce {
		return 0, nil, nil, fmt.Errorf("stdin line %d: bad partition %q (job has %d reduces)", s.lineNo, line[:f1], s.nReduce)
	}
	s.key, err = UnescapeField(s.key[:0], rest[:f2])
	if err != nil {
		return 0, nil, nil, fmt.Errorf("stdin line %d: key: %w", s.lineNo, err)
	}
	s.val, err = UnescapeField(s.val[:0], rest[f2+1:])
	if err != nil {
		return 0, nil, nil, fmt.Errorf("stdin line %d: value: %w", s.lineNo, err)
	}
	if s.lineNo > 1 {
		c := part - s.ppart
		if c == 0 {
			c = bytes.Compare(s.key, s.pkey)
		}
		if c == 0 {
			c = bytes.Compare(s.val, s.pval)
		}
		if c < 0 {
			return 0, nil, nil, fmt.Errorf("stdin line %d: input not sorted (sort with LC_ALL=C)", s.lineNo)
		}
	}
	s.ppart = part
	s.pkey = append(s.pkey[:0], s.key...)
	s.pval = append(s.pval[:0], s.val...)
	return part, s.key, s.val, nil
}

func streamReduce(t *Task, ej engineJob, o streamOpts, env func(string) string, stdin io.Reader, c *Counters) error {
	if ej.isMapOnly() {
		return errors.New("map-only job has no reduce")
	}
	create, err := workOutputs(ej, o, env)
	if err != nil {
		return err
	}
	src := &lineSource{r: bufio.NewReaderSize(stdin, 1<<20), nReduce: ej.reduces()}
	g := &grouper{src: src}
	outs := ej.newOutputs('r', create, o.tempDir)
	err = ej.runReduce(t, g, outs, c)
	if cerr := outs.close(); err == nil {
		err = cerr
	}
	rows, n := outs.stats()
	c.Add(engineGroup, "output_records", rows)
	c.Add(engineGroup, "output_bytes", n)
	return err
}

// PublishStreaming commits a Streaming job's outputs: every part file under
// DIR/OUTPUT-NAME/ of each of dirs (the committed work output of the
// Hadoop job, or the task work directories) is moved into its output's
// stage, then _SUCCESS and _counters.json are written and each output is
// published with one rename, as the local runner does. If an output
// already exists nothing is done.
func PublishStreaming(ctx context.Context, res Resolver, job Runnable, dirs []string, counters *Counters) error {
	ej, err := job.compile()
	if err != nil {
		return err
	}
	if counters == nil {
		counters = &Counters{}
	}
	start := time.Now()
	attempt := newAttemptID()
	stages, err := prepareStages(ctx, res, ej.outSpecs(), attempt, slogTo(io.Discard))
	if err != nil {
		return fmt.Errorf("job %s: %w", ej.jobName(), err)
	}
	ok := false
	defer func() {
		if !ok {
			abortStages(stages)
		}
	}()
	for _, d := range dirs {
		for _, s := range stages {
			if err := ctx.Err(); err != nil {
				return err
			}
			fsys, p, err := res.Resolve(d)
			if err != nil {
				return err
			}
			src := path.Join(p, s.spec.name)
			_ = fsys // the stage's file system: outputs and work dirs must share one
			if err := s.moveFiles(src); err != nil {
				return fmt.Errorf("job %s: %w", ej.jobName(), err)
			}
		}
	}
	if err := publish(stages, countersFile{Job: ej.jobName(), Attempt: attempt, DurationMS: time.Since(start).Milliseconds(), Counters: counters.Snapshot()}); err != nil {
		return fmt.Errorf("job %s: %w", ej.jobName(), err)
	}
	ok = true
	return nil
}
