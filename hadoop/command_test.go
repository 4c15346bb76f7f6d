package hadoop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

var testConf = map[string]string{"in": "hdfs://nn:8020/crawl/crawldb/current", "reduces": "4"}

// TestArgsReduceJob is the golden command line of a job with a reduce.
func TestArgsReduceJob(t *testing.T) {
	s := Spec{
		Hadoop: "/opt/hadoop/bin/hadoop", Jar: "/opt/hadoop/share/hadoop/tools/lib/hadoop-streaming-3.3.6.jar",
		Binary: "file:///usr/local/bin/trawl",
		Input:  "hdfs://nn:8020/crawl/crawldb/_temporary/streaming-new-X/splits.txt",
		Output: "hdfs://nn:8020/crawl/crawldb/_temporary/streaming-new-X/streaming.out",
		Job:    "updatedb", Conf: testConf, Reducers: 3, JobName: "trawl updatedb", Queue: "crawl",
		MapMemoryMB: 1024, ReduceMemoryMB: 2048, TaskTimeout: 20 * time.Minute, MaxAttempts: 3,
		EngineMemory: 256 << 20, TaskTempDir: "/data/tmp", TaskUser: "crawler",
		Properties: []string{"mapreduce.job.priority=HIGH"},
	}
	want := []string{
		"jar", "/opt/hadoop/share/hadoop/tools/lib/hadoop-streaming-3.3.6.jar",
		"-D", "mapreduce.job.name=trawl updatedb",
		"-D", "mapreduce.job.queuename=crawl",
		"-D", "mapreduce.job.reduces=3",
		"-D", "mapreduce.input.lineinputformat.linespermap=1",
		"-D", "mapreduce.map.speculative=false",
		"-D", "mapreduce.reduce.speculative=false",
		"-D", "mapreduce.map.maxattempts=3",
		"-D", "mapreduce.reduce.maxattempts=3",
		"-D", "mapreduce.map.memory.mb=1024",
		"-D", "mapreduce.reduce.memory.mb=2048",
		"-D", "mapreduce.task.timeout=1200000",
		"-D", "mapreduce.job.counters.max=1000",
		"-D", "stream.num.map.output.key.fields=3",
		"-D", "mapreduce.partition.keypartitioner.options=-k1,1",
		"-D", "trawl.engine.memory=268435456",
		"-D", "trawl.task.user=crawler",
		"-D", "trawl.task.tempDir=/data/tmp",
		"-D", "trawl.job.name=updatedb",
		"-D", "trawl.job.conf=" + mapreduce.EncodeConf(testConf),
		"-D", "mapreduce.job.priority=HIGH",
		"-files", "file:///usr/local/bin/trawl#trawl",
		"-input", "hdfs://nn:8020/crawl/crawldb/_temporary/streaming-new-X/splits.txt",
		"-output", "hdfs://nn:8020/crawl/crawldb/_temporary/streaming-new-X/streaming.out",
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
		"-mapper", "./trawl task --phase map",
		"-reducer", "./trawl task --phase reduce",
		"-partitioner", "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner",
	}
	got := s.Args()
	if !slices.Equal(got, want) {
		t.Errorf("args:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The tasks get the job back from its properties.
	conf, err := mapreduce.DecodeConf(strings.TrimPrefix(got[slices.Index(got, "trawl.job.name=updatedb")+2], "trawl.job.conf="))
	if err != nil || conf["in"] != testConf["in"] {
		t.Errorf("conf %v %v", conf, err)
	}
}

// TestArgsMapOnly is the golden command line of a map-only job with the
// defaults: no reducer, no partitioner, no reduce settings.
func TestArgsMapOnly(t *testing.T) {
	s := Spec{Hadoop: "hadoop", Jar: "streaming.jar", Binary: "file:///b/trawl",
		Input: "file:///c/seg/_temporary/s/splits.txt", Output: "file:///c/seg/_temporary/s/streaming.out",
		Job: "fetch", Conf: map[string]string{}, MapOnly: true, Reducers: 5, JobName: "trawl fetch", ReduceMemoryMB: 99}
	want := []string{"jar", "streaming.jar",
		"-D", "mapreduce.job.name=trawl fetch",
		"-D", "mapreduce.job.reduces=0",
		"-D", "mapreduce.input.lineinputformat.linespermap=1",
		"-D", "mapreduce.map.speculative=false",
		"-D", "mapreduce.reduce.speculative=false",
		"-D", "mapreduce.job.counters.max=1000",
		"-D", "trawl.job.name=fetch",
		"-D", "trawl.job.conf=" + mapreduce.EncodeConf(map[string]string{}),
		"-files", "file:///b/trawl#trawl",
		"-input", "file:///c/seg/_temporary/s/splits.txt",
		"-output", "file:///c/seg/_temporary/s/streaming.out",
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
		"-mapper", "./trawl task --phase map",
	}
	if got := s.Args(); !slices.Equal(got, want) {
		t.Errorf("args:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSubmitterSpec checks what Submitter decides: reducers capped at the
// partitions, speculative execution never for fetch, the binary shipped by
// absolute file: URI, staging beside the first output.
func TestSubmitterSpec(t *testing.T) {
	dir := t.TempDir()
	s := &Submitter{Hadoop: "hadoop", StreamingJar: "s.jar", Binary: "/opt/trawl/bin/trawl", Reducers: 50, Speculative: true}
	info := mapreduce.JobInfo{Name: "fetch", MapOnly: true, Outputs: []string{filepath.Join(dir, "seg", "content"), filepath.Join(dir, "seg", "crawl_fetch")}}
	s.Storage = storage.NewResolver()
	st, err := s.newStaging(info)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.manifest, filepath.Join(dir, "seg", "_temporary", "streaming-content-")) || !strings.HasSuffix(st.manifest, "/splits.txt") {
		t.Errorf("manifest %s", st.manifest)
	}
	spec, err := s.spec(info, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Speculative || spec.Binary != "file:///opt/trawl/bin/trawl" || !strings.HasPrefix(spec.Input, "file://"+dir) {
		t.Errorf("fetch spec %+v", spec)
	}
	info = mapreduce.JobInfo{Name: "parse", Reduces: 4, Outputs: []string{"hdfs://nn:8020/c/seg/crawl_parse"}}
	spec, err = s.spec(info, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Speculative || spec.Reducers != 4 || spec.JobName != "trawl parse" {
		t.Errorf("parse spec %+v", spec)
	}
	if _, err := hadoopURI("crawl/crawldb"); err == nil || !strings.Contains(err.Error(), "relative") {
		t.Errorf("relative path: %v", err)
	}
	if u, _ := hadoopURI("hdfs://nn:8020/x"); u != "hdfs://nn:8020/x" {
		t.Errorf("hdfs URI %s", u)
	}
}

func TestCheckTaskEnv(t *testing.T) {
	if err := CheckTaskEnv([]string{"HADOOP_USER_NAME=crawler", "EMPTY="}); err != nil {
		t.Error(err)
	}
	for _, kv := range []string{"NOVALUE", "=x", "A=b,c"} {
		if err := CheckTaskEnv([]string{kv}); err == nil {
			t.Errorf("%q accepted", kv)
		}
	}
}

func TestCheckProperties(t *testing.T) {
	if err := CheckProperties([]string{"mapreduce.job.priority=HIGH", "a.b= c"}); err != nil {
		t.Error(err)
	}
	for _, p := range []string{"novalue", "=x", "trawl.job.conf=x", "stream.num.map.output.key.fields=1"} {
		if err := CheckProperties([]string{p}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path-1.0_x:y=z,w@v%u+t": "plain/path-1.0_x:y=z,w@v%u+t",
		"":                             "''",
		"./trawl task --phase map":     "'./trawl task --phase map'",
		"it's":                         `'it'\''s'`,
		"$HOME":                        "'$HOME'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	noPath := func(string) (string, error) { return "", os.ErrNotExist }
	_, err := Locate(getenv, noPath, "")
	if err == nil || !strings.Contains(err.Error(), "HADOOP_HOME is not set") {
		t.Errorf("nothing: %v", err)
	}
	// hadoop found, no jar anywhere: the error names the three places.
	_, err = Locate(getenv, func(string) (string, error) { return "/usr/bin/hadoop", nil }, "")
	for _, w := range []string{"engine.hadoop.streamingJar", "$HADOOP_STREAMING_JAR", "$HADOOP_HOME/share/hadoop/tools/lib/hadoop-streaming-*.jar"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("no jar: %v lacks %s", err, w)
		}
	}
	env["HADOOP_HOME"] = home
	bin := filepath.Join(home, "bin", "hadoop")
	lib := filepath.Join(home, "share", "hadoop", "tools", "lib")
	for _, d := range []string{filepath.Dir(bin), lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(lib, "hadoop-streaming-3.3.5.jar"), nil, 0o644)
	os.WriteFile(filepath.Join(lib, "hadoop-streaming-3.3.6.jar"), nil, 0o644)
	loc, err := Locate(getenv, noPath, "")
	if err != nil || loc.Hadoop != bin || loc.StreamingJar != filepath.Join(lib, "hadoop-streaming-3.3.6.jar") {
		t.Errorf("home: %+v %v", loc, err)
	}
	env["HADOOP_STREAMING_JAR"] = filepath.Join(lib, "hadoop-streaming-3.3.5.jar")
	if loc, err := Locate(getenv, noPath, ""); err != nil || loc.StreamingJar != env["HADOOP_STREAMING_JAR"] {
		t.Errorf("env jar: %+v %v", loc, err)
	}
	if _, err := Locate(getenv, noPath, filepath.Join(home, "missing.jar")); err == nil || !strings.Contains(err.Error(), "setting engine.hadoop.streamingJar") {
		t.Errorf("missing setting jar: %v", err)
	}
}
