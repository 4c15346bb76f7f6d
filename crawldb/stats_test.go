package crawldb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/storage"
)

var s0 = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

func smallDB() []crawldb.Datum {
	return []crawldb.Datum{
		{URL: "http://a.example/1", Host: "a.example", Status: crawldb.StatusDBFetched, Score: 1, FetchInterval: 86400,
			FetchTime: s0, ChangeCount: 2, FetchCount: 4, Source: crawldb.SourceAdaptive},
		{URL: "http://a.example/2", Host: "a.example", Status: crawldb.StatusDBUnfetched, Score: 0.5, FetchInterval: 2592000,
			FetchTime: s0.Add(2 * time.Hour), Retries: 1, Source: crawldb.SourceInjected},
		{URL: "http://b.example/", Status: crawldb.StatusDBUnfetched, Score: 0.25, FetchInterval: 2592000,
			ChangeCount: 1, FetchCount: 1, Source: crawldb.SourceAdaptive}, // no Host: taken from the URL; never scheduled
		{URL: "http://c.example/", Host: "c.example", Status: crawldb.StatusDBGone, Score: float32(math.NaN()), FetchInterval: 3888000,
			FetchTime: s0.Add(4 * time.Hour), Retries: 3, Source: crawldb.SourceDefault},
	}
}

func TestStatsReport(t *testing.T) {
	s := crawldb.NewStats(true)
	for _, d := range smallDB() {
		s.Add(d)
	}
	r := s.Report()
	ft := func(d time.Duration) *time.Time { x := s0.Add(d); return &x }
	want := crawldb.StatsReport{
		Total:          4,
		Status:         map[string]int64{"db_fetched": 1, "db_unfetched": 2, "db_gone": 1},
		Retries:        map[string]int64{"0": 2, "1": 1, "3": 1},
		Sources:        map[string]int64{"adaptive": 2, "injected": 1, "default": 1},
		Hosts:          3,
		ScoreMin:       0.25,
		ScoreAvg:       1.75 / 3,
		ScoreMax:       1,
		ScoreNaN:       1,
		IntervalMin:    86400,
		IntervalAvg:    float64(86400+2592000+2592000+3888000) / 4,
		IntervalMax:    3888000,
		FetchTimeMin:   ft(0),
		FetchTimeAvg:   ft(2 * time.Hour),
		FetchTimeMax:   ft(4 * time.Hour),
		ChangeCountMin: 0,
		ChangeCountAvg: 0.75,
		ChangeCountMax: 2,
		FetchCountAvg:  1.25,
		PerHost: []crawldb.HostStats{
			{Host: "a.example", Total: 2, Status: map[string]int64{"db_fetched": 1, "db_unfetched": 1}},
			{Host: "b.example", Total: 1, Status: map[string]int64{"db_unfetched": 1}},
			{Host: "c.example", Total: 1, Status: map[string]int64{"db_gone": 1}},
		},
	}
	if !reflect.DeepEqual(r, want) {
		gj, _ := json.MarshalIndent(r, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("report\n%s\nwant\n%s", gj, wj)
	}

	var text bytes.Buffer
	if err := r.WriteText(&text, "crawl/crawldb"); err != nil {
		t.Fatal(err)
	}
	wantText := "Statistics for CrawlDb: crawl/crawldb\n" +
		"TOTAL urls:\t4\n" +
		"shortest fetch interval:\t1 days, 00:00:00\n" +
		"avg fetch interval:\t26 days, 12:00:00\n" +
		"longest fetch interval:\t45 days, 00:00:00\n" +
		"earliest fetch time:\t2026-02-01T00:00:00Z\n" +
		"avg of fetch times:\t2026-02-01T02:00:00Z\n" +
		"latest fetch time:\t2026-02-01T04:00:00Z\n" +
		"retry 0:\t2\n" +
		"retry 1:\t1\n" +
		"retry 3:\t1\n" +
		"min score:\t0.25\n" +
		"avg score:\t0.5833333\n" +
		"max score:\t1.0\n" +
		"score == NaN:\t1\n" +
		"status 1 (db_unfetched):\t2\n" +
		"   a.example :\t1\n" +
		"   b.example :\t1\n" +
		"status 2 (db_fetched):\t1\n" +
		"   a.example :\t1\n" +
		"status 3 (db_gone):\t1\n" +
		"   c.example :\t1\n" +
		"hosts:\t3\n" +
		"schedule source adaptive:\t2\n" +
		"schedule source default:\t1\n" +
		"schedule source injected:\t1\n" +
		"min change count:\t0\n" +
		"avg change count:\t0.750\n" +
		"max change count:\t2\n" +
		"avg fetch count:\t1.250\n"
	if text.String() != wantText {
		t.Errorf("text\n%s\nwant\n%s", text.String(), wantText)
	}

	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back crawldb.StatsReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("JSON round trip differs:\n%s", js.String())
	}
}

func TestStatsEmpty(t *testing.T) {
	r := crawldb.NewStats(false).Report()
	var b bytes.Buffer
	if err := r.WriteText(&b, "x"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "Statistics for CrawlDb: x\nTOTAL urls:\t0\n") || strings.Contains(b.String(), "score") {
		t.Errorf("empty stats:\n%s", b.String())
	}
}

func TestStatsMergeEqualsSequential(t *testing.T) {
	datums := crawldbtest.SampleDatums(2000, 12)
	seq := crawldb.NewStats(true)
	for _, d := range datums {
		seq.Add(d)
	}
	parts := []*crawldb.Stats{crawldb.NewStats(true), crawldb.NewStats(true), crawldb.NewStats(true)}
	for i, d := range datums {
		parts[i%3].Add(d)
	}
	merged := crawldb.NewStats(true)
	merged.Merge(crawldb.NewStats(true)) // empty: no effect
	for _, p := range parts {
		merged.Merge(p)
	}
	a, b := seq.Report(), merged.Report()
	// Float sums differ in the last bits with the order of addition.
	if math.Abs(a.ScoreAvg-b.ScoreAvg) > 1e-9 {
		t.Errorf("score avg %v vs %v", a.ScoreAvg, b.ScoreAvg)
	}
	a.ScoreAvg, b.ScoreAvg = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("merged report differs from sequential")
	}

	// Reader.Stats over a partitioned CrawlDB gives the same.
	db := writeDB(t, datums, 4, 100)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Stats(context.Background(), 3, true)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Report()
	c.ScoreAvg = 0
	if !reflect.DeepEqual(a, c) {
		t.Errorf("Reader.Stats report differs from sequential")
	}
	if a.Hosts < 100 || a.Total != 2000 {
		t.Errorf("sample too small to mean anything: %d hosts, %d total", a.Hosts, a.Total)
	}
	// Without per-host counts the host count is still exact.
	st2, err := r.Stats(context.Background(), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep := st2.Report(); rep.Hosts != a.Hosts || rep.PerHost != nil {
		t.Errorf("no per-host: hosts %d (want %d), per-host %v", rep.Hosts, a.Hosts, rep.PerHost != nil)
	}
}

func BenchmarkStatsAdd(b *testing.B) {
	datums := crawldbtest.SampleDatums(4096, 13)
	for _, perHost := range []bool{false, true} {
		name := "hostcount"
		if perHost {
			name = "perhost"
		}
		b.Run(name, func(b *testing.B) {
			s := crawldb.NewStats(perHost)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s.Add(datums[i%len(datums)])
			}
		})
	}
}

// TestStatsSortByHost: with per-host counts, the hosts under each status
// come in host name order, whatever their sizes (Nutch's -stats -sort).
func TestStatsSortByHost(t *testing.T) {
	s := crawldb.NewStats(true)
	add := func(host string, st crawldb.Status, n int) {
		for i := range n {
			s.Add(crawldb.Datum{URL: fmt.Sprintf("http://%s/%d-%d", host, st, i), Host: host, Status: st})
		}
	}
	add("zz.example", crawldb.StatusDBUnfetched, 5)
	add("mm.example", crawldb.StatusDBUnfetched, 1)
	add("aa.example", crawldb.StatusDBUnfetched, 3)
	add("mm.example", crawldb.StatusDBFetched, 4)
	add("aa.example", crawldb.StatusDBFetched, 2)
	r := s.Report()
	var hosts []string
	for _, h := range r.PerHost {
		hosts = append(hosts, h.Host)
	}
	if got := strings.Join(hosts, " "); got != "aa.example mm.example zz.example" {
		t.Errorf("per-host order %q", got)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, "x"); err != nil {
		t.Fatal(err)
	}
	want := "status 1 (db_unfetched):\t9\n" +
		"   aa.example :\t3\n" +
		"   mm.example :\t1\n" +
		"   zz.example :\t5\n" +
		"status 2 (db_fetched):\t6\n" +
		"   aa.example :\t2\n" +
		"   mm.example :\t4\n" +
		"hosts:\t3\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text:\n%s\nwant within it:\n%s", text.String(), want)
	}
}
