// Package mapreduce is trawl's job engine: a job is declared once with typed
// Go functions and runs either embedded (the local runner) or as Hadoop
// Streaming tasks of the trawl binary (the task entry), with identical output.
//
//	job := &mapreduce.Job[int64, Count]{
//		Name: "wordcount",
//		Inputs: []mapreduce.Input[int64]{mapreduce.From(docs,
//			func(t *mapreduce.Task, d Doc, emit mapreduce.Emit[int64]) error {
//				for _, w := range strings.Fields(d.Text) {
//					emit(w, 1)
//				}
//				return nil
//			})},
//		Reduce: func(t *mapreduce.Task, word string, ns iter.Seq[int64], out func(Count)) error {
//			c := Count{Word: word}
//			for n := range ns {
//				c.N += n
//			}
//			out(c)
//			return nil
//		},
//		Outputs: []mapreduce.Output[Count]{mapreduce.Write[Count](counts)},
//	}
//	res, err := mapreduce.Run(ctx, &mapreduce.LocalRunner{}, job)
//
// A driver does not run jobs directly: it describes each by a Spec, a
// struct of the job's settings with a method that builds the job, and
// runs it with Engine.Run, on whichever Runner the Engine has (the
// LocalRunner, or the hadoop package's Submitter, whose tasks rebuild the
// job from the spec's JSON through a Registry). The package's examples
// run a word count both ways: Example on the local runner, and
// ExampleRegister and ExampleRunnerFunc from a spec through a Registry.
//
// # Jobs
//
// A Job reads one or more Inputs (Parquet files, each row a record of the
// input's type), maps every record to zero or more (key, value) pairs, groups
// the pairs by key (keys sort as bytes), reduces each group to zero or more
// output records, and writes those as zstd Parquet, one part file per reduce
// task, sorted by key.
//
// # Determinism
//
// Within a group, values arrive sorted by their shuffle encoding (see
// EncodeValue), on both engines. A reduce function therefore sees the same
// values in the same order on every run, and a job's output is a pure
// function of its inputs and configuration.
//
// # Output commit
//
// Each output directory OUT is staged as DIR/_temporary/ATTEMPT/NAME (DIR and
// NAME being OUT's parent and base name); task attempts write into their own
// subdirectory and a task's files are moved into the stage when it succeeds.
// When every task has succeeded the engine writes _SUCCESS and _counters.json
// into the stage and publishes it with one rename to OUT. A failed or killed
// job leaves OUT as it was (absent) and whatever it staged under _temporary,
// which the next run removes.
//
// # Memory
//
// A process running jobs has a memory budget (LocalRunner.MemoryBudget,
// the setting engine.memory, default 256 MiB), split evenly between the
// tasks it runs at once (LocalRunner.Parallelism, GOMAXPROCS by default):
// each task's share is budget/parallelism. A Hadoop Streaming task runs
// alone in its process and has the whole budget. The share bounds the
// buffers that grow with the data:
//
//   - A map task's sort buffer allocates nothing up front. Its arena starts
//     with a 16 KiB chunk and each chunk it adds is as large as the arena
//     already is (so the arena doubles), up to chunks of 1/64 of the share
//     (at most 4 MiB); its index of 40-byte entries starts at 256 and grows
//     by half. The last chunk is cut to what the share leaves, and when
//     the next record would pass the share the buffer is sorted, spilled
//     to a run file and refilled, keeping its memory. A task over a few
//     thousand records thus holds a few hundred KiB whatever the budget,
//     and a full buffer holds its share to within a few percent. The map
//     phase's buffers are released when it ends, before the reduce phase.
//   - A reduce task reads each run it merges through a buffer of its share
//     divided by the runs (4 to 256 KiB); a merge pass, of its share
//     divided by the merge factor (4 to 64 KiB).
//
// What does not grow with the data comes on top, per task: a Parquet
// reader holds a decoded page of each column it reads; a Parquet writer,
// parquet-go's page buffer of each column (256 KiB for a required column),
// the first 64 KiB of each column chunk of the row group it is writing
// (the rest is spooled to the temporary directory) and a zstd encoder,
// about 7 MiB for a CrawlDB writer; a spill writes through a buffer the
// size of its records, at most 256 KiB, as a merge pass does. Read
// buffers are no larger than the run partitions they read. Per process there are the Go runtime and the program,
// about 25 MiB.
//
// MemoryLimit is the highest soft memory limit the trawl commands set from
// the budget: the budget plus 64 MiB plus 40 MiB per concurrent task, so
// 144 MiB above the budget on two cores. That bounds the fixed overhead:
// the collector lets garbage (decoded rows, encoded values) accumulate
// until the heap grows by its ratio of the live size or nears the limit,
// whichever comes first, so a process peaks below the limit, the nearer to
// it the more of its budget its buffers fill. (Below MemoryLimit the trawl
// command moves the limit with the live heap, so that a small job stays
// small.)
// Measured on two cores (TestPeakRSS, a job of 2M records whose map output
// is 217 MiB, its peak resident memory above the 21-25 MiB of the process
// before it): 75 MiB at a 16 MiB budget (limit 160 MiB), 137 MiB at 64 MiB
// (limit 208 MiB), 362 MiB at 256 MiB (limit 400 MiB). A whole embedded
// crawl (trawl crawl --simweb, three rounds) peaks at 85-110 MiB for a
// 600-page web and 165-190 MiB for a 20000-page one (about 7400 pages
// fetched), at either a 64 MiB or the default budget: its jobs' data fits
// the budget, and the fixed part and the collector's timing decide (open
// Parquet writers most of all).
package mapreduce

import (
	"context"
	"iter"
	"log/slog"
)

// Emit passes one (key, value) pair from a map or combine function to the
// shuffle. Keys sort as bytes.
type Emit[V any] func(key string, value V)

// MapFunc maps one input record of type R to zero or more pairs.
// A returned error fails the task attempt (which is retried, bounded).
type MapFunc[R, V any] func(t *Task, rec R, emit Emit[V]) error

// ReduceFunc reduces the values of one key to zero or more output records.
// values may be iterated once; they arrive sorted by their shuffle encoding.
type ReduceFunc[V, O any] func(t *Task, key string, values iter.Seq[V], out func(O)) error

// CombineFunc pre-reduces the values of one key on the map side; it emits
// values for the same key. It must not change what Reduce computes.
type CombineFunc[V any] func(t *Task, key string, values iter.Seq[V], emit func(V)) error

// Partitioner assigns a key to one of n reduce partitions, 0 <= p < n.
type Partitioner func(key string, n int) int

// Job is a MapReduce job over typed records. V is the shuffle value type
// and O the reduce output type. The zero values of the optional fields are
// usable defaults.
type Job[V, O any] struct {
	// Name identifies the job in logs, counters and the Hadoop task entry.
	Name string
	// Conf is informational (JobInfo.Conf): the engine sends a job's tasks
	// the Conf of the Spec that built it (SpecConf), from which the Hadoop
	// task entry rebuilds the job through a Registry. A job built by a
	// Spec leaves it nil.
	Conf map[string]string
	// Inputs are read by map tasks: one task per input file, or per range
	// of row groups of a large file.
	Inputs []Input[V]
	// Combine is optional.
	Combine CombineFunc[V]
	// Reduce is required unless MapOnly.
	Reduce ReduceFunc[V, O]
	// Partition defaults to HashPartitioner.
	Partition Partitioner
	// NumReduce is the number of reduce tasks (and at most that many part
	// files per output). Zero defaults to 1; at most 99999.
	NumReduce int
	// MapOnly makes a job without shuffle or reduce: every value a map
	// function emits is an output record (V and O must then be the same
	// type, checked when the job starts; keys are ignored), written to one
	// part file part-m-NNNNN.parquet per map task. Combine, Reduce,
	// Partition and NumReduce must be unset.
	MapOnly bool
	// Outputs are where reduce output records go: each record is offered to
	// every output, which writes it if its route accepts it.
	Outputs []Output[O]
	// MapSetup, if set, runs once per map task attempt before its first
	// record, as Hadoop's Mapper.setup: it typically puts what the
	// attempt's map calls share in Task.State. Its error fails the
	// attempt.
	MapSetup func(t *Task) error
	// MapCleanup, if set, runs once per map task attempt after its last
	// record, when every map call succeeded, as Hadoop's Mapper.cleanup:
	// it may emit pairs as a map function does (in a map-only job, output
	// records), so that a task can act on its whole input at its end.
	// Its error fails the attempt.
	//
	// Both engines call MapSetup and MapCleanup around each map split (a
	// map task reads one split; a streaming task given several manifest
	// lines runs them one after another, each between its own MapSetup
	// and MapCleanup), and cancel Task.Ctx when the split's attempt ends,
	// successful or not: what MapSetup opens can be released with
	// context.AfterFunc(t.Ctx, ...).
	MapCleanup func(t *Task, emit Emit[V]) error
}

// Input is one input of a job: a path with a record type and a map function.
// Construct it with From.
type Input[V any] interface {
	// Path is the input's URI: a Parquet file or a directory of part files.
	Path() string
	input() inputImpl[V]
}

// Output is one output of a job: a directory of Parquet part files with a
// record type and a route from the job's output records. Construct it with
// Write or WriteRouted.
type Output[O any] interface {
	// Path is the output directory's URI.
	Path() string
	output() outputImpl[O]
}

// Task is what map, combine and reduce functions get from the engine: the
// task's context, identity, logger and counters.
type Task struct {
	// Ctx is cancelled when the job is cancelled or the task attempt fails.
	Ctx context.Context
	// Job is the job's name.
	Job string
	// ID names the task, as "m-00003" or "r-00000".
	ID string
	// Partition is the task's number among the job's map or reduce tasks.
	Partition int
	// Attempt counts retries of this task, from 0.
	Attempt int
	// Log is the task's logger.
	Log *slog.Logger
	// Storage resolves URIs as the engine running the task does, for a
	// function that reads a side file (as a Hadoop task reaches its
	// FileSystem through its configuration).
	Storage Resolver
	// Split is the URI of the file a map task's current split reads (a
	// part file of one of the job's inputs); empty in reduce tasks. A map
	// function can read a side file that goes with it, as the parse job
	// reads the crawl_fetch part of each content part.
	Split string
	// State is the job's own state for the task, for its functions to
	// share without a map keyed by task: the engine sets it to nil before
	// a map split's MapSetup and before a reduce task's first group of
	// each partition, and leaves it alone otherwise.
	State any

	counters *Counters
	progress *taskProgress // nil: not reported
	group    string        // the counter group, when not Job (InGroup)
}

// Count adds n to the job-defined counter name in the job's counter group
// (or the group of InGroup). It is safe for concurrent use.
func (t *Task) Count(name string, n int64) {
	if t.counters == nil {
		return
	}
	g := t.group
	if g == "" {
		g = t.Job
	}
	t.counters.Add(g, name, n)
}

// InGroup returns a copy of t whose Count adds to the counter group group
// rather than the job's, for a job that does another job's work as well: a
// fetch that parses as it fetches counts its parsing in the parse job's
// group, so the two read alike.
func (t *Task) InGroup(group string) *Task {
	c := *t
	c.group = group
	return &c
}
