package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/urlutil"
)

// segRow is one row of one part of a segment: the page it belongs to
// (mergesegs' key) and its JSON.
type segRow struct {
	key, json string
}

// readSegPart reads one part of a segment as segRows (none if the part
// is absent).
func readSegPart(t *testing.T, seg, part string) []segRow {
	t.Helper()
	dir := filepath.Join(seg, part)
	if !dirExists(dir) {
		return nil
	}
	var out []segRow
	add := func(key string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, segRow{key, string(b)})
	}
	switch part {
	case segment.DirGenerate:
		for _, r := range readParts[segment.Generate](t, dir) {
			add(r.URL, r)
		}
	case segment.DirFetch:
		for _, r := range readParts[segment.Fetch](t, dir) {
			add(r.URL, r)
		}
	case segment.DirContent:
		for _, r := range readParts[segment.Content](t, dir) {
			add(r.URL, r)
		}
	case segment.DirParseData:
		for _, r := range readParts[segment.ParseData](t, dir) {
			add(r.URL, r)
		}
	case segment.DirParseText:
		for _, r := range readParts[segment.ParseText](t, dir) {
			add(r.URL, r)
		}
	case segment.DirCrawlParse:
		for _, r := range readParts[segment.ParseUpdate](t, dir) {
			add(parsePage(r), r)
		}
	}
	return out
}

// segRows reads every part of a segment.
func segRows(t *testing.T, seg string) map[string][]segRow {
	t.Helper()
	m := map[string][]segRow{}
	for _, p := range segment.RecordDirs() {
		m[p] = readSegPart(t, seg, p)
	}
	return m
}

// expectedMerge applies SegmentMerger's rule, as MergeSegments documents
// it, to the rows of segs (oldest first): for each URL, the rows of the
// newest segment whose crawl_fetch holds a kept fetch of it, else of the
// newest segment holding it. It returns the rows by part and, per URL,
// the index of the winning segment.
func expectedMerge(t *testing.T, segs []map[string][]segRow) (map[string][]string, map[string]int) {
	t.Helper()
	present := map[string]map[int]bool{}
	kept := map[string]map[int]bool{}
	mark := func(m map[string]map[int]bool, k string, i int) {
		if m[k] == nil {
			m[k] = map[int]bool{}
		}
		m[k][i] = true
	}
	for i, rows := range segs {
		for _, p := range segment.RecordDirs() {
			for _, r := range rows[p] {
				mark(present, r.key, i)
				if p != segment.DirFetch {
					continue
				}
				var f segment.Fetch
				if err := json.Unmarshal([]byte(r.json), &f); err != nil {
					t.Fatal(err)
				}
				switch f.Status {
				case crawldb.StatusFetchSuccess, crawldb.StatusFetchRedirPerm, crawldb.StatusFetchRedirTemp,
					crawldb.StatusFetchGone, crawldb.StatusFetchRobotsDenied:
					mark(kept, r.key, i)
				}
			}
		}
	}
	winner := map[string]int{}
	for k, in := range present {
		from := in
		if len(kept[k]) > 0 {
			from = kept[k]
		}
		w := -1
		for i := range from {
			w = max(w, i)
		}
		winner[k] = w
	}
	want := map[string][]string{}
	for i, rows := range segs {
		for _, p := range segment.RecordDirs() {
			for _, r := range rows[p] {
				if winner[r.key] == i {
					want[p] = append(want[p], r.json)
				}
			}
		}
	}
	for _, p := range segment.RecordDirs() {
		slices.Sort(want[p])
	}
	return want, winner
}

// mergeCrawl crawls a small synthetic web with failing hosts and
// redirects for three rounds a day apart with a 12-hour interval, so that
// most pages are fetched in two or three rounds. It returns the env, a
// copy of the CrawlDB as inject left it (before any updatedb), the
// segments oldest first and the schedule.
func mergeCrawl(t *testing.T) (Env, string, []string, ScheduleOptions) {
	t.Helper()
	env := testEnv(t)
	web, err := simweb.New(simweb.Config{Seed: 5, Hosts: 8, Pages: 120, Hazards: simweb.HazardFailingHosts | simweb.HazardTraps})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, strings.Join(srv.Seeds(), "\n")+"\n")
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o := testCrawlOptions(srv, seeds, 3, t0)
	cfg := crawldb.DefaultScheduleConfig()
	cfg.DefaultInterval = 12 * time.Hour
	sched := ScheduleOptions{Name: "default", Config: cfg}
	o.Generate.Schedule, o.Update.Schedule = sched, sched
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: t0, Schedule: sched}); err != nil {
		t.Fatal(err)
	}
	db0 := filepath.Join(t.TempDir(), "crawldb0")
	if err := os.CopyFS(db0, os.DirFS(filepath.Join(env.Crawl, "crawldb"))); err != nil {
		t.Fatal(err)
	}
	o.Seeds = nil
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range segmentNames(t, env) {
		segs = append(segs, filepath.Join(env.Crawl, "segments", n))
	}
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	return env, db0, segs, sched
}

// sortedJSON returns rows' JSON, sorted.
func sortedJSON(rows []segRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.json
	}
	slices.Sort(out)
	return out
}

// TestMergeSegmentsNoLossNoDoubles crawls three rounds, merges the three
// segments into one and into slices, and checks every part of the output
// against SegmentMerger's rule applied to the inputs row by row: the
// same rows, each once, per part; the slices hold the same union, each
// URL in one slice and no slice over its size. Then updatedb of the
// merged segment into the CrawlDB as inject left it is compared with the
// crawl's CrawlDB (three updatedbs in order).
func TestMergeSegmentsNoLossNoDoubles(t *testing.T) {
	env, db0, segs, sched := mergeCrawl(t)
	var in []map[string][]segRow
	for _, s := range segs {
		in = append(in, segRows(t, s))
	}
	want, winner := expectedMerge(t, in)

	// The crawl must have made the cases the merge has to get right.
	segsOf := map[string]int{}
	statuses := map[crawldb.Status]int{}
	parsed := map[string]bool{}
	for _, rows := range in {
		seen := map[string]bool{}
		for _, r := range rows[segment.DirFetch] {
			var f segment.Fetch
			_ = json.Unmarshal([]byte(r.json), &f)
			statuses[f.Status]++
			if !seen[r.key] {
				segsOf[r.key]++
				seen[r.key] = true
			}
		}
		for _, r := range rows[segment.DirParseData] {
			parsed[r.key] = true
		}
	}
	multi, olderWins := 0, 0
	for u, n := range segsOf {
		if n > 1 {
			multi++
		}
		if n > 1 && winner[u] < len(segs)-1 {
			// Fetched in the last segment but kept from an older one?
			for _, r := range in[len(segs)-1][segment.DirFetch] {
				if r.key == u {
					olderWins++
					break
				}
			}
		}
	}
	unparsed := 0
	for u := range segsOf {
		if !parsed[u] {
			unparsed++
		}
	}
	t.Logf("fetch statuses %v; %d URLs fetched in 2+ segments, %d of them kept from an older segment than their last fetch; %d URLs without a parse",
		statuses, multi, olderWins, unparsed)
	if multi < 20 || statuses[crawldb.StatusFetchRedirPerm]+statuses[crawldb.StatusFetchRedirTemp] == 0 ||
		statuses[crawldb.StatusFetchRetry]+statuses[crawldb.StatusFetchGone] == 0 || unparsed == 0 {
		t.Fatalf("the crawl lacks the cases to test: statuses %v, %d multi, %d unparsed", statuses, multi, unparsed)
	}

	out := filepath.Join(t.TempDir(), "merged")
	res, err := MergeSegments(context.Background(), env, MergeSegmentsOptions{OutDir: out, Segments: segs,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Segments) != 1 || res.URLs[0] != int64(len(winner)) || len(res.Skipped) != 0 || !res.Merged {
		t.Fatalf("result: %+v (want one segment of %d URLs, all parts, merged)", res, len(winner))
	}
	merged := filepath.Join(out, "20260201000000")
	for _, p := range segment.RecordDirs() {
		got := sortedJSON(readSegPart(t, merged, p))
		if !slices.Equal(got, want[p]) {
			t.Errorf("%s: %d rows merged, want %d (or the rows differ)", p, len(got), len(want[p]))
		}
		total := 0
		for _, rows := range in {
			total += len(rows[p])
		}
		if res.RowsIn[p] != int64(total) || res.RowsOut[p] != int64(len(want[p])) || res.RowsOlder[p] != int64(total-len(want[p])) {
			t.Errorf("%s counters: in %d out %d older %d; want %d, %d, %d", p, res.RowsIn[p], res.RowsOut[p], res.RowsOlder[p],
				total, len(want[p]), total-len(want[p]))
		}
		t.Logf("%s: %d rows in, %d merged", p, total, len(want[p]))
	}
	// A page's rows agree: its content, parse signature and fetch are
	// of one fetch.
	fetchAt := map[string]time.Time{}
	for _, f := range readParts[segment.Fetch](t, filepath.Join(merged, segment.DirFetch)) {
		if _, dup := fetchAt[f.URL]; dup {
			t.Errorf("%s fetched twice in the merge", f.URL)
		}
		fetchAt[f.URL] = f.FetchTime
	}
	for _, c := range readParts[segment.Content](t, filepath.Join(merged, segment.DirContent)) {
		if !c.FetchTime.Equal(fetchAt[c.URL]) {
			t.Errorf("%s: content of %s, fetch of %s", c.URL, c.FetchTime, fetchAt[c.URL])
		}
	}
	sigs := 0
	for _, p := range readParts[segment.ParseUpdate](t, filepath.Join(merged, segment.DirCrawlParse)) {
		if p.Status == crawldb.StatusSignature {
			sigs++
			if !p.FetchTime.Equal(fetchAt[p.URL]) {
				t.Errorf("%s: parse of the fetch of %s, fetch of %s", p.URL, p.FetchTime, fetchAt[p.URL])
			}
		}
	}
	if sigs == 0 {
		t.Error("no parse signature in the merge")
	}
	st, err := segment.Inspect(storageLocal(), merged)
	if err != nil || st.State != segment.StateMerged || len(st.Published) != 6 || len(st.Partial) != 0 {
		t.Errorf("merged segment state %+v, %v", st, err)
	}
	for _, s := range segs {
		if dirExists(filepath.Join(s, segment.LockFile)) {
			t.Errorf("input %s still locked", s)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("output directory holds %v", ents)
	}

	// Slices: at most N URLs each, every URL in one, the same rows.
	const n = 40
	sliced := filepath.Join(t.TempDir(), "sliced")
	sres, err := MergeSegments(context.Background(), env, MergeSegmentsOptions{OutDir: sliced, Segments: segs, Slice: n,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if want := (len(winner) + n - 1) / n; len(sres.Segments) != want {
		t.Errorf("%d slices, want %d", len(sres.Segments), want)
	}
	union := map[string][]string{}
	sliceOf := map[string]int{}
	for i, s := range sres.Segments {
		keys := map[string]bool{}
		for _, p := range segment.RecordDirs() {
			for _, r := range readSegPart(t, s, p) {
				union[p] = append(union[p], r.json)
				keys[r.key] = true
			}
		}
		if len(keys) > n || int64(len(keys)) != sres.URLs[i] {
			t.Errorf("slice %s: %d URLs (reported %d), at most %d allowed", s, len(keys), sres.URLs[i], n)
		}
		for k := range keys {
			if j, dup := sliceOf[k]; dup {
				t.Errorf("%s in slices %d and %d", k, j, i)
			}
			sliceOf[k] = i
		}
	}
	for _, p := range segment.RecordDirs() {
		slices.Sort(union[p])
		if !slices.Equal(union[p], want[p]) {
			t.Errorf("slices' %s: %d rows, want %d (or the rows differ)", p, len(union[p]), len(want[p]))
		}
	}

	compareUpdates(t, env, db0, merged, sched, olderWins)

	// --filter: a host's rows and the links to it are dropped, nothing
	// else changes.
	var keys []string
	for k := range winner {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	host := urlutil.Host(keys[len(keys)/2])
	rules := filepath.Join(t.TempDir(), "rules.txt")
	writeFile(t, rules, "-^http://"+strings.ReplaceAll(host, ".", `\.`)+"[:/]\n+.\n")
	filtered := filepath.Join(t.TempDir(), "filtered")
	fres, err := MergeSegments(context.Background(), env, MergeSegmentsOptions{OutDir: filtered, Segments: segs,
		Filters: URLFilterOptions{RegexFiles: []string{rules}}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	dropped, linksDropped := false, int64(0)
	for _, p := range segment.RecordDirs() {
		var wantKept []string
		for _, j := range want[p] {
			var r struct {
				URL     string `json:"URL"`
				FromURL string `json:"FromURL"`
			}
			if err := json.Unmarshal([]byte(j), &r); err != nil {
				t.Fatal(err)
			}
			if urlutil.Host(r.URL) == host || r.FromURL != "" && urlutil.Host(r.FromURL) == host {
				dropped = true
				continue
			}
			if p == segment.DirCrawlParse {
				// The row stays, without its links to the host.
				var u segment.ParseUpdate
				if err := json.Unmarshal([]byte(j), &u); err != nil {
					t.Fatal(err)
				}
				n := len(u.Links)
				u.Links = slices.DeleteFunc(u.Links, func(l segment.ParseLink) bool { return urlutil.Host(l.URL) == host })
				if len(u.Links) < n {
					linksDropped += int64(n - len(u.Links))
					b, err := json.Marshal(u)
					if err != nil {
						t.Fatal(err)
					}
					j = string(b)
				}
			}
			wantKept = append(wantKept, j)
		}
		if got := sortedJSON(readSegPart(t, filepath.Join(filtered, "20260201000000"), p)); !slices.Equal(got, wantKept) {
			t.Errorf("filtered %s: %d rows, want %d", p, len(got), len(wantKept))
		}
		if fres.RowsFiltered[p] == 0 && p == segment.DirFetch {
			t.Errorf("%s: nothing filtered", p)
		}
	}
	if host == "" || !dropped || linksDropped == 0 {
		t.Errorf("the filter of host %q dropped nothing (%d links)", host, linksDropped)
	}
	// The counter counts every input row's links, older rows' too.
	if fres.LinksFiltered < linksDropped {
		t.Errorf("%d crawl_parse links filtered, want at least the %d of the rows kept", fres.LinksFiltered, linksDropped)
	}
}

// compareUpdates runs updatedb of the merged segment into a copy of db0
// (the CrawlDB before any updatedb) and compares it with the crawl's
// CrawlDB, which three updatedbs made. The same URLs, statuses,
// signatures, retries, intervals, metadata and last fetches, but where
// one updatedb of one fetch cannot know what three did:
//
//   - a page fetched twice with the same content is db_notmodified after
//     the second updatedb; the merged segment holds one fetch, compared
//     with no earlier signature: db_fetched;
//   - a page whose last fetch was a 304 (olderWins of them) keeps the
//     older 200 and its content in the merged segment, so its last fetch
//     is that one's;
//   - fetch counts, change histories, OPIC scores and inlink counts add
//     up per updatedb (each round's links pass their cash again);
//   - a URL known only from links is due at the Now of the updatedb
//     that found it.
func compareUpdates(t *testing.T, env Env, db0, merged string, sched ScheduleOptions, olderWins int) {
	t.Helper()
	env2 := testEnv(t)
	if err := os.CopyFS(filepath.Join(env2.Crawl, "crawldb"), os.DirFS(db0)); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateDB(context.Background(), env2, UpdateOptions{Segments: []string{merged}, Remerge: true,
		Schedule: sched, Now: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	seq, one := readDB(t, env), readDB(t, env2)
	if len(seq) != len(one) {
		t.Errorf("CrawlDB sizes: %d after three updatedbs, %d after one of the merged segment", len(seq), len(one))
	}
	notModified, older := 0, 0
	for u, a := range seq {
		b, ok := one[u]
		if !ok {
			t.Errorf("%s only in the sequential CrawlDB", u)
			continue
		}
		switch {
		case a.Status == b.Status:
		case a.Status == crawldb.StatusDBNotModified && b.Status == crawldb.StatusDBFetched:
			notModified++
		default:
			t.Errorf("%s: status %v after three updatedbs, %v after the merged segment's", u, a.Status, b.Status)
		}
		if string(a.Signature) != string(b.Signature) || a.ContentType != b.ContentType || a.Retries != b.Retries ||
			a.FetchInterval != b.FetchInterval || !reflect.DeepEqual(a.Metadata, b.Metadata) || !a.ModifiedTime.Equal(b.ModifiedTime) {
			t.Errorf("%s differs:\n%+v\n%+v", u, a, b)
		}
		switch {
		case a.Status == crawldb.StatusDBUnfetched:
		case a.PrevFetchTime.Equal(b.PrevFetchTime):
			if !a.FetchTime.Equal(b.FetchTime) || a.HTTPStatus != b.HTTPStatus {
				t.Errorf("%s: same last fetch, but due %s and %s, HTTP %d and %d", u, a.FetchTime, b.FetchTime, a.HTTPStatus, b.HTTPStatus)
			}
		case a.Status == crawldb.StatusDBNotModified && b.PrevFetchTime.Before(a.PrevFetchTime) && a.HTTPStatus == 304:
			older++
		default:
			t.Errorf("%s: last fetched %s (%v) after three updatedbs, %s (%v) after the merged segment's", u,
				a.PrevFetchTime, a.Status, b.PrevFetchTime, b.Status)
		}
	}
	if older != olderWins {
		t.Errorf("%d pages last fetched with a 304 take their older fetch, want %d", older, olderWins)
	}
	t.Logf("%d URLs alike but for: %d db_notmodified become db_fetched, %d of them last fetched by the older 200 a 304 confirmed",
		len(seq), notModified, older)
}

// TestMergeSpecsRoundTrip checks that both merges' specs reach a Hadoop
// Streaming task as they left the driver, and that Registry builds them.
func TestMergeSpecsRoundTrip(t *testing.T) {
	checkRoundTrip(t, mergeSegs{Inputs: []string{"a/1", "b/2"}, Parts: []string{segment.DirFetch, segment.DirContent},
		Outs: []string{"o/_merging-1/3", "o/_merging-1/4"}, Slice: 10, Reduces: 1,
		Filters: filterSpec{Schemes: []string{"http"}, MaxLength: 100}})
	checkRoundTrip(t, mergeDB{Inputs: []string{"a/current", "b/current"}, Out: "o/tmp-1", Parts: 3,
		Filters: filterSpec{Regex: []regexSpec{{Name: "r", Rules: "-x\n+."}}}})
}
