package mapreduce

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestSortBufferBudget fills map shuffles of several budgets with records
// of mixed sizes (some larger than a chunk, some larger than the whole
// budget) and checks that a buffer never holds more memory than its budget
// unless it holds a single record, and that the runs hold every record, in
// order.
func TestSortBufferBudget(t *testing.T) {
	for _, budget := range []int64{4 << 10, 64 << 10, 1 << 20} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(budget), 7))
			const parts = 3
			sh := &mapShuffle{buf: newSortBuffer(budget), parts: parts, dir: t.TempDir(), prefix: "m", c: &Counters{}}
			var recs []shuffleRecord
			for i := range 2000 + int(budget>>6) {
				key := fmt.Sprintf("http://h%03d.sim.test/%d", r.IntN(40), r.IntN(5000))
				vlen := r.IntN(64)
				switch {
				case i%997 == 0:
					vlen = int(budget) + 100 // larger than the budget
				case i%101 == 0:
					vlen = sh.buf.chunkSize + 10 // larger than a chunk
				}
				val := strings.Repeat(string(rune('a'+i%26)), vlen)
				recs = append(recs, shuffleRecord{HashPartitioner(key, parts), key, val})
			}
			addAll(t, sh, recs)
			if len(sh.runs) < 2 {
				t.Fatalf("%d runs: the test should spill", len(sh.runs))
			}
			checkRuns(t, sh, recs)
		})
	}
}

// TestSortBufferReuse checks that a buffer that has filled once takes the
// same records again without allocating: its chunks and index are kept.
func TestSortBufferReuse(t *testing.T) {
	b := newSortBuffer(256 << 10)
	val := bytes.Repeat([]byte{'v'}, 40)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("http://h%03d.sim.test/%d", i%40, i)
	}
	fill := func() int {
		n := 0
		for b.add(n%4, keys[n%len(keys)], val) {
			n++
		}
		return n
	}
	first := fill()
	if first < 100 {
		t.Fatalf("a 256 KiB buffer took %d records of ~70 bytes", first)
	}
	held := b.size()
	allocs := testing.AllocsPerRun(5, func() {
		b.reset()
		if n := fill(); n != first {
			t.Fatalf("refill took %d records, first fill %d", n, first)
		}
	})
	if allocs != 0 {
		t.Errorf("refilling allocated %v times", allocs)
	}
	if b.size() != held || held > 256<<10 {
		t.Errorf("buffer holds %d bytes after refills, %d after the first fill (budget %d)", b.size(), held, 256<<10)
	}
}

// TestMemoryLimit checks MemoryLimit's defaults and that it covers the
// budget plus a share per task.
func TestMemoryLimit(t *testing.T) {
	if got, want := MemoryLimit(0, 0), MemoryLimit(DefaultMemoryBudget, runtime.GOMAXPROCS(0)); got != want {
		t.Errorf("MemoryLimit(0, 0) = %d, want the defaults' %d", got, want)
	}
	l1, l2 := MemoryLimit(256<<20, 1), MemoryLimit(256<<20, 2)
	if l1 <= 256<<20 || l2 <= l1 {
		t.Errorf("MemoryLimit(256MiB, 1) = %d, (256MiB, 2) = %d: want above the budget, growing with tasks", l1, l2)
	}
	if l := MemoryLimit(256<<20, 2); l > 256<<20+200<<20 {
		t.Errorf("MemoryLimit(256MiB, 2) = %d MiB: above the budget + 200 MiB allowed", l>>20)
	}
}
