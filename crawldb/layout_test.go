package crawldb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
)

// TestDatumParquetLayout writes varied datums with parquet-go and reads
// them back with parquet-go and with Arrow's reader, column by column.
func TestDatumParquetLayout(t *testing.T) {
	rows := crawldbtest.SampleDatums(300, 1)
	// Small row groups so the readers cross row-group boundaries.
	crawldbtest.RoundTrip(t, rows, parquet.MaxRowsPerRowGroup(64))
}

// TestDatumArrowColumns checks, without the generic comparator, the Arrow
// types and a few values that other tools (DuckDB, pyarrow) depend on.
func TestDatumArrowColumns(t *testing.T) {
	ft := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	rows := []crawldb.Datum{
		{URL: "http://a.example/", Status: crawldb.StatusDBFetched, FetchTime: ft,
			History:  []crawldb.Observation{{Time: ft.Add(-time.Hour), Changed: true}, {Time: ft, Changed: false}},
			Metadata: map[string]string{"k": "v"}, Features: crawldb.Features{Words: 7, Bytes: 1 << 40}},
		{URL: "http://b.example/"}, // all zero: times must be null, not year 1
	}
	path := crawldbtest.RoundTrip(t, rows)
	tbl, err := crawldbtest.ReadArrow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	col := func(name string) arrow.Array {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s", name)
		}
		return tbl.Column(idx[0]).Data().Chunk(0)
	}
	if got := col("url").(*array.String).Value(1); got != "http://b.example/" {
		t.Errorf("url[1] = %q", got)
	}
	if got := col("status").(*array.Uint8).Value(0); got != 2 {
		t.Errorf("status[0] = %d, want 2 (db_fetched)", got)
	}
	fetch := col("fetch_time").(*array.Timestamp)
	if tt := fetch.DataType().(*arrow.TimestampType); tt.Unit != arrow.Millisecond || tt.TimeZone != "UTC" {
		t.Errorf("fetch_time type %v, want timestamp[ms, tz=UTC]", tt)
	}
	if got := int64(fetch.Value(0)); got != ft.UnixMilli() {
		t.Errorf("fetch_time[0] = %d, want %d", got, ft.UnixMilli())
	}
	for _, name := range []string{"fetch_time", "prev_fetch_time", "modified_time", "generate_time"} {
		if !col(name).IsNull(1) {
			t.Errorf("%s of a never-fetched datum is not null", name)
		}
	}
	hist := col("history").(*array.List)
	if s, e := hist.ValueOffsets(0); e-s != 2 {
		t.Errorf("history[0] has %d entries, want 2", e-s)
	}
	changed := hist.ListValues().(*array.Struct)
	if !strings.Contains(changed.DataType().String(), "changed: bool") {
		t.Errorf("history element type %v", changed.DataType())
	}
	md := col("metadata").(*array.Map)
	if md.Keys().(*array.String).Value(0) != "k" || md.Items().(*array.String).Value(0) != "v" {
		t.Errorf("metadata = %v", md)
	}
	feat := col("features").(*array.Struct)
	if got := feat.Field(5).(*array.Int64).Value(0); got != 1<<40 {
		t.Errorf("features.bytes = %d", got)
	}
}

// TestDiffArrowDetectsDifferences proves the comparator can fail.
func TestDiffArrowDetectsDifferences(t *testing.T) {
	rows := crawldbtest.SampleDatums(20, 2)
	path := t.TempDir() + "/d.parquet"
	if err := crawldbtest.WriteParquet(path, rows); err != nil {
		t.Fatal(err)
	}
	tbl, err := crawldbtest.ReadArrow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	mutations := map[string]func(d *crawldb.Datum){
		"url":      func(d *crawldb.Datum) { d.URL += "x" },
		"time":     func(d *crawldb.Datum) { d.FetchTime = d.FetchTime.Add(time.Millisecond) },
		"zerotime": func(d *crawldb.Datum) { d.PrevFetchTime = time.Time{} },
		"history":  func(d *crawldb.Datum) { d.History = append(d.History, crawldb.Observation{Time: time.Now()}) },
		"changed":  func(d *crawldb.Datum) { d.History[0].Changed = !d.History[0].Changed },
		"metadata": func(d *crawldb.Datum) { d.Metadata["k"] = "w" },
		"features": func(d *crawldb.Datum) { d.Features.Depth++ },
		"sig":      func(d *crawldb.Datum) { d.Signature = nil },
	}
	for name, mutate := range mutations {
		cp := append([]crawldb.Datum(nil), rows...)
		// Row 0 is fully populated with a non-empty history.
		i := 0
		for len(cp[i].History) == 0 || cp[i].Metadata == nil {
			i++
		}
		d := cp[i]
		d.History = append([]crawldb.Observation(nil), d.History...)
		d.Metadata = map[string]string{}
		for k, v := range rows[i].Metadata {
			d.Metadata[k] = v
		}
		mutate(&d)
		cp[i] = d
		if err := crawldbtest.DiffArrow(cp, tbl); err == nil {
			t.Errorf("%s: DiffArrow found no difference", name)
		}
		if err := crawldbtest.DiffRows(rows, cp); err == nil {
			t.Errorf("%s: DiffRows found no difference", name)
		}
	}
}
