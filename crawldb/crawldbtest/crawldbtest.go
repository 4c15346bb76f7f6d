// Package crawldbtest holds test helpers for code that stores crawl records
// in Parquet: varied sample CrawlDB datums, and a round-trip check that
// writes records with parquet-go and reads them back both with parquet-go
// and with Apache Arrow's independent Parquet reader, comparing every
// column. It exists so that the crawldb, segment and job tests share one
// definition of "this record type is readable by other Parquet tools".
package crawldbtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/crawldb"
)

// SampleDatums returns n varied datums with distinct URLs in URL order,
// deterministically from seed. Every fourth has zero (never) times, nil
// history, nil metadata and no signature; the others have all fields set,
// times at millisecond precision (what Parquet keeps).
func SampleDatums(n int, seed uint64) []crawldb.Datum {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	statuses := []crawldb.Status{crawldb.StatusDBUnfetched, crawldb.StatusDBFetched, crawldb.StatusDBGone,
		crawldb.StatusDBRedirTemp, crawldb.StatusDBRedirPerm, crawldb.StatusDBNotModified,
		crawldb.StatusDBDuplicate, crawldb.StatusDBOrphan}
	sources := []crawldb.Source{crawldb.SourceInjected, crawldb.SourceDefault, crawldb.SourceAdaptive,
		crawldb.SourceCluster, crawldb.SourcePoisson}
	ms := func() time.Time {
		return base.Add(time.Duration(rng.Int64N(int64(400*24*time.Hour))) - 200*24*time.Hour).Truncate(time.Millisecond)
	}
	out := make([]crawldb.Datum, n)
	for i := range out {
		host := fmt.Sprintf("h%03d.example.com", rng.IntN(max(1, n/5)+1))
		d := crawldb.Datum{
			URL:       fmt.Sprintf("http://%s/p/%08d", host, i),
			Host:      host,
			Status:    statuses[rng.IntN(len(statuses))],
			ClusterID: -1,
		}
		if i%4 != 3 {
			d.FetchTime = ms()
			d.PrevFetchTime = ms()
			d.ModifiedTime = ms()
			d.GenerateTime = ms()
			d.FetchInterval = int32(60 + rng.IntN(90*86400))
			d.FixedInterval = rng.IntN(5) == 0
			d.Retries = int32(rng.IntN(4))
			d.Score = rng.Float32() * 10
			d.Signature = []byte(fmt.Sprintf("sig-%d-%d", i, rng.IntN(1000)))
			d.HTTPStatus = []int32{200, 304, 404, 301}[rng.IntN(4)]
			d.ContentType = []string{"text/html", "application/pdf", "text/plain"}[rng.IntN(3)]
			d.ETag = fmt.Sprintf("\"e%x\"", rng.Uint32())
			d.LastModified = d.ModifiedTime.Format(time.RFC1123)
			d.FetchCount = int32(1 + rng.IntN(50))
			d.ChangeCount = int32(rng.IntN(int(d.FetchCount) + 1))
			h := rng.IntN(crawldb.HistoryLimit + 1)
			t := base.Add(-time.Duration(h) * 24 * time.Hour)
			for j := 0; j < h; j++ {
				d.History = append(d.History, crawldb.Observation{Time: t, Changed: rng.IntN(2) == 0})
				t = t.Add(time.Duration(1+rng.IntN(48)) * time.Hour)
			}
			d.Features = crawldb.Features{Words: int32(rng.IntN(5000)), Outlinks: int32(rng.IntN(300)),
				Inlinks: int32(rng.IntN(300)), Images: int32(rng.IntN(40)), Depth: int32(rng.IntN(8)),
				Bytes: rng.Int64N(1 << 33)}
			d.ClusterID = int32(rng.IntN(20)) - 1
			d.ClusterSample = d.ClusterID >= 0 && rng.IntN(4) == 0
			d.Source = sources[rng.IntN(len(sources))]
			d.Metadata = map[string]string{"k": "v", fmt.Sprintf("key%d", i): "välue,\"quoted\"\n"}
		}
		out[i] = d
	}
	sort.Slice(out, func(a, b int) bool { return out[a].URL < out[b].URL })
	return out
}

// WriteParquet writes rows to path as a zstd Parquet file with parquet-go.
func WriteParquet[T any](path string, rows []T, opts ...parquet.WriterOption) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("crawldbtest: create %s: %w", path, err)
	}
	w := parquet.NewGenericWriter[T](f, append([]parquet.WriterOption{parquet.Compression(&parquet.Zstd)}, opts...)...)
	if _, err := w.Write(rows); err != nil {
		f.Close()
		return fmt.Errorf("crawldbtest: write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		f.Close()
		return fmt.Errorf("crawldbtest: close writer %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("crawldbtest: close %s: %w", path, err)
	}
	return nil
}

// ReadParquetGo reads every row of path with parquet-go.
func ReadParquetGo[T any](path string) (rows []T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("crawldbtest: read %s: panic: %v", path, r)
		}
	}()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("crawldbtest: %w", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("crawldbtest: open %s: %w", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	buf := make([]T, 64)
	for {
		// parquet-go reuses the maps and slices it finds in buf; rows
		// already handed out would change under the caller.
		clear(buf)
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("crawldbtest: read %s: %w", path, err)
		}
	}
}

// ReadArrow reads path with Arrow's Parquet reader into a table; the caller
// releases it.
func ReadArrow(path string) (arrow.Table, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("crawldbtest: arrow open %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("crawldbtest: arrow reader %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("crawldbtest: arrow read %s: %w", path, err)
	}
	return tbl, nil
}

// RoundTrip writes rows to a Parquet file in a temporary directory, reads
// it back with parquet-go and with Arrow, and fails tb on any difference
// (see DiffRows and DiffArrow). It returns the file's path.
func RoundTrip[T any](tb testing.TB, rows []T, opts ...parquet.WriterOption) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "roundtrip.parquet")
	if err := WriteParquet(path, rows, opts...); err != nil {
		tb.Fatal(err)
	}
	got, err := ReadParquetGo[T](path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := DiffRows(rows, got); err != nil {
		tb.Errorf("parquet-go round trip: %v", err)
	}
	tbl, err := ReadArrow(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer tbl.Release()
	if err := DiffArrow(rows, tbl); err != nil {
		tb.Errorf("arrow read: %v", err)
	}
	return path
}

// DiffRows compares two row slices field by field and returns the first
// difference. Times compare at millisecond precision and regardless of
// location; nil and empty slices and maps are equal.
func DiffRows[T any](want, got []T) error {
	if len(want) != len(got) {
		return fmt.Errorf("got %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if err := diffValue(fmt.Sprintf("row %d", i), reflect.ValueOf(want[i]), reflect.ValueOf(got[i])); err != nil {
			return err
		}
	}
	return nil
}

var timeType = reflect.TypeOf(time.Time{})

func diffValue(path string, w, g reflect.Value) error {
	if w.Type() == timeType {
		wt, gt := w.Interface().(time.Time), g.Interface().(time.Time)
		if wt.IsZero() != gt.IsZero() || wt.UnixMilli() != gt.UnixMilli() {
			return fmt.Errorf("%s: got %v, want %v", path, gt, wt)
		}
		return nil
	}
	switch w.Kind() {
	case reflect.Struct:
		for i := 0; i < w.NumField(); i++ {
			if err := diffValue(path+"."+w.Type().Field(i).Name, w.Field(i), g.Field(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if w.Len() != g.Len() {
			return fmt.Errorf("%s: got length %d, want %d", path, g.Len(), w.Len())
		}
		for i := 0; i < w.Len(); i++ {
			if err := diffValue(fmt.Sprintf("%s[%d]", path, i), w.Index(i), g.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if w.Len() != g.Len() {
			return fmt.Errorf("%s: got %d entries, want %d", path, g.Len(), w.Len())
		}
		for _, k := range w.MapKeys() {
			gv := g.MapIndex(k)
			if !gv.IsValid() {
				return fmt.Errorf("%s: key %v missing", path, k)
			}
			if err := diffValue(fmt.Sprintf("%s[%v]", path, k), w.MapIndex(k), gv); err != nil {
				return err
			}
		}
		return nil
	default:
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			return fmt.Errorf("%s: got %v, want %v", path, g.Interface(), w.Interface())
		}
		return nil
	}
}

// DiffArrow compares rows with an Arrow table read from their Parquet file:
// every exported field of T must be a column named by its parquet tag,
// with the value the row holds. Zero times must be null or the zero
// instant; nil and empty byte slices equal a null or empty binary.
func DiffArrow[T any](rows []T, tbl arrow.Table) error {
	if int(tbl.NumRows()) != len(rows) {
		return fmt.Errorf("arrow: %d rows, want %d", tbl.NumRows(), len(rows))
	}
	rt := reflect.TypeOf((*T)(nil)).Elem()
	for fi := 0; fi < rt.NumField(); fi++ {
		sf := rt.Field(fi)
		name := columnName(sf)
		if name == "-" {
			continue
		}
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return fmt.Errorf("arrow: column %q (field %s) not found once in %v", name, sf.Name, tbl.Schema())
		}
		col := tbl.Column(idx[0])
		arr, err := array.Concatenate(col.Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			return fmt.Errorf("arrow: concatenate %s: %w", name, err)
		}
		for i := range rows {
			v := reflect.ValueOf(rows[i]).Field(fi)
			if err := diffArrowValue(fmt.Sprintf("row %d .%s", i, name), v, arr, i); err != nil {
				arr.Release()
				return err
			}
		}
		arr.Release()
	}
	return nil
}

func columnName(sf reflect.StructField) string {
	tag := sf.Tag.Get("parquet")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return sf.Name
	}
	return name
}

// diffArrowValue compares v, a row's value at path, with element i of arr,
// the Arrow array of its column (or struct field, or list elements).
func diffArrowValue(path string, v reflect.Value, arr arrow.Array, i int) error {
	if v.Type() == timeType {
		return diffArrowTime(path, v, arr, i)
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Uint8, reflect.Int32, reflect.Int64, reflect.Float32:
		if !arrowScalarEqual(v, arr, i) {
			return arrowMismatch(path, v, arr, arr.ValueStr(i))
		}
		return nil
	case reflect.Struct:
		return diffArrowStruct(path, v, arr, i)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return diffArrowBytes(path, v, arr, i)
		}
		return diffArrowList(path, v, arr, i)
	case reflect.Map:
		return diffArrowMap(path, v, arr, i)
	default:
		return fmt.Errorf("%s: crawldbtest cannot compare kind %s", path, v.Kind())
	}
}

// arrowMismatch is the error for a value at path that arr holds as got.
func arrowMismatch(path string, v reflect.Value, arr arrow.Array, got any) error {
	return fmt.Errorf("%s: arrow has %v (%s), want %v", path, got, arr.DataType(), v.Interface())
}

// diffArrowTime compares a time with a millisecond timestamp array, where
// null stands for the zero time.
func diffArrowTime(path string, v reflect.Value, arr arrow.Array, i int) error {
	t := v.Interface().(time.Time)
	a, ok := arr.(*array.Timestamp)
	if !ok {
		return arrowMismatch(path, v, arr, "a non-timestamp array")
	}
	if unit := a.DataType().(*arrow.TimestampType).Unit; unit != arrow.Millisecond {
		return arrowMismatch(path, v, arr, fmt.Sprintf("timestamp unit %v", unit))
	}
	if a.IsNull(i) {
		if !t.IsZero() {
			return arrowMismatch(path, v, arr, "null")
		}
		return nil
	}
	if got := int64(a.Value(i)); got != t.UnixMilli() {
		return arrowMismatch(path, v, arr, time.UnixMilli(got).UTC())
	}
	return nil
}

// arrowScalarEqual reports whether element i of arr is non-null, of the
// Arrow type of v's kind (string, bool, uint8, int32, int64 or float32),
// and equal to v.
func arrowScalarEqual(v reflect.Value, arr arrow.Array, i int) bool {
	switch v.Kind() {
	case reflect.String:
		a, ok := arr.(*array.String)
		return ok && !a.IsNull(i) && a.Value(i) == v.String()
	case reflect.Bool:
		a, ok := arr.(*array.Boolean)
		return ok && !a.IsNull(i) && a.Value(i) == v.Bool()
	case reflect.Uint8:
		a, ok := arr.(*array.Uint8)
		return ok && !a.IsNull(i) && uint64(a.Value(i)) == v.Uint()
	case reflect.Int32:
		a, ok := arr.(*array.Int32)
		return ok && !a.IsNull(i) && int64(a.Value(i)) == v.Int()
	case reflect.Int64:
		a, ok := arr.(*array.Int64)
		return ok && !a.IsNull(i) && a.Value(i) == v.Int()
	case reflect.Float32:
		a, ok := arr.(*array.Float32)
		return ok && !a.IsNull(i) && float64(a.Value(i)) == v.Float()
	}
	return false
}

// diffArrowStruct compares a struct with a non-null element of a struct
// array, field by field, each field by its parquet column name.
func diffArrowStruct(path string, v reflect.Value, arr arrow.Array, i int) error {
	a, ok := arr.(*array.Struct)
	if !ok || a.IsNull(i) {
		return arrowMismatch(path, v, arr, "a non-struct or null")
	}
	st := a.DataType().(*arrow.StructType)
	for fi := 0; fi < v.NumField(); fi++ {
		name := columnName(v.Type().Field(fi))
		j, ok := st.FieldIdx(name)
		if !ok {
			return fmt.Errorf("%s: struct has no field %q", path, name)
		}
		if err := diffArrowValue(path+"."+name, v.Field(fi), a.Field(j), i); err != nil {
			return err
		}
	}
	return nil
}

// diffArrowBytes compares a byte slice with a binary array, where null
// stands for an empty slice.
func diffArrowBytes(path string, v reflect.Value, arr arrow.Array, i int) error {
	a, ok := arr.(*array.Binary)
	if !ok {
		return arrowMismatch(path, v, arr, "a non-binary array")
	}
	if a.IsNull(i) {
		if v.Len() != 0 {
			return arrowMismatch(path, v, arr, "null")
		}
		return nil
	}
	if !bytes.Equal(a.Value(i), v.Bytes()) {
		return arrowMismatch(path, v, arr, a.Value(i))
	}
	return nil
}

// diffArrowList compares a slice with a list array, element by element;
// null stands for an empty slice.
func diffArrowList(path string, v reflect.Value, arr arrow.Array, i int) error {
	a, ok := arr.(*array.List)
	if !ok {
		return arrowMismatch(path, v, arr, "a non-list array")
	}
	if a.IsNull(i) {
		if v.Len() != 0 {
			return arrowMismatch(path, v, arr, "null")
		}
		return nil
	}
	start, end := a.ValueOffsets(i)
	if int(end-start) != v.Len() {
		return arrowMismatch(path, v, arr, fmt.Sprintf("%d elements", end-start))
	}
	for j := 0; j < v.Len(); j++ {
		if err := diffArrowValue(fmt.Sprintf("%s[%d]", path, j), v.Index(j), a.ListValues(), int(start)+j); err != nil {
			return err
		}
	}
	return nil
}

// diffArrowMap compares a map of strings with a map array of string keys
// and items; null stands for an empty map.
func diffArrowMap(path string, v reflect.Value, arr arrow.Array, i int) error {
	a, ok := arr.(*array.Map)
	if !ok {
		return arrowMismatch(path, v, arr, "a non-map array")
	}
	got := map[string]string{}
	if !a.IsNull(i) {
		keys, ok1 := a.Keys().(*array.String)
		items, ok2 := a.Items().(*array.String)
		if !ok1 || !ok2 {
			return arrowMismatch(path, v, arr, "a map that is not string to string")
		}
		start, end := a.ValueOffsets(i)
		for j := int(start); j < int(end); j++ {
			got[keys.Value(j)] = items.Value(j)
		}
	}
	want := map[string]string{}
	iter := v.MapRange()
	for iter.Next() {
		want[iter.Key().String()] = iter.Value().String()
	}
	if !reflect.DeepEqual(got, want) {
		return arrowMismatch(path, v, arr, got)
	}
	return nil
}

// Fill sets every exported field reachable from v (a settable value) to a
// random value that is not the zero value: slices and maps get two
// elements, pointers a filled element, times a random UTC instant (half of
// them whole milliseconds, as a CrawlDB's times are). A test that fills a
// record and checks a conversion or an encoding of it then fails when a
// field is added to the record and forgotten by the code it tests.
func Fill(tb testing.TB, r *rand.Rand, v reflect.Value) {
	tb.Helper()
	if v.Type() == reflect.TypeFor[time.Time]() {
		ns := r.Int64N(1e9)
		if r.IntN(2) == 0 {
			ns -= ns % 1e6
		}
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), ns).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		n := r.Int64N(1<<uint(v.Type().Bits()-2)) + 1
		if r.IntN(2) == 0 {
			n = -n
		}
		v.SetInt(n)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(r.Uint64N(1<<uint(v.Type().Bits()-1)) + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(r.Float64()*100 - 50)
	case reflect.String:
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = byte(' ' + r.IntN(95))
		}
		v.SetString(string(b))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			Fill(tb, r, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			Fill(tb, r, k)
			Fill(tb, r, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		Fill(tb, r, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(tb, r, v.Field(i))
			}
		}
	default:
		tb.Fatalf("crawldbtest.Fill: kind %v of %v", v.Kind(), v.Type())
	}
}
