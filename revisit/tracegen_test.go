package revisit

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var traceGenStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func genTrace(t *testing.T, model TraceModel, pages, days int, seed uint64) ([]TracePage, []genPattern) {
	t.Helper()
	tp, pats, err := generateTrace(TraceGenConfig{Model: model, Pages: pages, Start: traceGenStart, Days: days, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if len(tp) != pages || len(pats) != pages {
		t.Fatalf("%d pages, %d patterns; want %d", len(tp), len(pats), pages)
	}
	return tp, pats
}

// checkTraceShape checks what every trace must hold: distinct URLs of the
// synthetic hosts by kind, sorted changes in the period, a rate >= 0.
func checkTraceShape(t *testing.T, tp []TracePage, pats []genPattern, days int) {
	t.Helper()
	end := traceGenStart.Add(time.Duration(days) * 24 * time.Hour)
	seen := map[string]bool{}
	for i, p := range tp {
		if seen[p.URL] {
			t.Fatalf("page %d: %s twice", i, p.URL)
		}
		seen[p.URL] = true
		if !strings.HasPrefix(p.URL, "http://h") || !strings.Contains(p.URL, ".trace.test/") {
			t.Fatalf("page %d: URL %s", i, p.URL)
		}
		switch pats[i].kind {
		case genHome:
			if !strings.HasSuffix(p.URL, ".test/") || p.Features.Depth != 0 {
				t.Fatalf("home page %s depth %d", p.URL, p.Features.Depth)
			}
		case genDir:
			if !strings.HasSuffix(p.URL, "/") || p.Features.Depth < 1 {
				t.Fatalf("directory %s depth %d", p.URL, p.Features.Depth)
			}
		case genLeaf:
			if !strings.HasSuffix(p.URL, ".html") {
				t.Fatalf("leaf %s", p.URL)
			}
		case genPDF:
			if !strings.HasSuffix(p.URL, ".pdf") {
				t.Fatalf("document %s", p.URL)
			}
		}
		f := p.Features
		if f.Words < 1 || f.Outlinks < 0 || f.Inlinks < 1 || f.Images < 0 || f.Bytes < 1 {
			t.Fatalf("page %s: features %+v", p.URL, f)
		}
		if p.Rate < 0 || math.IsNaN(p.Rate) || (pats[i].pattern == patStatic) != (p.Rate == 0) {
			t.Fatalf("page %s (pattern %d): rate %v", p.URL, pats[i].pattern, p.Rate)
		}
		if pats[i].pattern == patStatic && len(p.Changes) > 0 {
			t.Fatalf("static page %s changed %d times", p.URL, len(p.Changes))
		}
		for k, c := range p.Changes {
			if !c.After(traceGenStart) || c.After(end) || (k > 0 && c.Before(p.Changes[k-1])) {
				t.Fatalf("page %s: change %d at %v: not sorted in the period", p.URL, k, c)
			}
		}
	}
}

// checkRateTotal checks the rates against the counts over all pages of
// the pattern: their sum times days within tol (relative) of the changes.
func checkRateTotal(t *testing.T, tp []TracePage, pats []genPattern, pattern, days int, tol float64) {
	t.Helper()
	var want, got float64
	for i, p := range tp {
		if pats[i].pattern == pattern {
			want += p.Rate * float64(days)
			got += float64(len(p.Changes))
		}
	}
	if want == 0 || math.Abs(got-want) > tol*want {
		t.Errorf("pattern %d: %.0f changes, rates say %.0f (tolerance %.0f%%)", pattern, got, want, 100*tol)
	}
}

// gapCV returns the coefficient of variation of the gaps between a page's
// changes.
func gapCV(ch []time.Time) float64 {
	var sum, sq float64
	n := float64(len(ch) - 1)
	for k := 1; k < len(ch); k++ {
		g := ch[k].Sub(ch[k-1]).Hours()
		sum += g
		sq += g * g
	}
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0)) / mean
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func TestGenerateTraceDeterministic(t *testing.T) {
	var first []TracePage
	for _, m := range TraceModelNames() {
		cfg := TraceGenConfig{Model: TraceModel(m), Pages: 500, Hosts: 7, Start: traceGenStart, Days: 30, Seed: 11}
		a, err := GenerateTrace(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := GenerateTrace(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: two traces from one seed differ", m)
		}
		cfg.Seed++
		c, err := GenerateTrace(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(a, c) {
			t.Fatalf("%s: seeds 11 and 12 give the same trace", m)
		}
		hosts := map[string]bool{}
		for _, p := range a {
			hosts[strings.SplitN(strings.TrimPrefix(p.URL, "http://"), "/", 2)[0]] = true
		}
		if len(hosts) != 7 {
			t.Fatalf("%s: %d hosts, want 7", m, len(hosts))
		}
		// Every model has the same pages and features.
		if first == nil {
			first = a
		}
		for i, p := range a {
			if p.URL != first[i].URL || p.Features != first[i].Features {
				t.Fatalf("%s: page %d is %s %+v, the first model's %s %+v", m, i, p.URL, p.Features, first[i].URL, first[i].Features)
			}
		}
	}
}

func TestGenerateTraceErrors(t *testing.T) {
	for _, cfg := range []TraceGenConfig{
		{Model: "weekly", Pages: 10, Days: 5},
		{Model: TraceBursty, Pages: 0, Days: 5},
		{Model: TraceBursty, Pages: 10, Days: 0},
		{Model: TraceBursty, Pages: 10, Hosts: -1, Days: 5},
	} {
		if _, err := GenerateTrace(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	tp, err := GenerateTrace(TraceGenConfig{Pages: 3, Days: 2}) // mixed from simweb's epoch
	if err != nil || len(tp) != 3 {
		t.Fatalf("defaults: %d pages, %v", len(tp), err)
	}
}

func TestGenerateTracePoisson(t *testing.T) {
	const days = 60
	tp, pats := genTrace(t, TracePoisson, 3000, days, 1)
	checkTraceShape(t, tp, pats, days)
	checkRateTotal(t, tp, pats, patPoisson, days, 0.03)
	var cvs []float64
	for _, p := range tp {
		if len(p.Changes) >= 30 {
			cvs = append(cvs, gapCV(p.Changes))
		}
	}
	if len(cvs) < 100 {
		t.Fatalf("%d pages with 30 changes or more", len(cvs))
	}
	if m := median(cvs); m < 0.85 || m > 1.1 {
		t.Errorf("median CV of Poisson gaps %.2f, want about 1", m)
	}
	// Documents are mostly static, home pages rarely.
	static := [genKinds][2]int{}
	for _, p := range pats {
		static[p.kind][1]++
		if p.pattern == patStatic {
			static[p.kind][0]++
		}
	}
	if s := float64(static[genPDF][0]) / float64(static[genPDF][1]); s < 0.5 {
		t.Errorf("%.0f%% of documents static, want most", 100*s)
	}
}

func TestGenerateTraceTimetable(t *testing.T) {
	const days = 28
	tp, pats := genTrace(t, TraceTimetable, 2000, days, 2)
	checkTraceShape(t, tp, pats, days)
	end := traceGenStart.Add(days * 24 * time.Hour)
	n := 0
	for i, p := range tp {
		if pats[i].pattern != patTimetable {
			continue
		}
		n++
		slots := pats[i].tt.slots(traceGenStart, end)
		for _, c := range p.Changes {
			k, _ := slices.BinarySearchFunc(slots, c, func(a, b time.Time) int { return a.Compare(b) })
			near := time.Duration(math.MaxInt64)
			for _, j := range []int{k - 1, k} {
				if j >= 0 && j < len(slots) {
					near = min(near, c.Sub(slots[j]).Abs())
				}
			}
			if near > maxSlotJitter+time.Millisecond {
				t.Fatalf("page %s: change at %v is %v from its nearest slot", p.URL, c, near)
			}
		}
		// Skipped slots only: the changes are at most the slots, and
		// rarely far fewer.
		if len(p.Changes) > len(slots) || (len(slots) >= 20 && float64(len(p.Changes)) < 0.7*float64(len(slots))) {
			t.Fatalf("page %s: %d changes for %d slots", p.URL, len(p.Changes), len(slots))
		}
		if len(slots) >= 20 && math.Abs(p.Rate*days-float64(len(p.Changes))) > 4*math.Sqrt(float64(len(slots))) {
			t.Errorf("page %s: rate %.3f/day, %d changes in %d days", p.URL, p.Rate, len(p.Changes), days)
		}
	}
	if n < 1000 {
		t.Fatalf("%d timetabled pages of 2000", n)
	}
	checkRateTotal(t, tp, pats, patTimetable, days, 0.02)
}

func TestGenerateTraceBursty(t *testing.T) {
	const days = 90
	tp, pats := genTrace(t, TraceBursty, 2000, days, 3)
	checkTraceShape(t, tp, pats, days)
	checkRateTotal(t, tp, pats, patBursty, days, 0.06)
	var cvs []float64
	for _, p := range tp {
		if len(p.Changes) >= 15 {
			cvs = append(cvs, gapCV(p.Changes))
		}
	}
	if len(cvs) < 200 {
		t.Fatalf("%d bursty pages with 15 changes or more", len(cvs))
	}
	if m := median(cvs); m < 1.6 {
		t.Errorf("median CV of bursty gaps %.2f, want well above 1", m)
	}
}

func TestGenerateTraceQuiet(t *testing.T) {
	const days = 60
	tp, pats := genTrace(t, TraceQuiet, 2000, days, 4)
	checkTraceShape(t, tp, pats, days)
	checkRateTotal(t, tp, pats, patQuiet, days, 0.04)
	end := traceGenStart.Add(days * 24 * time.Hour)
	wakes, dies := 0, 0
	for i, p := range tp {
		pat := pats[i]
		if pat.pattern != patQuiet {
			continue
		}
		if pat.wakes {
			wakes++
		} else {
			dies++
		}
		// The longest quiet spell, the period's ends included.
		longest := time.Duration(0)
		prev := traceGenStart
		for _, c := range append(slices.Clone(p.Changes), end) {
			longest = max(longest, c.Sub(prev))
			prev = c
		}
		if longest < days*24*time.Hour/4 {
			t.Fatalf("page %s: longest quiet spell %v", p.URL, longest)
		}
		for _, c := range p.Changes {
			if pat.wakes == c.Before(pat.switchAt) {
				t.Fatalf("page %s (wakes %v at %v): change at %v", p.URL, pat.wakes, pat.switchAt, c)
			}
		}
	}
	if wakes < 600 || dies < 600 {
		t.Errorf("%d waking and %d dying pages", wakes, dies)
	}
}

func TestGenerateTraceMixed(t *testing.T) {
	const days = 30
	tp, pats, err := generateTrace(TraceGenConfig{Model: TraceMixed, Pages: 4000, Hosts: 400, Start: traceGenStart, Days: days, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkTraceShape(t, tp, pats, days)
	var count [genKinds][numPatterns]int
	var kinds [genKinds]int
	for _, p := range pats {
		count[p.kind][p.pattern]++
		kinds[p.kind]++
	}
	for pat := range numPatterns {
		n := 0
		for k := range genKinds {
			n += count[k][pat]
		}
		if n < 100 {
			t.Errorf("pattern %d: %d pages of 4000", pat, n)
		}
	}
	// The shares by kind hold, within sampling error.
	for k := range genKinds {
		if kinds[k] < 200 {
			t.Fatalf("kind %d: %d pages", k, kinds[k])
		}
		for pat, want := range mixedShares[k] {
			got := float64(count[k][pat]) / float64(kinds[k])
			if sd := math.Sqrt(want * (1 - want) / float64(kinds[k])); math.Abs(got-want) > 4*sd+0.01 {
				t.Errorf("kind %d pattern %d: share %.3f, want %.2f", k, pat, got, want)
			}
		}
	}
	// Features say something: timetabled and Poisson pages have more
	// words and outlinks than static ones of the same kind.
	score := func(pattern int) float64 {
		var sum float64
		n := 0
		for i, p := range tp {
			if pats[i].kind == genLeaf && pats[i].pattern == pattern {
				sum += math.Log(float64(p.Features.Words)) + math.Log(float64(p.Features.Outlinks+1))
				n++
			}
		}
		return sum / float64(n)
	}
	if a, s := score(patPoisson), score(patStatic); a <= s {
		t.Errorf("leaf feature score: Poisson %.2f, static %.2f", a, s)
	}
}

func TestGenerateTraceCSVRoundTrip(t *testing.T) {
	tp, _ := genTrace(t, TraceMixed, 400, 14, 6)
	var b bytes.Buffer
	if err := WriteTraceCSV(&b, tp); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTraceCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(tp) {
		t.Fatalf("%d pages back, want %d", len(back), len(tp))
	}
	for i, p := range tp {
		q := back[i]
		if q.URL != p.URL || q.Features != p.Features || q.Rate != p.Rate || len(q.Changes) != len(p.Changes) {
			t.Fatalf("page %d: %+v, want %+v", i, q, p)
		}
		for k, c := range p.Changes {
			if !q.Changes[k].Equal(c) {
				t.Fatalf("page %d change %d: %v, want %v", i, k, q.Changes[k], c)
			}
		}
	}
}

// TestGenerateTraceRun simulates policies on a mixed trace: the oracle,
// which knows each page's mean rate but not its pattern, should still be
// about the best.
func TestGenerateTraceRun(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const days = 21
	tp, err := GenerateTrace(TraceGenConfig{Model: TraceMixed, Pages: 2000, Start: traceGenStart, Days: days, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTraceTruth(tp, traceGenStart, days*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), tr, Config{Days: days, Policies: []string{PolicyAdaptive, PolicyOracle, PolicyEstimate},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	fresh := map[string]float64{}
	for _, m := range rep.Policies {
		fresh[m.Policy] = m.Freshness
		t.Logf("%-8s freshness %.4f, fetches %d", m.Policy, m.Freshness, m.Fetches)
	}
	for _, p := range []string{PolicyAdaptive, PolicyEstimate} {
		if fresh[PolicyOracle] < fresh[p]-0.01 {
			t.Errorf("oracle freshness %.4f below %s's %.4f", fresh[PolicyOracle], p, fresh[p])
		}
	}
}
