package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
)

var defaultSched = ScheduleOptions{Name: "default"}

// fetchOf is the crawl_fetch row of fetching a fetch-list datum.
func fetchOf(g segment.Generate, status crawldb.Status, at time.Time) segment.Fetch {
	f := segment.Fetch{URL: g.URL, Status: status, FetchTime: at, Datum: g}
	switch status {
	case crawldb.StatusFetchSuccess:
		f.HTTPStatus, f.ContentType = 200, "text/html"
	case crawldb.StatusFetchNotModified:
		f.HTTPStatus = 304
	case crawldb.StatusFetchRetry:
		f.HTTPStatus = 503
	case crawldb.StatusFetchGone:
		f.HTTPStatus = 404
	case crawldb.StatusFetchRedirPerm:
		f.HTTPStatus = 301
	}
	return f
}

func sigUpdate(url, sig string, at time.Time, words int32) segment.ParseUpdate {
	return segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature, Signature: []byte(sig), FetchTime: at,
		Features: crawldb.Features{Words: words, Outlinks: 2, Depth: 0, Bytes: 1000}}
}

func linkUpdate(from, to string, cash float32, at time.Time) segment.ParseUpdate {
	return segment.ParseUpdate{URL: to, Status: crawldb.StatusLinked, FromURL: from, Anchor: "x", Score: cash, FetchTime: at}
}

// generateOne injects seeds and generates one segment with all of them.
func generateOne(t *testing.T, env Env, now time.Time, seeds string) (*GenerateResult, map[string]segment.Generate) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, p, seeds)
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{p}, Now: now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	gen, err := Generate(context.Background(), env, GenerateOptions{Now: now, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	byURL := map[string]segment.Generate{}
	for _, ds := range fetchList(t, gen.Segment) {
		for _, d := range ds {
			byURL[d.URL] = d
		}
	}
	return gen, byURL
}

// TestUpdateDBEndToEnd merges a hand-written segment whose crawl_parse
// carries the links in the page's row (as parse writes them), and again
// with a StatusLinked row per link (Nutch's form): the same CrawlDB.
func TestUpdateDBEndToEnd(t *testing.T) {
	for _, rowPerLink := range []bool{false, true} {
		t.Run(fmt.Sprintf("row per link %v", rowPerLink), func(t *testing.T) { testUpdateDBEndToEnd(t, rowPerLink) })
	}
}

func testUpdateDBEndToEnd(t *testing.T, rowPerLink bool) {
	env := testEnv(t)
	now := genNow()
	gen, fl := generateOne(t, env, now, "http://a.example/\nhttp://b.example/\tscore=2\nhttp://c.example/\nhttp://d.example/\n")
	if len(fl) != 4 {
		t.Fatalf("fetch list %v", fl)
	}
	ft := now.Add(time.Hour)
	redir := fetchOf(fl["http://b.example/"], crawldb.StatusFetchRedirPerm, ft)
	redir.RedirectURL = "http://b.example/new"
	writeSegmentStage(t, gen.Segment, segment.DirFetch, []segment.Fetch{
		fetchOf(fl["http://a.example/"], crawldb.StatusFetchSuccess, ft),
		redir,
		fetchOf(fl["http://c.example/"], crawldb.StatusFetchRetry, ft),
		fetchOf(fl["http://d.example/"], crawldb.StatusFetchGone, ft),
	})
	cash := OPICLinkCash(1, 2)
	page := sigUpdate("http://a.example/", "sig-a", ft, 300)
	page.Score, page.Links = cash, []segment.ParseLink{{URL: "http://a.example/x", Anchor: "x"}, {URL: "http://b.example/", Anchor: "x"}}
	rows := []segment.ParseUpdate{page}
	if rowPerLink {
		rows = append([]segment.ParseUpdate{sigUpdate("http://a.example/", "sig-a", ft, 300)}, page.Linked()...)
		if want := linkUpdate("http://a.example/", "http://a.example/x", cash, ft); !reflect.DeepEqual(rows[1], want) {
			t.Fatalf("Linked() %+v, want %+v", rows[1], want)
		}
	}
	writeSegmentStage(t, gen.Segment, segment.DirCrawlParse, rows)
	updNow := now.Add(2 * time.Hour)
	res, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}, Now: updNow, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if len(db) != 6 || res.Rows != 6 || res.Fetched != 4 || res.Added != 2 {
		t.Fatalf("rows %d (result %d), fetched %d, added %d; want 6, 4, 2", len(db), res.Rows, res.Fetched, res.Added)
	}
	wantStatus := map[string]int64{"db_fetched": 1, "db_redir_perm": 1, "db_unfetched": 3, "db_gone": 1}
	if !reflect.DeepEqual(res.StatusCounts, wantStatus) {
		t.Errorf("status counts %v, want %v", res.StatusCounts, wantStatus)
	}
	type want struct {
		status    crawldb.Status
		score     float32
		fetchTime time.Time
		retries   int32
		sig       string
	}
	def := time.Duration(30*day) * time.Second
	for url, w := range map[string]want{
		"http://a.example/":    {crawldb.StatusDBFetched, 1, ft.Add(def), 0, "sig-a"},
		"http://b.example/":    {crawldb.StatusDBRedirPerm, 2 + cash, ft.Add(def), 0, ""},
		"http://c.example/":    {crawldb.StatusDBUnfetched, 1, ft.Add(24 * time.Hour), 1, ""},
		"http://d.example/":    {crawldb.StatusDBGone, 1, ft.Add(def * 3 / 2), 0, ""},
		"http://a.example/x":   {crawldb.StatusDBUnfetched, cash, updNow, 0, ""},
		"http://b.example/new": {crawldb.StatusDBUnfetched, 0, updNow, 0, ""}, // a redirect passes no cash
	} {
		d, ok := db[url]
		if !ok {
			t.Errorf("%s missing from the CrawlDB", url)
			continue
		}
		if d.Status != w.status || d.Score != w.score || !d.FetchTime.Equal(w.fetchTime) || d.Retries != w.retries || string(d.Signature) != w.sig {
			t.Errorf("%s: status %v score %v fetch %v retries %d sig %q\nwant %v %v %v %d %q", url,
				d.Status, d.Score, d.FetchTime, d.Retries, d.Signature, w.status, w.score, w.fetchTime, w.retries, w.sig)
		}
		if !d.GenerateTime.IsZero() {
			t.Errorf("%s keeps a generate time", url)
		}
	}
	a := db["http://a.example/"]
	if a.FetchCount != 1 || a.Features.Words != 300 || a.HTTPStatus != 200 || a.ContentType != "text/html" || !a.PrevFetchTime.Equal(ft) {
		t.Errorf("a: %+v", a)
	}
	if x := db["http://a.example/x"]; x.Features.Inlinks != 1 || x.Host != "a.example" || x.ClusterID != -1 {
		t.Errorf("a/x: %+v", x)
	}
	if !dirExists(filepath.Join(gen.Segment, UpdatedMarker)) {
		t.Error("segment not marked as merged")
	}
	// Merging it again is refused.
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}}); err == nil || !strings.Contains(err.Error(), "already merged") {
		t.Errorf("second merge of a segment: %v", err)
	}
}

// writeManySegments writes a CrawlDB of two URLs and two segments that
// both fetched u1 and link to u2 and to a new URL.
func writeManySegments(t *testing.T, env Env, now time.Time) []string {
	t.Helper()
	u1, u2, n1 := "http://s.example/1", "http://s.example/2", "http://t.example/new"
	d1 := mkDatum(u1, 1, now, crawldb.StatusDBFetched)
	d1.Signature = []byte("v1")
	d2 := mkDatum(u2, 0.5, now.Add(time.Hour), crawldb.StatusDBUnfetched)
	writeDB(t, env, []crawldb.Datum{d1, d2}, 2)
	t1, t2 := now.Add(time.Hour), now.Add(2*time.Hour)
	s1 := filepath.Join(env.Crawl, "segments", "20260101000000")
	s2 := filepath.Join(env.Crawl, "segments", "20260102000000")
	writeSegmentStage(t, s1, segment.DirGenerate, []segment.Generate{d1})
	writeSegmentStage(t, s1, segment.DirFetch, []segment.Fetch{fetchOf(d1, crawldb.StatusFetchSuccess, t1)})
	writeSegmentStage(t, s1, segment.DirCrawlParse, []segment.ParseUpdate{
		sigUpdate(u1, "v2", t1, 10), linkUpdate(u1, u2, 0.25, t1), linkUpdate(u1, n1, 0.1, t1)})
	writeSegmentStage(t, s2, segment.DirGenerate, []segment.Generate{d1})
	writeSegmentStage(t, s2, segment.DirFetch, []segment.Fetch{fetchOf(d1, crawldb.StatusFetchNotModified, t2)})
	// s2 was not parsed: no crawl_parse. Links come from a third segment.
	s3 := filepath.Join(env.Crawl, "segments", "20260103000000")
	writeSegmentStage(t, s3, segment.DirFetch, []segment.Fetch{})
	writeSegmentStage(t, s3, segment.DirCrawlParse, []segment.ParseUpdate{
		linkUpdate("http://o.example/", u2, 0.5, t2), linkUpdate("http://o.example/", n1, 0.2, t2)})
	return []string{s1, s2, s3}
}

func TestUpdateDBManySegments(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var dbs []map[string]crawldb.Datum
	for run := 0; run < 2; run++ {
		env := testEnv(t)
		localRunner(env).Parallelism = 1 + run*3
		env.DBParts = 1 + run*4
		segs := writeManySegments(t, env, now)
		res, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched})
		if err != nil {
			t.Fatal(err)
		}
		if res.Fetched != 1 || res.Added != 1 || res.Rows != 3 {
			t.Errorf("fetched %d added %d rows %d", res.Fetched, res.Added, res.Rows)
		}
		for _, s := range segs {
			if !dirExists(filepath.Join(s, UpdatedMarker)) {
				t.Errorf("%s not marked", s)
			}
		}
		dbs = append(dbs, readDB(t, env))
	}
	db := dbs[0]
	// u1: the later fetch (a 304 in s2) wins.
	u1 := db["http://s.example/1"]
	if u1.Status != crawldb.StatusDBNotModified || string(u1.Signature) != "v1" || u1.FetchCount != 1 {
		t.Errorf("u1: %+v", u1)
	}
	// u2 and the new URL gain the cash of both segments' links.
	if u2 := db["http://s.example/2"]; u2.Score != 1.25 || u2.Features.Inlinks != 2 {
		t.Errorf("u2: score %v inlinks %d, want 1.25 and 2", u2.Score, u2.Features.Inlinks)
	}
	if n := db["http://t.example/new"]; n.Score != float32(float64(float32(0.1))+float64(float32(0.2))) || n.Status != crawldb.StatusDBUnfetched {
		t.Errorf("new URL: %+v", n)
	}
	if !reflect.DeepEqual(dbs[0], dbs[1]) {
		t.Error("the same update with other parallelism and parts gave another CrawlDB")
	}
}

func TestUpdateDBNoAdditionsAndPurge(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	env := testEnv(t)
	segs := writeManySegments(t, env, now)
	gone := mkDatum("http://g.example/", 1, now, crawldb.StatusDBGone)
	rows := []crawldb.Datum{gone}
	for _, d := range readDB(t, env) {
		rows = append(rows, d)
	}
	os.RemoveAll(filepath.Join(env.Crawl, "crawldb"))
	writeDB(t, env, rows, 1)
	res, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, NoAdditions: true, PurgeGone: true, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if _, ok := db["http://t.example/new"]; ok {
		t.Error("NoAdditions added a URL")
	}
	if _, ok := db["http://g.example/"]; ok {
		t.Error("PurgeGone kept a gone URL")
	}
	if len(db) != 2 || res.Counters.Get(jobUpdateDB, ctrAdditionsRefused) != 1 || res.Counters.Get(jobUpdateDB, ctrPurgedGone) != 1 {
		t.Errorf("rows %d, counters %v", len(db), res.Counters.Snapshot()[jobUpdateDB])
	}
}

func TestUpdateDBFilters(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	env := testEnv(t)
	segs := writeManySegments(t, env, now)
	rules := filepath.Join(t.TempDir(), "rules.txt")
	writeFile(t, rules, "-^http://t\\.example/\n-/2$\n+.\n")
	res, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched,
		Filters: URLFilterOptions{RegexFiles: []string{rules}}})
	if err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if len(db) != 1 || db["http://s.example/1"].URL == "" {
		t.Errorf("CrawlDB after filtering: %v", db)
	}
	if n := res.Counters.Get(jobUpdateDB, "filtered_regex:"+rules+":2"); n != 3 {
		t.Errorf("rule 2 rejected %d records, want 3 (the row and two links)", n)
	}
}

func TestUpdateDBFailureKeepsCrawlDB(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	env := testEnv(t)
	segs := writeManySegments(t, env, now)
	before := readDB(t, env)
	dbDir := filepath.Join(env.Crawl, "crawldb")
	listDB := func() []string {
		entries, _ := os.ReadDir(dbDir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	namesBefore := listDB()

	// A corrupt crawl_parse part.
	bad := filepath.Join(segs[2], segment.DirCrawlParse, "part-r-00001.parquet")
	writeFile(t, bad, "PAR1 this is not parquet PAR1")
	_, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now})
	if err == nil || !strings.Contains(err.Error(), "part-r-00001.parquet") {
		t.Fatalf("corrupt input: err %v, want one naming the file", err)
	}
	os.Remove(bad)
	// A segment that was not fetched.
	unfetched := filepath.Join(env.Crawl, "segments", "20260104000000")
	writeSegmentStage(t, unfetched, segment.DirGenerate, []segment.Generate{})
	_, err = UpdateDB(context.Background(), env, UpdateOptions{Segments: append(segs, unfetched), Now: now})
	if err == nil || !strings.Contains(err.Error(), "20260104000000") || !strings.Contains(err.Error(), segment.DirFetch) {
		t.Errorf("unfetched segment: %v", err)
	}
	// Cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := UpdateDB(ctx, env, UpdateOptions{Segments: segs, Now: now}); err == nil {
		t.Error("cancelled updatedb succeeded")
	}

	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Error("a failed updatedb changed the CrawlDB")
	}
	if names := listDB(); !reflect.DeepEqual(names, namesBefore) {
		t.Errorf("a failed updatedb left %v in the CrawlDB directory (before: %v)", names, namesBefore)
	}
	for _, s := range segs {
		if dirExists(filepath.Join(s, UpdatedMarker)) {
			t.Errorf("%s marked by a failed updatedb", s)
		}
	}
	// And a good run still works.
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now}); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateDBMarkerRollForward simulates a crash after the new CrawlDB was
// installed but before the segments were marked merged: the next job that
// takes the lock writes the markers, so the segments are neither held back
// nor merged (and their link cash counted) twice.
func TestUpdateDBMarkerRollForward(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	env := testEnv(t)
	segs := writeManySegments(t, env, now)
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	before := readDB(t, env)
	for _, s := range segs {
		if err := os.Remove(filepath.Join(s, UpdatedMarker)); err != nil {
			t.Fatal(err)
		}
	}
	// Any job holding the lock repairs it; generate finds the segments'
	// URLs no longer pending.
	_, err := Generate(context.Background(), env, GenerateOptions{Now: now, Schedule: defaultSched})
	if err != nil && !errors.Is(err, ErrNothingDue) {
		t.Fatal(err)
	}
	for _, s := range segs {
		if !dirExists(filepath.Join(s, UpdatedMarker)) {
			t.Errorf("%s: marker not rolled forward", s)
		}
	}
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched}); err == nil {
		t.Error("a segment merged before the crash was merged again")
	}
	if after := readDB(t, env); !reflect.DeepEqual(before, after) {
		t.Error("the CrawlDB changed")
	}
}

func TestUpdateOptionsValidate(t *testing.T) {
	good := UpdateOptions{Segments: []string{"/c/segments/1", "/c/segments/2/"}, RetryMax: 2, MaxInlinks: 5}
	if err := good.Validate(); err != nil {
		t.Fatalf("%+v: %v", good, err)
	}
	if err := (UpdateOptions{NoInlinkLimit: true}).Validate(); err != nil {
		t.Errorf("zero options with no inlink limit: %v", err)
	}
	for _, bad := range []func(o *UpdateOptions){
		func(o *UpdateOptions) { o.Segments = append(o.Segments, "/c/segments/1/") },
		func(o *UpdateOptions) { o.Segments = append(o.Segments, "") },
		func(o *UpdateOptions) { o.RetryMax = -1 },
		func(o *UpdateOptions) { o.MaxInlinks = -1 },
		func(o *UpdateOptions) { o.NoInlinkLimit = true },
		func(o *UpdateOptions) { o.Schedule.Name = "weekly" },
	} {
		o := good
		o.Segments = slices.Clone(good.Segments)
		bad(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
		if _, err := UpdateDB(context.Background(), testEnv(t), o); err == nil {
			t.Errorf("UpdateDB ran with %+v", o)
		}
	}
	if _, err := UpdateDB(context.Background(), testEnv(t), UpdateOptions{}); err == nil {
		t.Error("UpdateDB ran without segments")
	}
}

// TestUpdateDBSpecRoundTrip: the updatedb spec, every field set, comes out
// of its JSON (as a Hadoop Streaming task decodes it) as it went in.
func TestUpdateDBSpecRoundTrip(t *testing.T) {
	spec := updateDB{
		Current: "hdfs://nn/c/crawldb/current", Out: "hdfs://nn/c/crawldb/_tmp-1", Parts: 3,
		Segments:    []segmentInput{{Fetch: "s1/crawl_fetch", Parse: "s1/crawl_parse"}, {Fetch: "s2/crawl_fetch"}},
		Now:         time.Date(2026, 1, 5, 1, 2, 3, 4, time.UTC),
		NoAdditions: true, RetryMax: 4, MaxInlinks: 7, PurgeGone: true,
		Filters:        filterSpec{Schemes: []string{"http"}, MaxLength: 100, Regex: []regexSpec{{Name: "r", Rules: "-x\n+."}}},
		Schedule:       ScheduleOptions{Name: "dynamic"}.resolved(),
		Clusters:       &clusterApply{Result: "hdfs://nn/c/clusters/20260101000000", AnyChanges: true},
		ClusterPeriods: crawldb.ClusterPeriods{0: time.Hour, 3: 49 * time.Hour},
	}
	checkRoundTrip(t, spec)
}

// parquetLeaves lists the Parquet leaf columns of struct type t as
// "path kind" strings: nested structs and lists of structs are walked,
// time.Time is a leaf.
func parquetLeaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]():
			out = append(out, parquetLeaves(ft, prefix+name+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, parquetLeaves(ft.Elem(), prefix+name+"[].")...)
		default:
			out = append(out, prefix+name+" "+ft.String()+" "+f.Tag.Get("parquet"))
		}
	}
	return out
}

// TestParseRowColumns checks that updatedb's parseRow reads every column
// of a crawl_parse row but the anchors, with the same types and tags: a
// column added to segment.ParseUpdate must be added to parseRow (and
// parseRow.update) or named here.
func TestParseRowColumns(t *testing.T) {
	var want []string
	for _, c := range parquetLeaves(reflect.TypeFor[segment.ParseUpdate](), "") {
		if !strings.HasPrefix(c, "anchor ") && !strings.HasPrefix(c, "links[].anchor ") {
			want = append(want, c)
		}
	}
	got := parquetLeaves(reflect.TypeFor[parseRow](), "")
	if !slices.Equal(got, want) {
		t.Errorf("parseRow columns:\n%s\nwant (segment.ParseUpdate's but the anchors):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParseRowRead writes crawl_parse rows with every field set and
// checks what updatedb reads of them: the rows without their anchors, and
// as the shuffle carries a signature row (parseRow.update), all but its
// URL, anchor and links.
func TestParseRowRead(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rows := []segment.ParseUpdate{{
		URL: "http://a.example/", Status: crawldb.StatusSignature, FromURL: "http://from.example/",
		Anchor: "page anchor", Score: 0.5, Signature: []byte{1, 2, 3},
		Features:  crawldb.Features{Words: 1, Outlinks: 2, Inlinks: 3, Images: 4, Depth: 5, Bytes: 6},
		FetchTime: at, Relevance: 0.25, OffTopic: true, OffTopicHops: 2,
		Links: []segment.ParseLink{{URL: "http://b.example/", Anchor: "b", Relevance: 0.75}, {URL: "http://c.example/", Anchor: "c"}},
	}, {
		URL: "http://d.example/", Status: crawldb.StatusLinked, FromURL: "http://a.example/", Anchor: "d",
		Score: 0.125, FetchTime: at, Relevance: 0.5, OffTopicHops: 1,
	}}
	p := filepath.Join(t.TempDir(), "part-m-00000.parquet")
	writeParquet(t, p, rows)
	got := readParts[parseRow](t, filepath.Dir(p))
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(got), len(rows))
	}
	for i, r := range rows {
		g := got[i]
		if g.URL != r.URL || len(g.Links) != len(r.Links) {
			t.Fatalf("row %d: read %+v, want %+v", i, g, r)
		}
		for j, l := range r.Links {
			if g.Links[j] != (parseRowLink{URL: l.URL, Relevance: l.Relevance}) {
				t.Errorf("row %d link %d: read %+v, want %+v", i, j, g.Links[j], l)
			}
		}
		want := r
		want.URL, want.Anchor, want.Links = "", "", nil
		if u := g.update(); !reflect.DeepEqual(*u, want) {
			t.Errorf("row %d: shuffled as\n%+v\nwant\n%+v", i, *u, want)
		}
	}
}
