//go:build unix

// Package streamemu is an EMULATION of `hadoop jar hadoop-streaming.jar`,
// for testing trawl's Hadoop submitter (package hadoop) where no Hadoop
// can be installed. It is not Hadoop and runs no cluster: built as
// $HADOOP_HOME/bin/hadoop of a fake Hadoop home (cmd/hadoop; the jar may
// be an empty file named hadoop-streaming-*.jar), it runs a streaming
// job's map and reduce tasks as local processes, the way Hadoop runs
// them, so that the real trawl binary meets the same protocol it meets on
// a cluster.
//
// # What it emulates
//
//   - The command line: `jar JAR`, then the generic options -D KEY=VALUE
//     and -files (which must come first, as in Hadoop: a generic option
//     after a streaming option is an error), then -input, -output,
//     -mapper, -reducer, -inputformat, -partitioner, -numReduceTasks,
//     -cmdenv. An unknown or unsupported option fails the command.
//   - Input: NLineInputFormat only (mapreduce.input.lineinputformat.
//     linespermap, default 1); each map task's stdin gets its lines, each
//     prefixed with its byte offset in its file and a TAB.
//   - The task environment: a clean environment (PATH, HOME, USER and
//     LOGNAME of the emulator's, TMPDIR in the task's container, PWD,
//     CONTAINER_ID), the mapreduce.map.env or mapreduce.reduce.env
//     variables, every job property exported with each character other
//     than a letter or digit turned into '_' (Streaming's rule), among
//     them mapreduce_task_partition, mapreduce_task_attempt_id,
//     mapreduce_task_output_dir and mapreduce_job_reduces, then -cmdenv.
//     Nothing else of the submitter's environment reaches a task.
//   - -files: each entry (a local path or file: URI, with an optional
//     #NAME) is linked (a symlink, not a copy) into every task attempt's
//     own working directory under its name; the mapper and reducer
//     commands are split into words and a relative program is found in
//     that directory first.
//   - The shuffle: map output lines are split into key and value at the
//     stream.num.map.output.key.fields-th separator (a line with fewer is
//     all key), partitioned by Hadoop's HashPartitioner or by
//     KeyFieldBasedPartitioner with mapreduce.partition.keypartitioner.
//     options of the form -kF[,L] (Hadoop's hash functions, bit for bit),
//     sorted by key as bytes (Text's comparator); records with equal keys
//     reach the reducer in no guaranteed order (the emulator gives the
//     later ones first, so a submitter must not rely on it). Each reducer
//     gets "KEY<TAB>VALUE" lines, "KEY<TAB>" for an empty value, as
//     Streaming's TextInputWriter writes them.
//   - Output: FileOutputCommitter's algorithm 1. A task attempt writes in
//     OUTPUT/_temporary/1/_temporary/ATTEMPT (its mapreduce_task_output_dir,
//     as a file: URI), with its stdout as part-NNNNN there; the directory
//     is promoted to OUTPUT/_temporary/1/TASK only when the attempt
//     succeeds, and removed when it fails. The job commit merges the task
//     directories into OUTPUT and writes _SUCCESS; a failed job leaves no
//     _temporary. An existing OUTPUT is an error, as in Hadoop.
//   - Attempts: a task whose process exits non-zero, is killed, or is
//     silent (no output, no stderr, no input read) for mapreduce.task.
//     timeout is retried up to mapreduce.map.maxattempts or
//     mapreduce.reduce.maxattempts (default 4) times; a task out of
//     attempts fails the job. Only successful attempts' counters and
//     outputs count.
//   - Counters: reporter:counter:GROUP,NAME,N lines of a task's stderr;
//     the job fails with "Too many counters" past mapreduce.job.counters.
//     max (default 120) counters in all, Hadoop's own included.
//   - The console: the lines of Hadoop 3's client (packageJobJar, the job
//     and application ids, the tracking URL, which is a file: URL of the
//     task logs, "map N% reduce M%", "Task Id : ATTEMPT, Status : FAILED"
//     with its diagnostics, the end state, the Counters block in
//     AbstractCounters.toString's format, "Job not successful!" and
//     "Streaming Command Failed!"), and exit status 1 for a failed job.
//   - `job -kill JOB_ID` (also as bin/mapred) kills a running job;
//     SIGTERM or SIGINT to the command does too.
//
// # What it does not
//
// No HDFS (file: paths only), no YARN (no resource manager, queues,
// container memory or vcores: mapreduce.job.queuename and
// mapreduce.*.memory.mb are accepted and ignored), no speculative
// execution, no data locality, no combiner, no compression, no distributed
// cache beyond -files symlinks (no -archives, -libjars), no Java classes
// (only the input format, partitioners and output format named above), no
// job history server, and no JVM: tasks start in milliseconds, so timings
// say nothing about a cluster's. The shuffle holds a reduce task's input
// in memory.
//
// # Test knobs
//
// The emulator reads these environment variables (trawl never does):
// STREAMEMU_FAIL_FIRST_ATTEMPTS=1 makes the first attempt of every task
// fail after doing part of its work (a map is killed once it has written
// output, a reduce once it has read half its input; one that finished
// first fails anyway, its output discarded); STREAMEMU_LOG names a file
// that gets one JSON line (Invocation) per `hadoop jar` run;
// STREAMEMU_STATE is the directory of pid files, task working directories
// and logs (default $TMPDIR/trawl-streamemu); STREAMEMU_SLOTS is how many
// task attempts run at once (default 2).
package streamemu
