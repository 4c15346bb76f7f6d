package mapreduce

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// TestPeakRSS measures the peak resident memory of the local runner on an
// updatedb-shaped job whose map output (about 250 MiB of records and index
// entries) is larger than the budget, at several budgets, with the soft
// memory limit the commands set (MemoryLimit). It logs the peak above the
// process's resident memory before the job and fails if that passes the
// memory limit. It is a measurement, slow and Linux-only, so it runs only
// when TRAWL_PEAK_RSS is set, e.g.
//
//	TRAWL_PEAK_RSS=1 go test -run TestPeakRSS -v ./mapreduce/
//
// (TRAWL_PEAK_RSS=16MiB,64MiB measures those budgets only.)
func TestPeakRSS(t *testing.T) {
	spec := os.Getenv("TRAWL_PEAK_RSS")
	if spec == "" {
		t.Skip("TRAWL_PEAK_RSS not set")
	}
	budgets := []int64{16 << 20, 64 << 20, 256 << 20}
	if spec != "1" {
		budgets = nil
		for _, s := range strings.Split(spec, ",") {
			n, err := strconv.ParseInt(strings.TrimSuffix(s, "MiB"), 10, 64)
			if err != nil {
				t.Fatalf("TRAWL_PEAK_RSS=%q: want 1 or a list of NMiB", spec)
			}
			budgets = append(budgets, n<<20)
		}
	}
	if _, err := peakRSS(); err != nil {
		t.Skip(err)
	}
	const rows, parts, par = 2_000_000, 2, 2
	in := filepath.Join(t.TempDir(), "in")
	r := rand.New(rand.NewPCG(3, 3))
	for p := range parts {
		part := make([]benchRow, rows/parts)
		for i := range part {
			h := r.IntN(2000)
			part[i] = benchRow{URL: fmt.Sprintf("http://h%04d.sim.test/p/%d", h, r.Uint64()), Host: fmt.Sprintf("h%04d.sim.test", h),
				Status: int32(r.IntN(8)), Score: r.Float32(), Fetch: r.Int64N(1 << 40)}
		}
		if err := parquetio.WriteFile(storage.NewLocal(), filepath.Join(in, partName('r', p)), part); err != nil {
			t.Fatal(err)
		}
	}
	for _, budget := range budgets {
		limit := MemoryLimit(budget, par)
		prev := debug.SetMemoryLimit(limit)
		runtime.GC()
		debug.FreeOSMemory()
		base, err := resetPeakRSS()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		job := &Job[benchRow, benchRow]{
			Name: "peakrss",
			Inputs: []Input[benchRow]{From(in, func(t *Task, r benchRow, emit Emit[benchRow]) error {
				emit(r.URL, r)
				return nil
			})},
			Reduce: func(t *Task, key string, vs iter.Seq[benchRow], out func(benchRow)) error {
				for v := range vs {
					out(v)
				}
				return nil
			},
			NumReduce: 2,
			Outputs:   []Output[benchRow]{Write[benchRow](out)},
		}
		lr := &LocalRunner{TempDir: t.TempDir(), Log: testLogger(t), MemoryBudget: budget, Parallelism: par}
		res, err := Run(context.Background(), lr, job)
		debug.SetMemoryLimit(prev)
		if err != nil {
			t.Fatal(err)
		}
		peak, err := peakRSS()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("budget %3d MiB: peak RSS %3d MiB (%3d MiB above the %d MiB before the job; memory limit %d MiB), %d spills, map output %d MiB",
			budget>>20, peak>>20, (peak-base)>>20, base>>20, limit>>20, res.Counters.Get("trawl", "spills"), res.Counters.Get("trawl", "map_output_bytes")>>20)
		if peak-base > limit {
			t.Errorf("budget %d MiB: the job's peak RSS %d MiB passes the memory limit %d MiB", budget>>20, (peak-base)>>20, limit>>20)
		}
	}
}

// resetPeakRSS resets the process's peak resident set size (VmHWM) to its
// current resident size, which it returns.
func resetPeakRSS() (int64, error) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset peak RSS: %w", err)
	}
	return procStatus("VmRSS:")
}

// peakRSS is the process's peak resident set size (VmHWM) in bytes.
func peakRSS() (int64, error) { return procStatus("VmHWM:") }

// procStatus reads a size field of /proc/self/status, in bytes.
func procStatus(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read memory status: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read memory status %s: %w", field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read memory status: no %s", field)
}
