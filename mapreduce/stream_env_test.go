package mapreduce

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestTrimKeyOnlyTab(t *testing.T) {
	for in, want := range map[string]string{
		"00001\tk\tv\t": "00001\tk\tv", // Hadoop's separator after an all-key line
		"00001\tk\t\t":  "00001\tk\t",  // the same, with an empty value
		"00001\tk\t":    "00001\tk\t",  // a plain line with an empty value
		"00001\tk\tv":   "00001\tk\tv",
		"a\tb\tc\td\t":  "a\tb\tc\td\t", // not a streaming line: left to fail
	} {
		if got := string(trimKeyOnlyTab([]byte(in))); got != want {
			t.Errorf("trimKeyOnlyTab(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestApplyTaskEnv(t *testing.T) {
	o := streamOpts{budget: 1, tempDir: "/tmp/a"}
	env := map[string]string{EnvEngineMemory: "16777216", EnvTaskTempDir: "/data/spill"}
	if err := applyTaskEnv(&o, func(k string) string { return env[k] }); err != nil || o.budget != 16<<20 || o.tempDir != "/data/spill" {
		t.Errorf("%+v %v", o, err)
	}
	env[EnvEngineMemory] = "12"
	if err := applyTaskEnv(&o, func(k string) string { return env[k] }); err == nil {
		t.Error("a 12-byte budget accepted")
	}
	o = streamOpts{budget: 5}
	if err := applyTaskEnv(&o, func(string) string { return "" }); err != nil || o.budget != 5 {
		t.Errorf("no env: %+v %v", o, err)
	}
}

func TestHeartbeat(t *testing.T) {
	var mu syncWriter
	var buf bytes.Buffer
	mu.w = &buf
	stop := heartbeat(&mu, "fetch", "m-00001", 5*time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	stop()
	mu.mu.Lock()
	out := buf.String()
	mu.mu.Unlock()
	if !strings.HasPrefix(out, "reporter:status:trawl fetch m-00001 running for ") {
		t.Errorf("status lines %q", out)
	}
	n := strings.Count(out, "\n")
	time.Sleep(20 * time.Millisecond)
	if strings.Count(buf.String(), "\n") != n {
		t.Error("status lines after stop")
	}
}

// TestReduceWithHadoopSeparator feeds a reduce task the lines Hadoop
// Streaming gives a reducer when the whole map output line is the key.
func TestReduceWithHadoopSeparator(t *testing.T) {
	dir := t.TempDir()
	conf := map[string]string{"docs": dir, "links": dir, "out": dir + "/o", "reduces": "2", "combine": "false"}
	env := map[string]string{EnvJobName: "wordcount", EnvJobConf: EncodeConf(conf), EnvTaskOutputDir: dir + "/w"}
	var in bytes.Buffer
	c, _ := NewCodec[wcValue]()
	for _, k := range []string{"a", "b", "b"} {
		v := wcValue{N: 1}
		l := appendLine(nil, 1, []byte(k), c.Append(nil, &v))
		in.Write(append(l[:len(l)-1], '\t', '\n'))
	}
	var stderr bytes.Buffer
	if err := RunStreamingTask(context.Background(), testRegistry(), "reduce", func(k string) string { return env[k] }, &in, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got Counters
	if err := ParseCounterLines(&stderr, &got); err != nil {
		t.Fatal(err)
	}
	if got.Get("trawl", "reduce_input_groups") != 2 || got.Get("trawl", "reduce_input_records") != 3 {
		t.Errorf("counters %v", got.Snapshot())
	}
}
