package parquetio_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
)

// kinds has a field of every scalar kind the columnar decoder takes, in
// every arrangement: required, optional, nested, in lists and maps.
type kinds struct {
	B     bool              `parquet:"b"`
	I8    int8              `parquet:"i8"`
	I16   int16             `parquet:"i16"`
	I32   int32             `parquet:"i32"`
	I64   int64             `parquet:"i64"`
	I     int               `parquet:"i"`
	U8    uint8             `parquet:"u8"`
	U16   uint16            `parquet:"u16"`
	U32   uint32            `parquet:"u32"`
	U64   uint64            `parquet:"u64"`
	F32   float32           `parquet:"f32"`
	F64   float64           `parquet:"f64"`
	S     string            `parquet:"s"`
	D     string            `parquet:"d,dict"`
	Bs    []byte            `parquet:"bs"`
	OBs   []byte            `parquet:"obs,optional"`
	OS    string            `parquet:"os,optional"`
	OI    int32             `parquet:"oi,optional"`
	Named crawldb.Status    `parquet:"named"`
	Ms    time.Time         `parquet:"ms,timestamp(millisecond)"`
	Us    time.Time         `parquet:"us,optional,timestamp(microsecond)"`
	Ns    time.Time         `parquet:"ns,timestamp(nanosecond)"`
	Inner inner             `parquet:"inner"`
	Strs  []string          `parquet:"strs,list"`
	Ints  []int64           `parquet:"ints,list"`
	Elems []elem            `parquet:"elems,list"`
	M     map[string]int32  `parquet:"m"`
	MS    map[string]string `parquet:"ms2"`
	skip  int
	Skip  int `parquet:"-"`
}

type inner struct {
	A    int32     `parquet:"a"`
	Deep deep      `parquet:"deep"`
	T    time.Time `parquet:"t,optional,timestamp(millisecond)"`
	L    []elem    `parquet:"l,list"`
}

type deep struct {
	S string  `parquet:"s"`
	F float64 `parquet:"f"`
}

type elem struct {
	S  string    `parquet:"s"`
	N  int32     `parquet:"n"`
	OK bool      `parquet:"ok"`
	OS string    `parquet:"os,optional"`
	T  time.Time `parquet:"t,timestamp(millisecond)"`
}

// fillRandom sets v (settable) to random values: strings from a small
// vocabulary (often repeated, sometimes empty), times at whole
// milliseconds, and slices and maps nil, empty or full, so that every
// level of every column is written.
func fillRandom(r *rand.Rand, v reflect.Value) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		if r.IntN(5) > 0 {
			v.Set(reflect.ValueOf(time.UnixMilli(1.7e12 + r.Int64N(1e11)).UTC()))
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.Uint64()) >> r.IntN(64))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64() >> r.IntN(64))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(r.NormFloat64())
	case reflect.String:
		if n := r.IntN(6); n > 0 {
			v.SetString(strings.Repeat(string(rune('a'+n)), r.IntN(4)+1) + fmt.Sprint(r.IntN(3)))
		}
	case reflect.Slice:
		switch r.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(4)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fillRandom(r, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Map:
		switch r.IntN(4) {
		case 0:
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.IntN(4) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fillRandom(r, k)
				fillRandom(r, e)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillRandom(r, v.Field(i))
			}
		}
	}
}

func randomRows[T any](n int, seed uint64) []T {
	r := rand.New(rand.NewPCG(seed, 3))
	rows := make([]T, n)
	for i := range rows {
		fillRandom(r, reflect.ValueOf(&rows[i]).Elem())
	}
	return rows
}

// readBoth reads data as T rows with the columnar decoder and with
// parquet-go's reader.
func readBoth[T any](t *testing.T, data []byte) (columnar, generic []T) {
	t.Helper()
	for _, plan := range []bool{true, false} {
		r, err := parquetio.Open[T](bytesFile{bytes.NewReader(data)}, "differential.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if !parquetio.HasColumnarPlan(r) {
			t.Fatalf("%T: no columnar plan", *new(T))
		}
		if !plan {
			parquetio.DropColumnarPlan(r)
		}
		var rows []T
		for row, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row)
		}
		r.Close()
		if plan {
			columnar = rows
		} else {
			generic = rows
		}
	}
	return columnar, generic
}

// differential writes random rows of T and checks that the columnar
// decoder reads them exactly as parquet-go's reader does, in row groups of
// several sizes.
func differential[T any](t *testing.T, n int) {
	t.Run(reflect.TypeFor[T]().String(), func(t *testing.T) {
		t.Parallel()
		rows := randomRows[T](n, 1)
		for _, group := range []int64{3, 64, int64(n) + 1} {
			data := parquetBytes(t, rows, parquetio.RowGroupRows(group))
			columnar, generic := readBoth[T](t, data)
			if len(columnar) != n || len(generic) != n {
				t.Fatalf("row groups of %d: %d rows columnar, %d generic, want %d", group, len(columnar), len(generic), n)
			}
			for i := range columnar {
				if !reflect.DeepEqual(columnar[i], generic[i]) {
					t.Fatalf("row groups of %d: row %d differs:\ncolumnar %+v\ngeneric  %+v", group, i, columnar[i], generic[i])
				}
			}
		}
	})
}

// TestColumnarMatchesParquetGo: the columnar decoder reads every row type
// trawl keeps in Parquet, and a type with every shape it takes, exactly as
// parquet-go's reflective reader does.
func TestColumnarMatchesParquetGo(t *testing.T) {
	differential[kinds](t, 400)
	differential[crawldb.Datum](t, 400)
	differential[segment.Fetch](t, 400)
	differential[segment.Content](t, 400)
	differential[segment.ParseData](t, 400)
	differential[segment.ParseText](t, 400)
	differential[segment.ParseUpdate](t, 400)
	differential[linkdb.Inlink](t, 400)
}

// TestColumnarProjection: a struct with a subset of a file's columns reads
// them with the columnar decoder; a struct with a column the file lacks
// (AllowMissingColumns) falls back to parquet-go's reader, which zeroes it.
func TestColumnarProjection(t *testing.T) {
	type subset struct {
		S   string `parquet:"s"`
		I32 int32  `parquet:"i32"`
	}
	recs := randomRows[kinds](500, 9)
	data := parquetBytes(t, recs, parquetio.RowGroupRows(64))
	r, err := parquetio.Open[subset](bytesFile{bytes.NewReader(data)}, "subset.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if !parquetio.HasColumnarPlan(r) {
		t.Fatal("subset: no columnar plan")
	}
	i := 0
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if row.S != recs[i].S || row.I32 != recs[i].I32 {
			t.Fatalf("row %d = %+v, want %q %d", i, row, recs[i].S, recs[i].I32)
		}
		i++
	}
	if i != len(recs) {
		t.Fatalf("read %d rows, want %d", i, len(recs))
	}

	type wider struct {
		S     string `parquet:"s"`
		Extra int32  `parquet:"extra"`
	}
	w, err := parquetio.Open[wider](bytesFile{bytes.NewReader(data)}, "wider.parquet", parquetio.AllowMissingColumns())
	if err != nil {
		t.Fatal(err)
	}
	if parquetio.HasColumnarPlan(w) {
		t.Fatal("a file lacking a column got a columnar plan")
	}
	i = 0
	for row, err := range w.All() {
		if err != nil {
			t.Fatal(err)
		}
		if row.S != recs[i].S || row.Extra != 0 {
			t.Fatalf("row %d = %+v", i, row)
		}
		i++
	}
}

// TestColumnarLeavesConvertedColumns: a byte array column with a logical
// type parquet-go converts on reading (JSON here) gets no columnar plan,
// and reads as parquet-go reads it.
func TestColumnarLeavesConvertedColumns(t *testing.T) {
	type withJSON struct {
		S string `parquet:"s"`
		J string `parquet:"j,json"`
	}
	rows := []withJSON{{S: "a", J: "plain"}, {S: "b", J: `with "quotes"`}, {}}
	r, err := parquetio.Open[withJSON](bytesFile{bytes.NewReader(parquetBytes(t, rows))}, "json.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if parquetio.HasColumnarPlan(r) {
		t.Fatal("a JSON column got a columnar plan")
	}
	var got []withJSON
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("read %q, want %q", got, rows)
	}
}

// TestColumnarStopsEarly: breaking out of the loop in the middle of a row
// group, or of a batch, stops reading and leaves the reader closable.
func TestColumnarStopsEarly(t *testing.T) {
	data := parquetBytes(t, randomRows[kinds](3000, 4), parquetio.RowGroupRows(2500))
	for _, stop := range []int{0, 1, parquetio.BatchSize, 2600} {
		r, err := parquetio.Open[kinds](bytesFile{bytes.NewReader(data)}, "stop.parquet")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			if n == stop {
				break
			}
			n++
		}
		if n != stop {
			t.Fatalf("stopped at %d, want %d", n, stop)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestColumnarCallerPanics: a panic in the caller's loop body is the
// caller's, not turned into an error about a corrupt file.
func TestColumnarCallerPanics(t *testing.T) {
	data := parquetBytes(t, randomRows[kinds](10, 4))
	r, err := parquetio.Open[kinds](bytesFile{bytes.NewReader(data)}, "panic.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer func() {
		if p := recover(); p != "caller's" {
			t.Fatalf("recovered %v, want the caller's panic", p)
		}
	}()
	for range r.All() {
		panic("caller's")
	}
}

// BenchmarkReadDatum reads CrawlDB rows with the columnar decoder and with
// parquet-go's reflective reader.
func BenchmarkReadDatum(b *testing.B) {
	rows := randomRows[crawldb.Datum](20000, 5)
	data := parquetBytes(b, rows)
	for _, plan := range []bool{true, false} {
		name := "columnar"
		if !plan {
			name = "parquet-go"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := parquetio.Open[crawldb.Datum](bytesFile{bytes.NewReader(data)}, "bench.parquet")
				if err != nil {
					b.Fatal(err)
				}
				if !plan {
					parquetio.DropColumnarPlan(r)
				}
				for _, err := range r.All() {
					if err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
		})
	}
}
