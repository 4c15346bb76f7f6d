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
// fetched again and their intervals adapt within the 10 rounds. Policies:
// Nutch's adaptive schedule, and the dynamic schedule without clusters
// (the crawl runs no `trawl cluster`, the simulator does not recluster
// within the run), which then schedules by page kind with the adaptive
// method.
//
// Sources of disagreement, hence the tolerances (2% of the fetches may
// differ; changes detected within 5%):
//   - fetch-time jitter: a crawl's fetch time is its round's time plus the
//     time the fetch had run (seconds here, one host's pages are 50 ms
//     apart), the simulator's the round's time plus a fixed lag (1 s
//     here). A page that changes between the two sees a different version
//     (for the fastest simweb pages, 48 changes a day, about 0.3% of
//     fetches), and a next fetch time within that much of a round's time
//     can fall on either side of it.
//   - politeness and time limits: a crawl fetch that does not finish
//     within the round (fetch time limit, a host's queue dropped after too
//     many errors) is retried later; none are expected on this
//     hazard-free web, and a fetch that is not fetch_success or
//     notmodified counts as a disagreement.
func TestRevisitSimulatorMatchesCrawl(t *testing.T) {
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

	for _, policy := range []string{revisit.PolicyAdaptive, revisit.PolicyDynamic} {
		t.Run(policy, func(t *testing.T) {
			// The crawl.
			crawl := filepath.Join(dir, policy)
			sched := jobs.ScheduleOptions{Name: policy, Config: sc}
			// One crawl of one round a day, as a daily `trawl crawl --rounds
			// 1` does: a crawl stops at a round with nothing due, and the
			// next day's goes on.
			segDay := map[string]int{}
			env := newEnv(t, crawl)
			for d := range days {
				now := tr.Start.Add(time.Duration(d) * 24 * time.Hour)
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
			var crawlChangeSum int
			for u, d := range readDB(t, crawl) {
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
			rep, err := revisit.Run(ctx, tr, revisit.Config{
				Days: days, Budget: len(tr.Pages), Policies: []string{policy}, Schedule: &sc,
				Recluster: days + 1, FetchLag: time.Second, Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
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
			t.Logf("%s: %d pages, %d rounds: simulator %d fetches %v, %d changes detected; crawl %d fetches %v (%d not successful), %d changes detected; %d (round, page) fetches only in the simulator, %d only in the crawl; %d pages with another change count",
				policy, len(tr.Pages), days, m.Fetches, m.DailyFetches, m.Changed, len(crawlFetch), crawlPerDay, bad, crawlChangeSum,
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
