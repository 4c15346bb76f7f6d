package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// crawlWeb serves a small synthetic web without hazards for the crawl
// driver's tests and returns its server and seed file.
func crawlWeb(t *testing.T, dir string) (*simweb.Server, string) {
	t.Helper()
	cfg := simweb.Config{Seed: 3, Hosts: 6, Pages: 90}
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	seeds := filepath.Join(dir, "seeds.txt")
	writeFile(t, seeds, strings.Join(srv.Seeds(), "\n")+"\n")
	return srv, seeds
}

// testCrawlOptions crawls srv with no politeness delay, one simulated day
// per round from t0, with Nutch's DefaultFetchSchedule (with the adaptive
// schedule, pages last modified years ago are due again at once: see
// e2e.TestAdaptiveScheduleMatchesTruth, and a crawl until nothing is due
// would not end).
func testCrawlOptions(srv *simweb.Server, seeds string, rounds int, t0 time.Time) CrawlOptions {
	sched := ScheduleOptions{Name: "default"}
	return CrawlOptions{
		Seeds:         []string{seeds},
		Rounds:        rounds,
		Now:           t0,
		RoundInterval: 24 * time.Hour,
		Generate:      GenerateOptions{Schedule: sched},
		Update:        UpdateOptions{Schedule: sched},
		Fetch: FetchOptions{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true,
			DNSServers: []string{srv.DNSAddr()}},
		SetClock: func(_ context.Context, t time.Time) error { return srv.SetClock(t, 0) },
	}
}

func segmentNames(t *testing.T, env Env) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(env.Crawl, "segments"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// dbRows reads the CrawlDB sorted by URL.
func dbRows(t *testing.T, env Env) []crawldb.Datum {
	t.Helper()
	r, err := crawldb.Open(storage.NewLocal(), filepath.Join(env.Crawl, "crawldb"))
	if err != nil {
		t.Fatal(err)
	}
	var out []crawldb.Datum
	for d, err := range r.Sorted(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestCrawlRounds runs two rounds and checks the rounds' times, stages,
// state file and the CrawlDB; then a third with --rounds -1 semantics
// stops when nothing is due.
func TestCrawlRounds(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	var rounds []RoundResult
	o := testCrawlOptions(srv, seeds, 2, t0)
	o.OnRound = func(r RoundResult) { rounds = append(rounds, r) }
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inject == nil || res.Inject.Injected != int64(len(srv.Seeds())) {
		t.Errorf("inject: %+v", res.Inject)
	}
	if len(res.Rounds) != 2 || len(rounds) != 2 {
		t.Fatalf("%d rounds, %d reported", len(res.Rounds), len(rounds))
	}
	for i, r := range rounds {
		if r.Round != i+1 || r.Run != i+1 || !r.Time.Equal(t0.AddDate(0, 0, i)) || r.Resumed || r.Err != nil {
			t.Errorf("round %d: %+v", i+1, r)
		}
		if !slices.Equal(r.Stages, []string{"generate", "fetch", "parse", "updatedb"}) {
			t.Errorf("round %d stages %v", i+1, r.Stages)
		}
		if r.Fetch == nil || r.Fetch.Fetched == 0 || r.Parse == nil || r.Parse.Parsed == 0 || r.Update == nil {
			t.Errorf("round %d results missing: %+v", i+1, r)
		}
		if r.Generated != r.Generate.Selected {
			t.Errorf("round %d generated %d, selected %d", i+1, r.Generated, r.Generate.Selected)
		}
		s := r.Summary()
		for _, w := range []string{"round ", r.Name, "generated", "fetched", "new URLs", "pages/s"} {
			if !strings.Contains(s, w) {
				t.Errorf("summary lacks %q:\n%s", w, s)
			}
		}
	}
	if rounds[0].Generated != int64(len(srv.Seeds())) {
		t.Errorf("round 1 generated %d, want the %d seeds", rounds[0].Generated, len(srv.Seeds()))
	}
	// Every segment is merged; the CrawlDB knows the seeds fetched.
	for _, name := range segmentNames(t, env) {
		if _, err := os.Stat(filepath.Join(env.Crawl, "segments", name, UpdatedMarker)); err != nil {
			t.Errorf("segment %s not merged: %v", name, err)
		}
	}
	fetched := 0
	for _, d := range dbRows(t, env) {
		if d.Status == crawldb.StatusDBFetched {
			fetched++
			if d.PrevFetchTime.Before(t0) || !d.PrevFetchTime.Before(t0.AddDate(0, 0, 2)) {
				t.Errorf("%s fetched at %s, outside the simulated rounds", d.URL, d.PrevFetchTime)
			}
		}
	}
	if fetched < len(srv.Seeds()) {
		t.Errorf("%d pages fetched", fetched)
	}
	if !srv.Now().Equal(t0.AddDate(0, 0, 1)) {
		t.Errorf("simweb clock %s, want round 2's time", srv.Now())
	}

	// Continue without Now: the clock goes on from the recorded round.
	o = testCrawlOptions(srv, seeds, 1, time.Time{})
	o.Seeds = nil
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Round != 3 || !res.Rounds[0].Time.Equal(t0.AddDate(0, 0, 2)) {
		t.Errorf("continued round: %+v", res.Rounds)
	}

	// Nothing is due at round 3's time any more: a crawl until nothing
	// is due stops at once.
	o = testCrawlOptions(srv, seeds, -1, t0.AddDate(0, 0, 2))
	o.Seeds, o.RoundInterval = nil, 0
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exhausted || len(res.Rounds) != 0 {
		t.Errorf("nothing due: exhausted %v, %d rounds", res.Exhausted, len(res.Rounds))
	}

	// A new crawl until nothing is due, at a fixed simulated time (with
	// the clock moving, changing pages would always be due again): the
	// small web runs out.
	env = testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o = testCrawlOptions(srv, seeds, -1, t0)
	o.RoundInterval = 0
	res, err = Crawl(ctx, env, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exhausted || len(res.Rounds) < 3 {
		t.Fatalf("rounds -1: exhausted %v after %d rounds", res.Exhausted, len(res.Rounds))
	}
	for i, r := range res.Rounds {
		if r.Round != 1+i || !r.Time.Equal(t0) {
			t.Errorf("round %d of -1: number %d at %s", i+1, r.Round, r.Time)
		}
	}
	if last := res.Rounds[len(res.Rounds)-1]; last.Fetch == nil {
		t.Errorf("last round: %+v", last)
	}
}

// TestCrawlStopAndResume stops a crawl with the stop file between generate
// and fetch, checks that the next crawl resumes the half-done round at the
// round's own time, then stops one after fetch (crawl_fetch removed, so
// content alone is published) and checks the resume fetches again.
func TestCrawlStopAndResume(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	stop := filepath.Join(env.Crawl, StopFile)
	o := testCrawlOptions(srv, seeds, 3, t0)
	// The clock is set after the stop check of round 2, before its
	// generate: a stop file made there stops the round before fetch.
	o.SetClock = func(_ context.Context, at time.Time) error {
		if at.Equal(t0.AddDate(0, 0, 1)) {
			writeFile(t, stop, "")
		}
		return srv.SetClock(at, 0)
	}
	res, err := Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || len(res.Rounds) != 2 || !res.Rounds[1].Stopped {
		t.Fatalf("stopped %v after %d rounds", res.Stopped, len(res.Rounds))
	}
	if _, err := os.Stat(stop); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stop file still there: %v", err)
	}
	if st := res.Rounds[1].Stages; !slices.Equal(st, []string{"generate"}) {
		t.Errorf("stopped round ran %v", st)
	}
	half := res.Rounds[1].Name

	// Resume: the half-done segment first, at its own time, then one new
	// round.
	o = testCrawlOptions(srv, seeds, 2, time.Time{})
	o.Seeds = nil
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 2 {
		t.Fatalf("%d rounds after resume", len(res.Rounds))
	}
	r := res.Rounds[0]
	if !r.Resumed || r.Name != half || r.Round != 2 || !r.Time.Equal(t0.AddDate(0, 0, 1)) ||
		!slices.Equal(r.Stages, []string{"fetch", "parse", "updatedb"}) || r.Generated == 0 {
		t.Errorf("resumed round: %+v", r)
	}
	if r := res.Rounds[1]; r.Resumed || r.Round != 3 || !r.Time.Equal(t0.AddDate(0, 0, 2)) {
		t.Errorf("round after the resumed one: %+v", r)
	}

	// A round whose fetch published content but not crawl_fetch (a crash
	// between the two renames): the resume removes content and fetches
	// again.
	// The segment is made by hand (generate, fetch, then crawl_fetch
	// removed); the crawl gives it the next round's time, t0+3d.
	o = testCrawlOptions(srv, seeds, 1, time.Time{})
	o.Seeds = nil
	gen, err := Generate(context.Background(), env, GenerateOptions{Now: t0.AddDate(0, 0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "trawl-test",
		NoServerDelay: true, AllowPrivate: true, DNSServers: []string{srv.DNSAddr()}, Now: t0.AddDate(0, 0, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(env.Crawl, "segments", gen.Name, segment.DirFetch)); err != nil {
		t.Fatal(err)
	}
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 {
		t.Fatalf("%d rounds", len(res.Rounds))
	}
	if r := res.Rounds[0]; r.Name != gen.Name || !r.Resumed || !r.Time.Equal(t0.AddDate(0, 0, 3)) ||
		!slices.Equal(r.Stages, []string{"fetch", "parse", "updatedb"}) {
		t.Errorf("resumed hand-made round: %+v", r)
	}
}

// TestCrawlDiscardsStaleSegment: a half-done segment older than a merged
// one cannot be resumed and is removed.
func TestCrawlDiscardsStaleSegment(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	res, err := Crawl(context.Background(), env, testCrawlOptions(srv, seeds, 1, t0))
	if err != nil {
		t.Fatal(err)
	}
	merged := res.Rounds[0].Name
	// A copy of the merged segment's fetch list under an older name,
	// not fetched: what a crash long ago would leave.
	mt, _ := time.Parse(segmentNameLayout, merged)
	old := mt.Add(-time.Hour).Format(segmentNameLayout)
	src := filepath.Join(env.Crawl, "segments", merged, segment.DirGenerate)
	dst := filepath.Join(env.Crawl, "segments", old, segment.DirGenerate)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	o := testCrawlOptions(srv, seeds, 1, time.Time{})
	o.Seeds = nil
	res, err = Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Discarded) != 1 || !strings.HasSuffix(res.Discarded[0], old) {
		t.Errorf("discarded %v, want %s", res.Discarded, old)
	}
	if _, err := os.Stat(filepath.Join(env.Crawl, "segments", old)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale segment still there: %v", err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Resumed {
		t.Errorf("rounds after discarding: %+v", res.Rounds)
	}
}

// TestCrawlLockAndErrors: a second crawl of a locked crawl directory fails
// with ErrLocked; bad options are refused; a missing agent fails the fetch
// with the round's number.
func TestCrawlLockAndErrors(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	if err := os.MkdirAll(env.Crawl, 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := crawldb.Lock(storage.NewLocal(), env.Crawl, "crawl", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Crawl(context.Background(), env, testCrawlOptions(srv, seeds, 1, time.Time{}))
	if !errors.Is(err, crawldb.ErrLocked) {
		t.Errorf("crawl of a locked directory: %v", err)
	}
	if err := h.Unlock(); err != nil {
		t.Fatal(err)
	}
	for _, rounds := range []int{0, -2} {
		if _, err := Crawl(context.Background(), env, testCrawlOptions(srv, seeds, rounds, time.Time{})); err == nil {
			t.Errorf("rounds %d: no error", rounds)
		}
	}
	// Options a job would refuse fail the crawl before any job runs.
	o := testCrawlOptions(srv, seeds, 1, time.Time{})
	o.Fetch.Agent = ""
	res, err := Crawl(context.Background(), env, o)
	if err == nil || !strings.Contains(err.Error(), "crawl: fetch: ") || !strings.Contains(err.Error(), "agent") {
		t.Errorf("crawl without an agent: %v", err)
	}
	if res != nil {
		t.Errorf("a crawl with bad options ran: %+v", res)
	}
	// A round that fails is reported as the crawl's error and in its
	// rounds: here parse cannot read its URL filter rules.
	o = testCrawlOptions(srv, seeds, 1, time.Time{})
	o.Parse.Filters.RegexFiles = []string{filepath.Join(t.TempDir(), "missing-rules.txt")}
	res, err = Crawl(context.Background(), env, o)
	if err == nil || !strings.Contains(err.Error(), "round 1") {
		t.Errorf("crawl with a failing round: %v", err)
	}
	if res == nil || len(res.Rounds) != 1 || res.Rounds[0].Err == nil {
		t.Errorf("failed round not reported: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(env.Crawl, CrawlLockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("crawl lock left after a failure: %v", err)
	}
}

// TestCrawlClusterEvery runs four dynamic rounds clustering after every
// second one: rounds 2 and 4 publish clusters named by their time, and
// round 3's updatedb applies round 2's result.
func TestCrawlClusterEvery(t *testing.T) {
	env := testEnv(t)
	srv, seeds := crawlWeb(t, t.TempDir())
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	o := testCrawlOptions(srv, seeds, 4, t0)
	sched := ScheduleOptions{Name: "dynamic"}
	o.Generate.Schedule, o.Update.Schedule = sched, sched
	o.ClusterEvery = 2
	o.Cluster = ClusterOptions{Eps: 0.5, MinPts: 3, MinSamples: 1}
	var rounds []RoundResult
	o.OnRound = func(r RoundResult) { rounds = append(rounds, r) }
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 4 {
		t.Fatalf("%d rounds, want 4", len(rounds))
	}
	var want []string
	for i, r := range rounds {
		clustered := r.Cluster != nil
		if clustered != (r.Round%2 == 0) || clustered != slices.Contains(r.Stages, "cluster") {
			t.Errorf("round %d: clustered %v, stages %v", r.Round, clustered, r.Stages)
		}
		if clustered {
			if r.Cluster.Name != r.Time.Format("20060102150405") || r.Cluster.Params.Points == 0 {
				t.Errorf("round %d: cluster result %q of %d points, want one named by %v", r.Round, r.Cluster.Name, r.Cluster.Params.Points, r.Time)
			}
			want = append(want, r.Cluster.Name)
		}
		if i == 2 && (r.Update == nil || r.Update.Clusters == nil || r.Update.Clusters.Name != rounds[1].Cluster.Name) {
			t.Errorf("round 3's updatedb did not apply round 2's clusters: %+v", r.Update)
		}
	}
	got, err := ClusterResults(env)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("cluster results %v, want %v", got, want)
	}
	o.Cluster.Eps = 0
	if _, err := Crawl(context.Background(), env, o); err == nil || !strings.Contains(err.Error(), "eps") {
		t.Errorf("clustering without an eps: %v", err)
	}
}
