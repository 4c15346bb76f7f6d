package jobs

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// testEnv is a crawl in a temporary directory with a small engine.
func testEnv(t testing.TB) Env {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return Env{
		Engine: mapreduce.Engine{
			Storage: storage.NewResolver(),
			Runner: &mapreduce.LocalRunner{TempDir: filepath.Join(dir, "tmp"), Parallelism: 4,
				MemoryBudget: 4 << 20, Log: log},
			Log: log,
		},
		Crawl:   filepath.Join(dir, "crawl"),
		DBParts: 3,
	}
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readParts reads every row of the part files of a directory.
func readParts[T any](t testing.TB, dir string) []T {
	t.Helper()
	fsys := storage.NewLocal()
	files, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	var out []T
	for _, f := range files {
		rows, err := parquetio.ReadAll[T](fsys, f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		out = append(out, rows...)
	}
	return out
}

// readDB reads the current CrawlDB, by URL.
func readDB(t testing.TB, env Env) map[string]crawldb.Datum {
	t.Helper()
	rows := readParts[crawldb.Datum](t, filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName))
	m := make(map[string]crawldb.Datum, len(rows))
	for _, d := range rows {
		d = canonical(d)
		if _, dup := m[d.URL]; dup {
			t.Fatalf("CrawlDB holds %s twice", d.URL)
		}
		m[d.URL] = d
	}
	return m
}

// writeDB writes rows as the current CrawlDB, in parts by URL hash, each
// sorted by URL, as the engine would.
func writeDB(t testing.TB, env Env, rows []crawldb.Datum, parts int) {
	t.Helper()
	dir := filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)
	byPart := make([][]crawldb.Datum, parts)
	for _, d := range rows {
		p := mapreduce.HashPartitioner(d.URL, parts)
		byPart[p] = append(byPart[p], d)
	}
	for p, rs := range byPart {
		slices.SortFunc(rs, func(a, b crawldb.Datum) int { return strings.Compare(a.URL, b.URL) })
		writeParquet(t, filepath.Join(dir, partName(p)), rs)
	}
	writeFile(t, filepath.Join(dir, "_SUCCESS"), "")
}

func partName(p int) string { return fmt.Sprintf("part-r-%05d.parquet", p) }

func writeParquet[T any](t testing.TB, p string, rows []T) {
	t.Helper()
	if err := parquetio.WriteFile(storage.NewLocal(), p, rows); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// writeSegmentStage publishes rows as a segment stage (crawl_fetch,
// crawl_parse, ...) of segDir: one part file and _SUCCESS.
func writeSegmentStage[T any](t testing.TB, segDir, stage string, rows []T) {
	t.Helper()
	writeParquet(t, filepath.Join(segDir, stage, "part-r-00000.parquet"), rows)
	writeFile(t, filepath.Join(segDir, stage, "_SUCCESS"), "")
}

// fetchList reads a segment's fetch list, by part file.
func fetchList(t testing.TB, seg string) map[string][]segment.Generate {
	t.Helper()
	dir := filepath.Join(seg, segment.DirGenerate)
	files, err := parquetio.PartFiles(storage.NewLocal(), dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	out := map[string][]segment.Generate{}
	for _, f := range files {
		rows, err := parquetio.ReadAll[segment.Generate](storage.NewLocal(), f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = rows
	}
	return out
}

// dirExists reports whether p exists.
func dirExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func storageLocal() storage.FS { return storage.NewLocal() }

// canonical makes empty slices and maps nil, as a Parquet round trip does
// not keep the difference.
func canonical(d crawldb.Datum) crawldb.Datum {
	if len(d.Signature) == 0 {
		d.Signature = nil
	}
	if len(d.History) == 0 {
		d.History = nil
	}
	if len(d.Metadata) == 0 {
		d.Metadata = nil
	}
	return d
}

// localRunner is env's runner, the LocalRunner testEnv made, for a test
// to tune.
func localRunner(env Env) *mapreduce.LocalRunner { return env.Runner.(*mapreduce.LocalRunner) }

// checkRoundTrip checks that spec comes out of its job configuration, as a
// Hadoop Streaming task receives it (encoded into the task's environment,
// decoded, the spec's JSON read back), equal to what went in, and that
// Registry builds its job from it.
func checkRoundTrip[T mapreduce.Spec](t *testing.T, spec T) {
	t.Helper()
	conf, err := mapreduce.SpecConf(spec)
	if err != nil {
		t.Fatal(err)
	}
	if conf, err = mapreduce.DecodeConf(mapreduce.EncodeConf(conf)); err != nil {
		t.Fatal(err)
	}
	got, err := mapreduce.DecodeSpec[T](conf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Errorf("%s: decoded\n%+v\nwant\n%+v", spec.JobName(), got, spec)
	}
	job, err := Registry()[spec.JobName()](conf)
	if err != nil {
		t.Fatalf("%s: Registry: %v", spec.JobName(), err)
	}
	if info, err := mapreduce.Describe(job); err != nil || info.Name != spec.JobName() {
		t.Errorf("%s: built %+v, %v", spec.JobName(), info, err)
	}
}
