package jobs

import (
	"slices"
)

// OPIC scoring, as Nutch's OPICScoringFilter (scoring-opic plugin) with its
// default settings (db.score.link.internal = db.score.link.external = 1.0,
// db.score.count.filtered = false):
//
//   - inject: a seed gets its seed-line score, else DefaultInjectScore
//     (db.score.injected); injectedScore adds nothing.
//   - parse: a page passes its score divided evenly among its outlinks
//     (OPICLinkCash) to each link target, as a linked datum in crawl_parse.
//   - updatedb: a page new to the CrawlDB starts at 0 (initialScore) and an
//     existing one keeps its score; both then add the cash of every incoming
//     link (updateDbScore). Like Nutch, trawl does not take the distributed
//     cash away from the linking page.
//   - generate: the sort value is the score (generatorSortValue).

// DefaultInjectScore is the score of a seed without score= (Nutch's
// db.score.injected).
const DefaultInjectScore float32 = 1.0

// DefaultMaxInlinks bounds how many incoming links of one URL updatedb
// counts in one run, keeping those with the highest cash (Nutch's
// db.update.max.inlinks).
const DefaultMaxInlinks = 10000

// OPICLinkCash is the cash a page with score pageScore passes along each of
// its nOutlinks outlinks: pageScore / nOutlinks (0 when it has none). The
// parse job writes it as the Score of the page's crawl_parse row, for
// each of its Links.
func OPICLinkCash(pageScore float32, nOutlinks int) float32 {
	if nOutlinks <= 0 {
		return 0
	}
	return float32(float64(pageScore) / float64(nOutlinks))
}

// inlink is one incoming link seen by updatedb: who links, and the cash it
// passes.
type inlink struct {
	from pageID
	cash float32
}

// pageID stands for a linking page in updatedb's shuffle: the 64-bit
// FNV-1a hash of its URL, 8 bytes where the URL takes tens. updatedb uses
// a linking page only to tell pages apart (an inlink count, the kept
// links' order); two pages could share an ID and count as one, with a
// chance of about n*n/2^65 for n inlinks (3e-12 at 10,000).
type pageID uint64

// pageIDOf returns the pageID of the page at url.
func pageIDOf(url string) pageID {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(url); i++ {
		h ^= uint64(url[i])
		h *= prime
	}
	return pageID(h)
}

// inlinkLess orders inlinks from least to most valuable: lower cash first,
// then the linking page's ID, greater first, so that among equal cash the
// smallest IDs are kept. The order depends on the links alone,
// not on the order the engine delivers them in.
func inlinkLess(a, b inlink) bool {
	if a.cash != b.cash {
		return a.cash < b.cash
	}
	return a.from > b.from
}

// inlinkHeap is a min-heap (least valuable on top) of at most max inlinks.
// seen counts the links offered, kept or not.
type inlinkHeap struct {
	items []inlink
	max   int
	seen  int
}

// reset empties the heap for the next key, keeping its storage.
func (h *inlinkHeap) reset(max int) {
	h.items = h.items[:0]
	h.max = max
	h.seen = 0
}

// add offers one inlink; only the max most valuable are kept.
func (h *inlinkHeap) add(from pageID, cash float32) {
	h.seen++
	l := inlink{from: from, cash: cash}
	if h.max <= 0 || len(h.items) < h.max {
		h.items = append(h.items, l)
		h.up(len(h.items) - 1)
		return
	}
	if inlinkLess(h.items[0], l) {
		h.items[0] = l
		h.down(0)
	}
}

// up moves item i toward the top while it is less valuable than its
// parent (container/heap's up, without boxing each inlink in an any).
func (h *inlinkHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !inlinkLess(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

// down moves item i toward the bottom while a child is less valuable.
func (h *inlinkHeap) down(i int) {
	n := len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && inlinkLess(h.items[r], h.items[c]) {
			c = r
		}
		if !inlinkLess(h.items[c], h.items[i]) {
			return
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
}

// dropped is the number of links offered but not kept.
func (h *inlinkHeap) dropped() int { return h.seen - len(h.items) }

// sorted returns the kept inlinks, most valuable first (Nutch's linkList
// order: the first is the "latest" link a new URL is initialized from).
// It sorts the heap's own storage: nothing may be added until reset.
func (h *inlinkHeap) sorted() []inlink {
	if len(h.items) == 0 {
		return nil
	}
	slices.SortFunc(h.items, moreValuableFirst)
	return h.items
}

// moreValuableFirst orders inlinks most valuable first (the reverse of
// inlinkLess), for slices.SortFunc.
func moreValuableFirst(a, b inlink) int {
	switch {
	case inlinkLess(b, a):
		return -1
	case inlinkLess(a, b):
		return 1
	}
	return 0
}

// sumCash sums the kept inlinks' cash deterministically: in float64, in the
// order sorted returns.
func sumCash(links []inlink) float64 {
	var s float64
	for _, l := range links {
		s += float64(l.cash)
	}
	return s
}

// distinctFrom counts the distinct linking pages among links.
func distinctFrom(links []inlink) int {
	if len(links) < 2 {
		return len(links)
	}
	if len(links) <= 32 {
		// Most URLs have a few inlinks: comparing pairs costs less than
		// a map.
		n := 0
	next:
		for i, l := range links {
			for _, e := range links[:i] {
				if e.from == l.from {
					continue next
				}
			}
			n++
		}
		return n
	}
	seen := make(map[pageID]struct{}, len(links))
	for _, l := range links {
		seen[l.from] = struct{}{}
	}
	return len(seen)
}
