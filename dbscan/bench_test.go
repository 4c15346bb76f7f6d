package dbscan

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/trawl/trawl/mapreduce"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The benchmark data: simweb-like standardized features (genWebFeatures),
// generated once per size.
var (
	benchMu   sync.Mutex
	benchData = map[int]Points{}
)

func webData(n int) Points {
	benchMu.Lock()
	defer benchMu.Unlock()
	if p, ok := benchData[n]; ok {
		return p
	}
	p := genWebFeatures(rand.New(rand.NewPCG(2026, uint64(n))), n)
	benchData[n] = p
	return p
}

// benchEps and benchMinPts are the benchmark's parameters: minPts = 2*d
// (a common rule) and an eps near the k-distance knee of this data.
const (
	benchEps    = 0.25
	benchMinPts = 12
)

func benchCluster(b *testing.B, n int, eps float64) {
	pts := webData(n)
	b.ReportAllocs()
	b.ResetTimer()
	var res *Result
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		res, err = Cluster(context.Background(), pts, Params{Eps: eps, MinPts: benchMinPts})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	core, noise := 0, 0
	for i, l := range res.Labels {
		if res.Core[i] {
			core++
		}
		if l == Noise {
			noise++
		}
	}
	b.ReportMetric(float64(res.Clusters), "clusters")
	b.ReportMetric(float64(core)/float64(n), "core-frac")
	b.ReportMetric(float64(noise)/float64(n), "noise-frac")
}

// cpuTime is the process's user and system CPU time in nanoseconds: on a
// shared machine it varies less than the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkCluster100k(b *testing.B) { benchCluster(b, 100_000, benchEps) }

// BenchmarkCluster1M uses eps 0.1: the density is ten times higher than
// at 100k, and eps 0.1 gives neighbourhoods of the size eps 0.25 gives
// there.
func BenchmarkCluster1M(b *testing.B) { benchCluster(b, 1_000_000, 0.1) }

// BenchmarkCluster1MKnee uses the eps SuggestEps finds for this data
// (0.355): dense neighbourhoods, most points core.
func BenchmarkCluster1MKnee(b *testing.B) { benchCluster(b, 1_000_000, 0.355) }

// TestExploreEps prints cluster statistics over eps for the benchmark data
// (DBSCAN_EXPLORE=n to run).
func TestExploreEps(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DBSCAN_EXPLORE"))
	if n == 0 {
		t.Skip("DBSCAN_EXPLORE not set")
	}
	pts := webData(n)
	epss := []float64{0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5}
	if e := os.Getenv("DBSCAN_EPS"); e != "" {
		epss = nil
		for _, f := range strings.Split(e, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			epss = append(epss, v)
		}
	}
	for _, eps := range epss {
		start, cpu0 := time.Now(), cpuTime()
		res, err := Cluster(context.Background(), pts, Params{Eps: eps, MinPts: benchMinPts})
		if err != nil {
			t.Fatal(err)
		}
		core, noise := 0, 0
		sizes := make([]int, res.Clusters)
		for i, l := range res.Labels {
			if res.Core[i] {
				core++
			}
			if l == Noise {
				noise++
			} else {
				sizes[l]++
			}
		}
		big := 0
		for _, s := range sizes {
			big = max(big, s)
		}
		fmt.Printf("eps %.3f: %v (cpu %v) clusters %d core %.3f noise %.3f biggest %d\n", eps, time.Since(start), time.Duration(cpuTime()-cpu0), res.Clusters, float64(core)/float64(n), float64(noise)/float64(n), big)
	}
}

// TestDumpWebData writes the benchmark data and this package's labels for
// it as raw little-endian files (DBSCAN_DUMP=n, DBSCAN_DUMP_DIR), for a
// side-by-side run of scikit-learn.
func TestDumpWebData(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DBSCAN_DUMP"))
	if n == 0 {
		t.Skip("DBSCAN_DUMP not set")
	}
	dir := os.Getenv("DBSCAN_DUMP_DIR")
	pts := webData(n)
	buf := make([]byte, 0, 8*len(pts.Data))
	for _, v := range pts.Data {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("web%d.f64", n)), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	eps, _ := strconv.ParseFloat(os.Getenv("DBSCAN_EPS"), 64)
	if eps == 0 {
		return
	}
	start, cpu0 := time.Now(), cpuTime()
	res, err := Cluster(context.Background(), pts, Params{Eps: eps, MinPts: benchMinPts})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("go: n %d eps %v: %v (cpu %v), %d clusters\n", n, eps, time.Since(start), time.Duration(cpuTime()-cpu0), res.Clusters)
	lb := make([]byte, 0, 4*n)
	for _, l := range res.Labels {
		lb = binary.LittleEndian.AppendUint32(lb, uint32(l))
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("web%d.labels", n)), lb, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchRun is partitioned DBSCAN on the local engine: n simweb-like points
// (already standardized) from Parquet, in boxes partitions.
func benchRun(b *testing.B, n, boxes int, eps float64) {
	pts := webData(n)
	dir := b.TempDir()
	rows := make([]PointRow, pts.Len())
	for i := range rows {
		rows[i] = PointRow{Key: PointKey(i), X: pts.At(i)}
	}
	writePartsRG(b, filepath.Join(dir, "in"), rows, 4, 0)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var sum *Summary
	for i := 0; b.Loop(); i++ {
		env := mapreduce.Engine{Runner: &mapreduce.LocalRunner{TempDir: dir, Log: testLog()}, Log: testLog()}
		var err error
		sum, err = Run(context.Background(), env, JobConfig{
			Source: Source{Points: filepath.Join(dir, "in")}, Work: filepath.Join(dir, fmt.Sprint("work", i)), Output: filepath.Join(dir, fmt.Sprint("out", i)),
			Eps: eps, MinPts: benchMinPts, Partitions: boxes, MinSamples: 5, SampleRate: 0.01,
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(sum.Params.HaloPoints)/float64(pts.Len()), "halo/pt")
	b.ReportMetric(float64(sum.Params.Clusters), "clusters")
}

func BenchmarkRun100k(b *testing.B) { benchRun(b, 100_000, 4, benchEps) }
func BenchmarkRun1M(b *testing.B)   { benchRun(b, 1_000_000, 8, 0.1) }

// BenchmarkSuggestEps1M is the k-distance curve of 20,000 sampled points
// among 1,000,000 and its knee.
func BenchmarkSuggestEps1M(b *testing.B) {
	pts := webData(1_000_000)
	b.ResetTimer()
	var eps float64
	for b.Loop() {
		var err error
		eps, err = SuggestEps(pts, benchMinPts)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(eps, "eps")
}

// BenchmarkReadCSV reads 1,000,000 6-d points (the benchmark data, every
// value with all its digits, as the bench/dbscan harness writes them)
// from a CSV file.
func BenchmarkReadCSV(b *testing.B) {
	pts := webData(1_000_000)
	p := filepath.Join(b.TempDir(), "points.csv")
	buf := []byte("a,b,c,d,e,f\n")
	for i := range pts.Len() {
		for k, x := range pts.At(i) {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		}
		buf = append(buf, '\n')
	}
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		got, _, err := ReadCSV(f, p)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if got.Len() != pts.Len() {
			b.Fatalf("%d points, want %d", got.Len(), pts.Len())
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}
