package mapreduce

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"reflect"
	"strings"

	"github.com/trawl/trawl/storage"
)

// MaxReduce is the largest NumReduce (partition numbers are five digits in
// the streaming format).
const MaxReduce = 99999

// Runnable is a job with its types erased, as a Registry builds it for the
// Hadoop task entry and as LocalRunner.RunJob takes it. *Job[V, O]
// implements it.
type Runnable interface {
	// compile validates the job and returns the engine's view of it.
	compile() (engineJob, error)
}

// split is one map task's input: row groups [Start, End) of one file
// (End < 0: to the last).
type split struct {
	Index int
	Input int
	URI   string
	Start int
	End   int
	Bytes int64
	Rows  int64 // from the footer; the records the map task will read
	Work  int64 // Rows times the input's RowWeight: the order of map tasks

	fs   storage.FS
	path string
}

// outSpec names an output: its URI and the subdirectory its files take in
// a streaming task's work output directory.
type outSpec struct {
	uri  string
	name string
}

// engineJob is a validated job with its types erased.
type engineJob interface {
	jobName() string
	jobConf() map[string]string
	reduces() int
	isMapOnly() bool
	outSpecs() []outSpec
	listSplits(ctx context.Context, res Resolver) ([]split, error)
	// runMap runs one map task attempt: into sh, or (map-only) into outs.
	runMap(t *Task, sp split, sh *mapShuffle, outs taskOutputs, records *int64) error
	combiner(t *Task, c *Counters) combineFn
	// newOutputs makes a task's outputs; their Parquet writers spool the
	// row group being written to files in spoolDir ("": os.TempDir()).
	newOutputs(kind byte, create func(out int, name string) (io.WriteCloser, error), spoolDir string) taskOutputs
	// runReduce reduces every group of g, calling outs.setPart whenever
	// the partition changes (and before the first group).
	runReduce(t *Task, g *grouper, outs taskOutputs, c *Counters) error
}

// taskOutputs are the part files one task writes, one per output.
type taskOutputs interface {
	// setPart closes the current part files and starts those of part.
	setPart(part int) error
	// close closes the current part files.
	close() error
	// stats are the rows and bytes written so far by closed part files.
	stats() (rows, bytes int64)
}

// compile validates j (name, inputs, outputs, then the map-only or
// shuffle settings) and returns its plan.
func (j *Job[V, O]) compile() (engineJob, error) {
	p := &plan[V, O]{job: j, nReduce: j.NumReduce, part: j.Partition}
	name := j.Name
	if name == "" {
		return nil, fmt.Errorf("mapreduce: job has no name")
	}
	if strings.ContainsAny(name, " \t\r\n/") {
		return nil, fmt.Errorf("mapreduce: job %q: name must not contain spaces or slashes", name)
	}
	if err := p.compileInputs(); err != nil {
		return nil, err
	}
	if err := p.compileOutputs(); err != nil {
		return nil, err
	}
	if j.MapOnly {
		if err := p.compileMapOnly(); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.compileShuffle(); err != nil {
		return nil, err
	}
	return p, nil
}

// compileInputs checks the job's inputs and sets p.inputs.
func (p *plan[V, O]) compileInputs() error {
	j := p.job
	if len(j.Inputs) == 0 {
		return fmt.Errorf("mapreduce: job %s: no inputs", j.Name)
	}
	for i, in := range j.Inputs {
		if in == nil {
			return fmt.Errorf("mapreduce: job %s: input %d is nil", j.Name, i)
		}
		impl := in.input()
		if impl.run == nil {
			return fmt.Errorf("mapreduce: job %s: input %d (%s) was not made by From", j.Name, i, in.Path())
		}
		p.inputs = append(p.inputs, impl)
	}
	return nil
}

// compileOutputs checks the job's outputs (no two at one path) and sets
// p.outputs and p.specs.
func (p *plan[V, O]) compileOutputs() error {
	j := p.job
	if len(j.Outputs) == 0 {
		return fmt.Errorf("mapreduce: job %s: no outputs", j.Name)
	}
	seen := map[string]int{}
	for i, out := range j.Outputs {
		if out == nil {
			return fmt.Errorf("mapreduce: job %s: output %d is nil", j.Name, i)
		}
		impl := out.output()
		if (impl.sink == nil && impl.files == nil) || impl.path == "" {
			return fmt.Errorf("mapreduce: job %s: output %d (%q) was not made by Write, WriteRouted or WriteFiles", j.Name, i, out.Path())
		}
		if k, dup := seen[strings.TrimRight(impl.path, "/")]; dup {
			return fmt.Errorf("mapreduce: job %s: outputs %d and %d are both %s", j.Name, k, i, impl.path)
		}
		seen[strings.TrimRight(impl.path, "/")] = i
		p.outputs = append(p.outputs, impl)
	}
	// Output subdirectory names for streaming: the base name, or
	// base-INDEX where base names collide.
	count := map[string]int{}
	for _, o := range p.outputs {
		_, b := splitURI(o.path)
		count[b]++
	}
	for i, o := range p.outputs {
		_, b := splitURI(o.path)
		if count[b] > 1 {
			b = fmt.Sprintf("%s-%d", b, i)
		}
		p.specs = append(p.specs, outSpec{uri: o.path, name: b})
	}
	return nil
}

// compileMapOnly checks a map-only job: V is O, and no shuffle settings.
func (p *plan[V, O]) compileMapOnly() error {
	j := p.job
	if reflect.TypeFor[V]() != reflect.TypeFor[O]() {
		return fmt.Errorf("mapreduce: job %s: map-only, but the map value type %v is not the output type %v", j.Name, reflect.TypeFor[V](), reflect.TypeFor[O]())
	}
	if j.Reduce != nil || j.Combine != nil || j.Partition != nil || j.NumReduce != 0 {
		return fmt.Errorf("mapreduce: job %s: map-only jobs take no Reduce, Combine, Partition or NumReduce", j.Name)
	}
	p.nReduce = 0
	return nil
}

// compileShuffle checks a job with a reduce and sets its defaults: one
// reduce task, HashPartitioner, and V's codec.
func (p *plan[V, O]) compileShuffle() error {
	j := p.job
	if j.Reduce == nil {
		return fmt.Errorf("mapreduce: job %s: no Reduce (set MapOnly for a map-only job)", j.Name)
	}
	if p.nReduce == 0 {
		p.nReduce = 1
	}
	if p.nReduce < 0 || p.nReduce > MaxReduce {
		return fmt.Errorf("mapreduce: job %s: NumReduce %d not in 1..%d", j.Name, j.NumReduce, MaxReduce)
	}
	if p.part == nil {
		p.part = HashPartitioner
	}
	codec, err := NewCodec[V]()
	if err != nil {
		return fmt.Errorf("mapreduce: job %s: %w", j.Name, err)
	}
	p.codec = codec
	return nil
}

// plan is a validated Job.
type plan[V, O any] struct {
	job     *Job[V, O]
	inputs  []inputImpl[V]
	outputs []outputImpl[O]
	specs   []outSpec
	codec   *Codec[V]
	part    Partitioner
	nReduce int
}

func (p *plan[V, O]) jobName() string            { return p.job.Name }
func (p *plan[V, O]) jobConf() map[string]string { return p.job.Conf }
func (p *plan[V, O]) reduces() int               { return p.nReduce }
func (p *plan[V, O]) isMapOnly() bool            { return p.job.MapOnly }
func (p *plan[V, O]) outSpecs() []outSpec        { return p.specs }

func (p *plan[V, O]) listSplits(ctx context.Context, res Resolver) ([]split, error) {
	var out []split
	for i, in := range p.inputs {
		files, err := listInput(ctx, res, in.path, in.opts)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			file, err := f.fs.Open(f.path)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", f.uri, err)
			}
			sizes, rows, err := in.groups(file, f.uri)
			if err != nil {
				return nil, err
			}
			if in.opts.wholeFiles {
				var b, n int64
				for g := range sizes {
					b, n = b+sizes[g], n+rows[g]
				}
				out = append(out, split{Index: len(out), Input: i, URI: f.uri, Start: 0, End: -1, Bytes: b, Rows: n, Work: n * in.opts.weight(), fs: f.fs, path: f.path})
				continue
			}
			for s := 0; s < len(sizes); {
				e := s
				var b, n int64
				for e < len(sizes) {
					b += sizes[e]
					n += rows[e]
					e++
					if in.opts.splitGroups > 0 && e-s >= in.opts.splitGroups {
						break
					}
					if in.opts.splitGroups == 0 && b >= SplitBytes {
						break
					}
				}
				out = append(out, split{Index: len(out), Input: i, URI: f.uri, Start: s, End: e, Bytes: b, Rows: n, Work: n * in.opts.weight(), fs: f.fs, path: f.path})
				s = e
			}
		}
	}
	return out, nil
}

func (p *plan[V, O]) runMap(t *Task, sp split, sh *mapShuffle, outs taskOutputs, records *int64) error {
	in := p.inputs[sp.Input]
	t.Split = sp.URI
	f, err := sp.fs.Open(sp.path)
	if err != nil {
		return fmt.Errorf("input %s: %w", sp.URI, err)
	}
	var emitErr error
	var valBuf []byte
	var emit Emit[V]
	if p.job.MapOnly {
		o := outs.(*outputs[O])
		emit = func(_ string, v V) {
			if emitErr != nil {
				return
			}
			out := any(v).(O)
			emitErr = o.offer(&out)
		}
	} else {
		emit = func(key string, v V) {
			if emitErr != nil {
				return
			}
			valBuf = p.codec.Append(valBuf[:0], &v)
			part := p.part(key, p.nReduce)
			if part < 0 || part >= p.nReduce {
				emitErr = fmt.Errorf("partitioner put key %q in partition %d of %d", key, part, p.nReduce)
				return
			}
			emitErr = sh.add(part, key, valBuf)
		}
	}
	check := func() error {
		t.progress.update(*records)
		return emitErr
	}
	if p.job.MapSetup == nil && p.job.MapCleanup == nil {
		t.State = nil
		return in.run(t, f, sp.URI, sp.Start, sp.End, emit, check, records)
	}
	return p.runMapHooked(t, func() error {
		return in.run(t, f, sp.URI, sp.Start, sp.End, emit, check, records)
	}, emit, check)
}

func (p *plan[V, O]) values(vals iter.Seq[[]byte], errp *error) iter.Seq[V] {
	return func(yield func(V) bool) {
		var v V
		for b := range vals {
			if err := p.codec.Decode(b, &v); err != nil {
				*errp = err
				return
			}
			if !yield(v) {
				return
			}
		}
	}
}

func (p *plan[V, O]) combiner(t *Task, c *Counters) combineFn {
	if p.job.Combine == nil {
		return nil
	}
	return func(key []byte, vals [][]byte, emit func([]byte)) error {
		var decErr error
		var buf []byte
		var n int64
		seq := p.values(func(yield func([]byte) bool) {
			for _, b := range vals {
				if !yield(b) {
					return
				}
			}
		}, &decErr)
		err := p.job.Combine(t, string(key), seq, func(v V) {
			buf = p.codec.Append(buf[:0], &v)
			emit(buf)
			n++
		})
		if err == nil {
			err = decErr
		}
		if err != nil {
			return fmt.Errorf("combine key %q: %w", key, err)
		}
		c.Add(engineGroup, "combine_input_records", int64(len(vals)))
		c.Add(engineGroup, "combine_output_records", n)
		return nil
	}
}

func (p *plan[V, O]) newOutputs(kind byte, create func(out int, name string) (io.WriteCloser, error), spoolDir string) taskOutputs {
	return &outputs[O]{outs: p.outputs, kind: kind, create: create, spoolDir: spoolDir}
}

func (p *plan[V, O]) runReduce(t *Task, g *grouper, outs taskOutputs, c *Counters) error {
	o := outs.(*outputs[O])
	cur := -1
	var groups, emitted int64
	var outErr error
	out := func(r O) {
		if outErr != nil {
			return
		}
		emitted++
		outErr = o.offer(&r)
	}
	defer func() {
		c.Add(engineGroup, "reduce_input_groups", groups)
		c.Add(engineGroup, "reduce_input_records", g.records)
		c.Add(engineGroup, "reduce_output_records", emitted)
	}()
	for g.nextGroup() {
		if err := t.Ctx.Err(); err != nil {
			return err
		}
		if g.groupPrt != cur {
			if err := o.setPart(g.groupPrt); err != nil {
				return err
			}
			cur = g.groupPrt
			t.State = nil
		}
		groups++
		key := string(g.groupKey)
		var decErr error
		if err := p.job.Reduce(t, key, p.values(g.values, &decErr), out); err != nil {
			return fmt.Errorf("reduce key %q: %w", key, err)
		}
		if decErr != nil {
			return fmt.Errorf("reduce key %q: %w", key, decErr)
		}
		if outErr != nil {
			return fmt.Errorf("reduce key %q: write output: %w", key, outErr)
		}
	}
	return g.err
}

// outputs is the taskOutputs of a job with output type O.
type outputs[O any] struct {
	outs     []outputImpl[O]
	kind     byte // 'm' or 'r', of the part files' names
	create   func(out int, name string) (io.WriteCloser, error)
	spoolDir string
	sinks    []partSink[O]
	rows     int64
	bytes    int64
}

func (o *outputs[O]) setPart(part int) error {
	if err := o.close(); err != nil {
		return err
	}
	o.sinks = make([]partSink[O], len(o.outs))
	for i, out := range o.outs {
		if out.files != nil {
			o.sinks[i] = out.files(part, func(name string) (io.WriteCloser, error) { return o.create(i, name) })
			continue
		}
		o.sinks[i] = out.sink(func() (io.WriteCloser, error) { return o.create(i, partName(o.kind, part)) }, o.spoolDir)
	}
	return nil
}

func (o *outputs[O]) offer(r *O) error {
	for _, s := range o.sinks {
		if err := s.offer(r); err != nil {
			return err
		}
	}
	return nil
}

func (o *outputs[O]) close() error {
	var first error
	for _, s := range o.sinks {
		rows, n, err := s.close()
		o.rows += rows
		o.bytes += n
		if err != nil && first == nil {
			first = err
		}
	}
	o.sinks = nil
	return first
}

func (o *outputs[O]) stats() (int64, int64) { return o.rows, o.bytes }

// engineGroup is the counter group of the engine's own counters.
const engineGroup = "trawl"

// mapShuffle is the map side of the shuffle for one task attempt.
type mapShuffle struct {
	buf     *sortBuffer
	parts   int
	dir     string
	prefix  string
	combine combineFn
	runs    []run
	c       *Counters

	outRecords, outBytes int64
}

func (s *mapShuffle) add(part int, key string, val []byte) error {
	if !s.buf.add(part, key, val) {
		if err := s.spill(); err != nil {
			return err
		}
		s.buf.add(part, key, val) // an empty buffer takes any record
	}
	s.outRecords++
	s.outBytes += int64(len(key) + len(val))
	return nil
}

func (s *mapShuffle) spill() error {
	if s.buf.empty() {
		return nil
	}
	r, err := s.buf.spill(s.dir, fmt.Sprintf("%s-%04d.run", s.prefix, len(s.runs)), s.parts, s.combine)
	if err != nil {
		return err
	}
	s.runs = append(s.runs, r)
	s.c.Add(engineGroup, "spills", 1)
	s.c.Add(engineGroup, "spilled_records", r.records)
	return nil
}

// finish spills what is buffered and adds the attempt's output counters.
func (s *mapShuffle) finish() error {
	if err := s.spill(); err != nil {
		return err
	}
	s.c.Add(engineGroup, "map_output_records", s.outRecords)
	s.c.Add(engineGroup, "map_output_bytes", s.outBytes)
	return nil
}

// discard removes the attempt's run files.
func (s *mapShuffle) discard() {
	for _, r := range s.runs {
		os.Remove(r.path)
	}
	s.runs = nil
	s.buf.reset()
}
