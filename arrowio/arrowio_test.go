package arrowio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/trawl/trawl/arrowio"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

func statusOptions(o arrowio.Options) arrowio.Options {
	o.Enums = append(o.Enums, crawldb.StatusEnum())
	return o
}

// writeStream writes rows as an Arrow stream and returns it.
func writeStream[T any](t *testing.T, rows []T, o arrowio.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := arrowio.NewWriter[T](&buf, statusOptions(o))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Rows() != int64(len(rows)) {
		t.Errorf("Rows() = %d, want %d", w.Rows(), len(rows))
	}
	return buf.Bytes()
}

// readStream reads an Arrow stream with Arrow's own IPC reader and returns
// its table and the row count of each batch.
func readStream(t *testing.T, data []byte) (arrow.Table, []int64) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var recs []arrow.Record
	var sizes []int64
	for r.Next() {
		rec := r.Record()
		rec.Retain()
		recs = append(recs, rec)
		sizes = append(sizes, rec.NumRows())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	for _, rec := range recs {
		rec.Release()
	}
	t.Cleanup(tbl.Release)
	return tbl, sizes
}

// statusNames returns the values of a status_name column.
func statusNames(t *testing.T, col arrow.Array) []string {
	t.Helper()
	d, ok := col.(*array.Dictionary)
	if !ok {
		t.Fatalf("status_name is %s, not a dictionary", col.DataType())
	}
	dict := d.Dictionary().(*array.String)
	out := make([]string, d.Len())
	for i := range out {
		if d.IsNull(i) {
			out[i] = "<null>"
			continue
		}
		out[i] = dict.Value(d.GetValueIndex(i))
	}
	return out
}

// column concatenates a table column's chunks.
func column(t *testing.T, tbl arrow.Table, name string) arrow.Array {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %q in %v", name, tbl.Schema())
	}
	a, err := array.Concatenate(tbl.Column(idx[0]).Data().Chunks(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	return a
}

// TestDatumRoundTrip writes CrawlDB rows in batches of 1000 and reads
// them back with Arrow's reader: every value as the row has it, the
// status's name beside its number, batches of the bounded size.
func TestDatumRoundTrip(t *testing.T) {
	rows := crawldbtest.SampleDatums(4500, 7)
	data := writeStream(t, rows, arrowio.Options{BatchRows: 1000})
	tbl, sizes := readStream(t, data)
	if fmt.Sprint(sizes) != "[1000 1000 1000 1000 500]" {
		t.Errorf("batch sizes %v", sizes)
	}
	if err := crawldbtest.DiffArrow(rows, tbl); err != nil {
		t.Error(err)
	}
	names := statusNames(t, column(t, tbl, "status_name"))
	for i, d := range rows {
		if names[i] != d.Status.String() {
			t.Fatalf("row %d: status_name %q, status %v", i, names[i], d.Status)
		}
	}
	f := tbl.Schema().Field(tbl.Schema().FieldIndices("status_name")[0])
	if idx := tbl.Schema().FieldIndices("status")[0]; tbl.Schema().Field(idx+1).Name != "status_name" {
		t.Errorf("status_name does not follow status: %v", tbl.Schema())
	}
	if dt := f.Type.(*arrow.DictionaryType); dt.ValueType.ID() != arrow.STRING {
		t.Errorf("status_name type %v", f.Type)
	}
}

// TestDictionaryOnce: the status names' dictionary is written once, not
// once per batch.
func TestDictionaryOnce(t *testing.T) {
	rows := crawldbtest.SampleDatums(3000, 3)
	data := writeStream(t, rows, arrowio.Options{BatchRows: 100})
	mr := ipc.NewMessageReader(bytes.NewReader(data))
	defer mr.Release()
	count := map[ipc.MessageType]int{}
	for {
		m, err := mr.Message()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		count[m.Type()]++
	}
	if count[ipc.MessageSchema] != 1 || count[ipc.MessageDictionaryBatch] != 1 || count[ipc.MessageRecordBatch] != 30 {
		t.Errorf("messages: %v", count)
	}
}

// TestSegmentRoundTrip writes each segment record type and compares with
// the rows, nested statuses included.
func TestSegmentRoundTrip(t *testing.T) {
	ds := crawldbtest.SampleDatums(50, 11)
	at := time.Date(2026, 11, 21, 10, 30, 0, 123e6, time.UTC)
	var fetches []segment.Fetch
	var updates []segment.ParseUpdate
	var data []segment.ParseData
	var contents []segment.Content
	for i, d := range ds {
		st := []crawldb.Status{crawldb.StatusFetchSuccess, crawldb.StatusFetchGone, crawldb.StatusFetchRobotsDenied}[i%3]
		fetches = append(fetches, segment.Fetch{URL: d.URL, Status: st, FetchTime: at, HTTPStatus: 200, Message: "m", Datum: d})
		updates = append(updates, segment.ParseUpdate{URL: d.URL, Status: []crawldb.Status{crawldb.StatusSignature, crawldb.StatusLinked}[i%2],
			FromURL: "http://from/", Score: 0.5, Signature: d.Signature, Features: d.Features})
		data = append(data, segment.ParseData{URL: d.URL, Success: i%2 == 0, Title: "t",
			Outlinks: []segment.Outlink{{URL: "http://a/", Anchor: "a"}, {URL: "http://b/"}}[:i%3], Meta: d.Metadata})
		contents = append(contents, segment.Content{URL: d.URL, Body: []byte(strings.Repeat("x", i)), Headers: map[string]string{"A": "b"}})
	}
	t.Run("fetch", func(t *testing.T) {
		tbl, _ := readStream(t, writeStream(t, fetches, arrowio.Options{}))
		if err := crawldbtest.DiffArrow(fetches, tbl); err != nil {
			t.Error(err)
		}
		names := statusNames(t, column(t, tbl, "status_name"))
		nested := column(t, tbl, "datum").(*array.Struct)
		st := nested.DataType().(*arrow.StructType)
		j, ok := st.FieldIdx("status_name")
		if !ok {
			t.Fatalf("datum has no status_name: %v", st)
		}
		inner := statusNames(t, nested.Field(j))
		for i, f := range fetches {
			if names[i] != f.Status.String() || inner[i] != f.Datum.Status.String() {
				t.Fatalf("row %d: names %q %q, want %v %v", i, names[i], inner[i], f.Status, f.Datum.Status)
			}
		}
	})
	t.Run("crawl_parse", func(t *testing.T) {
		tbl, _ := readStream(t, writeStream(t, updates, arrowio.Options{}))
		if err := crawldbtest.DiffArrow(updates, tbl); err != nil {
			t.Error(err)
		}
		if names := statusNames(t, column(t, tbl, "status_name")); names[0] != "signature" || names[1] != "linked" {
			t.Errorf("names %v", names[:2])
		}
	})
	t.Run("parse_data", func(t *testing.T) {
		tbl, _ := readStream(t, writeStream(t, data, arrowio.Options{}))
		if err := crawldbtest.DiffArrow(data, tbl); err != nil {
			t.Error(err)
		}
	})
	t.Run("content", func(t *testing.T) {
		tbl, _ := readStream(t, writeStream(t, contents, arrowio.Options{}))
		if err := crawldbtest.DiffArrow(contents, tbl); err != nil {
			t.Error(err)
		}
	})
}

// shape describes a type for comparing schemas: names and types, not
// nullability nor the names of list elements; dictionary (status name)
// fields are left out.
func shape(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.StructType:
		var parts []string
		for _, f := range t.Fields() {
			if f.Type.ID() == arrow.DICTIONARY {
				continue
			}
			parts = append(parts, f.Name+":"+shape(f.Type))
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case *arrow.ListType:
		return "list<" + shape(t.Elem()) + ">"
	case *arrow.MapType:
		return "map<" + shape(t.KeyType()) + "," + shape(t.ItemType()) + ">"
	}
	return dt.String()
}

// schemaShape is shape over a schema's fields.
func schemaShape(s *arrow.Schema) string { return shape(arrow.StructOf(s.Fields()...)) }

// checkMirrors writes rows as Parquet with parquetio, as the jobs do, and
// checks the Arrow stream's schema is the one Arrow's Parquet reader gives
// for the file, plus the status names.
func checkMirrors[T any](t *testing.T, rows []T) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "part-00000.parquet")
	if err := parquetio.WriteFile(storage.NewLocal(), path, rows); err != nil {
		t.Fatal(err)
	}
	pq, err := crawldbtest.ReadArrow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pq.Release()
	w, err := arrowio.NewWriter[T](io.Discard, statusOptions(arrowio.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, want := schemaShape(w.Schema()), schemaShape(pq.Schema()); got != want {
		t.Errorf("%v: arrow stream schema\n%s\nParquet file read by Arrow\n%s", reflect.TypeFor[T](), got, want)
	}
}

func TestSchemaMirrorsParquet(t *testing.T) {
	ds := crawldbtest.SampleDatums(3, 1)
	checkMirrors(t, ds)
	checkMirrors(t, []segment.Fetch{{URL: "u", Datum: ds[0]}})
	checkMirrors(t, []segment.Content{{URL: "u", Body: []byte("b")}})
	checkMirrors(t, []segment.ParseData{{URL: "u", Outlinks: []segment.Outlink{{URL: "v"}}}})
	checkMirrors(t, []segment.ParseText{{URL: "u", Text: "t"}})
	checkMirrors(t, []segment.ParseUpdate{{URL: "u", Status: crawldb.StatusLinked}})
}

// TestEmptyAndUnknown: a stream of no rows still has its schema; a status
// with no name has a null name and keeps its number.
func TestEmptyAndUnknown(t *testing.T) {
	tbl, sizes := readStream(t, writeStream[crawldb.Datum](t, nil, arrowio.Options{}))
	if len(sizes) != 0 || tbl.NumRows() != 0 || len(tbl.Schema().FieldIndices("status_name")) != 1 {
		t.Errorf("empty stream: %d batches, %d rows, schema %v", len(sizes), tbl.NumRows(), tbl.Schema())
	}
	rows := []crawldb.Datum{{URL: "a", Status: 0x99}, {URL: "b", Status: crawldb.StatusDBGone}}
	tbl, _ = readStream(t, writeStream(t, rows, arrowio.Options{}))
	if names := statusNames(t, column(t, tbl, "status_name")); fmt.Sprint(names) != "[<null> db_gone]" {
		t.Errorf("names %v", names)
	}
	if st := column(t, tbl, "status").(*array.Uint8); st.Value(0) != 0x99 {
		t.Errorf("status %d", st.Value(0))
	}
}

// TestBatchBytes: large values close a batch before it has BatchRows rows.
func TestBatchBytes(t *testing.T) {
	var rows []segment.Content
	for i := range 20 {
		rows = append(rows, segment.Content{URL: fmt.Sprint(i), Body: bytes.Repeat([]byte{byte(i)}, 1<<20)})
	}
	tbl, sizes := readStream(t, writeStream(t, rows, arrowio.Options{BatchBytes: 4 << 20}))
	for _, n := range sizes {
		if n > 4 {
			t.Errorf("a batch of %d rows of 1 MiB with a 4 MiB bound (sizes %v)", n, sizes)
		}
	}
	if tbl.NumRows() != 20 {
		t.Errorf("%d rows", tbl.NumRows())
	}
	if err := crawldbtest.DiffArrow(rows, tbl); err != nil {
		t.Error(err)
	}
}

func TestBadTypes(t *testing.T) {
	type withChan struct{ C chan int }
	if _, err := arrowio.NewWriter[withChan](io.Discard, arrowio.Options{}); err == nil || !strings.Contains(err.Error(), "withChan.C") {
		t.Errorf("chan field: %v", err)
	}
	if _, err := arrowio.NewWriter[int](io.Discard, arrowio.Options{}); err == nil {
		t.Error("int rows: no error")
	}
	dup := arrowio.Enum{Type: reflect.TypeFor[crawldb.Status](), Names: map[uint64]string{1: "a", 2: "a"}}
	if _, err := arrowio.NewWriter[crawldb.Datum](io.Discard, arrowio.Options{Enums: []arrowio.Enum{dup}}); err == nil {
		t.Error("an enum naming two values alike: no error")
	}
}
