package linkeval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/topic"
	"github.com/trawl/trawl/urlutil"
)

// The strategies EvalFocus compares, in the order it reports them.
const (
	StrategyBreadthFirst    = "breadth-first"    // Nutch without scoring: the URLs found first
	StrategyOPIC            = "opic"             // OPIC cash (Nutch's default scoring)
	StrategyPageRank        = "pagerank"         // PageRank of the discovered graph (linkrank)
	StrategyBestFirst       = "best-first"       // the best link relevance RW, focus filters on
	StrategyIPageRank       = "ipagerank"        // IPageRank, focus filters on (the paper's crawler)
	StrategyIPageRankTunnel = "ipagerank-tunnel" // IPageRank through off-topic pages (tunnelling)
)

// Strategies lists every strategy name.
func Strategies() []string {
	return []string{StrategyBreadthFirst, StrategyOPIC, StrategyPageRank, StrategyBestFirst, StrategyIPageRank, StrategyIPageRankTunnel}
}

// FocusConfig configures EvalFocus. Zero fields take the defaults.
type FocusConfig struct {
	// Web is the topical synthetic web (Web.Topics >= 2; default 200
	// hosts, 20,000 pages, 6 topics, seed 1, no hazards).
	Web simweb.Config
	// Topic is the topic crawled (default 0); Seeds the number of seed
	// home pages (simweb's TopicSeeds: half on the topic; default 20);
	// Samples the number of sample texts the topic is learnt from
	// (default 5).
	Topic, Seeds, Samples int
	// Batch is the fetch list size of a round (generate's topN; default
	// 100): each strategy fetches its Batch best frontier URLs a round.
	Batch int
	// Checkpoints are the fetched-page counts reported (default 500,
	// 1000, 1500 and 4000, the paper's); the crawl stops at the last.
	Checkpoints []int
	// Focus is the focused strategies' parse options (Topic is set by
	// EvalFocus); TunnelHops the off-topic hops of ipagerank-tunnel
	// (default 2).
	Focus      jobs.FocusOptions
	TunnelHops int
	// Strategies lists the strategies to run (default all).
	Strategies []string
}

// Point is a strategy's measures after Pages fetched pages: the harvest
// rate (share of the fetched pages on the topic) and the recall, or
// resource-discovery rate (share of the web's on-topic pages fetched).
type Point struct {
	Pages   int     `json:"pages"`
	Harvest float64 `json:"harvest"`
	Recall  float64 `json:"recall"`
}

// StrategyResult is one strategy's curve.
type StrategyResult struct {
	Name string  `json:"name"`
	At   []Point `json:"at"`
	// Curve is the measures after every round, for the plot.
	Curve []Point `json:"-"`
}

// FocusReport is EvalFocus' result.
type FocusReport struct {
	Topic        string           `json:"topic"`
	Pages        int              `json:"pages"`
	OnTopicPages int              `json:"on_topic_pages"`
	Batch        int              `json:"batch"`
	Strategies   []StrategyResult `json:"strategies"`
	Seconds      float64          `json:"seconds"`
}

// EvalFocus crawls a topical synthetic web with each strategy at equal
// page budgets, in rounds of Batch pages as generate and fetch would, and
// reports the focused-crawling paper's two measures at each checkpoint.
// It simulates the fetches (a page's body is simweb's rendering, no HTTP)
// but runs the real parts that decide: the topic learnt by package topic
// from simweb's sample texts, trawl's HTML parser for titles, text and
// outlinks with their anchors, the focused parse's rules (jobs.FocusOptions:
// link threshold, page threshold, off-topic hops) and PageRank with
// LinkRank's formula (for IPageRank, votes split by RW).
func EvalFocus(ctx context.Context, cfg FocusConfig) (*FocusReport, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	web, err := simweb.New(cfg.Web)
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	if cfg.Topic < 0 || cfg.Topic >= web.NumTopics() {
		return nil, fmt.Errorf("linkeval: topic %d not in [0, %d)", cfg.Topic, web.NumTopics())
	}
	m, err := topic.Learn(web.TopicSample(cfg.Topic, cfg.Samples), topic.Options{})
	if err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	cfg.Focus.Topic = m
	if err := cfg.Focus.Validate(); err != nil {
		return nil, fmt.Errorf("linkeval: %w", err)
	}
	g := newGraphCache(web)
	rep := &FocusReport{Topic: web.TopicName(cfg.Topic), Pages: web.NumPages(), OnTopicPages: web.TopicPages(cfg.Topic), Batch: cfg.Batch}
	var seeds []int
	for _, u := range web.TopicSeeds(cfg.Topic, cfg.Seeds, simweb.Addressing{}) {
		if id, ok := g.id(u); ok {
			seeds = append(seeds, id)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("linkeval: the web gives no seeds for the topic")
	}
	for _, name := range cfg.Strategies {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &focusCrawl{cfg: cfg, web: web, g: g, name: name, focus: cfg.Focus}
		if name == StrategyIPageRankTunnel {
			c.focus.MaxOffTopicHops = cfg.TunnelHops
		}
		rep.Strategies = append(rep.Strategies, c.run(seeds))
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func (cfg FocusConfig) withDefaults() (FocusConfig, error) {
	if cfg.Web.Topics == 0 {
		cfg.Web.Topics = 6
	}
	if cfg.Web.Hosts == 0 {
		cfg.Web.Hosts = 200
	}
	if cfg.Web.Pages == 0 {
		cfg.Web.Pages = 20000
	}
	if cfg.Web.Seed == 0 {
		cfg.Web.Seed = 1
	}
	cfg.Seeds = cmp.Or(cfg.Seeds, 20)
	cfg.Samples = cmp.Or(cfg.Samples, 5)
	cfg.Batch = cmp.Or(cfg.Batch, 100)
	cfg.TunnelHops = cmp.Or(cfg.TunnelHops, 2)
	if len(cfg.Checkpoints) == 0 {
		cfg.Checkpoints = []int{500, 1000, 1500, 4000}
	}
	if len(cfg.Strategies) == 0 {
		cfg.Strategies = Strategies()
	}
	for _, s := range cfg.Strategies {
		if !slices.Contains(Strategies(), s) {
			return cfg, fmt.Errorf("linkeval: unknown strategy %q (known: %v)", s, Strategies())
		}
	}
	if !slices.IsSorted(cfg.Checkpoints) || cfg.Checkpoints[0] <= 0 || cfg.Batch < 0 || cfg.Seeds < 0 || cfg.Samples < 0 {
		return cfg, errors.New("linkeval: checkpoints must be positive and ascending; batch, seeds and samples positive")
	}
	return cfg, nil
}

// page is what a fetch of a URL gives the simulation: its title and text
// (HTML pages), its outlinks' page ids and anchors, and its topic.
type page struct {
	title, text string
	links       []link
	topic       int
}

type link struct {
	to     int
	anchor string
	url    string
}

// graphCache renders and parses each page once for all strategies.
type graphCache struct {
	web   *simweb.Web
	ids   map[string]int
	pages map[int]*page
	p     *parser.Parser
}

func newGraphCache(web *simweb.Web) *graphCache {
	g := &graphCache{web: web, ids: make(map[string]int, web.NumPages()), pages: map[int]*page{},
		p: parser.New(parser.Options{MaxOutlinks: -1})}
	for id := range web.NumPages() {
		if u, err := urlutil.Normalize(web.URL(id, simweb.Addressing{})); err == nil {
			g.ids[u] = id
		}
	}
	return g
}

func (g *graphCache) id(u string) (int, bool) {
	n, err := urlutil.Normalize(u)
	if err != nil {
		return 0, false
	}
	id, ok := g.ids[n]
	return id, ok
}

// fetch returns the page id: a content page parsed, a redirect as a link
// to its target, anything else without links.
func (g *graphCache) fetch(id int) *page {
	if p, ok := g.pages[id]; ok {
		return p
	}
	info := g.web.Page(id)
	p := &page{topic: info.Topic}
	g.pages[id] = p
	switch {
	case info.Kind == simweb.KindRedirect && info.Target >= 0:
		p.links = []link{{to: info.Target, url: g.web.URL(info.Target, simweb.Addressing{})}}
	case info.Kind == simweb.KindHome || info.Kind == simweb.KindDirectory || info.Kind == simweb.KindLeaf:
		if info.Status != 200 {
			break
		}
		body, err := g.web.Body(id, 0, simweb.Addressing{})
		if err != nil {
			break
		}
		u := g.web.URL(id, simweb.Addressing{})
		res, err := g.p.Parse(segment.Content{URL: u, ContentType: "text/html", Body: body})
		if err != nil {
			break
		}
		p.title, p.text = res.Title, res.Text
		if res.NoFollow {
			break
		}
		for _, l := range res.Outlinks {
			if to, ok := g.id(l.URL); ok && to != id {
				p.links = append(p.links, link{to: to, anchor: l.Anchor, url: l.URL})
			}
		}
	}
	return p
}

// focusCrawl is one strategy's crawl.
type focusCrawl struct {
	cfg   FocusConfig
	web   *simweb.Web
	g     *graphCache
	name  string
	focus jobs.FocusOptions

	seen     map[int]*frontierURL // discovered URLs
	order    int
	fetched  int
	onTopic  int
	graph    map[int][]edge // fetched page -> followed links
	prevRank map[int]float64
}

// frontierURL is a discovered URL: when it was found, OPIC cash, the best
// RW of its links, the fewest off-topic hops of its paths, whether it was
// fetched.
type frontierURL struct {
	id      int
	seq     int
	cash    float64
	rw      float64
	hops    int32
	seed    bool
	fetched bool
}

type edge struct {
	to int
	w  float64
}

func (c *focusCrawl) focused() bool {
	return c.name == StrategyBestFirst || c.name == StrategyIPageRank || c.name == StrategyIPageRankTunnel
}

func (c *focusCrawl) run(seeds []int) StrategyResult {
	c.seen, c.graph = map[int]*frontierURL{}, map[int][]edge{}
	for _, s := range seeds {
		c.discover(s, 1, 1, 0).seed = true
	}
	res := StrategyResult{Name: c.name}
	target := c.cfg.Checkpoints[len(c.cfg.Checkpoints)-1]
	next := 0
	for c.fetched < target {
		batch := c.select_(min(c.cfg.Batch, target-c.fetched))
		if len(batch) == 0 {
			break
		}
		for _, u := range batch {
			c.fetch(u)
			for next < len(c.cfg.Checkpoints) && c.fetched == c.cfg.Checkpoints[next] {
				res.At = append(res.At, c.point())
				next++
			}
		}
		res.Curve = append(res.Curve, c.point())
	}
	for ; next < len(c.cfg.Checkpoints); next++ {
		p := c.point()
		p.Pages = c.cfg.Checkpoints[next] // the frontier ran dry before
		res.At = append(res.At, p)
	}
	return res
}

func (c *focusCrawl) point() Point {
	p := Point{Pages: c.fetched}
	if c.fetched > 0 {
		p.Harvest = float64(c.onTopic) / float64(c.fetched)
	}
	if n := c.web.TopicPages(c.cfg.Topic); n > 0 {
		p.Recall = float64(c.onTopic) / float64(n)
	}
	return p
}

// discover adds a URL to the frontier, or updates what is known of it.
func (c *focusCrawl) discover(id int, cash, rw float64, hops int32) *frontierURL {
	u, ok := c.seen[id]
	if !ok {
		c.order++
		u = &frontierURL{id: id, seq: c.order, hops: hops}
		c.seen[id] = u
	}
	u.cash += cash
	u.rw = max(u.rw, rw)
	u.hops = min(u.hops, hops)
	return u
}

// fetch fetches u and follows its links under the strategy's rules.
func (c *focusCrawl) fetch(u *frontierURL) {
	u.fetched = true
	c.fetched++
	p := c.g.fetch(u.id)
	if p.topic == c.cfg.Topic {
		c.onTopic++
	}
	type follow struct {
		l  link
		rw float64
	}
	var links []follow
	var hops int32
	switch {
	case !c.focused():
		for _, l := range p.links {
			links = append(links, follow{l, 1})
		}
	case p.title == "" && p.text == "":
		// A redirect: its target inherits the redirect's path.
		for _, l := range p.links {
			links = append(links, follow{l, u.rw})
		}
		hops = u.hops
	default:
		r := c.focus.RatePage(p.title, p.text, u.hops, u.seed)
		hops = r.Hops
		if !r.Follow {
			break
		}
		for _, l := range p.links {
			if rw, ok := c.focus.FollowLink(l.anchor, l.url, p.title); ok {
				links = append(links, follow{l, float64(rw)})
			}
		}
	}
	cash := 0.0
	if len(links) > 0 {
		cash = u.cash / float64(len(links))
	}
	u.cash = 0
	for _, f := range links {
		c.discover(f.l.to, cash, f.rw, hops)
		c.graph[u.id] = append(c.graph[u.id], edge{f.l.to, f.rw})
	}
}

// select_ returns the n best unfetched URLs by the strategy's priority.
func (c *focusCrawl) select_(n int) []*frontierURL {
	var cand []*frontierURL
	for _, u := range c.seen {
		if !u.fetched {
			cand = append(cand, u)
		}
	}
	var prio func(u *frontierURL) float64
	switch c.name {
	case StrategyBreadthFirst:
		prio = func(u *frontierURL) float64 { return -float64(u.seq) }
	case StrategyOPIC:
		prio = func(u *frontierURL) float64 { return u.cash }
	case StrategyBestFirst:
		prio = func(u *frontierURL) float64 { return u.rw }
	case StrategyPageRank:
		rank := c.pageRank()
		prio = func(u *frontierURL) float64 { return rank[u.id] }
	default: // IPageRank times the best RW, as linkrank's focused score
		rank := c.pageRank()
		prio = func(u *frontierURL) float64 { return rank[u.id] * u.rw }
	}
	slices.SortFunc(cand, func(a, b *frontierURL) int {
		return cmp.Or(cmp.Compare(prio(b), prio(a)), cmp.Compare(a.seq, b.seq))
	})
	return cand[:min(n, len(cand))]
}

// pageRank computes LinkRank's PageRank over the discovered graph (every
// discovered URL a node, the fetched pages' followed links its edges,
// weighted by RW for IPageRank), warm-started from the previous round's.
func (c *focusCrawl) pageRank() map[int]float64 {
	nodes := make([]int, 0, len(c.seen))
	for id := range c.seen {
		nodes = append(nodes, id)
	}
	slices.Sort(nodes)
	idx := make(map[int]int, len(nodes))
	for i, id := range nodes {
		idx[id] = i
	}
	n := float64(len(nodes))
	r := make([]float64, len(nodes))
	sum := 0.0
	for i, id := range nodes {
		r[i] = 1 / n
		if p, ok := c.prevRank[id]; ok {
			r[i] = p
		}
		sum += r[i]
	}
	for i := range r {
		r[i] /= sum
	}
	weighted := c.name != StrategyPageRank
	type out struct {
		to  []int
		w   []float64
		sum float64
	}
	outs := make([]out, len(nodes))
	for from, es := range c.graph {
		o := &outs[idx[from]]
		for _, e := range es {
			w := 1.0
			if weighted {
				w = e.w
			}
			if w > 0 {
				o.to, o.w, o.sum = append(o.to, idx[e.to]), append(o.w, w), o.sum+w
			}
		}
	}
	const d = jobs.DefaultLinkRankDamping
	next := make([]float64, len(nodes))
	for range jobs.DefaultLinkRankIterations {
		clear(next)
		dangling := 0.0
		for i, o := range outs {
			if o.sum == 0 {
				dangling += r[i]
				continue
			}
			for k, j := range o.to {
				next[j] += r[i] * o.w[k] / o.sum
			}
		}
		delta := 0.0
		for i := range next {
			v := (1-d)/n + d*(next[i]+dangling/n)
			delta += math.Abs(v - r[i])
			next[i] = v
		}
		r, next = next, r
		if delta < jobs.DefaultLinkRankTolerance {
			break
		}
	}
	rank := make(map[int]float64, len(nodes))
	for i, id := range nodes {
		rank[id] = r[i]
	}
	c.prevRank = rank
	return rank
}
