package jobs

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/trawl/trawl/mapreduce"
)

// combinedLink is one link as a test counts it: its target and what it
// carries.
type combinedLink struct {
	url  string
	link dbLink
}

// combinerSink collects what a linkCombiner emits: every link, and the
// values (one per URL and flush, or one per link when direct).
type combinerSink struct {
	links  map[combinedLink]int
	values int
}

func (s *combinerSink) emit(key string, v dbValue) {
	if v.Kind != kindLink || len(v.Links) == 0 {
		panic(fmt.Sprintf("emitted %+v for %s, not links", v, key))
	}
	s.values++
	for _, l := range v.Links {
		s.links[combinedLink{key, l}]++
	}
}

// TestLinkCombiner checks that a combiner emits every link it is given,
// once: packed by URL when pages share targets (a full combiner empties
// itself and goes on combining), one by one once it finds they do not, and
// all that it holds when its task ends (flushLinks, which also readies it
// for the next task).
func TestLinkCombiner(t *testing.T) {
	for _, tc := range []struct {
		name              string
		maxURLs, maxLinks int
		links             int
		target            func(i int) int // link i's target
		maxValues         int             // at most this many values emitted
		wantDirect        bool
	}{
		{name: "shared targets, never full", maxURLs: 32, maxLinks: 1024, links: 500,
			target: func(i int) int { return i % 10 }, maxValues: 10},
		{name: "shared targets, full of links", maxURLs: 32, maxLinks: 64, links: 1000,
			target: func(i int) int { return i % 20 }, maxValues: 20 * (1000/64 + 1)},
		{name: "shared targets, full of URLs", maxURLs: 32, maxLinks: 1024, links: 2000,
			target: func(i int) int { return i / 10 % 100 }, maxValues: 2000/10 + 32},
		{name: "a link a URL", maxURLs: 32, maxLinks: 1024, links: 5000,
			target: func(i int) int { return i }, maxValues: 5000, wantDirect: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newLinkCombiner(tc.maxURLs, tc.maxLinks)
			sink := &combinerSink{links: map[combinedLink]int{}}
			want := map[combinedLink]int{}
			for i := range tc.links {
				// Every link differs in what it carries, so that a lost
				// or doubled one shows.
				cl := combinedLink{
					url:  fmt.Sprintf("http://h%d.test/p%d", tc.target(i)%7, tc.target(i)),
					link: dbLink{From: pageID(i / 3), Cash: float32(i), Relevance: float32(i%5) / 5, Hops: int32(i % 3)},
				}
				want[cl]++
				c.add(cl.url, cl.link, sink.emit)
			}
			if c.direct != tc.wantDirect {
				t.Errorf("direct = %v, want %v", c.direct, tc.wantDirect)
			}
			pool := &sync.Pool{}
			task := &mapreduce.Task{State: c}
			if err := flushLinks(pool)(task, sink.emit); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(sink.links, want) {
				t.Errorf("emitted %d distinct links, want the %d given, each once", len(sink.links), len(want))
			}
			if sink.values > tc.maxValues {
				t.Errorf("emitted %d values for %d links, want at most %d", sink.values, tc.links, tc.maxValues)
			}
			if task.State != nil {
				t.Errorf("flushLinks left the task's state %v", task.State)
			}
			if len(c.head) != 0 || len(c.slab) != 0 || c.direct {
				t.Errorf("after its task the combiner holds %d URLs and %d links, direct %v", len(c.head), len(c.slab), c.direct)
			}
		})
	}
}

// TestLinkCombinerPackOrder checks that a URL's packed links are its own,
// whatever other URLs' links came between them.
func TestLinkCombinerPackOrder(t *testing.T) {
	c := newLinkCombiner(combineMaxURLs, combineMaxLinks)
	got := map[string][]pageID{}
	for i, u := range []string{"a", "b", "a", "c", "a", "b"} {
		c.add(u, dbLink{From: pageID(i)}, func(string, dbValue) { t.Fatal("emitted before the flush") })
	}
	c.flush(func(key string, v dbValue) {
		for _, l := range v.Links {
			got[key] = append(got[key], l.From)
		}
	})
	for k := range got {
		slices.Sort(got[k])
	}
	want := map[string][]pageID{"a": {0, 2, 4}, "b": {1, 5}, "c": {3}}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: links from %v, want %v", k, got[k], v)
		}
	}
}
