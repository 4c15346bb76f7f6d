package jobs

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/storage"
)

// powerIteration is PageRank computed in memory, the reference for
// LinkRank: nodes are the CrawlDB's URLs, edges the LinkDB's links
// between them.
func powerIteration(urls []string, links []linkdb.Inlink, d float64, iterations int) map[string]float64 {
	idx := map[string]int{}
	for i, u := range urls {
		idx[u] = i
	}
	out := make([][]int, len(urls))
	for _, l := range links {
		f, okf := idx[l.From]
		to, okt := idx[l.To]
		if okf && okt && f != to {
			out[f] = append(out[f], to)
		}
	}
	n := float64(len(urls))
	r := make([]float64, len(urls))
	for i := range r {
		r[i] = 1 / n
	}
	for range iterations {
		next := make([]float64, len(urls))
		dangling := 0.0
		for i, o := range out {
			if len(o) == 0 {
				dangling += r[i]
				continue
			}
			for _, j := range o {
				next[j] += r[i] / float64(len(o))
			}
		}
		for i := range next {
			next[i] = (1-d)/n + d*(next[i]+dangling/n)
		}
		r = next
	}
	m := map[string]float64{}
	for i, u := range urls {
		m[u] = r[i]
	}
	return m
}

func TestLinkRank(t *testing.T) {
	env := testEnv(t)
	segs := crawledSegments(t, env, 2)
	ctx := context.Background()
	if _, err := LinkRank(ctx, env, LinkRankOptions{}); err == nil || !strings.Contains(err.Error(), "invertlinks first") {
		t.Errorf("without a LinkDB: %v", err)
	}
	if _, err := InvertLinks(ctx, env, InvertLinksOptions{Segments: segs}); err != nil {
		t.Fatal(err)
	}
	before := readDB(t, env)
	res, err := LinkRank(ctx, env, LinkRankOptions{MaxIterations: 12, Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 12 || res.Converged || res.Nodes != int64(len(before)) || res.Edges == 0 {
		t.Errorf("result %+v, %d CrawlDB rows", res, len(before))
	}
	links, _ := readLinkDB(t, env)
	var urls []string
	for u := range before {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	want := powerIteration(urls, links, DefaultLinkRankDamping, 12)
	after := readDB(t, env)
	sum := 0.0
	for u, d := range after {
		sum += float64(d.Score)
		w := want[u] * float64(len(urls))
		if math.Abs(float64(d.Score)-w) > 1e-4*math.Max(1, w) {
			t.Errorf("%s: score %v, want %v", u, d.Score, w)
		}
		b := before[u]
		b.Score = d.Score
		if !reflect.DeepEqual(canonical(b), canonical(d)) {
			t.Errorf("%s: linkrank changed more than the score:\n%+v\n%+v", u, before[u], d)
		}
	}
	if math.Abs(sum-float64(len(urls))) > 1e-3*float64(len(urls)) {
		t.Errorf("scores sum to %v, want %d", sum, len(urls))
	}

	// Until convergence: fewer iterations than the cap.
	res, err = LinkRank(ctx, env, LinkRankOptions{Tolerance: 1e-3})
	if err != nil || !res.Converged || res.Iterations >= DefaultLinkRankIterations || res.Delta >= 1e-3 {
		t.Errorf("converging run: %+v, %v", res, err)
	}
	cold := res.Iterations
	t.Logf("cold start: %d iterations", cold)

	// Warm-started from those scores, the same ranks in far fewer
	// iterations.
	converged := readDB(t, env)
	res, err = LinkRank(ctx, env, LinkRankOptions{Tolerance: 1e-3, WarmStart: true})
	if err != nil || !res.Converged || res.Iterations >= cold/2 {
		t.Errorf("warm start: %+v (cold: %d iterations), %v", res, cold, err)
	}
	t.Logf("warm start: %d iterations", res.Iterations)
	for u, d := range readDB(t, env) {
		if w := converged[u].Score; math.Abs(float64(d.Score-w)) > 0.02*math.Max(1, float64(w)) {
			t.Errorf("%s: warm-started score %v, cold %v", u, d.Score, w)
		}
	}
	if ok, _ := storage.Exists(storage.NewLocal(), LinkDBDir(env.Crawl)+"/"+"current"); !ok {
		t.Error("the LinkDB is gone")
	}
}

func TestLinkRankSpecs(t *testing.T) {
	if err := (LinkRankOptions{Damping: 1}).Validate(); err == nil {
		t.Error("damping 1 accepted")
	}
	if err := (LinkRankOptions{MaxIterations: -1}).Validate(); err == nil {
		t.Error("negative iterations accepted")
	}
	checkRoundTrip(t, rankEdges{CrawlDB: "c", LinkDB: "l", Out: "o", Reduces: 2})
	checkRoundTrip(t, rankNodes{Edges: "e", Out: "o", N: 7, Reduces: 2, ScoreSum: 6.5})
	checkRoundTrip(t, rankIterate{In: "i", Out: "o", N: 7, Damping: 0.85, Dangling: 0.125, Reduces: 2})
	checkRoundTrip(t, rankScore{CrawlDB: "c", Ranks: "r", Out: "o", N: 7, Reduces: 2})
}

// TestCrawlLinkRankScoring: with linkrank scoring a crawl inverts links
// and runs LinkRank after every round's updatedb, and updatedb adds no
// OPIC cash: the scores are LinkRank's, as a LinkRank run on the final
// LinkDB gives them.
func TestCrawlLinkRankScoring(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	o := testCrawlOptions(srv, seeds, 2, time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))
	o.Update.Scoring = ScoringLinkRank
	o.LinkRank = LinkRankOptions{Tolerance: 1e-9}
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rounds {
		if !slices.Equal(r.Stages[len(r.Stages)-2:], []string{"invertlinks", "linkrank"}) || r.LinkRank == nil || r.LinkRank.Nodes == 0 {
			t.Errorf("round %d: stages %v, linkrank %+v", r.Round, r.Stages, r.LinkRank)
		}
	}
	crawled := readDB(t, env)
	if _, err := LinkRank(context.Background(), env, o.LinkRank); err != nil {
		t.Fatal(err)
	}
	for u, d := range readDB(t, env) {
		if math.Abs(float64(d.Score-crawled[u].Score)) > 1e-4*math.Max(1, float64(d.Score)) {
			t.Errorf("%s: the crawl left score %v, LinkRank gives %v", u, crawled[u].Score, d.Score)
		}
	}
	o.Update.Scoring = "pagerank"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "opic or linkrank") {
		t.Errorf("unknown scoring: %v", err)
	}
}
