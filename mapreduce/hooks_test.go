package mapreduce

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
)

// splitStat is a map task's Task.State in the hook jobs.
type splitStat struct {
	first int64
	docs  int64
	words int64
}

// hookJob counts each split's docs and words in MapSetup's state and
// emits one pair per split from MapCleanup (keyed by the split's first
// doc, so the output is the same however splits are grouped in tasks).
// The reduce numbers its groups within each partition through Task.State.
// ended counts the split contexts cancelled.
func hookJob(docs, out string, nred int, ended *atomic.Int64) *Job[wcValue, WordCount] {
	return &Job[wcValue, WordCount]{
		Name: "hooks",
		Conf: map[string]string{"docs": docs, "out": out, "reduces": fmt.Sprint(nred)},
		MapSetup: func(t *Task) error {
			if t.State != nil {
				return fmt.Errorf("state %v at setup", t.State)
			}
			t.State = &splitStat{first: -1}
			if ended != nil {
				context.AfterFunc(t.Ctx, func() { ended.Add(1) })
			}
			return nil
		},
		Inputs: []Input[wcValue]{From(docs, func(t *Task, d Doc, emit Emit[wcValue]) error {
			st := t.State.(*splitStat)
			if st.first < 0 {
				st.first = d.ID
			}
			st.docs++
			st.words += int64(len(strings.Fields(d.Text)))
			return nil
		}, SplitRowGroups(2))},
		MapCleanup: func(t *Task, emit Emit[wcValue]) error {
			st := t.State.(*splitStat)
			if st.docs > 0 {
				emit(fmt.Sprintf("split-%08d", st.first), wcValue{N: st.words, Docs: st.docs})
				t.Count("splits", 1)
			}
			return nil
		},
		Reduce: func(t *Task, key string, vs iter.Seq[wcValue], out func(WordCount)) error {
			n, _ := t.State.(*int64)
			if n == nil {
				n = new(int64)
				t.State = n
			}
			*n++
			wc := WordCount{Word: fmt.Sprintf("%s#%d", key, *n)}
			for v := range vs {
				wc.Count += v.N
				wc.Docs += v.Docs
			}
			out(wc)
			return nil
		},
		NumReduce: nred,
		Outputs:   []Output[WordCount]{Write[WordCount](out)},
	}
}

// waitEnded returns the count of ended split contexts once it reaches
// want, or what it is after ten seconds: context.AfterFunc runs its
// function in a goroutine of its own, so the count can trail the
// cancellation that triggers it.
func waitEnded(ended *atomic.Int64, want int64) int64 {
	deadline := time.Now().Add(10 * time.Second)
	for ended.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return ended.Load()
}

// TestMapHooksLocalAndStreaming runs a job with MapSetup, MapCleanup and
// per-partition reduce state on the local runner and as streaming tasks
// (in this process: one map task per pair of manifest lines, one reduce
// for every partition), and checks the outputs are identical: the hooks
// run once per split on both, and the reduce state restarts with each
// partition.
func TestMapHooksLocalAndStreaming(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(3000, 31)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2, parquetio.RowGroupRows(300))
	const nred = 3
	ctx := context.Background()

	var ended atomic.Int64
	local := hookJob(filepath.Join(dir, "docs"), filepath.Join(dir, "local"), nred, &ended)
	res, err := testRunner(t).RunJob(ctx, local)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := Splits(ctx, testRunner(t).resolver(), local)
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) < 4 {
		t.Fatalf("only %d splits", len(splits))
	}
	if got := res.Counters.Get("hooks", "splits"); got != int64(len(splits)) {
		t.Errorf("local: %d splits emitted, want %d", got, len(splits))
	}
	if got := waitEnded(&ended, int64(len(splits))); got != int64(len(splits)) {
		t.Errorf("local: %d split contexts ended, want %d", got, len(splits))
	}

	ended.Store(0)
	reg := Registry{"hooks": func(c map[string]string) (Runnable, error) {
		return hookJob(c["docs"], c["out"], nred, &ended), nil
	}}
	job := hookJob(filepath.Join(dir, "docs"), filepath.Join(dir, "stream"), nred, nil)
	work := t.TempDir()
	counters := &Counters{}
	env := func(part int, phase, out string) func(string) string {
		m := map[string]string{EnvJobName: "hooks", EnvJobConf: EncodeConf(job.Conf),
			EnvTaskPartition: fmt.Sprint(part), EnvTaskOutputDir: out,
			EnvTaskAttempt: fmt.Sprintf("attempt_1_0001_%s_%06d_0", phase[:1], part), EnvTaskTempDir: t.TempDir()}
		return func(k string) string { return m[k] }
	}
	var mapOut bytes.Buffer
	for i := 0; i < len(splits); i += 2 {
		in := strings.Join(splits[i:min(i+2, len(splits))], "\n") + "\n"
		var stderr bytes.Buffer
		if err := RunStreamingTask(ctx, reg, "map", env(i/2, "map", filepath.Join(work, "m")), strings.NewReader(in), &mapOut, &stderr); err != nil {
			t.Fatalf("map %d: %v\n%s", i/2, err, stderr.String())
		}
		if err := ParseCounterLines(&stderr, counters); err != nil {
			t.Fatal(err)
		}
	}
	if got := waitEnded(&ended, int64(len(splits))); got != int64(len(splits)) {
		t.Errorf("streaming: %d split contexts ended, want %d", got, len(splits))
	}
	lines := strings.SplitAfter(mapOut.String(), "\n")
	sort.Strings(lines) // LC_ALL=C order
	// One reducer for every partition, each line with the TAB a Hadoop
	// reducer sees after a key-only map output line.
	var redIn strings.Builder
	for _, l := range lines {
		if l != "" {
			redIn.WriteString(strings.TrimSuffix(l, "\n") + "\t\n")
		}
	}
	var stderr bytes.Buffer
	out := filepath.Join(work, "r")
	if err := RunStreamingTask(ctx, reg, "reduce", env(0, "reduce", out), strings.NewReader(redIn.String()), &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("reduce: %v\n%s", err, stderr.String())
	}
	if err := ParseCounterLines(&stderr, counters); err != nil {
		t.Fatal(err)
	}
	if err := PublishStreaming(ctx, testRunner(t).resolver(), job, []string{out}, counters); err != nil {
		t.Fatal(err)
	}
	assertSameOutput(t, filepath.Join(dir, "local"), filepath.Join(dir, "stream"))
	if got := counters.Get("hooks", "splits"); got != int64(len(splits)) {
		t.Errorf("streaming: %d splits emitted, want %d", got, len(splits))
	}
	_, rows := readOutput[WordCount](t, filepath.Join(dir, "stream"), nil)
	var total int64
	for _, r := range rows {
		total += r.Docs
	}
	if total != int64(len(docs)) {
		t.Errorf("%d docs counted, want %d", total, len(docs))
	}
}

// TestMapHooksErrors checks that a setup or cleanup error fails the task
// attempt with the hook named, and a map-only cleanup writes records.
func TestMapHooksErrors(t *testing.T) {
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "docs"), makeDocs(100, 5), 1)
	for _, tc := range []struct {
		name    string
		setup   func(*Task) error
		cleanup func(*Task, Emit[Doc]) error
		want    string
	}{
		{"setup", func(*Task) error { return fmt.Errorf("no resolver") }, nil, "map setup: no resolver"},
		{"cleanup", nil, func(*Task, Emit[Doc]) error { return fmt.Errorf("flush failed") }, "map cleanup: flush failed"},
	} {
		job := filterJob(filepath.Join(dir, "docs"), filepath.Join(dir, tc.name))
		job.MapSetup, job.MapCleanup = tc.setup, tc.cleanup
		r := testRunner(t)
		r.MaxAttempts = 2
		if _, err := r.RunJob(context.Background(), job); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	job := filterJob(filepath.Join(dir, "docs"), filepath.Join(dir, "extra"))
	job.MapCleanup = func(t *Task, emit Emit[Doc]) error {
		emit("", Doc{ID: -1, Text: "written at the end"})
		return nil
	}
	if _, err := testRunner(t).RunJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	_, rows := readOutput[Doc](t, filepath.Join(dir, "extra"), nil)
	if len(rows) == 0 || rows[len(rows)-1].ID != -1 {
		t.Errorf("map-only cleanup record missing: %d rows", len(rows))
	}
}
