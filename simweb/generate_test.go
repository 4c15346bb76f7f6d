package simweb

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{Hosts: -1},
		{Hosts: 10, Pages: 5},
		{Hosts: MaxHosts + 1},
		{Hosts: 1, Pages: MaxPages + 1},
		{SameHostLinks: 1.5},
		{Hazards: 1 << 20},
		{Change: "sometimes"},
	}
	for _, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", c)
		}
	}
	w := newWeb(t, Config{Seed: 5})
	c := w.Config()
	if c.Hosts != DefaultHosts || c.Pages != DefaultPages || !c.Epoch.Equal(DefaultEpoch()) || c.SameHostLinks != DefaultSameHostLinks || c.Hazards != 0 {
		t.Errorf("defaults not applied: %+v", c)
	}
	// One host, one page: the smallest web.
	tiny := newWeb(t, Config{Seed: 1, Hosts: 1, Pages: 1})
	if tiny.Host(0).Pages != 1 || tiny.Page(tiny.Host(0).Home).Kind != KindHome {
		t.Errorf("tiny web: %+v", tiny.Host(0))
	}
}

func TestParseHazards(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Hazard
	}{
		{"none", 0},
		{"", 0},
		{"default", HazardsDefault},
		{"all", HazardsAll},
		{"traps,bombs", HazardTraps | HazardBombs},
		{"default,-crawl-delay", HazardsDefault &^ HazardCrawlDelay},
		{" Slow , failing ", HazardSlowHosts | HazardFailingHosts},
	} {
		got, err := ParseHazards(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseHazards(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if back, err := ParseHazards(got.String()); err != nil || back != got {
			t.Errorf("ParseHazards(%q.String() = %q) = %v, %v", c.in, got.String(), back, err)
		}
	}
	if _, err := ParseHazards("traps,nukes"); err == nil || !strings.Contains(err.Error(), "nukes") {
		t.Errorf("unknown hazard: err = %v", err)
	}
}

func truthBytes(t *testing.T, w *Web, a Addressing) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := w.WriteTruthAddressed(&buf, a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterminism(t *testing.T) {
	cfg := smallConfig(42)
	w1, w2 := newWeb(t, cfg), newWeb(t, cfg)
	a := Addressing{Port: 8080}
	if !bytes.Equal(truthBytes(t, w1, a), truthBytes(t, w2, a)) {
		t.Fatal("same seed, different truth files")
	}
	var h1, h2 bytes.Buffer
	if err := w1.WriteHostTruth(&h1, a); err != nil {
		t.Fatal(err)
	}
	if err := w2.WriteHostTruth(&h2, a); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h1.Bytes(), h2.Bytes()) {
		t.Fatal("same seed, different host truth")
	}
	r1, r2 := w1.newRenderer(), w2.newRenderer()
	for id := int32(0); id < int32(w1.NumPages()); id += 7 {
		if !w1.pages[id].kind.IsContent() || w1.pages[id].flags&flagBroken != 0 {
			continue
		}
		b1, _ := r1.body(id, 5, a)
		b1 = bytes.Clone(b1)
		b2, _ := r2.body(id, 5, a)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("page %d version 5 differs between two webs of the same seed", id)
		}
	}
	other := newWeb(t, smallConfig(43))
	if bytes.Equal(truthBytes(t, w1, a), truthBytes(t, other, a)) {
		t.Fatal("different seeds, same truth")
	}
}

func TestTruthParquet(t *testing.T) {
	w := newWeb(t, smallConfig(7))
	a := Addressing{Port: 8080}
	dir := t.TempDir()
	fsys := storage.NewLocal()
	path := filepath.Join(dir, "truth.parquet")
	if err := parquetio.WriteFile(fsys, path, []TruthPage{}); err != nil {
		t.Fatal(err) // sanity: the row type has a valid schema
	}
	path = filepath.Join(dir, "truth2.parquet")
	if err := storage.WriteFileAtomic(fsys, path, truthBytes(t, w, a)); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[TruthPage](fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != w.NumPages() {
		t.Fatalf("truth has %d rows, web has %d pages", len(rows), w.NumPages())
	}
	kinds := make(map[string]int)
	sumPR := 0.0
	for i, r := range rows {
		if int(r.ID) != i {
			t.Fatalf("row %d has id %d", i, r.ID)
		}
		p := w.Page(i)
		rf, pf := r.Features, p.Features
		rf.Bytes, pf.Bytes = 0, 0 // the sizes differ with the port in links
		if r.URL != w.URL(i, a) || r.Path != p.Path || r.Kind != p.Kind.String() || r.ChangeRate != p.Rate ||
			r.PageRank != p.PageRank || rf != pf || r.RobotsAllowed != p.RobotsAllowed {
			t.Fatalf("row %d = %+v, page = %+v", i, r, p)
		}
		if !strings.HasPrefix(r.URL, "http://") || !strings.Contains(r.URL, ":8080/") {
			t.Fatalf("row %d URL %q not under the addressing", i, r.URL)
		}
		if (r.Kind == "redirect" || r.Kind == "redirect_loop") != (r.Target != "") {
			t.Fatalf("row %d: kind %s target %q", i, r.Kind, r.Target)
		}
		if p.Kind.IsContent() && r.Status == 200 && (r.Features.Bytes <= 0 || r.Features.Words <= 0) {
			t.Fatalf("row %d: content page without size: %+v", i, r.Features)
		}
		kinds[r.Kind]++
		sumPR += r.PageRank
	}
	for _, k := range []string{"home", "directory", "leaf", "document", "redirect", "redirect_loop", "missing", "trap", "huge", "gzip_bomb", "hostile", "unresolvable"} {
		if kinds[k] == 0 {
			t.Errorf("no %s pages in the truth", k)
		}
	}
	if math.Abs(sumPR-1) > 1e-9 {
		t.Errorf("PageRank sums to %v", sumPR)
	}
	hosts, err := func() ([]TruthHost, error) {
		p := filepath.Join(dir, "hosts.parquet")
		var buf bytes.Buffer
		if err := w.WriteHostTruth(&buf, a); err != nil {
			return nil, err
		}
		if err := storage.WriteFileAtomic(fsys, p, buf.Bytes()); err != nil {
			return nil, err
		}
		return parquetio.ReadAll[TruthHost](fsys, p)
	}()
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != w.NumHosts() || hosts[0].Name != "h0001.sim.test" || hosts[0].Home != "http://h0001.sim.test:8080/" {
		t.Fatalf("host truth: %d rows, first %+v", len(hosts), hosts[0])
	}
}

// TestStructure checks the link graph: every content page reachable from
// its home page on its own host, mostly same-host links, heavy tails of
// host sizes and in-degree, and PageRank a fixed point.
func TestStructure(t *testing.T) {
	w := newWeb(t, Config{Seed: 11, Hosts: 300, Pages: 30000, Hazards: HazardsDefault})
	// Reachability within each host.
	for hi := range w.regular {
		h := &w.hosts[hi]
		seen := map[int32]bool{h.home: true}
		queue := []int32{h.home}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			p := &w.pages[id]
			for _, t := range w.links[p.linkBeg:p.linkEnd] {
				if w.pages[t].host == int32(hi) && !seen[t] {
					seen[t] = true
					queue = append(queue, t)
				}
			}
		}
		for _, id := range h.rank {
			if !seen[id] {
				t.Fatalf("host %s: page %d (%s) not reachable from the home page", h.name, id, w.pages[id].path)
			}
		}
	}
	// Same-host share of links between content pages.
	same, all := 0, 0
	indeg := []int{}
	for id := range w.pages {
		p := &w.pages[id]
		if !p.kind.IsContent() {
			continue
		}
		indeg = append(indeg, int(p.inlinks))
		for _, t := range w.links[p.linkBeg:p.linkEnd] {
			if w.pages[t].kind.IsContent() {
				all++
				if w.pages[t].host == p.host {
					same++
				}
			}
		}
	}
	if f := float64(same) / float64(all); f < 0.75 || f > 0.97 {
		t.Errorf("same-host link share %.3f, want mostly same-host (0.75..0.97)", f)
	}
	sort.Ints(indeg)
	med, top := indeg[len(indeg)/2], indeg[len(indeg)-1]
	p99 := indeg[len(indeg)*99/100]
	t.Logf("in-degree: median %d, p99 %d, max %d", med, p99, top)
	if top < 100*max(med, 1) || p99 < 5*max(med, 1) {
		t.Errorf("in-degree not heavy-tailed: median %d, p99 %d, max %d", med, p99, top)
	}
	sizes := []int{}
	for hi := range w.regular {
		sizes = append(sizes, int(w.hosts[hi].content))
	}
	sort.Ints(sizes)
	t.Logf("pages per host: min %d, median %d, max %d", sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
	if sizes[len(sizes)-1] < 10*sizes[len(sizes)/2] {
		t.Errorf("pages per host not heavy-tailed: median %d, max %d", sizes[len(sizes)/2], sizes[len(sizes)-1])
	}
	kindCount := map[Kind]int{}
	for i := range w.pages {
		kindCount[w.pages[i].kind]++
	}
	if kindCount[KindDirectory] < 1000 || kindCount[KindLeaf] < 20000 || kindCount[KindDocument] < 300 {
		t.Errorf("kinds: %v", kindCount)
	}

	checkPageRank(t, w)
}

// checkPageRank checks that PageRank sums to 1, is a fixed point, and
// ranks home pages higher than leaves.
func checkPageRank(t *testing.T, w *Web) {
	t.Helper()
	n := len(w.pages)
	pr := make([]float64, n)
	next := make([]float64, n)
	dangling, sum := 0.0, 0.0
	for i := range w.pages {
		pr[i] = w.pages[i].pagerank
		sum += pr[i]
		p := &w.pages[i]
		if p.linkEnd == p.linkBeg {
			dangling += pr[i]
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("PageRank sums to %v", sum)
	}
	for i := range next {
		next[i] = (1-damping)/float64(n) + damping*dangling/float64(n)
	}
	for i := range w.pages {
		p := &w.pages[i]
		if d := p.linkEnd - p.linkBeg; d > 0 {
			for _, t := range w.links[p.linkBeg:p.linkEnd] {
				next[t] += damping * pr[i] / float64(d)
			}
		}
	}
	res := 0.0
	for i := range pr {
		res += math.Abs(next[i] - pr[i])
	}
	if res > 1e-7 {
		t.Errorf("PageRank is not a fixed point: one more iteration moves it by %g (L1)", res)
	}
	var homePR, leafPR float64
	var homes, leaves int
	for i := range w.pages {
		switch w.pages[i].kind {
		case KindHome:
			homePR += pr[i]
			homes++
		case KindLeaf:
			leafPR += pr[i]
			leaves++
		}
	}
	if homePR/float64(homes) < 5*leafPR/float64(leaves) {
		t.Errorf("mean PageRank of home pages %g is not well above that of leaves %g", homePR/float64(homes), leafPR/float64(leaves))
	}
}

// TestHazardPages checks that each hazard is where the configuration
// says, and linked from its host's home page.
func TestHazardPages(t *testing.T) {
	w := newWeb(t, smallConfig(3))
	for name, id := range map[string]int32{"trap": w.special.trap, "loop": w.special.loop, "chain": w.special.chain, "huge": w.special.huge, "bomb": w.special.bomb} {
		if id < 0 {
			t.Errorf("no %s page", name)
			continue
		}
		p := &w.pages[id]
		home := &w.pages[w.hosts[p.host].home]
		if !slices.Contains(w.links[home.linkBeg:home.linkEnd], id) {
			t.Errorf("%s page %s is not linked from its home page", name, p.path)
		}
		if !w.robotsAllowed(id) {
			t.Errorf("%s page %s is disallowed by robots.txt: %q", name, p.path, w.hosts[p.host].robots.body)
		}
	}
	// The chain is longer than Go's redirect limit and ends on a content page.
	id, hops := w.special.chain, 0
	for w.pages[id].kind == KindRedirect {
		id = w.pages[id].target
		hops++
	}
	if hops != chainLength || !w.pages[id].kind.IsContent() {
		t.Errorf("chain: %d hops to a %v", hops, w.pages[id].kind)
	}
	// Loop.
	l := w.special.loop
	if w.pages[w.pages[l].target].target != l {
		t.Errorf("loop does not loop")
	}
	// Every hostile and unresolvable host is linked (HazardHostileLinks).
	in := make(map[int32]bool)
	for _, t := range w.links {
		in[t] = true
	}
	for hi := w.regular; hi < len(w.hosts); hi++ {
		if !in[w.hosts[hi].home] {
			t.Errorf("host %s has no inlink", w.hosts[hi].name)
		}
	}
	// Without hazards: none of them, and no links to hostile hosts.
	calm := newWeb(t, Config{Seed: 3, Hosts: 60, Pages: 3000})
	sp := calm.special
	if sp.trap >= 0 || sp.loop >= 0 || sp.chain >= 0 || sp.huge >= 0 || sp.bomb >= 0 {
		t.Errorf("hazards without Hazards: %+v", sp)
	}
	for hi := range calm.regular {
		h := &calm.hosts[hi]
		if h.role != RoleNormal && h.role != RoleHTTP10 {
			t.Errorf("host %s has role %v without hazards", h.name, h.role)
		}
		if h.robots.delay != 0 {
			t.Errorf("host %s has a crawl delay without hazards", h.name)
		}
	}
	for _, t2 := range calm.links {
		if calm.pages[t2].kind == KindHostile {
			t.Fatal("link to a hostile host without HazardHostileLinks")
		}
	}
	// Roles: at least one host of each when there are enough hosts.
	roles := map[Role]int{}
	for hi := range w.regular {
		roles[w.hosts[hi].role]++
	}
	for _, r := range []Role{RoleHTTP10, RoleSlow, RoleDown, RoleFlaky, RoleBroken} {
		if roles[r] == 0 {
			t.Errorf("no host with role %v: %v", r, roles)
		}
	}
}

// TestRobotsTruth parses every robots.txt body with an independent
// longest-match reading and compares with the truth for every page.
func TestRobotsTruth(t *testing.T) {
	w := newWeb(t, Config{Seed: 9, Hosts: 200, Pages: 8000, Hazards: HazardsDefault})
	disallowing, delays := 0, 0
	for hi := range w.regular {
		h := &w.hosts[hi]
		rules := parseStarGroup(h.robots.body)
		if h.robots.delay > 0 {
			delays++
			if !strings.Contains(h.robots.body, "Crawl-delay: ") || h.content > 40 {
				t.Errorf("%s: delay %v, body %q, %d pages", h.name, h.robots.delay, h.robots.body, h.content)
			}
		}
		blocked := false
		for path, id := range h.paths {
			want := true
			switch h.robots.status {
			case 503:
				want = false
			case 200, 301:
				best := -1
				for _, r := range rules {
					if strings.HasPrefix(path, r.prefix) && (len(r.prefix) > best || len(r.prefix) == best && r.allow) {
						best, want = len(r.prefix), r.allow
					}
				}
			}
			if got := w.robotsAllowed(id); got != want {
				t.Fatalf("%s%s: robotsAllowed = %v, robots.txt (%d) says %v:\n%s", h.name, path, got, h.robots.status, want, h.robots.body)
			}
			if !want {
				blocked = true
			}
		}
		if blocked {
			disallowing++
		}
	}
	t.Logf("%d of %d hosts disallow some pages, %d have a crawl delay", disallowing, w.regular, delays)
	if disallowing < w.regular/8 || delays == 0 {
		t.Errorf("too few robots restrictions: %d hosts disallow, %d delay", disallowing, delays)
	}
}

type robotsRule struct {
	prefix string
	allow  bool
}

// parseStarGroup reads the rules of the "User-agent: *" group.
func parseStarGroup(body string) []robotsRule {
	var rules []robotsRule
	inStar := false
	for _, line := range strings.Split(body, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "user-agent":
			inStar = v == "*"
		case "allow":
			if inStar && v != "" {
				rules = append(rules, robotsRule{v, true})
			}
		case "disallow":
			if inStar && v != "" {
				rules = append(rules, robotsRule{v, false})
			}
		}
	}
	return rules
}

// TestRateMix checks the change-rate mixture against the published
// figures it is calibrated to (see the package documentation), the spread
// within each kind, and that features predict rates only moderately.
func TestRateMix(t *testing.T) {
	w := newWeb(t, Config{Seed: 21, Hosts: 400, Pages: 40000, Hazards: HazardsDefault})
	var n, daily, weekly, static, unch, edu, eduUnch, news, newsDaily float64
	byKind := map[Kind][]float64{}
	var leafWords, leafRates []float64
	for id := range w.pages {
		p := &w.pages[id]
		if !p.kind.IsContent() || p.flags&flagBroken != 0 {
			continue
		}
		n++
		u := math.Exp(-120 * p.rate) // P(no change in 120 days)
		unch += u
		switch {
		case p.rate >= 1:
			daily++
			weekly++
		case p.rate >= 1.0/7:
			weekly++
		case p.rate == 0:
			static++
		}
		switch w.hosts[p.host].genre {
		case GenreEduGov:
			edu++
			eduUnch += u
		case GenreNews:
			news++
			if p.rate >= 1 {
				newsDaily++
			}
		}
		if p.rate > 0 {
			byKind[p.kind] = append(byKind[p.kind], p.rate)
		}
		if p.kind == KindLeaf {
			leafWords = append(leafWords, float64(p.words))
			leafRates = append(leafRates, p.rate)
		}
	}
	check := func(name string, got, lo, hi float64) {
		t.Logf("%s = %.3f (want %.2f..%.2f)", name, got, lo, hi)
		if got < lo || got > hi {
			t.Errorf("%s = %.3f, want %.2f..%.2f", name, got, lo, hi)
		}
	}
	check("share changing at least daily", daily/n, 0.18, 0.30)
	check("share changing at least weekly", weekly/n, 0.32, 0.48)
	check("share never changing", static/n, 0.10, 0.25)
	check("expected share unchanged over 120 days", unch/n, 0.25, 0.42)
	check("edu/gov expected share unchanged over 120 days", eduUnch/edu, 0.48, 0.70)
	check("news share changing at least daily", newsDaily/news, 0.50, 0.80)
	check("edu/gov page share", edu/n, 0.18, 0.32)
	for _, k := range []Kind{KindHome, KindDirectory, KindLeaf} {
		rs := byKind[k]
		sort.Float64s(rs)
		p10, p90 := rs[len(rs)/10], rs[len(rs)*9/10]
		t.Logf("%v: %d changing pages, rate p10 %.4f/day, p90 %.4f/day", k, len(rs), p10, p90)
		if p90 < 10*p10 {
			t.Errorf("%v: rates p10 %.4f, p90 %.4f span less than an order of magnitude", k, p10, p90)
		}
	}
	rho := spearman(leafWords, leafRates)
	check("Spearman correlation of leaf words and rate", rho, 0.10, 0.55)
}

// spearman is the rank correlation of x and y.
func spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for i := 0; i < len(idx); {
			j := i
			for j < len(idx) && v[idx[j]] == v[idx[i]] {
				j++
			}
			for k := i; k < j; k++ {
				r[idx[k]] = float64(i+j-1) / 2
			}
			i = j
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// TestChangeProcess checks the Poisson processes: event counts over a
// year match the rates, standardized counts have unit variance, gaps are
// exponential, and Version, LastModified and ChangeTimes agree.
func TestChangeProcess(t *testing.T) {
	w := newWeb(t, Config{Seed: 31, Hosts: 100, Pages: 6000, Hazards: HazardsDefault})
	const days = 365.0
	end := w.cfg.Epoch.Add(time.Duration(days * 24 * float64(time.Hour)))
	var sumN, sumMean, sumZ2 float64
	var pagesCounted int
	var gaps []float64
	for id := range int32(len(w.pages)) {
		p := &w.pages[id]
		if p.rate <= 0 {
			if v := w.Version(int(id), end); v != 0 {
				t.Fatalf("page %d never changes but has version %d", id, v)
			}
			continue
		}
		v := w.Version(int(id), end)
		mean := p.rate * days
		sumN += float64(v)
		sumMean += mean
		z := (float64(v) - mean) / math.Sqrt(mean)
		sumZ2 += z * z
		pagesCounted++
		if id%5 == 0 {
			times := w.ChangeTimes(int(id), w.cfg.Epoch, end)
			if len(times) != v {
				t.Fatalf("page %d: %d change times, version %d", id, len(times), v)
			}
			prev := w.cfg.Epoch
			for _, tm := range times {
				gaps = append(gaps, tm.Sub(prev).Hours()/24*p.rate)
				prev = tm
			}
			if v > 0 && !w.LastModified(int(id), end).Equal(times[v-1]) {
				t.Fatalf("page %d: LastModified %v, last change %v", id, w.LastModified(int(id), end), times[v-1])
			}
			mid := w.cfg.Epoch.Add(100 * 24 * time.Hour)
			if d := w.Version(int(id), end) - w.Version(int(id), mid); d != len(w.ChangeTimes(int(id), mid, end)) {
				t.Fatalf("page %d: version difference %d, change times in between %d", id, d, len(w.ChangeTimes(int(id), mid, end)))
			}
		}
		if w.Version(int(id), w.cfg.Epoch.Add(-time.Hour)) != 0 {
			t.Fatalf("page %d has changes before the epoch", id)
		}
	}
	z := (sumN - sumMean) / math.Sqrt(sumMean)
	t.Logf("%d pages: %.0f events, expected %.0f (z = %.2f); mean squared standardized count %.3f", pagesCounted, sumN, sumMean, z, sumZ2/float64(pagesCounted))
	if math.Abs(z) > 4 {
		t.Errorf("total events %.0f, expected %.0f: z = %.2f", sumN, sumMean, z)
	}
	if v := sumZ2 / float64(pagesCounted); v < 0.85 || v > 1.15 {
		t.Errorf("standardized counts have variance %.3f, want about 1 (Poisson)", v)
	}
	// Kolmogorov-Smirnov of the normalized gaps against Exp(1); the last
	// gap of each page is not censored (it ends at an event), so the pooled
	// gaps are exactly Exp(1).
	sort.Float64s(gaps)
	d := 0.0
	for i, g := range gaps {
		f := 1 - math.Exp(-g)
		d = max(d, math.Abs(f-float64(i)/float64(len(gaps))), math.Abs(f-float64(i+1)/float64(len(gaps))))
	}
	crit := 1.95 / math.Sqrt(float64(len(gaps))) // 0.1% level
	t.Logf("KS distance of %d gaps from Exp(1): %.4f (critical %.4f)", len(gaps), d, crit)
	if d > crit {
		t.Errorf("gaps are not exponential: KS distance %.4f > %.4f", d, crit)
	}
}

func BenchmarkNew(b *testing.B) {
	for _, c := range []struct {
		name         string
		hosts, pages int
	}{{"100x5k", 100, 5000}, {"500x50k", 500, 50000}, {"1000x200k", 1000, 200000}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := New(Config{Seed: 1, Hosts: c.hosts, Pages: c.pages, Hazards: HazardsDefault}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.pages)/(b.Elapsed().Seconds()/float64(b.N)), "pages/s")
		})
	}
}

func BenchmarkVersion(b *testing.B) {
	w := newWeb(b, Config{Seed: 1, Hosts: 50, Pages: 2000, Hazards: HazardsDefault})
	var fast int32 = -1
	for id := range w.pages {
		if w.pages[id].rate > 20 {
			fast = int32(id)
			break
		}
	}
	if fast < 0 {
		b.Skip("no fast page")
	}
	t := w.cfg.Epoch.AddDate(0, 3, 0)
	b.ResetTimer()
	for b.Loop() {
		w.version(fast, t)
	}
}
