package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/urlutil"
)

var tInject = time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)

func TestLines(t *testing.T) {
	long := strings.Repeat("x", maxSeedLine+10)
	in := "\xef\xbb\xbfhttp://a/\r\n\nb\n" + long + "\nlast"
	var got []seedLine
	for l, err := range lines(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	want := []seedLine{{no: 1, text: "http://a/"}, {no: 2, text: ""}, {no: 3, text: "b"}, {no: 4, tooLong: true}, {no: 5, text: "last"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lines = %+v\nwant %+v", got, want)
	}
}

func TestInjectReportsBadLinesAndMerges(t *testing.T) {
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds")
	writeFile(t, filepath.Join(seeds, "a.txt"), strings.Join([]string{
		"# seeds",
		"HTTP://Example.COM:80/a/../index.html\tscore=2.5\tlang=en",
		"http://example.com/daily\tfixedInterval=86400",
		"http://example.com/bad\tscore=high",             // line 4: bad number
		"not a url",                                      // line 5: no scheme
		"http://example.com/photo.JPG",                   // line 6: suffix filter
		"http://other.example/\tfetchInterval=3600\tx=1", // line 7
		"",
		"http://example.com/index.html\tscore=3", // line 9: duplicate of line 2, later wins
	}, "\n"))
	writeFile(t, filepath.Join(seeds, "b.txt"), "http://b.example/\n\tscore=1\n")
	writeFile(t, filepath.Join(seeds, ".hidden"), "http://hidden.example/\n")

	filters := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}
	res, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject, Filters: filters})
	if err != nil {
		t.Fatal(err)
	}
	if res.SeedFiles != 2 || res.Lines != 11 || res.Seeds != 5 || res.BadLines != 3 || res.Filtered != 1 {
		t.Errorf("files %d lines %d seeds %d bad %d filtered %d; want 2 11 5 3 1", res.SeedFiles, res.Lines, res.Seeds, res.BadLines, res.Filtered)
	}
	wantSamples := []string{"a.txt:4: score=", "a.txt:5: ", "a.txt:6: URL http://example.com/photo.JPG rejected by filter suffix", "b.txt:2: empty URL"}
	if len(res.BadLineSamples) != len(wantSamples) {
		t.Fatalf("samples %q", res.BadLineSamples)
	}
	for i, w := range wantSamples {
		if !strings.Contains(res.BadLineSamples[i], w) {
			t.Errorf("sample %d = %q, want it to contain %q", i, res.BadLineSamples[i], w)
		}
	}
	c := res.Counters
	for name, want := range map[string]int64{ctrBadSyntax: 2, ctrBadURL: 1, ctrFilteredBy + "suffix": 1, ctrDuplicate: 1, ctrInjected: 4} {
		if got := c.Get("inject", name); got != want {
			t.Errorf("counter %s = %d, want %d", name, got, want)
		}
	}
	if res.Injected != 4 || res.Total != 4 || res.Existing != 0 {
		t.Errorf("injected %d total %d existing %d", res.Injected, res.Total, res.Existing)
	}

	db := readDB(t, env)
	def := int32(30 * day)
	want := map[string]crawldb.Datum{
		"http://example.com/index.html": {URL: "http://example.com/index.html", Host: "example.com", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: def, Score: 3, ClusterID: -1, Source: crawldb.SourceAdaptive,
			Features: crawldb.Features{Depth: 1}},
		"http://example.com/daily": {URL: "http://example.com/daily", Host: "example.com", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: day, FixedInterval: true, Score: 1, ClusterID: -1, Source: crawldb.SourceInjected,
			Features: crawldb.Features{Depth: 1}},
		"http://other.example/": {URL: "http://other.example/", Host: "other.example", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: 3600, Score: 1, ClusterID: -1, Source: crawldb.SourceInjected,
			Metadata: map[string]string{"x": "1"}},
		"http://b.example/": {URL: "http://b.example/", Host: "b.example", Status: crawldb.StatusDBUnfetched,
			FetchTime: tInject, FetchInterval: def, Score: 1, ClusterID: -1, Source: crawldb.SourceAdaptive},
	}
	if !reflect.DeepEqual(db, want) {
		t.Errorf("CrawlDB:\n got %+v\nwant %+v", db, want)
	}
	if dirExists(filepath.Join(env.Crawl, "crawldb", crawldb.LockFile)) {
		t.Error("the lock was not released")
	}

	// Second inject: the existing URLs are kept, by default.
	writeFile(t, filepath.Join(seeds, "a.txt"), "http://example.com/index.html\tscore=9\tfetchInterval=60\tlang=de\nhttp://new.example/\n")
	os.Remove(filepath.Join(seeds, "b.txt"))
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Injected != 1 || res.Existing != 1 || res.Total != 5 {
		t.Errorf("keep: injected %d existing %d total %d", res.Injected, res.Existing, res.Total)
	}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, want["http://example.com/index.html"]) {
		t.Errorf("keep changed the row: %+v", got)
	}

	// Update: metadata overlaid, score and interval from the seed.
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(2 * time.Hour), Update: true})
	if err != nil {
		t.Fatal(err)
	}
	upd := want["http://example.com/index.html"]
	upd.Score, upd.FetchInterval, upd.Source, upd.Metadata = 9, 60, crawldb.SourceInjected, map[string]string{"lang": "de"}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, upd) || res.Updated != 2 {
		t.Errorf("update: updated %d row\n got %+v\nwant %+v", res.Updated, got, upd)
	}
	// Update without score or interval in the seed keeps them.
	writeFile(t, filepath.Join(seeds, "a.txt"), "http://example.com/index.html\tk=v\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Update: true}); err != nil {
		t.Fatal(err)
	}
	upd.Metadata = map[string]string{"lang": "de", "k": "v"}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, upd) {
		t.Errorf("update without score:\n got %+v\nwant %+v", got, upd)
	}

	// Overwrite: the injected datum replaces the row.
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(3 * time.Hour), Overwrite: true, Update: true})
	if err != nil {
		t.Fatal(err)
	}
	ow := crawldb.Datum{URL: "http://example.com/index.html", Host: "example.com", Status: crawldb.StatusDBUnfetched,
		FetchTime: tInject.Add(3 * time.Hour), FetchInterval: def, Score: 1, ClusterID: -1, Source: crawldb.SourceAdaptive,
		Features: crawldb.Features{Depth: 1}, Metadata: map[string]string{"k": "v"}}
	if got := readDB(t, env)["http://example.com/index.html"]; !reflect.DeepEqual(got, ow) || res.Overwritten != 1 {
		t.Errorf("overwrite: %d\n got %+v\nwant %+v", res.Overwritten, got, ow)
	}
	if n := len(readDB(t, env)); n != 5 {
		t.Errorf("CrawlDB has %d rows, want 5", n)
	}
}

func TestInjectFailureKeepsCrawlDB(t *testing.T) {
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, "http://a.example/\nhttp://b.example/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject}); err != nil {
		t.Fatal(err)
	}
	before := readDB(t, env)

	writeFile(t, seeds, "http://c.example/\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inject(ctx, env, InjectOptions{Seeds: []string{seeds}, Now: tInject, Overwrite: true}); err == nil {
		t.Fatal("inject with a cancelled context succeeded")
	}
	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Errorf("a failed inject changed the CrawlDB:\n%v\n%v", after, before)
	}
	entries, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	for _, e := range entries {
		if e.Name() != crawldb.CurrentName {
			t.Errorf("a failed inject left %s in the CrawlDB directory", e.Name())
		}
	}

	// Missing seeds: a clear error, nothing changed.
	_, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{filepath.Join(t.TempDir(), "nope.txt")}})
	if err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Errorf("missing seed file: %v", err)
	}
	// A held lock: refused, naming the holder.
	h, err := crawldb.Lock(storageLocal(), filepath.Join(env.Crawl, "crawldb"), "updatedb", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}})
	if !errors.Is(err, crawldb.ErrLocked) || !strings.Contains(err.Error(), "updatedb") {
		t.Errorf("inject under a held lock: %v", err)
	}
	h.Unlock()
	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Error("a refused inject changed the CrawlDB")
	}
}

// logTo returns env with its driver and engine logs captured in buf (every
// level).
func logTo(env Env, buf *bytes.Buffer) Env {
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env.Log = log
	r := *localRunner(env)
	r.Log = log
	env.Runner = &r
	return env
}

func TestInjectNoValidURL(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.txt")
	writeFile(t, garbage, strings.Join([]string{
		"# only garbage",
		"not a url",                  // 2: no scheme
		"mailto:joe@example.com",     // 3: no host
		"gopher://a.example/",        // 4: scheme filter
		"http://bad host.example/",   // 5: bad host
		"",                           //
		"http://a.example/\tscore=x", // 7: bad syntax
	}, "\n"))
	filters := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}

	// A new crawl: an error that says why, and no directory left behind.
	env := testEnv(t)
	var logs bytes.Buffer
	env = logTo(env, &logs)
	res, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{garbage}, Now: tInject, Filters: filters})
	if !errors.Is(err, ErrNoValidURL) {
		t.Fatalf("inject of garbage: res %+v, err %v; want ErrNoValidURL", res, err)
	}
	msg := err.Error()
	for _, want := range []string{"no valid URL in " + garbage, "5 of 7 lines rejected",
		"1 bad syntax", "3 not a valid URL", "1 rejected by the URL filters",
		"garbage.txt:2: urlutil: cannot normalize \"not a url\": missing scheme", "garbage.txt:3:", "garbage.txt:4:", "and 2 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "garbage.txt:5:") {
		t.Errorf("error %q quotes more than the first few lines", msg)
	}
	if dirExists(env.Crawl) {
		entries, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
		t.Errorf("a failed inject into a new crawl left %s behind (crawldb holds %v)", env.Crawl, entries)
	}
	if !strings.Contains(logs.String(), "seed lines rejected") || !strings.Contains(logs.String(), "rejected=5") {
		t.Errorf("no summary of the rejected lines in the log:\n%s", logs.String())
	}

	// Empty and comment-only files say so.
	empty := filepath.Join(dir, "empty.txt")
	writeFile(t, empty, "")
	comments := filepath.Join(dir, "comments.txt")
	writeFile(t, comments, "# nothing yet\n\n   \n")
	for file, want := range map[string]string{empty: "no lines", comments: "only blank and comment lines"} {
		_, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{file}})
		if !errors.Is(err, ErrNoValidURL) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), want) {
			t.Errorf("inject of %s: %v; want ErrNoValidURL naming it, with %q", filepath.Base(file), err, want)
		}
	}
	if dirExists(env.Crawl) {
		t.Errorf("a failed inject into a new crawl left %s behind", env.Crawl)
	}

	// An existing CrawlDB: left as it was, no new version installed.
	good := filepath.Join(dir, "good.txt")
	writeFile(t, good, "http://a.example/\nhttp://b.example/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{good}, Now: tInject}); err != nil {
		t.Fatal(err)
	}
	before := readDB(t, env)
	cur := filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)
	curBefore, err := os.Stat(cur)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []InjectOptions{
		{Seeds: []string{garbage}, Filters: filters},
		{Seeds: []string{garbage, comments}, Filters: filters, Overwrite: true},
	} {
		if _, err := Inject(context.Background(), env, o); !errors.Is(err, ErrNoValidURL) {
			t.Fatalf("inject of garbage into a CrawlDB: %v", err)
		}
	}
	curAfter, err := os.Stat(cur)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(curBefore, curAfter) {
		t.Error("a failed inject installed a new CrawlDB version")
	}
	if after := readDB(t, env); !reflect.DeepEqual(after, before) {
		t.Errorf("a failed inject changed the CrawlDB:\n%v\n%v", after, before)
	}
	entries, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	for _, e := range entries {
		if e.Name() != crawldb.CurrentName {
			t.Errorf("a failed inject left %s in the CrawlDB directory", e.Name())
		}
	}

	// Some valid lines: success, the rest counted as rejected.
	mixed := filepath.Join(dir, "mixed.txt")
	writeFile(t, mixed, "not a url\nhttp://c.example/\ngopher://x.example/\n")
	logs.Reset()
	res, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{mixed}, Filters: filters})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seeds != 1 || res.BadLines != 1 || res.Filtered != 1 || res.Counters.Get("inject", ctrRejected) != 2 || res.Injected != 1 {
		t.Errorf("mixed: seeds %d bad %d filtered %d rejected %d injected %d; want 1 1 1 2 1",
			res.Seeds, res.BadLines, res.Filtered, res.Counters.Get("inject", ctrRejected), res.Injected)
	}
	if !strings.Contains(logs.String(), "seed lines rejected") || !strings.Contains(logs.String(), "rejected=2") {
		t.Errorf("no summary of the rejected lines in the log:\n%s", logs.String())
	}
}

func TestInjectStripsCredentials(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	writeFile(t, seeds, strings.Join([]string{
		"http://user:pass@a.example/x",
		"https://admin:s3cret@b.example/\tscore=2",
		"HTTP://zeduser:PaSsWoRd@A.example:80/x", // the same URL as line 1
		"http://nopassuser@c.example/",
		"http://user:pass@bad host.example/",             // bad host
		"http://d.example/\thttp://user:pass@e.example/", // a field that is not key=value
		"http://d.example/\tscore=http://user:pass@f/",   // a bad number
		"user:pass@g.example/path",                       // no scheme
		"ftp:\\\\user:pass@h.example",                    // filtered by scheme
		"http://user:pass@i.example/" + strings.Repeat("x", 10),
	}, "\n"))
	env := testEnv(t)
	var logs bytes.Buffer
	env = logTo(env, &logs)
	filters := URLFilterOptions{Options: urlutil.DefaultFilterOptions()}
	res, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject, Filters: filters})
	if err != nil {
		t.Fatal(err)
	}
	if res.Credentials != 6 || res.Counters.Get("inject", ctrCredentials) != 6 {
		t.Errorf("credentials %d, counter %d; want 6", res.Credentials, res.Counters.Get("inject", ctrCredentials))
	}
	db := readDB(t, env)
	var urls []string
	for u := range db {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	want := []string{"http://a.example/x", "http://c.example/", "http://i.example/xxxxxxxxxx", "https://b.example/"}
	if !reflect.DeepEqual(urls, want) {
		t.Errorf("CrawlDB URLs %q, want %q", urls, want)
	}
	secrets := []string{"pass", "s3cret", "admin", "zeduser", "nopassuser"}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(text), strings.ToLower(s)) {
				t.Errorf("%s holds %q:\n%s", what, s, text)
			}
		}
	}
	check("the CrawlDB", fmt.Sprintf("%+v", db))
	for _, d := range readParts[crawldb.Datum](t, filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)) {
		check("a CrawlDB row", fmt.Sprintf("%+v", d))
	}
	check("the log", logs.String())
	check("the bad-line samples", strings.Join(res.BadLineSamples, "\n"))
	if n := strings.Count(logs.String(), "credentials removed from URLs"); n != 1 {
		t.Errorf("the log says %d times that credentials were removed, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "urls=6") || !strings.Contains(logs.String(), "seeds.txt:1") {
		t.Errorf("the credentials log line lacks the count or the first place:\n%s", logs.String())
	}
	if len(res.BadLineSamples) != 5 {
		t.Errorf("bad-line samples %q, want 5", res.BadLineSamples)
	}

	// A seed file named by a URI with userinfo is not named with it.
	_, err = Inject(context.Background(), env, InjectOptions{Seeds: []string{"file://user:pass@/nonexistent/seeds.txt"}})
	if err == nil {
		t.Fatal("inject of a missing file succeeded")
	}
	check("the error of a missing file", err.Error())

	// Nothing with credentials: no log line about them.
	clean := filepath.Join(dir, "clean.txt")
	writeFile(t, clean, "http://j.example/\n")
	logs.Reset()
	if res, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{clean}}); err != nil || res.Credentials != 0 {
		t.Fatalf("clean inject: %+v, %v", res, err)
	}
	if strings.Contains(logs.String(), "credentials") && !strings.Contains(logs.String(), "credentials_stripped=0") {
		t.Errorf("a clean inject logs about credentials:\n%s", logs.String())
	}
}

func TestInjectOptionsValidate(t *testing.T) {
	seeds := []string{"seeds.txt"}
	for _, tc := range []struct {
		o    InjectOptions
		want string // in the error; "" for none
	}{
		{InjectOptions{Seeds: seeds}, ""},
		{InjectOptions{Seeds: seeds, Score: 0.5, MaxReportedLines: 3, Schedule: defaultSched, Overwrite: true, Update: true}, ""},
		{InjectOptions{}, "no seed file"},
		{InjectOptions{Seeds: seeds, Score: -1}, "score"},
		{InjectOptions{Seeds: seeds, Score: float32(math.NaN())}, "score"},
		{InjectOptions{Seeds: seeds, Score: float32(math.Inf(1))}, "score"},
		{InjectOptions{Seeds: seeds, MaxReportedLines: -1}, "negative"},
		{InjectOptions{Seeds: seeds, Schedule: ScheduleOptions{Name: "weekly"}}, "weekly"},
	} {
		err := tc.o.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: Validate() = %v, want an error with %q", tc.o, err, tc.want)
		}
	}
	// Inject fails as Validate does, before it touches the crawl.
	env := testEnv(t)
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: seeds, Score: -1}); err == nil || !strings.Contains(err.Error(), "score") {
		t.Errorf("Inject with a negative score: %v", err)
	}
	if _, err := os.Stat(env.Crawl); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Inject with bad options touched the crawl directory: %v", err)
	}
}

// TestInjectJobSpecRoundTrip: the inject job's spec survives its JSON
// (as Hadoop Streaming tasks receive it) unchanged, and builds.
func TestInjectJobSpecRoundTrip(t *testing.T) {
	spec := injectJob{CrawlDB: "file:///c/crawldb/current", Seeds: "file:///c/crawldb/tmp-seeds/seeds.parquet",
		Out: "file:///c/crawldb/tmp", NumReduce: 3, Update: true, Score: 0.25, Now: tInject,
		Schedule: ScheduleOptions{Name: "adaptive", Config: crawldb.DefaultScheduleConfig()}}
	checkRoundTrip(t, spec)
	bad := spec
	bad.Out = ""
	if _, err := bad.Job(); err == nil {
		t.Error("an inject job without output built")
	}
}

// TestInjectKeepsClusterRecord checks that an inject into a CrawlDB whose
// version records an applied cluster result carries the record into the
// version it installs, as updatedb and dedup do: the dynamic schedule
// would otherwise apply the same result again.
func TestInjectKeepsClusterRecord(t *testing.T) {
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, "http://example.com/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject}); err != nil {
		t.Fatal(err)
	}
	const record = `{"result":"clusters/20260101000000"}`
	writeFile(t, filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName, clustersFile), record)
	writeFile(t, seeds, "http://example.org/\n")
	if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{seeds}, Now: tInject.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := currentFiles(t, env)[clustersFile]; got != record {
		t.Errorf("cluster record %q after inject, want %q", got, record)
	}
	if n := len(readDB(t, env)); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}
