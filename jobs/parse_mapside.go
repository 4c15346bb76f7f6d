package jobs

import (
	"fmt"
	"path"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// The map-side parse. A fetch task writes a content part and the
// crawl_fetch part of the same name, so the parse job can join the two in
// its map tasks, a part at a time, as Hadoop's map-side join does with
// inputs partitioned alike: each map task reads the small crawl_fetch part
// (about a hundred bytes a URL) into memory and streams the content part
// past it. The pages' bodies are read once and never shuffled, sorted or
// spilled, which the reduce-side join must do. Parse takes this way
// whenever the two outputs' part files pair up by name (mapSideParts).
//
// Within a task the pages are parsed in batches of parseBatch, each batch
// on GOMAXPROCS goroutines, and emitted in the order they were read.

// parseBatch is how many pages a map-side parse task parses at once.
const parseBatch = 64

// mapSideJob is the parse job with the map-side join: map-only, one task
// per content part.
func (s parseJob) mapSideJob(pp *pageParser) mapreduce.Runnable {
	fetchDir := storage.Join(s.Segment, segment.DirFetch)
	return &mapreduce.Job[parseOut, parseOut]{
		Name: JobParse,
		Inputs: []mapreduce.Input[parseOut]{mapreduce.From(storage.Join(s.Segment, segment.DirContent),
			func(t *mapreduce.Task, ct segment.Content, emit mapreduce.Emit[parseOut]) error {
				if ct.URL == "" {
					return fmt.Errorf("%s: a content row without URL", t.Split)
				}
				st := t.State.(*sideParse)
				st.batch = append(st.batch, ct)
				if len(st.batch) == parseBatch {
					st.flush(t, pp, emit)
				}
				return nil
			}, mapreduce.WholeFiles(), mapreduce.RequireSuccess())},
		MapOnly: true,
		MapSetup: func(t *mapreduce.Task) error {
			fetches, err := readFetchPart(t, storage.Join(fetchDir, path.Base(t.Split)))
			if err != nil {
				return err
			}
			t.State = &sideParse{fetch: fetches, batch: make([]segment.Content, 0, parseBatch)}
			return nil
		},
		MapCleanup: func(t *mapreduce.Task, emit mapreduce.Emit[parseOut]) error {
			st := t.State.(*sideParse)
			st.flush(t, pp, emit)
			for _, f := range st.fetch {
				if !f.seen {
					parsable(t, &f.fetch, nil) // counts a fetch_success without content
				}
			}
			return nil
		},
		Outputs: parseJobOutputs(s.Segment),
	}
}

// sideParse is a map-side parse task's state: its crawl_fetch part by URL
// and the pages read but not parsed yet.
type sideParse struct {
	fetch map[string]*sideFetch
	batch []segment.Content
}

// sideFetch is what parse needs of a crawl_fetch row, and whether the
// row's content was seen.
type sideFetch struct {
	fetch parseFetch
	seen  bool
}

// readFetchPart reads the crawl_fetch part file uri (the pair of the task's
// content part) by URL; the first row of a URL wins, as the reduce-side
// join keeps the first.
func readFetchPart(t *mapreduce.Task, uri string) (map[string]*sideFetch, error) {
	fsys, p, err := t.Storage.Resolve(uri)
	if err != nil {
		return nil, fmt.Errorf("crawl_fetch part %s: %w", uri, err)
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("crawl_fetch part of %s: %w", t.Split, err)
	}
	r, err := parquetio.Open[segment.Fetch](f, uri, parquetio.AllowMissingColumns())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("crawl_fetch part of %s: %w", t.Split, err)
	}
	defer r.Close()
	m := make(map[string]*sideFetch, r.NumRows())
	for f, err := range r.All() {
		if err != nil {
			return nil, fmt.Errorf("crawl_fetch part of %s: %w", t.Split, err)
		}
		if f.URL == "" {
			return nil, fmt.Errorf("%s: a crawl_fetch row without URL", uri)
		}
		if _, dup := m[f.URL]; !dup {
			m[f.URL] = &sideFetch{fetch: parseFetchOf(&f)}
		}
	}
	return m, nil
}

// flush parses the batch and emits its rows in the batch's order. A URL
// whose content was seen before is counted as a duplicate and not parsed
// (the reduce-side join keeps a URL's first content).
func (st *sideParse) flush(t *mapreduce.Task, pp *pageParser, emit mapreduce.Emit[parseOut]) {
	n := len(st.batch)
	if n == 0 {
		return
	}
	fetches := make([]*parseFetch, n)
	parse := make([]bool, n)
	for i := range st.batch {
		f := st.fetch[st.batch[i].URL]
		switch {
		case f == nil:
			parse[i] = true // no crawl_fetch row: counted as skipped by page
		case f.seen:
			t.Count(ctrDupContent, 1)
		default:
			f.seen = true
			fetches[i], parse[i] = &f.fetch, true
		}
	}
	outs := make([][]parseOut, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, max(1, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= n {
					return
				}
				if parse[j] {
					c := &st.batch[j]
					pp.page(t, c.URL, fetches[j], c, func(o parseOut) { outs[j] = append(outs[j], o) })
				}
			}
		})
	}
	wg.Wait()
	for j := range outs {
		for _, o := range outs[j] {
			emit(st.batch[j].URL, o)
		}
	}
	clear(st.batch)
	st.batch = st.batch[:0]
}

// mapSideParts reports whether the segment at segPath can be parsed with
// the map-side join: its content and crawl_fetch have part files of the
// same names, each content part with the crawl_fetch part of its fetch
// task (as every fetch writes them). Otherwise (outputs written another
// way, or content removed in part) the parse joins in reduce tasks.
func mapSideParts(fsys storage.FS, segPath string) (bool, error) {
	names := func(dir string) ([]string, error) {
		files, err := parquetio.PartFiles(fsys, path.Join(segPath, dir))
		if err != nil {
			return nil, fmt.Errorf("segment %s: %w", segPath, err)
		}
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = path.Base(f)
		}
		slices.Sort(out)
		return out, nil
	}
	content, err := names(segment.DirContent)
	if err != nil {
		return false, err
	}
	fetch, err := names(segment.DirFetch)
	if err != nil {
		return false, err
	}
	return len(content) > 0 && slices.Equal(content, fetch), nil
}
