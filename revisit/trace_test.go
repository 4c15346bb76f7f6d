package revisit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/simweb"
)

// TestTraceRoundTrip: the synthetic web's history written as a CSV trace
// and read back simulates as the web itself does.
func TestTraceRoundTrip(t *testing.T) {
	web, err := simweb.New(simweb.Config{Seed: 3, Hosts: 6, Pages: 300, Hazards: simweb.HazardsNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr, err := NewTruth(ctx, web, 10*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTraceCSV(&b, TraceOf(tr)); err != nil {
		t.Fatal(err)
	}
	pages, err := ReadTraceCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	back, err := NewTraceTruth(pages, tr.Start, tr.Horizon)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Pages) != len(tr.Pages) || back.Events.Total() != tr.Events.Total() {
		t.Fatalf("%d pages, %d events; want %d, %d", len(back.Pages), back.Events.Total(), len(tr.Pages), tr.Events.Total())
	}
	for i, p := range tr.Pages {
		q := back.Pages[i]
		if q.URL != p.URL || q.Features != p.Features || q.Rate != p.Rate {
			t.Fatalf("page %d: %+v, want %+v", i, q, p)
		}
		for k, s := range tr.Events.Page(i) {
			if d := math.Abs(back.Events.Page(i)[k] - s); d > 0.001 {
				t.Fatalf("page %d event %d off by %v s", i, k, d)
			}
		}
	}
	cfg := Config{Days: 10, Policies: []string{PolicyDefault, PolicyAdaptive, PolicyOracle}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	want, err := Run(ctx, tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(ctx, back, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Policies {
		w, g := want.Policies[i], got.Policies[i]
		if w.Fetches != g.Fetches || math.Abs(w.Freshness-g.Freshness) > 1e-3 {
			t.Errorf("%s: trace gives %d fetches, freshness %v; the web %d, %v", w.Policy, g.Fetches, g.Freshness, w.Fetches, w.Freshness)
		}
	}
}

// timetabledTrace makes a trace of pages that do not change as Poisson
// processes: timetables (every day at 06:00, or every Monday), bursts
// (a few changes within an hour, then weeks of quiet) and static pages.
func timetabledTrace(start time.Time, days int) []TracePage {
	r := rand.New(rand.NewPCG(7, 11))
	var pages []TracePage
	for i := range 240 {
		p := TracePage{URL: "http://example.test/p" + strings.Repeat("x", i%3) + "/" + string(rune('a'+i%26)) + "-" + strconv.Itoa(i),
			Features: crawldb.Features{Words: int32(100 + r.IntN(900)), Outlinks: int32(r.IntN(40)), Images: int32(r.IntN(5)), Depth: int32(1 + i%4), Bytes: int64(2000 + r.IntN(50000))}}
		switch i % 4 {
		case 0: // a daily timetable
			for d := range days {
				p.Changes = append(p.Changes, start.Add(time.Duration(d)*24*time.Hour+6*time.Hour))
			}
		case 1: // weekly
			for d := 3; d < days; d += 7 {
				p.Changes = append(p.Changes, start.Add(time.Duration(d)*24*time.Hour+9*time.Hour))
			}
		case 2: // bursts
			for d := r.IntN(10); d < days; d += 10 + r.IntN(20) {
				for k := range 3 + r.IntN(4) {
					p.Changes = append(p.Changes, start.Add(time.Duration(d)*24*time.Hour+time.Duration(k*10)*time.Minute))
				}
			}
		}
		pages = append(pages, p)
	}
	return pages
}

// TestTraceTimetabled runs every policy on a trace of timetabled, bursty
// and static pages, read back from CSV, with the start taken from it.
func TestTraceTimetabled(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := WriteTraceCSV(&b, timetabledTrace(start, 30)); err != nil {
		t.Fatal(err)
	}
	pages, err := ReadTraceCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTraceTruth(pages, time.Time{}, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Start.Equal(start) || len(tr.Pages) != 240 {
		t.Fatalf("start %v, %d pages", tr.Start, len(tr.Pages))
	}
	rep, err := Run(context.Background(), tr, Config{Days: 30, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Policies {
		if m.Fetches == 0 || m.Freshness <= 0 || m.Freshness > 1 {
			t.Errorf("%s: %+v", m.Policy, m)
		}
	}
}

func TestTraceErrors(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"url,words\n", "header"},
		{"url,words,outlinks,inlinks,images,depth,bytes,changes\nhttp://a.test/,1,2,3,4,5,-6,\n", "bytes"},
		{"url,words,outlinks,inlinks,images,depth,bytes,changes\nhttp://a.test/,1,2,3,4,5,6,yesterday\n", "change time"},
		{"url,words,outlinks,inlinks,images,depth,bytes,changes\nhttp://a.test/,1,2,3,4,5,6\n", "fields"},
	} {
		if _, err := ReadTraceCSV(strings.NewReader(c.csv)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.csv, err, c.want)
		}
	}
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dup := []TracePage{{URL: "http://a.test/x", Changes: []time.Time{day}}, {URL: "http://A.test/x"}}
	if _, err := NewTraceTruth(dup, time.Time{}, 24*time.Hour); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate URL: %v", err)
	}
	if _, err := NewTraceTruth([]TracePage{{URL: "http://a.test/"}}, time.Time{}, 24*time.Hour); err == nil {
		t.Error("a trace without changes and without a start was accepted")
	}
}

// TestTraceParquet: a trace in Parquet reads back as written.
func TestTraceParquet(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	pages := timetabledTrace(start, 14)
	file := filepath.Join(t.TempDir(), "trace.parquet")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := parquetio.NewWriter[TracePage](f)
	if err := w.Write(pages...); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTrace(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pages) || got[0].URL != pages[0].URL || len(got[0].Changes) != 14 || !got[0].Changes[3].Equal(pages[0].Changes[3]) {
		t.Errorf("read %d pages, first %+v", len(got), got[0])
	}
}
