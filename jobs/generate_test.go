package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/resolver/resolvertest"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// genNow is the reference time of the generate tests: the wall clock,
// since segment names (and so the pending check) use it.
func genNow() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func mkDatum(url string, score float32, fetchTime time.Time, status crawldb.Status) crawldb.Datum {
	return crawldb.Datum{URL: url, Host: urlutil.Host(url), Status: status, FetchTime: fetchTime,
		FetchInterval: 30 * day, Score: score, ClusterID: -1, Source: crawldb.SourceDefault}
}

// genDB is a CrawlDB of three hosts (two in one domain) with due and
// not-due URLs of several statuses.
func genDB(now time.Time) []crawldb.Datum {
	due, later := now.Add(-time.Hour), now.Add(10*24*time.Hour)
	return []crawldb.Datum{
		mkDatum("http://a.example.com/1", 5, due, crawldb.StatusDBUnfetched),
		mkDatum("http://a.example.com/2", 4, due, crawldb.StatusDBFetched),
		mkDatum("http://a.example.com/3", 3, due, crawldb.StatusDBNotModified),
		mkDatum("http://a.example.com/4", 3, due, crawldb.StatusDBUnfetched), // tie with /3
		mkDatum("http://a.example.com/5", 9, later, crawldb.StatusDBFetched), // not due
		mkDatum("http://b.example.com/1", 4.5, due, crawldb.StatusDBRedirTemp),
		mkDatum("http://b.example.com/2", 1, due, crawldb.StatusDBGone), // gone, but due
		mkDatum("http://b.example.com/3", 8, later, crawldb.StatusDBGone),
		mkDatum("http://c.other.org/1", 3, due, crawldb.StatusDBUnfetched), // ties with a/3 and a/4
		mkDatum("http://c.other.org/2", 2, due, crawldb.StatusDBUnfetched),
		mkDatum("http://c.other.org/3", 0.5, due, crawldb.StatusDBUnfetched),
	}
}

// generated returns the URLs of a fetch list (all parts), in part order.
func generated(t *testing.T, res *GenerateResult) []string {
	t.Helper()
	parts := fetchList(t, res.Segment)
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	var urls []string
	for _, n := range names {
		for _, d := range parts[n] {
			urls = append(urls, d.URL)
		}
	}
	return urls
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func TestGenerateSelection(t *testing.T) {
	now := genNow()
	allDue := []string{"http://a.example.com/1", "http://a.example.com/2", "http://a.example.com/3", "http://a.example.com/4",
		"http://b.example.com/1", "http://b.example.com/2", "http://c.other.org/1", "http://c.other.org/2", "http://c.other.org/3"}
	tests := []struct {
		name string
		o    GenerateOptions
		want []string
	}{
		{name: "all due", o: GenerateOptions{}, want: allDue},
		{name: "topN 4, ties by URL", o: GenerateOptions{TopN: 4},
			want: []string{"http://a.example.com/1", "http://b.example.com/1", "http://a.example.com/2", "http://a.example.com/3"}},
		{name: "topN 5", o: GenerateOptions{TopN: 5},
			want: []string{"http://a.example.com/1", "http://b.example.com/1", "http://a.example.com/2", "http://a.example.com/3", "http://a.example.com/4"}},
		{name: "topN above the due count", o: GenerateOptions{TopN: 100}, want: allDue},
		{name: "topN above the due count, one select reducer", o: GenerateOptions{TopN: 100, SelectReducers: 1}, want: allDue},
		{name: "topN between the due count and the rows", o: GenerateOptions{TopN: 10}, want: allDue},
		{name: "topN equal to the rows", o: GenerateOptions{TopN: 11}, want: allDue},
		{name: "topN 5, one select reducer", o: GenerateOptions{TopN: 5, SelectReducers: 1},
			want: []string{"http://a.example.com/1", "http://b.example.com/1", "http://a.example.com/2", "http://a.example.com/3", "http://a.example.com/4"}},
		{name: "max 2 per host", o: GenerateOptions{MaxPerHost: 2},
			want: []string{"http://a.example.com/1", "http://a.example.com/2", "http://b.example.com/1", "http://b.example.com/2",
				"http://c.other.org/1", "http://c.other.org/2"}},
		{name: "max 2 per domain", o: GenerateOptions{MaxPerHost: 2, CountMode: CountDomain},
			want: []string{"http://a.example.com/1", "http://b.example.com/1", "http://c.other.org/1", "http://c.other.org/2"}},
		{name: "max 2 per host and topN 5", o: GenerateOptions{MaxPerHost: 2, TopN: 5},
			want: []string{"http://a.example.com/1", "http://b.example.com/1", "http://a.example.com/2", "http://c.other.org/1", "http://c.other.org/2"}},
		{name: "min score 3", o: GenerateOptions{MinScore: ptr(float32(3))},
			want: []string{"http://a.example.com/1", "http://a.example.com/2", "http://a.example.com/3", "http://a.example.com/4",
				"http://b.example.com/1", "http://c.other.org/1"}},
		{name: "restrict status db_unfetched", o: GenerateOptions{RestrictStatus: crawldb.StatusDBUnfetched},
			want: []string{"http://a.example.com/1", "http://a.example.com/4", "http://c.other.org/1", "http://c.other.org/2", "http://c.other.org/3"}},
		{name: "filters", o: GenerateOptions{Filters: URLFilterOptions{Options: urlutil.FilterOptions{MaxLength: 21}}},
			want: []string{"http://c.other.org/1", "http://c.other.org/2", "http://c.other.org/3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			writeDB(t, env, genDB(now), 2)
			tc.o.Now = now
			tc.o.Schedule = ScheduleOptions{Name: "default"}
			res, err := Generate(context.Background(), env, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := generated(t, res)
			if !reflect.DeepEqual(sorted(got), sorted(tc.want)) {
				t.Errorf("selected %v\nwant %v", sorted(got), sorted(tc.want))
			}
			if res.Selected != int64(len(tc.want)) {
				t.Errorf("Selected = %d, want %d", res.Selected, len(tc.want))
			}
			if res.Due == 0 {
				t.Error("Due not counted")
			}
			for _, d := range fetchList(t, res.Segment)["part-r-00000.parquet"] {
				if !d.GenerateTime.Equal(mustSegTime(t, res.Name)) {
					t.Errorf("%s: generate time %v, want the segment's", d.URL, d.GenerateTime)
				}
			}
			if dirExists(filepath.Join(res.Segment, selectDir)) {
				t.Error("the candidates directory was left in the segment")
			}
		})
	}
}

// TestGenerateTopNOverRows checks that a topN no smaller than the CrawlDB
// (which can cut nothing) runs the selection as without one: one job,
// whose fetch list is the one that no topN gives, part by part and in
// order; and that a topN one row smaller still runs the cut.
func TestGenerateTopNOverRows(t *testing.T) {
	now := genNow()
	var rows []crawldb.Datum
	for h := range 6 {
		for i := range 9 {
			rows = append(rows, mkDatum("http://h"+itoa2(h)+".example/p"+itoa2(i), float32((h*9+i)%7), now.Add(-time.Minute), crawldb.StatusDBUnfetched))
		}
	}
	run := func(topN int64) (*GenerateResult, map[string][]string) {
		t.Helper()
		env := testEnv(t)
		writeDB(t, env, rows, 3)
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, TopN: topN, NumFetchers: 2,
			Schedule: ScheduleOptions{Name: "default"}})
		if err != nil {
			t.Fatal(err)
		}
		lists := map[string][]string{}
		for part, ds := range fetchList(t, res.Segment) {
			for _, d := range ds {
				lists[part] = append(lists[part], d.URL)
			}
		}
		return res, lists
	}
	_, want := run(0)
	for _, topN := range []int64{int64(len(rows)), 1000} {
		res, got := run(topN)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("topN %d: fetch list %v\nwant (no topN) %v", topN, got, want)
		}
		if slices.Contains(res.Counters.Groups(), JobGenerateTopN) {
			t.Errorf("topN %d of %d rows ran %s", topN, len(rows), JobGenerateTopN)
		}
	}
	res, got := run(int64(len(rows)) - 1)
	if n := len(got["part-r-00000.parquet"]) + len(got["part-r-00001.parquet"]); n != len(rows)-1 || res.OverTopN != 1 {
		t.Errorf("topN %d: %d URLs selected, %d over the topN; want %d and 1", len(rows)-1, n, res.OverTopN, len(rows)-1)
	}
}

func ptr[T any](v T) *T { return &v }

func mustSegTime(t *testing.T, name string) time.Time {
	t.Helper()
	tm, err := time.Parse(segmentNameLayout, name)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestGeneratePartitionsByHost(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	var rows []crawldb.Datum
	for h := 0; h < 12; h++ {
		for i := 0; i < 7; i++ {
			rows = append(rows, mkDatum("http://h"+itoa2(h)+".example/p"+itoa2(i), float32((h*7+i)%5), now.Add(-time.Minute), crawldb.StatusDBUnfetched))
		}
	}
	writeDB(t, env, rows, 3)
	for _, mode := range []string{CountHost, CountDomain} {
		for _, topN := range []int64{0, 40} {
			res, err := Generate(context.Background(), env, GenerateOptions{Now: now, NumFetchers: 4, CountMode: mode, TopN: topN})
			if err != nil {
				t.Fatal(err)
			}
			parts := fetchList(t, res.Segment)
			total := 0
			partOf := map[string]string{}
			for name, ds := range parts {
				total += len(ds)
				prev := ""
				for i, d := range ds {
					key := countKey(d.URL, d.Host, mode == CountDomain)
					if p, ok := partOf[key]; ok && p != name {
						t.Errorf("%s: host %s in parts %s and %s", mode, key, p, name)
					}
					if key != prev && partOf[key] == name {
						t.Errorf("%s: host %s is not contiguous in %s", mode, key, name)
					}
					partOf[key] = name
					if key == prev && ds[i-1].Score < d.Score {
						t.Errorf("%s: %s after a lower score", mode, d.URL)
					}
					prev = key
					// The reduce output: part number = FNV-1a(host) mod 4.
					if topN == 0 {
						if want := fmt.Sprintf("part-r-%05d.parquet", mapreduce.HashPartitioner(key, 4)); name != want {
							t.Errorf("%s: %s (key %s) in %s, want %s", mode, d.URL, key, name, want)
						}
					}
				}
			}
			want := 84
			if topN > 0 {
				want = int(topN)
			}
			if total != want || res.Selected != int64(want) {
				t.Errorf("%s topN %d: %d URLs (Selected %d), want %d", mode, topN, total, res.Selected, want)
			}
			// Release the URLs for the next round: mark the segment merged.
			writeFile(t, filepath.Join(res.Segment, UpdatedMarker), "{}\n")
		}
	}
}

func itoa2(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func TestGenerateNothingDue(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	writeDB(t, env, genDB(now), 1)
	_, err := Generate(context.Background(), env, GenerateOptions{Now: now.Add(-2 * time.Hour)})
	if !errors.Is(err, ErrNothingDue) {
		t.Fatalf("err = %v, want ErrNothingDue", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(env.Crawl, "segments")); len(entries) != 0 {
		t.Errorf("a segment was left behind: %v", entries)
	}
	// An empty crawl: nothing due either.
	if _, err := Generate(context.Background(), testEnv(t), GenerateOptions{}); !errors.Is(err, ErrNothingDue) {
		t.Errorf("empty crawl: err = %v, want ErrNothingDue", err)
	}
	if dirExists(filepath.Join(env.Crawl, "crawldb", crawldb.LockFile)) {
		t.Error("the lock was not released")
	}
}

func TestGenerateLockAndUpdate(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	writeDB(t, env, genDB(now), 2)
	o := GenerateOptions{Now: now, TopN: 4, Schedule: ScheduleOptions{Name: "default"}}
	first, err := Generate(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	firstURLs := generated(t, first)
	second, err := Generate(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if second.Name == first.Name {
		t.Fatalf("two segments named %s", first.Name)
	}
	secondURLs := generated(t, second)
	for _, u := range secondURLs {
		if slices.Contains(firstURLs, u) {
			t.Errorf("second generate selected %s, pending in the first segment", u)
		}
	}
	if second.Pending != 4 || len(second.PendingSegments) != 1 {
		t.Errorf("second: pending %d segments %v", second.Pending, second.PendingSegments)
	}
	third, err := Generate(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(generated(t, third)); n != 1 {
		t.Errorf("third generate selected %d URLs, want the 1 left", n)
	}
	if _, err := Generate(context.Background(), env, o); !errors.Is(err, ErrNothingDue) {
		t.Fatalf("fourth generate: %v, want ErrNothingDue", err)
	}

	// A simulated time past the delay does not end the hold: segments
	// are named, and held, by the wall clock (a page would be fetched
	// twice otherwise).
	if _, err := Generate(context.Background(), env, GenerateOptions{Now: now.Add(8 * 24 * time.Hour), Schedule: ScheduleOptions{Name: "default"}}); !errors.Is(err, ErrNothingDue) {
		t.Fatalf("generate at a simulated time past the delay: %v, want ErrNothingDue", err)
	}
	// The pending segments stop holding their URLs after the delay (by
	// the wall clock; segment names taken in one second move to the next
	// seconds, so wait for the newest name's time).
	newest, err := time.Parse(segmentNameLayout, third.Name)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(newest.Add(10 * time.Millisecond)))
	late, err := Generate(context.Background(), env, GenerateOptions{Now: now.Add(8 * 24 * time.Hour), Delay: 5 * time.Millisecond, Schedule: ScheduleOptions{Name: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(generated(t, late)); n != 9 {
		t.Errorf("after the delay %d URLs, want all 9 due", n)
	}
	os.RemoveAll(late.Segment)

	// Fetch the first segment and merge it: its URLs are then scheduled a
	// day later (interval 1 day after the fetch) and no longer pending.
	var fetches []segment.Fetch
	for _, d := range fetchList(t, first.Segment) {
		for _, g := range d {
			g.FetchInterval = day
			fetches = append(fetches, segment.Fetch{URL: g.URL, Status: crawldb.StatusFetchSuccess, FetchTime: now, HTTPStatus: 200, Datum: g})
		}
	}
	writeSegmentStage(t, first.Segment, segment.DirFetch, fetches)
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{first.Segment}, Now: now,
		Schedule: ScheduleOptions{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	if !dirExists(filepath.Join(first.Segment, UpdatedMarker)) {
		t.Fatal("updatedb did not mark the segment")
	}
	if _, err := Generate(context.Background(), env, o); !errors.Is(err, ErrNothingDue) {
		t.Fatalf("after updatedb, before the new fetch time: %v, want ErrNothingDue", err)
	}
	next, err := Generate(context.Background(), env, GenerateOptions{Now: now.Add(25 * time.Hour), Schedule: ScheduleOptions{Name: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := generated(t, next); !reflect.DeepEqual(sorted(got), sorted(firstURLs)) {
		t.Errorf("a day after the fetch: %v, want the first segment's %v", sorted(got), sorted(firstURLs))
	}
}

func TestGenerateDeterministic(t *testing.T) {
	now := genNow()
	var rows []crawldb.Datum
	for i := 0; i < 3000; i++ {
		u := "http://h" + itoa2(i%40) + ".example/page/" + itoa2(i/40) + "/" + itoa2(i%97)
		rows = append(rows, mkDatum(u, float32(i%13), now.Add(-time.Duration(i)*time.Second), crawldb.StatusDBUnfetched))
	}
	var lists []map[string][]segment.Generate
	for run := 0; run < 2; run++ {
		env := testEnv(t)
		localRunner(env).Parallelism = 1 + run*3 // different parallelism, same output
		localRunner(env).MemoryBudget = int64(64<<10) << (run * 4)
		writeDB(t, env, rows, 1+run*2)
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, TopN: 500, MaxPerHost: 20, NumFetchers: 3})
		if err != nil {
			t.Fatal(err)
		}
		l := fetchList(t, res.Segment)
		for _, ds := range l {
			for i := range ds {
				ds[i].GenerateTime = time.Time{}
			}
		}
		lists = append(lists, l)
	}
	if !reflect.DeepEqual(lists[0], lists[1]) {
		t.Error("two runs on the same CrawlDB gave different fetch lists")
	}
}

// TestGenerateRanksByChangeProbability checks that with the dynamic
// schedule (rank change) generate's topN and per-host limit take the pages
// most likely to have changed since their last fetch, score times
// crawldb.ChangeProbability, and with rank score the best scores.
func TestGenerateRanksByChangeProbability(t *testing.T) {
	now := genNow()
	const h = time.Hour
	// fetched: a page fetched `ago` before now with interval `intv`
	// (due: ago >= intv), of the given score.
	fetched := func(url string, score float32, ago, intv time.Duration) crawldb.Datum {
		d := mkDatum(url, score, now.Add(intv-ago), crawldb.StatusDBFetched)
		d.FetchInterval = int32(intv / time.Second)
		d.Source = crawldb.SourceAdaptive
		return d
	}
	rows := []crawldb.Datum{
		// name: score, last fetch, interval; rank by change = score·(1 - e^(-ago/interval))
		fetched("http://a.example.com/fast", 1, 48*h, 2*h),                               // 1.00
		fetched("http://a.example.com/slow", 2, 31*24*h, 30*24*h),                        // 1.29
		fetched("http://a.example.com/mid", 1.2, 12*h, 12*h),                             // 0.76
		fetched("http://b.example.com/odd", 4, 6*24*h, 6*24*h),                           // 2.53
		fetched("http://b.example.com/hot", 0.5, 10*24*h, h),                             // 0.50
		fetched("http://b.example.com/stale", 3, 24*h, 24*h),                             // 1.90
		mkDatum("http://b.example.com/new", 1.5, now.Add(-h), crawldb.StatusDBUnfetched), // 1.50
	}
	// By score: odd 4, stale 3, slow 2, new 1.5, mid 1.2, fast 1, hot 0.5.
	// By change: odd, stale, new, slow, fast, mid, hot.
	cases := []struct {
		name, rank string
		o          GenerateOptions
		want       []string
	}{
		{"topN 3 by change", crawldb.RankChange, GenerateOptions{TopN: 3},
			[]string{"http://b.example.com/odd", "http://b.example.com/stale", "http://b.example.com/new"}},
		{"topN 5 by change, one select reducer", crawldb.RankChange, GenerateOptions{TopN: 5, SelectReducers: 1},
			[]string{"http://b.example.com/odd", "http://b.example.com/stale", "http://b.example.com/new", "http://a.example.com/slow", "http://a.example.com/fast"}},
		{"topN 5 by change (auto)", crawldb.RankAuto, GenerateOptions{TopN: 5},
			[]string{"http://b.example.com/odd", "http://b.example.com/stale", "http://b.example.com/new", "http://a.example.com/slow", "http://a.example.com/fast"}},
		{"max 2 per host by change", crawldb.RankChange, GenerateOptions{MaxPerHost: 2},
			[]string{"http://a.example.com/slow", "http://a.example.com/fast", "http://b.example.com/odd", "http://b.example.com/stale"}},
		{"topN 3 by score", crawldb.RankScore, GenerateOptions{TopN: 3},
			[]string{"http://b.example.com/odd", "http://b.example.com/stale", "http://a.example.com/slow"}},
		{"topN 5 by score", crawldb.RankScore, GenerateOptions{TopN: 5},
			[]string{"http://b.example.com/odd", "http://b.example.com/stale", "http://a.example.com/slow", "http://b.example.com/new", "http://a.example.com/mid"}},
		{"max 2 per host by score", crawldb.RankScore, GenerateOptions{MaxPerHost: 2},
			[]string{"http://a.example.com/slow", "http://a.example.com/mid", "http://b.example.com/odd", "http://b.example.com/stale"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			writeDB(t, env, rows, 2)
			cfg := crawldb.DefaultScheduleConfig()
			cfg.Dynamic = crawldb.DefaultDynamicConfig()
			cfg.Dynamic.Rank = tc.rank
			tc.o.Now = now
			tc.o.Schedule = ScheduleOptions{Name: "dynamic", Config: cfg}
			res, err := Generate(context.Background(), env, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := generated(t, res)
			if !reflect.DeepEqual(sorted(got), sorted(tc.want)) {
				t.Errorf("selected %v\nwant %v", sorted(got), sorted(tc.want))
			}
			// Within a host, the fetch list is best first.
			var ranks []float64
			lastHost := ""
			for _, u := range got {
				d := rowByURL(rows, u)
				if d.Host != lastHost {
					ranks, lastHost = nil, d.Host
				}
				r := float64(d.Score)
				if tc.rank != crawldb.RankScore {
					r *= crawldb.ChangeProbability(&d, now)
				}
				if len(ranks) > 0 && r > ranks[len(ranks)-1]+1e-6 {
					t.Errorf("%s (rank %.3f) after a worse URL of its host in %v", u, r, got)
				}
				ranks = append(ranks, r)
			}
		})
	}
}

func rowByURL(rows []crawldb.Datum, url string) crawldb.Datum {
	for _, d := range rows {
		if d.URL == url {
			return d
		}
	}
	panic("no row " + url)
}

// ipWeb is the DNS of the partition tests: three hosts (of two domains) on
// one address, two on the lowest of two addresses that a third host has
// alone, six hosts on addresses of their own; the IP literal hosts and the
// hosts absent from it (NXDOMAIN) are in ipWebHosts.
var ipWeb = map[string][]string{
	"a1.alpha.com": {"10.1.0.1"},
	"a2.alpha.com": {"10.1.0.1"},
	"www.beta.org": {"10.1.0.1"},
	"b1.gamma.net": {"10.2.0.9", "10.2.0.2"}, // lowest: 10.2.0.2
	"b2.gamma.net": {"10.2.0.2", "10.2.0.9"},
	"c1.delta.com": {"10.2.0.2"},
	"e1.eps.com":   {"10.3.0.1"},
	"e2.eps.com":   {"10.3.0.2"},
	"e3.eps.com":   {"10.3.0.3"},
	"e4.zeta.org":  {"10.3.0.4"},
	"e5.zeta.org":  {"10.3.0.5"},
	"e6.eta.net":   {"10.3.0.6"},
}

// ipWebHosts are the hosts of the partition tests' CrawlDB: ipWeb's, two
// IP literals (one the address of the a hosts) and two that do not resolve.
func ipWebHosts() []string {
	hosts := slices.Sorted(maps.Keys(ipWeb))
	return append(hosts, "10.1.0.1", "10.9.9.9", "nx1.omega.com", "nx2.omega.com")
}

// ipToken is the partition token a host of the partition tests should get
// in mode.
func ipToken(mode, host string) string {
	switch mode {
	case PartitionDomain:
		return urlutil.DomainOfHost(host)
	case PartitionIP:
		if ips, ok := ipWeb[host]; ok {
			return slices.Min(ips) // all in 10.x.0.y with one-digit y: string order is address order
		}
	}
	return host // a host name, an IP literal, or a host that does not resolve
}

// partitionDB is the CrawlDB of the partition tests: 7 due URLs per host
// of ipWebHosts, scores in a few ties.
func partitionDB(now time.Time) []crawldb.Datum {
	var rows []crawldb.Datum
	for h, host := range ipWebHosts() {
		for i := range 7 {
			u := fmt.Sprintf("http://%s/p%d", host, i)
			if host == "10.1.0.1" {
				u = fmt.Sprintf("http://%s:8080/p%d", host, i)
			}
			rows = append(rows, mkDatum(u, float32((h*7+i)%6), now.Add(-time.Minute), crawldb.StatusDBUnfetched))
		}
	}
	return rows
}

// checkPartitioned checks a fetch list's partitioning: each host's URLs
// (each domain's when byDomain) in one part, together, best first, the
// part being FNV-1a(token) mod parts (so hosts of one token share a part);
// it returns the selected URLs.
func checkPartitioned(t *testing.T, res *GenerateResult, mode string, parts int, byDomain bool) []string {
	t.Helper()
	var urls []string
	partOf := map[string]string{}
	for name, ds := range fetchList(t, res.Segment) {
		prev := ""
		for i, d := range ds {
			urls = append(urls, d.URL)
			host := urlutil.Host(d.URL)
			unit := countKey(d.URL, "", byDomain)
			if p, ok := partOf[unit]; ok && (p != name || unit != prev) {
				t.Errorf("%s: %s in %s and %s, or not together", mode, unit, p, name)
			}
			partOf[unit] = name
			if unit == prev && ds[i-1].Score < d.Score {
				t.Errorf("%s: %s after a lower score of %s", mode, d.URL, unit)
			}
			prev = unit
			tok := ipToken(mode, host)
			if want := partName(mapreduce.HashPartitioner(tok, parts)); name != want {
				t.Errorf("%s, %d parts: host %s (token %s) in %s, want %s", mode, parts, host, tok, name, want)
			}
		}
	}
	if res.Parts != parts {
		t.Errorf("Parts = %d, want %d", res.Parts, parts)
	}
	return sorted(urls)
}

// TestGeneratePartitionModes generates with each partition mode, count
// mode, topN and per-host limit, for several numbers of parts: the fetch
// list is partitioned by the token of the mode (by IP: the lowest address
// of the host, from a DNS server on loopback; the host's name if it has
// none, counted), and the selection is the one of the host partitioning.
// Each host of the fetch list is looked up once.
func TestGeneratePartitionModes(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	writeDB(t, env, partitionDB(now), 3)
	zone := resolvertest.Serve(t, ipWeb)
	dnsAddr, queries := zone.Addr, zone.Queries
	variants := []struct {
		name string
		o    GenerateOptions
	}{
		{"all", GenerateOptions{}},
		{"topN 40, max 4 per host", GenerateOptions{TopN: 40, MaxPerHost: 4}},
		{"max 5 per domain", GenerateOptions{MaxPerHost: 5, CountMode: CountDomain}},
		{"topN 30, max 9 per domain, one select reducer", GenerateOptions{TopN: 30, MaxPerHost: 9, CountMode: CountDomain, SelectReducers: 1}},
	}
	gen := func(o GenerateOptions) *GenerateResult {
		t.Helper()
		o.Now = now
		o.Schedule = ScheduleOptions{Name: "default"}
		res, err := Generate(context.Background(), env, o)
		if err != nil {
			t.Fatal(err)
		}
		// Release the URLs for the next run: mark the segment merged.
		writeFile(t, filepath.Join(res.Segment, UpdatedMarker), "{}\n")
		return res
	}
	for _, v := range variants {
		// The selection does not depend on the partitioning.
		base := gen(v.o)
		want := generated(t, base)
		if len(want) == 0 {
			t.Fatalf("%s: nothing selected", v.name)
		}
		for _, mode := range []string{PartitionHost, PartitionDomain, PartitionIP} {
			fetchers := []int{3}
			if mode == PartitionIP {
				fetchers = []int{2, 3, 5}
			}
			for _, n := range fetchers {
				o := v.o
				o.PartitionMode, o.NumFetchers = mode, n
				o.DNSServers = []string{dnsAddr}
				before := queries()
				res := gen(o)
				name := fmt.Sprintf("%s, %s, %d parts", v.name, mode, n)
				byDomain := v.o.CountMode == CountDomain && mode == PartitionDomain
				if got := checkPartitioned(t, res, mode, n, byDomain); !reflect.DeepEqual(got, sorted(want)) {
					t.Errorf("%s: selected %v\nwant %v", name, got, sorted(want))
				}
				if res.Selected != int64(len(want)) {
					t.Errorf("%s: Selected %d, want %d", name, res.Selected, len(want))
				}
				// (With topN, which of over_max_per_host and over_topn
				// counts a candidate depends on the reducers.)
				if v.o.TopN == 0 && res.OverHostLimit != base.OverHostLimit {
					t.Errorf("%s: %d over the host limit, want %d", name, res.OverHostLimit, base.OverHostLimit)
				}
				// Hosts: the fetch list's hosts, or domains when both
				// modes are domain.
				groups := map[string]bool{}
				for _, u := range want {
					groups[countKey(u, "", byDomain)] = true
				}
				if res.Hosts != int64(len(groups)) {
					t.Errorf("%s: Hosts = %d, want %d", name, res.Hosts, len(groups))
				}
				after := queries()
				var asked, unresolved int
				hosts := map[string]bool{}
				for _, u := range want {
					hosts[urlutil.Host(u)] = true
				}
				for h := range hosts {
					if _, err := netip.ParseAddr(h); err == nil {
						continue // a literal: no query
					}
					asked++
					if _, ok := ipWeb[h]; !ok {
						unresolved++
					}
				}
				if mode != PartitionIP {
					if !maps.Equal(before, after) {
						t.Errorf("%s: DNS queries without partitioning by IP", name)
					}
					continue
				}
				if res.Unresolved != int64(unresolved) || res.Counters.Get(JobGenerateTopN, ctrPartUnresolved) != int64(unresolved) {
					t.Errorf("%s: Unresolved = %d, want %d", name, res.Unresolved, unresolved)
				}
				if got := res.Counters.Get(JobGenerateTopN, ctrPartResolved); got != int64(len(hosts)-unresolved) {
					t.Errorf("%s: %d hosts resolved, want %d", name, got, len(hosts)-unresolved)
				}
				// Once per host: one A query each, unless one timed out.
				total, retries := 0, res.Counters.Get(JobGenerateTopN, "dns_retries")
				for h, n := range after {
					n -= before[h]
					total += n
					if n > 0 && !hosts[h] {
						t.Errorf("%s: %s looked up but not in the fetch list", name, h)
					}
				}
				for h := range hosts {
					if _, err := netip.ParseAddr(h); err != nil && after[h] == before[h] {
						t.Errorf("%s: %s not looked up", name, h)
					}
				}
				if total < asked || int64(total) > int64(asked)+retries {
					t.Errorf("%s: %d DNS queries (%d retries) for %d hosts", name, total, retries, asked)
				}
			}
		}
	}
}

// TestGeneratePartitionByIPStreaming runs the IP partitioning with every
// job rebuilt from its Conf as Streaming tasks: the fetch list is the
// local runner's.
func TestGeneratePartitionByIPStreaming(t *testing.T) {
	now := genNow()
	dnsAddr := resolvertest.Serve(t, ipWeb).Addr
	run := func(streaming bool, o GenerateOptions) map[string][]segment.Generate {
		env := testEnv(t)
		if streaming {
			env.Runner = streamingRunner(t, env.Storage, filepath.Join(t.TempDir(), "work"))
		}
		writeDB(t, env, partitionDB(now), 2)
		o.Now, o.Schedule = now, ScheduleOptions{Name: "default"}
		o.PartitionMode, o.DNSServers = PartitionIP, []string{dnsAddr}
		res, err := Generate(context.Background(), env, o)
		if err != nil {
			t.Fatal(err)
		}
		checkPartitioned(t, res, PartitionIP, o.NumFetchers, false)
		if res.Unresolved != 2 {
			t.Errorf("streaming %v: Unresolved = %d, want 2", streaming, res.Unresolved)
		}
		l := fetchList(t, res.Segment)
		for _, ds := range l {
			for i := range ds {
				ds[i].GenerateTime = time.Time{}
			}
		}
		return l
	}
	for _, o := range []GenerateOptions{
		{NumFetchers: 3},
		{NumFetchers: 4, TopN: 60, MaxPerHost: 6, SelectReducers: 3},
	} {
		if local, streamed := run(false, o), run(true, o); !reflect.DeepEqual(local, streamed) {
			t.Errorf("%+v: the streamed fetch list differs from the local one", o)
		}
	}
}

// TestGeneratePartitionOptionsChecked: a partition mode generate does not
// know, and DNS settings the IP partitioning cannot use, are errors that
// leave no segment.
func TestGeneratePartitionOptionsChecked(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	writeDB(t, env, partitionDB(now), 1)
	for _, tc := range []struct {
		o    GenerateOptions
		want string
	}{
		{GenerateOptions{PartitionMode: "byIP"}, `partition mode "byIP" is not "host", "domain" or "ip"`},
		{GenerateOptions{PartitionMode: PartitionIP, DNSServers: []string{"dns.example.com:53"}}, "DNS settings"},
		{GenerateOptions{PartitionMode: PartitionIP, DNSServers: []string{"127.0.0.1:53"}, DNS: resolver.Config{Timeout: -time.Second}}, "negative timeout"},
	} {
		tc.o.Now = now
		_, err := Generate(context.Background(), env, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one with %q", tc.o, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(env.Crawl, "segments")); len(entries) != 0 {
		t.Errorf("a segment was left behind: %v", entries)
	}
	// The job checks its spec too (a task rebuilds it).
	if _, err := (generateTopN{In: "in", Out: "out", Parts: 1, PartitionMode: "planet"}).Job(); err == nil {
		t.Error("generate-topn built with partition mode planet")
	}
	if _, err := (generateTopN{In: "in", Out: "out", PartitionMode: PartitionIP}).Job(); err == nil {
		t.Error("generate-topn built by IP without the parts")
	}
	if _, err := (generateSelect{CrawlDB: "db", Out: "out", Reduces: 1, PartitionMode: "planet"}).Job(); err == nil {
		t.Error("generate-select built with partition mode planet")
	}
}

// TestGenerateRankTiesAtCut: with the dynamic schedule's change rank, the
// candidates tied at the topN cut-off are taken by URL, their ranks
// computed again from the candidates (not the score).
func TestGenerateRankTiesAtCut(t *testing.T) {
	now := genNow()
	var rows []crawldb.Datum
	for i := range 6 {
		// Same rank 2·(1 - e^-1) for all six; scores differ from ranks.
		d := mkDatum(fmt.Sprintf("http://h%d.example.com/p", i), 2, now, crawldb.StatusDBFetched)
		d.FetchInterval = 24 * 3600
		rows = append(rows, d)
	}
	// A better one: ranks above the tie, with a lower score.
	best := mkDatum("http://z.example.com/new", 1.9, now.Add(-time.Hour), crawldb.StatusDBUnfetched)
	rows = append(rows, best)
	env := testEnv(t)
	writeDB(t, env, rows, 2)
	cfg := crawldb.DefaultScheduleConfig()
	cfg.Dynamic = crawldb.DefaultDynamicConfig()
	res, err := Generate(context.Background(), env, GenerateOptions{Now: now.Add(24 * time.Hour), TopN: 3,
		Schedule: ScheduleOptions{Name: "dynamic", Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://h0.example.com/p", "http://h1.example.com/p", best.URL}
	if got := generated(t, res); !reflect.DeepEqual(sorted(got), sorted(want)) {
		t.Errorf("selected %v, want %v", sorted(got), sorted(want))
	}
}

// TestGenerateBoundsPartURLs: a selection larger than NumFetchers parts of
// MaxPartURLs gets as many more parts as it takes, with or without topN
// (without it, generate selects into _select first when the CrawlDB could
// exceed the bound); each host stays in one part, partitioned as
// generate-topn partitions; a selection within the bound keeps
// NumFetchers parts.
func TestGenerateBoundsPartURLs(t *testing.T) {
	now := genNow()
	env := testEnv(t)
	var rows []crawldb.Datum
	for h := 0; h < 30; h++ {
		for i := 0; i < 10; i++ {
			rows = append(rows, mkDatum("http://h"+itoa2(h)+".example/p"+itoa2(i), float32((h*10+i)%7), now.Add(-time.Minute), crawldb.StatusDBUnfetched))
		}
	}
	writeDB(t, env, rows, 3)
	for _, c := range []struct {
		topN, maxPart int64
		parts, urls   int
	}{
		{topN: 0, maxPart: 40, parts: 8, urls: 300},     // ceil(300/40)
		{topN: 200, maxPart: 40, parts: 5, urls: 200},   // ceil(200/40)
		{topN: 0, maxPart: 150, parts: 2, urls: 300},    // within 2 parts of 150
		{topN: 0, maxPart: 0, parts: 2, urls: 300},      // no bound
		{topN: 100, maxPart: 1000, parts: 2, urls: 100}, // within the bound
	} {
		res, err := Generate(context.Background(), env, GenerateOptions{Now: now, NumFetchers: 2, TopN: c.topN, MaxPartURLs: c.maxPart})
		if err != nil {
			t.Fatal(err)
		}
		urls := checkPartitioned(t, res, PartitionHost, c.parts, false)
		if len(urls) != c.urls || res.Selected != int64(c.urls) {
			t.Errorf("topN %d, max %d: %d URLs (Selected %d), want %d", c.topN, c.maxPart, len(urls), res.Selected, c.urls)
		}
		if got := len(fetchList(t, res.Segment)); got > c.parts {
			t.Errorf("topN %d, max %d: %d part files, want at most %d", c.topN, c.maxPart, got, c.parts)
		}
		writeFile(t, filepath.Join(res.Segment, UpdatedMarker), "{}\n")
	}
}
