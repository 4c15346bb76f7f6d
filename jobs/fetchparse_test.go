package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// sortedParse orders a segment's parse outputs, which a parsing fetch
// writes in the order pages arrive, by their content.
func sortedParse(p parseOutputs) parseOutputs {
	slices.SortFunc(p.data, func(a, b segment.ParseData) int { return cmp.Compare(a.URL, b.URL) })
	slices.SortFunc(p.text, func(a, b segment.ParseText) int { return cmp.Compare(a.URL, b.URL) })
	byText := func(a, b segment.ParseUpdate) int {
		return cmp.Compare(fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b))
	}
	slices.SortFunc(p.updates, byText)
	slices.SortFunc(p.links, byText)
	return p
}

// TestFetchParseEqualsParseJob fetches a synthetic web (failing hosts,
// traps, bombs) with FetchOptions.Parse, then parses the same segment
// again with the parse job, and checks that the two wrote the same rows
// and counted the same, and that the fetch left the segment parsed.
func TestFetchParseEqualsParseJob(t *testing.T) {
	fw := serveFetchWeb(t, 5, 8, 160)
	env := testEnv(t)
	var urls []string
	for u := range fw.pages() {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	gen := generateAll(t, env, urls, fw.now, 2)
	seg := gen.Segment
	po := ParseOptions{Signature: parser.SignatureTextProfile, Scope: urlutil.ScopeDomain,
		Filters: URLFilterOptions{Options: urlutil.DefaultFilterOptions()}}
	o := fw.fetchOpts(seg)
	o.Parse = &po
	fr, err := Fetch(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if fr.Parse == nil || fr.Parse.Parsed == 0 || fr.Parse.Parsed > fr.Fetched || fr.Parse.Outlinks == 0 {
		t.Fatalf("the fetch's parse result is %+v (fetched %d)", fr.Parse, fr.Fetched)
	}
	st, err := segment.Inspect(storage.NewLocal(), seg)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != segment.StateParsed || len(st.Partial) != 0 {
		t.Fatalf("after a parsing fetch the segment is %v (partial %v), want parsed", st.State, st.Partial)
	}
	po.Segment = seg
	if _, err := Parse(context.Background(), env, po); !errors.Is(err, ErrSegmentParsed) {
		t.Fatalf("parse of a segment its fetch parsed: %v, want ErrSegmentParsed", err)
	}
	inFetch := sortedParse(readParse(t, seg))
	for _, d := range segment.ParseOutputs() {
		if err := os.RemoveAll(filepath.Join(seg, d)); err != nil {
			t.Fatal(err)
		}
	}
	pr, err := Parse(context.Background(), env, po)
	if err != nil {
		t.Fatal(err)
	}
	byJob := sortedParse(readParse(t, seg))
	if len(inFetch.data) != len(byJob.data) || len(inFetch.updates) != len(byJob.updates) {
		t.Fatalf("parse_data %d rows, crawl_parse %d in the fetch; %d and %d by the parse job",
			len(inFetch.data), len(inFetch.updates), len(byJob.data), len(byJob.updates))
	}
	if !reflect.DeepEqual(inFetch, byJob) {
		for i := range inFetch.data {
			if !reflect.DeepEqual(inFetch.data[i], byJob.data[i]) {
				t.Errorf("first parse_data difference:\nfetch %+v\njob   %+v", inFetch.data[i], byJob.data[i])
				break
			}
		}
		t.Fatal("the parsing fetch and the parse job wrote different rows")
	}
	want, got := pr.Counters.Snapshot()[JobParse], fr.Parse.Counters.Snapshot()[JobParse]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parse counters of the fetch %v, of the parse job %v", got, want)
	}
	if fr.Parse.Parsed != pr.Parsed || fr.Parse.Failed != pr.Failed || fr.Parse.Outlinks != pr.Outlinks {
		t.Errorf("fetch parsed %d, failed %d, %d outlinks; the parse job %d, %d, %d",
			fr.Parse.Parsed, fr.Parse.Failed, fr.Parse.Outlinks, pr.Parsed, pr.Failed, pr.Outlinks)
	}
	t.Logf("fetched %d, parsed %d, failed %d, %d outlinks", fr.Fetched, pr.Parsed, pr.Failed, pr.Outlinks)
}

// TestParseMapSideEqualsShuffle parses one segment with the map-side join
// and with the reduce-side one: the same rows and counters, over pages
// that make the joins differ if they can: content without a crawl_fetch
// row, a successful fetch without content, a URL's content twice, content
// of a failed fetch, a truncated page, and more pages than a batch.
func TestParseMapSideEqualsShuffle(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var fs []segment.Fetch
	var cs []segment.Content
	for i := range 3*parseBatch + 7 {
		url := fmt.Sprintf("http://h%d.example/p%d", i%5, i)
		body := fmt.Sprintf("<title>P%d</title><p>text %d</p><a href=\"/n%d\">next</a><a href=\"http://x%d.example/\">x</a>", i, i, i+1, i%3)
		f, c := fetched(url, 1+float32(i)/7, at, "text/html", body)
		switch i % 17 {
		case 1:
			fs = append(fs, f) // no content
			continue
		case 2:
			cs = append(cs, c) // no crawl_fetch row
			continue
		case 3:
			cs = append(cs, c) // content twice
		case 4:
			f.Status = crawldb.StatusFetchGone
		case 5:
			c.Truncated = true
		}
		fs = append(fs, f)
		cs = append(cs, c)
	}
	slices.SortFunc(fs, func(a, b segment.Fetch) int { return cmp.Compare(a.URL, b.URL) })
	run := func(mapSide bool) (parseOutputs, map[string]int64) {
		env := testEnv(t)
		seg := testSegment(t, env, fs, cs)
		fsys := storage.NewLocal()
		ok, err := mapSideParts(fsys, seg)
		if err != nil || !ok {
			t.Fatalf("mapSideParts of a segment with content and crawl_fetch parts of the same names: %v, %v", ok, err)
		}
		filters, err := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}.spec(env.resolver())
		if err != nil {
			t.Fatal(err)
		}
		job := planParse(env, seg, ParseOptions{Segment: seg, Reducers: 2, Signature: parser.SignatureTextProfile}, filters)
		job.MapSide = mapSide
		jr, err := env.Run(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		return sortedParse(readParse(t, seg)), jr.Counters.Snapshot()[JobParse]
	}
	side, sideCtrs := run(true)
	shuffled, shuffleCtrs := run(false)
	if len(side.data) <= 2*parseBatch || !reflect.DeepEqual(side, shuffled) {
		t.Errorf("map-side parse wrote %d parse_data rows, the shuffle %d, or the rows differ", len(side.data), len(shuffled.data))
		diffParse(t, side, shuffled)
	}
	if !reflect.DeepEqual(sideCtrs, shuffleCtrs) {
		t.Errorf("counters: map-side %v, shuffle %v", sideCtrs, shuffleCtrs)
	}
	for _, c := range []string{ctrDupContent, ctrNoContent, ctrSkipNoFetch, ctrSkipTruncated, ctrSkipStatus + crawldb.StatusFetchGone.String()} {
		if sideCtrs[c] == 0 {
			t.Errorf("counter %s is 0: the test lacks the case", c)
		}
	}
}

// diffParse reports the first difference of each output.
func diffParse(t *testing.T, a, b parseOutputs) {
	t.Helper()
	t.Logf("rows: parse_data %d and %d, parse_text %d and %d, crawl_parse %d and %d",
		len(a.data), len(b.data), len(a.text), len(b.text), len(a.updates), len(b.updates))
	for i := range min(len(a.data), len(b.data)) {
		if !reflect.DeepEqual(a.data[i], b.data[i]) {
			t.Errorf("parse_data:\n%+v\n%+v", a.data[i], b.data[i])
			break
		}
	}
	for i := range min(len(a.text), len(b.text)) {
		if !reflect.DeepEqual(a.text[i], b.text[i]) {
			t.Errorf("parse_text:\n%+v\n%+v", a.text[i], b.text[i])
			break
		}
	}
	for i := range min(len(a.updates), len(b.updates)) {
		if !reflect.DeepEqual(a.updates[i], b.updates[i]) {
			t.Errorf("crawl_parse:\n%+v\n%+v", a.updates[i], b.updates[i])
			break
		}
	}
}
