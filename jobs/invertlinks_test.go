package jobs

import (
	"cmp"
	"context"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// crawledSegments crawls the test web for rounds rounds and returns the
// segments' URIs.
func crawledSegments(t *testing.T, env Env, rounds int) []string {
	t.Helper()
	srv, seeds := crawlWeb(t, t.TempDir())
	if _, err := Crawl(context.Background(), env, testCrawlOptions(srv, seeds, rounds, time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range segmentNames(t, env) {
		segs = append(segs, storage.Join(SegmentsDir(env.Crawl), n))
	}
	return segs
}

// wantInlinks computes the LinkDB of segs from their crawl_parse rows.
func wantInlinks(t *testing.T, segs []string, keep func(from, to string) bool) []linkdb.Inlink {
	t.Helper()
	seen := map[[2]string]bool{}
	var want []linkdb.Inlink
	for _, s := range segs {
		for _, p := range readParts[segment.ParseUpdate](t, filepath.Join(s, segment.DirCrawlParse)) {
			for _, l := range p.Linked() {
				k := [2]string{l.URL, l.FromURL}
				if l.URL == l.FromURL || seen[k] || !keep(l.FromURL, l.URL) {
					continue
				}
				seen[k] = true
				want = append(want, linkdb.Inlink{To: l.URL, From: l.FromURL})
			}
		}
	}
	sortInlinks(want)
	return want
}

func sortInlinks(l []linkdb.Inlink) {
	slices.SortFunc(l, func(a, b linkdb.Inlink) int {
		return cmp.Or(strings.Compare(a.To, b.To), strings.Compare(a.From, b.From))
	})
}

// readLinkDB reads the LinkDB's rows, checking each part's order, and
// returns them sorted, anchors removed (anchors are checked apart).
func readLinkDB(t *testing.T, env Env) (rows []linkdb.Inlink, anchors map[[2]string]string) {
	t.Helper()
	anchors = map[[2]string]string{}
	r, err := linkdb.Open(storage.NewLocal(), LinkDBDir(env.Crawl))
	if err != nil {
		t.Fatal(err)
	}
	var prev linkdb.Inlink
	for l, err := range r.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if prev.To != "" && prev.To == l.To && prev.From >= l.From {
			t.Errorf("part not sorted by (to, from): %+v after %+v", l, prev)
		}
		prev = l
		anchors[[2]string{l.To, l.From}] = l.Anchor
		l.Anchor = ""
		rows = append(rows, l)
	}
	sortInlinks(rows)
	return rows, anchors
}

func TestInvertLinks(t *testing.T) {
	env := testEnv(t)
	segs := crawledSegments(t, env, 2)
	ctx := context.Background()
	res, err := InvertLinks(ctx, env, InvertLinksOptions{Segments: segs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	all := func(string, string) bool { return true }
	got, _ := readLinkDB(t, env)
	if want := wantInlinks(t, segs[:1], all); !slices.Equal(got, want) || res.Inlinks != int64(len(want)) || len(want) == 0 {
		t.Fatalf("after the first segment: %d rows (result says %d), want %d", len(got), res.Inlinks, len(want))
	}

	// The second round's segment merges into the LinkDB; both segments
	// again change nothing (a link is one row).
	if _, err := InvertLinks(ctx, env, InvertLinksOptions{Segments: segs[1:]}); err != nil {
		t.Fatal(err)
	}
	want := wantInlinks(t, segs, all)
	got, anchors := readLinkDB(t, env)
	if !slices.Equal(got, want) {
		t.Fatalf("after both segments: %d rows, want %d", len(got), len(want))
	}
	res, err = InvertLinks(ctx, env, InvertLinksOptions{Segments: segs})
	if err != nil {
		t.Fatal(err)
	}
	again, anchors2 := readLinkDB(t, env)
	if !slices.Equal(again, want) || res.Inlinks != int64(len(want)) || len(anchors) != len(anchors2) {
		t.Fatalf("inverting the segments again: %d rows, want %d", len(again), len(want))
	}
	withAnchor := 0
	for k, a := range anchors {
		if anchors2[k] != a {
			t.Errorf("anchor of %v changed: %q then %q", k, a, anchors2[k])
		}
		if a != "" {
			withAnchor++
		}
	}
	if withAnchor < len(anchors)/2 {
		t.Errorf("only %d of %d links have an anchor", withAnchor, len(anchors))
	}

	// Inlinks and TopAnchors read one URL's links back.
	r, err := linkdb.Open(storage.NewLocal(), LinkDBDir(env.Crawl))
	if err != nil {
		t.Fatal(err)
	}
	to := want[len(want)/2].To
	in, err := r.Inlinks(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range want {
		if w.To == to {
			n++
		}
	}
	if len(in) != n || n == 0 {
		t.Errorf("Inlinks(%s): %d, want %d", to, len(in), n)
	}
	st, err := r.Stats(ctx, 3)
	if err != nil || st.Links != int64(len(want)) || len(st.Top) != 3 || st.Top[0].Count < st.Top[2].Count {
		t.Errorf("Stats: %+v, %v", st, err)
	}
}

func TestInvertLinksIgnoreInternal(t *testing.T) {
	env := testEnv(t)
	segs := crawledSegments(t, env, 2)
	res, err := InvertLinks(context.Background(), env, InvertLinksOptions{Segments: segs, IgnoreInternalHost: true, MaxInlinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readLinkDB(t, env)
	external := wantInlinks(t, segs, func(from, to string) bool { return urlutil.Host(from) != urlutil.Host(to) })
	// At most two inlinks per URL, the first by From.
	var want []linkdb.Inlink
	for i, l := range external {
		if i >= 2 && external[i-2].To == l.To {
			continue
		}
		want = append(want, l)
	}
	if !slices.Equal(got, want) || res.Internal == 0 || res.Dropped != int64(len(external)-len(want)) {
		t.Errorf("%d rows, want %d; internal %d, dropped %d", len(got), len(want), res.Internal, res.Dropped)
	}
}

func TestInvertLinksErrors(t *testing.T) {
	env := testEnv(t)
	ctx := context.Background()
	if _, err := InvertLinks(ctx, env, InvertLinksOptions{}); err == nil || !strings.Contains(err.Error(), "no segment") {
		t.Errorf("no segments: %v", err)
	}
	seg := filepath.Join(t.TempDir(), "20260101000000")
	writeSegmentStage(t, seg, segment.DirGenerate, []segment.Generate{{URL: "http://a.test/"}})
	if _, err := InvertLinks(ctx, env, InvertLinksOptions{Segments: []string{seg}}); err == nil || !strings.Contains(err.Error(), "not parsed") {
		t.Errorf("unparsed segment: %v", err)
	}
	if ok, _ := storage.Exists(storage.NewLocal(), filepath.Join(LinkDBDir(env.Crawl), linkdb.CurrentName)); ok {
		t.Error("a failed invertlinks installed a LinkDB")
	}
	checkRoundTrip(t, invertLinks{Segments: []string{"a/crawl_parse"}, Current: "l/current", Out: "l/tmp", Reduces: 2,
		Options: InvertLinksOptions{Segments: []string{"a"}, IgnoreInternalHost: true}.withDefaults()})
}

func TestTruncateUTF8(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"héllo", 2, "h"}, {"héllo", 3, "hé"}, {"日本", 4, "日"}} {
		if got := truncateUTF8(c.in, c.n); got != c.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestCrawlKeepsLinkDB: a crawl with LinkDB inverts each round's segment
// after its updatedb, and a segment a crash left uninverted is picked up
// by the next round.
func TestCrawlKeepsLinkDB(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o := testCrawlOptions(srv, seeds, 2, t0)
	o.LinkDB = true
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rounds {
		if !slices.Contains(r.Stages, "invertlinks") || r.InvertLinks == nil || r.InvertLinks.Inlinks == 0 {
			t.Errorf("round %d: stages %v, %+v", r.Round, r.Stages, r.InvertLinks)
		}
	}
	var segs []string
	for _, n := range segmentNames(t, env) {
		segs = append(segs, storage.Join(SegmentsDir(env.Crawl), n))
	}
	if left, err := ParsedSegments(env, true); err != nil || len(left) != 0 {
		t.Errorf("uninverted after the crawl: %v, %v", left, err)
	}
	got, _ := readLinkDB(t, env)
	if want := wantInlinks(t, segs, func(string, string) bool { return true }); !slices.Equal(got, want) {
		t.Fatalf("LinkDB has %d rows, want %d", len(got), len(want))
	}

	// As if a crash came between updatedb and invertlinks: the last
	// segment loses its marker, and the next round inverts it too.
	last := filepath.Join(SegmentsDir(env.Crawl), segmentNames(t, env)[len(segs)-1])
	if err := os.Remove(filepath.Join(last, segment.InvertedMarker)); err != nil {
		t.Fatal(err)
	}
	o.Seeds, o.Rounds, o.Now = nil, 1, t0.AddDate(0, 0, 2)
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rounds[0]; r.InvertLinks == nil {
		t.Fatalf("round 3 did not invert: %v", r.Stages)
	}
	if left, err := ParsedSegments(env, true); err != nil || len(left) != 0 {
		t.Errorf("uninverted after round 3: %v, %v", left, err)
	}
}

// TestInvertLinksRowPerLink inverts a crawled segment, and a copy of it
// whose crawl_parse has a StatusLinked row per link (Nutch's form) in
// place of the links in the pages' rows: the same LinkDB, anchors too.
func TestInvertLinksRowPerLink(t *testing.T) {
	env := testEnv(t)
	seg := crawledSegments(t, env, 1)[0]
	var rows []segment.ParseUpdate
	for _, u := range readParts[segment.ParseUpdate](t, filepath.Join(seg, segment.DirCrawlParse)) {
		links := u.Linked()
		if u.Status != crawldb.StatusLinked {
			u.Links, u.Score = nil, 0
			rows = append(rows, u)
		}
		rows = append(rows, links...)
	}
	copied := filepath.Join(t.TempDir(), path.Base(seg))
	if err := os.CopyFS(copied, os.DirFS(seg)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(copied, segment.DirCrawlParse)); err != nil {
		t.Fatal(err)
	}
	writeSegmentStage(t, copied, segment.DirCrawlParse, rows)

	var dbs [2][]linkdb.Inlink
	var anchors [2]map[[2]string]string
	for i, s := range []string{seg, copied} {
		e := testEnv(t)
		if _, err := InvertLinks(context.Background(), e, InvertLinksOptions{Segments: []string{s}}); err != nil {
			t.Fatal(err)
		}
		dbs[i], anchors[i] = readLinkDB(t, e)
	}
	if len(dbs[0]) == 0 || !slices.Equal(dbs[0], dbs[1]) || !maps.Equal(anchors[0], anchors[1]) {
		t.Errorf("links in the pages' rows: %d inlinks; a row per link: %d", len(dbs[0]), len(dbs[1]))
	}
}
