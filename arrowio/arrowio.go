// Package arrowio writes trawl's Parquet row types (structs with parquet
// tags, such as crawldb.Datum and segment.Fetch) as an Arrow IPC stream:
// one schema that mirrors the Parquet columns, then record batches of
// bounded size, so that memory does not grow with the number of rows.
//
// The columns are the ones Arrow's own Parquet reader gives for the same
// rows: strings as utf8, byte slices as binary, times as
// timestamp[ms, tz=UTC] (null for the zero time where the Parquet column
// is optional), structs as structs, slices as lists, maps as maps, numbers
// as their own types. An integer type named by an Enum (the crawl
// statuses) is written as its number and, in a column of its own right
// after it named with "_name" added, as its name, dictionary encoded (one
// dictionary for the whole stream, all the names in code order).
//
// The stream reads back with any Arrow implementation, e.g. pyarrow's
// pyarrow.ipc.open_stream, polars' read_ipc_stream, DuckDB's nanoarrow
// extension or the apache-arrow JavaScript package.
package arrowio

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Default batch bounds: a record batch holds at most DefaultBatchRows rows
// and is written as soon as its values reach about DefaultBatchBytes.
const (
	DefaultBatchRows  = 4096
	DefaultBatchBytes = 8 << 20
)

// Enum names the values of an integer type: columns of that type get a
// dictionary-encoded "_name" column beside them.
type Enum struct {
	// Type is the integer type, e.g. reflect.TypeFor[crawldb.Status]().
	Type reflect.Type
	// Names maps each known value to its name; others get a null name.
	Names map[uint64]string
}

// Options configure a Writer. The zero value is usable.
type Options struct {
	// BatchRows and BatchBytes bound a record batch (defaults
	// DefaultBatchRows and DefaultBatchBytes): a batch is written when it
	// has BatchRows rows or its values take about BatchBytes bytes.
	BatchRows  int
	BatchBytes int
	// Enums name integer types.
	Enums []Enum
	// Metadata is stored in the schema (e.g. what the rows are).
	Metadata map[string]string
	// Allocator allocates the batches (default memory.DefaultAllocator).
	Allocator memory.Allocator
}

// Writer writes rows of type T as an Arrow IPC stream. It is not safe for
// concurrent use.
type Writer[T any] struct {
	o       Options
	schema  *arrow.Schema
	ipc     *ipc.Writer
	rb      *array.RecordBuilder
	cols    []appendFunc
	rows    int // in the current batch
	bytes   int // about, in the current batch
	total   int64
	batches int
	closed  bool
	err     error // the first error of an appender
}

// checkEnum checks an Enum is of an integer type with distinct names.
func checkEnum(e Enum) error {
	if e.Type == nil || !(e.Type.Kind() >= reflect.Int && e.Type.Kind() <= reflect.Uint64) {
		return fmt.Errorf("arrowio: enum type %v is not an integer type", e.Type)
	}
	seen := map[string]bool{}
	for _, n := range e.Names {
		if seen[n] {
			return fmt.Errorf("arrowio: enum %v names two values %q", e.Type, n)
		}
		seen[n] = true
	}
	return nil
}

// appendFunc appends one value to the builder it was bound to and returns
// about how many bytes the value takes.
type appendFunc func(v reflect.Value) int

// bindFunc binds a column to its builder.
type bindFunc func(b array.Builder) appendFunc

// column is one compiled field: its Arrow field and how to fill it from
// the struct field at index (or, for an enum name, from that field's
// value).
type column struct {
	field arrow.Field
	index int
	bind  bindFunc
}

// NewWriter compiles the schema of T (a struct type) and returns a Writer
// to w. Nothing is written before the first batch or Close.
func NewWriter[T any](w io.Writer, o Options) (*Writer[T], error) {
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arrowio: %v is not a struct type", t)
	}
	wr := &Writer[T]{o: o}
	c := compiler{enums: map[reflect.Type]Enum{}, err: &wr.err}
	for _, e := range o.Enums {
		if err := checkEnum(e); err != nil {
			return nil, err
		}
		c.enums[e.Type] = e
	}
	cols, err := c.structColumns(t)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(cols))
	for i, col := range cols {
		fields[i] = col.field
	}
	var md *arrow.Metadata
	if len(o.Metadata) > 0 {
		m := arrow.MetadataFrom(o.Metadata)
		md = &m
	}
	wr.schema = arrow.NewSchema(fields, md)
	wr.rb = array.NewRecordBuilder(o.Allocator, wr.schema)
	for i, col := range cols {
		wr.cols = append(wr.cols, bindField(col, wr.rb.Field(i)))
	}
	if wr.err != nil {
		wr.rb.Release()
		return nil, wr.err
	}
	schema := wr.schema
	wr.ipc = ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(o.Allocator))
	return wr, nil
}

// bindField binds a struct field's column: the returned function takes the
// struct.
func bindField(col column, b array.Builder) appendFunc {
	f := col.bind(b)
	idx := col.index
	return func(v reflect.Value) int { return f(v.Field(idx)) }
}

// Schema returns the stream's schema.
func (w *Writer[T]) Schema() *arrow.Schema { return w.schema }

// Rows returns the number of rows written so far (including the current,
// unwritten batch).
func (w *Writer[T]) Rows() int64 { return w.total }

// Batches returns the number of record batches written so far.
func (w *Writer[T]) Batches() int { return w.batches }

// Write adds one row, writing the batch when it is full.
func (w *Writer[T]) Write(rec *T) error {
	if w.closed {
		return fmt.Errorf("arrowio: write after close")
	}
	if w.err != nil {
		return w.err
	}
	v := reflect.ValueOf(rec).Elem()
	n := 0
	for _, f := range w.cols {
		n += f(v)
	}
	if w.err != nil {
		return w.err
	}
	w.rows++
	w.total++
	w.bytes += n
	if w.rows >= w.o.BatchRows || w.bytes >= w.o.BatchBytes {
		return w.flush()
	}
	return nil
}

// flush writes the current batch, if it has rows.
func (w *Writer[T]) flush() error {
	if w.rows == 0 {
		return nil
	}
	rec := w.rb.NewRecord()
	defer rec.Release()
	w.rows, w.bytes = 0, 0
	if err := w.ipc.Write(rec); err != nil {
		return fmt.Errorf("arrowio: write batch: %w", err)
	}
	w.batches++
	return nil
}

// Close writes the last batch and the end of the stream (a stream of no
// rows still has its schema). It does not close the underlying writer.
func (w *Writer[T]) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.flush()
	if cerr := w.ipc.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("arrowio: close stream: %w", cerr)
	}
	w.rb.Release()
	return err
}

// compiler builds columns with the enums it knows. Binders and appenders
// that fail (which appending to builders in memory does not, in practice)
// record the first error in *err, which the Writer checks.
type compiler struct {
	enums map[reflect.Type]Enum
	err   *error
}

// fail records err if it is the first.
func (c compiler) fail(err error) {
	if *c.err == nil {
		*c.err = err
	}
}

// tagOf returns a field's column name and whether its Parquet column is
// optional; name "-" means left out.
func tagOf(f reflect.StructField) (name string, optional bool) {
	tag := f.Tag.Get("parquet")
	parts := strings.Split(tag, ",")
	name = parts[0]
	if name == "" {
		name = f.Name
	}
	for _, p := range parts[1:] {
		if p == "optional" {
			optional = true
		}
	}
	return name, optional
}

// structColumns compiles the exported fields of struct type t, each
// followed by its enum name column if it has one.
func (c compiler) structColumns(t reflect.Type) ([]column, error) {
	var cols []column
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, optional := tagOf(f)
		if name == "-" {
			continue
		}
		dt, nullable, bind, err := c.compile(f.Type, optional)
		if err != nil {
			return nil, fmt.Errorf("arrowio: field %s.%s: %w", t.Name(), f.Name, err)
		}
		cols = append(cols, column{field: arrow.Field{Name: name, Type: dt, Nullable: nullable}, index: i, bind: bind})
		if e, ok := c.enums[f.Type]; ok {
			dt, bind := c.enumColumn(e)
			cols = append(cols, column{field: arrow.Field{Name: name + "_name", Type: dt, Nullable: true}, index: i, bind: bind})
		}
	}
	return cols, nil
}

var timeType = reflect.TypeFor[time.Time]()

// compile returns the Arrow type of Go type t, whether its column is
// nullable (optional: zero times and nil byte slices are null), and its
// binder.
func (c compiler) compile(t reflect.Type, optional bool) (arrow.DataType, bool, bindFunc, error) {
	if t == timeType {
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, optional, func(b array.Builder) appendFunc {
			tb := b.(*array.TimestampBuilder)
			return func(v reflect.Value) int {
				var tm time.Time
				if v.CanAddr() {
					tm = *v.Addr().Interface().(*time.Time) // no boxing copy
				} else {
					tm = v.Interface().(time.Time)
				}
				if optional && tm.IsZero() {
					tb.AppendNull()
				} else {
					tb.Append(arrow.Timestamp(tm.UnixMilli()))
				}
				return 8
			}
		}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean, false, func(b array.Builder) appendFunc {
			bb := b.(*array.BooleanBuilder)
			return func(v reflect.Value) int { bb.Append(v.Bool()); return 1 }
		}, nil
	case reflect.Int8:
		return intColumn(arrow.PrimitiveTypes.Int8, func(b *array.Int8Builder, v reflect.Value) { b.Append(int8(v.Int())) })
	case reflect.Int16:
		return intColumn(arrow.PrimitiveTypes.Int16, func(b *array.Int16Builder, v reflect.Value) { b.Append(int16(v.Int())) })
	case reflect.Int32:
		return intColumn(arrow.PrimitiveTypes.Int32, func(b *array.Int32Builder, v reflect.Value) { b.Append(int32(v.Int())) })
	case reflect.Int64, reflect.Int:
		return intColumn(arrow.PrimitiveTypes.Int64, func(b *array.Int64Builder, v reflect.Value) { b.Append(v.Int()) })
	case reflect.Uint8:
		return intColumn(arrow.PrimitiveTypes.Uint8, func(b *array.Uint8Builder, v reflect.Value) { b.Append(uint8(v.Uint())) })
	case reflect.Uint16:
		return intColumn(arrow.PrimitiveTypes.Uint16, func(b *array.Uint16Builder, v reflect.Value) { b.Append(uint16(v.Uint())) })
	case reflect.Uint32:
		return intColumn(arrow.PrimitiveTypes.Uint32, func(b *array.Uint32Builder, v reflect.Value) { b.Append(uint32(v.Uint())) })
	case reflect.Uint64, reflect.Uint:
		return intColumn(arrow.PrimitiveTypes.Uint64, func(b *array.Uint64Builder, v reflect.Value) { b.Append(v.Uint()) })
	case reflect.Float32:
		return intColumn(arrow.PrimitiveTypes.Float32, func(b *array.Float32Builder, v reflect.Value) { b.Append(float32(v.Float())) })
	case reflect.Float64:
		return intColumn(arrow.PrimitiveTypes.Float64, func(b *array.Float64Builder, v reflect.Value) { b.Append(v.Float()) })
	case reflect.String:
		return arrow.BinaryTypes.String, false, func(b array.Builder) appendFunc {
			sb := b.(*array.StringBuilder)
			return func(v reflect.Value) int { s := v.String(); sb.Append(s); return len(s) + 4 }
		}, nil
	case reflect.Struct:
		cols, err := c.structColumns(t)
		if err != nil {
			return nil, false, nil, err
		}
		fields := make([]arrow.Field, len(cols))
		for i, col := range cols {
			fields[i] = col.field
		}
		return arrow.StructOf(fields...), false, func(b array.Builder) appendFunc {
			sb := b.(*array.StructBuilder)
			children := make([]appendFunc, len(cols))
			for i, col := range cols {
				children[i] = bindField(col, sb.FieldBuilder(i))
			}
			return func(v reflect.Value) int {
				sb.Append(true)
				n := 0
				for _, f := range children {
					n += f(v)
				}
				return n
			}
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return arrow.BinaryTypes.Binary, optional, func(b array.Builder) appendFunc {
				bb := b.(*array.BinaryBuilder)
				return func(v reflect.Value) int {
					if optional && v.IsNil() {
						bb.AppendNull()
						return 4
					}
					bb.Append(v.Bytes())
					return v.Len() + 4
				}
			}, nil
		}
		et, enull, ebind, err := c.compile(t.Elem(), false)
		if err != nil {
			return nil, false, nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: enull}), false, func(b array.Builder) appendFunc {
			lb := b.(*array.ListBuilder)
			elem := ebind(lb.ValueBuilder())
			return func(v reflect.Value) int {
				lb.Append(true)
				n := 4
				for i := 0; i < v.Len(); i++ {
					n += elem(v.Index(i))
				}
				return n
			}
		}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.String {
			return nil, false, nil, fmt.Errorf("unsupported map type %v (want string keys and values)", t)
		}
		return arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), false, func(b array.Builder) appendFunc {
			mb := b.(*array.MapBuilder)
			kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.StringBuilder)
			var keys []string
			return func(v reflect.Value) int {
				mb.Append(true)
				keys = keys[:0]
				for _, k := range v.MapKeys() {
					keys = append(keys, k.String())
				}
				sort.Strings(keys)
				n := 4
				for _, k := range keys {
					val := v.MapIndex(reflect.ValueOf(k).Convert(t.Key())).String()
					kb.Append(k)
					ib.Append(val)
					n += len(k) + len(val) + 8
				}
				return n
			}
		}, nil
	}
	return nil, false, nil, fmt.Errorf("unsupported type %v", t)
}

// intColumn is the column of a fixed-width number type whose builder is B.
func intColumn[B array.Builder](dt arrow.DataType, app func(b B, v reflect.Value)) (arrow.DataType, bool, bindFunc, error) {
	size := dt.(arrow.FixedWidthDataType).BitWidth() / 8
	return dt, false, func(b array.Builder) appendFunc {
		bb := b.(B)
		return func(v reflect.Value) int { app(bb, v); return size }
	}, nil
}

// enumColumn is the dictionary-encoded name column of an enum: its
// dictionary holds every name in code order, the same in every batch (so
// the stream carries it once); an unknown value has a null name.
func (c compiler) enumColumn(e Enum) (arrow.DataType, bindFunc) {
	codes := make([]uint64, 0, len(e.Names))
	for c := range e.Names {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	var idx arrow.DataType = arrow.PrimitiveTypes.Int8
	if len(codes) > 127 {
		idx = arrow.PrimitiveTypes.Int16
	}
	dt := &arrow.DictionaryType{IndexType: idx, ValueType: arrow.BinaryTypes.String}
	signed := e.Type.Kind() >= reflect.Int && e.Type.Kind() <= reflect.Int64
	return dt, func(b array.Builder) appendFunc {
		db := b.(*array.BinaryDictionaryBuilder)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for _, c := range codes {
			sb.Append(e.Names[c])
		}
		dict := sb.NewStringArray()
		sb.Release()
		if err := db.InsertStringDictValues(dict); err != nil {
			c.fail(fmt.Errorf("arrowio: the dictionary of %v: %w", e.Type, err))
		}
		dict.Release()
		return func(v reflect.Value) int {
			var code uint64
			if signed {
				code = uint64(v.Int())
			} else {
				code = v.Uint()
			}
			name, ok := e.Names[code]
			if !ok {
				db.AppendNull()
				return 1
			}
			if err := db.AppendString(name); err != nil {
				c.fail(fmt.Errorf("arrowio: %v name %q: %w", e.Type, name, err))
			}
			return int(idx.(arrow.FixedWidthDataType).BitWidth() / 8)
		}
	}
}
