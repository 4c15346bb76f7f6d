package dbscan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

// TestRunSpecsRoundTrip runs every job as a Hadoop Streaming task gets
// it: its spec encoded into the job's Conf, decoded through the Registry
// that Register fills, and the job built from the decoded spec. The files
// are on a URI scheme only the engine's resolver knows, so the label job
// can read its side file through the task's Storage only. The result must
// be Cluster's.
func TestRunSpecsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 1200
	pts := genBlobs(r, n, 3, 4, 0.3)
	keys := keysOf(n)
	rows := make([]PointRow, n)
	for i := range n {
		rows[i] = PointRow{Key: keys[i], X: pts.At(i)}
	}
	r.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "in"), rows, 3)

	res := storage.NewResolver()
	if err := res.Register("box", func(string) (storage.FS, error) { return storage.NewLocal(), nil }); err != nil {
		t.Fatal(err)
	}
	reg := mapreduce.Registry{}
	Register(reg)
	local := &mapreduce.LocalRunner{TempDir: t.TempDir(), Parallelism: 3, MemoryBudget: 1 << 20, Log: testLog(), Storage: res}
	built := map[string]int{}
	runner := mapreduce.RunnerFunc(func(ctx context.Context, s mapreduce.Spec) (*mapreduce.Result, error) {
		conf, err := mapreduce.SpecConf(s)
		if err != nil {
			return nil, err
		}
		conf, err = mapreduce.DecodeConf(mapreduce.EncodeConf(conf))
		if err != nil {
			return nil, err
		}
		build, ok := reg[s.JobName()]
		if !ok {
			return nil, fmt.Errorf("job %s is not registered", s.JobName())
		}
		job, err := build(conf)
		if err != nil {
			return nil, err
		}
		built[s.JobName()]++
		return local.RunJob(ctx, job)
	})

	box := func(elem ...string) string {
		return "box:" + filepath.ToSlash(filepath.Join(append([]string{dir}, elem...)...))
	}
	cfg := JobConfig{
		Source: Source{Points: box("in")}, Work: box("work"), Output: box("out"),
		Eps: 0.25, MinPts: 5, Standardize: true, Partitions: 6, Reduces: 2, TaskWorkers: 2,
		SampleSize: 300, MinSamples: 2, SampleRate: 0.05,
	}
	sum, err := Run(context.Background(), mapreduce.Engine{Storage: res, Runner: runner, Log: testLog()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Params.Boxes < 2 || sum.Params.HaloPoints == 0 {
		t.Fatalf("%d boxes and %d halo points: the test needs several boxes", sum.Params.Boxes, sum.Params.HaloPoints)
	}
	for _, name := range []string{JobStats, JobLocal, JobJoin, JobLabel, JobCentres} {
		if built[name] != 1 {
			t.Errorf("job %s built %d times from its Conf, want 1", name, built[name])
		}
	}
	expect(t, "round trip", res, cfg.Output, sum, keys, pts, Params{Eps: cfg.Eps, MinPts: cfg.MinPts})
}

// TestSpecsRejectBadSettings builds each job from settings it cannot run
// with.
func TestSpecsRejectBadSettings(t *testing.T) {
	part := singlePartitioning(2)
	for _, s := range []mapreduce.Spec{
		statsSpec{SampleSize: 10},
		statsSpec{Source: Source{Points: "p", CrawlDB: "c"}, SampleSize: 10},
		statsSpec{Source: Source{Points: "p"}},
		localSpec{Source: Source{Points: "p"}, Eps: 0, MinPts: 2, Partitioning: part},
		localSpec{Source: Source{Points: "p"}, Eps: 1, MinPts: 2},
		localSpec{Source: Source{Points: "p"}, Eps: 1, MinPts: 2, Partitioning: part, Scaler: &Scaler{Mean: []float64{0, 0}, Std: []float64{1}}},
		centresSpec{MinSamples: -1},
		centresSpec{SampleRate: 1.5},
	} {
		if _, err := s.Job(); err == nil {
			t.Errorf("%s: %+v built a job", s.JobName(), s)
		}
	}
}

// singlePartitioning is one box holding everything.
func singlePartitioning(dim int) Partitioning {
	return Partitioning{Dim: dim, Nodes: []PartNode{{Box: 0}}, Boxes: 1}
}
