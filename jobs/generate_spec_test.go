package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/urlutil"
)

// TestGenerateSkipsDuplicates: rows dedup marked db_duplicate are never
// selected, however due and well scored, with or without the topN job, and
// are counted.
func TestGenerateSkipsDuplicates(t *testing.T) {
	now := genNow()
	rows := genDB(now)
	dups := []crawldb.Datum{
		mkDatum("http://a.example.com/dup", 50, now.Add(-time.Hour), crawldb.StatusDBDuplicate),
		mkDatum("http://d.example.net/dup", 40, now.Add(-time.Hour), crawldb.StatusDBDuplicate),
	}
	rows = append(rows, dups...)
	for name, o := range map[string]GenerateOptions{
		"one job":             {},
		"topN":                {TopN: 3, NumFetchers: 2},
		"by domain, per host": {PartitionMode: PartitionDomain, MaxPerHost: 1},
	} {
		env := testEnv(t)
		writeDB(t, env, rows, 2)
		o.Now, o.Schedule = now, ScheduleOptions{Name: "default"}
		res, err := Generate(context.Background(), env, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range generated(t, res) {
			if strings.HasSuffix(u, "/dup") {
				t.Errorf("%s: duplicate %s selected", name, u)
			}
		}
		if res.DBDuplicates != 2 || res.Counters.Get(JobGenerateSelect, ctrDBDuplicate) != 2 {
			t.Errorf("%s: %d duplicates reported, counter %d; want 2", name, res.DBDuplicates,
				res.Counters.Get(JobGenerateSelect, ctrDBDuplicate))
		}
		if res.Due != 9 {
			t.Errorf("%s: %d due, want 9 (duplicates are not due)", name, res.Due)
		}
	}
}

// TestGenerateOptionsValidate: the zero options are valid; each bad
// option is reported, naming its setting, by Validate and by Generate,
// which then leaves no segment.
func TestGenerateOptionsValidate(t *testing.T) {
	if err := (GenerateOptions{}).Validate(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	env := testEnv(t)
	writeDB(t, env, genDB(genNow()), 1)
	for _, tc := range []struct {
		o    GenerateOptions
		want string
	}{
		{GenerateOptions{TopN: -1}, "generate.topN"},
		{GenerateOptions{MaxPerHost: -1}, "generate.maxPerHost"},
		{GenerateOptions{CountMode: "planet"}, "generate.countMode"},
		{GenerateOptions{PartitionMode: "planet"}, "generate.partitionMode"},
		{GenerateOptions{NumFetchers: -1}, "generate.numFetchers"},
		{GenerateOptions{NumFetchers: mapreduce.MaxReduce + 1}, "generate.numFetchers"},
		{GenerateOptions{SelectReducers: -2}, "select reducers"},
		{GenerateOptions{Delay: -time.Hour}, "generate.delay"},
		{GenerateOptions{MaxInterval: -time.Hour}, "maximum fetch interval"},
		{GenerateOptions{RestrictStatus: crawldb.StatusDBDuplicate}, "duplicates are never selected"},
		{GenerateOptions{Schedule: ScheduleOptions{Name: "lunar"}}, "schedule"},
		{GenerateOptions{PartitionMode: PartitionIP, DNSServers: []string{"dns.example.com:53"}}, "generate.partitionMode ip: DNS settings"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want an error with %q", err, tc.want)
		}
		if _, err := Generate(context.Background(), env, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate = %v, want an error with %q", err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(env.Crawl, "segments")); len(entries) != 0 {
		t.Errorf("a segment was left behind: %v", entries)
	}
}

// TestGenerateSpecsRoundTrip: every field of both specs survives the JSON
// a task decodes, and the decoded spec builds its job.
func TestGenerateSpecsRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	filters, err := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}.spec(testEnv(t).Resolver())
	if err != nil {
		t.Fatal(err)
	}
	filters.Regex = []regexSpec{{Name: "rules.txt", Rules: "-\\.gif$\n+.\n"}}
	cfg := crawldb.DefaultScheduleConfig()
	cfg.Dynamic = crawldb.DefaultDynamicConfig()
	sched := ScheduleOptions{Name: "dynamic", Config: cfg}
	sel := generateSelect{CrawlDB: "db/current", Pending: []string{"s/1/crawl_generate", "s/2/crawl_generate"},
		Out: "seg/_select", Ranks: "seg/_ranks", Reduces: 3, GenerateTime: now.Truncate(time.Second), Filters: filters,
		TopN: 10, MaxPerHost: 2, CountMode: CountDomain, PartitionMode: PartitionDomain, Now: now,
		Delay: time.Hour, Schedule: sched, MinScore: ptr(float32(0.25)), MaxInterval: 48 * time.Hour,
		RestrictStatus: crawldb.StatusDBFetched}
	topN := generateTopN{In: "seg/_select", Out: "seg/crawl_generate", Parts: 2,
		Cut: cutoff{Key: 12345, URL: "http://x/", All: false}, CountMode: CountHost, PartitionMode: PartitionIP,
		Now: now, Schedule: sched, DNS: resolver.Config{Servers: []string{"127.0.0.1:53"}, Timeout: time.Second}}
	checkRoundTrip(t, sel)
	checkRoundTrip(t, topN)
}
