package crawldb_test

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// writeDB writes datums as an installed CrawlDB of nparts hash-partitioned
// parts, each sorted by URL, in row groups of rowGroup rows. It returns the
// CrawlDB directory.
func writeDB(t testing.TB, datums []crawldb.Datum, nparts int, rowGroup int64) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "crawldb")
	parts := make([][]crawldb.Datum, nparts)
	for _, d := range datums {
		h := fnv.New32a()
		h.Write([]byte(d.URL))
		p := int(h.Sum32() % uint32(nparts))
		parts[p] = append(parts[p], d)
	}
	fsys := storage.NewLocal()
	for i, p := range parts {
		sort.Slice(p, func(a, b int) bool { return p[a].URL < p[b].URL })
		name := filepath.Join(crawldb.Current(db), "part-r-0000"+string(rune('0'+i))+".parquet")
		if err := parquetio.WriteFile(fsys, name, p, parquetio.RowGroupRows(rowGroup)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(crawldb.Current(db), "_SUCCESS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

func collect(t testing.TB, rows func(yield func(crawldb.Datum, error) bool)) []crawldb.Datum {
	t.Helper()
	var out []crawldb.Datum
	for d, err := range rows {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestReaderAllAndSorted(t *testing.T) {
	want := crawldbtest.SampleDatums(1000, 7) // in URL order
	db := writeDB(t, want, 4, 37)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Parts()) != 4 {
		t.Fatalf("parts %v (the _SUCCESS file must be skipped)", r.Parts())
	}
	ctx := context.Background()

	sorted := collect(t, r.Sorted(ctx))
	if err := crawldbtest.DiffRows(want, sorted); err != nil {
		t.Errorf("Sorted: %v", err)
	}

	all := collect(t, r.All(ctx))
	if len(all) != len(want) {
		t.Fatalf("All: %d rows, want %d", len(all), len(want))
	}
	if slices.IsSortedFunc(all, func(a, b crawldb.Datum) int { return strings.Compare(a.URL, b.URL) }) {
		t.Error("All is globally sorted: the test's parts are not hash partitions")
	}
	sort.Slice(all, func(a, b int) bool { return all[a].URL < all[b].URL })
	if err := crawldbtest.DiffRows(want, all); err != nil {
		t.Errorf("All: %v", err)
	}

	// Top reads the parts in parallel and agrees with Top over all rows.
	for _, par := range []int{0, 1, 3, 8} {
		got, err := r.Top(ctx, par, 25)
		if err != nil {
			t.Fatal(err)
		}
		want, err := crawldb.Top(ctx, r.All(ctx), 25)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || len(got) != 25 {
			t.Errorf("Top(parallel %d): %d URLs, want %d the same", par, len(got), len(want))
		}
	}

	// Stopping early is fine.
	n := 0
	for range r.Sorted(ctx) {
		if n++; n == 10 {
			break
		}
	}
}

func TestReaderGet(t *testing.T) {
	want := crawldbtest.SampleDatums(500, 8)
	db := writeDB(t, want, 3, 20)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < len(want); i += 23 {
		d, ok, err := r.Get(ctx, want[i].URL)
		if err != nil || !ok {
			t.Fatalf("Get(%s): %v %v", want[i].URL, ok, err)
		}
		if err := crawldbtest.DiffRows(want[i:i+1], []crawldb.Datum{d}); err != nil {
			t.Errorf("Get(%s): %v", want[i].URL, err)
		}
	}
	for _, missing := range []string{"", "a", want[0].URL + "0", "zzzz", want[len(want)-1].URL + "/"} {
		if _, ok, err := r.Get(ctx, missing); ok || err != nil {
			t.Errorf("Get(%q) = %v, %v; want not found", missing, ok, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	fsys := storage.NewLocal()
	dir := t.TempDir()
	if _, err := crawldb.Open(fsys, filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "not a CrawlDB") {
		t.Errorf("missing CrawlDB: %v", err)
	}

	// An interrupted install: only old exists; it is read.
	want := crawldbtest.SampleDatums(50, 9)
	db := writeDB(t, want, 2, 100)
	if err := os.Rename(crawldb.Current(db), crawldb.Old(db)); err != nil {
		t.Fatal(err)
	}
	r, err := crawldb.Open(fsys, db)
	if err != nil {
		t.Fatalf("old only: %v", err)
	}
	if r.Dir() != crawldb.Old(db) || len(collect(t, r.Sorted(context.Background()))) != 50 {
		t.Errorf("old only: dir %s", r.Dir())
	}
}

func TestReaderCorruptPart(t *testing.T) {
	want := crawldbtest.SampleDatums(200, 10)
	db := writeDB(t, want, 2, 50)
	good := filepath.Join(crawldb.Current(db), "part-r-00000.parquet")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"garbage":   []byte("this is not parquet at all, not even close......"),
		"truncated": data[:len(data)/2],
		"bitflip": func() []byte {
			b := slices.Clone(data)
			for i := 8; i < len(b)/2; i += 97 {
				b[i] ^= 0x5a
			}
			return b
		}(),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(crawldb.Current(db), "part-r-00009.parquet")
			if err := os.WriteFile(bad, content, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(bad)
			r, err := crawldb.Open(storage.NewLocal(), db)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			for _, err := range r.All(context.Background()) {
				if err != nil {
					got = err
					break
				}
			}
			if got == nil || !strings.Contains(got.Error(), "part-r-00009.parquet") {
				t.Errorf("All over a %s part: %v", name, got)
			}
			// Get reads only the footer and the row groups that may hold
			// the URL: it fails on a bad footer, and never panics.
			_, _, err = r.Get(context.Background(), "http://zzz/")
			if name != "bitflip" && (err == nil || !strings.Contains(err.Error(), "part-r-00009.parquet")) {
				t.Errorf("Get over a %s part: %v", name, err)
			}
			if _, err := r.Stats(context.Background(), 2, false); err == nil {
				t.Errorf("Stats over a %s part: no error", name)
			}
		})
	}
}

func TestSortedDetectsUnsortedPart(t *testing.T) {
	fsys := storage.NewLocal()
	db := filepath.Join(t.TempDir(), "crawldb")
	rows := []crawldb.Datum{{URL: "http://b/"}, {URL: "http://a/"}}
	if err := parquetio.WriteFile(fsys, filepath.Join(crawldb.Current(db), "part-r-00000.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	r, err := crawldb.Open(fsys, db)
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range r.Sorted(context.Background()) {
		if err != nil {
			got = err
		}
	}
	if got == nil || !strings.Contains(got.Error(), "not sorted") || !strings.Contains(got.Error(), "part-r-00000.parquet") {
		t.Errorf("unsorted part: %v", got)
	}
}

func TestReaderContextCanceled(t *testing.T) {
	db := writeDB(t, crawldbtest.SampleDatums(3000, 11), 1, 500)
	r, err := crawldb.Open(storage.NewLocal(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got error
	for _, err := range r.All(ctx) {
		if err != nil {
			got = err
		}
	}
	if !errors.Is(got, context.Canceled) {
		t.Errorf("canceled All: %v", got)
	}
	if _, err := r.Stats(ctx, 2, false); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Stats: %v", err)
	}
}
