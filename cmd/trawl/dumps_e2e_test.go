package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// parquetRows reads every part file of a job output directory with
// parquetio, in part order.
func parquetRows[T any](t *testing.T, dir string) []T {
	t.Helper()
	fsys := storage.NewLocal()
	parts, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []T
	for _, p := range parts {
		r, err := parquetio.ReadAll[T](fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	return rows
}

// arrowTable reads an Arrow IPC stream with Arrow's Go reader.
func arrowTable(t *testing.T, data []byte) arrow.Table {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatalf("arrow stream: %v", err)
	}
	defer r.Release()
	var recs []arrow.Record
	for r.Next() {
		rec := r.Record()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	for _, rec := range recs {
		rec.Release()
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// statusNameColumn returns the values of a table's status_name column.
func statusNameColumn(t *testing.T, tbl arrow.Table) []string {
	t.Helper()
	idx := tbl.Schema().FieldIndices("status_name")
	if len(idx) != 1 {
		t.Fatalf("no status_name column: %v", tbl.Schema())
	}
	var out []string
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		d := chunk.(*array.Dictionary)
		dict := d.Dictionary().(*array.String)
		for i := 0; i < d.Len(); i++ {
			out = append(out, dict.Value(d.GetValueIndex(i)))
		}
	}
	return out
}

// checkArrowRows compares an Arrow dump with the rows it should hold and
// their status names.
func checkArrowRows[T any](t *testing.T, what string, data []byte, rows []T, status func(*T) crawldb.Status) {
	t.Helper()
	tbl := arrowTable(t, data)
	if err := crawldbtest.DiffArrow(rows, tbl); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	names := statusNameColumn(t, tbl)
	for i := range rows {
		if want := status(&rows[i]).String(); i >= len(names) || names[i] != want {
			t.Fatalf("%s: row %d status_name %v, want %s", what, i, names[i:min(i+1, len(names))], want)
		}
	}
}

// TestDumpsOnSimwebCrawl crawls a synthetic web with the binary, then
// checks its dumps: the Arrow streams of readdb dump and readseg dump hold
// the rows of the Parquet files (read with parquetio) with the filters
// applied; statuses print by name and number and filter by either; readdb
// stats --sort lists hosts in name order; the help documents it all; and
// an independent Arrow reader (the apache-arrow JavaScript package) reads
// the streams.
func TestDumpsOnSimwebCrawl(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	r.ok("--log-level", "warn", "--crawl", crawl, "crawl", "--simweb", "--hosts", "6", "--pages", "120", "--latency", "0",
		"--server-delay", "5ms", "--time-limit", "5s", "--rounds", "2")

	db := parquetRows[crawldb.Datum](t, filepath.Join(crawl, "crawldb", "current"))
	sort.Slice(db, func(i, j int) bool { return db[i].URL < db[j].URL })
	dbStatus := func(d *crawldb.Datum) crawldb.Status { return d.Status }
	byStatus := map[crawldb.Status]int{}
	for _, d := range db {
		byStatus[d.Status]++
	}
	if len(db) < 50 || byStatus[crawldb.StatusDBFetched] == 0 || byStatus[crawldb.StatusDBUnfetched] == 0 {
		t.Fatalf("the crawl did little: %d rows, %v", len(db), byStatus)
	}

	t.Run("readdb dump arrow", func(t *testing.T) {
		res := r.ok("--crawl", crawl, "readdb", "dump", "--format", "arrow")
		checkArrowRows(t, "readdb dump --format arrow", []byte(res.stdout), db, dbStatus)

		// Filters: --status by number, --regex, --limit; to --output.
		var fetched []crawldb.Datum
		re := regexp.MustCompile(`^http://h0002\.`)
		var h2 []crawldb.Datum
		for _, d := range db {
			if d.Status == crawldb.StatusDBFetched {
				fetched = append(fetched, d)
			}
			if re.MatchString(d.URL) {
				h2 = append(h2, d)
			}
		}
		out := filepath.Join(r.dir, "fetched.arrow")
		r.ok("--crawl", crawl, "readdb", "dump", "--format", "arrow", "--status", "2", "--output", out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		checkArrowRows(t, "--status 2", data, fetched, dbStatus)
		if len(h2) < 3 {
			t.Fatalf("only %d rows of h0002", len(h2))
		}
		res = r.ok("--crawl", crawl, "readdb", "dump", "--format", "arrow", "--regex", re.String(), "--limit", "3")
		checkArrowRows(t, "--regex --limit 3", []byte(res.stdout), h2[:3], dbStatus)
	})

	segs, err := filepath.Glob(filepath.Join(crawl, "segments", "2*"))
	if err != nil || len(segs) != 2 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	seg := segs[0]

	t.Run("readseg dump arrow", func(t *testing.T) {
		fetch := parquetRows[segment.Fetch](t, filepath.Join(seg, segment.DirFetch))
		res := r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--format", "arrow")
		checkArrowRows(t, "crawl_fetch", []byte(res.stdout), fetch, func(f *segment.Fetch) crawldb.Status { return f.Status })
		if md := arrowTable(t, []byte(res.stdout)).Schema().Metadata(); md.FindKey("trawl.dir") < 0 ||
			md.Values()[md.FindKey("trawl.dir")] != "crawl_fetch" {
			t.Errorf("schema metadata %v", md)
		}

		parse := parquetRows[segment.ParseUpdate](t, filepath.Join(seg, segment.DirCrawlParse))
		res = r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_parse", "--format", "arrow")
		pstatus := func(u *segment.ParseUpdate) crawldb.Status { return u.Status }
		checkArrowRows(t, "crawl_parse", []byte(res.stdout), parse, pstatus)
		names := statusNameColumn(t, arrowTable(t, []byte(res.stdout)))
		if !slices.Contains(names, "signature") {
			t.Errorf("crawl_parse status names %v", names)
		}

		// A parsed page's row carries its links.
		var withLinks []segment.ParseUpdate
		for _, u := range parse {
			if u.Status == crawldb.StatusSignature && len(u.Links) > 0 {
				withLinks = append(withLinks, u)
			}
		}
		if len(withLinks) < 5 {
			t.Fatalf("%d crawl_parse rows with links", len(withLinks))
		}
		res = r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_parse", "--format", "arrow", "--status", "signature", "--limit", "5")
		checkArrowRows(t, "crawl_parse --status signature --limit 5", []byte(res.stdout), parse[:5], pstatus)

		pd := parquetRows[segment.ParseData](t, filepath.Join(seg, segment.DirParseData))
		res = r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "parse_data", "--format", "arrow")
		if err := crawldbtest.DiffArrow(pd, arrowTable(t, []byte(res.stdout))); err != nil {
			t.Errorf("parse_data: %v", err)
		}

		res = r.fails(exitUsage, "--crawl", crawl, "readseg", "dump", seg, "--format", "arrow")
		assertCleanError(t, res, "give one --dir")
	})

	t.Run("status names and numbers", func(t *testing.T) {
		// JSON dumps: name and number; --status by name and by number
		// select the same rows.
		byName := r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--status", "fetch_success").stdout
		byNumber := r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--status", "33").stdout
		if byName != byNumber || byName == "" {
			t.Errorf("--status fetch_success and --status 33 differ (or are empty)")
		}
		for _, line := range strings.Split(strings.TrimSpace(byName), "\n") {
			if !strings.Contains(line, `"status":"fetch_success","status_code":33,`) {
				t.Fatalf("crawl_fetch line: %s", line)
			}
		}
		sig := r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_parse", "--status", "signature", "--limit", "1").stdout
		if !strings.Contains(sig, `"status":"signature","status_code":65,`) || !strings.Contains(sig, `"links":[{"url":"http`) {
			t.Errorf("crawl_parse line: %s", sig)
		}
		fetchJSON := r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--limit", "1").stdout
		var m map[string]any
		if err := json.Unmarshal([]byte(fetchJSON), &m); err != nil {
			t.Fatal(err)
		}
		nested := m["datum"].(map[string]any)
		if st, err := crawldb.ParseStatus(m["status"].(string)); err != nil || float64(st) != m["status_code"] ||
			nested["status"] != "db_unfetched" || nested["status_code"] != float64(1) {
			t.Errorf("crawl_fetch record: %s", fetchJSON)
		}
		for name, n := range map[string]string{"db_fetched": "2", "DB_UNFETCHED": "1"} {
			a := r.ok("--crawl", crawl, "readdb", "dump", "--format", "json", "--status", name).stdout
			b := r.ok("--crawl", crawl, "readdb", "dump", "--format", "json", "--status", n).stdout
			st, _ := crawldb.ParseStatus(name)
			if a != b || strings.Count(a, "\n") != byStatus[st] {
				t.Errorf("--status %s and %s: %d and %d rows, want %d", name, n, strings.Count(a, "\n"), strings.Count(b, "\n"), byStatus[st])
			}
			want := fmt.Sprintf(`"status":%q,"status_code":%d,`, st.String(), st)
			if strings.Count(a, want) != byStatus[st] {
				t.Errorf("readdb dump json lacks %s on every line", want)
			}
		}
		res := r.fails(exitUsage, "--crawl", crawl, "readdb", "dump", "--status", "fetched")
		assertCleanError(t, res, `"fetched"`, "db_unfetched (1)", "db_fetched (2)", "linked (67)")
		res = r.fails(exitUsage, "--crawl", crawl, "readseg", "dump", seg, "--status", "99")
		assertCleanError(t, res, `"99"`, "fetch_success (33)")
		res = r.fails(exitUsage, "--crawl", crawl, "readdb", "dump", "--status", "fetch_success")
		assertCleanError(t, res, "db_*")
		res = r.fails(exitUsage, "--crawl", crawl, "readseg", "dump", seg, "--dir", "content", "--status", "33")
		assertCleanError(t, res, "content records have no status")

		help := r.ok("readdb", "--help").stdout
		for _, i := range crawldb.Statuses() {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^\s+%d  %s\s+%s$`, i.Status, i.Name, regexp.QuoteMeta(i.Meaning))).MatchString(help) {
				t.Errorf("readdb --help does not document %d %s", i.Status, i.Name)
			}
		}
		if h := r.ok("readseg", "dump", "--help").stdout; !strings.Contains(h, "67  linked") || !strings.Contains(h, "--format arrow") {
			t.Errorf("readseg dump --help:\n%s", h)
		}
		if h := r.ok("readdb", "dump", "--help").stdout; !strings.Contains(h, "pyarrow.ipc.open_stream") ||
			!strings.Contains(h, "polars.read_ipc_stream") || !strings.Contains(h, "read_arrow(") {
			t.Errorf("readdb dump --help does not say how to read the Arrow stream:\n%s", h)
		}
	})

	t.Run("stats sort", func(t *testing.T) {
		want := map[string]map[string]int{} // status line → host → count
		for _, d := range db {
			line := fmt.Sprintf("status %d (%s):", d.Status, d.Status)
			if want[line] == nil {
				want[line] = map[string]int{}
			}
			want[line][d.Host]++
		}
		out := r.ok("--crawl", crawl, "readdb", "stats", "--sort").stdout
		got := map[string]map[string]int{}
		var order = map[string][]string{}
		cur := ""
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "status "):
				cur, _, _ = strings.Cut(line, "\t")
				got[cur] = map[string]int{}
			case strings.HasPrefix(line, "   ") && cur != "":
				host, n, ok := strings.Cut(strings.TrimSpace(line), " :\t")
				c, err := strconv.Atoi(n)
				if !ok || err != nil {
					t.Fatalf("host line %q", line)
				}
				got[cur][host] = c
				order[cur] = append(order[cur], host)
			default:
				cur = ""
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stats --sort per-host counts\n%v\nwant (from the Parquet rows)\n%v\n%s", got, want, out)
		}
		multi := false
		for line, hosts := range order {
			if !sort.StringsAreSorted(hosts) {
				t.Errorf("%s hosts not in name order: %v", line, hosts)
			}
			multi = multi || len(hosts) > 2
		}
		if !multi {
			t.Errorf("no status has more than two hosts; the order check is weak:\n%s", out)
		}
		var rep crawldb.StatsReport
		if err := json.Unmarshal([]byte(r.ok("--crawl", crawl, "readdb", "stats", "--sort", "--json").stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if !sort.SliceIsSorted(rep.PerHost, func(i, j int) bool { return rep.PerHost[i].Host < rep.PerHost[j].Host }) || len(rep.PerHost) < 3 {
			t.Errorf("stats --sort --json per_host: %v", rep.PerHost)
		}
	})

	t.Run("apache-arrow JavaScript reader", func(t *testing.T) {
		js := installArrowJS(t)
		dbFile := filepath.Join(r.dir, "db.arrow")
		r.ok("--crawl", crawl, "readdb", "dump", "--format", "arrow", "--output", dbFile)
		fetchFile := filepath.Join(r.dir, "fetch.arrow")
		r.ok("--crawl", crawl, "readseg", "dump", seg, "--dir", "crawl_fetch", "--format", "arrow", "--output", fetchFile)
		out := runNode(t, js, dbFile, fetchFile)
		var got struct {
			Rows     int            `json:"rows"`
			Batches  int            `json:"batches"`
			Status   map[string]int `json:"status"`
			Codes    map[string]int `json:"codes"`
			URLs     []string       `json:"urls"`
			Fetch    int            `json:"fetch"`
			Nested   map[string]int `json:"nested"`
			NameType string         `json:"nameType"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("node output %q: %v", out, err)
		}
		wantStatus, wantCodes := map[string]int{}, map[string]int{}
		var urls []string
		for _, d := range db {
			wantStatus[d.Status.String()]++
			wantCodes[d.Status.String()+"="+strconv.Itoa(int(d.Status))]++
			urls = append(urls, d.URL)
		}
		if got.Rows != len(db) || fmt.Sprint(got.Status) != fmt.Sprint(wantStatus) || fmt.Sprint(got.Codes) != fmt.Sprint(wantCodes) ||
			!slices.Equal(got.URLs, urls) || !strings.HasPrefix(got.NameType, "Dictionary<") {
			t.Errorf("apache-arrow read %d rows, status %v, codes %v, name type %s; want %d, %v, %v",
				got.Rows, got.Status, got.Codes, got.NameType, len(db), wantStatus, wantCodes)
		}
		fetch := parquetRows[segment.Fetch](t, filepath.Join(seg, segment.DirFetch))
		nested := map[string]int{}
		for _, f := range fetch {
			nested[f.Status.String()+"/"+f.Datum.Status.String()]++
		}
		if got.Fetch != len(fetch) || fmt.Sprint(got.Nested) != fmt.Sprint(nested) {
			t.Errorf("apache-arrow read crawl_fetch: %d rows, %v; want %d, %v", got.Fetch, got.Nested, len(fetch), nested)
		}
	})
}

// arrowJSVersion is the apache-arrow npm package the test reads with.
const arrowJSVersion = "21.2.0"

// installArrowJS installs the apache-arrow JavaScript package into a
// temporary directory and returns it; the test skips without node and npm
// or when the package cannot be installed.
func installArrowJS(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: no independent Arrow reader", tool)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefer-offline", "apache-arrow@"+arrowJSVersion)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm install apache-arrow: %v\n%s", err, out)
	}
	script := `import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
const [dbFile, fetchFile] = process.argv.slice(2);
const db = tableFromIPC(readFileSync(dbFile));
const out = { rows: db.numRows, batches: db.batches.length, status: {}, codes: {}, urls: [], fetch: 0, nested: {},
  nameType: String(db.schema.fields.find(f => f.name === 'status_name').type) };
for (const row of db) {
  out.status[row.status_name] = (out.status[row.status_name] ?? 0) + 1;
  const k = row.status_name + '=' + row.status;
  out.codes[k] = (out.codes[k] ?? 0) + 1;
  out.urls.push(row.url);
}
const fetch = tableFromIPC(readFileSync(fetchFile));
out.fetch = fetch.numRows;
for (const row of fetch) {
  const k = row.status_name + '/' + row.datum.status_name;
  out.nested[k] = (out.nested[k] ?? 0) + 1;
}
console.log(JSON.stringify(out));
`
	writeTestFile(t, filepath.Join(dir, "read.mjs"), script)
	return dir
}

// runNode runs the reader script installed in dir on files.
func runNode(t *testing.T, dir string, files ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"read.mjs"}, files...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read.mjs: %v\n%s", err, stderr.String())
	}
	return string(out)
}
