package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
)

// dedupFixture is a CrawlDB with duplicate pages: rows by URL, and the URLs
// Dedup must mark.
type dedupFixture struct {
	rows []crawldb.Datum
	dups []string
}

// newDedupFixture builds rows whose groups of equal signatures test each
// rule of Dedup once, among varied rows without duplicates
// (crawldbtest.SampleDatums, whose signatures are all distinct).
func newDedupFixture(now time.Time) dedupFixture {
	t0 := now.Add(-24 * time.Hour).Truncate(time.Millisecond)
	next := now.Add(30 * 24 * time.Hour).Truncate(time.Millisecond)
	row := func(url, sig string, status crawldb.Status, score float32, fetched time.Time) crawldb.Datum {
		d := crawldb.Datum{URL: url, Host: strings.Split(url, "/")[2], Status: status, Score: score, ClusterID: -1,
			PrevFetchTime: fetched, FetchTime: next, FetchInterval: 30 * 86400, HTTPStatus: 200, FetchCount: 1,
			ContentType: "text/html", Metadata: map[string]string{"k": url}}
		if sig != "" {
			d.Signature = []byte(sig)
		}
		d.Observe(fetched, true, time.Time{})
		return d
	}
	var f dedupFixture
	f.rows = []crawldb.Datum{
		// Score decides: the highest is kept.
		row("http://a.example/1", "sigA", crawldb.StatusDBFetched, 2, t0),
		row("http://a.example/2", "sigA", crawldb.StatusDBFetched, 5, t0.Add(-time.Hour)),
		row("http://a.example/3", "sigA", crawldb.StatusDBNotModified, 1, t0.Add(time.Hour)),
		// Equal scores: the newest fetch is kept.
		row("http://b.example/1", "sigB", crawldb.StatusDBFetched, 1, t0),
		row("http://b.example/long", "sigB", crawldb.StatusDBNotModified, 1, t0.Add(time.Hour)),
		row("http://b.example/3", "sigB", crawldb.StatusDBFetched, 1, t0.Add(-time.Hour)),
		// Equal scores and fetches: the shortest URL is kept.
		row("http://c.example/a/longer", "sigC", crawldb.StatusDBFetched, 1, t0),
		row("http://c.example/z", "sigC", crawldb.StatusDBFetched, 1, t0),
		// Equal in all but the URL's bytes: the first is kept.
		row("http://d.example/y", "sigD", crawldb.StatusDBFetched, 1, t0),
		row("http://d.example/x", "sigD", crawldb.StatusDBFetched, 1, t0),
		// Only fetched rows are candidates: the others keep their status
		// whatever their signature, and a lone candidate is no duplicate.
		row("http://e.example/fetched", "sigE", crawldb.StatusDBFetched, 0, t0),
		row("http://e.example/gone", "sigE", crawldb.StatusDBGone, 9, t0),
		row("http://e.example/redir", "sigE", crawldb.StatusDBRedirPerm, 9, t0),
		row("http://e.example/unfetched", "sigE", crawldb.StatusDBUnfetched, 9, t0),
		row("http://e.example/dup", "sigE", crawldb.StatusDBDuplicate, 9, t0),
		// No signature: never a duplicate.
		row("http://f.example/1", "", crawldb.StatusDBFetched, 1, t0),
		row("http://f.example/2", "", crawldb.StatusDBFetched, 1, t0),
		// Due and unfetched: what generate selects afterwards.
		{URL: "http://g.example/new", Host: "g.example", Status: crawldb.StatusDBUnfetched, ClusterID: -1,
			FetchTime: now.Add(-time.Hour).Truncate(time.Millisecond), FetchInterval: 30 * 86400, Score: 1},
	}
	f.dups = []string{"http://a.example/1", "http://a.example/3", "http://b.example/1", "http://b.example/3",
		"http://c.example/a/longer", "http://d.example/y"}
	for _, d := range crawldbtest.SampleDatums(40, 7) {
		d.FetchTime = next // not due: the rows generate must leave alone
		f.rows = append(f.rows, d)
	}
	return f
}

// currentFiles reads every file of the CrawlDB's current version.
func currentFiles(t *testing.T, env Env) map[string]string {
	t.Helper()
	dir := filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// checkLayout checks that every part of the CrawlDB holds the URLs the
// engine's hash partitioning gives it, sorted, as inject and updatedb
// write them, and that the reader's merge of the parts accepts them.
func checkLayout(t *testing.T, env Env, parts int) {
	t.Helper()
	dir := filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName)
	for p := range parts {
		rows, err := parquetio.ReadAll[crawldb.Datum](storageLocal(), filepath.Join(dir, partName(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(rows, func(a, b crawldb.Datum) int { return strings.Compare(a.URL, b.URL) }) {
			t.Errorf("part %d is not sorted by URL", p)
		}
		for _, d := range rows {
			if q := mapreduce.HashPartitioner(d.URL, parts); q != p {
				t.Errorf("%s is in part %d, want %d", d.URL, p, q)
			}
		}
	}
	r, err := crawldb.Open(storageLocal(), filepath.Join(env.Crawl, "crawldb"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Sorted(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestDedup(t *testing.T) {
	ctx := context.Background()
	now := genNow()
	env := testEnv(t)
	f := newDedupFixture(now)
	writeDB(t, env, f.rows, 3)
	record := `{"result":"clusters/x"}`
	writeFile(t, filepath.Join(env.Crawl, "crawldb", crawldb.CurrentName, clustersFile), record)
	before := readDB(t, env)

	res, err := Dedup(ctx, env, DedupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != int64(len(f.rows)) || res.Groups != 4 || res.Marked != int64(len(f.dups)) {
		t.Errorf("rows %d, groups %d, marked %d; want %d, 4, %d", res.Rows, res.Groups, res.Marked, len(f.rows), len(f.dups))
	}
	after := readDB(t, env)
	if len(after) != len(before) {
		t.Fatalf("%d rows after, %d before", len(after), len(before))
	}
	var marked []string
	for u, d := range after {
		want := before[u]
		if d.Status == crawldb.StatusDBDuplicate && want.Status != crawldb.StatusDBDuplicate {
			marked = append(marked, u)
			want.Status = crawldb.StatusDBDuplicate
		}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("%s changed beyond its status:\n got %+v\nwant %+v", u, d, want)
		}
	}
	sort.Strings(marked)
	sort.Strings(f.dups)
	if !slices.Equal(marked, f.dups) {
		t.Errorf("marked %v\nwant   %v", marked, f.dups)
	}
	checkLayout(t, env, 3)
	if got := currentFiles(t, env)[clustersFile]; got != record {
		t.Errorf("cluster record %q after dedup, want %q", got, record)
	}

	// A second run finds no duplicates and leaves the CrawlDB's files alone.
	files := currentFiles(t, env)
	res, err = Dedup(ctx, env, DedupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Groups != 0 || res.Marked != 0 {
		t.Errorf("second run: groups %d, marked %d; want none", res.Groups, res.Marked)
	}
	if !reflect.DeepEqual(currentFiles(t, env), files) {
		t.Error("the second run changed the CrawlDB's files")
	}
	ents, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	for _, e := range ents {
		if e.Name() != crawldb.CurrentName && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") {
			t.Errorf("dedup left %s in the CrawlDB directory", e.Name())
		}
	}

	// Generate then selects the due URL only. Generate does not choose by
	// status (duplicates, like gone pages, come back when due, as in
	// Nutch): this checks that marking left the duplicates' schedule
	// alone.
	gen, err := Generate(ctx, env, GenerateOptions{Now: now, NumFetchers: 1, Schedule: defaultSched})
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range fetchList(t, gen.Segment) {
		for _, d := range rows {
			if d.URL != "http://g.example/new" {
				t.Errorf("generate selected %s (%v)", d.URL, after[d.URL].Status)
			}
		}
	}
	if gen.Selected != 1 {
		t.Errorf("generate selected %d URLs, want 1", gen.Selected)
	}
}

func TestDedupGroupHost(t *testing.T) {
	env := testEnv(t)
	t0 := genNow().Add(-time.Hour)
	var rows []crawldb.Datum
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1"} {
		rows = append(rows, crawldb.Datum{URL: u, Status: crawldb.StatusDBFetched, Signature: []byte("same"), PrevFetchTime: t0, ClusterID: -1})
	}
	writeDB(t, env, rows, 2)
	res, err := Dedup(context.Background(), env, DedupOptions{Group: "host"})
	if err != nil {
		t.Fatal(err)
	}
	db := readDB(t, env)
	if res.Marked != 1 || db["http://a.example/2"].Status != crawldb.StatusDBDuplicate || db["http://b.example/1"].Status != crawldb.StatusDBFetched {
		t.Errorf("marked %d: a/2 %v, b/1 %v; want only a/2 marked", res.Marked, db["http://a.example/2"].Status, db["http://b.example/1"].Status)
	}
	if _, err := Dedup(context.Background(), env, DedupOptions{Group: "planet"}); err == nil {
		t.Error("group planet accepted")
	}
}

// TestDedupFailureKeepsCrawlDB fails dedup-mark and checks that the
// CrawlDB, its files and its directory are as before.
func TestDedupFailureKeepsCrawlDB(t *testing.T) {
	env := testEnv(t)
	writeDB(t, env, newDedupFixture(genNow()).rows, 3)
	files := currentFiles(t, env)
	local := env.Engine
	boom := errors.New("injected failure")
	env.Runner = mapreduce.RunnerFunc(func(ctx context.Context, s mapreduce.Spec) (*mapreduce.Result, error) {
		if s.JobName() == JobDedupMark {
			return nil, boom
		}
		return local.Run(ctx, s)
	})
	if _, err := Dedup(context.Background(), env, DedupOptions{}); !errors.Is(err, boom) {
		t.Fatalf("dedup: %v, want the injected failure", err)
	}
	if !reflect.DeepEqual(currentFiles(t, env), files) {
		t.Error("a failed dedup changed the CrawlDB")
	}
	ents, _ := os.ReadDir(filepath.Join(env.Crawl, "crawldb"))
	for _, e := range ents {
		if e.IsDir() && e.Name() != crawldb.CurrentName {
			t.Errorf("a failed dedup left %s", e.Name())
		}
	}
	none := filepath.Join(t.TempDir(), "none")
	if _, err := Dedup(context.Background(), Env{Engine: env.Engine, Crawl: none}, DedupOptions{}); err == nil || dirExists(none) {
		t.Errorf("dedup of a missing CrawlDB: %v; created %s: %v", err, none, dirExists(none))
	}
}

// TestDedupStreamingEqualsLocal runs Dedup's jobs rebuilt from their Conf
// through Registry as Hadoop Streaming tasks: the CrawlDB must be the one
// the local runner writes.
func TestDedupStreamingEqualsLocal(t *testing.T) {
	now := genNow()
	run := func(streaming bool) map[string]crawldb.Datum {
		env := testEnv(t)
		if streaming {
			env.Runner = streamingRunner(t, env.Storage, filepath.Join(t.TempDir(), "work"))
		}
		writeDB(t, env, newDedupFixture(now).rows, 3)
		if _, err := Dedup(context.Background(), env, DedupOptions{Group: "domain"}); err != nil {
			t.Fatal(err)
		}
		checkLayout(t, env, 3)
		return readDB(t, env)
	}
	local, streamed := run(false), run(true)
	if !reflect.DeepEqual(local, streamed) {
		t.Error("the CrawlDBs of the local and the streaming runs differ")
	}
	if local["http://a.example/1"].Status != crawldb.StatusDBDuplicate {
		t.Error("nothing was marked")
	}
}
