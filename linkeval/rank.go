package linkeval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// RankConfig configures EvalLinkRank.
type RankConfig struct {
	// Rounds is the number of crawl rounds (default 4); TopN the fetch
	// list size of each (0: every due URL).
	Rounds int
	TopN   int64
	// LinkRank configures the PageRank run (zero: its defaults).
	LinkRank jobs.LinkRankOptions
	// Start is the simulated time of the first round (default the web's
	// epoch).
	Start time.Time
}

// Correlation is a score's Spearman rank correlation with the synthetic
// web's true PageRank, over every CrawlDB URL that is a page of the web
// (All) and over the fetched ones (Fetched).
type Correlation struct {
	All     float64 `json:"all"`
	Fetched float64 `json:"fetched"`
}

// RankReport is EvalLinkRank's result.
type RankReport struct {
	// Rounds and the CrawlDB's size: URLs that are pages of the web, and
	// how many of them were fetched.
	Rounds  int `json:"rounds"`
	URLs    int `json:"urls"`
	Fetched int `json:"fetched"`
	// OPIC is the correlation of the crawl's OPIC scores, LinkRank that of
	// linkrank's scores over the same CrawlDB.
	OPIC     Correlation `json:"opic"`
	LinkRank Correlation `json:"linkrank"`
	// Iterations and Converged describe the LinkRank run.
	Iterations int  `json:"iterations"`
	Converged  bool `json:"converged"`
}

// EvalLinkRank crawls the synthetic web served by srv with the real jobs
// (env's crawl directory must be new): cfg.Rounds rounds of generate,
// fetch, parse and updatedb with OPIC scoring, then invertlinks over every
// segment and linkrank. It reports how well each score orders the
// crawled pages as the web's true PageRank does (Spearman's rho), which
// is what generate's top-N relies on.
func EvalLinkRank(ctx context.Context, env jobs.Env, srv *simweb.Server, cfg RankConfig) (*RankReport, error) {
	if cfg.Rounds == 0 {
		cfg.Rounds = 4
	}
	if cfg.Rounds < 0 || cfg.TopN < 0 {
		return nil, fmt.Errorf("linkeval: rounds %d and topN %d must not be negative", cfg.Rounds, cfg.TopN)
	}
	if cfg.Start.IsZero() {
		cfg.Start = srv.Web().Config().Epoch
	}
	seeds := filepath.Join(env.Crawl+".seeds", "seeds.txt")
	if err := writeSeeds(seeds, srv.Seeds()); err != nil {
		return nil, err
	}
	sched := jobs.ScheduleOptions{Name: "default"}
	o := jobs.CrawlOptions{
		Seeds: []string{seeds}, Rounds: cfg.Rounds, Now: cfg.Start, RoundInterval: 24 * time.Hour,
		Generate: jobs.GenerateOptions{Schedule: sched, TopN: cfg.TopN},
		Update:   jobs.UpdateOptions{Schedule: sched},
		Fetch: jobs.FetchOptions{Agent: "trawl-eval", NoServerDelay: true, AllowPrivate: true,
			DNSServers: []string{srv.DNSAddr()}},
		SetClock: func(_ context.Context, t time.Time) error { return srv.SetClock(t, 0) },
	}
	if _, err := jobs.Crawl(ctx, env, o); err != nil {
		return nil, fmt.Errorf("linkeval: crawl: %w", err)
	}
	opic, err := readScores(ctx, env)
	if err != nil {
		return nil, err
	}
	segs, err := jobs.ParsedSegments(env, false)
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	if _, err := jobs.InvertLinks(ctx, env, jobs.InvertLinksOptions{Segments: segs}); err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	lr, err := jobs.LinkRank(ctx, env, cfg.LinkRank)
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	ranked, err := readScores(ctx, env)
	if err != nil {
		return nil, err
	}
	truth, err := truePageRank(srv)
	if err != nil {
		return nil, err
	}
	rep := &RankReport{Rounds: cfg.Rounds, Iterations: lr.Iterations, Converged: lr.Converged}
	var all, fetched [3][]float64 // truth, OPIC, LinkRank
	for u, d := range opic {
		pr, ok := truth[u]
		if !ok {
			continue
		}
		row := [3]float64{pr, float64(d.Score), float64(ranked[u].Score)}
		for i := range row {
			all[i] = append(all[i], row[i])
		}
		if d.Status == crawldb.StatusDBFetched || d.Status == crawldb.StatusDBNotModified {
			for i := range row {
				fetched[i] = append(fetched[i], row[i])
			}
		}
	}
	rep.URLs, rep.Fetched = len(all[0]), len(fetched[0])
	if rep.Fetched < 3 {
		return nil, fmt.Errorf("linkeval: only %d pages fetched: nothing to correlate", rep.Fetched)
	}
	rep.OPIC = Correlation{All: Spearman(all[0], all[1]), Fetched: Spearman(fetched[0], fetched[1])}
	rep.LinkRank = Correlation{All: Spearman(all[0], all[2]), Fetched: Spearman(fetched[0], fetched[2])}
	return rep, nil
}

// Markdown writes the report as a table.
func (r *RankReport) Markdown(w io.Writer) error {
	_, err := fmt.Fprintf(w, "Spearman's rho with the true PageRank, after %d rounds (%d URLs in the CrawlDB, %d fetched):\n\n"+
		"| score | all URLs | fetched pages |\n|---|---|---|\n| OPIC | %.3f | %.3f |\n| linkrank | %.3f | %.3f |\n\n"+
		"linkrank: %d iterations, converged %v\n",
		r.Rounds, r.URLs, r.Fetched, r.OPIC.All, r.OPIC.Fetched, r.LinkRank.All, r.LinkRank.Fetched, r.Iterations, r.Converged)
	return err
}

// readScores reads the CrawlDB by URL.
func readScores(ctx context.Context, env jobs.Env) (map[string]crawldb.Datum, error) {
	fsys, p, err := env.Resolver().Resolve(jobs.CrawlDBDir(env.Crawl))
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	r, err := crawldb.Open(fsys, p)
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	out := map[string]crawldb.Datum{}
	for d, err := range r.All(ctx) {
		if err != nil {
			return nil, fmt.Errorf("linkeval: %w", err)
		}
		out[d.URL] = d
	}
	return out, nil
}

// truePageRank maps the normalized URL of every page of srv's web to its
// PageRank.
func truePageRank(srv *simweb.Server) (map[string]float64, error) {
	w := srv.Web()
	out := make(map[string]float64, w.NumPages())
	for id := range w.NumPages() {
		u, err := urlutil.Normalize(srv.URL(id))
		if err != nil {
			continue
		}
		out[u] = w.Page(id).PageRank
	}
	if len(out) == 0 {
		return nil, errors.New("linkeval: the web has no pages")
	}
	return out, nil
}

// writeSeeds writes a seed file.
func writeSeeds(path string, seeds []string) error {
	var b []byte
	for _, s := range seeds {
		b = append(append(b, s...), '\n')
	}
	if err := storage.NewLocal().MkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("linkeval: %w", err)
	}
	if err := storage.WriteFileAtomic(storage.NewLocal(), path, b); err != nil {
		return fmt.Errorf("linkeval: %w", err)
	}
	return nil
}
