package linkeval

import (
	"context"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3}, []float64{1, 3, 2}, 0.5},
		{[]float64{1, 1, 2}, []float64{5, 5, 9}, 1},
	} {
		if got := Spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Spearman(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	if !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) {
		t.Error("constant input: want NaN")
	}
}

func testEnv(t *testing.T) jobs.Env {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return jobs.Env{
		Engine: mapreduce.Engine{Storage: storage.NewResolver(),
			Runner: &mapreduce.LocalRunner{TempDir: dir, Parallelism: 2, MemoryBudget: 8 << 20, Log: log}, Log: log},
		Crawl: filepath.Join(dir, "crawl"), DBParts: 2,
	}
}

// TestEvalLinkRank: on a partial crawl of a synthetic web, linkrank's
// scores order the fetched pages closer to the true PageRank than OPIC's.
func TestEvalLinkRank(t *testing.T) {
	web, err := simweb.New(simweb.Config{Seed: 5, Hosts: 15, Pages: 900, Hazards: simweb.HazardsNone})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rep, err := EvalLinkRank(context.Background(), testEnv(t), srv, RankConfig{Rounds: 3, TopN: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	if rep.Fetched < 200 || rep.URLs <= rep.Fetched {
		t.Errorf("crawl too small: %+v", rep)
	}
	if !(rep.LinkRank.Fetched > rep.OPIC.Fetched) || !(rep.LinkRank.All > rep.OPIC.All) {
		t.Errorf("linkrank does not correlate better with the true PageRank: %+v", rep)
	}
}
