// Package hadoop runs trawl's engine jobs on a Hadoop cluster, as Hadoop
// Streaming jobs of the trawl binary:
//
//	loc, err := hadoop.Locate(os.Getenv, exec.LookPath, "")
//	s := &hadoop.Submitter{Hadoop: loc.Hadoop, StreamingJar: loc.StreamingJar, Storage: resolver}
//	eng := mapreduce.Engine{Storage: resolver, Runner: s}
//	result, err := eng.Run(ctx, spec) // or s.Run(ctx, spec)
//
// A Submitter is a mapreduce.Runner, which `trawl --engine hadoop` puts in
// the jobs' mapreduce.Engine so that every engine job of every driver is
// submitted this way. The drivers themselves
// (locks, CrawlDB installs, segment states) still run in the trawl
// process that submits.
//
// # Submission
//
// For each job spec, Run sends the spec's JSON to the tasks in the job's
// configuration (mapreduce.SpecConf), from which each task decodes the
// spec through the registry of `trawl task` and builds the same job, and:
//
//  1. lists the job's map splits (mapreduce.Splits) and writes the
//     manifest, one line per split, through the job's storage.FS to a
//     staging directory beside the job's first output,
//     DIR/_temporary/streaming-NAME-TIME-RANDOM/splits.txt (staging
//     directories of the same output left by killed runs are removed
//     first; a job without input publishes empty outputs at once, without
//     Hadoop);
//  2. runs the command below with its own environment (the hadoop client
//     needs HADOOP_CONF_DIR, JAVA_HOME and the like), until the job ends;
//  3. when the job succeeds, publishes the real outputs itself, through
//     storage.FS, with mapreduce.PublishStreaming: the part files the
//     tasks wrote under the streaming output directory move into each
//     output's stage, which is renamed into place as on the local engine
//     (one rename per output; an output is never half published), with
//     _SUCCESS and _counters.json; then it removes the staging directory.
//     No `hadoop fs` command is run.
//
// The command (Spec.Args; [...] only when set, {map,reduce} both):
//
//	hadoop jar hadoop-streaming-*.jar
//	  -D mapreduce.job.name=PREFIX JOB [-D mapreduce.job.queuename=QUEUE]
//	  -D mapreduce.job.reduces=R   (0 for a map-only job)
//	  -D mapreduce.input.lineinputformat.linespermap=1
//	  -D mapreduce.{map,reduce}.speculative=false   (true only if allowed, never for fetch)
//	  [-D mapreduce.{map,reduce}.maxattempts=N] [-D mapreduce.{map,reduce}.memory.mb=MB]
//	  [-D mapreduce.task.timeout=MS] -D mapreduce.job.counters.max=1000
//	  -D stream.num.map.output.key.fields=3 -D mapreduce.partition.keypartitioner.options=-k1,1   (with a reduce)
//	  -D trawl.engine.memory=BYTES -D trawl.task.user=USER
//	  [-D trawl.task.tempDir=DIR] -D trawl.job.name=JOB -D trawl.job.conf=CONF [-D KEY=VALUE ...]
//	  -files file:///path/to/trawl#trawl
//	  -input MANIFEST -output STAGING/streaming.out
//	  -inputformat org.apache.hadoop.mapred.lib.NLineInputFormat
//	  -mapper './trawl task --phase map'
//	  [-reducer './trawl task --phase reduce' -partitioner org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner]
//
// Local paths become file:// URIs; a relative path is an error, since it
// means nothing on the nodes.
//
// R is the job's number of reduce partitions, or fewer (see
// Submitter.Reducers): map tasks compute each record's partition with the job's own
// Partitioner and write it as the first field of PPPPP<TAB>KEY<TAB>VALUE;
// the whole line is Hadoop's key, so Hadoop sorts lines as bytes (the
// order the local engine's merge gives) and KeyFieldBasedPartitioner -k1,1
// sends each partition to one reducer, which writes one part file per
// partition it sees. The outputs are therefore the local engine's, byte
// for byte, whatever R is.
//
// # What the tasks get
//
// The binary (os.Executable of the submitting trawl, so it must suit the
// nodes' OS and architecture), shipped with -files and run as ./trawl in
// each task's working directory, never by a local path. Everything else
// comes from the job configuration, which Streaming exports to the task
// as environment variables (dots and other characters becoming '_'):
// trawl_job_name and trawl_job_conf (the engine job's name and Conf, the
// mapreduce.SpecConf of its spec, from which `trawl task` rebuilds the job
// through the registry), trawl_engine_memory and trawl_task_tempDir (the task's sort
// buffer and spill directory; the task sets its Go memory limit from the
// former), trawl_task_user (the HDFS user of the submitter, so that tasks
// read and write HDFS as that user under simple authentication), and
// Hadoop's own (mapreduce_task_partition, mapreduce_task_attempt_id,
// mapreduce_task_output_dir). trawl does not set mapreduce.map.env or
// mapreduce.reduce.env (they would replace the cluster's, which often
// carry HADOOP_MAPRED_HOME) unless Submitter.TaskEnv asks for it. Nothing
// else comes from the submitter's environment, working directory or
// config file. Every path in a job's spec must mean the same on the nodes
// (hdfs:// URIs, or a file system mounted at the same path on every node).
//
// # Progress and counters
//
// A Monitor reads the hadoop command's output (Hadoop 2 and 3 print the
// same lines): the job id and tracking URL, "map N% reduce M%", failed
// task attempts with their diagnostics, the end state, and the final
// "Counters: N" block. The submitter logs one line per state change: the
// submission (job id, tracking URL), progress (at most every
// ProgressInterval, and when a phase reaches 100%), each failed attempt,
// the end. The tasks' counters travel as reporter:counter lines into
// Hadoop's counters; from the block, trawl's groups ("trawl", the job's
// name, and any other a task counted in, as a fetch that parses counts in
// "parse") become the Result's Counters, with trawl/map_tasks set
// to the number of splits and trawl/failed_task_attempts from Hadoop's
// failed map and reduce tasks, so that the drivers compute the same
// results (and `crawl` prints the same round summaries) as on the local
// engine.
//
// # Failures
//
// Hadoop retries a failed task attempt (mapreduce.{map,reduce}.maxattempts
// come from engine.maxAttempts); an attempt's output directory is
// promoted only when it succeeds, so retries leave nothing behind. A job
// whose task ran out of attempts fails the driver with an error naming the
// Hadoop job, its end state and reason, the task's last failed attempt
// with its first diagnostic line, and where the task logs are (`yarn logs
// -applicationId APP` and the tracking URL); a submission Hadoop refused
// fails with Hadoop's ERROR lines. Nothing is published either way, and
// the staging directory is removed. Cancelling the context (an interrupt)
// kills the job (`mapred job -kill JOB`, else `hadoop job -kill JOB`) and
// then the hadoop command's process group. On Hadoop an interrupt cancels
// a fetch like any job: the pages it fetched are not kept.
//
// # Dry run
//
// With Submitter.DryRun set, Run prints the command it would run
// (shell-quoted, one line; the manifest it names is not written) and
// returns ErrDryRun: a driver stops at its first job, since the next ones
// depend on its result.
//
// Package streamemu is an emulation of `hadoop jar hadoop-streaming.jar`
// for testing all of this without Hadoop.
package hadoop
