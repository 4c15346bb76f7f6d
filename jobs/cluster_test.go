package jobs

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
)

// dynamicTestSchedule is the dynamic schedule of the tests: a page is
// young up to 2 changes, so a few simulated days give pages of every
// source.
func dynamicTestSchedule() ScheduleOptions {
	cfg := crawldb.DefaultScheduleConfig()
	cfg.Dynamic.MaxChanges = 2
	return ScheduleOptions{Name: "dynamic", Config: cfg}
}

// crawlDaily crawls the small simweb for rounds simulated days with every
// page due daily (the default schedule with a 1-day interval), so that
// the pages have fetch histories.
func crawlDaily(t *testing.T, env Env, rounds int, t0 time.Time) (CrawlOptions, func(rounds int, at time.Time, sched ScheduleOptions) *CrawlResult) {
	t.Helper()
	srv, seeds := crawlWeb(t, t.TempDir())
	daily := crawldb.DefaultScheduleConfig()
	daily.DefaultInterval = 24 * time.Hour
	o := testCrawlOptions(srv, seeds, rounds, t0)
	o.Generate.Schedule = ScheduleOptions{Name: "default", Config: daily}
	o.Update.Schedule = o.Generate.Schedule
	o.Inject.Schedule = o.Generate.Schedule
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	more := func(rounds int, at time.Time, sched ScheduleOptions) *CrawlResult {
		t.Helper()
		p := testCrawlOptions(srv, seeds, rounds, at)
		p.Seeds = nil
		p.Generate.Schedule, p.Update.Schedule = sched, sched
		res, err := Crawl(context.Background(), env, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	return o, more
}

func clusterDirs(t *testing.T, env Env) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(env.Crawl, "clusters"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestClusterThenDynamicUpdate crawls simweb for a few simulated days,
// clusters the CrawlDB, then runs a round with the dynamic schedule and
// checks that the result is applied, the periods are the samples' and
// every fetched page got the source the rule gives it.
func TestClusterThenDynamicUpdate(t *testing.T) {
	env := testEnv(t)
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	_, more := crawlDaily(t, env, 6, t0)
	before := dbRows(t, env)

	eps, n, err := SuggestClusterEps(context.Background(), env, ClusterOptions{MinPts: 4, MaxChanges: 2})
	if err != nil {
		t.Fatal(err)
	}
	young := 0
	for _, d := range before {
		if dbscan.YoungPage(d, 2) {
			young++
		}
	}
	if n != young || !(eps > 0) {
		t.Fatalf("SuggestClusterEps: eps %v over %d points, want %d young pages", eps, n, young)
	}
	cr, err := Cluster(context.Background(), env, ClusterOptions{Eps: 1.2, MinPts: 4, MinSamples: 2, SampleRate: 0.1, MaxChanges: 2, Partitions: 3,
		Now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	p := cr.Params
	if cr.Name != "20260501000000" || p.Points != int64(young) || p.Clusters < 2 || p.Core+p.Border+p.Noise != p.Points || cr.Samples == 0 {
		t.Fatalf("cluster result %s: %+v, %d samples (%d young pages)", cr.Name, p, cr.Samples, young)
	}
	if got := clusterDirs(t, env); !slices.Equal(got, []string{cr.Name}) {
		t.Errorf("clusters/ holds %v", got)
	}
	// The labels equal single-machine DBSCAN on the standardized young
	// pages in URL order.
	var pts dbscan.Points
	var urls []string
	pts = dbscan.NewPoints(dbscan.NumFeatures, young)
	for _, d := range before {
		if dbscan.YoungPage(d, 2) {
			x := dbscan.FeatureVector(d.Features)
			if err := pts.Append(x[:]); err != nil {
				t.Fatal(err)
			}
			urls = append(urls, d.URL)
		}
	}
	if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
		t.Fatal(err)
	}
	want, err := dbscan.Cluster(context.Background(), pts, dbscan.Params{Eps: 1.2, MinPts: 4})
	if err != nil {
		t.Fatal(err)
	}
	as, err := dbscan.ReadAssignments(nil, cr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	label := map[string]int32{}
	for i, a := range as {
		if a.Key != urls[i] || a.Label != want.Labels[i] {
			t.Fatalf("assignment %d: %s %d, single-machine %s %d", i, a.Key, a.Label, urls[i], want.Labels[i])
		}
		label[a.Key] = a.Label
	}
	samples, err := dbscan.ReadOutput[dbscan.Sample](nil, filepath.Join(cr.Dir, dbscan.DirSamples))
	if err != nil {
		t.Fatal(err)
	}
	sample := map[string]bool{}
	var acc crawldb.PeriodAccumulator
	byURL := map[string]crawldb.Datum{}
	for _, d := range before {
		byURL[d.URL] = d
	}
	for _, s := range samples {
		sample[s.Key] = true
		d := byURL[s.Key]
		d.ClusterID, d.ClusterSample = s.Label, true
		acc.Add(&d)
	}
	wantPeriods := acc.Periods()
	if len(wantPeriods) == 0 {
		t.Fatal("no cluster has a sample period")
	}

	// A round with the dynamic schedule applies the result.
	sched := dynamicTestSchedule()
	res := more(1, t0.AddDate(0, 0, 6), sched)
	up := res.Rounds[0].Update
	if up.ClustersApplied != cr.Dir || up.Clusters == nil || up.Clusters.Name != cr.Name {
		t.Fatalf("update applied %q, record %+v", up.ClustersApplied, up.Clusters)
	}
	if !mapsEqual(up.Clusters.Periods, wantPeriods) {
		t.Errorf("periods %v, want %v", up.Clusters.Periods, wantPeriods)
	}
	if up.PeriodsRows != int64(len(before)) {
		t.Errorf("pre-pass read %d rows of %d", up.PeriodsRows, len(before))
	}
	fetchedAt := t0.AddDate(0, 0, 6)
	sources := map[crawldb.Source]int{}
	for _, d := range dbRows(t, env) {
		old, known := byURL[d.URL]
		// The assignment: labels and samples for clustered pages, -1 for
		// young pages outside it.
		if l, ok := label[d.URL]; ok {
			if d.ClusterID != l || d.ClusterSample != sample[d.URL] {
				t.Errorf("%s: cluster %d sample %v, want %d %v", d.URL, d.ClusterID, d.ClusterSample, l, sample[d.URL])
			}
		} else if d.ClusterSample || (known && old.ChangeCount <= 2 && d.ClusterID != -1) || (!known && d.ClusterID != -1) {
			t.Errorf("%s: not clustered but cluster %d sample %v", d.URL, d.ClusterID, d.ClusterSample)
		}
		if !known || d.PrevFetchTime.Before(fetchedAt) || d.Status == crawldb.StatusDBGone {
			continue
		}
		var want crawldb.Source
		_, hasPeriod := wantPeriods[d.ClusterID]
		switch {
		case d.ChangeCount > 2:
			want = crawldb.SourcePoisson
		case d.ClusterSample:
			want = crawldb.SourceAdaptive
		case d.ClusterID >= 0 && hasPeriod:
			want = crawldb.SourceCluster
		default:
			want = crawldb.SourceAdaptive
		}
		if d.Source != want {
			t.Errorf("%s (M=%d, cluster %d, sample %v): source %s, want %s", d.URL, d.ChangeCount, d.ClusterID, d.ClusterSample, d.Source, want)
		}
		if want == crawldb.SourceCluster {
			k := sched.Config.Dynamic.Kinds[crawldb.PageKindOf(d.URL)]
			want := max(wantPeriods[d.ClusterID], k.Min)
			// A page never seen to change waits at least UnchangedFactor
			// times its history's span.
			if h := d.ChangeHistory(); d.ChangeCount == 0 && sched.Config.Dynamic.UnchangedFactor > 0 && len(h) > 1 {
				f := sched.Config.Dynamic.UnchangedFactor
				span := h[len(h)-1].Time.Sub(h[0].Time)
				want = max(want, time.Duration(float64(span)*f))
			}
			wantSec := int32((min(want, k.Max) + time.Second/2) / time.Second)
			if d.FetchInterval != wantSec {
				t.Errorf("%s: interval %d s, want the cluster's %d s", d.URL, d.FetchInterval, wantSec)
			}
		}
		sources[d.Source]++
	}
	t.Logf("sources of the pages fetched with the dynamic schedule: %v; periods %v", sources, up.Clusters.Periods)
	for _, s := range []crawldb.Source{crawldb.SourceCluster, crawldb.SourcePoisson, crawldb.SourceAdaptive} {
		if sources[s] == 0 {
			t.Errorf("no fetched page has source %s: %v", s, sources)
		}
	}
	// readdb stats counts them.
	rd, err := crawldb.Open(storage.NewLocal(), filepath.Join(env.Crawl, "crawldb"))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := rd.Stats(context.Background(), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	st := stats.Report()
	all := map[string]int64{}
	for _, d := range dbRows(t, env) {
		all[string(d.Source)]++
	}
	if !mapsEqual(st.Sources, all) {
		t.Errorf("stats sources %v, rows %v", st.Sources, all)
	}

	// The next round does not apply the result again and keeps the record.
	res = more(1, t0.AddDate(0, 0, 7), sched)
	up = res.Rounds[0].Update
	if up.ClustersApplied != "" || up.Clusters == nil || up.Clusters.Name != cr.Name {
		t.Errorf("second dynamic update: applied %q, record %+v", up.ClustersApplied, up.Clusters)
	}
	rec, ok, err := ReadClustersApplied(env)
	if err != nil || !ok || rec.Name != cr.Name || len(rec.Periods) == 0 {
		t.Errorf("record %+v %v %v", rec, ok, err)
	}
	// An adaptive round carries the record forward.
	more(1, t0.AddDate(0, 0, 8), ScheduleOptions{Name: "adaptive"})
	if rec2, ok, err := ReadClustersApplied(env); err != nil || !ok || rec2.Name != rec.Name {
		t.Errorf("after an adaptive round: %+v %v %v", rec2, ok, err)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestClusterFailureLeavesNoResult makes the label job fail: no
// clusters/<ts> is published, the work directory is gone, the CrawlDB is
// untouched; a work directory left by a killed run is removed by the next
// run, and an unpublished result is never applied.
func TestClusterFailureLeavesNoResult(t *testing.T) {
	env := testEnv(t)
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	_, more := crawlDaily(t, env, 3, t0)
	before := dbRows(t, env)
	failing := env
	failing.Runner = mapreduce.RunnerFunc(func(ctx context.Context, s mapreduce.Spec) (*mapreduce.Result, error) {
		if s.JobName() == dbscan.JobLabel {
			return nil, errors.New("injected failure")
		}
		return env.Run(ctx, s)
	})
	o := ClusterOptions{Eps: 1, MinPts: 3, MinSamples: 1}
	if _, err := Cluster(context.Background(), failing, o); err == nil {
		t.Fatal("cluster with a failing job succeeded")
	}
	if got := clusterDirs(t, env); len(got) != 0 {
		t.Errorf("a failed run left %v in clusters/", got)
	}
	if after := dbRows(t, env); len(after) != len(before) {
		t.Errorf("CrawlDB changed: %d rows, was %d", len(after), len(before))
	}
	// A killed run's leftovers: a work directory, and a result directory
	// without its params (as if killed inside the publish; dbscan renames
	// the whole result, so this only happens by hand).
	writeFile(t, filepath.Join(env.Crawl, "clusters", "_work-20260101000000", "x"), "x")
	writeFile(t, filepath.Join(env.Crawl, "clusters", "29990101000000", dbscan.DirAssignment, "_SUCCESS"), "")
	names, err := ClusterResults(env)
	if err != nil || len(names) != 0 {
		t.Errorf("unpublished results listed: %v %v", names, err)
	}
	res := more(1, t0.AddDate(0, 0, 3), dynamicTestSchedule())
	if up := res.Rounds[0].Update; up.ClustersApplied != "" || up.Clusters.Result != "" {
		t.Errorf("dynamic update applied %q", up.ClustersApplied)
	}
	cr, err := Cluster(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := clusterDirs(t, env); !slices.Equal(got, []string{cr.Name, "29990101000000"}) {
		t.Errorf("clusters/ holds %v", got)
	}
	// Bad parameters fail before anything is written.
	if _, err := Cluster(context.Background(), env, ClusterOptions{Eps: 0, MinPts: 3}); err == nil {
		t.Error("eps 0 accepted")
	}
	if _, err := Cluster(context.Background(), Env{Crawl: filepath.Join(t.TempDir(), "none")}, o); err == nil {
		t.Error("cluster without a CrawlDB succeeded")
	}
}

// TestDynamicUpdateStreaming runs the dynamic updatedb that applies a
// cluster result as Hadoop Streaming tasks would (the job rebuilt from its
// spec in every task, so the periods travel in the spec) and compares the
// CrawlDB and its cluster record with the local engine's.
func TestDynamicUpdateStreaming(t *testing.T) {
	env := testEnv(t)
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o, _ := crawlDaily(t, env, 5, t0)
	if _, err := Cluster(context.Background(), env, ClusterOptions{Eps: 1.2, MinPts: 4, MinSamples: 2, MaxChanges: 2}); err != nil {
		t.Fatal(err)
	}
	// One more round up to parse, by hand.
	ctx := context.Background()
	at := t0.AddDate(0, 0, 5)
	sched := dynamicTestSchedule()
	if err := o.SetClock(ctx, at); err != nil {
		t.Fatal(err)
	}
	gen, err := Generate(ctx, env, GenerateOptions{Now: at, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	f := o.Fetch
	f.Segment, f.Now = gen.Segment, at
	if _, err := Fetch(ctx, env, f); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(ctx, env, ParseOptions{Segment: gen.Segment}); err != nil {
		t.Fatal(err)
	}
	// The same update on a copy of the crawl, as streaming tasks.
	streamed := testEnv(t)
	if err := os.CopyFS(streamed.Crawl, os.DirFS(env.Crawl)); err != nil {
		t.Fatal(err)
	}
	streamed.Runner = streamingRunner(t, streamed.Storage, filepath.Join(t.TempDir(), "work"))
	seg := func(e Env) string { return filepath.Join(e.Crawl, "segments", gen.Name) }
	a, err := UpdateDB(ctx, env, UpdateOptions{Segments: []string{seg(env)}, Now: at, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	b, err := UpdateDB(ctx, streamed, UpdateOptions{Segments: []string{seg(streamed)}, Now: at, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	if a.ClustersApplied == "" || b.ClustersApplied == "" || len(a.Clusters.Periods) == 0 || !mapsEqual(a.Clusters.Periods, b.Clusters.Periods) {
		t.Fatalf("applied %q and %q, periods %v and %v", a.ClustersApplied, b.ClustersApplied, a.Clusters.Periods, b.Clusters.Periods)
	}
	local, remote := readDB(t, env), readDB(t, streamed)
	if !reflect.DeepEqual(local, remote) {
		t.Errorf("CrawlDBs differ (%d and %d rows)", len(local), len(remote))
	}
	clustered := 0
	for _, d := range local {
		if d.ClusterID >= 0 {
			clustered++
		}
	}
	if clustered == 0 {
		t.Error("no page has a cluster after the update")
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	good := ClusterOptions{Eps: 0.5, MinPts: 4, MinSamples: 2, SampleRate: 0.1, MaxChanges: 3, Partitions: 2}
	if err := good.Validate(); err != nil {
		t.Fatalf("%+v: %v", good, err)
	}
	if err := (ClusterOptions{MinPts: 1, AnyChanges: true}).Validate(); err != nil {
		t.Errorf("no eps yet, any changes: %v", err)
	}
	for _, bad := range []func(o *ClusterOptions){
		func(o *ClusterOptions) { o.Eps = -1 },
		func(o *ClusterOptions) { o.Eps = math.NaN() },
		func(o *ClusterOptions) { o.Eps = math.Inf(1) },
		func(o *ClusterOptions) { o.MinPts = 0 },
		func(o *ClusterOptions) { o.SampleRate = 1.5 },
		func(o *ClusterOptions) { o.MinSamples = -1 },
		func(o *ClusterOptions) { o.MaxChanges = -1 },
		func(o *ClusterOptions) { o.AnyChanges = true },
		func(o *ClusterOptions) { o.Partitions = -1 },
	} {
		o := good
		bad(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if got := (ClusterOptions{}).maxChanges(); got != dbscan.DefaultMaxChanges {
		t.Errorf("zero MaxChanges is %d", got)
	}
	if got := (ClusterOptions{AnyChanges: true}).maxChanges(); got >= 0 {
		t.Errorf("AnyChanges is %d", got)
	}
}
