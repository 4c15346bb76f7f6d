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
	slices.SortFunc(p.updates, func(a, b segment.ParseUpdate) int {
		return cmp.Compare(fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b))
	})
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
