package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// JobMergeSegs is the engine job of MergeSegments, as Registry knows it.
const JobMergeSegs = "mergesegs"

// mergingPrefix starts the name of the directory under the output
// directory that MergeSegments builds its segments in before it renames
// them into place. Segment scans skip names that are not segment names.
const mergingPrefix = "_merging-"

// The counters of the mergesegs job (group "mergesegs"). Per part P:
// rows_in_P rows read, rows_out_P rows written, rows_older_P rows left out
// because a newer segment holds the URL, rows_filtered_P rows left out by
// the URL filters. MergeSegments checks in = out + older + filtered for
// every part before it publishes anything. links_filtered counts the links
// the filters drop from the crawl_parse rows read (the rows stay).
const (
	ctrMergeLinksFiltered = "links_filtered"
	ctrMergeURLs          = "urls"
	ctrMergeInPrefix      = "rows_in_"
	ctrMergeOutPrefix     = "rows_out_"
	ctrMergeOlder         = "rows_older_"
	ctrMergeFiltered      = "rows_filtered_"
	ctrMergeSlicePrefix   = "urls_slice_"
)

// MergeSegmentsOptions configures MergeSegments.
type MergeSegmentsOptions struct {
	// OutDir is the directory (URI) the merged segment or segments are
	// created in, as new segment directories named by the time of the
	// merge; it may be the crawl's segments directory. It is created if
	// missing.
	OutDir string
	// Segments are the segment directories (URIs) to merge, at least one.
	Segments []string
	// Slice, if > 0, is the most URLs one output segment holds: the
	// merge then writes as many segments as it needs (Nutch's -slice).
	Slice int64
	// Filters, if set, drop every record of a URL they reject, and the
	// links to URLs they reject (Nutch's -filter).
	Filters URLFilterOptions
	// Now names the output segments; zero means time.Now().
	Now time.Time
}

// Validate checks the options as MergeSegments does before it locks
// anything.
func (o MergeSegmentsOptions) Validate() error {
	if strings.TrimRight(o.OutDir, "/") == "" {
		return errors.New("mergesegs: no output directory given")
	}
	if len(o.Segments) == 0 {
		return errors.New("mergesegs: no segment given")
	}
	if err := checkSegmentNames(o.Segments); err != nil {
		return fmt.Errorf("mergesegs: %w", err)
	}
	if o.Slice < 0 {
		return fmt.Errorf("mergesegs: slice must be > 0 (or 0: one segment), not %d", o.Slice)
	}
	return nil
}

// MergeSegmentsResult reports a MergeSegments run.
type MergeSegmentsResult struct {
	// Segments are the URIs of the new segments, in name order, and
	// URLs how many URLs each holds.
	Segments []string
	URLs     []int64
	// Parts are the parts merged (those every input segment holds);
	// Skipped the parts some input lacks, left out as Nutch does.
	Parts, Skipped []string
	// RowsIn, RowsOut, RowsOlder and RowsFiltered count rows by part:
	// read, written, left out because a newer segment holds the URL, and
	// dropped by the filters. RowsIn = RowsOut + RowsOlder + RowsFiltered.
	RowsIn, RowsOut, RowsOlder, RowsFiltered map[string]int64
	// LinksFiltered counts the links the filters dropped from the
	// crawl_parse rows of parsed pages read (the rows stay, without
	// them), older rows' included.
	LinksFiltered int64
	// Merged says the inputs were all merged into a CrawlDB, so the new
	// segments carry segment.MergedMarker too; Inverted the same for
	// segment.InvertedMarker.
	Merged, Inverted bool
	// Counters are the job's counters (nil when a rerun found the merge
	// finished by a killed run: see MergeSegments).
	Counters *mapreduce.Counters `json:"-"`
	Duration time.Duration       `json:"-"`
}

// MergeSegments merges segments into one new segment, or several of at
// most Slice URLs each (Nutch's SegmentMerger, `nutch mergesegs`).
//
// One engine job reads every part of every input segment, keyed by the
// page's URL (crawl_parse links by the page they were found on, so that a
// page's outlinks travel with its parse), and for each URL writes the rows
// of one source segment only, so that a page's crawl_fetch, content and
// parse always belong together: the newest segment (by name, the time it
// was generated; the order given breaks a tie of names) among those whose
// crawl_fetch holds a fetch of the page that Nutch's SegmentMerger keeps
// (success, redirect, gone, robots denied: not a retry, a 304, or a
// skipped or refused URL), or the newest segment holding the URL at all
// if none does. So a 304 or a failed retry in a newer segment does not
// replace the content and parse an older one holds, as in Nutch's
// SegmentMerger. Every row of the winning segment for the URL is written,
// none of the others'.
//
// The rows are partitioned by host over the reduce tasks, as generate
// partitions a fetch list. A part is merged only if every input holds it
// published (as Nutch does); the others are listed in Skipped. The new segments are named by
// Now (yyyyMMddHHmmss, one second apart with slices), carry
// segment.MergedMarker if every input was merged into a CrawlDB (none
// was: no marker; some were: an error, since the merged segment could be
// neither merged nor left out), and segment.InvertedMarker if every input
// is inverted.
//
// The inputs are locked (segment.Lock) and only read. The job writes
// into OutDir/_merging-XXXX, which no job takes for a segment (OutDir is
// locked meanwhile); MergeSegments checks that every row read was written
// or left out for a reason, writes a journal of the new segments there,
// then renames each into OutDir, where it appears whole. A failure or a
// kill before the journal leaves no new segment in OutDir, and the next
// merge into OutDir removes the staging directory. A kill after it (with
// slices, between two renames) is finished by the next merge into OutDir,
// which renames the remaining segments into place; if that merge is the
// same request (segments, slice, filters), it returns the finished
// merge's result instead of merging again, so a rerun after a kill never
// makes a second copy.
func MergeSegments(ctx context.Context, env Env, o MergeSegmentsOptions) (res *MergeSegmentsResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	log := env.log().With("job", JobMergeSegs)
	outURI := strings.TrimRight(o.OutDir, "/")
	outFS, outPath, err := env.resolver().Resolve(outURI)
	if err != nil {
		return nil, fmt.Errorf("mergesegs: output %s: %w", outURI, err)
	}
	existed, err := storage.Exists(outFS, outPath)
	if err != nil {
		return nil, fmt.Errorf("mergesegs: output %s: %w", outURI, err)
	}
	if err := outFS.MkdirAll(outPath); err != nil {
		return nil, fmt.Errorf("mergesegs: create %s: %w", outURI, err)
	}
	defer func() {
		if err != nil && !existed {
			removeIfEmpty(outFS, outPath)
		}
	}()
	outLock, err := crawldb.LockWith(outFS, outPath, JobMergeSegs, env.ForceLock, crawldb.LockOptions{
		MaxAge: env.LockMaxAge, NoMaxAge: env.NoLockMaxAge, Logger: env.log(), What: "segments directory"})
	if err != nil {
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	defer env.unlock(outLock, &err)
	request, err := mergeRequest(o)
	if err != nil {
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	finished, err := recoverMerges(outFS, outPath, outURI, request, log)
	if err != nil {
		return nil, err
	}
	if finished != nil {
		finished.Duration = time.Since(start)
		return finished, nil
	}
	ins, release, err := lockSegmentsForMerge(env, o.Segments)
	if err != nil {
		return nil, err
	}
	defer release()
	plan, err := planMerge(env, ins, o, outURI, outFS, outPath, log)
	if err != nil {
		return nil, err
	}
	plan.request = request
	jr, err := env.Run(ctx, plan.spec)
	if err != nil {
		_ = outFS.RemoveAll(plan.stage)
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	res = &MergeSegmentsResult{Parts: plan.spec.Parts, Skipped: plan.skipped, Merged: plan.merged != nil,
		Inverted: plan.inverted, Counters: jr.Counters}
	if err := res.count(jr.Counters); err != nil {
		_ = outFS.RemoveAll(plan.stage)
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	if err := publishMerge(env, plan, res, outFS, outPath, outURI, log); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	log.Info("mergesegs done", "inputs", len(ins), "segments", len(res.Segments), "urls", res.URLs,
		"duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// count reads the job's counters into r and checks that every row read
// was written, left out as older, or filtered.
func (r *MergeSegmentsResult) count(c *mapreduce.Counters) error {
	r.RowsIn, r.RowsOut, r.RowsOlder, r.RowsFiltered = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	r.LinksFiltered = c.Get(JobMergeSegs, ctrMergeLinksFiltered)
	for _, p := range r.Parts {
		r.RowsIn[p] = c.Get(JobMergeSegs, ctrMergeInPrefix+p)
		r.RowsOut[p] = c.Get(JobMergeSegs, ctrMergeOutPrefix+p)
		r.RowsOlder[p] = c.Get(JobMergeSegs, ctrMergeOlder+p)
		r.RowsFiltered[p] = c.Get(JobMergeSegs, ctrMergeFiltered+p)
		if r.RowsIn[p] != r.RowsOut[p]+r.RowsOlder[p]+r.RowsFiltered[p] {
			return fmt.Errorf("%s: %d rows read but %d written, %d older and %d filtered: nothing published",
				p, r.RowsIn[p], r.RowsOut[p], r.RowsOlder[p], r.RowsFiltered[p])
		}
	}
	return nil
}

// mergeInput is an input segment, resolved, locked and inspected.
type mergeInput struct {
	uri  string
	fs   storage.FS
	path string
	st   segment.Status
}

// lockSegmentsForMerge resolves and locks the input segments and reads
// their states; release unlocks them.
func lockSegmentsForMerge(env Env, uris []string) (ins []mergeInput, release func(), err error) {
	var held []*crawldb.LockHandle
	release = func() {
		for _, h := range slices.Backward(held) {
			if err := h.Unlock(); err != nil {
				env.log().Error("releasing a segment lock failed", "err", err)
			}
		}
	}
	for _, u := range uris {
		u = strings.TrimRight(u, "/")
		fsys, p, err := env.resolver().Resolve(u)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("mergesegs: segment %s: %w", u, err)
		}
		h, err := segment.Lock(fsys, p, JobMergeSegs, env.segmentLockOptions())
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("mergesegs: %w", err)
		}
		held = append(held, h)
		st, err := segment.Inspect(fsys, p)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("mergesegs: %w", err)
		}
		if len(st.Published) == 0 {
			release()
			return nil, nil, fmt.Errorf("mergesegs: segment %s holds no published part (state %s)", u, st.State)
		}
		ins = append(ins, mergeInput{uri: u, fs: fsys, path: p, st: st})
	}
	return ins, release, nil
}

// mergePlan is a planned merge: the job's spec, the staging directory
// (a path in the output's file system) and the new segments' names.
type mergePlan struct {
	request  string
	spec     mergeSegs
	stage    string
	names    []string
	skipped  []string
	merged   *segment.MergeRecord
	inverted bool
}

// planMerge decides the parts to merge, the inputs' order, the markers,
// the slices and the new segments' names.
func planMerge(env Env, ins []mergeInput, o MergeSegmentsOptions, outURI string, outFS storage.FS, outPath string, log *slog.Logger) (*mergePlan, error) {
	plan := &mergePlan{}
	for _, p := range segment.RecordDirs() {
		common := true
		for _, in := range ins {
			common = common && in.st.Has(p)
		}
		if common {
			plan.spec.Parts = append(plan.spec.Parts, p)
		} else {
			plan.skipped = append(plan.skipped, p)
		}
	}
	if len(plan.spec.Parts) == 0 {
		return nil, errors.New("mergesegs: the segments have no published part in common")
	}
	if len(plan.skipped) > 0 {
		log.Warn("parts some segments lack are left out of the merge", "parts", plan.skipped)
	}
	// Newest last: by name, then as given.
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(path.Base(ins[a].path), path.Base(ins[b].path)) })
	var mergedIn, notMerged []string
	inverted := true
	var newest *segment.MergeRecord
	for _, i := range order {
		in := ins[i]
		plan.spec.Inputs = append(plan.spec.Inputs, in.uri)
		if in.st.State == segment.StateMerged {
			mergedIn = append(mergedIn, in.uri)
			if rec, err := readMergeRecord(in.fs, in.path); err == nil {
				newest = &rec
			} else {
				return nil, fmt.Errorf("mergesegs: %w", err)
			}
		} else {
			notMerged = append(notMerged, in.uri)
		}
		ok, err := segment.IsInverted(in.fs, in.path)
		if err != nil {
			return nil, fmt.Errorf("mergesegs: %w", err)
		}
		inverted = inverted && ok
	}
	if len(mergedIn) > 0 && len(notMerged) > 0 {
		return nil, fmt.Errorf("mergesegs: %s are merged into a CrawlDB and %s are not: updatedb the others first, or merge them apart",
			strings.Join(mergedIn, ", "), strings.Join(notMerged, ", "))
	}
	if len(mergedIn) > 0 {
		plan.merged = newest
	}
	plan.inverted = inverted
	filters, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	plan.spec.Filters = filters
	nslices := 1
	if o.Slice > 0 {
		bound, err := urlBound(ins, plan.spec.Parts)
		if err != nil {
			return nil, fmt.Errorf("mergesegs: %w", err)
		}
		nslices = int(max(1, (bound+o.Slice-1)/o.Slice))
		plan.spec.Slice = o.Slice
		plan.spec.Reduces = 1
	} else {
		n := 1
		for _, in := range ins {
			c, err := countParts(in.fs, path.Join(in.path, plan.spec.Parts[0]))
			if err != nil {
				return nil, fmt.Errorf("mergesegs: %w", err)
			}
			n = max(n, c)
		}
		plan.spec.Reduces = min(n, 16)
	}
	names, err := newSegmentNames(outFS, outPath, o.Now, nslices)
	if err != nil {
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	plan.names = names
	stageName := fmt.Sprintf("%s%016x", mergingPrefix, rand.Uint64())
	plan.stage = path.Join(outPath, stageName)
	for _, n := range names {
		plan.spec.Outs = append(plan.spec.Outs, storage.Join(outURI, stageName, n))
	}
	return plan, nil
}

// urlBound bounds the URLs of the inputs from their part files' footers:
// every URL of a segment has a crawl_generate or a crawl_fetch row (a
// page is fetched from the fetch list or a redirect the fetcher
// followed), so their rows bound it when both are merged; otherwise every
// merged part's rows but crawl_parse's (whose pages have parse_data rows).
func urlBound(ins []mergeInput, parts []string) (int64, error) {
	use := []string{segment.DirGenerate, segment.DirFetch}
	if !slices.Contains(parts, segment.DirGenerate) || !slices.Contains(parts, segment.DirFetch) {
		use = slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return p == segment.DirCrawlParse })
	}
	var n int64
	for _, in := range ins {
		for _, p := range use {
			c, err := segment.CountRecords(in.fs, in.path, p)
			if err != nil {
				return 0, fmt.Errorf("segment %s: %s: %w", in.uri, p, err)
			}
			n += c
		}
	}
	return n, nil
}

// newSegmentNames returns n segment names one second apart ending at now,
// none of them taken in the directory dir.
func newSegmentNames(fsys storage.FS, dir string, now time.Time, n int) ([]string, error) {
	end := now.UTC().Truncate(time.Second)
	for range 1000 {
		names := make([]string, n)
		free := true
		for i := range n {
			names[i] = end.Add(time.Duration(i-n+1) * time.Second).Format(segment.NameLayout)
			ok, err := storage.Exists(fsys, path.Join(dir, names[i]))
			if err != nil {
				return nil, err
			}
			free = free && !ok
		}
		if free {
			return names, nil
		}
		end = end.Add(-time.Duration(n) * time.Second)
	}
	return nil, fmt.Errorf("no free segment names in %s", dir)
}

// readMergeRecord reads a segment's MergedMarker.
func readMergeRecord(fsys storage.FS, dir string) (segment.MergeRecord, error) {
	var rec segment.MergeRecord
	data, err := storage.ReadFile(fsys, path.Join(dir, segment.MergedMarker))
	if err != nil {
		return rec, fmt.Errorf("segment %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("segment %s: %s: %w", dir, segment.MergedMarker, err)
	}
	return rec, nil
}

// publishJournal is the file a merge writes into its staging directory
// once its segments are whole and checked, just before it renames them
// into the output directory (a mergeJournal as JSON).
const publishJournal = "_publishing"

// mergeJournal records a merge being published: its request
// (mergeRequest), the new segments' names and its result.
type mergeJournal struct {
	Request string              `json:"request"`
	Names   []string            `json:"names"`
	Result  MergeSegmentsResult `json:"result"`
}

// mergeRequest identifies what a merge was asked to do: its segments,
// slice size and filters.
func mergeRequest(o MergeSegmentsOptions) (string, error) {
	segs := make([]string, len(o.Segments))
	for i, s := range o.Segments {
		segs[i] = strings.TrimRight(s, "/")
	}
	slices.Sort(segs)
	b, err := json.Marshal(struct {
		Segments []string
		Slice    int64
		Filters  URLFilterOptions
	}{segs, o.Slice, o.Filters})
	return string(b), err
}

// recoverMerges deals with what killed merges into dir left (the caller
// holds dir's lock): a staging directory without a journal is removed; one
// with a journal is published (its segments whole and checked), its
// remaining segments renamed into dir, then removed. If such a merge was
// the merge request asks for, its result is returned: a rerun of a merge
// killed while publishing finishes it rather than merging again.
func recoverMerges(fsys storage.FS, dir, dirURI, request string, log *slog.Logger) (*MergeSegmentsResult, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("mergesegs: %w", err)
	}
	var finished *MergeSegmentsResult
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), mergingPrefix) {
			continue
		}
		stage := path.Join(dir, e.Name())
		data, err := storage.ReadFile(fsys, path.Join(stage, publishJournal))
		switch {
		case isNotExist(err):
			log.Info("removing what a killed merge left", "path", stage)
		case err != nil:
			return nil, fmt.Errorf("mergesegs: %w", err)
		default:
			var j mergeJournal
			if err := json.Unmarshal(data, &j); err != nil {
				return nil, fmt.Errorf("mergesegs: %s: %w", path.Join(stage, publishJournal), err)
			}
			moved := 0
			for _, name := range j.Names {
				if ok, err := storage.Exists(fsys, path.Join(stage, name)); err != nil {
					return nil, fmt.Errorf("mergesegs: %w", err)
				} else if !ok {
					continue // renamed before the kill
				}
				if err := fsys.Rename(path.Join(stage, name), path.Join(dir, name)); err != nil {
					return nil, fmt.Errorf("mergesegs: finish the publishing of a killed merge: %w", err)
				}
				moved++
			}
			log.Warn("finished publishing the segments of a killed merge", "segments", j.Names, "renamed_now", moved)
			if moved > 0 && j.Request == request {
				r := j.Result
				for _, name := range j.Names {
					r.Segments = append(r.Segments, storage.Join(dirURI, name))
				}
				finished = &r
			}
		}
		if err := fsys.RemoveAll(stage); err != nil {
			return nil, fmt.Errorf("mergesegs: remove %s: %w", stage, err)
		}
	}
	return finished, nil
}

// publishMerge drops the empty slices, writes the markers into the new
// segments and renames them into the output directory.
func publishMerge(env Env, plan *mergePlan, res *MergeSegmentsResult, outFS storage.FS, outPath, outURI string, log *slog.Logger) error {
	fail := func(err error) error {
		_ = outFS.RemoveAll(plan.stage)
		return fmt.Errorf("mergesegs: %w", err)
	}
	var keep []string
	for i, name := range plan.names {
		n := res.Counters.Get(JobMergeSegs, sliceCounter(i))
		dir := path.Join(plan.stage, name)
		if n == 0 && len(plan.names) > 1 {
			if err := outFS.RemoveAll(dir); err != nil {
				return fail(err)
			}
			continue
		}
		if plan.merged != nil {
			if err := segment.MarkMerged(outFS, dir, *plan.merged); err != nil {
				return fail(err)
			}
		}
		if plan.inverted {
			if err := segment.MarkInverted(outFS, dir, "", time.Now().UTC()); err != nil {
				return fail(err)
			}
		}
		keep = append(keep, name)
		res.URLs = append(res.URLs, n)
	}
	j, err := json.Marshal(mergeJournal{Request: plan.request, Names: keep, Result: *res})
	if err != nil {
		return fail(err)
	}
	if err := storage.WriteFileAtomic(outFS, path.Join(plan.stage, publishJournal), j); err != nil {
		return fail(err)
	}
	killpoint.Reached(JobMergeSegs, "before-publish")
	for i, name := range keep {
		if i > 0 {
			killpoint.Reached(JobMergeSegs, "renamed-1")
		}
		if err := outFS.Rename(path.Join(plan.stage, name), path.Join(outPath, name)); err != nil {
			if i == 0 {
				return fail(err)
			}
			return fmt.Errorf("mergesegs: published %d of %d segments, then: %w", i, len(keep), err)
		}
		res.Segments = append(res.Segments, storage.Join(outURI, name))
	}
	if err := outFS.RemoveAll(plan.stage); err != nil {
		log.Warn("removing the merge's staging directory failed", "path", plan.stage, "err", err)
	}
	return nil
}

func sliceCounter(i int) string { return fmt.Sprintf("%s%05d", ctrMergeSlicePrefix, i) }

// segValue is mergesegs' shuffle value: one row of one part of one input
// segment. Seg is the segment's rank (its index in mergeSegs.Inputs,
// newest last); exactly one of the row pointers is set.
type segValue struct {
	Seg      int
	Generate *segment.Generate
	Fetch    *segment.Fetch
	Content  *segment.Content
	Data     *segment.ParseData
	Text     *segment.ParseText
	Parse    *segment.ParseUpdate
}

// part names the part a value's row belongs to.
func (v *segValue) part() string {
	switch {
	case v.Generate != nil:
		return segment.DirGenerate
	case v.Fetch != nil:
		return segment.DirFetch
	case v.Content != nil:
		return segment.DirContent
	case v.Data != nil:
		return segment.DirParseData
	case v.Text != nil:
		return segment.DirParseText
	}
	return segment.DirCrawlParse
}

// segRecord is a reduce output row with the slice it goes to.
type segRecord struct {
	slice int
	v     segValue
}

// mergeSegs is MergeSegments' engine job.
type mergeSegs struct {
	// Inputs are the input segments (URIs), oldest first.
	Inputs []string
	// Parts are the parts merged, in segment.RecordDirs order.
	Parts []string
	// Outs are the new segments (URIs), one per slice.
	Outs []string
	// Slice is the most URLs per output segment (0: one segment).
	Slice int64 `json:",omitempty"`
	// Reduces is the number of reduce tasks (1 with slices).
	Reduces int
	// Filters are the URL filters (the zero value filters nothing).
	Filters filterSpec
}

func (mergeSegs) JobName() string { return JobMergeSegs }

// Job builds the merge: every merged part of every input, by page URL,
// reduced to the rows of one segment per URL.
func (s mergeSegs) Job() (mapreduce.Runnable, error) {
	if len(s.Inputs) == 0 || len(s.Parts) == 0 || len(s.Outs) == 0 || s.Reduces < 1 {
		return nil, errors.New("mergesegs job: needs inputs, parts, outputs and reduces")
	}
	if s.Slice == 0 && len(s.Outs) != 1 || s.Slice > 0 && s.Reduces != 1 {
		return nil, errors.New("mergesegs job: one output without slices, one reduce with them")
	}
	filters, err := s.Filters.filters()
	if err != nil {
		return nil, err
	}
	keep := urlKeeper{filters}
	var ins []mapreduce.Input[segValue]
	for i, seg := range s.Inputs {
		for _, p := range s.Parts {
			ins = append(ins, mergeSegInput(storage.Join(seg, p), p, i, keep))
		}
	}
	var outs []mapreduce.Output[segRecord]
	for i, out := range s.Outs {
		for _, p := range s.Parts {
			outs = append(outs, mergeSegOutput(storage.Join(out, p), p, i))
		}
	}
	return &mapreduce.Job[segValue, segRecord]{
		Name:      JobMergeSegs,
		Inputs:    ins,
		Reduce:    s.reduce,
		NumReduce: s.Reduces,
		// By host, as generate partitions a fetch list, so that a
		// merged fetch list fetches each host in one task.
		Partition: func(key string, n int) int { return mapreduce.HashPartitioner(urlutil.Host(key), n) },
		Outputs:   outs,
	}, nil
}

// mergeSegInput reads one part of input segment seg, keyed by page URL.
func mergeSegInput(dir, part string, seg int, k urlKeeper) mapreduce.Input[segValue] {
	in := ctrMergeInPrefix + part
	filtered := ctrMergeFiltered + part
	emit := func(t *mapreduce.Task, url string, v segValue, e mapreduce.Emit[segValue]) {
		t.Count(in, 1)
		if !k.keep(t, url) {
			t.Count(filtered, 1)
			return
		}
		v.Seg = seg
		e(url, v)
	}
	opts := []mapreduce.InputOption{mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()}
	switch part {
	case segment.DirGenerate:
		return mapreduce.From(dir, func(t *mapreduce.Task, r segment.Generate, e mapreduce.Emit[segValue]) error {
			emit(t, r.URL, segValue{Generate: &r}, e)
			return nil
		}, opts...)
	case segment.DirFetch:
		return mapreduce.From(dir, func(t *mapreduce.Task, r segment.Fetch, e mapreduce.Emit[segValue]) error {
			emit(t, r.URL, segValue{Fetch: &r}, e)
			return nil
		}, opts...)
	case segment.DirContent:
		return mapreduce.From(dir, func(t *mapreduce.Task, r segment.Content, e mapreduce.Emit[segValue]) error {
			emit(t, r.URL, segValue{Content: &r}, e)
			return nil
		}, opts...)
	case segment.DirParseData:
		return mapreduce.From(dir, func(t *mapreduce.Task, r segment.ParseData, e mapreduce.Emit[segValue]) error {
			emit(t, r.URL, segValue{Data: &r}, e)
			return nil
		}, opts...)
	case segment.DirParseText:
		return mapreduce.From(dir, func(t *mapreduce.Task, r segment.ParseText, e mapreduce.Emit[segValue]) error {
			emit(t, r.URL, segValue{Text: &r}, e)
			return nil
		}, opts...)
	}
	return mapreduce.From(dir, func(t *mapreduce.Task, r segment.ParseUpdate, e mapreduce.Emit[segValue]) error {
		if r.Status == crawldb.StatusLinked && !k.keep(t, r.URL) {
			// A link to a URL the filters reject.
			t.Count(in, 1)
			t.Count(filtered, 1)
			return nil
		}
		if k.filters != nil && len(r.Links) > 0 {
			r.Links = slices.DeleteFunc(r.Links, func(l segment.ParseLink) bool {
				if !k.keep(t, l.URL) {
					t.Count(ctrMergeLinksFiltered, 1)
					return true
				}
				return false
			})
		}
		emit(t, parsePage(r), segValue{Parse: &r}, e)
		return nil
	}, opts...)
}

// parsePage is the page a crawl_parse row belongs to: the page a link was
// found on, or the parsed page itself.
func parsePage(r segment.ParseUpdate) string {
	if r.Status == crawldb.StatusLinked && r.FromURL != "" {
		return r.FromURL
	}
	return r.URL
}

// mergeSegOutput writes the rows of one part to slice slice's segment.
func mergeSegOutput(dir, part string, slice int) mapreduce.Output[segRecord] {
	switch part {
	case segment.DirGenerate:
		return routeRows(dir, slice, func(v *segValue) *segment.Generate { return v.Generate })
	case segment.DirFetch:
		return routeRows(dir, slice, func(v *segValue) *segment.Fetch { return v.Fetch })
	case segment.DirContent:
		return routeRows(dir, slice, func(v *segValue) *segment.Content { return v.Content })
	case segment.DirParseData:
		return routeRows(dir, slice, func(v *segValue) *segment.ParseData { return v.Data })
	case segment.DirParseText:
		return routeRows(dir, slice, func(v *segValue) *segment.ParseText { return v.Text })
	}
	return routeRows(dir, slice, func(v *segValue) *segment.ParseUpdate { return v.Parse })
}

func routeRows[T any](dir string, slice int, get func(v *segValue) *T) mapreduce.Output[segRecord] {
	return mapreduce.WriteRouted(dir, func(r segRecord) (T, bool) {
		var zero T
		if r.slice != slice {
			return zero, false
		}
		p := get(&r.v)
		if p == nil {
			return zero, false
		}
		return *p, true
	})
}

// sliceState is a reduce task's count of the URLs it wrote.
type sliceState struct{ urls int64 }

// reduce writes the rows of the URL's winning segment (mergeWinner) to
// the URL's slice and counts the others as older.
func (s mergeSegs) reduce(t *mapreduce.Task, url string, values iter.Seq[segValue], out func(segRecord)) error {
	var vs []segValue
	for v := range values {
		vs = append(vs, v)
	}
	win := mergeWinner(vs)
	st, _ := t.State.(*sliceState)
	if st == nil {
		st = &sliceState{}
		t.State = st
	}
	slice := 0
	if s.Slice > 0 {
		slice = int(st.urls / s.Slice)
		if slice >= len(s.Outs) {
			return fmt.Errorf("%s: more URLs than the inputs' fetch lists and fetches hold (%d slices of %d planned)", url, len(s.Outs), s.Slice)
		}
	}
	st.urls++
	t.Count(ctrMergeURLs, 1)
	t.Count(sliceCounter(slice), 1)
	for _, v := range vs {
		p := v.part()
		if v.Seg != win {
			t.Count(ctrMergeOlder+p, 1)
			continue
		}
		t.Count(ctrMergeOutPrefix+p, 1)
		out(segRecord{slice: slice, v: v})
	}
	return nil
}

// mergeWinner is the segment whose rows of one URL are kept: the newest
// (highest rank) among those with a crawl_fetch row that SegmentMerger
// keeps (keptFetch), else the newest holding the URL at all.
func mergeWinner(vs []segValue) int {
	best, bestKept := -1, false
	for _, v := range vs {
		kept := v.Fetch != nil && keptFetch(v.Fetch.Status)
		switch {
		case kept && !bestKept, kept == bestKept && v.Seg > best:
			best, bestKept = v.Seg, kept
		}
	}
	return best
}

// keptFetch reports whether a crawl_fetch status is one Nutch's
// SegmentMerger takes as the page's latest fetch: a fetch status other
// than retry and not modified (and, in trawl, skipped and refused, which
// are no fetch at all).
func keptFetch(s crawldb.Status) bool {
	switch s {
	case crawldb.StatusFetchSuccess, crawldb.StatusFetchRedirTemp, crawldb.StatusFetchRedirPerm,
		crawldb.StatusFetchGone, crawldb.StatusFetchRobotsDenied:
		return true
	}
	return false
}
