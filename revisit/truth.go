package revisit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// daySeconds is the length of a simulated day in seconds.
const daySeconds = 86400.0

// Page is one page of the simulated web: what the simulator knows about it
// from simweb's ground truth.
type Page struct {
	// ID is the simweb page id.
	ID int
	// URL is the page's canonical URL (host names, no port).
	URL string
	// Host is the URL's host name.
	Host string
	// Rate is the true change rate, in changes per day (0: never); on a
	// web whose rates drift (simweb.ChangeDrift), its mean over the
	// simulated period, which the oracle plans with.
	Rate float64
	// Features are the page's features as a crawl records them: simweb's
	// truth of version 0 (later versions differ in Bytes by a few percent;
	// see Truth.VersionBytes), with no outlinks for a nofollow page
	// (trawl's parse keeps none), and Inlinks the
	// number of distinct simulated pages whose followed links point here
	// (a crawl counts the linking pages it fetched, not the web's true
	// in-degree).
	Features crawldb.Features
	// LastModified says the page's server sends a Last-Modified date:
	// the time of the page's last change event (see Truth.lastModified).
	LastModified bool
}

// Events holds the change-event times of a set of pages, in seconds since
// the simulation's start, sorted per page. It is immutable once built and
// safe for concurrent use.
type Events struct {
	off []int64
	t   []float64
}

// NewEvents builds Events from per-page event times (seconds since the
// start). Each page's times must be finite, non-negative and sorted.
func NewEvents(perPage [][]float64) (*Events, error) {
	e := &Events{off: make([]int64, 1, len(perPage)+1)}
	for i, ts := range perPage {
		for j, v := range ts {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("revisit: page %d: event %d at %v s: want a finite time >= 0", i, j, v)
			}
			if j > 0 && v < ts[j-1] {
				return nil, fmt.Errorf("revisit: page %d: event %d at %v s before event %d at %v s", i, j, v, j-1, ts[j-1])
			}
		}
		e.t = append(e.t, ts...)
		e.off = append(e.off, int64(len(e.t)))
	}
	return e, nil
}

// Len is the number of pages.
func (e *Events) Len() int { return len(e.off) - 1 }

// Total is the number of events of all pages.
func (e *Events) Total() int64 { return int64(len(e.t)) }

// Page returns page i's event times (do not modify).
func (e *Events) Page(i int) []float64 { return e.t[e.off[i]:e.off[i+1]:e.off[i+1]] }

// CountAt is the number of events of page i at or before time s: the
// version of the page a fetch at s sees.
func (e *Events) CountAt(i int, s float64) int {
	ts := e.Page(i)
	return sort.Search(len(ts), func(k int) bool { return ts[k] > s })
}

// Truth is the simulated web: the pages a crawler can fetch and their
// change events over the simulated period.
type Truth struct {
	// Start is simulated time zero (simweb's epoch: change processes
	// start there). Horizon is the length of the simulated period.
	Start   time.Time
	Horizon time.Duration
	// Pages are the simulated pages; page i's events are Events.Page(i).
	Pages  []Page
	Events *Events
	// VersionBytes, when set, makes a fetch record the size of the very
	// version it fetched, rendered with Addressing (what a crawl's parse
	// records from a server with that addressing, Server.Addressing),
	// instead of version 0's size under canonical addressing. It is exact
	// and costs a rendering per fetch (tens of microseconds).
	VersionBytes bool
	Addressing   simweb.Addressing

	web *simweb.Web
}

// FetchedFeatures returns the features a fetch of page i at version
// records: Pages[i].Features, with the version's size if VersionBytes.
func (t *Truth) FetchedFeatures(i, version int) (crawldb.Features, error) {
	f := t.Pages[i].Features
	if !t.VersionBytes {
		return f, nil
	}
	body, err := t.web.Body(t.Pages[i].ID, version, t.Addressing)
	if err != nil {
		return f, fmt.Errorf("revisit: page %s version %d: %w", t.Pages[i].URL, version, err)
	}
	f.Bytes = int64(len(body))
	return f, nil
}

// lastModified is the Last-Modified date a fetch of page i at version
// sees: the time of its last change event, to the second (HTTP dates have
// no fraction), if the page's server sends one and the page has changed
// in the simulated period; the zero time otherwise (a page not yet changed
// would send its creation date, which the simulation does not model).
func (t *Truth) lastModified(i, version int) time.Time {
	if !t.Pages[i].LastModified || version == 0 {
		return time.Time{}
	}
	sec := t.Events.Page(i)[version-1]
	return t.Start.Add(time.Duration(math.Floor(sec)) * time.Second)
}

// NewTruth reads from web the pages a crawl of it fetches successfully
// every time (content pages answering 200 that robots.txt allows) and their
// change events in (Start, Start+horizon], exactly those the web's server
// would serve (simweb.Web.ChangeTimes). With a web generated without
// hazards every such page answers 200 on every day. It renders every page
// once for its features, on GOMAXPROCS goroutines.
func NewTruth(ctx context.Context, web *simweb.Web, horizon time.Duration) (*Truth, error) {
	if horizon <= 0 {
		return nil, fmt.Errorf("revisit: horizon %v: want a positive duration", horizon)
	}
	start := web.Config().Epoch
	rows, err := readRows(ctx, web, start, start.Add(horizon))
	if err != nil {
		return nil, err
	}
	tr := &Truth{Start: start, Horizon: horizon, web: web}
	var per [][]float64
	var nofollow []bool
	for _, r := range rows {
		if r.ok {
			nofollow = append(nofollow, r.nofollow)
			tr.Pages = append(tr.Pages, r.page)
			per = append(per, r.ev)
		}
	}
	tr.countInlinks(nofollow)
	if len(tr.Pages) == 0 {
		return nil, fmt.Errorf("revisit: the web has no fetchable content pages")
	}
	ev, err := NewEvents(per)
	if err != nil {
		return nil, err
	}
	tr.Events = ev
	return tr, nil
}

// truthRow is what NewTruth reads of one page of the web.
type truthRow struct {
	ok, nofollow bool // ok: the page is fetchable (in the truth)
	page         Page
	ev           []float64 // change events, seconds since the start
}

// readRows reads every page of web, indexed by page id, with its change
// events in (start, end], on GOMAXPROCS goroutines (page id modulo the
// number of goroutines picks a page's goroutine).
func readRows(ctx context.Context, web *simweb.Web, start, end time.Time) ([]truthRow, error) {
	n := web.NumPages()
	rows := make([]truthRow, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[w] = fmt.Errorf("revisit: reading the web's truth: panic: %v", r)
				}
			}()
			for id := w; id < n; id += workers {
				if id%1024 == 0 && ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				rows[id] = readRow(web, id, start, end)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// readRow reads page id of web, if fetchable: its URL, host, rate, the
// features a crawl records (see Page.Features; Inlinks are the web's until
// countInlinks) and its change events in (start, end].
func readRow(web *simweb.Web, id int, start, end time.Time) truthRow {
	p := web.Page(id)
	if !p.Kind.IsContent() || p.Status != 200 || !p.RobotsAllowed {
		return truthRow{}
	}
	url := web.URL(id, simweb.Addressing{})
	var ev []float64
	for _, t := range web.ChangeTimes(id, start, end) {
		ev = append(ev, t.Sub(start).Seconds())
	}
	f := p.Features
	if p.Nofollow {
		f.Outlinks = 0 // nor the links of a nofollow page
	}
	host := web.Host(p.Host)
	lm := host.Validators == simweb.ValidatorsBoth || host.Validators == simweb.ValidatorsLastMod || host.Validators == simweb.ValidatorsIgnored
	return truthRow{ok: true, nofollow: p.Nofollow, ev: ev, page: Page{
		ID: id, URL: url, Host: host.Name, Rate: web.MeanRate(id, start, end), LastModified: lm,
		Features: crawldb.Features{Words: f.Words, Outlinks: f.Outlinks, Inlinks: f.Inlinks,
			Images: f.Images, Depth: f.Depth, Bytes: f.Bytes},
	}}
}

// countInlinks sets every page's Inlinks as a crawl of these pages counts
// them: the distinct simulated pages whose (followed) links point here.
// nofollow[j] says page j's links are not followed.
func (t *Truth) countInlinks(nofollow []bool) {
	index := make(map[int]int, len(t.Pages)) // page id → index into t.Pages
	for k, p := range t.Pages {
		index[p.ID] = k
	}
	in := make([]int32, len(t.Pages))
	for j, p := range t.Pages {
		if nofollow[j] {
			continue
		}
		seen := map[int]bool{}
		for _, id := range t.web.Outlinks(p.ID) {
			if k, ok := index[id]; ok && !seen[id] {
				seen[id] = true
				in[k]++
			}
		}
	}
	for k := range t.Pages {
		t.Pages[k].Features.Inlinks = in[k]
	}
}
