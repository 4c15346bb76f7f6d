//go:build unix

package streamemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/trawl/trawl/hadoop"
)

// emu is a test's fake Hadoop home and its environment.
type emu struct {
	t     *testing.T
	dir   string
	jar   string
	state string
	log   string
	env   []string
}

func newEmu(t *testing.T) *emu {
	t.Helper()
	dir := t.TempDir()
	e := &emu{t: t, dir: dir, jar: filepath.Join(dir, "hadoop-streaming-3.3.6.jar"),
		state: filepath.Join(dir, "state"), log: filepath.Join(dir, "invocations.jsonl")}
	if err := os.WriteFile(e.jar, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, EnvStateDir + "=" + e.state,
		EnvInvocationLog + "=" + e.log, "CANARY_FROM_SUBMITTER=leak"}
	return e
}

// run runs `hadoop jar JAR args...` and returns the exit status and the
// console output (stdout then stderr).
func (e *emu) run(extraEnv []string, args ...string) (int, string, string) {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), append([]string{"jar", e.jar}, args...), append(append([]string(nil), e.env...), extraEnv...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func (e *emu) write(name, text string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// monitor parses a console output as the submitter does.
func monitor(out string) *hadoop.Monitor {
	m := hadoop.NewMonitor()
	for _, l := range strings.Split(out, "\n") {
		m.Line(l)
	}
	m.End()
	return m
}

// TestShuffle runs a job whose map output lines are PPPPP<TAB>KEY<TAB>VALUE
// with the whole line as the key, partitioned by the first field: each
// reducer gets exactly the lines Hadoop's KeyFieldBasedPartitioner gives
// it, sorted as bytes, each with the TAB of an empty value.
func TestShuffle(t *testing.T) {
	e := newEmu(t)
	r := rand.New(rand.NewPCG(1, 2))
	var in strings.Builder
	var lines []string
	for i := 0; i < 300; i++ {
		l := fmt.Sprintf("%05d\tk%03d\tv%d", r.IntN(7), r.IntN(40), r.IntN(5))
		lines = append(lines, l)
		in.WriteString(l + "\n")
	}
	input := e.write("input.txt", in.String())
	out := filepath.Join(e.dir, "out")
	code, _, stderr := e.run(nil,
		"-D", "mapreduce.job.reduces=3", "-D", "mapreduce.input.lineinputformat.linespermap=40",
		"-D", "stream.num.map.output.key.fields=3", "-D", "mapreduce.partition.keypartitioner.options=-k1,1",
		"-input", "file://"+input, "-output", "file://"+out,
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
		"-mapper", "cut -f2-", "-reducer", "cat",
		"-partitioner", "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	want := make([][]string, 3)
	for _, l := range lines {
		h := int32(0)
		for _, b := range []byte(l[:5]) {
			h = 31*h + int32(b)
		}
		p := int(h&0x7fffffff) % 3
		want[p] = append(want[p], l+"\t")
	}
	for p := range want {
		sort.Strings(want[p])
		data, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("part-%05d", p)))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(want[p]) == 0 {
			got = nil
		}
		if strings.Join(got, "\n") != strings.Join(want[p], "\n") {
			t.Errorf("reducer %d: got %d lines, want %d:\n%q\nwant\n%q", p, len(got), len(want[p]), got[:min(5, len(got))], want[p][:min(5, len(want[p]))])
		}
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "_temporary")); !os.IsNotExist(err) {
		t.Errorf("_temporary left: %v", err)
	}
	m := monitor(stderr)
	if !m.Succeeded || m.JobID == "" || m.Map != 100 || m.Reduce != 100 {
		t.Errorf("monitor: %+v", m)
	}
	if got := m.Counters["Map-Reduce Framework"]["Map input records"]; got != 300 {
		t.Errorf("Map input records = %d", got)
	}
	if got := m.Counters["Job Counters"]["Launched map tasks"]; got != 8 {
		t.Errorf("Launched map tasks = %d, want 8", got)
	}
	// The invocation log.
	data, err := os.ReadFile(e.log)
	if err != nil {
		t.Fatal(err)
	}
	var inv Invocation
	if err := json.Unmarshal(bytes.TrimSpace(data), &inv); err != nil || inv.JobID != m.JobID || inv.Exit != 0 {
		t.Errorf("invocation %s: %+v %v", data, inv, err)
	}
}

// TestEqualKeysUnordered checks that values of one key are not sorted: a
// submitter that made only the first two fields the key would see its
// values out of order.
func TestEqualKeysUnordered(t *testing.T) {
	e := newEmu(t)
	input := e.write("input.txt", "00000\tk\ta\n00000\tk\tb\n00000\tk\tc\n")
	out := filepath.Join(e.dir, "out")
	code, _, stderr := e.run(nil,
		"-D", "mapreduce.job.reduces=1", "-D", "stream.num.map.output.key.fields=2",
		"-input", input, "-output", out, "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
		"-mapper", "cut -f2-", "-reducer", "cat")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(out, "part-00000"))
	if string(data) == "00000\tk\ta\n00000\tk\tb\n00000\tk\tc\n" {
		t.Errorf("values of one key arrived sorted:\n%s", data)
	}
}

// TestTaskEnvironment checks what a task sees: a clean environment with the
// job properties, its own working directory with the -files links, and an
// attempt output directory under the job's output.
func TestTaskEnvironment(t *testing.T) {
	e := newEmu(t)
	script := e.write("show.sh", "#!/bin/sh\ncat >/dev/null\nenv | sort\necho \"cwd=$(pwd)\"\nls -l tool\n")
	input := e.write("input.txt", "one\n")
	out := filepath.Join(e.dir, "out")
	code, _, stderr := e.run(nil,
		"-D", "mapreduce.job.reduces=0", "-D", "my.prop-name=x y", "-D", "mapreduce.map.env=GOMEMLIMIT=123",
		"-files", "file://"+script+"#tool",
		"-input", "file://"+input, "-output", "file://"+out,
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat", "-mapper", "sh tool",
		"-cmdenv", "EXTRA=1")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "part-00000"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, w := range []string{"my_prop_name=x y", "mapreduce_task_partition=0", "mapreduce_job_reduces=0",
		"GOMEMLIMIT=123", "EXTRA=1", "mapreduce_task_attempt_id=attempt_", "mapreduce_task_output_dir=file:" + out + "/_temporary/1/_temporary/attempt_",
		"TMPDIR=" + e.state, "-> " + script} {
		if !strings.Contains(got, w) {
			t.Errorf("task output lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "CANARY_FROM_SUBMITTER") {
		t.Errorf("the submitter's environment reached the task:\n%s", got)
	}
	if !strings.Contains(got, "cwd="+e.state) {
		t.Errorf("the task did not run in its container:\n%s", got)
	}
}

// TestRetries checks that a failing task is retried and a task out of
// attempts fails the job, with Hadoop's messages, and that the first
// attempts fail under STREAMEMU_FAIL_FIRST_ATTEMPTS without changing the
// output.
func TestRetries(t *testing.T) {
	e := newEmu(t)
	input := e.write("input.txt", "00000\ta\tx\n00001\tb\ty\n00002\tc\tz\n")
	args := func(out string, mapper string) []string {
		return []string{"-D", "mapreduce.job.reduces=2", "-D", "mapreduce.map.maxattempts=2",
			"-D", "stream.num.map.output.key.fields=3", "-D", "mapreduce.partition.keypartitioner.options=-k1,1",
			"-input", input, "-output", out, "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
			"-mapper", mapper, "-reducer", "cat", "-partitioner", "org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner"}
	}
	// A mapper that always fails.
	code, _, stderr := e.run(nil, args(filepath.Join(e.dir, "bad"), "sh -c 'echo oops >&2; exit 3'")...)
	if code != 1 {
		t.Fatalf("failing job exited %d:\n%s", code, stderr)
	}
	m := monitor(stderr)
	if m.Succeeded || m.State != "FAILED" || len(m.Failures) < 2 || !strings.Contains(m.Failures[0].Summary(), "subprocess failed with code 3") {
		t.Errorf("monitor of a failed job: %+v", m)
	}
	err := m.Err(code)
	if !strings.Contains(err.Error(), "task attempt attempt_") || !strings.Contains(err.Error(), "file://") {
		t.Errorf("error %v names no attempt or logs", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "bad", "_temporary")); !os.IsNotExist(err) {
		t.Errorf("a failed job left _temporary: %v", err)
	}
	// Logs of the failed attempts stay, under the tracking URL.
	logs := strings.TrimPrefix(strings.TrimSuffix(m.TrackingURL, "/"), "file://")
	matches, _ := filepath.Glob(filepath.Join(logs, "attempt_*_m_*_0", "stderr"))
	if len(matches) == 0 {
		t.Errorf("no attempt logs under %s", logs)
	} else if b, _ := os.ReadFile(matches[0]); !strings.Contains(string(b), "oops") {
		t.Errorf("attempt log %s: %q", matches[0], b)
	}

	// Every first attempt fails; the output is that of a clean run.
	clean, flaky := filepath.Join(e.dir, "clean"), filepath.Join(e.dir, "flaky")
	if code, _, stderr := e.run(nil, args(clean, "cut -f2-")...); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	code, _, stderr = e.run([]string{EnvFailFirstAttempts + "=1"}, args(flaky, "cut -f2-")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	m = monitor(stderr)
	if len(m.Failures) != 5 || m.Counters["Job Counters"]["Failed map tasks"] != 3 || m.Counters["Job Counters"]["Failed reduce tasks"] != 2 {
		t.Errorf("failures %d, counters %v", len(m.Failures), m.Counters["Job Counters"])
	}
	for _, p := range []string{"part-00000", "part-00001"} {
		a, _ := os.ReadFile(filepath.Join(clean, p))
		b, _ := os.ReadFile(filepath.Join(flaky, p))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: clean %q, with failures %q", p, a, b)
		}
	}
}

// TestCommandLineErrors checks Hadoop's refusals: a generic option after
// a streaming one, an existing output, a missing jar.
func TestCommandLineErrors(t *testing.T) {
	e := newEmu(t)
	input := e.write("input.txt", "x\n")
	out := filepath.Join(e.dir, "out")
	if code, _, stderr := e.run(nil, "-input", input, "-D", "a=b", "-output", out, "-mapper", "cat"); code == 0 || !strings.Contains(stderr, "Unrecognized option: -D") {
		t.Errorf("-D after -input: exit %d\n%s", code, stderr)
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := e.run(nil, "-D", "mapreduce.job.reduces=0", "-input", input, "-output", out, "-mapper", "cat",
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat")
	if code == 0 || !strings.Contains(stderr, "already exists") {
		t.Errorf("existing output: exit %d\n%s", code, stderr)
	}
	if err := monitor(stderr).Err(code); !strings.Contains(err.Error(), "before a job was submitted") || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("error: %v", err)
	}
	var o, s bytes.Buffer
	if code := Main(context.Background(), []string{"jar", filepath.Join(e.dir, "nope.jar")}, e.env, &o, &s); code == 0 {
		t.Error("missing jar accepted")
	}
}

// TestTooManyCounters checks the counter limit.
func TestTooManyCounters(t *testing.T) {
	e := newEmu(t)
	script := e.write("count.sh", "#!/bin/sh\ncat >/dev/null\ni=0\nwhile [ $i -lt 30 ]; do echo \"reporter:counter:g,c$i,1\" >&2; i=$((i+1)); done\n")
	input := e.write("input.txt", "x\n")
	code, _, stderr := e.run(nil, "-D", "mapreduce.job.reduces=0", "-D", "mapreduce.job.counters.max=20",
		"-input", input, "-output", filepath.Join(e.dir, "out"), "-mapper", "sh "+script,
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat")
	if code == 0 || !strings.Contains(stderr, "Too many counters") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	code, _, stderr = e.run(nil, "-D", "mapreduce.job.reduces=0",
		"-input", input, "-output", filepath.Join(e.dir, "out2"), "-mapper", "sh "+script,
		"-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if m := monitor(stderr); len(m.Counters["g"]) != 30 || m.Counters["g"]["c7"] != 1 {
		t.Errorf("counters %v", m.Counters["g"])
	}
}

func TestKeyFieldRange(t *testing.T) {
	for _, tc := range []struct {
		key         string
		first, last int
		want        string
	}{
		{"a\tb\tc", 1, 1, "a"}, {"a\tb\tc", 2, 2, "b"}, {"a\tb\tc", 2, 0, "b\tc"}, {"a\tb\tc", 3, 3, "c"},
		{"a", 1, 1, "a"}, {"a\tb", 3, 3, "<none>"}, {"\tb", 1, 1, ""},
	} {
		s, en := fieldRange([]byte(tc.key), '\t', tc.first, tc.last)
		got := "<none>"
		if s >= 0 {
			got = tc.key[s:en]
		}
		if got != tc.want {
			t.Errorf("fieldRange(%q, %d, %d) = %q, want %q", tc.key, tc.first, tc.last, got, tc.want)
		}
	}
	// Java's "00001".hashCode() is 45806641; with 3 reduces, partition 1.
	p, err := keyFieldPartitioner("-k1,1", '\t')
	if err != nil {
		t.Fatal(err)
	}
	if got := p([]byte("00001\tkey\tvalue"), 3); got != 45806641%3 {
		t.Errorf("partition %d", got)
	}
	if got := hashPartitioner([]byte("abc"), 1<<30); got != (31*(31*(31+'a')+'b')+'c')%(1<<30) {
		t.Errorf("hash partition %d", got)
	}
}
