package crawldb

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"path"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Reader reads an installed CrawlDB: the Datum rows of the Parquet part
// files in crawldb/current, each sorted by URL. It reads without the lock;
// files are opened per iteration, so a Reader holds no resources and is
// safe for concurrent use.
type Reader struct {
	fsys  storage.FS
	dir   string // the version directory read (current, or old)
	parts []string
}

// ctxCheckEvery is how many rows pass between context checks.
const ctxCheckEvery = 1024

// Open lists the part files of the CrawlDB at crawldbDir. If current is
// missing but old exists (an install interrupted between its renames, not
// yet recovered), old, which is then the latest complete version, is read
// and a warning logged. Files whose names start with "_" or "." (_SUCCESS,
// _counters.json) and files not ending in .parquet are skipped.
func Open(fsys storage.FS, crawldbDir string) (*Reader, error) {
	dir := Current(crawldbDir)
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		old := Old(crawldbDir)
		if oldEntries, oerr := fsys.ReadDir(old); oerr == nil {
			slog.Warn("crawldb: current version missing (interrupted install); reading the previous one", "crawldb", crawldbDir, "dir", old)
			dir, entries, err = old, oldEntries, nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("crawldb: %s is not a CrawlDB: %s does not exist (run inject first)", crawldbDir, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("crawldb: open %s: %w", crawldbDir, err)
	}
	r := &Reader{fsys: fsys, dir: dir}
	for _, e := range entries {
		name := e.Name()
		if !parquetio.IsPart(e) {
			continue
		}
		r.parts = append(r.parts, path.Join(dir, name))
	}
	sort.Strings(r.parts)
	return r, nil
}

// Dir returns the directory whose part files are read.
func (r *Reader) Dir() string { return r.dir }

// Parts returns the part files' paths, sorted by name.
func (r *Reader) Parts() []string { return append([]string(nil), r.parts...) }

// All iterates over every datum, part by part in part-name order; within
// a part rows come in URL order, but not globally (parts are hash
// partitions). Memory stays constant (one batch of rows). Iteration stops
// at the first error, which names the file.
func (r *Reader) All(ctx context.Context) iter.Seq2[Datum, error] {
	return func(yield func(Datum, error) bool) {
		for i := range r.parts {
			for d, err := range r.Part(ctx, i) {
				if !yield(d, err) || err != nil {
					return
				}
			}
		}
	}
}

// Part iterates over the datums of part file i.
func (r *Reader) Part(ctx context.Context, i int) iter.Seq2[Datum, error] {
	return r.rows(ctx, i, -1, -1)
}

// rows iterates over row groups [start, end) of part i (all if start < 0).
func (r *Reader) rows(ctx context.Context, i, start, end int) iter.Seq2[Datum, error] {
	return func(yield func(Datum, error) bool) {
		if i < 0 || i >= len(r.parts) {
			yield(Datum{}, fmt.Errorf("crawldb: part %d out of range [0,%d)", i, len(r.parts)))
			return
		}
		name := r.parts[i]
		if err := ctx.Err(); err != nil {
			yield(Datum{}, fmt.Errorf("crawldb: reading %s: %w", name, err))
			return
		}
		f, err := r.fsys.Open(name)
		if err != nil {
			yield(Datum{}, fmt.Errorf("crawldb: %w", err))
			return
		}
		// A CrawlDB written before a column was added (cluster_sample)
		// reads with that column's zero value.
		pr, err := parquetio.Open[Datum](f, name, parquetio.AllowMissingColumns())
		if err != nil {
			f.Close()
			yield(Datum{}, fmt.Errorf("crawldb: %w", err))
			return
		}
		defer pr.Close()
		if start < 0 {
			start, end = 0, pr.NumRowGroups()
		}
		n := 0
		for d, err := range pr.Rows(start, end) {
			if err != nil {
				yield(Datum{}, fmt.Errorf("crawldb: %w", err))
				return
			}
			if n++; n%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					yield(Datum{}, fmt.Errorf("crawldb: reading %s: %w", name, err))
					return
				}
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

// Sorted iterates over every datum in global URL order, merging the
// sorted parts. It holds one batch of rows (parquetio.BatchSize) per part
// file, so memory grows with the number of parts; use All where order does
// not matter. A part that is not sorted by URL is an error naming it.
func (r *Reader) Sorted(ctx context.Context) iter.Seq2[Datum, error] {
	return func(yield func(Datum, error) bool) {
		h := &mergeHeap{}
		defer func() {
			for _, s := range h.srcs {
				s.stop()
			}
		}()
		advance := func(s *mergeSource) (ok bool, err error) {
			d, err, more := s.next()
			if !more {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if s.has && d.URL < s.cur.URL {
				return false, fmt.Errorf("crawldb: %s is not sorted by URL: %q after %q", r.parts[s.part], d.URL, s.cur.URL)
			}
			s.cur, s.has = d, true
			return true, nil
		}
		for i := range r.parts {
			next, stop := iter.Pull2(r.Part(ctx, i))
			s := &mergeSource{part: i, next: next, stop: stop}
			h.srcs = append(h.srcs, s)
			ok, err := advance(s)
			if err != nil {
				yield(Datum{}, err)
				return
			}
			if ok {
				h.live = append(h.live, s)
			}
		}
		heap.Init(h)
		for h.Len() > 0 {
			s := h.live[0]
			if !yield(s.cur, nil) {
				return
			}
			ok, err := advance(s)
			if err != nil {
				yield(Datum{}, err)
				return
			}
			if ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		}
	}
}

type mergeSource struct {
	part int
	next func() (Datum, error, bool)
	stop func()
	cur  Datum
	has  bool
}

// mergeHeap orders the live sources by current URL, then part index.
type mergeHeap struct {
	srcs []*mergeSource // all, for stopping
	live []*mergeSource
}

func (h *mergeHeap) Len() int { return len(h.live) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.live[i], h.live[j]
	if a.cur.URL != b.cur.URL {
		return a.cur.URL < b.cur.URL
	}
	return a.part < b.part
}
func (h *mergeHeap) Swap(i, j int) { h.live[i], h.live[j] = h.live[j], h.live[i] }
func (h *mergeHeap) Push(x any)    { h.live = append(h.live, x.(*mergeSource)) }
func (h *mergeHeap) Pop() any {
	s := h.live[len(h.live)-1]
	h.live = h.live[:len(h.live)-1]
	return s
}

// Get returns the datum of url (as stored: normalize it first), and
// whether it was found. It reads only the row groups whose url statistics
// (minimum and maximum, exact as parquet-go writes them) may hold url, and
// within one stops at the first larger URL, since parts are sorted. Row
// groups without statistics are scanned.
func (r *Reader) Get(ctx context.Context, url string) (Datum, bool, error) {
	for i, name := range r.parts {
		groups, err := r.candidateGroups(name, url)
		if err != nil {
			return Datum{}, false, err
		}
		for _, g := range groups {
			for d, err := range r.rows(ctx, i, g, g+1) {
				if err != nil {
					return Datum{}, false, err
				}
				if d.URL == url {
					return d, true, nil
				}
				if d.URL > url {
					break
				}
			}
		}
	}
	return Datum{}, false, nil
}

// candidateGroups returns the row groups of a part whose url bounds may
// hold url, reading only the footer.
func (r *Reader) candidateGroups(name, url string) (groups []int, err error) {
	f, err := r.fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("crawldb: %w", err)
	}
	defer f.Close()
	defer func() {
		if p := recover(); p != nil {
			groups, err = nil, fmt.Errorf("crawldb: %s: corrupt Parquet footer (parquet-go panicked: %v)\n%s", name, p, firstLines(debug.Stack(), 12))
		}
	}()
	pf, err := parquet.OpenFile(f, f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("crawldb: open %s: %w", name, err)
	}
	leaf, ok := pf.Schema().Lookup("url")
	if !ok {
		return nil, fmt.Errorf("crawldb: %s has no url column: not a CrawlDB part", name)
	}
	for g, rg := range pf.Metadata().RowGroups {
		if leaf.ColumnIndex >= len(rg.Columns) {
			return nil, fmt.Errorf("crawldb: %s: row group %d has %d columns, want more than %d", name, g, len(rg.Columns), leaf.ColumnIndex)
		}
		st := rg.Columns[leaf.ColumnIndex].MetaData.Statistics
		if st.MinValue != nil && st.MaxValue != nil && (url < string(st.MinValue) || url > string(st.MaxValue)) {
			continue
		}
		groups = append(groups, g)
	}
	return groups, nil
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// EachPart calls f for every part of r, at most parallel parts at once
// (one if parallel < 1), and returns the first error f returned; once one
// fails, the context the others get is cancelled and no part is started.
func (r *Reader) EachPart(ctx context.Context, parallel int, f func(ctx context.Context, part int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range min(max(parallel, 1), max(len(r.parts), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range r.parts {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// Stats computes the statistics of every datum, reading up to parallel
// parts at once (1 if parallel < 1), with per-host counts if hosts.
func (r *Reader) Stats(ctx context.Context, parallel int, hosts bool) (*Stats, error) {
	results := make([]*Stats, len(r.parts))
	err := r.EachPart(ctx, parallel, func(ctx context.Context, i int) error {
		s := NewStats(hosts)
		for d, err := range r.Part(ctx, i) {
			if err != nil {
				return err
			}
			s.add(&d)
		}
		results[i] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crawldb: stats: %w", err)
	}
	total := NewStats(hosts)
	for _, s := range results {
		total.Merge(s)
	}
	return total, nil
}

// Top returns the n URLs with the highest scores, best first, reading up
// to parallel parts at once (1 if parallel < 1).
func (r *Reader) Top(ctx context.Context, parallel, n int) ([]ScoredURL, error) {
	tops := make([]*TopN, len(r.parts))
	err := r.EachPart(ctx, parallel, func(ctx context.Context, i int) error {
		t := NewTopN(n)
		for d, err := range r.Part(ctx, i) {
			if err != nil {
				return err
			}
			t.Add(d.URL, d.Score)
		}
		tops[i] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crawldb: top: %w", err)
	}
	all := NewTopN(n)
	for _, t := range tops {
		all.Merge(t)
	}
	return all.Result(), nil
}
