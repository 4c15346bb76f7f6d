package jobs

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// segmentInput is one segment's inputs to updatedb.
type segmentInput struct {
	Fetch string `json:"fetch"`
	Parse string `json:"parse,omitempty"` // "" if the segment was not parsed
}

// clusterApply is the cluster result a dynamic updatedb applies.
type clusterApply struct {
	// Result is the URI of the clusters/<name> directory; the job reads
	// its assignment/ and samples/.
	Result string `json:"result"`
	// MaxChanges is the young-page threshold the result was clustered
	// with: a page not in the result with at most this many changes gets
	// cluster id -1. AnyChanges says every page was young (no threshold;
	// MaxChanges is then 0).
	MaxChanges int  `json:"maxChanges,omitempty"`
	AnyChanges bool `json:"anyChanges,omitempty"`
}

// updateDB is the spec of updatedb's engine job (UpdateDB): Nutch's
// CrawlDb job, whose reduce is CrawlDbReducer (dbMerger).
type updateDB struct {
	// Current is the URI of crawldb/current (missing: a new CrawlDB); Out
	// the directory the new version is written in, in Parts parts.
	Current string
	Out     string
	Parts   int
	// Segments are the segments' inputs, at least one.
	Segments []segmentInput
	// Now is when URLs new from links are due.
	Now time.Time
	// NoAdditions keeps URLs new to the CrawlDB out (UpdateOptions'.)
	NoAdditions bool
	// RetryMax is db.fetch.retry.max (the driver makes 0 DefaultRetryMax).
	RetryMax int
	// MaxInlinks bounds the links counted per URL; 0 counts them all.
	MaxInlinks int
	// PurgeGone drops db_gone rows.
	PurgeGone bool
	// NoLinkCash leaves scores as they are (LinkRank scoring) instead of
	// adding links' OPIC cash.
	NoLinkCash bool `json:",omitempty"`
	// Filters are the URL filters applied to every input record (the zero
	// value filters nothing).
	Filters filterSpec
	// Schedule is the fetch schedule, resolved (a Name, a Config).
	Schedule ScheduleOptions
	// Clusters is, with the dynamic schedule, the cluster result to apply
	// (nil: none); ClusterPeriods the cluster periods it schedules with.
	Clusters       *clusterApply          `json:",omitempty"`
	ClusterPeriods crawldb.ClusterPeriods `json:",omitempty"`
}

func (updateDB) JobName() string { return JobUpdateDB }

// Job builds the updatedb job: the CrawlDB, each segment's crawl_fetch
// and crawl_parse and the applied cluster result, keyed by URL, reduced by
// dbMerger into the new CrawlDB version.
func (s updateDB) Job() (mapreduce.Runnable, error) {
	if s.Current == "" || s.Out == "" || len(s.Segments) == 0 {
		return nil, errors.New("updatedb job: no CrawlDB, segments or output given")
	}
	merger, err := s.merger()
	if err != nil {
		return nil, err
	}
	filters, err := s.Filters.filters()
	if err != nil {
		return nil, err
	}
	keep := urlKeeper{filters}
	combiners := &sync.Pool{New: func() any { return newLinkCombiner(combineMaxURLs, combineMaxLinks) }}
	inputs := []mapreduce.Input[dbValue]{s.dbInput(keep)}
	for _, seg := range s.Segments {
		inputs = append(inputs, fetchInput(seg.Fetch, keep))
		if seg.Parse != "" {
			inputs = append(inputs, parseInput(seg.Parse, keep, combiners))
		}
	}
	if s.Clusters != nil {
		inputs = append(inputs, clusterInputs(s.Clusters.Result)...)
	}
	return &mapreduce.Job[dbValue, crawldb.Datum]{
		Name:       JobUpdateDB,
		Inputs:     inputs,
		Reduce:     merger.reduce(),
		NumReduce:  s.Parts,
		Outputs:    []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
		MapCleanup: flushLinks(combiners),
	}, nil
}

// merger builds the reducer: its schedule (with the dynamic schedule, over
// the cluster periods) and its settings.
func (s updateDB) merger() (*dbMerger, error) {
	sched, err := s.Schedule.build()
	if err != nil {
		return nil, fmt.Errorf("updatedb job: schedule: %w", err)
	}
	if sched.Name() == "dynamic" {
		if sched, err = crawldb.NewDynamicSchedule(s.Schedule.Config, s.ClusterPeriods); err != nil {
			return nil, fmt.Errorf("updatedb job: cluster periods: %w", err)
		}
	}
	m := &dbMerger{
		sched:       sched,
		now:         s.Now,
		retryMax:    int32(s.RetryMax),
		maxInterval: intervalSeconds(s.Schedule.Config.MaxInterval),
		noAdditions: s.NoAdditions,
		maxInlinks:  s.MaxInlinks,
		noLinkCash:  s.NoLinkCash,
	}
	if c := s.Clusters; c != nil {
		m.applyClusters = true
		m.clusterMaxChanges, m.clusterAnyChanges = c.MaxChanges, c.AnyChanges
	}
	return m, nil
}

// urlKeeper applies the URL filters to a record's URL, counting the
// rejections by reason.
type urlKeeper struct{ filters urlutil.Filters }

func (k urlKeeper) keep(t *mapreduce.Task, url string) bool {
	if k.filters == nil {
		return true
	}
	ok, reason := k.filters.Filter(url)
	if !ok {
		t.Count("filtered_"+reason, 1)
	}
	return ok
}

// dbInput reads the current CrawlDB (if any), dropping db_gone rows with
// PurgeGone and rows the filters reject.
func (s updateDB) dbInput(k urlKeeper) mapreduce.Input[dbValue] {
	return mapreduce.From(s.Current, func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[dbValue]) error {
		if s.PurgeGone && d.Status == crawldb.StatusDBGone {
			t.Count(ctrPurgedGone, 1)
			return nil
		}
		if !k.keep(t, d.URL) {
			return nil
		}
		emit(d.URL, dbValue{Kind: kindOld, Old: &d})
		return nil
	}, mapreduce.Optional(), mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())
}

// fetchInput reads a segment's crawl_fetch: every fetch verdict, and a
// redirect's target as a link without cash, as Nutch's fetcher records
// it. Rows without a verdict on the page are counted and left out.
func fetchInput(dir string, k urlKeeper) mapreduce.Input[dbValue] {
	return mapreduce.From(dir, func(t *mapreduce.Task, f segment.Fetch, emit mapreduce.Emit[dbValue]) error {
		switch f.Status {
		case crawldb.StatusFetchSuccess, crawldb.StatusFetchRetry, crawldb.StatusFetchGone,
			crawldb.StatusFetchRedirTemp, crawldb.StatusFetchRedirPerm, crawldb.StatusFetchNotModified,
			crawldb.StatusFetchRobotsDenied:
		case crawldb.StatusFetchSkipped, crawldb.StatusFetchRefused:
			// Left for a later round, or refused by trawl's own policy:
			// no verdict on the page. Its row stays as it was, so it is
			// due again.
			t.Count(ctrKeptPrefix+f.Status.String(), 1)
			return nil
		default:
			return fmt.Errorf("%s: %s has status %v, not a fetch status", dir, f.URL, f.Status)
		}
		if !k.keep(t, f.URL) {
			return nil
		}
		emit(f.URL, dbValue{Kind: kindFetch, Fetch: &f})
		if (f.Status == crawldb.StatusFetchRedirTemp || f.Status == crawldb.StatusFetchRedirPerm) &&
			f.RedirectURL != "" && f.RedirectURL != f.URL && k.keep(t, f.RedirectURL) {
			t.Count(ctrRedirectLinks, 1)
			emit(f.RedirectURL, dbValue{Kind: kindLink, Links: []dbLink{{From: pageIDOf(f.URL)}}})
		}
		return nil
	}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())
}

// parseInput reads a segment's crawl_parse: parsed pages' signatures with
// the links they follow, and single links. It reads the columns of
// parseRow, not the anchors. A link travels as a dbLink, which carries
// only what the reduce uses of it, packed with the task's other links to
// the same URL (linkCombiner); a signature row loses its URL (the key)
// and links.
//
// A row carries its page's links too, so a crawl_parse row weighs
// parseRowWeight records when the engine orders its map tasks (most work
// first): by rows alone, a segment's crawl_parse would look lighter than a
// CrawlDB split and run last, alone on one core.
func parseInput(dir string, k urlKeeper, combiners *sync.Pool) mapreduce.Input[dbValue] {
	return mapreduce.From(dir, func(t *mapreduce.Task, p parseRow, emit mapreduce.Emit[dbValue]) error {
		links := taskLinks(t, combiners)
		if p.Status == crawldb.StatusLinked {
			if k.keep(t, p.URL) {
				links.add(p.URL, dbLink{From: pageIDOf(p.FromURL), Cash: p.Score, Relevance: p.Relevance, Hops: p.OffTopicHops}, emit)
			}
			return nil
		}
		from := pageIDOf(p.URL)
		for i := range p.Links {
			l := &p.Links[i]
			if k.keep(t, l.URL) {
				links.add(l.URL, dbLink{From: from, Cash: p.Score, Relevance: l.Relevance, Hops: p.OffTopicHops}, emit)
			}
		}
		if !k.keep(t, p.URL) {
			return nil
		}
		// A copy goes into the shuffle, so that only these rows, not the
		// links, are moved to the heap.
		emit(p.URL, dbValue{Kind: kindParse, Parse: p.update()})
		return nil
	}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns(), mapreduce.RowWeight(parseRowWeight))
}

// parseRow is what updatedb reads of a crawl_parse row
// (segment.ParseUpdate): every column but the anchors, which the CrawlDB
// does not keep. A Parquet reader decodes only the columns of the struct
// it fills, so the anchor strings are neither decoded nor allocated.
// TestParseRowColumns keeps the two types in step.
type parseRow struct {
	URL          string           `parquet:"url"`
	Status       crawldb.Status   `parquet:"status"`
	FromURL      string           `parquet:"from_url"`
	Score        float32          `parquet:"score"`
	Signature    []byte           `parquet:"signature,optional"`
	Features     crawldb.Features `parquet:"features"`
	FetchTime    time.Time        `parquet:"fetch_time,optional,timestamp(millisecond)"`
	Relevance    float32          `parquet:"relevance"`
	OffTopic     bool             `parquet:"off_topic"`
	OffTopicHops int32            `parquet:"off_topic_hops"`
	Links        []parseRowLink   `parquet:"links,list"`
}

// parseRowLink is what updatedb reads of a segment.ParseLink.
type parseRowLink struct {
	URL       string  `parquet:"url"`
	Relevance float32 `parquet:"relevance"`
}

// update returns the row as the shuffle carries it: a new
// segment.ParseUpdate without its URL (the key) and links.
func (p *parseRow) update() *segment.ParseUpdate {
	return &segment.ParseUpdate{
		Status:       p.Status,
		FromURL:      p.FromURL,
		Score:        p.Score,
		Signature:    p.Signature,
		Features:     p.Features,
		FetchTime:    p.FetchTime,
		Relevance:    p.Relevance,
		OffTopic:     p.OffTopic,
		OffTopicHops: p.OffTopicHops,
	}
}

// linkCombiner packs the links a map task reads by the URL they point to
// (in-mapper combining): each URL's links leave the task as one value, at
// the task's end (flushLinks) or when the combiner is full, instead of
// one value per link. The reduce adds a URL's links up whatever their
// order and grouping (the inlink heap keeps the most valuable by cash and
// linking page, the cash is summed in that order, the relevance is the
// highest and the hops the fewest), so the new CrawlDB is the same.
//
// The links are held in one slab, chained per URL by index, so that
// holding a URL's links allocates nothing beyond its map entry. When a
// full combiner finds it held few links per URL (links to URLs that few
// pages of the task share, as random links are), it stops combining for
// the rest of its task and emits each link as it comes: packing would
// cost more than it saves.
type linkCombiner struct {
	head map[string]int32 // URL -> its last link in slab (+1; 0 ends a chain)
	slab []chainedLink
	pack []dbLink // scratch: one URL's links as they are emitted
	// direct: the task's links go out one by one (see above).
	direct bool
	// The bounds on the URLs and links held (combineMaxURLs and
	// combineMaxLinks).
	maxURLs, maxLinks int
}

// newLinkCombiner makes an empty combiner that holds at most maxURLs URLs
// and maxLinks links.
func newLinkCombiner(maxURLs, maxLinks int) *linkCombiner {
	return &linkCombiner{head: make(map[string]int32), maxURLs: maxURLs, maxLinks: maxLinks}
}

// chainedLink is a held link and the index+1 of the URL's link before it.
type chainedLink struct {
	link dbLink
	prev int32
}

// Bounds on what a linkCombiner holds before it emits what it has: URLs
// and links. At these sizes it holds about 6 MiB (a URL's map entry and
// a copy of it, and 32 bytes a link).
const (
	combineMaxURLs  = 1 << 15
	combineMaxLinks = 1 << 17
)

// taskLinks returns the map task's link combiner (in Task.State, which the
// engine clears for every map split), taken from the job's pool: a task
// reuses the storage an earlier one grew.
func taskLinks(t *mapreduce.Task, combiners *sync.Pool) *linkCombiner {
	if c, ok := t.State.(*linkCombiner); ok {
		return c
	}
	c := combiners.Get().(*linkCombiner)
	t.State = c
	return c
}

// add holds a link to url, first emitting everything held if the
// combiner is full.
func (c *linkCombiner) add(url string, l dbLink, emit mapreduce.Emit[dbValue]) {
	if c.direct {
		c.emitOne(url, l, emit)
		return
	}
	prev, ok := c.head[url]
	if len(c.slab) >= c.maxLinks || !ok && len(c.head) >= c.maxURLs {
		// Fewer than 1.25 links a URL: packing does not pay.
		c.direct = 4*len(c.slab) < 5*len(c.head)
		c.flush(emit)
		if c.direct {
			c.emitOne(url, l, emit)
			return
		}
		prev, ok = 0, false
	}
	if !ok {
		// The map keeps url past the row it came in, whose memory a
		// Parquet reader may reuse.
		url = strings.Clone(url)
	}
	c.slab = append(c.slab, chainedLink{link: l, prev: prev})
	c.head[url] = int32(len(c.slab))
}

// emitOne emits one link to url as a value of its own.
func (c *linkCombiner) emitOne(url string, l dbLink, emit mapreduce.Emit[dbValue]) {
	c.pack = append(c.pack[:0], l)
	emit(url, dbValue{Kind: kindLink, Links: c.pack})
}

// flush emits the held links, one value per URL, and empties the
// combiner. The value's links are in the reverse of the order they came
// in; the engine encodes a value as it is emitted, so pack is reused.
func (c *linkCombiner) flush(emit mapreduce.Emit[dbValue]) {
	for url, i := range c.head {
		c.pack = c.pack[:0]
		for ; i > 0; i = c.slab[i-1].prev {
			c.pack = append(c.pack, c.slab[i-1].link)
		}
		emit(url, dbValue{Kind: kindLink, Links: c.pack})
	}
	clear(c.head)
	c.slab = c.slab[:0]
}

// flushLinks makes updatedb's MapCleanup: it emits what the task's link
// combiner holds, if the task read links, and gives the combiner back to
// combiners.
func flushLinks(combiners *sync.Pool) func(*mapreduce.Task, mapreduce.Emit[dbValue]) error {
	return func(t *mapreduce.Task, emit mapreduce.Emit[dbValue]) error {
		if c, ok := t.State.(*linkCombiner); ok {
			c.flush(emit)
			c.direct = false
			t.State = nil
			combiners.Put(c)
		}
		return nil
	}
}

// parseRowWeight is the work of a crawl_parse row in updatedb, in
// records, for ordering map tasks: its signature and its links (each read,
// filtered and, packed or not, shuffled), about 14 a page on the synthetic
// web (10 in bench/crawldb).
const parseRowWeight = 12

// clusterInputs read the applied cluster result's assignment/ (labels)
// and samples/ (sample flags).
func clusterInputs(result string) []mapreduce.Input[dbValue] {
	return []mapreduce.Input[dbValue]{
		mapreduce.From(storage.Join(result, dbscan.DirAssignment), func(t *mapreduce.Task, a dbscan.Assignment, emit mapreduce.Emit[dbValue]) error {
			emit(a.Key, dbValue{Kind: kindCluster, Cluster: &clusterValue{Label: a.Label}})
			return nil
		}, mapreduce.RequireSuccess()),
		mapreduce.From(storage.Join(result, dbscan.DirSamples), func(t *mapreduce.Task, s dbscan.Sample, emit mapreduce.Emit[dbValue]) error {
			emit(s.Key, dbValue{Kind: kindCluster, Cluster: &clusterValue{Label: s.Label, Sample: true}})
			return nil
		}, mapreduce.RequireSuccess()),
	}
}

// reduce is the job's reduce: merge, with a scratch space per call taken
// from a pool.
func (m *dbMerger) reduce() mapreduce.ReduceFunc[dbValue, crawldb.Datum] {
	states := sync.Pool{New: func() any { return new(mergeState) }}
	return func(t *mapreduce.Task, url string, values iter.Seq[dbValue], out func(crawldb.Datum)) error {
		st := states.Get().(*mergeState)
		defer states.Put(st)
		d, ok, err := m.merge(url, values, st, t.Count)
		if err != nil {
			return err
		}
		if ok {
			out(d)
		}
		return nil
	}
}
