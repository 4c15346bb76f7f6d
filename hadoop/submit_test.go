//go:build unix

package hadoop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// The test binary is also the "trawl" binary the submissions ship: run as
// `trawl task --phase PHASE` it is the streaming task entry of the test
// jobs. TestMain builds the emulator into a fake Hadoop home.
var hadoopHome string

func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "task" && os.Args[2] == "--phase" {
		err := mapreduce.RunStreamingTask(context.Background(), testRegistry(), os.Args[3], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "trawl-hadoop-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	hadoopHome = dir
	if err := makeHadoopHome(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// makeHadoopHome builds the emulator as HOME/bin/hadoop and bin/mapred,
// with an empty streaming jar.
func makeHadoopHome(home string) error {
	bin := filepath.Join(home, "bin", "hadoop")
	cmd := exec.Command("go", "build", "-o", bin, "./streamemu/cmd/hadoop")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the emulator: %w", err)
	}
	if err := os.Symlink("hadoop", filepath.Join(home, "bin", "mapred")); err != nil {
		return err
	}
	lib := filepath.Join(home, "share", "hadoop", "tools", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(lib, "hadoop-streaming-3.3.6.jar"), nil, 0o644)
}

// Doc is the test jobs' input record.
type Doc struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
}

// Count is the word count job's output record.
type Count struct {
	Word string `parquet:"word"`
	N    int64  `parquet:"n"`
}

// files are a test job's input and output.
type files struct{ In, Out string }

// The test jobs' specs: each is the job's files.
type (
	wcSpec   files
	foxSpec  files
	slowSpec files
	failSpec files
)

func (wcSpec) JobName() string   { return "wc" }
func (foxSpec) JobName() string  { return "fox" }
func (slowSpec) JobName() string { return "slow" }
func (failSpec) JobName() string { return "fail" }

func (s wcSpec) Job() (mapreduce.Runnable, error)   { return wcJob(files(s)), nil }
func (s foxSpec) Job() (mapreduce.Runnable, error)  { return foxJob(files(s)), nil }
func (s slowSpec) Job() (mapreduce.Runnable, error) { return slowJob(files(s)), nil }

func (s failSpec) Job() (mapreduce.Runnable, error) {
	j := foxJob(files(s))
	j.Name = "fail"
	j.MapSetup = func(*mapreduce.Task) error { return errors.New("this task always fails") }
	return j, nil
}

// testSpec is the spec of the test job name over f.
func testSpec(name string, f files) mapreduce.Spec {
	switch name {
	case "wc":
		return wcSpec(f)
	case "fox":
		return foxSpec(f)
	case "slow":
		return slowSpec(f)
	case "fail":
		return failSpec(f)
	}
	panic("no test job " + name)
}

// testRegistry is the registry of the test binary's task entry.
func testRegistry() mapreduce.Registry {
	r := mapreduce.Registry{}
	mapreduce.Register[wcSpec](r)
	mapreduce.Register[foxSpec](r)
	mapreduce.Register[slowSpec](r)
	mapreduce.Register[failSpec](r)
	return r
}

// wcJob counts words in 5 partitions, and each split's docs from its
// MapCleanup.
func wcJob(c files) *mapreduce.Job[int64, Count] {
	return &mapreduce.Job[int64, Count]{
		Name: "wc", NumReduce: 5,
		MapSetup: func(t *mapreduce.Task) error { t.State = new(int64); return nil },
		Inputs: []mapreduce.Input[int64]{mapreduce.From(c.In, func(t *mapreduce.Task, d Doc, emit mapreduce.Emit[int64]) error {
			*t.State.(*int64)++
			for _, w := range strings.Fields(d.Text) {
				emit(w, 1)
			}
			t.Count("docs", 1)
			return nil
		}, mapreduce.SplitRowGroups(1))},
		MapCleanup: func(t *mapreduce.Task, emit mapreduce.Emit[int64]) error {
			emit("~docs", *t.State.(*int64))
			return nil
		},
		Reduce: func(t *mapreduce.Task, key string, vs iter.Seq[int64], out func(Count)) error {
			c := Count{Word: key}
			for v := range vs {
				c.N += v
			}
			out(c)
			return nil
		},
		Outputs: []mapreduce.Output[Count]{mapreduce.Write[Count](c.Out)},
	}
}

// foxJob keeps the docs that mention a fox (map-only).
func foxJob(c files) *mapreduce.Job[Doc, Doc] {
	return &mapreduce.Job[Doc, Doc]{
		Name: "fox", MapOnly: true,
		Inputs: []mapreduce.Input[Doc]{mapreduce.From(c.In, func(t *mapreduce.Task, d Doc, emit mapreduce.Emit[Doc]) error {
			if strings.Contains(d.Text, "fox") {
				emit("", d)
				t.Count("foxes", 1)
			}
			return nil
		}, mapreduce.SplitRowGroups(1))},
		Outputs: []mapreduce.Output[Doc]{mapreduce.Write[Doc](c.Out)},
	}
}

// slowJob's tasks never end by themselves.
func slowJob(c files) *mapreduce.Job[Doc, Doc] {
	j := foxJob(c)
	j.Name = "slow"
	j.MapSetup = func(t *mapreduce.Task) error {
		<-t.Ctx.Done()
		return t.Ctx.Err()
	}
	return j
}

var words = strings.Fields("the quick brown fox jumps over lazy dog crawl fetch parse update generate inject host")

// writeDocs writes n docs as parts part files of row groups of 50 rows.
func writeDocs(t testing.TB, dir string, n, parts int) {
	t.Helper()
	var docs []Doc
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := 0; k < 1+i%7; k++ {
			b.WriteString(words[(i*7+k*3)%len(words)] + " ")
		}
		docs = append(docs, Doc{ID: int64(i), Text: b.String()})
	}
	per := (n + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := min(p*per, n), min((p+1)*per, n)
		if err := parquetio.WriteFile(storage.NewLocal(), filepath.Join(dir, fmt.Sprintf("part-r-%05d.parquet", p)), docs[lo:hi], parquetio.RowGroupRows(50)); err != nil {
			t.Fatal(err)
		}
	}
}

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// submitter is a Submitter for the emulator, its logs in logs.
func submitter(t testing.TB, logs *logBuffer, extraEnv ...string) *Submitter {
	t.Helper()
	state := t.TempDir()
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "STREAMEMU_STATE=" + state}, extraEnv...)
	get := func(k string) string {
		if k == EnvHadoopHome {
			return hadoopHome
		}
		return ""
	}
	loc, err := Locate(get, exec.LookPath, "")
	if err != nil {
		t.Fatal(err)
	}
	return &Submitter{Hadoop: loc.Hadoop, StreamingJar: loc.StreamingJar, Binary: os.Args[0],
		Storage: storage.NewResolver(), Reducers: 2, MaxAttempts: 3, EngineMemory: 8 << 20, Env: env,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), ProgressInterval: time.Millisecond}
}

// sameParts checks two published outputs have the same part files, byte
// for byte.
func sameParts(t *testing.T, a, b string) {
	t.Helper()
	list := func(d string) []string {
		m, _ := filepath.Glob(filepath.Join(d, "part-*.parquet"))
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return m
	}
	la, lb := list(a), list(b)
	if !slices.Equal(la, lb) || len(la) == 0 {
		t.Fatalf("part files %v vs %v", la, lb)
	}
	for _, n := range la {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs", n)
		}
	}
	for _, d := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(d, "_SUCCESS")); err != nil {
			t.Error(err)
		}
	}
}

// run runs the test job name over f on the local runner, or through s.
func run(t *testing.T, s *Submitter, name string, f files) (*mapreduce.Result, error) {
	t.Helper()
	var r mapreduce.Runner = s
	if s == nil {
		r = &mapreduce.LocalRunner{TempDir: t.TempDir(), Parallelism: 2, Log: slog.New(slog.DiscardHandler)}
	}
	return r.Run(context.Background(), testSpec(name, f))
}

// noStaging checks that no _temporary is left beside an output.
func noStaging(t *testing.T, parent string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(parent, "_temporary")); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(filepath.Join(parent, "_temporary"))
		t.Errorf("_temporary left in %s: %v", parent, ents)
	}
}

// TestSubmitEqualsLocal runs a job with a reduce (5 partitions on 2
// reducers) and a map-only job through the emulated hadoop jar, plainly
// and with every first task attempt failing, and compares their outputs
// and counters with the local runner's.
func TestSubmitEqualsLocal(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, filepath.Join(dir, "docs"), 700, 3)
	conf := func(job, kind string) files {
		return files{In: filepath.Join(dir, "docs"), Out: filepath.Join(dir, kind, job)}
	}
	for _, job := range []string{"wc", "fox"} {
		local, err := run(t, nil, job, conf(job, "local"))
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"hadoop", "flaky"} {
			var logs logBuffer
			var env []string
			if kind == "flaky" {
				env = append(env, "STREAMEMU_FAIL_FIRST_ATTEMPTS=1")
			}
			res, err := run(t, submitter(t, &logs, env...), job, conf(job, kind))
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", job, kind, err, logs.String())
			}
			sameParts(t, filepath.Join(dir, "local", job), filepath.Join(dir, kind, job))
			noStaging(t, filepath.Join(dir, kind))
			for _, c := range [][2]string{{"trawl", "map_tasks"}, {"trawl", "map_input_records"}, {"trawl", "output_records"},
				{"trawl", "output_bytes"}, {"trawl", "reduce_input_groups"}, {job, "docs"}, {job, "foxes"}} {
				if a, b := local.Counters.Get(c[0], c[1]), res.Counters.Get(c[0], c[1]); a != b {
					t.Errorf("%s %s: counter %s/%s: local %d, hadoop %d", job, kind, c[0], c[1], a, b)
				}
			}
			failed := res.Counters.Get("trawl", "failed_task_attempts")
			if (kind == "flaky") != (failed > 0) {
				t.Errorf("%s %s: %d failed task attempts", job, kind, failed)
			}
			for _, w := range []string{"hadoop job submitted", "tracking_url=file://", "hadoop job progress", "map=100%", "hadoop job finished"} {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("%s %s: logs lack %q:\n%s", job, kind, w, logs.String())
				}
			}
			if kind == "flaky" && !strings.Contains(logs.String(), "hadoop task attempt failed") {
				t.Errorf("%s: no failed attempt logged", job)
			}
		}
	}
	if got := local(t, dir); got == 0 {
		t.Error("no words counted")
	}
}

// local reads the local word counts' total.
func local(t *testing.T, dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "local", "wc", "part-*.parquet"))
	var n int64
	for _, f := range files {
		rows, err := parquetio.ReadAll[Count](storage.NewLocal(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Word != "~docs" {
				n += r.N
			}
		}
	}
	return n
}

// TestSubmitFailure checks a job whose tasks always fail: the error names
// the job, the failed attempt and where its logs are; nothing is
// published and the staging is gone.
func TestSubmitFailure(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, filepath.Join(dir, "docs"), 100, 1)
	var logs logBuffer
	_, err := run(t, submitter(t, &logs), "fail", files{In: filepath.Join(dir, "docs"), Out: filepath.Join(dir, "out", "fail")})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"hadoop engine: job fail", "ended FAILED", "task attempt attempt_",
		"subprocess failed with code 3", "task logs:", "tracking URL file://"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	// The attempt named is the last of the task that failed the job.
	if m := regexp.MustCompile(`Task failed task_(\d+_\d+_m_\d+);.* task attempt attempt_(\d+_\d+_m_\d+)_2 FAILED`).FindStringSubmatch(err.Error()); m == nil || m[1] != m[2] {
		t.Errorf("error %q does not name the failed task's last attempt", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "fail")); !os.IsNotExist(err) {
		t.Errorf("output published: %v", err)
	}
	noStaging(t, filepath.Join(dir, "out"))
}

// TestSubmitOutputExists checks that an existing output fails the job
// before Hadoop runs.
func TestSubmitOutputExists(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, filepath.Join(dir, "docs"), 100, 1)
	out := filepath.Join(dir, "out", "fox")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	inv := filepath.Join(dir, "inv.log")
	_, err := run(t, submitter(t, &logs, "STREAMEMU_LOG="+inv), "fox", files{In: filepath.Join(dir, "docs"), Out: out})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(inv); !os.IsNotExist(err) {
		t.Errorf("hadoop ran: %v", err)
	}
}

// TestSubmitCancel cancels a running job: Run returns at once, the
// job is killed, nothing is published.
func TestSubmitCancel(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, filepath.Join(dir, "docs"), 100, 1)
	var logs logBuffer
	s := submitter(t, &logs)
	spec := slowSpec{In: filepath.Join(dir, "docs"), Out: filepath.Join(dir, "out", "slow")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Run(ctx, spec)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "hadoop job submitted") {
		if time.Now().After(deadline) {
			t.Fatalf("never submitted:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "killed") {
			t.Errorf("error %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after the cancel")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if !strings.Contains(logs.String(), "hadoop job killed") {
		t.Errorf("the job was not killed with job -kill:\n%s", logs.String())
	}
	if _, err := os.Stat(spec.Out); !os.IsNotExist(err) {
		t.Errorf("output published: %v", err)
	}
	noStaging(t, filepath.Join(dir, "out"))
}

// TestSubmitDryRun prints the command and runs nothing; a job without
// input publishes empty outputs without Hadoop.
func TestSubmitDryRun(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, filepath.Join(dir, "docs"), 100, 2)
	var logs logBuffer
	var out bytes.Buffer
	s := submitter(t, &logs)
	s.DryRun, s.DryRunNote = &out, "the next jobs depend on this one"
	_, err := run(t, s, "wc", files{In: filepath.Join(dir, "docs"), Out: filepath.Join(dir, "out", "wc")})
	if !errors.Is(err, ErrDryRun) {
		t.Fatalf("err %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], ShellQuote(s.Hadoop)+" jar ") ||
		!strings.Contains(lines[0], " -mapper './trawl task --phase map' ") || lines[1] != "# the next jobs depend on this one" {
		t.Errorf("dry run printed:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote: %v", err)
	}

	// No input at all.
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	s = submitter(t, &logs, "STREAMEMU_LOG="+filepath.Join(dir, "inv.log"))
	res, err := run(t, s, "fox", files{In: empty, Out: filepath.Join(dir, "out", "fox")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "fox", "_SUCCESS")); err != nil || res.Counters.Get("trawl", "map_tasks") != 0 {
		t.Errorf("empty job: %v %v", err, res.Counters.Snapshot())
	}
	if _, err := os.Stat(filepath.Join(dir, "inv.log")); !os.IsNotExist(err) {
		t.Errorf("hadoop ran for a job without input: %v", err)
	}
}

// BenchmarkJobOverhead runs a small job with a reduce (100 docs, 2 map
// tasks, 5 partitions on 2 reducers) on the local runner and through the
// emulated hadoop jar: the difference is the submission's overhead per
// job (split manifest, hadoop command, task processes, publication), not
// a cluster's, which adds JVM and YARN container start-up.
func BenchmarkJobOverhead(b *testing.B) {
	dir := b.TempDir()
	writeDocs(b, filepath.Join(dir, "docs"), 100, 1)
	for _, engine := range []string{"local", "emulated-hadoop"} {
		b.Run(engine, func(b *testing.B) {
			outs := b.TempDir()
			var logs logBuffer
			var s *Submitter
			if engine != "local" {
				s = submitter(b, &logs)
				s.Log = slog.New(slog.DiscardHandler)
			}
			i := 0
			for b.Loop() {
				i++
				spec := wcSpec{In: filepath.Join(dir, "docs"), Out: filepath.Join(outs, fmt.Sprint(i))}
				var err error
				if s == nil {
					_, err = (&mapreduce.LocalRunner{TempDir: dir, Parallelism: 2, Log: slog.New(slog.DiscardHandler)}).Run(context.Background(), spec)
				} else {
					_, err = s.Run(context.Background(), spec)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
