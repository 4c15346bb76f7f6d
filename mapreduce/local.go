package mapreduce

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/scratch"
	"github.com/trawl/trawl/storage"
)

// LocalRunner runs jobs in this process over the local file system (or any
// file system its Storage resolves). The zero value is usable.
type LocalRunner struct {
	// Storage resolves input and output URIs; nil means a
	// storage.NewResolver() (local files and file:// URIs).
	Storage Resolver
	// TempDir is where map output is spilled, and where Parquet writers
	// spool the row group they are writing (a local directory); empty
	// means os.TempDir(). A job's files go to a scratch directory of its
	// own under it (see package scratch), which the job removes when it
	// ends, and which a later job removes if this one was killed.
	TempDir string
	// MemoryBudget bounds the memory of the engine's buffers that grow
	// with the data, shared by the concurrent tasks (each gets
	// MemoryBudget/Parallelism): a map task's sort buffer, a reduce task's
	// merge read buffers. What a task's Parquet readers and writers hold
	// does not grow with the data (writers spool row groups to TempDir)
	// and comes on top, as does the Go heap's headroom; see MemoryLimit.
	// Zero means DefaultMemoryBudget.
	MemoryBudget int64
	// Parallelism is the number of map or reduce tasks run at once; zero
	// means GOMAXPROCS.
	Parallelism int
	// MaxAttempts bounds the attempts of each task; zero means 3.
	MaxAttempts int
	// MergeFactor is the most sorted runs merged at once; more runs are
	// first merged in passes. Zero means 64.
	MergeFactor int
	// Log receives the runner's logs; nil means slog.Default().
	Log *slog.Logger
	// Progress, if set, receives a progress bar (when it is a terminal) and
	// the final counter table. When it is not a terminal, progress is
	// logged every ProgressInterval instead.
	Progress io.Writer
	// ProgressInterval is the period of progress log lines; zero means 10s.
	ProgressInterval time.Duration

	// progressBar draws the progress bar on Progress even if it is not a
	// terminal (tests).
	progressBar bool
}

// DefaultMemoryBudget is LocalRunner's default MemoryBudget.
const DefaultMemoryBudget = 256 << 20

// Memory a process running the engine uses beyond its budget (see
// MemoryLimit).
const (
	limitBase    = 64 << 20 // the runtime, and room for the GC to work in
	limitPerTask = 40 << 20 // one task's Parquet buffers outside the budget
)

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit) a
// process should set when it runs jobs with this memory budget and
// parallelism (zero values mean DefaultMemoryBudget and GOMAXPROCS, as in
// LocalRunner): the budget, plus 40 MiB per concurrent task for what the
// budget does not bound (a Parquet reader holds a decoded page of every
// column; a writer, a page buffer per column and a zstd encoder), plus
// 64 MiB for the runtime and for the garbage collector to work in.
//
// Without a limit, Go's default GOGC=100 lets the heap grow to twice its
// live size before collecting, and a job's live heap is mostly its full
// sort buffers: the process would peak near twice the budget. With the
// limit the collector runs more often when the heap nears it; that costs
// little, since the buffers hold no pointers.
func MemoryLimit(budget int64, parallelism int) int64 {
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	if parallelism <= 0 {
		parallelism = runtime.GOMAXPROCS(0)
	}
	return budget + limitBase + int64(parallelism)*limitPerTask
}

// Result describes a finished job.
type Result struct {
	// Counters are the job's counters (engine group "trawl" and the job's
	// own group, named after the job).
	Counters *Counters
	// Tasks are per-task statistics, map tasks first.
	Tasks []TaskStat
	// Outputs are the published output URIs.
	Outputs []string
	// Duration is the job's wall time.
	Duration time.Duration
}

// TaskStat describes one task.
type TaskStat struct {
	ID            string
	Attempts      int
	InputRecords  int64
	OutputRecords int64
	Spills        int64
	Duration      time.Duration
}

// Run runs job on r and publishes its outputs. See the package doc for the
// commit protocol. If an output already exists the job fails before doing
// any work.
func Run[V, O any](ctx context.Context, r *LocalRunner, job *Job[V, O]) (*Result, error) {
	return r.RunJob(ctx, job)
}

func (r *LocalRunner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

func (r *LocalRunner) resolver() Resolver {
	if r.Storage != nil {
		return r.Storage
	}
	return storage.NewResolver()
}

// RunJob is Run for a type-erased job.
func (r *LocalRunner) RunJob(ctx context.Context, job Runnable) (res *Result, err error) {
	start := time.Now()
	ej, err := job.compile()
	if err != nil {
		return nil, err
	}
	name := ej.jobName()
	log := r.log().With("job", name)
	par := r.Parallelism
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	budget := r.MemoryBudget
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	attempts := r.MaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	factor := r.MergeFactor
	if factor < 2 {
		factor = 64
	}
	resolver := r.resolver()
	attempt := newAttemptID()

	stages, err := prepareStages(ctx, resolver, ej.outSpecs(), attempt, log)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	published := false
	defer func() {
		if !published {
			abortStages(stages)
		}
	}()
	// The spill directory is owned (see package scratch): if this process
	// is killed, the next job removes it.
	sd, err := scratch.New(r.TempDir, name, scratch.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("job %s: spill dir: %w", name, err)
	}
	defer func() {
		if err := sd.Close(); err != nil {
			log.Warn("cannot remove the spill directory", "err", err)
		}
	}()
	tmp := sd.Path()

	splits, err := ej.listSplits(ctx, resolver)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	counters := &Counters{}
	counters.Add(engineGroup, "map_tasks", int64(len(splits)))
	log.Info("job started", "maps", len(splits), "reduces", ej.reduces(), "attempt", attempt)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := newProgress(r.Progress, r.ProgressInterval, log, name, r.progressBar)
	defer prog.stop()

	tr := &taskRunner{ctx: ctx, cancel: cancel, job: name, log: log, res: resolver, attempts: attempts, par: par, counters: counters}

	// Map phase.
	mapRuns := make([][]run, len(splits))
	mapStats := make([]TaskStat, len(splits))
	bufs := make(chan *sortBuffer, par)
	for range par {
		bufs <- newSortBuffer(budget / int64(par))
	}
	var mapTotal int64
	for _, sp := range splits {
		mapTotal += sp.Rows
	}
	prog.phase("map", len(splits), mapTotal)
	err = tr.run(len(splits), "m", func(t *Task, c *Counters, i int) error {
		sp := splits[i]
		var records int64
		t.progress = prog.task()
		ok := false
		defer func() {
			if !ok {
				t.progress.abort()
			}
		}()
		st := &mapStats[i]
		st.ID, st.Attempts = t.ID, t.Attempt+1
		began := time.Now()
		defer func() { st.Duration = time.Since(began) }()
		if ej.isMapOnly() {
			ta := fmt.Sprintf("%s_%d", t.ID, t.Attempt)
			outs := ej.newOutputs(func(out, part int) (io.WriteCloser, error) {
				return stages[out].create(ta, partName('m', part))
			}, tmp)
			err := outs.setPart(sp.Index)
			if err == nil {
				err = ej.runMap(t, sp, nil, outs, &records)
			}
			if cerr := outs.close(); err == nil {
				err = cerr
			}
			if err == nil {
				for _, s := range stages {
					if err = s.commitTask(ta); err != nil {
						break
					}
				}
			}
			if err != nil {
				for _, s := range stages {
					s.abortTask(ta)
				}
				return err
			}
			rows, n := outs.stats()
			st.InputRecords, st.OutputRecords = records, rows
			c.Add(engineGroup, "map_input_records", records)
			c.Add(engineGroup, "output_records", rows)
			c.Add(engineGroup, "output_bytes", n)
			t.progress.finish(records)
			ok = true
			return nil
		}
		buf := <-bufs
		defer func() { buf.reset(); bufs <- buf }()
		sh := &mapShuffle{buf: buf, parts: ej.reduces(), dir: tmp,
			prefix: fmt.Sprintf("%s_%d", t.ID, t.Attempt), combine: ej.combiner(t, c), c: c}
		err := ej.runMap(t, sp, sh, nil, &records)
		if err == nil {
			err = sh.finish()
		}
		if err != nil {
			sh.discard()
			return err
		}
		c.Add(engineGroup, "map_input_records", records)
		mapRuns[i] = sh.runs
		st.InputRecords, st.OutputRecords, st.Spills = records, sh.outRecords, int64(len(sh.runs))
		t.progress.finish(records)
		ok = true
		return nil
	})
	close(bufs)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	stats := mapStats

	if !ej.isMapOnly() {
		var runs []run
		for _, rs := range mapRuns {
			runs = append(runs, rs...)
		}
		runs, err = tr.mergePasses(runs, ej.reduces(), tmp, factor)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", name, err)
		}
		bufSize := int(budget / int64(par) / int64(max(len(runs), 1)))
		bufSize = min(max(bufSize, 4<<10), 256<<10)
		nred := ej.reduces()
		redStats := make([]TaskStat, nred)
		var redTotal int64
		for _, r := range runs {
			redTotal += r.records
		}
		killpoint.Reached(name, "map-done")
		prog.phase("reduce", nred, redTotal)
		err = tr.run(nred, "r", func(t *Task, c *Counters, p int) error {
			st := &redStats[p]
			st.ID, st.Attempts = t.ID, t.Attempt+1
			began := time.Now()
			ta := fmt.Sprintf("%s_%d", t.ID, t.Attempt)
			m, err := newMerger(runs, p, bufSize)
			if err != nil {
				return err
			}
			defer m.close()
			tp := prog.task()
			ok := false
			defer func() {
				if !ok {
					tp.abort()
				}
			}()
			g := &grouper{src: &countingSource{src: m, tp: tp}}
			outs := ej.newOutputs(func(out, part int) (io.WriteCloser, error) {
				return stages[out].create(ta, partName('r', part))
			}, tmp)
			err = ej.runReduce(t, g, outs, c)
			if cerr := outs.close(); err == nil {
				err = cerr
			}
			if err == nil {
				for _, s := range stages {
					if err = s.commitTask(ta); err != nil {
						break
					}
				}
			}
			if err != nil {
				for _, s := range stages {
					s.abortTask(ta)
				}
				return err
			}
			rows, n := outs.stats()
			c.Add(engineGroup, "output_records", rows)
			c.Add(engineGroup, "output_bytes", n)
			st.InputRecords, st.OutputRecords, st.Duration = g.records, rows, time.Since(began)
			tp.finish(g.records)
			ok = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", name, err)
		}
		stats = append(stats, redStats...)
	}
	prog.stop()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	dur := time.Since(start)
	killpoint.Reached(name, "tasks-done")
	if err := publish(stages, countersFile{Job: name, Attempt: attempt, DurationMS: dur.Milliseconds(), Counters: counters.Snapshot()}); err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	published = true
	res = &Result{Counters: counters, Tasks: stats, Duration: dur}
	for _, s := range stages {
		res.Outputs = append(res.Outputs, s.spec.uri)
	}
	log.Info("job done", "duration", dur.Round(time.Millisecond), "outputs", strings.Join(res.Outputs, ","))
	if r.Progress != nil {
		WriteCounters(r.Progress, counters)
	}
	return res, nil
}

// WriteCounters writes c as a compact table (group, name, value).
func WriteCounters(w io.Writer, c *Counters) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight*0)
	snap := c.Snapshot()
	for _, g := range c.Groups() {
		names := make([]string, 0, len(snap[g]))
		for n := range snap[g] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", g, n, snap[g][n])
		}
	}
	tw.Flush()
}

// taskRunner runs tasks in parallel with retries.
type taskRunner struct {
	ctx      context.Context
	cancel   context.CancelFunc
	job      string
	log      *slog.Logger
	res      Resolver
	attempts int
	par      int
	counters *Counters
}

// run runs n tasks (IDs kind-00000...) with at most par at once. A task
// attempt gets its own counters, merged into the job's on success. The
// first task to fail all its attempts cancels the others.
func (tr *taskRunner) run(n int, kind string, fn func(t *Task, c *Counters, i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < min(tr.par, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || tr.ctx.Err() != nil {
					return
				}
				if err := tr.task(kind, i, fn); err != nil {
					once.Do(func() { first = err; tr.cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return tr.ctx.Err()
}

func (tr *taskRunner) task(kind string, i int, fn func(t *Task, c *Counters, i int) error) error {
	id := fmt.Sprintf("%s-%05d", kind, i)
	var err error
	for a := 0; a < tr.attempts; a++ {
		if cerr := tr.ctx.Err(); cerr != nil {
			return cerr
		}
		c := &Counters{}
		actx, acancel := context.WithCancel(tr.ctx)
		t := &Task{Ctx: actx, Job: tr.job, ID: id, Partition: i, Attempt: a,
			Log: tr.log.With("task", id, "attempt", a), Storage: tr.res, counters: c}
		err = attemptSafely(t, func() error { return fn(t, c, i) })
		acancel()
		if err == nil {
			tr.counters.Merge(c)
			return nil
		}
		if tr.ctx.Err() != nil {
			return tr.ctx.Err()
		}
		tr.counters.Add(engineGroup, "failed_task_attempts", 1)
		t.Log.Warn("task attempt failed", "err", err)
	}
	return fmt.Errorf("task %s failed after %d attempts: %w", id, tr.attempts, err)
}

// attemptSafely runs f, turning a panic into an error with a stack summary.
func attemptSafely(t *Task, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s attempt %d: %v\n%s", t.ID, t.Attempt, p, stackSummary(debug.Stack()))
		}
	}()
	return f()
}

// stackSummary keeps the frames of a panic stack after the panic call, at
// most 12 lines.
func stackSummary(st []byte) string {
	lines := strings.Split(string(st), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			lines = lines[i:]
			break
		}
	}
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}

// mergePasses merges runs in groups of factor until at most factor remain.
func (tr *taskRunner) mergePasses(runs []run, parts int, dir string, factor int) ([]run, error) {
	for pass := 0; len(runs) > factor; pass++ {
		groups := (len(runs) + factor - 1) / factor
		next := make([]run, groups)
		err := tr.run(groups, fmt.Sprintf("merge%d", pass), func(t *Task, c *Counters, g int) error {
			lo, hi := g*factor, min((g+1)*factor, len(runs))
			r, err := mergeRuns(runs[lo:hi], parts, dir, fmt.Sprintf("merge%d-%05d_%d.run", pass, g, t.Attempt), 64<<10)
			if err != nil {
				return err
			}
			next[g] = r
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			os.Remove(r.path)
		}
		runs = next
		tr.counters.Add(engineGroup, "merge_passes", 1)
	}
	return runs, nil
}

// slogTo is a text logger writing to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}
