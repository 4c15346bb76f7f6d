package crawldb_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// TestObservationLastModified writes observations with and without a
// Last-Modified date and reads them back, and reads a CrawlDB row written
// before the modified column existed as "none sent".
func TestObservationLastModified(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lm := t0.Add(-90 * time.Minute)
	var first crawldb.Datum
	first.ObserveFirst(t0.Add(-24*time.Hour), lm)
	first.Observe(t0, false, time.Time{})
	if len(first.History) != 2 || !first.History[0].Initial || first.History[0].Changed || first.ChangeCount != 0 ||
		len(first.ChangeHistory()) != 1 || first.ChangeHistory()[0].Initial {
		t.Fatalf("first fetch then an unchanged one: history %+v, change history %+v", first.History, first.ChangeHistory())
	}
	var d crawldb.Datum
	d.URL = "http://a.test/"
	d.Observe(t0, true, lm)
	if len(d.ChangeHistory()) != 1 {
		t.Fatalf("a history without an initial observation: change history %+v", d.ChangeHistory())
	}
	d.Observe(t0.Add(24*time.Hour), false, time.Time{})
	if got, ok := d.History[0].LastModified(); !ok || !got.Equal(lm) {
		t.Fatalf("first observation's Last-Modified = %v, %v; want %v", got, ok, lm)
	}
	if _, ok := d.History[1].LastModified(); ok {
		t.Fatal("second observation has a Last-Modified; none was sent")
	}
	fsys := storage.NewLocal()
	dir := t.TempDir()
	name := filepath.Join(dir, "new.parquet")
	if err := parquetio.WriteFile(fsys, name, []crawldb.Datum{d}); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[crawldb.Datum](fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rows[0].History[0].LastModified(); !ok || !got.Equal(lm) || len(rows[0].History) != 2 {
		t.Fatalf("read back %+v: want the Last-Modified %v on the first of two observations", rows[0].History, lm)
	}

	type oldObservation struct {
		Time    time.Time `parquet:"time,timestamp(millisecond)"`
		Changed bool      `parquet:"changed"`
	}
	type oldRow struct {
		URL     string           `parquet:"url"`
		History []oldObservation `parquet:"history,list"`
	}
	old := filepath.Join(dir, "old.parquet")
	if err := parquetio.WriteFile(fsys, old, []oldRow{{URL: "http://a.test/", History: []oldObservation{{t0, true}, {t0.Add(time.Hour), false}}}}); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(old)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parquetio.Open[crawldb.Datum](f, old, parquetio.AllowMissingColumns())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(row.History) != 2 || !row.History[0].Time.Equal(t0) || !row.History[0].Changed {
			t.Fatalf("old row's history read as %+v", row.History)
		}
		for _, o := range row.History {
			if _, ok := o.LastModified(); ok {
				t.Fatalf("old row's observation %+v has a Last-Modified", o)
			}
		}
	}
	if n != 1 {
		t.Fatalf("read %d old rows, want 1", n)
	}
}
