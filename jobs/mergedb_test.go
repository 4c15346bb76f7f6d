package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// expectedMergeDB applies CrawlDbMerger's rule to rows of one URL in
// input order, written out independently of mergeDatums: the row with
// the latest last fetch time wins (a db_unfetched row's is 0, the others'
// fetch time minus interval), the first on a tie; metadata of all rows,
// the winner's entries over the others', and among the others a later
// last fetch over an earlier one, the first given on a tie.
func expectedMergeDB(rows []crawldb.Datum) crawldb.Datum {
	last := func(d crawldb.Datum) int64 {
		if d.Status == crawldb.StatusDBUnfetched {
			return 0
		}
		return d.FetchTime.UnixMilli() - int64(d.FetchInterval)*1000
	}
	w := 0
	for i, d := range rows {
		if last(d) > last(rows[w]) {
			w = i
		}
	}
	res := rows[w]
	meta := map[string]string{}
	// Lowest precedence first: the losers by last fetch time, later
	// inputs first on a tie; the winner last.
	order := []int{}
	for i := range rows {
		if i != w {
			order = append(order, i)
		}
	}
	for i := 0; i < len(order); i++ {
		for j := i + 1; j < len(order); j++ {
			a, b := order[i], order[j]
			if last(rows[a]) > last(rows[b]) || last(rows[a]) == last(rows[b]) && a < b {
				order[i], order[j] = b, a
			}
		}
	}
	for _, i := range append(order, w) {
		for k, v := range rows[i].Metadata {
			meta[k] = v
		}
	}
	res.Metadata = meta
	if len(meta) == 0 {
		res.Metadata = nil
	}
	return res
}

// crawlInto crawls srv from the seed lines into a new crawl for rounds
// rounds from t0 and returns its env.
func crawlInto(t *testing.T, srv *simweb.Server, lines []string, rounds int, t0 time.Time) Env {
	t.Helper()
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, strings.Join(lines, "\n")+"\n")
	o := testCrawlOptions(srv, seeds, rounds, t0)
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestMergeDBRule crawls one synthetic web twice from overlapping seeds
// (with seed metadata of their own), at different times, merges the two
// CrawlDBs and checks every row against CrawlDbMerger's rule applied to
// the inputs' rows; then the same the other way round (ties go the other
// way), with filters, and the refusals.
func TestMergeDBRule(t *testing.T) {
	web, err := simweb.New(simweb.Config{Seed: 7, Hosts: 10, Pages: 150})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	seeds := srv.Seeds()
	var linesA, linesB []string
	for i, s := range seeds {
		if i < 7 {
			linesA = append(linesA, s+"\tsrc=A\tonlyA=1")
		}
		if i >= 3 {
			linesB = append(linesB, s+"\tsrc=B\tonlyB=1")
		}
	}
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	a := crawlInto(t, srv, linesA, 2, t0)
	b := crawlInto(t, srv, linesB, 1, t0.AddDate(0, 0, 10))
	dbA, dbB := readDB(t, a), readDB(t, b)

	env := testEnv(t)
	for _, order := range [][]Env{{a, b}, {b, a}} {
		out := filepath.Join(t.TempDir(), "merged")
		ins := []string{filepath.Join(order[0].Crawl, "crawldb"), filepath.Join(order[1].Crawl, "crawldb")}
		res, err := MergeDB(context.Background(), env, MergeDBOptions{Out: out, CrawlDBs: ins})
		if err != nil {
			t.Fatal(err)
		}
		rows := readParts[crawldb.Datum](t, filepath.Join(out, crawldb.CurrentName))
		m := map[string]crawldb.Datum{}
		for _, d := range rows {
			if _, dup := m[d.URL]; dup {
				t.Errorf("%s twice in the merged CrawlDB", d.URL)
			}
			m[d.URL] = canonical(d)
		}
		first, second := readDB(t, order[0]), readDB(t, order[1])
		union := map[string]bool{}
		for u := range first {
			union[u] = true
		}
		for u := range second {
			union[u] = true
		}
		if len(m) != len(union) || res.URLs != int64(len(union)) || res.Read != int64(len(first)+len(second)) {
			t.Fatalf("merged %d URLs (reported %d, read %d), want %d of %d+%d rows", len(m), res.URLs, res.Read,
				len(union), len(first), len(second))
		}
		both, fromSecond, metaMerged := 0, 0, 0
		for u := range union {
			var in []crawldb.Datum
			if d, ok := first[u]; ok {
				in = append(in, d)
			}
			if d, ok := second[u]; ok {
				in = append(in, d)
			}
			want := canonical(expectedMergeDB(in))
			if !reflect.DeepEqual(m[u], want) {
				t.Errorf("%s:\ngot  %+v\nwant %+v", u, m[u], want)
			}
			if len(in) == 2 {
				both++
				if lastFetched(&in[1]).After(lastFetched(&in[0])) {
					fromSecond++
				}
				if want.Metadata["onlyA"] == "1" && want.Metadata["onlyB"] == "1" {
					metaMerged++
				}
			}
		}
		t.Logf("%d URLs, %d in both CrawlDBs, %d of them from the second given, %d with both seeds' metadata", len(union), both, fromSecond, metaMerged)
		if both < 20 || metaMerged == 0 || fromSecond == 0 || fromSecond == both {
			t.Errorf("the crawls overlap too little: %d URLs in both, %d with merged metadata", both, metaMerged)
		}
		for _, e := range order {
			if dirExists(filepath.Join(e.Crawl, "crawldb", crawldb.LockFile)) {
				t.Errorf("input %s still locked", e.Crawl)
			}
		}
	}
	if len(dbA) == 0 || len(dbB) == 0 {
		t.Fatal("empty crawls")
	}

	// An existing output is refused, then replaced with Replace.
	out := filepath.Join(t.TempDir(), "merged")
	ins := []string{filepath.Join(a.Crawl, "crawldb"), filepath.Join(b.Crawl, "crawldb")}
	if _, err := MergeDB(context.Background(), env, MergeDBOptions{Out: out, CrawlDBs: ins[:1]}); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeDB(context.Background(), env, MergeDBOptions{Out: out, CrawlDBs: ins}); !errors.Is(err, ErrOutputExists) {
		t.Fatalf("merge into an existing CrawlDB: %v", err)
	}
	if n := len(readParts[crawldb.Datum](t, filepath.Join(out, crawldb.CurrentName))); n != len(dbA) {
		t.Errorf("the refused merge changed the output: %d rows, want %d", n, len(dbA))
	}
	// Replace, with a filter that drops one host.
	host := seeds[5][len("http://"):]
	host = host[:strings.IndexByte(host, '/')]
	rules := filepath.Join(t.TempDir(), "rules.txt")
	writeFile(t, rules, fmt.Sprintf("-^http://%s/\n+.\n", strings.ReplaceAll(host, ".", `\.`)))
	res, err := MergeDB(context.Background(), env, MergeDBOptions{Out: out, CrawlDBs: ins, Replace: true,
		Filters: URLFilterOptions{RegexFiles: []string{rules}}})
	if err != nil {
		t.Fatal(err)
	}
	dropped := 0
	for _, d := range readParts[crawldb.Datum](t, filepath.Join(out, crawldb.CurrentName)) {
		if strings.Contains(d.URL, "://"+host+"/") {
			t.Errorf("filtered URL %s merged", d.URL)
		}
	}
	for _, db := range []map[string]crawldb.Datum{dbA, dbB} {
		for u := range db {
			if strings.Contains(u, "://"+host+"/") {
				dropped++
			}
		}
	}
	if dropped == 0 || res.Filtered != int64(dropped) {
		t.Errorf("filtered %d rows, want %d (> 0)", res.Filtered, dropped)
	}
	if dirExists(filepath.Join(out, crawldb.OldName)) {
		t.Error("the replaced version was kept")
	}

	// The output cannot be an input; a missing input fails, leaving no output.
	if _, err := MergeDB(context.Background(), env, MergeDBOptions{Out: ins[0], CrawlDBs: ins, Replace: true}); err == nil {
		t.Error("output = input accepted")
	}
	out2 := filepath.Join(t.TempDir(), "m2")
	if _, err := MergeDB(context.Background(), env, MergeDBOptions{Out: out2, CrawlDBs: []string{ins[0], filepath.Join(t.TempDir(), "nope")}}); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing input: %v", err)
	}
	if dirExists(out2) {
		t.Error("a failed merge left its output directory")
	}
}

// TestMergeCorruptInput truncates a part file of one input and checks
// that mergedb and mergesegs fail naming the file, publish nothing and
// leave the inputs as they were.
func TestMergeCorruptInput(t *testing.T) {
	env, _, segs, _ := mergeCrawl(t)
	env2 := testEnv(t)

	// mergedb: a truncated CrawlDB part.
	db := filepath.Join(env.Crawl, "crawldb")
	parts, err := filepath.Glob(filepath.Join(db, crawldb.CurrentName, "part-*.parquet"))
	if err != nil || len(parts) == 0 {
		t.Fatal(parts, err)
	}
	truncate(t, parts[0])
	out := filepath.Join(t.TempDir(), "merged")
	_, err = MergeDB(context.Background(), env2, MergeDBOptions{Out: out, CrawlDBs: []string{db}})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(parts[0])) {
		t.Errorf("mergedb of a truncated CrawlDB: %v", err)
	}
	if dirExists(out) {
		t.Errorf("a failed mergedb left %s", out)
	}

	// mergesegs: a truncated content part of the newest segment.
	cparts, err := filepath.Glob(filepath.Join(segs[2], "content", "part-*.parquet"))
	if err != nil || len(cparts) == 0 {
		t.Fatal(cparts, err)
	}
	before := treeOf(t, segs[2])
	truncate(t, cparts[0])
	before2 := treeOf(t, segs[2])
	outDir := filepath.Join(t.TempDir(), "segs")
	_, err = MergeSegments(context.Background(), env2, MergeSegmentsOptions{OutDir: outDir, Segments: segs})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(cparts[0])) {
		t.Errorf("mergesegs of a truncated content part: %v", err)
	}
	if dirExists(outDir) {
		t.Errorf("a failed mergesegs left its output directory %s", outDir)
	}
	if after := treeOf(t, segs[2]); !reflect.DeepEqual(after, before2) || len(before) != len(after) {
		t.Errorf("the input segment changed:\n%v\n%v", before2, after)
	}
}

// truncate cuts a file to half its size.
func truncate(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// treeOf lists the files under dir with their sizes.
func treeOf(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			m[p] = fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
