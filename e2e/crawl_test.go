package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/simweb"
)

// politeness is the server delay of the ground-truth crawls: small, so the
// tests are quick, and large next to the loopback latency, so a breach
// shows.
const politeness = 50 * time.Millisecond

// crawlOptions are the options of a ground-truth crawl of w with the
// fetch schedule sched ("default" or "adaptive").
func crawlOptions(w *world, seeds string, rounds int, now time.Time, schedule string) jobs.CrawlOptions {
	sched := jobs.ScheduleOptions{Name: schedule}
	return jobs.CrawlOptions{
		Seeds:         []string{seeds},
		Rounds:        rounds,
		Now:           now,
		RoundInterval: 24 * time.Hour,
		Generate:      jobs.GenerateOptions{NumFetchers: 2, Schedule: sched},
		Update:        jobs.UpdateOptions{Schedule: sched},
		Fetch: jobs.FetchOptions{
			Agent: "trawl-e2e", ServerDelay: politeness, AllowPrivate: true,
			DNSServers: []string{w.srv.DNSAddr()}, MaxConnections: 16,
			ConnectTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		},
		// No outlink cap: the truth's link lists are complete.
		Parse:    jobs.ParseOptions{AllOutlinks: true},
		SetClock: func(_ context.Context, t time.Time) error { return w.srv.SetClock(t, 0) },
	}
}

// TestCrawlMatchesTruth crawls a synthetic web of 100 hosts for three
// rounds, one simulated day apart, and checks the crawl against the web's
// ground truth and the server's access log; then runs a fourth round 40
// simulated days later and checks the not-modified statuses.
//
// It uses Nutch's DefaultFetchSchedule (a fixed 30-day interval); see
// TestAdaptiveScheduleMatchesTruth for trawl's default schedule.
func TestCrawlMatchesTruth(t *testing.T) {
	t.Parallel()
	w := newWorld(t, simweb.Config{Seed: 5, Hosts: 100, Pages: 1200, Hazards: simweb.HazardTraps})
	crawl := checkCrawl(t, w, "default")
	checkNotModified(t, w, crawl)
}

// TestAdaptiveScheduleMatchesTruth is TestCrawlMatchesTruth's first part
// with the adaptive schedule, trawl's default.
func TestAdaptiveScheduleMatchesTruth(t *testing.T) {
	t.Parallel()
	w := newWorld(t, simweb.Config{Seed: 5, Hosts: 100, Pages: 1200, Hazards: simweb.HazardTraps})
	checkCrawl(t, w, "adaptive")
}

// crawlRounds is the number of rounds checkCrawl runs.
const crawlRounds = 3

// checkCrawl crawls w for crawlRounds rounds with the schedule and checks
// the result against the truth; it returns the crawl directory.
func checkCrawl(t *testing.T, w *world, schedule string) string {
	dir := t.TempDir()
	crawl := dir + "/crawl"
	env := newEnv(t, crawl)
	const rounds = crawlRounds
	t0 := w.web.Config().Epoch.Add(24 * time.Hour)
	o := crawlOptions(w, w.seeds(t, dir), rounds, t0, schedule)
	var results []jobs.RoundResult
	o.OnRound = func(r jobs.RoundResult) { results = append(results, r) }
	res, err := jobs.Crawl(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != rounds || res.Stopped || res.Exhausted {
		t.Fatalf("crawl: %d rounds, stopped %v, exhausted %v", len(res.Rounds), res.Stopped, res.Exhausted)
	}
	for i, r := range results {
		t.Logf("\n%s", r.Summary())
		if want := t0.Add(time.Duration(i) * 24 * time.Hour); !r.Time.Equal(want) {
			t.Errorf("round %d at %s, want %s", i+1, r.Time, want)
		}
	}
	w.waitIdle(t)
	entries := w.srv.AccessLog().Entries()
	if d := w.srv.AccessLog().Dropped(); d > 0 {
		t.Fatalf("access log dropped %d entries", d)
	}
	dist := w.reach(rounds)
	reqs := w.requests(entries)
	fetches := readFetches(t, crawl)
	db := readDB(t, crawl)

	// Every page within rounds-1 hops is fetched exactly once (from the
	// access log and from crawl_fetch), robots-disallowed pages never;
	// nothing else is requested but the trap's months.
	fetchRows := map[string]int{}
	for _, f := range fetches {
		fetchRows[f.URL]++
	}
	var missing, twice, requestedDenied, rowsWrong []int
	for id, d := range dist {
		if d >= rounds {
			continue
		}
		p := w.pages[id]
		u := w.urls[id]
		n := len(reqs[u])
		switch {
		case !p.RobotsAllowed:
			if n > 0 {
				requestedDenied = append(requestedDenied, id)
			}
		case p.Kind == simweb.KindUnresolvable:
			// No server to ask: fetch_retry rows, retried later.
			continue
		case n == 0:
			missing = append(missing, id)
		case n > 1:
			twice = append(twice, id)
		}
		if fetchRows[u] != 1 {
			rowsWrong = append(rowsWrong, id)
		}
	}
	checked := 0
	for _, d := range dist {
		if d < rounds {
			checked++
		}
	}
	t.Logf("%d pages within %d hops of the %d seeds, %d requests in the access log", checked, rounds-1, len(w.srv.Seeds()), len(entries))
	if checked < 5*len(w.srv.Seeds()) {
		t.Errorf("only %d pages within %d hops: the check is too weak", checked, rounds-1)
	}
	if len(missing) > 0 {
		t.Errorf("%d pages within %d hops never requested:%s", len(missing), rounds-1, w.fmtIDs(missing))
	}
	if len(twice) > 0 {
		t.Errorf("%d pages requested more than once:%s", len(twice), w.fmtIDs(twice))
	}
	if len(requestedDenied) > 0 {
		t.Errorf("%d robots-disallowed pages requested:%s", len(requestedDenied), w.fmtIDs(requestedDenied))
	}
	if len(rowsWrong) > 0 {
		t.Errorf("%d pages without exactly one crawl_fetch row:%s", len(rowsWrong), w.fmtIDs(rowsWrong))
	}
	trapRequests := 0
	for u, as := range reqs {
		if w.isTrapURL(u) {
			trapRequests += len(as)
			continue
		}
		id, ok := w.byURL[u]
		if !ok {
			t.Errorf("requested %s, not a page of the web", u)
			continue
		}
		if d, ok := dist[id]; !ok || d >= rounds {
			t.Errorf("requested %s (%s), not within %d hops of the seeds", u, w.pages[id].Kind, rounds-1)
		}
	}
	for u := range fetchRows {
		if id, ok := w.byURL[u]; ok {
			if d, ok := dist[id]; !ok || d >= rounds {
				t.Errorf("crawl_fetch has %s, not within %d hops", u, rounds-1)
			}
		} else if !w.isTrapURL(u) {
			t.Errorf("crawl_fetch has %s, not a URL of the web", u)
		}
	}
	// The trap: its entry is at some distance e; each later round goes one
	// month further each way.
	if w.trap >= 0 {
		if e, ok := dist[w.trap]; ok && e < rounds {
			if max := 2 * (rounds - 1 - e); trapRequests > max {
				t.Errorf("%d requests below the calendar trap, want at most %d", trapRequests, max)
			}
		}
	}

	// Politeness, from the access log: one request at a time per host,
	// and each request starting at least the politeness delay after the
	// previous one started. The server cannot see when the fetcher had
	// the previous response: it logs a request's end when its handler
	// returns, which under load can be a few milliseconds after the
	// client read the last byte (so end-to-start gaps may read a little
	// under the delay; they are logged). Start-to-start is exact: the
	// fetcher sends a request at least the delay after it read the
	// previous response, which it could not read before the server
	// started on it.
	minEndGap := time.Duration(-1)
	for host, st := range simweb.Stats(entries) {
		if st.MaxConcurrent > 1 {
			t.Errorf("%s: %d requests at once", host, st.MaxConcurrent)
		}
		if st.Requests > 1 && (minEndGap < 0 || st.MinGap < minEndGap) {
			minEndGap = st.MinGap
		}
	}
	for host, gap := range startGaps(entries) {
		if gap < politeness {
			t.Errorf("%s: requests started %v apart, politeness delay %v:%s", host, gap, politeness, closest(entries, host))
		}
	}
	t.Logf("politeness %v: shortest end-to-start gap seen by the server %v", politeness, minEndGap)

	// CrawlDB statuses against the truth.
	for id, d := range dist {
		u := w.urls[id]
		row, ok := db[u]
		if !ok {
			if d <= rounds { // fetched pages and their links are all known
				t.Errorf("%s (distance %d) not in the CrawlDB", u, d)
			}
			continue
		}
		p := w.pages[id]
		want := expectedStatus(p, d, rounds)
		if want != 0 && row.Status != want {
			t.Errorf("%s (%s, HTTP %d, robots %v, distance %d): %s, want %s", u, p.Kind, p.Status, p.RobotsAllowed, d, row.Status, want)
		}
	}
	for u := range db {
		if _, ok := w.byURL[u]; !ok && !w.isTrapURL(u) && !strings.HasSuffix(u, ".css") {
			t.Errorf("CrawlDB has %s, not a URL of the web", u)
		}
	}
	return crawl
}

// expectedStatus is the CrawlDB status a page at distance d has after
// rounds rounds, 0 if the truth does not decide it.
func expectedStatus(p simweb.PageInfo, d, rounds int) crawldb.Status {
	if d >= rounds {
		return crawldb.StatusDBUnfetched
	}
	if !p.RobotsAllowed {
		return crawldb.StatusDBGone
	}
	switch {
	case p.Kind == simweb.KindUnresolvable:
		return crawldb.StatusDBUnfetched // retried (then gone after retryMax)
	case p.Status == 200:
		return crawldb.StatusDBFetched
	case p.Status == 301 || p.Status == 308:
		return crawldb.StatusDBRedirPerm
	case p.Status == 302 || p.Status == 303 || p.Status == 307:
		return crawldb.StatusDBRedirTemp
	case p.Status == 404 || p.Status == 410:
		return crawldb.StatusDBGone
	}
	return 0
}

// checkNotModified runs one more round 40 simulated days after the crawl's
// last (every fetched page is due again under the 30-day interval) and
// checks each refetched page against the truth, from the versions the
// server served (access log): a page whose version did not change since
// its last fetch becomes db_notmodified, one that changed db_fetched; the
// refetch is a conditional request when the host sends validators, and an
// unchanged page is then answered 304 unless the host ignores them.
func checkNotModified(t *testing.T, w *world, crawl string) {
	t.Helper()
	before := readDB(t, crawl)
	// The version each page had when last served.
	served := map[string]simweb.Access{}
	for u, as := range w.requests(w.srv.AccessLog().Entries()) {
		served[u] = as[len(as)-1]
	}
	t4 := w.web.Config().Epoch.Add(time.Duration(crawlRounds)*24*time.Hour + 40*24*time.Hour)
	o := crawlOptions(w, "", 1, t4, "default")
	o.Seeds = nil
	base := w.srv.AccessLog().Len()
	res, err := jobs.Crawl(context.Background(), newEnv(t, crawl), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Rounds[0].Summary())
	w.waitIdle(t)
	reqs := w.requests(w.srv.AccessLog().Since(base))
	after := readDB(t, crawl)
	var notModified, modified, conditional304 int
	for u, old := range before {
		id, ok := w.byURL[u]
		if !ok || !w.pages[id].Kind.IsContent() ||
			(old.Status != crawldb.StatusDBFetched && old.Status != crawldb.StatusDBNotModified) {
			continue
		}
		row := after[u]
		as := reqs[u]
		if len(as) != 1 || row.FetchCount != old.FetchCount+1 {
			t.Errorf("%s: %d requests in the late round, fetch count %d → %d", u, len(as), old.FetchCount, row.FetchCount)
			continue
		}
		a, prev := as[0], served[u]
		changed := a.Version != prev.Version
		want := crawldb.StatusDBNotModified
		if changed {
			want = crawldb.StatusDBFetched
			modified++
		} else {
			notModified++
		}
		p := w.pages[id]
		if row.Status != want {
			t.Errorf("%s (%s, noindex %v): version %d → %d, status %s, want %s", u, p.Kind, p.Noindex, prev.Version, a.Version, row.Status, want)
		}
		v := w.web.Host(p.Host).Validators
		wantCond := v != simweb.ValidatorsNone
		if a.Conditional != wantCond {
			t.Errorf("%s: validators %s, conditional request %v", u, v, a.Conditional)
		}
		if wantCond && v != simweb.ValidatorsIgnored && !changed {
			conditional304++
			if a.Status != 304 {
				t.Errorf("%s: unchanged, validators %s, answered %d", u, v, a.Status)
			}
		}
	}
	t.Logf("late round: %d pages unchanged (%d answered 304), %d changed", notModified, conditional304, modified)
	if notModified == 0 || modified == 0 || conditional304 == 0 {
		t.Errorf("the late round must see both changed and unchanged pages, and 304s")
	}
}

// startGaps returns, per host, the shortest time between the starts of
// two consecutive requests of one round (requests of one simulated time).
// Politeness is a fetch job's: each round's fetch starts afresh, as
// Nutch's does, so the last request of a round and the first of the next
// are not compared (they are seconds apart here, a day in simulated time).
func startGaps(entries []simweb.Access) map[string]time.Duration {
	type key struct {
		host string
		sim  time.Time
	}
	byHost := map[key][]time.Time{}
	for _, a := range entries {
		if a.Host != "" {
			k := key{a.Host, a.Sim}
			byHost[k] = append(byHost[k], a.Start)
		}
	}
	out := map[string]time.Duration{}
	for k, ts := range byHost {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		for i := 1; i < len(ts); i++ {
			if g, ok := out[k.host]; !ok || ts[i].Sub(ts[i-1]) < g {
				out[k.host] = ts[i].Sub(ts[i-1])
			}
		}
	}
	return out
}

// closest describes the two consecutive requests to host whose starts are
// closest.
func closest(entries []simweb.Access, host string) string {
	var es []simweb.Access
	for _, a := range entries {
		if a.Host == host {
			es = append(es, a)
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
	best, bi := time.Duration(-1), 0
	for i := 1; i < len(es); i++ {
		if !es[i].Sim.Equal(es[i-1].Sim) {
			continue
		}
		if g := es[i].Start.Sub(es[i-1].Start); best < 0 || g < best {
			best, bi = g, i
		}
	}
	if bi == 0 {
		return ""
	}
	f := func(a simweb.Access) string {
		return fmt.Sprintf("\n  %s %s status %d conn %d#%d start %s end %s outcome %q",
			a.Method, a.Path, a.Status, a.Conn, a.ConnRequest, a.Start.Format("15:04:05.000000"), a.End.Format("15:04:05.000000"), a.Outcome)
	}
	return f(es[bi-1]) + f(es[bi])
}

// TestCrawlHostileWeb crawls two rounds of a web with Crawl-delay hosts,
// failing hosts and links to hostile servers (blackhole, trickle, slow
// headers, reset): every host's requests start at least its Crawl-delay
// (or the politeness delay) apart, one at a time; pages of hosts that
// are down, and of the hostile hosts, are recorded for a retry (never as
// fetched), and the hostile hosts cost bounded time.
func TestCrawlHostileWeb(t *testing.T) {
	t.Parallel()
	w := newWorld(t, simweb.Config{Seed: 8, Hosts: 40, Pages: 400,
		Hazards: simweb.HazardCrawlDelay | simweb.HazardFailingHosts | simweb.HazardHostileLinks})
	dir := t.TempDir()
	crawl := dir + "/crawl"
	t0 := w.web.Config().Epoch.Add(24 * time.Hour)
	o := crawlOptions(w, w.seeds(t, dir), 2, t0, "default")
	o.Fetch.ConnectTimeout, o.Fetch.ReadTimeout = 2*time.Second, 2*time.Second
	res, err := jobs.Crawl(context.Background(), newEnv(t, crawl), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rounds {
		t.Logf("\n%s", r.Summary())
	}
	w.waitIdle(t)
	entries := w.srv.AccessLog().Entries()

	delayed, hostile := 0, 0
	gaps := startGaps(entries)
	for h := range w.web.NumHosts() {
		hi := w.web.Host(h)
		gap, ok := gaps[hi.Name]
		if !ok {
			continue
		}
		want := max(politeness, hi.Robots.CrawlDelay)
		if hi.Robots.CrawlDelay > 0 {
			delayed++
		}
		if gap < want {
			t.Errorf("%s (Crawl-delay %v): requests started %v apart:%s", hi.Name, hi.Robots.CrawlDelay, gap, closest(entries, hi.Name))
		}
	}
	for host, st := range simweb.Stats(entries) {
		if st.MaxConcurrent > 1 {
			t.Errorf("%s: %d requests at once", host, st.MaxConcurrent)
		}
	}
	db := readDB(t, crawl)
	for u, d := range db {
		id, ok := w.byURL[u]
		if !ok {
			continue
		}
		p := w.pages[id]
		role := w.web.Host(p.Host).Role
		switch role {
		case simweb.RoleDown, simweb.RoleBlackhole, simweb.RoleTrickle, simweb.RoleSlowHeaders, simweb.RoleReset:
			if role != simweb.RoleDown {
				hostile++
			}
			if d.Status == crawldb.StatusDBFetched || d.Status == crawldb.StatusDBNotModified {
				t.Errorf("%s on a %v host: %s", u, role, d.Status)
			}
			if d.Status == crawldb.StatusDBUnfetched && d.FetchCount > 0 {
				t.Errorf("%s on a %v host: fetched %d times", u, role, d.FetchCount)
			}
		}
	}
	t.Logf("%d hosts with a Crawl-delay requested; %d URLs of hostile hosts in the CrawlDB", delayed, hostile)
	if delayed == 0 || hostile == 0 {
		t.Errorf("the web has no crawl-delay host or hostile link the crawl reached: the test is too weak")
	}
}
