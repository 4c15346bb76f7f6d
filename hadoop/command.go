package hadoop

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/mapreduce"
)

// The Hadoop classes and job properties of a submission.
const (
	// NLineInputFormat gives each map task one line of the split manifest.
	NLineInputFormat = "org.apache.hadoop.mapred.lib.NLineInputFormat"
	// KeyFieldBasedPartitioner partitions map output lines by their first
	// field, the reduce partition the task computed.
	KeyFieldBasedPartitioner = "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner"

	// BinaryLink is the name the shipped trawl binary takes in each task's
	// working directory (-files BINARY#trawl).
	BinaryLink = "trawl"
	// MapCommand and ReduceCommand are the streaming mapper and reducer.
	MapCommand    = "./" + BinaryLink + " task --phase map"
	ReduceCommand = "./" + BinaryLink + " task --phase reduce"
)

// Spec is one streaming submission: everything the command line holds.
type Spec struct {
	// Hadoop and Jar are the hadoop command and the streaming jar.
	Hadoop, Jar string
	// Binary is the trawl binary to ship, as a Hadoop URI (file:///...).
	Binary string
	// Input is the split manifest and Output the streaming job's own
	// output directory, as Hadoop URIs.
	Input, Output string
	// Job is the engine job's name and Conf its configuration.
	Job  string
	Conf map[string]string
	// MapOnly jobs run no reduce; Reducers is the number of reduce tasks
	// otherwise.
	MapOnly  bool
	Reducers int
	// JobName is the Hadoop job's name (mapreduce.job.name).
	JobName string
	// Queue, if set, is the scheduler queue (mapreduce.job.queuename).
	Queue string
	// MapMemoryMB and ReduceMemoryMB, if positive, are the containers'
	// memory (mapreduce.map.memory.mb, mapreduce.reduce.memory.mb).
	MapMemoryMB, ReduceMemoryMB int64
	// TaskTimeout, if positive, is mapreduce.task.timeout.
	TaskTimeout time.Duration
	// Speculative allows speculative task attempts (never for a job with
	// side effects; see Submitter.Speculative).
	Speculative bool
	// MaxAttempts, if positive, bounds each task's attempts
	// (mapreduce.map.maxattempts, mapreduce.reduce.maxattempts).
	MaxAttempts int
	// EngineMemory, if positive, is a map task's sort buffer in bytes
	// (trawl.engine.memory); the task sets its Go memory limit from it.
	EngineMemory int64
	// TaskUser, if set, is the HDFS user of the tasks (trawl.task.user).
	TaskUser string
	// TaskTempDir, if set, is the tasks' spill directory on the nodes
	// (trawl.task.tempDir).
	TaskTempDir string
	// TaskEnv are environment variables (NAME=VALUE, no commas) of the
	// tasks, through mapreduce.map.env and mapreduce.reduce.env. Those
	// replace what the cluster's mapred-site.xml sets there (often
	// HADOOP_MAPRED_HOME, which tasks need), so they are set only when
	// TaskEnv is not empty; trawl's own task settings travel as job
	// properties instead.
	TaskEnv []string
	// Properties are extra job properties, KEY=VALUE, given last.
	Properties []string
}

// Args returns the arguments of the hadoop command, generic options (-D,
// -files) first, as Streaming requires, then the streaming options. The
// order is fixed, so the same Spec always gives the same command.
func (s Spec) Args() []string {
	args := []string{"jar", s.Jar}
	d := func(k, v string) { args = append(args, "-D", k+"="+v) }
	d("mapreduce.job.name", s.JobName)
	if s.Queue != "" {
		d("mapreduce.job.queuename", s.Queue)
	}
	reduces := s.Reducers
	if s.MapOnly {
		reduces = 0
	}
	d("mapreduce.job.reduces", strconv.Itoa(reduces))
	d("mapreduce.input.lineinputformat.linespermap", "1")
	spec := strconv.FormatBool(s.Speculative)
	d("mapreduce.map.speculative", spec)
	d("mapreduce.reduce.speculative", spec)
	if s.MaxAttempts > 0 {
		d("mapreduce.map.maxattempts", strconv.Itoa(s.MaxAttempts))
		d("mapreduce.reduce.maxattempts", strconv.Itoa(s.MaxAttempts))
	}
	if s.MapMemoryMB > 0 {
		d("mapreduce.map.memory.mb", strconv.FormatInt(s.MapMemoryMB, 10))
	}
	if s.ReduceMemoryMB > 0 && !s.MapOnly {
		d("mapreduce.reduce.memory.mb", strconv.FormatInt(s.ReduceMemoryMB, 10))
	}
	if s.TaskTimeout > 0 {
		d("mapreduce.task.timeout", strconv.FormatInt(s.TaskTimeout.Milliseconds(), 10))
	}
	// Jobs count into two groups, but the fetch job alone has dozens of
	// counters: lift the per-job limit (120 by default).
	d("mapreduce.job.counters.max", strconv.Itoa(countersMax))
	if !s.MapOnly {
		// The whole PPPPP<TAB>KEY<TAB>VALUE line is the key: Hadoop sorts
		// keys as bytes, which is `LC_ALL=C sort` of the lines, and
		// partitions by the first field.
		d("stream.num.map.output.key.fields", "3")
		d("mapreduce.partition.keypartitioner.options", "-k1,1")
	}
	if s.EngineMemory > 0 {
		d(mapreduce.PropEngineMemory, strconv.FormatInt(s.EngineMemory, 10))
	}
	if s.TaskUser != "" {
		d(mapreduce.PropTaskUser, s.TaskUser)
	}
	if len(s.TaskEnv) > 0 {
		d("mapreduce.map.env", strings.Join(s.TaskEnv, ","))
		if !s.MapOnly {
			d("mapreduce.reduce.env", strings.Join(s.TaskEnv, ","))
		}
	}
	if s.TaskTempDir != "" {
		d(mapreduce.PropTaskTempDir, s.TaskTempDir)
	}
	d(mapreduce.PropJobName, s.Job)
	d(mapreduce.PropJobConf, mapreduce.EncodeConf(s.Conf))
	for _, p := range s.Properties {
		args = append(args, "-D", p)
	}
	args = append(args, "-files", s.Binary+"#"+BinaryLink)
	args = append(args,
		"-input", s.Input,
		"-output", s.Output,
		"-inputformat", NLineInputFormat,
		"-mapper", MapCommand,
	)
	if !s.MapOnly {
		args = append(args, "-reducer", ReduceCommand, "-partitioner", KeyFieldBasedPartitioner)
	}
	return args
}

// countersMax is mapreduce.job.counters.max for trawl's jobs.
const countersMax = 1000

// reserved are the properties trawl sets that extra properties may not.
var reserved = []string{
	mapreduce.PropJobName, mapreduce.PropJobConf, mapreduce.PropEngineMemory, mapreduce.PropTaskTempDir, mapreduce.PropTaskUser,
	"mapreduce.job.reduces", "mapreduce.input.lineinputformat.linespermap", "stream.num.map.output.key.fields",
	"mapreduce.partition.keypartitioner.options", "mapreduce.job.output.key.comparator.class",
	"mapreduce.map.output.key.field.separator", "stream.map.output.field.separator",
	"stream.reduce.input.field.separator", "stream.map.input.field.separator",
}

// CheckTaskEnv checks the tasks' environment variables: each is
// NAME=VALUE without a comma (mapreduce.map.env separates them with
// commas).
func CheckTaskEnv(env []string) error {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.Contains(kv, ",") {
			return fmt.Errorf("task environment variable %q is not NAME=VALUE without a comma", kv)
		}
	}
	return nil
}

// CheckProperties checks extra job properties: each is KEY=VALUE, and no
// key is one that the streaming protocol between trawl and its tasks
// depends on.
func CheckProperties(props []string) error {
	for _, p := range props {
		k, _, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("hadoop property %q is not KEY=VALUE", p)
		}
		if slices.Contains(reserved, k) {
			return fmt.Errorf("hadoop property %s is set by trawl and cannot be overridden", k)
		}
	}
	return nil
}
