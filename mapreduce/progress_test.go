package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// progressLine is one progress log line's fields.
type progressLine struct {
	msg, phase              string
	records, total, percent float64
	tasksDone, tasks        int64
}

var logField = regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`)

func parseProgress(t *testing.T, log string) []progressLine {
	t.Helper()
	var out []progressLine
	for _, line := range strings.Split(log, "\n") {
		f := map[string]string{}
		for _, m := range logField.FindAllStringSubmatch(line, -1) {
			f[m[1]] = strings.Trim(m[2], `"`)
		}
		if f["msg"] != "progress" && f["msg"] != "phase ended" {
			continue
		}
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(f[k], 64)
			if err != nil {
				t.Fatalf("field %s of %q: %v", k, line, err)
			}
			return v
		}
		out = append(out, progressLine{msg: f["msg"], phase: f["phase"], records: num("records"), total: num("total"),
			percent: num("percent"), tasksDone: int64(num("tasks_done")), tasks: int64(num("tasks"))})
	}
	return out
}

// TestProgressLog runs a job whose Progress is not a terminal: progress is
// logged as records done of the phase's total, and each phase ends with a
// line at 100%. A map task that fails after reporting records and is
// retried must not push the count past the total.
func TestProgressLog(t *testing.T) {
	dir := t.TempDir()
	docs, links := makeDocs(5000, 1), makeLinks(1000, 2)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2, parquetio.RowGroupRows(500))
	writeParts(t, filepath.Join(dir, "links"), links, 1)
	for _, flaky := range []bool{false, true} {
		t.Run(fmt.Sprintf("flaky=%v", flaky), func(t *testing.T) {
			var logBuf lockedBuffer
			r := testRunner(t)
			r.Log = slog.New(slog.NewTextHandler(&logBuf, nil))
			r.Progress = &lockedBuffer{}
			r.ProgressInterval = time.Millisecond
			job := wordCountJob(filepath.Join(dir, "docs"), filepath.Join(dir, "links"), filepath.Join(dir, fmt.Sprint("out-", flaky)), 3, false)
			if flaky {
				var failed atomic.Int32
				job.Inputs[0] = From(filepath.Join(dir, "docs"), func(t *Task, d Doc, emit Emit[wcValue]) error {
					// Past two batches of the task's records: they were added.
					if d.ID == 2200 && failed.Add(1) == 1 {
						return errors.New("transient")
					}
					emit(strings.Fields(d.Text)[0], wcValue{N: 1})
					return nil
				})
			}
			res, err := Run(context.Background(), r, job)
			if err != nil {
				t.Fatal(err)
			}
			if flaky && res.Counters.Get("trawl", "failed_task_attempts") != 1 {
				t.Fatalf("failed_task_attempts %d", res.Counters.Get("trawl", "failed_task_attempts"))
			}
			lines := parseProgress(t, logBuf.String())
			want := map[string]float64{
				"map":    float64(len(docs) + len(links)),
				"reduce": float64(res.Counters.Get("trawl", "reduce_input_records")),
			}
			if want["reduce"] == 0 || float64(res.Counters.Get("trawl", "map_output_records")) != want["reduce"] {
				t.Fatalf("counters %v", res.Counters.Snapshot())
			}
			ended := map[string]progressLine{}
			for _, l := range lines {
				if l.total != want[l.phase] {
					t.Fatalf("%s line total %v, want %v", l.phase, l.total, want[l.phase])
				}
				if l.records < 0 || l.records > l.total || l.percent > 100 {
					t.Fatalf("%s line out of range: %+v", l.phase, l)
				}
				if l.msg == "phase ended" {
					ended[l.phase] = l
				}
			}
			for _, ph := range []string{"map", "reduce"} {
				l, ok := ended[ph]
				if !ok {
					t.Fatalf("no end line for %s in\n%s", ph, logBuf.String())
				}
				if l.records != want[ph] || l.percent != 100 || l.tasksDone != l.tasks {
					t.Fatalf("%s ended at %+v, want %v records", ph, l, want[ph])
				}
			}
			if ended["map"].tasks != 3 || ended["reduce"].tasks != 3 {
				t.Fatalf("tasks: %+v", ended)
			}
		})
	}
}

// TestProgressBar forces the bar on a buffer: it is labelled with the job
// and phase and reaches the phase's total.
func TestProgressBar(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(3000, 5)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2, parquetio.RowGroupRows(300))
	var out lockedBuffer
	r := testRunner(t)
	r.Progress = &out
	r.progressBar = true
	res, err := Run(context.Background(), r, wordCountJob(filepath.Join(dir, "docs"), "", filepath.Join(dir, "out"), 2, true))
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	red := res.Counters.Get("trawl", "reduce_input_records")
	if red == 0 || red >= res.Counters.Get("trawl", "map_output_records") {
		t.Fatalf("combiner did not reduce the reduce input: %v", res.Counters.Snapshot())
	}
	for _, want := range []string{
		"wordcount map", fmt.Sprintf("%d/%d", len(docs), len(docs)),
		"wordcount reduce", fmt.Sprintf("%d/%d", red, red), "rec/s",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("bar output lacks %q:\n%q", want, s)
		}
	}
	if strings.Contains(s, "level=INFO msg=progress") {
		t.Fatal("bar mode wrote log lines")
	}
	t.Logf("bar output:\n%s", s)
}

// TestTaskProgressRetry checks the record count a failed attempt added is
// taken back, batches are added only every progressBatch records, and the
// shown count stays within the total.
func TestTaskProgressRetry(t *testing.T) {
	p := newProgress(nil, time.Hour, testLogger(t), "job", false)
	p.phase("map", 2, 5000)
	defer p.stop()
	a := p.task()
	for n := int64(1); n <= 2500; n++ {
		a.update(n)
	}
	if got := p.records.Load(); got != 2*progressBatch {
		t.Fatalf("after 2500 records of a task, %d added; want %d", got, 2*progressBatch)
	}
	a.abort()
	if got := p.records.Load(); got != 0 {
		t.Fatalf("after abort, %d", got)
	}
	b, c := p.task(), p.task()
	for n := int64(1); n <= 3000; n++ {
		b.update(n)
		if n <= 2000 {
			c.update(n)
		}
	}
	b.finish(3000)
	c.finish(2000)
	if got := p.records.Load(); got != 5000 {
		t.Fatalf("records %d, want 5000", got)
	}
	if got := p.done.Load(); got != 2 {
		t.Fatalf("done %d", got)
	}
	p.records.Add(700) // a count briefly high
	if got := p.shown(5000); got != 5000 {
		t.Fatalf("shown %d, want clamped to 5000", got)
	}
	var nilTP *taskProgress
	nilTP.update(5000)
	nilTP.finish(5000)
	nilTP.abort()
}

// BenchmarkTaskProgress is the per-record cost of progress reporting.
func BenchmarkTaskProgress(b *testing.B) {
	p := newProgress(nil, time.Hour, slog.New(slog.DiscardHandler), "job", false)
	p.phase("map", 1, int64(b.N))
	defer p.stop()
	b.RunParallel(func(pb *testing.PB) {
		tp := p.task()
		var n int64
		for pb.Next() {
			n++
			tp.update(n)
		}
		tp.finish(n)
	})
}
