package dbscan

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

func testLog() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func testEnv(t testing.TB) mapreduce.Engine {
	dir := t.TempDir()
	log := testLog()
	return mapreduce.Engine{
		Storage: storage.NewResolver(),
		Runner:  &mapreduce.LocalRunner{TempDir: dir, Parallelism: 3, MemoryBudget: 1 << 20, Log: log},
		Log:     log,
	}
}

// writeParts writes rows as parts Parquet files in dir, in order, with
// small row groups (several map splits).
func writeParts[T any](t testing.TB, dir string, rows []T, parts int) {
	writePartsRG(t, dir, rows, parts, 97)
}

// writePartsRG is writeParts with row groups of groupRows rows (0: the
// default size).
func writePartsRG[T any](t testing.TB, dir string, rows []T, parts, groupRows int) {
	t.Helper()
	fsys := storage.NewLocal()
	per := (len(rows) + parts - 1) / max(parts, 1)
	for p := 0; p < parts; p++ {
		lo, hi := min(p*per, len(rows)), min((p+1)*per, len(rows))
		f, err := fsys.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", p)))
		if err != nil {
			t.Fatal(err)
		}
		w := parquetio.NewWriter[T](f, parquetio.RowGroupRows(int64(groupRows)))
		if err := w.Write(rows[lo:hi]...); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// expect runs Cluster on pts (standardized with the run's scaler when it
// standardized) and checks the run's assignments against it; keys[i] is
// point i's key and keys must be sorted.
func expect(t *testing.T, what string, res mapreduce.Resolver, out string, sum *Summary, keys []string, pts Points, p Params) *Result {
	t.Helper()
	if !slices.IsSorted(keys) {
		t.Fatal("keys not sorted")
	}
	pts = Points{Dim: pts.Dim, Data: slices.Clone(pts.Data)}
	if sum.Params.Standardized {
		if err := (Scaler{Mean: sum.Params.Mean, Std: sum.Params.Std}).Apply(pts); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Cluster(context.Background(), pts, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadAssignments(res, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Fatalf("%s: %d assignments for %d points", what, len(got), len(keys))
	}
	gl, gc := make([]int32, len(got)), make([]bool, len(got))
	for i, a := range got {
		if a.Key != keys[i] {
			t.Fatalf("%s: assignment %d is %q, want %q", what, i, a.Key, keys[i])
		}
		gl[i], gc[i] = a.Label, a.Core
	}
	equalLabels(t, what, gl, want.Labels, gc, want.Core)
	var core, border, noise int64
	for i := range gl {
		switch {
		case gc[i]:
			core++
		case gl[i] == Noise:
			noise++
		default:
			border++
		}
	}
	if sp := sum.Params; sp.Points != int64(len(keys)) || int(sp.Clusters) != want.Clusters || sp.Core != core || sp.Border != border || sp.Noise != noise {
		t.Fatalf("%s: params %+v, want %d points %d clusters %d/%d/%d", what, sp, len(keys), want.Clusters, core, border, noise)
	}
	// Centres and samples as Centres computes them in memory.
	wantC, wantS, err := Centres(pts, want, int(sum.Params.MinSamples), sum.Params.SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	gotC, err := ReadOutput[Centre](res, filepath.Join(out, DirCentres))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(gotC, func(a, b Centre) int { return int(a.Label) - int(b.Label) })
	if len(gotC) != len(wantC) {
		t.Fatalf("%s: %d centres, want %d", what, len(gotC), len(wantC))
	}
	for i := range gotC {
		if g, w := gotC[i], wantC[i]; g.Label != w.Label || g.Size != w.Size || g.Core != w.Core || !slices.Equal(g.X, w.X) {
			t.Fatalf("%s: centre %+v, want %+v", what, g, w)
		}
	}
	gotS, err := ReadOutput[Sample](res, filepath.Join(out, DirSamples))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(gotS, func(a, b Sample) int { return int(a.Label-b.Label)*1000000 + int(a.Rank-b.Rank) })
	k := 0
	for l, idx := range wantS {
		for rank, i := range idx {
			if k >= len(gotS) {
				t.Fatalf("%s: %d samples, want more", what, len(gotS))
			}
			if g := gotS[k]; int(g.Label) != l || int(g.Rank) != rank || g.Key != keys[i] {
				t.Fatalf("%s: sample %+v, want cluster %d rank %d key %s", what, g, l, rank, keys[i])
			}
			k++
		}
	}
	if k != len(gotS) {
		t.Fatalf("%s: %d samples, want %d", what, len(gotS), k)
	}
	return want
}

// TestRunEqualsExact is the property test on the engine: random data,
// parameters, partition and reduce counts, with and without
// standardization, give exactly Cluster's labels.
func TestRunEqualsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	trials := 24
	if testing.Short() {
		trials = 6
	}
	split := 0 // trials with several boxes and halo points
	for trial := range trials {
		d := []int{1, 2, 3, 6}[r.IntN(4)]
		n := 100 + r.IntN(2500)
		var pts Points
		var eps float64
		switch r.IntN(3) {
		case 0:
			pts = genBlobs(r, n, d, 1+r.IntN(5), r.Float64()*0.4)
			eps = 0.2 + r.Float64()
		case 1:
			pts = genLattice(r, n, d, 3+r.IntN(4))
			eps = []float64{1, 1.4142135623730951, 2}[r.IntN(3)]
		default:
			pts = genWebFeatures(r, n)
			if d < 6 {
				q := NewPoints(d, n)
				for i := range n {
					q.Append(pts.At(i)[:d])
				}
				pts = q
			}
			eps = 0.15 + r.Float64()*0.5
		}
		standardize := r.IntN(2) == 0
		if standardize {
			eps /= 2
		}
		p := Params{Eps: eps, MinPts: 1 + r.IntN(12)}
		// Keys in a shuffled input order; the key order is the index
		// order of the expected result.
		keys := keysOf(n)
		rows := make([]PointRow, n)
		for i := range n {
			rows[i] = PointRow{Key: keys[i], X: pts.At(i)}
		}
		r.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		dir := t.TempDir()
		writeParts(t, filepath.Join(dir, "in"), rows, 1+r.IntN(4))
		cfg := JobConfig{
			Source: Source{Points: filepath.Join(dir, "in")}, Work: filepath.Join(dir, "work"), Output: filepath.Join(dir, "out"),
			Eps: p.Eps, MinPts: p.MinPts, Standardize: standardize,
			Partitions: 1 + r.IntN(16), Reduces: 1 + r.IntN(4), TaskWorkers: 1 + r.IntN(2), SampleSize: 50 + r.IntN(2000),
			MinSamples: r.IntN(5), SampleRate: []float64{0, 0.05, 0.3}[r.IntN(3)],
		}
		env := testEnv(t)
		sum, err := Run(context.Background(), env, cfg)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		what := fmt.Sprintf("trial %d (d %d n %d eps %.3f minPts %d std %v boxes %d reduces %d)", trial, d, n, eps, p.MinPts, standardize, sum.Params.Boxes, cfg.Reduces)
		expect(t, what, env.Storage, cfg.Output, sum, keys, pts, p)
		if sum.Params.Boxes > 2 && sum.Params.HaloPoints > 0 {
			split++
		}
		if _, err := os.Stat(cfg.Work); !os.IsNotExist(err) {
			t.Fatalf("%s: work directory left behind: %v", what, err)
		}
		params, err := ReadOutput[Parameters](env.Storage, filepath.Join(cfg.Output, DirParams))
		if err != nil || len(params) != 1 || params[0].Points != int64(n) {
			t.Fatalf("%s: params/ %+v %v", what, params, err)
		}
	}
	if split < trials/2 {
		t.Fatalf("only %d of %d trials had several boxes with halo points", split, trials)
	}
}

// TestRunCrawlDB clusters the young pages of a CrawlDB.
func TestRunCrawlDB(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	var rows []crawldb.Datum
	for i := range 3000 {
		d := crawldb.Datum{
			URL:         fmt.Sprintf("http://h%d.sim.test/p/%d", i%37, i),
			Status:      crawldb.StatusDBFetched,
			FetchCount:  1 + int32(r.IntN(20)),
			ChangeCount: int32(r.IntN(25)),
			Features: crawldb.Features{Words: int32(100 + r.IntN(400)), Outlinks: int32(r.IntN(30)), Inlinks: int32(r.IntN(5)),
				Images: int32(r.IntN(3)), Depth: int32(r.IntN(4)), Bytes: int64(2000 + r.IntN(8000))},
		}
		switch r.IntN(10) {
		case 0:
			d.Status = crawldb.StatusDBUnfetched
			d.FetchCount = 0
		case 1:
			d.Status = crawldb.StatusDBNotModified
		case 2:
			d.Status = crawldb.StatusDBGone
		}
		rows = append(rows, d)
	}
	slices.SortFunc(rows, func(a, b crawldb.Datum) int { return strings.Compare(a.URL, b.URL) })
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "crawldb"), rows, 3)
	cfg := JobConfig{
		Source: Source{CrawlDB: filepath.Join(dir, "crawldb")}, Work: filepath.Join(dir, "work"), Output: filepath.Join(dir, "clusters", "1"),
		Eps: 0.6, MinPts: 6, Standardize: true, Partitions: 5, Reduces: 2, MinSamples: 3, SampleRate: 0.1,
	}
	env := testEnv(t)
	sum, err := Run(context.Background(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	pts := NewPoints(NumFeatures, 0)
	for _, d := range rows {
		if YoungPage(d, DefaultMaxChanges) {
			keys = append(keys, d.URL)
			x := FeatureVector(d.Features)
			pts.Append(x[:])
		}
	}
	if len(keys) == 0 || len(keys) == len(rows) {
		t.Fatalf("%d young pages of %d: the test data should have some of both", len(keys), len(rows))
	}
	expect(t, "crawldb", env.Storage, cfg.Output, sum, keys, pts, Params{Eps: cfg.Eps, MinPts: cfg.MinPts})
	if sp := sum.Params; sp.Source != "crawldb" || sp.MaxChanges != DefaultMaxChanges || !slices.Equal(sp.Features, FeatureNames()) {
		t.Fatalf("params %+v", sp)
	}
}

func TestRunEmptyAndErrors(t *testing.T) {
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "in"), []PointRow{}, 1)
	env := testEnv(t)
	cfg := JobConfig{Source: Source{Points: filepath.Join(dir, "in")}, Work: filepath.Join(dir, "work"), Output: filepath.Join(dir, "out"), Eps: 1, MinPts: 2}
	sum, err := Run(context.Background(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Params.Points != 0 {
		t.Fatalf("params %+v", sum.Params)
	}
	if a, err := ReadAssignments(env.Storage, cfg.Output); err != nil || len(a) != 0 {
		t.Fatalf("assignments %v %v", a, err)
	}
	// The output exists now: a second run must refuse.
	cfg.Work = filepath.Join(dir, "work2")
	if _, err := Run(context.Background(), env, cfg); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second run into an existing output: %v", err)
	}
	// Duplicate keys, and bad coordinates, name the point and leave no output.
	for i, rows := range [][]PointRow{
		{{Key: "a", X: []float64{1}}, {Key: "b", X: []float64{2}}, {Key: "a", X: []float64{3}}},
		{{Key: "a", X: []float64{1, 2}}, {Key: "b", X: []float64{2}}},
	} {
		in := filepath.Join(dir, fmt.Sprintf("bad%d", i))
		writeParts(t, in, rows, 1)
		cfg := JobConfig{Source: Source{Points: in}, Work: filepath.Join(dir, fmt.Sprintf("w%d", i)), Output: filepath.Join(dir, fmt.Sprintf("o%d", i)), Eps: 1, MinPts: 2}
		_, err := Run(context.Background(), env, cfg)
		if err == nil || !strings.Contains(err.Error(), `"a"`) && !strings.Contains(err.Error(), `"b"`) {
			t.Fatalf("bad input %d: %v", i, err)
		}
		if _, serr := os.Stat(cfg.Output); !os.IsNotExist(serr) {
			t.Fatalf("bad input %d left an output", i)
		}
	}
}

// TestRunMemoryBudget runs with Partitions 0 and a memory budget far too
// small for the points in one box: Run must cut them into boxes that each
// fit in a task's share of the budget, the engine spills its map output,
// and the labels must still be Cluster's.
func TestRunMemoryBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n := 20000
	if testing.Short() {
		n = 8000
	}
	pts := genWebFeatures(r, n)
	keys := keysOf(n)
	rows := make([]PointRow, n)
	for i := range n {
		rows[i] = PointRow{Key: keys[i], X: pts.At(i)}
	}
	r.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	dir := t.TempDir()
	// Large splits, so that a map task's output passes its share and
	// spills several runs.
	writePartsRG(t, filepath.Join(dir, "in"), rows, 3, 0)
	const budget = 3 << 20
	env := testEnv(t)
	par := env.Parallelism()
	cfg := JobConfig{
		Source: Source{Points: filepath.Join(dir, "in")}, Work: filepath.Join(dir, "work"), Output: filepath.Join(dir, "out"),
		Eps: 0.4, MinPts: 8, Standardize: true, MemoryBudget: budget, MinSamples: 2, SampleRate: 0.05,
	}
	sum, err := Run(context.Background(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Eps: cfg.Eps, MinPts: cfg.MinPts}
	what := fmt.Sprintf("n %d budget %d boxes %d halo %d", n, budget, sum.Params.Boxes, sum.Params.HaloPoints)
	want := expect(t, what, env.Storage, cfg.Output, sum, keys, pts, p)
	t.Logf("%s: %d clusters", what, want.Clusters)
	// The boxes' real loads (own and halo points, on the standardized
	// points) against a task's share.
	std := Points{Dim: pts.Dim, Data: slices.Clone(pts.Data)}
	if err := (Scaler{Mean: sum.Params.Mean, Std: sum.Params.Std}).Apply(std); err != nil {
		t.Fatal(err)
	}
	part := sum.Partitioning
	loads := part.boxLoads(std, cfg.Eps*cfg.Eps)
	share := int64(budget / par)
	if most := int64(slices.Max(loads)) * boxPointBytes; most > share*5/4 {
		t.Fatalf("%s: the largest box sees %d points, %d bytes, over a task's share %d", what, slices.Max(loads), most, share)
	}
	if sum.Params.Boxes < 8 || sum.Params.HaloPoints == 0 {
		t.Fatalf("%s: want several boxes with halo points", what)
	}
	spills := int64(0)
	for _, j := range sum.Jobs {
		for _, ts := range j.Tasks {
			spills = max(spills, ts.Spills)
		}
	}
	if spills < 2 {
		t.Fatalf("%s: no task spilled more than one run", what)
	}
	if want.Clusters < 2 {
		t.Fatalf("%s: %d clusters: a test without clusters proves little", what, want.Clusters)
	}
}
