package mapreduce

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
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

// RunJob is Run for a type-erased job. It plans the job (stages its
// outputs, makes its spill directory, lists its splits), runs its map
// tasks, then its reduce tasks, and publishes its outputs; see run.
func (r *LocalRunner) RunJob(ctx context.Context, job Runnable) (*Result, error) {
	start := time.Now()
	ej, err := job.compile()
	if err != nil {
		return nil, err
	}
	lj := r.newLocalJob(ej, start)
	var res *Result
	// The job's goroutines carry its name as a profiler label, so a CPU
	// profile of a whole crawl splits by job (go tool pprof -tagfocus).
	pprof.Do(ctx, pprof.Labels("job", lj.name), func(ctx context.Context) {
		res, err = lj.run(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", lj.name, err)
	}
	return res, nil
}

// localJob is one run of a job on a LocalRunner: the settings and state
// its phases share.
type localJob struct {
	r        *LocalRunner
	ej       engineJob
	name     string
	log      *slog.Logger
	res      Resolver
	start    time.Time
	attempt  string // the job attempt, naming its output stages
	par      int    // tasks at once
	attempts int    // attempts per task
	budget   int64  // memory budget, shared by par tasks
	factor   int    // merge factor

	// Set by run.
	stages   []*stage
	tmp      string // the spill directory
	counters *Counters
	prog     *progress
	tr       *taskRunner
}

// newLocalJob resolves r's defaults for a run of ej.
func (r *LocalRunner) newLocalJob(ej engineJob, start time.Time) *localJob {
	name := ej.jobName()
	lj := &localJob{r: r, ej: ej, name: name, log: r.log().With("job", name),
		res: r.resolver(), start: start, attempt: newAttemptID(),
		par: r.Parallelism, attempts: r.MaxAttempts, budget: r.MemoryBudget, factor: r.MergeFactor,
		counters: &Counters{}}
	if lj.par <= 0 {
		lj.par = runtime.GOMAXPROCS(0)
	}
	if lj.budget <= 0 {
		lj.budget = DefaultMemoryBudget
	}
	if lj.attempts <= 0 {
		lj.attempts = 3
	}
	if lj.factor < 2 {
		lj.factor = 64
	}
	return lj
}

// run runs the job: it stages the outputs (removed again unless the job
// publishes them), makes the spill directory (removed when run returns),
// lists the splits, runs the map and reduce phases and publishes.
func (lj *localJob) run(ctx context.Context) (*Result, error) {
	stages, err := prepareStages(ctx, lj.res, lj.ej.outSpecs(), lj.attempt, lj.log)
	if err != nil {
		return nil, err
	}
	lj.stages = stages
	published := false
	defer func() {
		if !published {
			abortStages(stages)
		}
	}()
	// The spill directory is owned (see package scratch): if this process
	// is killed, the next job removes it.
	sd, err := scratch.New(lj.r.TempDir, lj.name, scratch.WithLogger(lj.log))
	if err != nil {
		return nil, fmt.Errorf("spill dir: %w", err)
	}
	defer func() {
		if err := sd.Close(); err != nil {
			lj.log.Warn("cannot remove the spill directory", "err", err)
		}
	}()
	lj.tmp = sd.Path()

	splits, err := lj.ej.listSplits(ctx, lj.res)
	if err != nil {
		return nil, err
	}
	lj.counters.Add(engineGroup, "map_tasks", int64(len(splits)))
	lj.log.Info("job started", "maps", len(splits), "reduces", lj.ej.reduces(), "attempt", lj.attempt)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lj.prog = newProgress(lj.r.Progress, lj.r.ProgressInterval, lj.log, lj.name, lj.r.progressBar)
	defer lj.prog.stop()
	lj.tr = &taskRunner{ctx: ctx, cancel: cancel, job: lj.name, log: lj.log, res: lj.res,
		attempts: lj.attempts, par: lj.par, counters: lj.counters}

	stats, runs, err := lj.runMaps(splits)
	if err != nil {
		return nil, err
	}
	if !lj.ej.isMapOnly() {
		redStats, err := lj.runReduces(runs)
		if err != nil {
			return nil, err
		}
		stats = append(stats, redStats...)
	}
	lj.prog.stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := lj.publish(stats)
	if err != nil {
		return nil, err
	}
	published = true
	return res, nil
}

// runMaps runs the map phase: a task per split, each with a sort buffer
// of its own (budget/par). It returns the map tasks' statistics and, in a
// job with a shuffle, the sorted runs each task spilled.
func (lj *localJob) runMaps(splits []split) ([]TaskStat, [][]run, error) {
	mapRuns := make([][]run, len(splits))
	stats := make([]TaskStat, len(splits))
	bufs := make(chan *sortBuffer, lj.par)
	for range lj.par {
		bufs <- newSortBuffer(lj.budget / int64(lj.par))
	}
	defer close(bufs)
	var total int64
	for _, sp := range splits {
		total += sp.Rows
	}
	lj.prog.phase("map", len(splits), total)
	err := lj.tr.runOrder(len(splits), largestFirst(splits), "m", func(t *Task, c *Counters, i int) error {
		t.progress = lj.prog.task()
		ok := false
		defer func() {
			if !ok {
				t.progress.abort()
			}
		}()
		st := &stats[i]
		st.ID, st.Attempts = t.ID, t.Attempt+1
		began := time.Now()
		defer func() { st.Duration = time.Since(began) }()
		if lj.ej.isMapOnly() {
			if err := lj.mapOnlyTask(t, c, splits[i], st); err != nil {
				return err
			}
		} else {
			runs, err := lj.shuffleMapTask(t, c, splits[i], st, bufs)
			if err != nil {
				return err
			}
			mapRuns[i] = runs
		}
		t.progress.finish(st.InputRecords)
		ok = true
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return stats, mapRuns, nil
}

// mapOnlyTask runs one attempt of a map-only job's map task: the split's
// records go to part files part-m-NNNNN (NNNNN the split's index) of every
// output, committed to the stages when the attempt succeeds.
func (lj *localJob) mapOnlyTask(t *Task, c *Counters, sp split, st *TaskStat) error {
	var records int64
	ta := fmt.Sprintf("%s_%d", t.ID, t.Attempt)
	outs := lj.ej.newOutputs('m', func(out int, name string) (io.WriteCloser, error) {
		return lj.stages[out].create(ta, name)
	}, lj.tmp)
	err := outs.setPart(sp.Index)
	if err == nil {
		err = lj.ej.runMap(t, sp, nil, outs, &records)
	}
	if err := lj.commitTask(ta, outs, err); err != nil {
		return err
	}
	rows, n := outs.stats()
	st.InputRecords, st.OutputRecords = records, rows
	c.Add(engineGroup, "map_input_records", records)
	c.Add(engineGroup, "output_records", rows)
	c.Add(engineGroup, "output_bytes", n)
	return nil
}

// shuffleMapTask runs one attempt of a map task that feeds the shuffle:
// it sorts the split's pairs in a buffer taken from bufs and spills them
// as sorted runs, which it returns. A failed attempt removes its runs.
func (lj *localJob) shuffleMapTask(t *Task, c *Counters, sp split, st *TaskStat, bufs chan *sortBuffer) ([]run, error) {
	var records int64
	buf := <-bufs
	defer func() { buf.reset(); bufs <- buf }()
	sh := &mapShuffle{buf: buf, parts: lj.ej.reduces(), dir: lj.tmp,
		prefix: fmt.Sprintf("%s_%d", t.ID, t.Attempt), combine: lj.ej.combiner(t, c), c: c}
	err := lj.ej.runMap(t, sp, sh, nil, &records)
	if err == nil {
		err = sh.finish()
	}
	if err != nil {
		sh.discard()
		return nil, err
	}
	c.Add(engineGroup, "map_input_records", records)
	st.InputRecords, st.OutputRecords, st.Spills = records, sh.outRecords, int64(len(sh.runs))
	return sh.runs, nil
}

// runReduces runs the reduce phase over the map tasks' runs: it first
// merges them in passes until at most the merge factor remain, then runs
// a reduce task per partition. It returns the reduce tasks' statistics.
func (lj *localJob) runReduces(mapRuns [][]run) ([]TaskStat, error) {
	var runs []run
	for _, rs := range mapRuns {
		runs = append(runs, rs...)
	}
	nred := lj.ej.reduces()
	share := lj.budget / int64(lj.par)
	runs, err := lj.tr.mergePasses(runs, nred, lj.tmp, lj.factor, mergeBufSize(share, lj.factor, 64<<10))
	if err != nil {
		return nil, err
	}
	bufSize := mergeBufSize(share, len(runs), 256<<10)
	stats := make([]TaskStat, nred)
	var total int64
	for _, r := range runs {
		total += r.records
	}
	killpoint.Reached(lj.name, "map-done")
	lj.prog.phase("reduce", nred, total)
	err = lj.tr.run(nred, "r", func(t *Task, c *Counters, p int) error {
		return lj.reduceTask(t, c, runs, p, bufSize, &stats[p])
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}

// reduceTask runs one attempt of reduce task p: it merges partition p of
// every run (with read buffers of bufSize bytes), reduces its groups into
// part files part-r-PPPPP of the outputs, and commits them to the stages
// when the attempt succeeds.
func (lj *localJob) reduceTask(t *Task, c *Counters, runs []run, p, bufSize int, st *TaskStat) error {
	st.ID, st.Attempts = t.ID, t.Attempt+1
	began := time.Now()
	ta := fmt.Sprintf("%s_%d", t.ID, t.Attempt)
	m, err := newMerger(runs, p, bufSize)
	if err != nil {
		return err
	}
	defer m.close()
	tp := lj.prog.task()
	ok := false
	defer func() {
		if !ok {
			tp.abort()
		}
	}()
	g := &grouper{src: &countingSource{src: m, tp: tp}}
	outs := lj.ej.newOutputs('r', func(out int, name string) (io.WriteCloser, error) {
		return lj.stages[out].create(ta, name)
	}, lj.tmp)
	err = lj.ej.runReduce(t, g, outs, c)
	if err := lj.commitTask(ta, outs, err); err != nil {
		return err
	}
	rows, n := outs.stats()
	c.Add(engineGroup, "output_records", rows)
	c.Add(engineGroup, "output_bytes", n)
	st.InputRecords, st.OutputRecords, st.Duration = g.records, rows, time.Since(began)
	tp.finish(g.records)
	ok = true
	return nil
}

// commitTask closes the part files of task attempt ta and, if err (the
// attempt's own error) is nil, moves them into every output's stage. On
// any error it removes what the attempt wrote and returns the error.
func (lj *localJob) commitTask(ta string, outs taskOutputs, err error) error {
	if cerr := outs.close(); err == nil {
		err = cerr
	}
	if err == nil {
		for _, s := range lj.stages {
			if err = s.commitTask(ta); err != nil {
				break
			}
		}
	}
	if err != nil {
		for _, s := range lj.stages {
			s.abortTask(ta)
		}
	}
	return err
}

// publish writes _SUCCESS and _counters.json into the stages, publishes
// them as the outputs, and reports the job done.
func (lj *localJob) publish(stats []TaskStat) (*Result, error) {
	dur := time.Since(lj.start)
	killpoint.Reached(lj.name, "tasks-done")
	cf := countersFile{Job: lj.name, Attempt: lj.attempt, DurationMS: dur.Milliseconds(), Counters: lj.counters.Snapshot()}
	if err := publish(lj.stages, cf); err != nil {
		return nil, err
	}
	res := &Result{Counters: lj.counters, Tasks: stats, Duration: dur}
	for _, s := range lj.stages {
		res.Outputs = append(res.Outputs, s.spec.uri)
	}
	lj.log.Info("job done", "duration", dur.Round(time.Millisecond), "outputs", strings.Join(res.Outputs, ","))
	if lj.r.Progress != nil {
		WriteCounters(lj.r.Progress, lj.counters)
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
	return tr.runOrder(n, nil, kind, fn)
}

// runOrder is run taking the tasks in the given order (a permutation of
// [0, n); nil: in index order). A task keeps its index (its ID and
// partition) whatever its place in the order.
func (tr *taskRunner) runOrder(n int, order []int, kind string, fn func(t *Task, c *Counters, i int) error) error {
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
				if order != nil {
					i = order[i]
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

// mergeBufSize is the read buffer size of each of the runs a task merges
// at once: the task's share of the memory budget split between them, at
// least 4 KiB and at most most.
func mergeBufSize(share int64, runs, most int) int {
	return int(min(max(share/int64(max(runs, 1)), 4<<10), int64(most)))
}

// mergePasses merges runs in groups of factor, reading each with a buffer
// of bufSize bytes, until at most factor remain.
func (tr *taskRunner) mergePasses(runs []run, parts int, dir string, factor, bufSize int) ([]run, error) {
	for pass := 0; len(runs) > factor; pass++ {
		groups := (len(runs) + factor - 1) / factor
		next := make([]run, groups)
		err := tr.run(groups, fmt.Sprintf("merge%d", pass), func(t *Task, c *Counters, g int) error {
			lo, hi := g*factor, min((g+1)*factor, len(runs))
			r, err := mergeRuns(runs[lo:hi], parts, dir, fmt.Sprintf("merge%d-%05d_%d.run", pass, g, t.Attempt), bufSize)
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

// largestFirst returns the order in which to run the map tasks of splits:
// the largest (in rows times their input's RowWeight) first, ties by
// index. With more tasks than slots, index order can leave the largest
// split for last, running alone on one core while the others idle (a
// CrawlDB update's parse input is one large file after the CrawlDB's
// parts); largest first bounds that tail by the smallest tasks (Graham's
// LPT rule).
func largestFirst(splits []split) []int {
	order := make([]int, len(splits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(splits[b].Work, splits[a].Work) })
	return order
}
