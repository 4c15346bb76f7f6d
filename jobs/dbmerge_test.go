package jobs

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
)

const day = 24 * 3600

var (
	tNow   = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	tFetch = time.Date(2026, 1, 9, 12, 0, 0, 0, time.UTC)
	tDue   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tMod   = time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
)

func newTestMerger(t *testing.T, sched string, additions bool) *dbMerger {
	t.Helper()
	s, err := crawldb.NewSchedule(sched, crawldb.DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &dbMerger{sched: s, now: tNow, retryMax: 3, maxInterval: 90 * day, noAdditions: !additions, maxInlinks: DefaultMaxInlinks}
}

type counts map[string]int64

func (c counts) add(name string, n int64) { c[name] += n }

func runMerge(t *testing.T, m *dbMerger, url string, vals ...dbValue) (crawldb.Datum, bool, counts) {
	t.Helper()
	c := counts{}
	var st mergeState
	d, ok, err := m.merge(url, slices.Values(vals), &st, c.add)
	if err != nil {
		t.Fatalf("merge(%s): %v", url, err)
	}
	return d, ok, c
}

const testURL = "http://h1.example/a/b.html"

func oldDatum(status crawldb.Status) crawldb.Datum {
	return crawldb.Datum{
		URL: testURL, Host: "h1.example", Status: status,
		FetchTime: tDue, PrevFetchTime: tDue.Add(-day * time.Second), ModifiedTime: tMod,
		FetchInterval: day, Score: 2, Signature: []byte("sig-1"),
		FetchCount: 4, ChangeCount: 1, ClusterID: 7, Source: crawldb.SourceDefault,
		Metadata: map[string]string{"a": "old", "keep": "x"},
	}
}

func vOld(d crawldb.Datum) dbValue { return dbValue{Kind: kindOld, Old: &d} }

// vFetch is a crawl_fetch row fetched from the fetch list's copy of d.
func vFetch(d crawldb.Datum, status crawldb.Status, at time.Time) dbValue {
	gen := d
	gen.GenerateTime = tDue
	gen.Metadata = maps.Clone(d.Metadata)
	if gen.Metadata == nil {
		gen.Metadata = map[string]string{}
	}
	gen.Metadata["a"] = "fetch"
	return dbValue{Kind: kindFetch, Fetch: &segment.Fetch{URL: d.URL, Status: status, FetchTime: at, HTTPStatus: 200, Datum: gen}}
}

func vSig(url string, sig string, at time.Time) dbValue {
	return dbValue{Kind: kindParse, Parse: &segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature, Signature: []byte(sig),
		FetchTime: at, Features: crawldb.Features{Words: 100, Outlinks: 5, Inlinks: 99, Images: 2, Depth: 2, Bytes: 5000}}}
}

// vLink is a link to to, as parseInput emits it (to is the key).
func vLink(to, from string, cash float32) dbValue {
	return dbValue{Kind: kindLink, Links: []dbLink{{From: pageIDOf(from), Cash: cash}}}
}

func ms(sec int64) time.Time { return tFetch.Add(time.Duration(sec) * time.Second) }

// TestMergeTransitions pins CrawlDbReducer's transitions with the default
// (fixed-interval) schedule, where the numbers are easy to check.
func TestMergeTransitions(t *testing.T) {
	withRetries := func(s crawldb.Status, r int32) crawldb.Datum { d := oldDatum(s); d.Retries = r; return d }
	noSig := func(s crawldb.Status) crawldb.Datum { d := oldDatum(s); d.Signature = nil; return d }
	tests := []struct {
		name        string
		old         crawldb.Datum
		vals        func(old crawldb.Datum) []dbValue
		status      crawldb.Status
		fetchTime   time.Time
		interval    int32
		retries     int32
		sig         string // "" = nil
		modified    time.Time
		fetchCount  int32
		changeCount int32
		history     []crawldb.Observation
	}{
		{name: "unfetched x success, no old signature -> fetched, unknown change",
			old: noSig(crawldb.StatusDBUnfetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-2", tFetch)}
			},
			status: crawldb.StatusDBFetched, fetchTime: ms(day), interval: day, sig: "sig-2", modified: tMod, fetchCount: 5, changeCount: 1},
		{name: "fetched x success, same signature -> notmodified",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-1", tFetch)}
			},
			status: crawldb.StatusDBNotModified, fetchTime: ms(day), interval: day, sig: "sig-1", modified: tMod, fetchCount: 5, changeCount: 1,
			history: []crawldb.Observation{{Time: tFetch, Changed: false}}},
		{name: "fetched x success, new signature -> fetched, modified",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-2", tFetch)}
			},
			status: crawldb.StatusDBFetched, fetchTime: ms(day), interval: day, sig: "sig-2", modified: tMod, fetchCount: 5, changeCount: 2,
			history: []crawldb.Observation{{Time: tFetch, Changed: true}}},
		{name: "fetched x success without parse -> fetched, unknown, old signature kept",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch)}
			},
			status: crawldb.StatusDBFetched, fetchTime: ms(day), interval: day, sig: "sig-1", modified: tMod, fetchCount: 5, changeCount: 1},
		{name: "fetched x notmodified (304) -> notmodified",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchNotModified, tFetch)}
			},
			status: crawldb.StatusDBNotModified, fetchTime: ms(day), interval: day, sig: "sig-1", modified: tMod, fetchCount: 5, changeCount: 1,
			history: []crawldb.Observation{{Time: tFetch, Changed: false}}},
		{name: "gone x success -> fetched",
			old: oldDatum(crawldb.StatusDBGone),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-3", tFetch)}
			},
			status: crawldb.StatusDBFetched, fetchTime: ms(day), interval: day, sig: "sig-3", modified: tMod, fetchCount: 5, changeCount: 2,
			history: []crawldb.Observation{{Time: tFetch, Changed: true}}},
		{name: "fetched x retry (0 before) -> unfetched, retry tomorrow",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchRetry, tFetch)}
			},
			status: crawldb.StatusDBUnfetched, fetchTime: ms(day), interval: day, retries: 1, sig: "sig-1", modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "unfetched x retry (2 before) -> gone, gone schedule",
			old: withRetries(crawldb.StatusDBUnfetched, 2),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchRetry, tFetch)}
			},
			status: crawldb.StatusDBGone, fetchTime: ms(day * 3 / 2), interval: day * 3 / 2, retries: 3, sig: "sig-1", modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "fetched x gone -> gone, interval x1.5",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchGone, tFetch)}
			},
			status: crawldb.StatusDBGone, fetchTime: ms(day * 3 / 2), interval: day * 3 / 2, sig: "sig-1", modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "fetched x redir_perm -> redir_perm, signature reset",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchRedirPerm, tFetch)}
			},
			status: crawldb.StatusDBRedirPerm, fetchTime: ms(day), interval: day, modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "unfetched x redir_temp -> redir_temp",
			old: oldDatum(crawldb.StatusDBUnfetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchRedirTemp, tFetch)}
			},
			status: crawldb.StatusDBRedirTemp, fetchTime: ms(day), interval: day, modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "redir_perm x retry (1 before) -> unfetched",
			old: withRetries(crawldb.StatusDBRedirPerm, 1),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchRetry, tFetch)}
			},
			status: crawldb.StatusDBUnfetched, fetchTime: ms(day), interval: day, retries: 2, sig: "sig-1", modified: tMod, fetchCount: 4, changeCount: 1},
		{name: "two fetches: the later wins",
			old: oldDatum(crawldb.StatusDBFetched),
			vals: func(o crawldb.Datum) []dbValue {
				return []dbValue{vOld(o), vFetch(o, crawldb.StatusFetchGone, tFetch.Add(-time.Hour)), vFetch(o, crawldb.StatusFetchNotModified, tFetch)}
			},
			status: crawldb.StatusDBNotModified, fetchTime: ms(day), interval: day, sig: "sig-1", modified: tMod, fetchCount: 5, changeCount: 1,
			history: []crawldb.Observation{{Time: tFetch, Changed: false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMerger(t, "default", true)
			got, ok, _ := runMerge(t, m, testURL, tc.vals(tc.old)...)
			if !ok {
				t.Fatal("merge dropped the URL")
			}
			if got.Status != tc.status {
				t.Errorf("status %v, want %v", got.Status, tc.status)
			}
			if !got.FetchTime.Equal(tc.fetchTime) {
				t.Errorf("fetch time %v, want %v", got.FetchTime, tc.fetchTime)
			}
			if got.FetchInterval != tc.interval {
				t.Errorf("interval %d, want %d", got.FetchInterval, tc.interval)
			}
			if got.Retries != tc.retries {
				t.Errorf("retries %d, want %d", got.Retries, tc.retries)
			}
			if string(got.Signature) != tc.sig || (tc.sig == "") != (got.Signature == nil) {
				t.Errorf("signature %q, want %q", got.Signature, tc.sig)
			}
			if !got.ModifiedTime.Equal(tc.modified) {
				t.Errorf("modified %v, want %v", got.ModifiedTime, tc.modified)
			}
			if got.FetchCount != tc.fetchCount || got.ChangeCount != tc.changeCount {
				t.Errorf("fetch/change count %d/%d, want %d/%d", got.FetchCount, got.ChangeCount, tc.fetchCount, tc.changeCount)
			}
			if !reflect.DeepEqual(got.History, tc.history) {
				t.Errorf("history %v, want %v", got.History, tc.history)
			}
			if !got.PrevFetchTime.Equal(tFetch) {
				t.Errorf("prev fetch time %v, want %v", got.PrevFetchTime, tFetch)
			}
			// Common to every fetch: the old score (no links), metadata of
			// old overlaid by the fetch's, cluster from the CrawlDB row,
			// generate time removed.
			if got.Score != 2 {
				t.Errorf("score %v, want 2", got.Score)
			}
			if want := map[string]string{"a": "fetch", "keep": "x"}; !reflect.DeepEqual(got.Metadata, want) {
				t.Errorf("metadata %v, want %v", got.Metadata, want)
			}
			if got.ClusterID != 7 || !got.GenerateTime.IsZero() || got.URL != testURL || got.Host != "h1.example" {
				t.Errorf("cluster %d, generate time %v, url %q host %q", got.ClusterID, got.GenerateTime, got.URL, got.Host)
			}
		})
	}
}

func TestMergeFeaturesFromParse(t *testing.T) {
	m := newTestMerger(t, "default", true)
	o := oldDatum(crawldb.StatusDBFetched)
	o.Features = crawldb.Features{Words: 1, Inlinks: 3}
	got, _, _ := runMerge(t, m, testURL, vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-2", tFetch),
		vLink(testURL, "http://x.example/1", 0.5), vLink(testURL, "http://x.example/2", 0.5))
	// Features from the parse; inlinks kept at the larger of the stored
	// count and this run's distinct linking pages.
	want := crawldb.Features{Words: 100, Outlinks: 5, Inlinks: 3, Images: 2, Depth: 2, Bytes: 5000}
	if got.Features != want {
		t.Errorf("features %+v, want %+v", got.Features, want)
	}
	if got.Score != 3 {
		t.Errorf("score %v, want 2 + 0.5 + 0.5", got.Score)
	}
}

func TestMergeAdaptiveSchedule(t *testing.T) {
	m := newTestMerger(t, "adaptive", true)
	o := oldDatum(crawldb.StatusDBFetched)
	o.FetchInterval = 10 * day
	o.ModifiedTime = tFetch // sync delta 0
	got, _, _ := runMerge(t, m, testURL, vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-1", tFetch))
	if got.Status != crawldb.StatusDBNotModified || got.FetchInterval != 14*day || got.Source != crawldb.SourceAdaptive {
		t.Errorf("not modified: status %v interval %d source %v; want db_notmodified, %d, adaptive", got.Status, got.FetchInterval, got.Source, 14*day)
	}
	got, _, _ = runMerge(t, m, testURL, vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-9", tFetch))
	if got.Status != crawldb.StatusDBFetched || got.FetchInterval != 8*day || !got.ModifiedTime.Equal(tFetch) {
		t.Errorf("modified: status %v interval %d modified %v; want db_fetched, %d, %v", got.Status, got.FetchInterval, got.ModifiedTime, 8*day, tFetch)
	}
}

func TestMergeForcedRefetch(t *testing.T) {
	m := newTestMerger(t, "default", true)
	o := oldDatum(crawldb.StatusDBFetched)
	o.FetchInterval = 100 * day // beyond the 90-day maximum
	got, _, c := runMerge(t, m, testURL, vOld(o), vFetch(o, crawldb.StatusFetchSuccess, tFetch), vSig(testURL, "sig-1", tFetch))
	if got.Status != crawldb.StatusDBUnfetched || got.FetchInterval != 81*day || got.Signature != nil || !got.ModifiedTime.IsZero() {
		t.Errorf("status %v interval %d sig %q modified %v; want db_unfetched, %d, nil, zero", got.Status, got.FetchInterval, got.Signature, got.ModifiedTime, 81*day)
	}
	if c[ctrForcedRefetch] != 1 {
		t.Errorf("counters %v", c)
	}
}

func TestMergeLinksAndAdditions(t *testing.T) {
	const newURL = "http://h2.example/x/y/z"
	links := []dbValue{vLink(newURL, "http://a.example/", 0.25), vLink(newURL, "http://b.example/", 0.5), vLink(newURL, "http://a.example/", 0.125)}

	m := newTestMerger(t, "adaptive", true)
	got, ok, c := runMerge(t, m, newURL, links...)
	if !ok {
		t.Fatal("new URL from links dropped")
	}
	want := crawldb.Datum{URL: newURL, Host: "h2.example", Status: crawldb.StatusDBUnfetched, FetchTime: tNow,
		FetchInterval: 30 * day, Score: 0.875, ClusterID: -1, Source: crawldb.SourceAdaptive,
		Features: crawldb.Features{Depth: 3, Inlinks: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("new URL:\n got %+v\nwant %+v", got, want)
	}
	if c[ctrNewFromLinks] != 1 || c["status_db_unfetched"] != 1 {
		t.Errorf("counters %v", c)
	}

	// An existing row gains the cash and keeps everything else.
	o := oldDatum(crawldb.StatusDBFetched)
	got, _, _ = runMerge(t, m, testURL, append([]dbValue{vOld(o)}, links...)...)
	o.Score = 2.875
	o.Features.Inlinks = 2
	if !reflect.DeepEqual(got, o) {
		t.Errorf("existing URL:\n got %+v\nwant %+v", got, o)
	}

	// No new information: the row is returned unchanged.
	o = oldDatum(crawldb.StatusDBGone)
	got, ok, c = runMerge(t, m, testURL, vOld(o))
	if !ok || !reflect.DeepEqual(got, o) || c[ctrUnchanged] != 1 {
		t.Errorf("unchanged row: ok %v got %+v counters %v", ok, got, c)
	}

	// NoAdditions: new URLs stay out, fetched or linked; known ones merge.
	m = newTestMerger(t, "adaptive", false)
	if _, ok, c := runMerge(t, m, newURL, links...); ok || c[ctrAdditionsRefused] != 1 {
		t.Errorf("NoAdditions kept a linked URL (counters %v)", c)
	}
	if _, ok, _ := runMerge(t, m, newURL, vFetch(crawldb.Datum{URL: newURL}, crawldb.StatusFetchSuccess, tFetch)); ok {
		t.Error("NoAdditions kept a fetched URL not in the CrawlDB")
	}
	if got, ok, _ := runMerge(t, m, testURL, vOld(oldDatum(crawldb.StatusDBUnfetched)), links[0]); !ok || got.Score != 2.25 {
		t.Errorf("NoAdditions: known URL ok %v score %v", ok, got.Score)
	}

	// A lone signature does not create a row.
	m = newTestMerger(t, "adaptive", true)
	if _, ok, c := runMerge(t, m, newURL, vSig(newURL, "s", tFetch)); ok || c[ctrLoneSignature] != 1 {
		t.Errorf("lone signature kept (counters %v)", c)
	}
}

func TestMergeInlinkLimit(t *testing.T) {
	m := newTestMerger(t, "default", true)
	m.maxInlinks = 2
	got, _, c := runMerge(t, m, testURL, vLink(testURL, "a", 1), vLink(testURL, "b", 4), vLink(testURL, "c", 2))
	if got.Score != 6 || c[ctrInlinksDropped] != 1 {
		t.Errorf("score %v (want 4+2), counters %v", got.Score, c)
	}
}

func TestMergeRejectsNonFetchStatus(t *testing.T) {
	m := newTestMerger(t, "default", true)
	var st mergeState
	o := oldDatum(crawldb.StatusDBFetched)
	_, _, err := m.merge(testURL, slices.Values([]dbValue{vFetch(o, crawldb.StatusDBFetched, tFetch)}), &st, counts{}.add)
	if err == nil {
		t.Fatal("a crawl_fetch row with a db status was accepted")
	}
}
