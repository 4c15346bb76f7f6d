package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Record types of the test jobs.
type Doc struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
}

type Link struct {
	URL    string `parquet:"url"`
	Anchor string `parquet:"anchor"`
}

type WordCount struct {
	Word  string `parquet:"word"`
	Count int64  `parquet:"count"`
	Docs  int64  `parquet:"docs"`
}

type LongWord struct {
	Word string `parquet:"word"`
	Len  int32  `parquet:"len"`
}

// wcValue is the shuffle value: a count, and how many docs.
type wcValue struct {
	N    int64
	Docs int64
}

var words = strings.Fields("the quick brown fox jumps over lazy dog crawl fetch parse update generate inject " +
	"host domain url anchor link text page site robots sitemap segment crawldb linkdb score interval " +
	"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau")

func makeDocs(n int, seed uint64) []Doc {
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([]Doc, n)
	for i := range out {
		k := 1 + r.IntN(12)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = words[r.IntN(len(words))]
			if r.IntN(50) == 0 {
				ws[j] += fmt.Sprint(r.IntN(100000)) // a long tail of rare words
			}
		}
		out[i] = Doc{ID: int64(i), Text: strings.Join(ws, " ")}
	}
	return out
}

func makeLinks(n int, seed uint64) []Link {
	r := rand.New(rand.NewPCG(seed, 4))
	out := make([]Link, n)
	for i := range out {
		out[i] = Link{URL: fmt.Sprintf("http://h%d.sim.test/%d", r.IntN(20), i), Anchor: words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]}
	}
	return out
}

// wordCountJob counts words of docs and link anchors; with combine it
// pre-sums on the map side.
func wordCountJob(docs, links, out string, nred int, combine bool, docOpts ...InputOption) *Job[wcValue, WordCount] {
	j := &Job[wcValue, WordCount]{
		Name: "wordcount",
		Conf: map[string]string{"docs": docs, "links": links, "out": out, "reduces": fmt.Sprint(nred), "combine": fmt.Sprint(combine)},
		Inputs: []Input[wcValue]{
			From(docs, func(t *Task, d Doc, emit Emit[wcValue]) error {
				seen := map[string]bool{}
				for _, w := range strings.Fields(d.Text) {
					v := wcValue{N: 1}
					if !seen[w] {
						v.Docs = 1
						seen[w] = true
					}
					emit(w, v)
				}
				t.Count("docs", 1)
				return nil
			}, docOpts...),
			From(links, func(t *Task, l Link, emit Emit[wcValue]) error {
				for _, w := range strings.Fields(l.Anchor) {
					emit(w, wcValue{N: 1})
				}
				return nil
			}, Optional()),
		},
		Reduce: func(t *Task, key string, vs iter.Seq[wcValue], out func(WordCount)) error {
			wc := WordCount{Word: key}
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
	if combine {
		j.Combine = func(t *Task, key string, vs iter.Seq[wcValue], emit func(wcValue)) error {
			var s wcValue
			for v := range vs {
				s.N += v.N
				s.Docs += v.Docs
			}
			emit(s)
			return nil
		}
	}
	return j
}

func expectedCounts(docs []Doc, links []Link) map[string]WordCount {
	m := map[string]WordCount{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, w := range strings.Fields(d.Text) {
			wc := m[w]
			wc.Word = w
			wc.Count++
			if !seen[w] {
				wc.Docs++
				seen[w] = true
			}
			m[w] = wc
		}
	}
	for _, l := range links {
		for _, w := range strings.Fields(l.Anchor) {
			wc := m[w]
			wc.Word = w
			wc.Count++
			m[w] = wc
		}
	}
	return m
}

func writeParts[T any](t testing.TB, dir string, rows []T, parts int, opts ...parquetio.WriterOption) {
	t.Helper()
	fsys := storage.NewLocal()
	per := (len(rows) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := min(p*per, len(rows)), min((p+1)*per, len(rows))
		if err := parquetio.WriteFile(fsys, filepath.Join(dir, fmt.Sprintf("part-r-%05d.parquet", p)), rows[lo:hi], opts...); err != nil {
			t.Fatal(err)
		}
	}
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func testRunner(t testing.TB) *LocalRunner {
	return &LocalRunner{TempDir: t.TempDir(), Log: testLogger(t), Parallelism: 3}
}

// readOutput reads every part file of a published output, checking
// _SUCCESS and the sort order within each part.
func readOutput[T any](t testing.TB, dir string, key func(T) string) (map[string][]T, []T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
		t.Fatalf("no _SUCCESS: %v", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string][]T{}
	var all []T
	for _, e := range ents {
		if !isPartFile(e.Name()) {
			continue
		}
		rows, err := parquetio.ReadAll[T](storage.NewLocal(), filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			t.Fatalf("%s: empty part file", e.Name())
		}
		if key != nil && strings.HasPrefix(e.Name(), "part-r-") {
			for i := 1; i < len(rows); i++ {
				if key(rows[i-1]) > key(rows[i]) {
					t.Fatalf("%s: not sorted by key at row %d", e.Name(), i)
				}
			}
		}
		parts[e.Name()] = rows
		all = append(all, rows...)
	}
	return parts, all
}

func TestWordCount(t *testing.T) {
	dir := t.TempDir()
	docs, links := makeDocs(3000, 1), makeLinks(1000, 2)
	writeParts(t, filepath.Join(dir, "docs"), docs, 3, parquetio.RowGroupRows(250))
	writeParts(t, filepath.Join(dir, "links"), links, 2)
	// Files that readers of a directory must ignore.
	os.WriteFile(filepath.Join(dir, "docs", "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "docs", ".part-r-00000.parquet.crc"), []byte("x"), 0o644)
	want := expectedCounts(docs, links)
	for _, combine := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("out-%v", combine))
		job := wordCountJob(filepath.Join(dir, "docs"), filepath.Join(dir, "links"), out, 4, combine)
		res, err := Run(context.Background(), testRunner(t), job)
		if err != nil {
			t.Fatal(err)
		}
		parts, all := readOutput(t, out, func(w WordCount) string { return w.Word })
		if len(all) != len(want) {
			t.Fatalf("combine=%v: %d words, want %d", combine, len(all), len(want))
		}
		for _, wc := range all {
			if want[wc.Word] != wc {
				t.Fatalf("combine=%v: %+v, want %+v", combine, wc, want[wc.Word])
			}
		}
		for name, rows := range parts {
			var p int
			fmt.Sscanf(name, "part-r-%05d.parquet", &p)
			for _, r := range rows {
				if HashPartitioner(r.Word, 4) != p {
					t.Fatalf("%s holds %q of partition %d", name, r.Word, HashPartitioner(r.Word, 4))
				}
			}
		}
		c := res.Counters
		if got := c.Get("trawl", "map_input_records"); got != int64(len(docs)+len(links)) {
			t.Fatalf("map_input_records %d", got)
		}
		if got := c.Get("wordcount", "docs"); got != int64(len(docs)) {
			t.Fatalf("job counter docs = %d", got)
		}
		if got := c.Get("trawl", "reduce_output_records"); got != int64(len(want)) {
			t.Fatalf("reduce_output_records %d", got)
		}
		if got := c.Get("trawl", "map_tasks"); got != 5 {
			t.Fatalf("map_tasks %d, want 5 (3 small doc files and 2 link files: one split each)", got)
		}
		if combine && c.Get("trawl", "combine_output_records") >= c.Get("trawl", "combine_input_records") {
			t.Fatal("combiner did not combine")
		}
		data, err := os.ReadFile(filepath.Join(out, "_counters.json"))
		if err != nil || !strings.Contains(string(data), `"reduce_output_records"`) {
			t.Fatalf("_counters.json: %v %s", err, data)
		}
		if _, err := os.Stat(filepath.Join(dir, "_temporary")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("_temporary left behind: %v", err)
		}
	}
}

// TestSpillMerge forces many spills and multi-pass merges with a tiny
// budget and checks the output equals an all-in-memory run, file for file.
func TestSpillMerge(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(15000, 5)
	writeParts(t, filepath.Join(dir, "docs"), docs, 4, parquetio.RowGroupRows(2000))
	run := func(out string, budget int64, factor int) *Result {
		r := testRunner(t)
		r.MemoryBudget, r.MergeFactor, r.Parallelism = budget, factor, 2
		job := wordCountJob(filepath.Join(dir, "docs"), filepath.Join(dir, "nolinks"), filepath.Join(dir, out), 3, false)
		job.Inputs[0] = From(filepath.Join(dir, "docs"), func(t *Task, d Doc, emit Emit[wcValue]) error {
			for _, w := range strings.Fields(d.Text) {
				emit(w, wcValue{N: 1, Docs: d.ID}) // distinct values: tests value order
			}
			return nil
		}, SplitRowGroups(2))
		job.Reduce = func(t *Task, key string, vs iter.Seq[wcValue], out func(WordCount)) error {
			wc := WordCount{Word: key}
			var prev []byte
			for v := range vs {
				b, _ := EncodeValue(v)
				if prev != nil && string(prev) > string(b) {
					return fmt.Errorf("values of %q out of order", key)
				}
				prev = b
				wc.Count += v.N
				wc.Docs = wc.Docs*31 + v.Docs // order-sensitive
			}
			out(wc)
			return nil
		}
		res, err := Run(context.Background(), r, job)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	big := run("big", 256<<20, 64)
	small := run("small", 64<<10, 4)
	if big.Counters.Get("trawl", "spills") != big.Counters.Get("trawl", "map_tasks") {
		t.Fatalf("big budget spilled more than once per task: %d", big.Counters.Get("trawl", "spills"))
	}
	if s := small.Counters.Get("trawl", "spills"); s < 50 {
		t.Fatalf("tiny budget: only %d spills", s)
	}
	if small.Counters.Get("trawl", "merge_passes") < 2 {
		t.Fatalf("expected several merge passes, got %d", small.Counters.Get("trawl", "merge_passes"))
	}
	assertSameOutput(t, filepath.Join(dir, "big"), filepath.Join(dir, "small"))
}

// assertSameOutput compares two published outputs part file by part file.
func assertSameOutput(t testing.TB, a, b string) {
	t.Helper()
	list := func(d string) []string {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			if isPartFile(e.Name()) {
				out = append(out, e.Name())
			}
		}
		return out
	}
	la, lb := list(a), list(b)
	if !slices.Equal(la, lb) {
		t.Fatalf("part files differ: %v vs %v", la, lb)
	}
	if len(la) == 0 {
		t.Fatal("no part files")
	}
	for _, n := range la {
		ra, err := os.ReadFile(filepath.Join(a, n))
		if err != nil {
			t.Fatal(err)
		}
		rb, err := os.ReadFile(filepath.Join(b, n))
		if err != nil {
			t.Fatal(err)
		}
		if string(ra) != string(rb) {
			t.Fatalf("%s differs between %s and %s", n, a, b)
		}
	}
}

func TestRoutedAndMapOnly(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(2000, 7)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2)
	want := expectedCounts(docs, nil)
	job := wordCountJob(filepath.Join(dir, "docs"), filepath.Join(dir, "none"), filepath.Join(dir, "counts"), 2, true)
	job.Outputs = append(job.Outputs, WriteRouted(filepath.Join(dir, "long"), func(w WordCount) (LongWord, bool) {
		return LongWord{Word: w.Word, Len: int32(len(w.Word))}, len(w.Word) > 6
	}))
	if _, err := Run(context.Background(), testRunner(t), job); err != nil {
		t.Fatal(err)
	}
	_, counts := readOutput(t, filepath.Join(dir, "counts"), func(w WordCount) string { return w.Word })
	_, long := readOutput(t, filepath.Join(dir, "long"), func(w LongWord) string { return w.Word })
	nLong := 0
	for w := range want {
		if len(w) > 6 {
			nLong++
		}
	}
	if len(counts) != len(want) || len(long) != nLong || nLong == 0 {
		t.Fatalf("counts %d (want %d), long %d (want %d)", len(counts), len(want), len(long), nLong)
	}

	// Map-only: one part-m file per split, in input order.
	mo := &Job[Doc, Doc]{
		Name:    "filter",
		MapOnly: true,
		Inputs: []Input[Doc]{From(filepath.Join(dir, "docs"), func(t *Task, d Doc, emit Emit[Doc]) error {
			if d.ID%2 == 0 {
				emit("", d)
			}
			return nil
		}, WholeFiles())},
		Outputs: []Output[Doc]{Write[Doc](filepath.Join(dir, "even"))},
	}
	if _, err := Run(context.Background(), testRunner(t), mo); err != nil {
		t.Fatal(err)
	}
	parts, even := readOutput[Doc](t, filepath.Join(dir, "even"), nil)
	if len(parts) != 2 || len(even) != 1000 || parts["part-m-00000.parquet"][0].ID != 0 || parts["part-m-00001.parquet"][0].ID != 1000 {
		t.Fatalf("map-only: %d parts, %d rows", len(parts), len(even))
	}
	bad := &Job[Doc, WordCount]{Name: "bad", MapOnly: true, Inputs: mo.Inputs[:0], Outputs: []Output[WordCount]{Write[WordCount](filepath.Join(dir, "x"))}}
	bad.Inputs = nil
	if _, err := Run(context.Background(), testRunner(t), bad); err == nil {
		t.Fatal("invalid job accepted")
	}
}

func TestRobustness(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(1000, 9)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2)
	docsDir := filepath.Join(dir, "docs")

	t.Run("existing output", func(t *testing.T) {
		out := filepath.Join(dir, "exists")
		os.MkdirAll(out, 0o755)
		_, err := Run(context.Background(), testRunner(t), wordCountJob(docsDir, "", out, 1, false))
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("corrupt input", func(t *testing.T) {
		bad := filepath.Join(dir, "corrupt")
		writeParts(t, bad, docs, 2)
		f := filepath.Join(bad, "part-r-00001.parquet")
		data, _ := os.ReadFile(f)
		os.WriteFile(f, data[:len(data)/2], 0o644)
		out := filepath.Join(dir, "out-corrupt")
		_, err := Run(context.Background(), testRunner(t), wordCountJob(bad, "", out, 2, false))
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Fatalf("want an error naming %s, got %v", f, err)
		}
		assertAbsent(t, out)
	})
	t.Run("corrupt row data", func(t *testing.T) {
		bad := filepath.Join(dir, "corrupt2")
		writeParts(t, bad, docs, 1)
		f := filepath.Join(bad, "part-r-00000.parquet")
		data, _ := os.ReadFile(f)
		for i := 40; i < len(data)/2; i += 7 {
			data[i] ^= 0x5a
		}
		os.WriteFile(f, data, 0o644)
		out := filepath.Join(dir, "out-corrupt2")
		_, err := Run(context.Background(), testRunner(t), wordCountJob(bad, "", out, 2, false))
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Fatalf("want an error naming %s, got %v", f, err)
		}
		assertAbsent(t, out)
	})
	t.Run("empty input", func(t *testing.T) {
		empty := filepath.Join(dir, "empty")
		os.MkdirAll(empty, 0o755)
		if err := parquetio.WriteFile[Doc](storage.NewLocal(), filepath.Join(empty, "part-r-00000.parquet"), nil); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out-empty")
		if _, err := Run(context.Background(), testRunner(t), wordCountJob(empty, "", out, 2, true)); err != nil {
			t.Fatal(err)
		}
		parts, _ := readOutput[WordCount](t, out, nil)
		if len(parts) != 0 {
			t.Fatalf("%d parts from empty input", len(parts))
		}
	})
	t.Run("missing input", func(t *testing.T) {
		out := filepath.Join(dir, "out-missing")
		_, err := Run(context.Background(), testRunner(t), wordCountJob(filepath.Join(dir, "nope"), "", out, 2, true))
		if err == nil || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("got %v", err)
		}
		assertAbsent(t, out)
	})
	t.Run("flaky map retried", func(t *testing.T) {
		var failed atomic.Int32
		job := wordCountJob(docsDir, "", filepath.Join(dir, "out-flaky"), 2, false)
		job.Inputs[0] = From(docsDir, func(t *Task, d Doc, emit Emit[wcValue]) error {
			if d.ID == 700 && failed.Add(1) == 1 {
				return errors.New("transient")
			}
			for _, w := range strings.Fields(d.Text) {
				emit(w, wcValue{N: 1})
			}
			return nil
		})
		res, err := Run(context.Background(), testRunner(t), job)
		if err != nil {
			t.Fatal(err)
		}
		if res.Counters.Get("trawl", "failed_task_attempts") != 1 || res.Counters.Get("trawl", "map_input_records") != 1000 {
			t.Fatalf("counters: %v", res.Counters.Snapshot())
		}
		_, all := readOutput(t, filepath.Join(dir, "out-flaky"), func(w WordCount) string { return w.Word })
		var n int64
		for _, w := range all {
			n += w.Count
		}
		var want int64
		for _, d := range docs {
			want += int64(len(strings.Fields(d.Text)))
		}
		if n != want {
			t.Fatalf("retried job counted %d words, want %d (failed attempt's output leaked?)", n, want)
		}
	})
	t.Run("always failing", func(t *testing.T) {
		out := filepath.Join(dir, "out-fail")
		job := wordCountJob(docsDir, "", out, 2, false)
		job.Reduce = func(t *Task, key string, vs iter.Seq[wcValue], out func(WordCount)) error {
			if key == "fox" {
				return errors.New("no foxes")
			}
			return nil
		}
		_, err := Run(context.Background(), testRunner(t), job)
		if err == nil || !strings.Contains(err.Error(), "no foxes") || !strings.Contains(err.Error(), "3 attempts") {
			t.Fatalf("got %v", err)
		}
		assertAbsent(t, out)
	})
	t.Run("panic", func(t *testing.T) {
		out := filepath.Join(dir, "out-panic")
		job := wordCountJob(docsDir, "", out, 2, false)
		job.Inputs[0] = From(docsDir, func(t *Task, d Doc, emit Emit[wcValue]) error {
			var m map[string]int
			m["boom"]++ // nil map write
			return nil
		})
		_, err := Run(context.Background(), testRunner(t), job)
		if err == nil || !strings.Contains(err.Error(), "panic") || !strings.Contains(err.Error(), "nil map") {
			t.Fatalf("got %v", err)
		}
		assertAbsent(t, out)
	})
	t.Run("cancel", func(t *testing.T) {
		out := filepath.Join(dir, "out-cancel")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		job := wordCountJob(docsDir, "", out, 2, false)
		job.Inputs[0] = From(docsDir, func(t *Task, d Doc, emit Emit[wcValue]) error {
			if d.ID == 10 {
				cancel()
			}
			emit("x", wcValue{N: 1})
			return nil
		})
		_, err := Run(ctx, testRunner(t), job)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		assertAbsent(t, out)
		if ents, _ := os.ReadDir(filepath.Join(dir, "_temporary")); len(ents) != 0 {
			t.Fatalf("stage left: %v", ents)
		}
	})
	t.Run("stale temporary removed", func(t *testing.T) {
		out := filepath.Join(dir, "out-stale")
		stale := filepath.Join(dir, "_temporary", "attempt_old", "out-stale")
		os.MkdirAll(filepath.Join(stale, "_temporary", "r-00000_0"), 0o755)
		os.WriteFile(filepath.Join(stale, "part-r-00009.parquet"), []byte("junk"), 0o644)
		if _, err := Run(context.Background(), testRunner(t), wordCountJob(docsDir, "", out, 2, false)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "_temporary")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stale stage not removed: %v", err)
		}
		parts, _ := readOutput[WordCount](t, out, nil)
		if _, ok := parts["part-r-00009.parquet"]; ok || len(parts) != 2 {
			t.Fatalf("parts: %v", reflect.ValueOf(parts).MapKeys())
		}
	})
}

func assertAbsent(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists after a failed job (%v)", p, err)
	}
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// DocV2 is Doc with a field added after Doc files were written.
type DocV2 struct {
	ID    int64  `parquet:"id"`
	Text  string `parquet:"text"`
	Lang  string `parquet:"lang"`
	Score int32  `parquet:"score"`
}

func TestAllowMissingColumns(t *testing.T) {
	dir := t.TempDir()
	docs := makeDocs(300, 3)
	writeParts(t, filepath.Join(dir, "docs"), docs, 2)
	job := func(out string, opts ...InputOption) *Job[DocV2, DocV2] {
		return &Job[DocV2, DocV2]{
			Name:    "evolve",
			MapOnly: true,
			Inputs: []Input[DocV2]{From(filepath.Join(dir, "docs"), func(t *Task, d DocV2, emit Emit[DocV2]) error {
				emit("", d)
				return nil
			}, opts...)},
			Outputs: []Output[DocV2]{Write[DocV2](filepath.Join(dir, out))},
		}
	}
	_, err := Run(context.Background(), testRunner(t), job("strict"))
	if err == nil || !strings.Contains(err.Error(), "lang") {
		t.Fatalf("strict input read files without the lang column: %v", err)
	}
	if _, err := Run(context.Background(), testRunner(t), job("evolved", AllowMissingColumns())); err != nil {
		t.Fatal(err)
	}
	_, got := readOutput[DocV2](t, filepath.Join(dir, "evolved"), nil)
	if len(got) != len(docs) {
		t.Fatalf("%d rows, want %d", len(got), len(docs))
	}
	for i, d := range got {
		if d.ID != docs[i].ID || d.Text != docs[i].Text || d.Lang != "" || d.Score != 0 {
			t.Fatalf("row %d: %+v, want %+v with zero new fields", i, d, docs[i])
		}
	}
}

// isPartFile reports whether name is a part file the engine writes.
func isPartFile(name string) bool {
	return strings.HasPrefix(name, "part-") && strings.HasSuffix(name, ".parquet")
}
