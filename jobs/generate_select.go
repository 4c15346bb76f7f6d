package jobs

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/urlutil"
)

// generateSelect is generate's selection job (Nutch's Generator.Selector):
// it reads the CrawlDB and the pending fetch lists, keeps the due
// candidates, applies the pending lists and the per-host limit (and drops
// what cannot be in the topN), and writes the candidates partitioned by
// their group's token (see Generate).
type generateSelect struct {
	// CrawlDB is the URI of the CrawlDB's current directory.
	CrawlDB string
	// Pending are the fetch-list URIs of the pending segments, whose
	// URLs are not selected again.
	Pending []string
	// Out is where the candidates go: the fetch list, or _select.
	Out string
	// Ranks, if set, is where the kept candidates' ranks go, for the topN
	// cut-off.
	Ranks string
	// Reduces is the number of reduce tasks (output parts), at least 1.
	Reduces int
	// GenerateTime is written into every selected row (the segment's
	// time).
	GenerateTime time.Time
	// Filters are the URL filters, with the rules of their regex files.
	Filters filterSpec
	// The GenerateOptions the selection applies (with their defaults).
	TopN           int64
	MaxPerHost     int
	CountMode      string
	PartitionMode  string
	Now            time.Time
	Delay          time.Duration
	Schedule       ScheduleOptions
	MinScore       *float32
	MaxInterval    time.Duration
	RestrictStatus crawldb.Status
	// HostSkip, if set, is the side file of the hosts whose URLs are
	// skipped (generate's HostDb filter, see hostSkipTable).
	HostSkip string
}

// JobName returns JobGenerateSelect.
func (generateSelect) JobName() string { return JobGenerateSelect }

// options returns the GenerateOptions the spec carries.
func (s generateSelect) options() GenerateOptions {
	return GenerateOptions{TopN: s.TopN, MaxPerHost: s.MaxPerHost, CountMode: s.CountMode,
		PartitionMode: s.PartitionMode, SelectReducers: s.Reduces, Now: s.Now,
		Delay: s.Delay, Schedule: s.Schedule, MinScore: s.MinScore, MaxInterval: s.MaxInterval,
		RestrictStatus: s.RestrictStatus}
}

// Job builds the selection job.
func (s generateSelect) Job() (mapreduce.Runnable, error) {
	if err := s.options().Validate(); err != nil {
		return nil, fmt.Errorf("generate-select job: %w", err)
	}
	if s.CrawlDB == "" || s.Out == "" || s.Reduces < 1 {
		return nil, errors.New("generate-select job: no CrawlDB, output or reduce tasks")
	}
	sel, err := newSelector(s)
	if err != nil {
		return nil, fmt.Errorf("generate-select job: %w", err)
	}
	inputs := []mapreduce.Input[crawldb.Datum]{
		mapreduce.From(s.CrawlDB, sel.candidate, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
	}
	for _, p := range s.Pending {
		inputs = append(inputs, mapreduce.From(p, sel.pending, mapreduce.RequireSuccess()))
	}
	outputs := []mapreduce.Output[crawldb.Datum]{mapreduce.Write[crawldb.Datum](s.Out)}
	if s.Ranks != "" {
		outputs = append(outputs, mapreduce.WriteRouted(s.Ranks, func(d crawldb.Datum) (scoreOnly, bool) {
			return scoreOnly{Score: rankOf(sel.ranker, &d, sel.now)}, true
		}))
	}
	job := &mapreduce.Job[crawldb.Datum, crawldb.Datum]{
		Name:      JobGenerateSelect,
		Inputs:    inputs,
		Reduce:    sel.reduce,
		Partition: tokenPartitioner(),
		NumReduce: s.Reduces,
		Outputs:   outputs,
	}
	if s.HostSkip != "" {
		job.MapSetup = (&hostSkipTable{uri: s.HostSkip}).setup
	}
	return job, nil
}

// generateSchedule builds the schedule of o (its zero value: adaptive with
// the defaults), and its Ranker if it ranks candidates.
func generateSchedule(o ScheduleOptions) (crawldb.Schedule, crawldb.Ranker, error) {
	sched, err := o.build()
	if err != nil {
		return nil, nil, err
	}
	ranker, _ := sched.(crawldb.Ranker)
	return sched, ranker, nil
}

// selector is the selection job's functions, built from its spec.
type selector struct {
	part        partitioning
	sched       crawldb.Schedule
	ranker      crawldb.Ranker
	filters     urlutil.Filters
	now         time.Time
	genTime     time.Time
	delay       time.Duration
	minScore    *float32
	maxInterval int32
	restrict    crawldb.Status
	topN        int64
	maxPerHost  int64
	// limit is the most URLs one host can contribute (0: no limit).
	limit int64
	// hostSkip says the job has the HostDb's hosts to skip (in the map
	// tasks' Task.State).
	hostSkip bool
}

func newSelector(s generateSelect) (*selector, error) {
	part, err := newPartitioning(s.PartitionMode, s.CountMode)
	if err != nil {
		return nil, err
	}
	sched, ranker, err := generateSchedule(s.Schedule)
	if err != nil {
		return nil, err
	}
	filters, err := s.Filters.filters()
	if err != nil {
		return nil, err
	}
	sel := &selector{part: part, sched: sched, ranker: ranker, filters: filters, now: s.Now,
		genTime: s.GenerateTime, delay: s.Delay, minScore: s.MinScore,
		maxInterval: intervalSeconds(s.MaxInterval), restrict: s.RestrictStatus,
		topN: s.TopN, maxPerHost: int64(s.MaxPerHost), limit: int64(s.MaxPerHost), hostSkip: s.HostSkip != ""}
	if sel.topN > 0 && (sel.limit == 0 || sel.topN < sel.limit) {
		sel.limit = sel.topN
	}
	return sel, nil
}

// skip returns the counter of the reason a CrawlDB row is not a
// candidate, or "" if it is one.
func (sel *selector) skip(d *crawldb.Datum) string {
	if strings.IndexByte(d.URL, 0) >= 0 {
		return ctrBadGenURL
	}
	if sel.filters != nil {
		if ok, reason := sel.filters.Filter(d.URL); !ok {
			return "filtered_" + reason
		}
	}
	switch {
	case d.Status == crawldb.StatusDBDuplicate:
		return ctrDBDuplicate
	case !sel.sched.ShouldFetch(d, sel.now):
		return ctrNotDue
	case !d.GenerateTime.IsZero() && d.GenerateTime.Add(sel.delay).After(sel.now):
		return ctrGenLocked
	case sel.restrict != 0 && d.Status != sel.restrict:
		return ctrOtherStatus
	case sel.minScore != nil && d.Score < *sel.minScore:
		return ctrBelowScore
	case sel.maxInterval > 0 && d.FetchInterval > sel.maxInterval:
		return ctrOverInterval
	}
	return ""
}

// candidate is the map function of the CrawlDB input: a due candidate is
// keyed by its group and rank (candidateKey), for the engine's sort to
// rank it.
func (sel *selector) candidate(t *mapreduce.Task, d crawldb.Datum, emit mapreduce.Emit[crawldb.Datum]) error {
	if reason := sel.skip(&d); reason != "" {
		t.Count(reason, 1)
		return nil
	}
	if sel.hostSkip {
		if reason := hostSkipCounter(t, d.Host); reason != "" {
			t.Count(reason, 1)
			return nil
		}
	}
	group, ok := sel.part.selectGroup(d.URL, d.Host)
	if !ok {
		t.Count(ctrBadGenURL, 1)
		return nil
	}
	t.Count(ctrDue, 1)
	emit(candidateKey(group, rankOf(sel.ranker, &d, sel.now), d.URL), d)
	return nil
}

// pending is the map function of a pending fetch list: its URLs are keyed
// to sort before their group's candidates (pendingKey).
func (sel *selector) pending(t *mapreduce.Task, r urlHost, emit mapreduce.Emit[crawldb.Datum]) error {
	group, ok := sel.part.selectGroup(r.URL, r.Host)
	if !ok || strings.IndexByte(r.URL, 0) >= 0 {
		return nil
	}
	t.Count(ctrPendingURLs, 1)
	emit(pendingKey(group, r.URL), crawldb.Datum{})
	return nil
}

// selState is one reduce task's state across the keys of a host: Nutch's
// SelectorReducer likewise counts per host across reduce calls, which the
// engine makes in key order, one task at a time.
type selState struct {
	host  string
	taken int64
	held  map[string]struct{}
	// best holds the score keys of the task's best topN outputs so far
	// (worst on top): a candidate worse than all of them cannot be in the
	// topN of all tasks.
	best keyHeap
}

// reduce takes each host's candidates, best first, that no pending list
// holds, up to the host limit and the task's topN.
func (sel *selector) reduce(t *mapreduce.Task, key string, values iter.Seq[crawldb.Datum], out func(crawldb.Datum)) error {
	host, kind, rank, url, err := parseSelectKey(key)
	if err != nil {
		return err
	}
	// The partition's state (Task.State starts nil at each partition).
	st, _ := t.State.(*selState)
	if st == nil {
		st = &selState{held: map[string]struct{}{}}
		t.State = st
	}
	if st.host != host {
		st.host, st.taken = host, 0
		clear(st.held)
	}
	if kind == selPending {
		st.held[url] = struct{}{}
		return nil
	}
	if reason := sel.drop(st, rank, url); reason != "" {
		t.Count(reason, 1)
		return nil
	}
	first := true
	for d := range values {
		if !first {
			t.Count(ctrDuplicateURL, 1) // the same URL twice in the CrawlDB
			continue
		}
		first = false
		d.GenerateTime = sel.genTime
		out(d)
		if st.taken == 0 {
			t.Count(ctrHosts, 1)
		}
		st.taken++
		t.Count(ctrSelected, 1)
	}
	return nil
}

// drop returns the counter of the reason a candidate is dropped, or "" if
// it is taken. It decides from the key alone: the engine decodes a value
// only when it is read, so dropped candidates cost no decoding.
func (sel *selector) drop(st *selState, rank uint32, url string) string {
	switch {
	case hasKey(st.held, url):
		return ctrPendingHeld
	case sel.limit > 0 && st.taken >= sel.limit:
		if sel.maxPerHost > 0 && st.taken >= sel.maxPerHost {
			return ctrOverHost
		}
		return ctrOverTopN
	case sel.topN > 0 && !st.best.admit(rank, sel.topN):
		// This task already selected topN better candidates.
		return ctrOverTopN
	}
	return ""
}

func hasKey(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

// rankOf is a candidate's rank: the schedule's GenerateSortValue if it
// ranks, else the score. It is a function of the datum's stored fields and
// now, so the select and topN jobs compute the same rank.
func rankOf(r crawldb.Ranker, d *crawldb.Datum, now time.Time) float32 {
	if r != nil {
		if v, ok := r.GenerateSortValue(d, now); ok {
			return v
		}
	}
	return d.Score
}

// scoreOnly is the rank of a selected candidate (the score, or the
// schedule's sort value), written beside the candidates for the topN
// cut-off.
type scoreOnly struct {
	Score float32 `parquet:"score"`
}

// keyHeap is a max-heap of score keys (the worst kept candidate on top).
type keyHeap []uint32

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(uint32)) }
func (h *keyHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// admit keeps the n best keys offered: it reports false, keeping nothing,
// when k is worse than n kept keys (ties are admitted).
func (h *keyHeap) admit(k uint32, n int64) bool {
	if int64(len(*h)) < n {
		heap.Push(h, k)
		return true
	}
	if k > (*h)[0] {
		return false
	}
	if k < (*h)[0] {
		(*h)[0] = k
		heap.Fix(h, 0)
	}
	return true
}

// selectCandidates runs generate-select and takes its counters into the
// result.
func (g *generation) selectCandidates(ctx context.Context) error {
	o := g.o
	spec := generateSelect{
		CrawlDB: g.current, Pending: segmentFetchLists(g.cp.segURI, g.pending),
		Out: g.selectOut, Ranks: g.ranksOut, Reduces: g.reduces, GenerateTime: g.genTime, Filters: g.filters,
		TopN: o.TopN, MaxPerHost: o.MaxPerHost, CountMode: o.CountMode, PartitionMode: o.PartitionMode,
		Now: o.Now, Delay: o.Delay, Schedule: o.Schedule, MinScore: o.MinScore,
		MaxInterval: o.MaxInterval, RestrictStatus: o.RestrictStatus, HostSkip: g.hostSkip,
	}
	jr, err := g.env.Run(ctx, spec)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	r := g.res
	r.Counters.Merge(jr.Counters)
	c := func(name string) int64 { return r.Counters.Get(JobGenerateSelect, name) }
	r.Due, r.Pending, r.OverHostLimit, r.OverTopN = c(ctrDue), c(ctrPendingHeld), c(ctrOverHost), c(ctrOverTopN)
	r.DBDuplicates = c(ctrDBDuplicate)
	r.HostDbFailing, r.HostDbDNSFailed = c(ctrHostFailing), c(ctrHostDNSFailed)
	r.Selected, r.Hosts = c(ctrSelected), c(ctrHosts)
	return nil
}
