package simweb

import (
	"bytes"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// changeModelConfig is the web the change-model tests compare across
// models: only Change differs.
func changeModelConfig(m ChangeModel) Config {
	return Config{Seed: 17, Hosts: 60, Pages: 4000, Hazards: HazardsNone, Change: m}
}

// modelStats are what TestChangeModels measures of one web.
type modelStats struct {
	rho       float64                  // Spearman(feature score, log rate) over changing pages
	classes   [numRows][numClasses]int // class counts by kind row
	perRow    [numRows]int
	changing  int
	staticAll int
}

// measureModel computes the feature-rate correlation and the class counts
// of w. The feature score is the observable one: log words + log
// outlinks.
func measureModel(w *Web) modelStats {
	var st modelStats
	var score, logRate []float64
	for id := range w.pages {
		p := &w.pages[id]
		if !p.kind.IsContent() || p.flags&flagBroken != 0 {
			continue
		}
		row := kindRow(p.kind)
		st.classes[row][p.class]++
		st.perRow[row]++
		if p.rate <= 0 {
			st.staticAll++
			continue
		}
		st.changing++
		score = append(score, math.Log(float64(max(p.words, 1)))+math.Log(float64(1+p.linkEnd-p.linkBeg)))
		logRate = append(logRate, math.Log(p.rate))
	}
	st.rho = spearman(score, logRate)
	return st
}

// fastShare is the share of hourly and daily pages of a kind row.
func (st *modelStats) fastShare(row int) float64 {
	return float64(st.classes[row][ClassHourly]+st.classes[row][ClassDaily]) / float64(st.perRow[row])
}

func TestChangeModels(t *testing.T) {
	models := []ChangeModel{ChangeDefault, ChangeStrong, ChangeWeak, ChangeNone, ChangeDrift}
	stats := map[ChangeModel]modelStats{}
	for _, m := range models {
		w := newWeb(t, changeModelConfig(m))
		st := measureModel(w)
		stats[m] = st
		t.Logf("%-7s Spearman(log words + log outlinks, log rate) = %+.3f over %d changing pages; fast share home %.2f, directory %.2f, leaf %.2f, document %.2f",
			m, st.rho, st.changing, st.fastShare(rowHome), st.fastShare(rowDirectory), st.fastShare(rowLeaf), st.fastShare(rowDocument))
	}
	def, strong, weak, none := stats[ChangeDefault], stats[ChangeStrong], stats[ChangeWeak], stats[ChangeNone]
	if strong.rho < def.rho+0.15 {
		t.Errorf("strong: Spearman %.3f, want clearly above default's %.3f", strong.rho, def.rho)
	}
	if def.rho < weak.rho+0.1 {
		t.Errorf("default: Spearman %.3f, want above weak's %.3f", def.rho, weak.rho)
	}
	if weak.rho < none.rho+0.03 {
		t.Errorf("weak: Spearman %.3f, want above none's %.3f", weak.rho, none.rho)
	}
	if math.Abs(none.rho) > 0.1 {
		t.Errorf("none: Spearman %.3f, want near 0", none.rho)
	}
	if strong.rho < 0.5 {
		t.Errorf("strong: Spearman %.3f, want at least 0.5", strong.rho)
	}
	// The drift web's first rates are the default web's.
	if stats[ChangeDrift].rho != def.rho || stats[ChangeDrift].classes != def.classes {
		t.Errorf("drift: first rates differ from the default web's")
	}
	// Class shares by kind: home pages change much faster than leaves and
	// documents much slower by default, not without a model.
	if d := def.fastShare(rowHome) - def.fastShare(rowLeaf); d < 0.15 {
		t.Errorf("default: fast share of home pages exceeds leaves' by %.3f, want at least 0.15", d)
	}
	if d := def.fastShare(rowLeaf) - def.fastShare(rowDocument); d < 0.2 {
		t.Errorf("default: fast share of leaves exceeds documents' by %.3f, want at least 0.2", d)
	}
	for _, row := range []int{rowHome, rowDirectory, rowDocument} {
		if d := math.Abs(none.fastShare(row) - none.fastShare(rowLeaf)); d > 0.12 {
			t.Errorf("none: fast share of kind row %d differs from leaves' by %.3f, want at most 0.12", row, d)
		}
	}
	// The pooled mix keeps the web's overall class shares.
	for c := range numClasses {
		var nd, nn, n int
		for row := range numRows {
			nd += def.classes[row][c]
			nn += none.classes[row][c]
			n += def.perRow[row]
		}
		if d := math.Abs(float64(nd-nn)) / float64(n); d > 0.03 {
			t.Errorf("class %v: default share %.3f, none %.3f", ChangeClass(c), float64(nd)/float64(n), float64(nn)/float64(n))
		}
	}
}

// TestChangeModelHostEffect checks that under ChangeNone the host does not
// matter: the mean log rates of two halves of each host's pages are
// correlated across hosts by default, not without a model.
func TestChangeModelHostEffect(t *testing.T) {
	for _, m := range []ChangeModel{ChangeDefault, ChangeNone} {
		w := newWeb(t, changeModelConfig(m))
		sum := make([][2]float64, w.regular)
		cnt := make([][2]float64, w.regular)
		for id := range w.pages {
			p := &w.pages[id]
			if p.kind != KindLeaf || p.flags&flagBroken != 0 {
				continue
			}
			half := id % 2
			sum[p.host][half] += math.Log10(max(p.rate, 1e-5))
			cnt[p.host][half]++
		}
		var a, b []float64
		for h := range sum {
			if cnt[h][0] >= 10 && cnt[h][1] >= 10 {
				a = append(a, sum[h][0]/cnt[h][0])
				b = append(b, sum[h][1]/cnt[h][1])
			}
		}
		rho := spearman(a, b)
		t.Logf("%s: Spearman of the halves' mean log rates over %d hosts = %.3f", m, len(a), rho)
		switch {
		case m == ChangeDefault && rho < 0.3:
			t.Errorf("default: host halves correlate %.3f, want at least 0.3", rho)
		case m == ChangeNone && math.Abs(rho) > 0.35:
			t.Errorf("none: host halves correlate %.3f, want near 0", rho)
		}
	}
}

func TestChangeModelConfig(t *testing.T) {
	_, err := New(Config{Hosts: 2, Pages: 10, Change: "wild"})
	if err == nil || !strings.Contains(err.Error(), "strong") || !strings.Contains(err.Error(), "drift") {
		t.Errorf("New with Change wild: %v, want an error naming the models", err)
	}
	for in, want := range map[string]ChangeModel{"": ChangeDefault, "default": ChangeDefault, "Strong": ChangeStrong,
		" weak": ChangeWeak, "none": ChangeNone, "DRIFT": ChangeDrift} {
		if got, err := ParseChangeModel(in); err != nil || got != want {
			t.Errorf("ParseChangeModel(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseChangeModel("chaos"); err == nil {
		t.Error("ParseChangeModel(chaos) succeeded")
	}
	// "" and "default" are the same web, and another model keeps
	// everything but the rates.
	a := newWeb(t, Config{Seed: 4, Hosts: 10, Pages: 300})
	b := newWeb(t, Config{Seed: 4, Hosts: 10, Pages: 300, Change: ChangeDefault})
	c := newWeb(t, Config{Seed: 4, Hosts: 10, Pages: 300, Change: ChangeStrong})
	differ := 0
	for id := range a.pages {
		pa, pb, pc := a.pageInfo(int32(id)), b.pageInfo(int32(id)), c.pageInfo(int32(id))
		if pa != pb {
			t.Fatalf("page %d: %+v with Change \"\", %+v with default", id, pa, pb)
		}
		if pa.Rate != pc.Rate {
			differ++
		}
		pc.Rate, pc.ChangeClass, pc.RateAfter, pc.ClassAfter = pa.Rate, pa.ChangeClass, pa.RateAfter, pa.ClassAfter
		if pa != pc {
			t.Fatalf("page %d: %+v by default, %+v under strong (beyond the rate)", id, pa, pc)
		}
		if !pa.RateSwitch.IsZero() || pa.RateAfter != pa.Rate || a.MeanRate(id, a.cfg.Epoch, a.cfg.Epoch.Add(time.Hour)) != pa.Rate {
			t.Fatalf("page %d: a rate switch in a default web: %+v", id, pa)
		}
	}
	if differ == 0 {
		t.Error("strong: no page's rate differs from the default web's")
	}
}

// TestDrift checks ChangeDrift: the first rates and the events before the
// switch are the default web's; event counts before and after the switch
// match Rate and RateAfter in aggregate; Version, LastModified,
// ChangeTimes and MeanRate agree.
func TestDrift(t *testing.T) {
	cfg := Config{Seed: 23, Hosts: 60, Pages: 4000, Hazards: HazardsNone}
	def := newWeb(t, cfg)
	cfg.Change = ChangeDrift
	w := newWeb(t, cfg)
	epoch := w.cfg.Epoch
	end := epoch.AddDate(1, 0, 0)
	window := epoch.Add(DriftWindow)
	var nBefore, nAfter, eBefore, eAfter float64
	var zs [2]struct{ n, sum, sum2 float64 } // standardized counts before and after, pages expecting at least 2
	var content, switched, wokeUp, fellAsleep int
	for id := range w.pages {
		p := w.pageInfo(int32(id))
		if p.Kind.IsContent() && w.pages[id].flags&flagBroken == 0 {
			content++
		}
		if p.Rate != def.pages[id].rate || p.ChangeClass != def.pages[id].class {
			t.Fatalf("page %d: first rate %v (%v), default web's %v (%v)", id, p.Rate, p.ChangeClass, def.pages[id].rate, def.pages[id].class)
		}
		if p.RateSwitch.IsZero() {
			if p.RateAfter != p.Rate || w.Version(id, end) != def.Version(id, end) {
				t.Fatalf("page %d: no switch, but RateAfter %v, Rate %v, versions %d and %d", id, p.RateAfter, p.Rate, w.Version(id, end), def.Version(id, end))
			}
			continue
		}
		switched++
		if !p.Kind.IsContent() || !p.RateSwitch.After(epoch) || !p.RateSwitch.Before(window) {
			t.Fatalf("page %d (%v): switch at %v, want content and within the drift window", id, p.Kind, p.RateSwitch)
		}
		if p.Rate == 0 && p.RateAfter > 0 {
			wokeUp++
		}
		if p.Rate > 0 && p.RateAfter == 0 {
			fellAsleep++
		}
		sw := p.RateSwitch
		times := w.ChangeTimes(id, epoch, end)
		before := w.ChangeTimes(id, epoch, sw)
		if got, want := before, def.ChangeTimes(id, epoch, sw); len(got) != len(want) || (len(got) > 0 && !got[len(got)-1].Equal(want[len(want)-1])) {
			t.Fatalf("page %d: %d changes before the switch, the default web has %d", id, len(got), len(want))
		}
		after := w.ChangeTimes(id, sw, end)
		if len(before)+len(after) != len(times) || w.Version(id, end) != len(times) || w.Version(id, sw) != len(before) {
			t.Fatalf("page %d: %d changes before the switch, %d after, %d in all, versions %d and %d",
				id, len(before), len(after), len(times), w.Version(id, sw), w.Version(id, end))
		}
		if n := len(times); n > 0 && !w.LastModified(id, end).Equal(times[n-1]) {
			t.Fatalf("page %d: LastModified %v, last change %v", id, w.LastModified(id, end), times[n-1])
		}
		for i := 1; i < len(times); i++ {
			if !times[i].After(times[i-1]) {
				t.Fatalf("page %d: change times out of order: %v", id, times)
			}
		}
		if p.Rate == 0 && len(before) > 0 || p.RateAfter == 0 && len(after) > 0 {
			t.Fatalf("page %d: rate %v then %v, yet %d and %d changes", id, p.Rate, p.RateAfter, len(before), len(after))
		}
		dBefore, dAfter := sw.Sub(epoch).Hours()/24, end.Sub(sw).Hours()/24
		nBefore += float64(len(before))
		nAfter += float64(len(after))
		eBefore += p.Rate * dBefore
		eAfter += p.RateAfter * dAfter
		for i, c := range [2][2]float64{{float64(len(before)), p.Rate * dBefore}, {float64(len(after)), p.RateAfter * dAfter}} {
			if c[1] >= 2 {
				z := (c[0] - c[1]) / math.Sqrt(c[1])
				zs[i].n++
				zs[i].sum += z
				zs[i].sum2 += z * z
			}
		}
		if m := w.MeanRate(id, epoch, end); math.Abs(m*(dBefore+dAfter)-(p.Rate*dBefore+p.RateAfter*dAfter)) > 1e-9*(1+m*365) {
			t.Fatalf("page %d: MeanRate over the year %v, want %v", id, m, (p.Rate*dBefore+p.RateAfter*dAfter)/(dBefore+dAfter))
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*b }
		if !near(w.MeanRate(id, epoch, sw), p.Rate) || !near(w.MeanRate(id, sw, end), p.RateAfter) ||
			w.RateAt(id, sw.Add(-time.Second)) != p.Rate || w.RateAt(id, sw) != p.RateAfter {
			t.Fatalf("page %d: MeanRate or RateAt disagree with Rate %v, RateAfter %v", id, p.Rate, p.RateAfter)
		}
	}
	t.Logf("%d of %d content pages switch (%d static ones start changing, %d stop); events before the switch %.0f (expected %.1f), after %.0f (expected %.1f)",
		switched, content, wokeUp, fellAsleep, nBefore, eBefore, nAfter, eAfter)
	if switched < 3000 || wokeUp < 50 || fellAsleep < 50 {
		t.Errorf("%d pages switch, %d start changing, %d stop: want most content pages, and some of both", switched, wokeUp, fellAsleep)
	}
	// Per page (each page weighs the same, whatever its rate): standardized
	// counts have mean 0 and variance 1.
	for i, z := range zs {
		mean, ms := z.sum/z.n, z.sum2/z.n
		t.Logf("side %d of the switch: %.0f pages, standardized counts mean %+.3f, mean square %.3f", i, z.n, mean, ms)
		if math.Abs(mean) > 4/math.Sqrt(z.n) || ms < 0.85 || ms > 1.15 {
			t.Errorf("side %d of the switch: standardized counts mean %+.3f, mean square %.3f over %.0f pages, want 0 and 1", i, mean, ms, z.n)
		}
	}
	// Counts are Poisson given the rates, but a few fast pages dominate
	// them: allow 5% beside the Poisson error.
	for _, c := range []struct {
		name   string
		n, exp float64
	}{{"before", nBefore, eBefore}, {"after", nAfter, eAfter}} {
		if math.Abs(c.n-c.exp) > 4*math.Sqrt(c.exp)+0.05*c.exp {
			t.Errorf("events %s the switch: %.0f, expected %.1f", c.name, c.n, c.exp)
		}
	}
}

// TestDriftServed checks that the server serves the versions and
// Last-Modified times of the drifting change processes.
func TestDriftServed(t *testing.T) {
	w := newWeb(t, Config{Seed: 3, Hosts: 8, Pages: 200, Hazards: HazardsNone, Change: ChangeDrift})
	s := serve(t, w, ServeOptions{Start: w.cfg.Epoch.Add(DriftWindow + 24*time.Hour)})
	c := client(s)
	sim := s.Now()
	checked, woke := 0, 0
	for id := range w.pages {
		p := w.pageInfo(int32(id))
		if p.RateSwitch.IsZero() || p.Status != 200 {
			continue
		}
		resp, body := get(t, c, s.URL(id))
		v := w.Version(id, sim)
		want, err := w.Body(id, v, s.Addressing())
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("%s: status %d, body differs from version %d (%v)", s.URL(id), resp.StatusCode, v, err)
		}
		if h := resp.Header.Get("Last-Modified"); h != "" {
			lm, err := http.ParseTime(h)
			if err != nil || !lm.Equal(w.LastModified(id, sim).Truncate(time.Second)) {
				t.Fatalf("%s: Last-Modified %q, want %v", s.URL(id), h, w.LastModified(id, sim))
			}
		}
		checked++
		if p.Rate == 0 && v > 0 {
			woke++
		}
	}
	if checked < 100 || woke == 0 {
		t.Errorf("checked %d pages with a rate switch, %d static ones that changed since; want at least 100 and 1", checked, woke)
	}
}
