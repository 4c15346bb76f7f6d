package mapreduce

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl/trawl/parquetio"
)

// TestMain lets the test binary act as the trawl binary's streaming task
// entry: when TRAWL_STREAMTEST_PHASE is set it runs one task and exits.
func TestMain(m *testing.M) {
	if phase := os.Getenv("TRAWL_STREAMTEST_PHASE"); phase != "" {
		err := RunStreamingTask(context.Background(), testRegistry(), phase, os.Getenv, os.Stdin, os.Stdout, os.Stderr,
			WithMemoryBudget(256<<10))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testRegistry builds the test jobs from their configuration, as the CLI
// builds the real ones.
func testRegistry() Registry {
	return Registry{
		"wordcount": func(conf map[string]string) (Runnable, error) {
			n, err := strconv.Atoi(conf["reduces"])
			if err != nil {
				return nil, fmt.Errorf("reduces: %w", err)
			}
			j := wordCountJob(conf["docs"], conf["links"], conf["out"], n, conf["combine"] == "true", SplitRowGroups(2))
			if long := conf["long"]; long != "" {
				j.Conf["long"] = long
				j.Outputs = append(j.Outputs, WriteRouted(long, func(w WordCount) (LongWord, bool) {
					return LongWord{Word: w.Word, Len: int32(len(w.Word))}, len(w.Word) > 6
				}))
			}
			return j, nil
		},
		"filter": func(conf map[string]string) (Runnable, error) {
			return filterJob(conf["docs"], conf["out"]), nil
		},
	}
}

func filterJob(docs, out string) *Job[Doc, Doc] {
	return &Job[Doc, Doc]{
		Name:    "filter",
		Conf:    map[string]string{"docs": docs, "out": out},
		MapOnly: true,
		Inputs: []Input[Doc]{From(docs, func(t *Task, d Doc, emit Emit[Doc]) error {
			if strings.Contains(d.Text, "fox") {
				emit("", d)
			}
			return nil
		}, SplitRowGroups(3))},
		Outputs: []Output[Doc]{Write[Doc](out)},
	}
}

// TestEscapeOrder is a property test: escaping preserves the order of
// arbitrary byte strings, including prefixes, with the TAB separator.
func TestEscapeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	gen := func() []byte {
		b := make([]byte, r.IntN(8))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = byte(r.IntN(0x12)) // around the escape boundary
			case 1:
				b[i] = []byte{0x09, 0x0A, 0x0B, 0x0D, 0x0F, 0x10, 0x40, 0x4B}[r.IntN(8)]
			default:
				b[i] = byte(r.Uint32())
			}
		}
		return b
	}
	for i := 0; i < 200000; i++ {
		a, b := gen(), gen()
		if r.IntN(4) == 0 { // make prefixes common
			b = append(slices.Clone(a), b...)
		}
		ea := append(EscapeField(nil, a), '\t')
		eb := append(EscapeField(nil, b), '\t')
		if bytes.ContainsAny(ea[:len(ea)-1], "\t\r\n") {
			t.Fatalf("escape of %x contains a separator", a)
		}
		if got, want := bytes.Compare(ea, eb), bytes.Compare(a, b); got != want {
			t.Fatalf("order of %x vs %x: escaped %d, raw %d", a, b, got, want)
		}
		// Whole lines with the same key compare by value.
		la := appendLine(nil, 3, []byte("k"), a)
		lb := appendLine(nil, 3, []byte("k"), b)
		if got, want := bytes.Compare(bytes.TrimSuffix(la, []byte("\n")), bytes.TrimSuffix(lb, []byte("\n"))), bytes.Compare(a, b); got != want {
			t.Fatalf("line order of %x vs %x", a, b)
		}
		back, err := UnescapeField(nil, ea[:len(ea)-1])
		if err != nil || !bytes.Equal(back, a) {
			t.Fatalf("unescape(%x) = %x, %v", a, back, err)
		}
	}
}

func TestConfRoundTrip(t *testing.T) {
	conf := map[string]string{"a": "1", "path": "hdfs://nn:8020/x y/\tz", "": "empty"}
	got, err := DecodeConf(EncodeConf(conf))
	if err != nil || len(got) != 3 || got["path"] != conf["path"] || got[""] != "empty" {
		t.Fatalf("%v %v", got, err)
	}
	if EncodeConf(conf) != EncodeConf(map[string]string{"": "empty", "path": conf["path"], "a": "1"}) {
		t.Fatal("conf encoding not deterministic")
	}
	if _, err := DecodeConf("!!"); err == nil {
		t.Fatal("bad conf accepted")
	}
}

// streamJob runs a job as Hadoop Streaming would: one OS process per map
// split with its manifest line on stdin, map output split by partition,
// `LC_ALL=C sort` per reduce (with several partitions going to one
// reducer), one OS process per reduce, then PublishStreaming.
func streamJob(t *testing.T, name string, conf map[string]string, reducers int) *Counters {
	t.Helper()
	job, err := testRegistry()[name](conf)
	if err != nil {
		t.Fatal(err)
	}
	ej, err := job.compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res := testRunner(t).resolver()
	lines, err := Splits(ctx, res, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 2 {
		t.Fatalf("only %d splits", len(lines))
	}
	work := t.TempDir()
	tmp := t.TempDir() // the tasks' os.TempDir(), for their scratch directories
	counters := &Counters{}
	env := func(phase string, part int, outDir string) []string {
		return append(os.Environ(),
			"TMPDIR="+tmp,
			"TRAWL_STREAMTEST_PHASE="+phase,
			EnvJobName+"="+name,
			EnvJobConf+"="+EncodeConf(conf),
			fmt.Sprintf("%s=%d", EnvTaskPartition, part),
			fmt.Sprintf("%s=attempt_1_0001_%s_%06d_0", EnvTaskAttempt, phase[:1], part),
			EnvTaskOutputDir+"="+outDir,
			fmt.Sprintf("%s=%d", EnvJobReduces, ej.reduces()),
		)
	}
	runTask := func(phase string, part int, outDir string, stdin []byte) []byte {
		cmd := exec.Command(os.Args[0])
		cmd.Env = env(phase, part, outDir)
		cmd.Stdin = bytes.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s task %d: %v\n%s", phase, part, err, stderr.String())
		}
		if err := ParseCounterLines(&stderr, counters); err != nil {
			t.Fatal(err)
		}
		return stdout.Bytes()
	}
	var dirs []string
	var mapOut []byte
	for i, l := range lines {
		outDir := filepath.Join(work, fmt.Sprintf("m-%05d", i))
		dirs = append(dirs, outDir)
		// NLineInputFormat hands "OFFSET<TAB>LINE".
		mapOut = append(mapOut, runTask("map", i, outDir, fmt.Appendf(nil, "%d\t%s\n", i*100, l))...)
	}
	if !ej.isMapOnly() {
		// Partition by the first field, several partitions per reducer.
		inputs := make([][]byte, reducers)
		for _, l := range bytes.SplitAfter(mapOut, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			p, err := strconv.Atoi(string(l[:bytes.IndexByte(l, '\t')]))
			if err != nil {
				t.Fatalf("map output line %q: %v", l, err)
			}
			inputs[p%reducers] = append(inputs[p%reducers], l...)
		}
		for r := 0; r < reducers; r++ {
			sortCmd := exec.Command("sort")
			sortCmd.Env = append(os.Environ(), "LC_ALL=C")
			sortCmd.Stdin = bytes.NewReader(inputs[r])
			sorted, err := sortCmd.Output()
			if err != nil {
				t.Fatalf("sort: %v", err)
			}
			outDir := filepath.Join(work, fmt.Sprintf("r-%05d", r))
			dirs = append(dirs, outDir)
			runTask("reduce", r, outDir, sorted)
		}
	}
	if err := PublishStreaming(ctx, res, job, dirs, counters); err != nil {
		t.Fatal(err)
	}
	return counters
}

func TestStreamingEqualsLocal(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skip("no sort command")
	}
	dir := t.TempDir()
	docs, links := makeDocs(6000, 21), makeLinks(1500, 22)
	writeParts(t, filepath.Join(dir, "docs"), docs, 3, parquetio.RowGroupRows(400))
	writeParts(t, filepath.Join(dir, "links"), links, 2)
	conf := func(kind string) map[string]string {
		return map[string]string{
			"docs": filepath.Join(dir, "docs"), "links": filepath.Join(dir, "links"),
			"out": filepath.Join(dir, kind, "counts"), "long": filepath.Join(dir, kind, "long"),
			"reduces": "5", "combine": "true",
		}
	}
	job, _ := testRegistry()["wordcount"](conf("local"))
	r := testRunner(t)
	r.MemoryBudget = 1 << 20
	res, err := r.RunJob(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	sc := streamJob(t, "wordcount", conf("stream"), 3)
	for _, o := range []string{"counts", "long"} {
		assertSameOutput(t, filepath.Join(dir, "local", o), filepath.Join(dir, "stream", o))
	}
	for _, c := range []string{"map_input_records", "reduce_input_groups", "reduce_output_records", "output_records", "output_bytes"} {
		if a, b := res.Counters.Get("trawl", c), sc.Get("trawl", c); a != b || a == 0 {
			t.Errorf("counter %s: local %d, streaming %d", c, a, b)
		}
	}
	if a, b := res.Counters.Get("wordcount", "docs"), sc.Get("wordcount", "docs"); a != b || a != 6000 {
		t.Errorf("job counter docs: local %d, streaming %d", a, b)
	}

	// A map-only job.
	fconf := func(kind string) map[string]string {
		return map[string]string{"docs": filepath.Join(dir, "docs"), "out": filepath.Join(dir, kind, "fox")}
	}
	if _, err := Run(context.Background(), testRunner(t), filterJob(fconf("local")["docs"], fconf("local")["out"])); err != nil {
		t.Fatal(err)
	}
	streamJob(t, "filter", fconf("stream"), 0)
	assertSameOutput(t, filepath.Join(dir, "local", "fox"), filepath.Join(dir, "stream", "fox"))
}

func TestStreamingReduceRejectsUnsorted(t *testing.T) {
	dir := t.TempDir()
	conf := map[string]string{"docs": dir, "links": dir, "out": filepath.Join(dir, "o"), "reduces": "2", "combine": "false"}
	env := map[string]string{EnvJobName: "wordcount", EnvJobConf: EncodeConf(conf), EnvTaskOutputDir: filepath.Join(dir, "w")}
	var in bytes.Buffer
	c, _ := NewCodec[wcValue]()
	for _, k := range []string{"b", "a"} {
		v := wcValue{N: 1}
		in.Write(appendLine(nil, 0, []byte(k), c.Append(nil, &v)))
	}
	var stderr bytes.Buffer
	err := RunStreamingTask(context.Background(), testRegistry(), "reduce", func(k string) string { return env[k] }, &in, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not sorted") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v", err)
	}
	err = RunStreamingTask(context.Background(), testRegistry(), "map", func(k string) string { return map[string]string{EnvJobName: "nope"}[k] }, &in, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "unknown job") {
		t.Fatalf("got %v", err)
	}
	keys := sortedKeys(testRegistry())
	sort.Strings(keys)
	if len(keys) != 2 {
		t.Fatal(keys)
	}
}
