package mapreduce

import (
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// BenchmarkSortSpillMerge measures the shuffle alone: 1M records of a
// 40-byte URL key and a 16-byte value through a 16 MiB buffer (several
// spills), then a merge of every partition.
func BenchmarkSortSpillMerge(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 1))
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("http://h%04d.sim.test/path/%08d", r.IntN(500), r.IntN(1e8))
	}
	val := make([]byte, 16)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		sh := &mapShuffle{buf: newSortBuffer(16 << 20), parts: 4, dir: dir, prefix: "m", c: &Counters{}}
		for j := 0; j < n; j++ {
			k := keys[j%len(keys)]
			val[0], val[1] = byte(j), byte(j>>8)
			if err := sh.add(HashPartitioner(k, 4), k, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := sh.finish(); err != nil {
			b.Fatal(err)
		}
		got := 0
		for p := 0; p < 4; p++ {
			m, err := newMerger(sh.runs, p, 64<<10)
			if err != nil {
				b.Fatal(err)
			}
			for {
				_, _, _, err := m.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				got++
			}
			m.close()
		}
		if got != n {
			b.Fatalf("merged %d of %d", got, n)
		}
		b.ReportMetric(float64(len(sh.runs)), "spills")
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
}

// benchRow is a small crawl-like record.
type benchRow struct {
	URL    string  `parquet:"url"`
	Host   string  `parquet:"host,dict"`
	Status int32   `parquet:"status"`
	Score  float32 `parquet:"score"`
	Fetch  int64   `parquet:"fetch"`
}

func benchInput(b *testing.B, n, parts int) string {
	dir := filepath.Join(b.TempDir(), "in")
	r := rand.New(rand.NewPCG(2, 2))
	rows := make([]benchRow, n)
	for i := range rows {
		h := r.IntN(2000)
		rows[i] = benchRow{URL: fmt.Sprintf("http://h%04d.sim.test/p/%d", h, r.Uint64()), Host: fmt.Sprintf("h%04d.sim.test", h),
			Status: int32(r.IntN(8)), Score: r.Float32(), Fetch: r.Int64N(1 << 40)}
	}
	writeParts(b, dir, rows, parts)
	return dir
}

// BenchmarkLocalJob runs an identity job (updatedb-shaped: read rows, key by
// URL, reduce each key to one row, write) over 1M rows; the "rewrite"
// baseline reads and rewrites the same rows with parquetio alone.
func BenchmarkLocalJob(b *testing.B) {
	const n = 1_000_000
	in := benchInput(b, n, 4)
	b.Run("job", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out := filepath.Join(b.TempDir(), "out")
			job := &Job[benchRow, benchRow]{
				Name: "identity",
				Inputs: []Input[benchRow]{From(in, func(t *Task, r benchRow, emit Emit[benchRow]) error {
					emit(r.URL, r)
					return nil
				})},
				Reduce: func(t *Task, key string, vs iter.Seq[benchRow], out func(benchRow)) error {
					for v := range vs {
						out(v)
						break
					}
					return nil
				},
				NumReduce: 4,
				Outputs:   []Output[benchRow]{Write[benchRow](out)},
			}
			r := &LocalRunner{TempDir: b.TempDir(), Log: testLogger(b)}
			res, err := Run(context.Background(), r, job)
			if err != nil {
				b.Fatal(err)
			}
			if got := res.Counters.Get("trawl", "output_records"); got != n {
				b.Fatalf("%d rows out", got)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("rewrite", func(b *testing.B) {
		fsys := storage.NewLocal()
		for i := 0; i < b.N; i++ {
			out := b.TempDir()
			for p := 0; p < 4; p++ {
				rows, err := parquetio.ReadAll[benchRow](fsys, filepath.Join(in, partName('r', p)))
				if err != nil {
					b.Fatal(err)
				}
				if err := parquetio.WriteFile(fsys, filepath.Join(out, partName('r', p)), rows); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	})
}
