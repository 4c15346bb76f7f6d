package jobs

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"path"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/storage"
)

// generateTopN is generate's second job: it keeps the selected candidates
// within the topN cut-off and partitions them into the fetch list by the
// partition mode (looking the hosts up, by IP), each host's URLs together
// and best first.
type generateTopN struct {
	// In is the selection (_select) and Out the fetch list.
	In, Out string
	// Parts is the number of fetch-list parts, at least 1.
	Parts int
	// Cut is the topN cut-off (everything: All with the largest Key).
	Cut cutoff
	// The GenerateOptions the job applies (with their defaults): the
	// ranking's schedule and now, the partitioning and, by IP, its
	// resolver (GenerateOptions.resolverConfig).
	CountMode     string
	PartitionMode string
	Now           time.Time
	Schedule      ScheduleOptions
	DNS           resolver.Config
}

// JobName returns JobGenerateTopN.
func (generateTopN) JobName() string { return JobGenerateTopN }

// options returns the GenerateOptions the spec carries.
func (s generateTopN) options() GenerateOptions {
	return GenerateOptions{CountMode: s.CountMode, PartitionMode: s.PartitionMode,
		NumFetchers: s.Parts, Now: s.Now, Schedule: s.Schedule, DNS: s.DNS}
}

// Job builds the topN job.
func (s generateTopN) Job() (mapreduce.Runnable, error) {
	if err := s.options().Validate(); err != nil {
		return nil, fmt.Errorf("generate-topn job: %w", err)
	}
	if s.In == "" || s.Out == "" || s.Parts < 1 {
		return nil, errors.New("generate-topn job: no input, output or fetch-list parts")
	}
	part, err := newPartitioning(s.PartitionMode, s.CountMode)
	if err != nil {
		return nil, fmt.Errorf("generate-topn job: %w", err)
	}
	_, ranker, err := generateSchedule(s.Schedule)
	if err != nil {
		return nil, fmt.Errorf("generate-topn job: %w", err)
	}
	// keep reports whether a candidate is within the cut-off, and its rank.
	keep := func(t *mapreduce.Task, d *crawldb.Datum) (float32, bool) {
		rank := rankOf(ranker, d, s.Now)
		if !s.Cut.in(scoreKey(rank), d.URL) {
			t.Count(ctrOverTopN, 1)
			return 0, false
		}
		return rank, true
	}
	job := &mapreduce.Job[crawldb.Datum, crawldb.Datum]{
		Name:      JobGenerateTopN,
		Reduce:    topNReduce,
		Partition: tokenPartitioner(),
		NumReduce: s.Parts,
		Outputs:   []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)},
	}
	if part.mode == PartitionIP {
		ip := newIPPartitioner(part, ipPartConfig{dns: s.DNS}, keep)
		job.Inputs = []mapreduce.Input[crawldb.Datum]{mapreduce.From(s.In, ip.mapRow,
			mapreduce.WholeFiles(), mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())}
		job.MapSetup, job.MapCleanup = ip.setup, ip.cleanup
		return job, nil
	}
	job.Inputs = []mapreduce.Input[crawldb.Datum]{mapreduce.From(s.In, byNameMap(part, keep),
		mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns())}
	return job, nil
}

// byNameMap is generate-topn's map function for the partition modes that
// need no lookup: it keys the candidates that keep keeps by their group.
func byNameMap(part partitioning, keep func(*mapreduce.Task, *crawldb.Datum) (float32, bool)) mapreduce.MapFunc[crawldb.Datum, crawldb.Datum] {
	return func(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
		rank, ok := keep(t, &d)
		if !ok {
			return nil
		}
		group := part.nameGroup(countKey(d.URL, d.Host, part.countDomain), countKey(d.URL, d.Host, false))
		emit(candidateKey(group, rank, d.URL), d)
		return nil
	}
}

// topNReduce writes a group's candidates, counting the hosts.
func topNReduce(t *mapreduce.Task, key string, values iter.Seq[crawldb.Datum], out func(crawldb.Datum)) error {
	host, _, _, _, err := parseSelectKey(key)
	if err != nil {
		return err
	}
	// The partition's current host (Task.State starts nil at each
	// partition).
	cur, _ := t.State.(*string)
	if cur == nil {
		cur = new(string)
		t.State = cur
	}
	if *cur != host {
		*cur = host
		t.Count(ctrHosts, 1)
	}
	for d := range values {
		t.Count(ctrSelected, 1)
		out(d)
	}
	return nil
}

// cutoff is the last (worst) candidate of the topN: a candidate is in the
// topN if its score key is lower than Key, or equal with a URL not after
// URL (All: every candidate with an equal key).
type cutoff struct {
	Key uint32
	URL string `json:",omitempty"`
	All bool   `json:",omitempty"`
}

// everything is the cut-off that keeps every candidate.
var everything = cutoff{Key: math.MaxUint32, All: true}

// in reports whether a candidate is within the cut-off.
func (c cutoff) in(key uint32, url string) bool {
	return key < c.Key || (key == c.Key && (c.All || url <= c.URL))
}

// rankRow is the projection of a candidate that rankOf needs (the
// CrawlDB's columns), read only to break ties at the topN cut-off.
type rankRow struct {
	URL           string         `parquet:"url"`
	Status        crawldb.Status `parquet:"status"`
	FetchTime     time.Time      `parquet:"fetch_time,optional,timestamp(millisecond)"`
	FetchInterval int32          `parquet:"fetch_interval"`
	Score         float32        `parquet:"score"`
}

// urlHeap is a max-heap of URLs.
type urlHeap []string

func (h urlHeap) Len() int           { return len(h) }
func (h urlHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h urlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *urlHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *urlHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// readRows calls f for every row of the part files of dir.
func readRows[T any](fsys storage.FS, dir string, f func(T)) error {
	files, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		return err
	}
	for _, p := range files {
		file, err := fsys.Open(p)
		if err != nil {
			return err
		}
		r, err := parquetio.Open[T](file, p)
		if err != nil {
			return err
		}
		for row, err := range r.All() {
			if err != nil {
				r.Close()
				return err
			}
			f(row)
		}
		if err := r.Close(); err != nil {
			return err
		}
	}
	return nil
}

// topNCut finds the n-th best of the candidates, whose ranks are in
// ranksDir (more than n of them) and rows in candDir: a pass over the
// ranks keeps the n best rank keys (memory: n keys); a second pass counts
// the candidates tied at the n-th key; only if not all of them fit, a pass
// over the candidates (their rank again from rank) keeps the smallest tied
// URLs that fit.
func topNCut(fsys storage.FS, ranksDir, candDir string, n int64, rank func(d *crawldb.Datum) float32) (cutoff, error) {
	h := make(keyHeap, 0, min(n, 1<<20))
	err := readRows(fsys, ranksDir, func(r scoreOnly) { h.admit(scoreKey(r.Score), n) })
	if err != nil {
		return cutoff{}, err
	}
	if int64(len(h)) < n {
		return cutoff{}, fmt.Errorf("%s holds %d candidates, not more than %d", ranksDir, len(h), n)
	}
	cut := cutoff{Key: h[0]}
	var better, tied int64
	for _, k := range h {
		if k < cut.Key {
			better++
		}
	}
	need := n - better // how many of the tied candidates fit
	if err := readRows(fsys, ranksDir, func(r scoreOnly) {
		if scoreKey(r.Score) == cut.Key {
			tied++
		}
	}); err != nil {
		return cutoff{}, err
	}
	if tied <= need {
		cut.All = true
		return cut, nil
	}
	cut.URL, err = smallestTied(fsys, candDir, cut.Key, need, rank)
	return cut, err
}

// smallestTied returns the need-th smallest URL of the candidates in
// candDir whose rank key is key.
func smallestTied(fsys storage.FS, candDir string, key uint32, need int64, rank func(d *crawldb.Datum) float32) (string, error) {
	ties := make(urlHeap, 0, min(need, 1<<16))
	err := readRows(fsys, candDir, func(r rankRow) {
		d := crawldb.Datum{URL: r.URL, Status: r.Status, FetchTime: r.FetchTime, FetchInterval: r.FetchInterval, Score: r.Score}
		if scoreKey(rank(&d)) != key {
			return
		}
		if int64(len(ties)) < need {
			heap.Push(&ties, r.URL)
		} else if r.URL < ties[0] {
			ties[0] = r.URL
			heap.Fix(&ties, 0)
		}
	})
	if err != nil {
		return "", err
	}
	if len(ties) == 0 {
		return "", fmt.Errorf("%s changed while it was read", candDir)
	}
	return ties[0], nil
}

// topNCutoff is the cut-off of the run's topN: everything when the
// selection kept no more than TopN candidates.
func (g *generation) topNCutoff() (cutoff, error) {
	if g.o.TopN <= 0 || g.res.Selected <= g.o.TopN {
		return everything, nil
	}
	// As the select job ranked: its schedule and now.
	_, ranker, err := generateSchedule(g.o.Schedule)
	if err != nil {
		return cutoff{}, err
	}
	rank := func(d *crawldb.Datum) float32 { return rankOf(ranker, d, g.o.Now) }
	cut, err := topNCut(g.cp.fs, path.Join(g.segPath, ranksDir), path.Join(g.segPath, selectDir), g.o.TopN, rank)
	if err != nil {
		return cutoff{}, fmt.Errorf("topN: %w", err)
	}
	return cut, nil
}

// cutTopN runs generate-topn over the selection: the fetch list is the
// candidates within the topN cut-off, partitioned by the partition mode.
func (g *generation) cutTopN(ctx context.Context) error {
	cut, err := g.topNCutoff()
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	o := g.o
	spec := generateTopN{In: g.selectOut, Out: g.res.FetchList, Parts: g.parts, Cut: cut,
		CountMode: o.CountMode, PartitionMode: o.PartitionMode, Now: o.Now, Schedule: o.Schedule}
	var rows int64
	if o.PartitionMode == PartitionIP {
		// Each task reads a whole part: together, every row (checked
		// below).
		if _, rows, err = fetchListParts(g.cp.fs, path.Join(g.segPath, selectDir), g.selectOut); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		spec.DNS = o.resolverConfig()
	}
	jr, err := g.env.Run(ctx, spec)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	r := g.res
	r.Counters.Merge(jr.Counters)
	c := func(name string) int64 { return r.Counters.Get(JobGenerateTopN, name) }
	if got := c(ctrPartRows); o.PartitionMode == PartitionIP && got != rows {
		return fmt.Errorf("generate: the IP partitioning read %d of the %d candidates in %s (did they change during the job?)",
			got, rows, g.selectOut)
	}
	r.OverTopN += c(ctrOverTopN)
	r.Unresolved = c(ctrPartUnresolved)
	r.Selected, r.Hosts = c(ctrSelected), c(ctrHosts)
	return nil
}
