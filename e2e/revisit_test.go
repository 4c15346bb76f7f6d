package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/revisit"
	"github.com/trawl/trawl/simweb"
)

// Tolerances of TestRevisitSimulatorMatchesCrawl: the share of (round,
// page) fetches that only one of the simulator and the crawl made, and the
// relative difference of their changes detected. See the test's
// documentation for why they are not 0.
const (
	revisitFetchTolerance  = 0.02
	revisitChangeTolerance = 0.05
)

// TestRevisitSimulatorMatchesCrawl runs the same simulated days twice: as
// real crawl rounds against simweb (jobs.Crawl, what `trawl crawl` runs:
// inject, then generate, fetch, parse and updatedb, one round a simulated
// day at the day's time, the server's clock set to it; one Crawl a day,
// since a Crawl stops at a round with nothing due) and in the revisit
// simulator, with the same schedule, and compares
// which pages each fetched in which round and the changes each detected.
//
// Set-up: a web of 300 pages without hazards; every page the simulator
// knows (content pages answering 200 that robots.txt allows) is injected,
// and updatedb adds no other URL, so both know the same pages from the
// first round; no topN (every due page is fetched, so generate's ranking,
// OPIC score in the crawl and most overdue first in the simulator, does
// not matter); the schedule's default interval is one day, so pages are
// fetched again and their intervals adapt within the 10 rounds (the
// dynamic schedule's directory and other pages start at 2 days). Cases:
// Nutch's adaptive schedule; the dynamic schedule without clusters (the
// crawl runs no `trawl cluster`, the simulator does not recluster), which
// then schedules by page kind with the adaptive method; and the dynamic
// schedule with `trawl cluster` (jobs.Cluster, eps 1, minPts 5) before
// rounds 3, 6 and 9 against the simulator's reclustering on the same days.
// The simulator records the sizes of the versions it fetched as served
// (Truth.VersionBytes), so both cluster the same features. Besides the
// fetches and changes, every page's final datum is compared: features,
// schedule source, clustered or not, sample flag, and interval to a
// minute.
//
// Sources of disagreement, hence the tolerances (2% of the fetches and of
// the datums may differ; changes detected within 5%; measured: none):
//   - fetch-time jitter: a crawl's fetch time is its round's time plus the
//     time the fetch had run (seconds here, one host's pages are 50 ms
//     apart), the simulator's the round's time plus a fixed lag (1 s
//     here). A page that changes between the two sees a different version
//     (for the fastest simweb pages, 48 changes a day, about 0.3% of
//     fetches), and a next fetch time within that much of a round's time
//     can fall on either side of it.
//   - the adaptive method's sync delta moves the next fetch by the
//     difference of two fetch lags: intervals differ by seconds (compared
//     to a minute), and a next fetch within that much of a round's time
//     would fall on either side of it;
//   - DBSCAN: a point within rounding of eps or of a border could be
//     labelled differently by the partitioned run (it equals the
//     single-machine one by construction) if the standardization's moments
//     differ in the last bits (streaming merge against one pass);
//   - politeness and time limits: a crawl fetch that does not finish
//     within the round (fetch time limit, a host's queue dropped after too
//     many errors) is retried later; none are expected on this
//     hazard-free web, and a fetch that is not fetch_success or
//     notmodified counts as a disagreement.
func TestRevisitSimulatorMatchesCrawl(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crawls 10 rounds")
	}
	w := newWorld(t, simweb.Config{Seed: 21, Hosts: 8, Pages: 300})
	const days = 10
	ctx := context.Background()
	tr, err := revisit.NewTruth(ctx, w.web, days*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The sizes of the versions fetched, with the server's URLs in them,
	// as the crawl's parse records them: the clustering sees the same
	// features.
	tr.VersionBytes, tr.Addressing = true, w.srv.Addressing()
	pageOf := map[string]int{} // served URL → index into tr.Pages
	var seeds []string
	for i, p := range tr.Pages {
		u := w.urls[p.ID]
		pageOf[u] = i
		seeds = append(seeds, u)
	}
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := crawldb.DefaultScheduleConfig()
	sc.DefaultInterval = 24 * time.Hour
	// Short first intervals for the dynamic schedule's directory and
	// other pages, so that samples and members are refetched, and
	// clusters get periods, within the 10 days.
	sc.Dynamic.Kinds[crawldb.KindDirectory].Initial = 2 * 24 * time.Hour
	sc.Dynamic.Kinds[crawldb.KindOther].Initial = 2 * 24 * time.Hour

	// DBSCAN's parameters of the clustered case: on 199 pages, eps 1 and
	// minPts 5 give a few clusters and noise.
	const eps, minPts, minSamples, sampleRate = 1.0, 5, 3, 0.1
	for _, c := range []struct {
		name, policy string
		recluster    int // 0: no clustering
	}{
		{"adaptive", revisit.PolicyAdaptive, 0},
		{"dynamic", revisit.PolicyDynamic, 0},
		{"dynamic-clustered", revisit.PolicyDynamic, 3},
	} {
		policy := c.policy
		t.Run(c.name, func(t *testing.T) {
			// The crawl.
			crawl := filepath.Join(dir, c.name)
			sched := jobs.ScheduleOptions{Name: policy, Config: sc}
			// One crawl of one round a day, as a daily `trawl crawl --rounds
			// 1` does: a crawl stops at a round with nothing due, and the
			// next day's goes on.
			segDay := map[string]int{}
			env := newEnv(t, crawl)
			for d := range days {
				now := tr.Start.Add(time.Duration(d) * 24 * time.Hour)
				if c.recluster > 0 && d > 0 && d%c.recluster == 0 {
					cr, err := jobs.Cluster(ctx, env, jobs.ClusterOptions{Eps: eps, MinPts: minPts,
						MinSamples: minSamples, SampleRate: sampleRate, Now: now})
					if err != nil {
						t.Fatalf("day %d: cluster: %v", d, err)
					}
					t.Logf("day %d: trawl cluster: %d points, %d clusters, %d noise, %d samples", d,
						cr.Params.Points, cr.Params.Clusters, cr.Params.Noise, cr.Samples)
				}
				o := crawlOptions(w, seedFile, 1, now, policy)
				if d > 0 {
					o.Seeds = nil
				}
				o.Inject.Schedule, o.Generate.Schedule, o.Update.Schedule = sched, sched, sched
				o.Update.NoAdditions = true
				res, err := jobs.Crawl(ctx, env, o)
				if err != nil {
					t.Fatalf("day %d: %v", d, err)
				}
				for _, r := range res.Rounds {
					if !r.Time.Equal(now) {
						t.Errorf("day %d: round at %s", d, r.Time)
					}
					segDay[r.Name] = d
				}
			}
			crawlFetch := map[[2]int]bool{}
			bad := 0
			for _, f := range readFetches(t, crawl) {
				i, ok := pageOf[f.URL]
				d, okDay := segDay[f.seg]
				if !ok || !okDay {
					t.Errorf("crawl fetched %s in segment %s: not a simulated page or round", f.URL, f.seg)
					continue
				}
				if f.Status != crawldb.StatusFetchSuccess && f.Status != crawldb.StatusFetchNotModified {
					bad++
					continue
				}
				crawlFetch[[2]int{d, i}] = true
			}
			crawlChanges := map[int]int{}
			crawlSources := map[string]int64{}
			var crawlChangeSum int
			crawlDB := readDB(t, crawl)
			for u, d := range crawlDB {
				crawlSources[string(d.Source)]++
				i, ok := pageOf[u]
				if !ok {
					t.Errorf("CrawlDB holds %s, not a simulated page", u)
					continue
				}
				crawlChanges[i] = int(d.ChangeCount)
				crawlChangeSum += int(d.ChangeCount)
			}

			// The simulator.
			var mu sync.Mutex
			simFetch := map[[2]int]bool{}
			simChanges := map[int]int{}
			var simDB []crawldb.Datum
			recluster := days + 1 // never within the run
			if c.recluster > 0 {
				recluster = c.recluster
			}
			rep, err := revisit.Run(ctx, tr, revisit.Config{
				Days: days, Budget: len(tr.Pages), Policies: []string{policy}, Schedule: &sc,
				Recluster: recluster, Eps: eps, MinPts: minPts, MinSamples: minSamples, SampleRate: sampleRate,
				FetchLag: time.Second, NoTune: true, // the crawl's schedule as configured
				Final: func(_ string, ds []crawldb.Datum) { simDB = append([]crawldb.Datum(nil), ds...) }, Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
				Trace: func(_ string, day, page int, st crawldb.ChangeState) {
					mu.Lock()
					defer mu.Unlock()
					simFetch[[2]int{day, page}] = true
					if st == crawldb.StateModified {
						simChanges[page]++
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Policies[0]

			// Compare.
			var onlySim, onlyCrawl []string
			for k := range simFetch {
				if !crawlFetch[k] {
					onlySim = append(onlySim, fmt.Sprintf("day %d %s", k[0], tr.Pages[k[1]].URL))
				}
			}
			for k := range crawlFetch {
				if !simFetch[k] {
					onlyCrawl = append(onlyCrawl, fmt.Sprintf("day %d %s", k[0], tr.Pages[k[1]].URL))
				}
			}
			// The datums: features, schedule source, clustered or not,
			// sample flag, interval (to a minute: the fetch-time jitter
			// moves the adaptive method's sync delta by seconds).
			var rowsDiffer []string
			for i, sd := range simDB {
				cd := crawlDB[w.urls[tr.Pages[i].ID]]
				if sd.Features != cd.Features || sd.Source != cd.Source || (sd.ClusterID >= 0) != (cd.ClusterID >= 0) ||
					sd.ClusterSample != cd.ClusterSample || abs(int(sd.FetchInterval-cd.FetchInterval)) > 60 {
					rowsDiffer = append(rowsDiffer, fmt.Sprintf("%s: simulator %s cluster %d sample %v interval %d s; crawl %s cluster %d sample %v interval %d s",
						tr.Pages[i].URL, sd.Source, sd.ClusterID, sd.ClusterSample, sd.FetchInterval, cd.Source, cd.ClusterID, cd.ClusterSample, cd.FetchInterval))
				}
			}
			t.Logf("%s: %d of %d datums differ", c.name, len(rowsDiffer), len(simDB))
			if float64(len(rowsDiffer)) > revisitFetchTolerance*float64(len(simDB)) {
				t.Errorf("%d of %d datums differ in features, schedule source, clustered or not, sample flag or interval (tolerance %.0f%%): %v",
					len(rowsDiffer), len(simDB), 100*revisitFetchTolerance, head(rowsDiffer))
			}
			sort.Strings(onlySim)
			sort.Strings(onlyCrawl)
			pagesDiffer := 0
			for i := range tr.Pages {
				if simChanges[i] != crawlChanges[i] {
					pagesDiffer++
				}
			}
			crawlPerDay := make([]int, days)
			for k := range crawlFetch {
				crawlPerDay[k[0]]++
			}
			t.Logf("%s: sources at the end: simulator %v, crawl %v; %d pages, %d rounds: simulator %d fetches %v, %d changes detected; crawl %d fetches %v (%d not successful), %d changes detected; %d (round, page) fetches only in the simulator, %d only in the crawl; %d pages with another change count",
				c.name, m.Sources, crawlSources, len(tr.Pages), days, m.Fetches, m.DailyFetches, m.Changed, len(crawlFetch), crawlPerDay, bad, crawlChangeSum,
				len(onlySim), len(onlyCrawl), pagesDiffer)
			if int64(len(simFetch)) != m.Fetches || m.Changed != int64(sum(simChanges)) {
				t.Errorf("trace: %d fetches, %d changes; metrics %d, %d", len(simFetch), sum(simChanges), m.Fetches, m.Changed)
			}
			if diff := len(onlySim) + len(onlyCrawl) + bad; float64(diff) > revisitFetchTolerance*float64(m.Fetches) {
				t.Errorf("%d of %d fetches differ (tolerance %.0f%%): only in the simulator %v; only in the crawl %v",
					diff, m.Fetches, 100*revisitFetchTolerance, head(onlySim), head(onlyCrawl))
			}
			if d := abs(int(m.Changed) - crawlChangeSum); float64(d) > revisitChangeTolerance*float64(max(crawlChangeSum, 1)) {
				t.Errorf("changes detected: simulator %d, crawl %d (tolerance %.0f%%)", m.Changed, crawlChangeSum, 100*revisitChangeTolerance)
			}
			for src, n := range m.Sources {
				if d := abs(int(n - crawlSources[src])); float64(d) > revisitFetchTolerance*float64(len(tr.Pages)) {
					t.Errorf("%d pages scheduled by %s in the simulator, %d in the crawl", n, src, crawlSources[src])
				}
			}
			if c.recluster > 0 && m.Sources[string(crawldb.SourceCluster)] == 0 {
				t.Errorf("clustered case: no page scheduled by its cluster")
			}
			if m.Changed == 0 || m.Fetches <= int64(len(tr.Pages)) {
				t.Errorf("nothing to compare: %d fetches of %d pages, %d changes", m.Fetches, len(tr.Pages), m.Changed)
			}
		})
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// head is the first few entries of a list, for a failure message.
func head(s []string) []string {
	if len(s) > 8 {
		return append(s[:8:8], fmt.Sprintf("... (%d in all)", len(s)))
	}
	return s
}
