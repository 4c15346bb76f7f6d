package jobs

import (
	"runtime"
	"sync"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/warc"
)

// fetchedPage is a page a fetch task fetched, on its way to the task's
// page writer: for a success its content row and, for a fetch that
// parses, what the parse job would have read of its crawl_fetch row; for
// a fetch that writes WARC files, the exchange of any response.
type fetchedPage struct {
	content  *segment.Content
	fetch    parseFetch
	exchange *warc.Exchange
}

// startPageWriter starts the page writer of a fetch task: it emits the
// content rows the fetcher's workers send on pages (encoding and
// compressing them here, not in the workers under the fetcher's emit
// lock) and, with pp, parses each page and emits its parse rows. Parsing
// takes up to GOMAXPROCS goroutines; one goroutine emits. The returned
// channel is closed once pages is closed and everything is emitted.
//
// A page is parsed once per task, as the parse job's join keeps the first
// content of a URL: a second content of the URL (a redirect target also
// on the fetch list) is written and counted as a duplicate, not parsed.
func startPageWriter(t *mapreduce.Task, pages <-chan fetchedPage, pp *pageParser, emit mapreduce.Emit[fetchRecord]) <-chan struct{} {
	done := make(chan struct{})
	if pp == nil {
		go func() {
			defer close(done)
			for p := range pages {
				if p.content != nil {
					emit(p.content.URL, fetchRecord{Content: p.content})
				}
				if p.exchange != nil {
					emit(p.exchange.URL, fetchRecord{WARC: p.exchange})
				}
			}
		}()
		return done
	}
	pt := t.InGroup(JobParse)
	var (
		mu     sync.Mutex
		parsed = make(map[string]bool)
	)
	first := func(url string) bool {
		mu.Lock()
		defer mu.Unlock()
		if parsed[url] {
			return false
		}
		parsed[url] = true
		return true
	}
	// A page's records, keyed by its URL (a map-only job's key only names
	// the record).
	type batch struct {
		url  string
		recs []fetchRecord
	}
	batches := make(chan batch, contentQueue)
	var workers sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for p := range pages {
				if p.content == nil { // a response without content, for WARC
					batches <- batch{p.exchange.URL, []fetchRecord{{WARC: p.exchange}}}
					continue
				}
				recs := []fetchRecord{{Content: p.content}}
				if first(p.content.URL) {
					pp.page(pt, p.content.URL, &p.fetch, p.content, func(o parseOut) {
						recs = append(recs, fetchRecord{Parse: o})
					})
				} else {
					pt.Count(ctrDupContent, 1)
				}
				if p.exchange != nil {
					recs = append(recs, fetchRecord{WARC: p.exchange})
				}
				batches <- batch{p.content.URL, recs}
			}
		}()
	}
	go func() {
		workers.Wait()
		close(batches)
	}()
	go func() {
		defer close(done)
		for b := range batches {
			for _, r := range b.recs {
				emit(b.url, r)
			}
		}
	}()
	return done
}
