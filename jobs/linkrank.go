package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"path"
	"slices"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/topic"
)

// The engine jobs of LinkRank, as Registry knows them, and their counters.
const (
	JobLinkRankEdges   = "linkrank-edges"
	JobLinkRankNodes   = "linkrank-nodes"
	JobLinkRankIterate = "linkrank-iterate"
	JobLinkRankScore   = "linkrank-score"
	ctrRankNodes       = "nodes"         // edges: CrawlDB URLs
	ctrRankEdges       = "edges"         // edges: links between two CrawlDB URLs
	ctrRankOutside     = "links_outside" // edges: links to a URL not in the CrawlDB
	ctrRankDangling    = "dangling_mass" // nodes, iterate: rank of nodes without out-weight (fixed point)
	ctrRankDelta       = "delta"         // iterate: L1 change of the rank vector (fixed point)
	ctrRankScored      = "rows_scored"   // score
	ctrRankScoreSum    = "score_sum"     // edges: the CrawlDB's positive scores (units of 2^-20)
)

// rankScale turns rank masses into the integer counters that carry them
// from the reduce tasks back to the driver: 2^50 units per unit of mass,
// so a sum over 10 million nodes is exact to about 1e-8.
const rankScale = 1 << 50

// LinkRank defaults (Nutch's LinkRank uses 10 iterations and damping
// 0.85).
const (
	DefaultLinkRankDamping    = 0.85
	DefaultLinkRankIterations = 50
	DefaultLinkRankTolerance  = 1e-4
)

// The scoring choices (setting scoring.name): OPIC cash added by updatedb,
// or LinkRank's PageRank over the LinkDB.
const (
	ScoringOPIC     = "opic"
	ScoringLinkRank = "linkrank"
)

// ValidateScoring reports a scoring name other than "", "opic" and
// "linkrank".
func ValidateScoring(name string) error {
	if name != "" && name != ScoringOPIC && name != ScoringLinkRank {
		return fmt.Errorf("scoring %q is not opic or linkrank", name)
	}
	return nil
}

// LinkRankOptions configures LinkRank. Zero fields take the defaults.
type LinkRankOptions struct {
	// Damping is the probability that the random surfer follows a link
	// (0 means DefaultLinkRankDamping); otherwise it jumps to a page
	// drawn uniformly.
	Damping float64
	// MaxIterations caps the power iterations (0 means
	// DefaultLinkRankIterations).
	MaxIterations int
	// Tolerance ends the iterations once the L1 change of the rank vector
	// falls below it (0 means DefaultLinkRankTolerance).
	Tolerance float64
	// WarmStart starts the iterations from the CrawlDB's scores,
	// normalized to sum 1 (pages without a positive score at 0), instead
	// of 1/N: the ranks converge to the same vector from any start, in
	// fewer iterations when the scores are an earlier LinkRank's (a crawl
	// that runs linkrank every round). Without positive scores it starts
	// from 1/N.
	WarmStart bool `json:",omitempty"`
	// Topic, if set, makes the ranking IPageRank: a page's vote is split
	// over its out-links in proportion to their relevance RW to the topic
	// (topic.Model.LinkRelevance of each LinkDB row's anchor and target
	// URL) instead of evenly; a page whose links all have RW 0 votes as a
	// dangling page.
	Topic *topic.Model `json:",omitempty"`
}

// Validate reports options out of range.
func (o LinkRankOptions) Validate() error {
	switch {
	case o.Damping < 0 || o.Damping >= 1 || math.IsNaN(o.Damping):
		return fmt.Errorf("linkrank: damping %v not in [0, 1) (0: %v)", o.Damping, DefaultLinkRankDamping)
	case o.MaxIterations < 0:
		return fmt.Errorf("linkrank: negative iteration cap %d", o.MaxIterations)
	case o.Tolerance < 0 || math.IsNaN(o.Tolerance):
		return fmt.Errorf("linkrank: negative tolerance %v", o.Tolerance)
	}
	return nil
}

func (o LinkRankOptions) withDefaults() LinkRankOptions {
	o.Damping = cmp.Or(o.Damping, DefaultLinkRankDamping)
	o.MaxIterations = cmp.Or(o.MaxIterations, DefaultLinkRankIterations)
	o.Tolerance = cmp.Or(o.Tolerance, DefaultLinkRankTolerance)
	return o
}

// LinkRankResult reports a LinkRank run.
type LinkRankResult struct {
	// Nodes is the number of CrawlDB URLs ranked, Edges the links between
	// them; Outside counts LinkDB links to URLs not in the CrawlDB (left
	// out).
	Nodes, Edges, Outside int64
	// Iterations is the number of power iterations run; Delta the L1
	// change of the last one; Converged whether it fell below Tolerance.
	Iterations int
	Delta      float64
	Converged  bool
	Counters   *mapreduce.Counters
	Duration   time.Duration
}

// LinkRank computes PageRank over the crawl's LinkDB as a chain of
// MapReduce jobs (Nutch's LinkRank, on the LinkDB instead of a WebGraph)
// and writes it into the CrawlDB's scores, so that generate's top-N takes
// the highest-ranked pages first.
//
// The graph's nodes are the CrawlDB's URLs and its edges the LinkDB's
// links between two of them (a page linking to another several times is
// one edge). Every node starts at rank 1/N; each iteration gives node v
//
//	r'(v) = (1-d)/N + d * (sum over links u->v of r(u)/outdeg(u) + D/N)
//
// where d is the damping and D the rank of the dangling nodes (no
// outlinks), spread over all nodes so that the ranks keep summing to 1.
// Iterations stop when the L1 change falls below the tolerance, or at the
// cap. A page's score becomes N*r(v), so scores average 1, as seeds'
// scores do. With a Topic the votes are split by RW (IPageRank) and the
// score is N*r(v) times the URL's relevance (the larger of its link
// relevance and its own), the topic crawler's IPageRank combined with RW.
// One job builds the edges, one the adjacency lists, one per
// iteration, one rewrites the CrawlDB (other columns unchanged).
//
// LinkRank holds the CrawlDB's and the LinkDB's locks; a failure or a kill
// leaves both as they were.
func LinkRank(ctx context.Context, env Env, o LinkRankOptions) (res *LinkRankResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("linkrank: %w", err)
	}
	ldURI, ldPath := LinkDBDir(cp.crawl), linkDBPath(cp)
	if ok, err := storage.Exists(cp.fs, linkdb.Current(ldPath)); err != nil || !ok {
		return nil, fmt.Errorf("linkrank: no LinkDB at %s (run invertlinks first): %w", ldURI, cmp.Or(err, errNoLinkDB))
	}
	lock, err := env.lockRecovered(cp, "linkrank", env.log())
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	llock, err := env.lockLinkDB(cp, "linkrank")
	if err != nil {
		return nil, err
	}
	defer env.unlock(llock, &err)
	parts, err := env.dbParts(cp, crawldb.Current(cp.dbPath))
	if err != nil {
		return nil, fmt.Errorf("linkrank: %w", err)
	}
	work := crawldb.NewTempDir(ldPath)
	defer cp.fs.RemoveAll(work)
	workURI := storage.Join(ldURI, path.Base(work))
	r := &rankRun{env: env, o: o, parts: parts, work: workURI,
		crawlDB: storage.Join(cp.dbURI, crawldb.CurrentName), linkDB: storage.Join(ldURI, linkdb.CurrentName)}
	res, err = r.run(ctx, cp)
	if err != nil {
		return nil, fmt.Errorf("linkrank: %w", err)
	}
	res.Duration = time.Since(start)
	env.log().Info("linkrank done", "job", "linkrank", "nodes", res.Nodes, "edges", res.Edges, "iterations", res.Iterations,
		"delta", res.Delta, "converged", res.Converged, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

var errNoLinkDB = errors.New("no linkdb/current")

// rankRun is one LinkRank run's driver state.
type rankRun struct {
	env                   Env
	o                     LinkRankOptions
	parts                 int
	work, crawlDB, linkDB string // URIs
	counters              *mapreduce.Counters
}

func (r *rankRun) job(ctx context.Context, spec mapreduce.Spec) (*mapreduce.Counters, error) {
	jr, err := r.env.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	if r.counters == nil {
		r.counters = jr.Counters
	} else {
		r.counters.Merge(jr.Counters)
	}
	return jr.Counters, nil
}

func (r *rankRun) run(ctx context.Context, cp crawlPaths) (*LinkRankResult, error) {
	edges := rankEdges{CrawlDB: r.crawlDB, LinkDB: r.linkDB, Out: storage.Join(r.work, "edges"), Reduces: r.parts, Topic: r.o.Topic}
	c, err := r.job(ctx, edges)
	if err != nil {
		return nil, err
	}
	res := &LinkRankResult{Nodes: c.Get(JobLinkRankEdges, ctrRankNodes), Edges: c.Get(JobLinkRankEdges, ctrRankEdges),
		Outside: c.Get(JobLinkRankEdges, ctrRankOutside)}
	if res.Nodes == 0 {
		return nil, errors.New("the CrawlDB is empty")
	}
	nodes := rankNodes{Edges: edges.Out, Out: storage.Join(r.work, "rank-0"), N: res.Nodes, Reduces: r.parts}
	if r.o.WarmStart {
		nodes.ScoreSum = float64(c.Get(JobLinkRankEdges, ctrRankScoreSum)) / scoreScale
	}
	if c, err = r.job(ctx, nodes); err != nil {
		return nil, err
	}
	dangling := float64(c.Get(JobLinkRankNodes, ctrRankDangling)) / rankScale
	prev := nodes.Out
	for i := 1; i <= r.o.MaxIterations; i++ {
		it := rankIterate{In: prev, Out: storage.Join(r.work, fmt.Sprintf("rank-%d", i)), N: res.Nodes,
			Damping: r.o.Damping, Dangling: dangling, Reduces: r.parts}
		if c, err = r.job(ctx, it); err != nil {
			return nil, err
		}
		r.removeWork(cp, prev)
		prev = it.Out
		res.Iterations = i
		res.Delta = float64(c.Get(JobLinkRankIterate, ctrRankDelta)) / rankScale
		dangling = float64(c.Get(JobLinkRankIterate, ctrRankDangling)) / rankScale
		r.env.log().Debug("linkrank iteration", "job", "linkrank", "iteration", i, "delta", res.Delta)
		if res.Delta < r.o.Tolerance {
			res.Converged = true
			break
		}
	}
	newDB := crawldb.NewTempDir(cp.dbPath)
	score := rankScore{CrawlDB: r.crawlDB, Ranks: prev, N: res.Nodes, Out: storage.Join(cp.dbURI, path.Base(newDB)), Reduces: r.parts,
		Focused: r.o.Topic != nil}
	jr, err := rewriteDB(ctx, r.env, cp, score, newDB)
	if err != nil {
		return nil, err
	}
	r.counters.Merge(jr.Counters)
	res.Counters = r.counters
	return res, nil
}

// removeWork removes an iteration's input once the next one is written.
func (r *rankRun) removeWork(cp crawlPaths, uri string) {
	fsys, p, err := r.env.resolver().Resolve(uri)
	if err == nil {
		err = fsys.RemoveAll(p)
	}
	if err != nil {
		r.env.log().Warn("linkrank: removing an iteration's input failed (the run's work directory goes at its end)", "err", err)
	}
}

// rankEdge is a link between two CrawlDB URLs with its weight (1, or its
// RW for IPageRank); a row with an empty To marks From as a node (a
// CrawlDB URL).
type rankEdge struct {
	From string  `parquet:"from"`
	To   string  `parquet:"to"`
	W    float64 `parquet:"w"`
}

// rankEdges is LinkRank's first job: the LinkDB's links whose target is a
// CrawlDB URL, and a node mark for each CrawlDB URL, by target.
type rankEdges struct {
	CrawlDB, LinkDB, Out string
	Reduces              int
	// Topic weights each link by its RW (IPageRank); nil weighs all 1.
	Topic *topic.Model `json:",omitempty"`
}

func (rankEdges) JobName() string { return JobLinkRankEdges }

// urlRow is what LinkRank reads of a Datum.
type urlRow struct {
	URL   string  `parquet:"url"`
	Score float32 `parquet:"score"`
}

// scoreScale turns the sum of the CrawlDB's scores (about N) into a
// counter: 2^20 units a score, exact enough for a warm start and far from
// overflowing at 10^9 URLs.
const scoreScale = 1 << 20

func (s rankEdges) Job() (mapreduce.Runnable, error) {
	if s.CrawlDB == "" || s.LinkDB == "" || s.Out == "" {
		return nil, errors.New("linkrank-edges job: needs the CrawlDB, the LinkDB and the output")
	}
	return &mapreduce.Job[rankEdge, rankEdge]{
		Name: JobLinkRankEdges,
		Inputs: []mapreduce.Input[rankEdge]{
			mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d urlRow, emit mapreduce.Emit[rankEdge]) error {
				emit(d.URL, rankEdge{W: float64(d.Score)})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(s.LinkDB, func(t *mapreduce.Task, l linkdb.Inlink, emit mapreduce.Emit[rankEdge]) error {
				if l.From == l.To {
					return nil
				}
				w := 1.0
				if s.Topic != nil {
					w = s.Topic.LinkRelevance(l.Anchor, l.To, "")
				}
				emit(l.To, rankEdge{From: l.From, W: w})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		Reduce:    joinEdges,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[rankEdge]{mapreduce.Write[rankEdge](s.Out)},
	}, nil
}

// joinEdges writes the node mark and the incoming edges of a CrawlDB URL,
// and drops the links to any other URL.
func joinEdges(t *mapreduce.Task, to string, values iter.Seq[rankEdge], out func(rankEdge)) error {
	node, score := false, 0.0
	var from []rankEdge
	for v := range values {
		if v.From == "" {
			node, score = true, v.W
		} else {
			from = append(from, v)
		}
	}
	if !node {
		t.Count(ctrRankOutside, int64(len(from)))
		return nil
	}
	t.Count(ctrRankNodes, 1)
	if score > 0 && !math.IsInf(score, 0) {
		t.Count(ctrRankScoreSum, int64(math.Round(score*scoreScale)))
	} else {
		score = 0
	}
	out(rankEdge{From: to, W: score}) // the node mark carries its score
	slices.SortFunc(from, func(a, b rankEdge) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(b.W, a.W)) })
	for i, f := range from {
		if i == 0 || from[i-1].From != f.From {
			t.Count(ctrRankEdges, 1)
			out(rankEdge{From: f.From, To: to, W: f.W})
		}
	}
	return nil
}

// rankNode is a node of the rank vector: its rank, its out-links and
// their weights (the share of its vote each gets, once normalized).
type rankNode struct {
	URL     string    `parquet:"url"`
	Rank    float64   `parquet:"rank"`
	Out     []string  `parquet:"out,list"`
	Weights []float64 `parquet:"weights,list"`
}

// outWeight is the sum of a node's link weights; 0 makes it dangling.
func (n rankNode) outWeight() float64 {
	s := 0.0
	for _, w := range n.Weights {
		s += w
	}
	return s
}

// rankNodes is LinkRank's second job: the edges by source, into nodes
// with their out-links and the initial rank (1/N, or warm-started). An edge from a URL that
// is not a node (not in the CrawlDB) is dropped.
type rankNodes struct {
	Edges, Out string
	N          int64
	Reduces    int
	// ScoreSum, if positive, warm-starts the ranks: each node's score
	// over it (LinkRankOptions.WarmStart); 0 starts them at 1/N.
	ScoreSum float64 `json:",omitempty"`
}

func (rankNodes) JobName() string { return JobLinkRankNodes }

func (s rankNodes) Job() (mapreduce.Runnable, error) {
	if s.Edges == "" || s.Out == "" || s.N <= 0 {
		return nil, errors.New("linkrank-nodes job: needs the edges, the output and the node count")
	}
	return &mapreduce.Job[rankEdge, rankNode]{
		Name: JobLinkRankNodes,
		Inputs: []mapreduce.Input[rankEdge]{mapreduce.From(s.Edges, func(t *mapreduce.Task, e rankEdge, emit mapreduce.Emit[rankEdge]) error {
			emit(e.From, rankEdge{To: e.To, W: e.W})
			return nil
		}, mapreduce.RequireSuccess())},
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[rankEdge], out func(rankNode)) error {
			node, score := false, 0.0
			var to []rankEdge
			for v := range values {
				if v.To == "" {
					node, score = true, v.W
				} else {
					to = append(to, v)
				}
			}
			if !node {
				return nil
			}
			slices.SortFunc(to, func(a, b rankEdge) int { return cmp.Compare(a.To, b.To) })
			n := rankNode{URL: url, Rank: 1 / float64(s.N)}
			if s.ScoreSum > 0 {
				n.Rank = score / s.ScoreSum
			}
			for _, e := range to {
				n.Out, n.Weights = append(n.Out, e.To), append(n.Weights, e.W)
			}
			if !(n.outWeight() > 0) {
				t.Count(ctrRankDangling, massUnits(n.Rank))
			}
			out(n)
			return nil
		},
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[rankNode]{mapreduce.Write[rankNode](s.Out)},
	}, nil
}

// massUnits converts a rank mass to counter units.
func massUnits(m float64) int64 { return int64(math.Round(m * rankScale)) }

// rankIterate is one power iteration: each node passes its rank evenly
// along its out-links; each node's new rank is the teleport share, the
// damped inflow and its share of the dangling mass.
type rankIterate struct {
	In, Out  string
	N        int64
	Damping  float64
	Dangling float64 // the previous iteration's dangling mass
	Reduces  int
}

func (rankIterate) JobName() string { return JobLinkRankIterate }

// rankValue is a node (Node, with its old rank and out-links) or a share
// of rank flowing along a link.
type rankValue struct {
	Node    bool
	Rank    float64
	Out     []string
	Weights []float64
}

func (s rankIterate) Job() (mapreduce.Runnable, error) {
	if s.In == "" || s.Out == "" || s.N <= 0 || s.Damping < 0 || s.Damping >= 1 {
		return nil, errors.New("linkrank-iterate job: needs the input, the output, the node count and a damping in [0, 1)")
	}
	return &mapreduce.Job[rankValue, rankNode]{
		Name: JobLinkRankIterate,
		Inputs: []mapreduce.Input[rankValue]{mapreduce.From(s.In, func(t *mapreduce.Task, n rankNode, emit mapreduce.Emit[rankValue]) error {
			emit(n.URL, rankValue{Node: true, Rank: n.Rank, Out: n.Out, Weights: n.Weights})
			if sum := n.outWeight(); sum > 0 {
				for i, to := range n.Out {
					if w := n.Weights[i]; w > 0 {
						emit(to, rankValue{Rank: n.Rank * w / sum})
					}
				}
			}
			return nil
		}, mapreduce.RequireSuccess())},
		Reduce:    s.reduce,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[rankNode]{mapreduce.Write[rankNode](s.Out)},
	}, nil
}

func (s rankIterate) reduce(t *mapreduce.Task, url string, values iter.Seq[rankValue], out func(rankNode)) error {
	var node *rankValue
	var shares []float64
	for v := range values {
		if v.Node {
			node = &v
		} else {
			shares = append(shares, v.Rank)
		}
	}
	if node == nil {
		return fmt.Errorf("linkrank: rank flows to %s, which is not a node", url)
	}
	// Sum in a fixed order, so that the result does not depend on the
	// order the shuffle delivers shares in.
	slices.Sort(shares)
	in := 0.0
	for _, x := range shares {
		in += x
	}
	nn := float64(s.N)
	r := (1-s.Damping)/nn + s.Damping*(in+s.Dangling/nn)
	t.Count(ctrRankDelta, massUnits(math.Abs(r-node.Rank)))
	n := rankNode{URL: url, Rank: r, Out: node.Out, Weights: node.Weights}
	if !(n.outWeight() > 0) {
		t.Count(ctrRankDangling, massUnits(r))
	}
	out(n)
	return nil
}

// rankScore is LinkRank's last job: the CrawlDB with each URL's score set
// to N times its rank; for a focused crawl (IPageRank) times the URL's
// relevance, the larger of its link relevance and its own, so that
// generate takes first the URLs that both rank high and are reached by
// relevant links (the topic crawler orders its frontier by IPageRank
// combined with RW).
type rankScore struct {
	CrawlDB, Ranks, Out string
	N                   int64
	Reduces             int
	Focused             bool `json:",omitempty"`
}

func (rankScore) JobName() string { return JobLinkRankScore }

// scoreValue is a CrawlDB row, or (Datum nil) a rank.
type scoreValue struct {
	Datum *crawldb.Datum
	Rank  float64
}

func (s rankScore) Job() (mapreduce.Runnable, error) {
	if s.CrawlDB == "" || s.Ranks == "" || s.Out == "" || s.N <= 0 {
		return nil, errors.New("linkrank-score job: needs the CrawlDB, the ranks, the output and the node count")
	}
	return &mapreduce.Job[scoreValue, crawldb.Datum]{
		Name: JobLinkRankScore,
		Inputs: []mapreduce.Input[scoreValue]{
			mapreduce.From(s.CrawlDB, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[scoreValue]) error {
				emit(d.URL, scoreValue{Datum: &d})
				return nil
			}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
			mapreduce.From(s.Ranks, func(t *mapreduce.Task, n rankNode, emit mapreduce.Emit[scoreValue]) error {
				emit(n.URL, scoreValue{Rank: n.Rank})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[scoreValue], out func(crawldb.Datum)) error {
			var d *crawldb.Datum
			rank, ranked := 0.0, false
			for v := range values {
				if v.Datum != nil {
					d = v.Datum
				} else {
					rank, ranked = v.Rank, true
				}
			}
			if d == nil {
				return fmt.Errorf("linkrank: %s was ranked but is not in the CrawlDB", url)
			}
			if ranked {
				if s.Focused {
					rank *= float64(max(d.LinkRelevance, d.Relevance))
				}
				d.Score = float32(rank * float64(s.N))
				t.Count(ctrRankScored, 1)
			}
			out(*d)
			return nil
		},
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}, nil
}
