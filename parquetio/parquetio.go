// Package parquetio reads and writes typed Parquet files (one row per Go
// value of a struct type T) over trawl's storage interface, with
// parquet-go underneath.
//
// Files are written zstd-compressed at zstd's fastest level (or with
// another codec, see WithCompression) with page statistics, in row groups
// bounded by size (64 MiB of buffered data by default) or by a row count,
// so that readers can stream them and the engine can split them. They are
// plain Parquet, readable by Arrow, DuckDB, pyarrow or Spark. A writer keeps
// the row group it is writing in temporary files past 64 KiB a column (see
// SpoolDir), so its memory does not grow with the row group size.
//
// A top-level field tagged `parquetio:"blob"` (a page body, a page's text)
// gets neither page statistics nor column index bounds: a blob's minimum
// and maximum say nothing a reader could use, and computing them costs a
// comparison of every value and copies of the page's least and greatest
// values (in a 5-round crawl of 20,000 pages, 10 MiB of peak memory).
//
// Rows are read by a columnar decoder compiled per file from T and the
// file's schema, which fills each row straight from its columns' values
// and reads only T's columns; a T or file of a shape it does not take is
// read through parquet-go's GenericReader (see columnar.go).
//
// Reading never panics: parquet-go can panic on corrupt input, and every
// call into it here recovers and returns an error that names the file. A
// file's footer is checked before parquet-go decodes it, so that a corrupt
// one cannot make it allocate gigabytes (see checkFooter).
package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/storage"
)

// DefaultRowGroupBytes is the default bound on a row group's buffered size.
const DefaultRowGroupBytes = 64 << 20

// BatchSize is the number of rows Rows reads from parquet-go at a time.
const BatchSize = 1024

// WriterOption configures a Writer.
type WriterOption func(*writerConfig)

type writerConfig struct {
	rowGroupBytes int64
	rowGroupRows  int64
	metadata      map[string]string
	spoolDir      string
	compression   Compression
	blobs         []string // the columns of T's fields tagged parquetio:"blob"
}

// blobColumns returns the column names of the top-level fields of the
// struct type t tagged `parquetio:"blob"`.
func blobColumns(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if f.Tag.Get("parquetio") != "blob" {
			continue
		}
		if name, ok := fieldName(f); ok {
			names = append(names, name)
		}
	}
	return names
}

// RowGroupBytes bounds a row group by its estimated buffered size in bytes
// (default DefaultRowGroupBytes). n <= 0 leaves the default.
func RowGroupBytes(n int64) WriterOption {
	return func(c *writerConfig) {
		if n > 0 {
			c.rowGroupBytes = n
		}
	}
}

// RowGroupRows bounds a row group by a number of rows (default: no bound
// other than RowGroupBytes). n <= 0 leaves the default.
func RowGroupRows(n int64) WriterOption {
	return func(c *writerConfig) {
		if n > 0 {
			c.rowGroupRows = n
		}
	}
}

// SpoolDir sets the directory of the temporary files where a writer keeps
// the pages of the row group it is writing, past a small part of each
// column kept in memory (default os.TempDir(); the files are unlinked as
// soon as they are created).
func SpoolDir(dir string) WriterOption {
	return func(c *writerConfig) { c.spoolDir = dir }
}

// Metadata adds a key/value pair to the file's footer metadata.
func Metadata(key, value string) WriterOption {
	return func(c *writerConfig) {
		if c.metadata == nil {
			c.metadata = make(map[string]string)
		}
		c.metadata[key] = value
	}
}

// Writer writes rows of type T as one Parquet file. It is not safe for
// concurrent use.
type Writer[T any] struct {
	w         *parquet.GenericWriter[T]
	cfg       writerConfig
	groupRows int64 // rows in the current row group
	groupBase int64 // writer size when the current row group started
	sinceSize int   // rows since the buffered size was last checked
	rows      int64
	err       error
	closed    bool
}

// NewWriter returns a Writer of rows of type T (a struct type) to w.
// Close must be called to write the footer; it does not close w.
func NewWriter[T any](w io.Writer, opts ...WriterOption) *Writer[T] {
	cfg := newWriterConfig(opts)
	cfg.blobs = blobColumns(reflect.TypeFor[T]())
	wr := &Writer[T]{cfg: cfg}
	popts, err := cfg.parquetOptions()
	if err != nil {
		wr.err = fmt.Errorf("parquetio: cannot write %v: %w", reflect.TypeFor[T](), err)
		return wr
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				wr.err = fmt.Errorf("parquetio: cannot write %v: %v", reflect.TypeFor[T](), r)
			}
		}()
		wr.w = parquet.NewGenericWriter[T](w, popts...)
	}()
	return wr
}

func newWriterConfig(opts []WriterOption) writerConfig {
	cfg := writerConfig{rowGroupBytes: DefaultRowGroupBytes}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// parquetOptions are the parquet-go writer options of c; the error is an
// unknown compression's.
func (c *writerConfig) parquetOptions() ([]parquet.WriterOption, error) {
	codec, err := c.compression.codec()
	if err != nil {
		return nil, err
	}
	popts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.DataPageStatistics(true),
		parquet.CreatedBy("trawl", "", ""),
		parquet.ColumnPageBuffers(&spoolPool{dir: c.spoolDir}),
		parquet.PageBufferSize(pageBufferSize),
	}
	for _, name := range c.blobs {
		popts = append(popts, parquet.SkipPageBounds(name), parquet.SkipPageStatistics(name))
	}
	for k, v := range c.metadata {
		popts = append(popts, parquet.KeyValueMetadata(k, v))
	}
	return popts, nil
}

// sizeCheckEvery is how many rows pass between checks of the buffered size.
const sizeCheckEvery = 512

// Write appends rows to the file.
func (w *Writer[T]) Write(rows ...T) (err error) {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("parquetio: write after close")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquetio: write: panic: %v", r)
		}
		if err != nil {
			w.err = err
		}
	}()
	for len(rows) > 0 {
		n := len(rows)
		if w.cfg.rowGroupRows > 0 && int64(n) > w.cfg.rowGroupRows-w.groupRows {
			n = int(w.cfg.rowGroupRows - w.groupRows)
		}
		if _, err := w.w.Write(rows[:n]); err != nil {
			return fmt.Errorf("parquetio: write: %w", err)
		}
		rows = rows[n:]
		w.rows += int64(n)
		w.groupRows += int64(n)
		w.sinceSize += n
		full := w.cfg.rowGroupRows > 0 && w.groupRows >= w.cfg.rowGroupRows
		if !full && w.sinceSize >= sizeCheckEvery {
			w.sinceSize = 0
			full = w.w.Size()-w.groupBase >= w.cfg.rowGroupBytes
		}
		if full {
			if err := w.w.Flush(); err != nil {
				return fmt.Errorf("parquetio: flush row group: %w", err)
			}
			w.groupRows, w.sinceSize = 0, 0
			w.groupBase = w.w.Size()
		}
	}
	return nil
}

// Rows is the number of rows written so far.
func (w *Writer[T]) Rows() int64 { return w.rows }

// Close flushes the last row group and writes the footer. It does not close
// the underlying io.Writer.
func (w *Writer[T]) Close() (err error) {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquetio: close: panic: %v", r)
		}
		w.err = err
	}()
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("parquetio: close: %w", err)
	}
	return nil
}

// ReaderOption configures Open.
type ReaderOption func(*readerConfig)

type readerConfig struct {
	allowMissing bool
}

// AllowMissingColumns lets a file lack some of T's columns (they read as
// zero values), for reading files written before a field was added. By
// default every column of T must be in the file.
func AllowMissingColumns() ReaderOption {
	return func(c *readerConfig) { c.allowMissing = true }
}

// Reader reads rows of type T from one Parquet file.
type Reader[T any] struct {
	name   string
	file   storage.File
	pf     *parquet.File
	groups []parquet.RowGroup
	// plan is the columnar decoder of T for this file (columnar.go), or
	// nil when parquet-go's reader reads its rows.
	plan *colPlan
}

// Open opens the Parquet file f (named name in errors) for reading rows of
// type T. It reads the footer and checks that the file's schema is
// compatible with T: every column of T must be present (unless
// AllowMissingColumns) with the same physical type; extra columns in the
// file are ignored. Closing the Reader closes f.
func Open[T any](f storage.File, name string, opts ...ReaderOption) (r *Reader[T], err error) {
	var cfg readerConfig
	for _, o := range opts {
		o(&cfg)
	}
	defer func() {
		if p := recover(); p != nil {
			err = panicError(name, p)
		}
	}()
	ra, err := checkFooter(f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("parquetio: open %s: %w", name, err)
	}
	pf, err := parquet.OpenFile(ra, f.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if tr, ok := ra.(*tailReader); ok {
		tr.tail = nil // read: later reads go to the file
	}
	if err != nil {
		return nil, fmt.Errorf("parquetio: open %s: %w", name, err)
	}
	if err := compatible(reflect.TypeFor[T](), pf.Schema(), cfg.allowMissing); err != nil {
		return nil, fmt.Errorf("parquetio: %s: %w", name, err)
	}
	var sum int64
	for _, g := range pf.RowGroups() {
		sum += g.NumRows()
	}
	if sum != pf.NumRows() {
		return nil, fmt.Errorf("parquetio: %s: corrupt footer: row groups hold %d rows, file says %d", name, sum, pf.NumRows())
	}
	r = &Reader[T]{name: name, file: f, pf: pf, groups: pf.RowGroups()}
	if plan, err := compilePlan(reflect.TypeFor[T](), pf.Schema()); err == nil {
		r.plan = plan
	}
	return r, nil
}

// checkFooter checks the footer of the Parquet file f before parquet-go
// reads it, and returns f with the footer kept in memory for parquet-go
// (which reads the same bytes). parquet-go allocates what a footer states
// before checking it against the bytes there are: a corrupt footer length
// (up to 4 GiB) or list length (up to 2^31 items of hundreds of bytes)
// would allocate gigabytes, or end the process with a fatal out-of-memory
// error that no recover catches. So the footer must fit in the file, and
// every list, map and string in it in the footer. Files that do not end in
// a Parquet magic are left to parquet-go to reject.
func checkFooter(f io.ReaderAt, size int64) (io.ReaderAt, error) {
	if size < 8 {
		return f, nil
	}
	var end [8]byte
	if n, _ := f.ReadAt(end[:], size-8); n != len(end) {
		return f, nil
	}
	if magic := string(end[4:]); magic != "PAR1" && magic != "PARE" {
		return f, nil
	}
	// The file is the opening magic, the data, the footer, its length and
	// the closing magic.
	n := int64(binary.LittleEndian.Uint32(end[:4]))
	if n > size-12 {
		return nil, fmt.Errorf("corrupt footer: its length %d exceeds the file's %d bytes", n, size)
	}
	tail := make([]byte, n+8)
	if k, _ := f.ReadAt(tail, size-n-8); k != len(tail) {
		return f, nil // parquet-go reports the read error
	}
	if err := checkThrift(tail[:n]); err != nil {
		return nil, fmt.Errorf("corrupt footer: %w", err)
	}
	return &tailReader{ReaderAt: f, off: size - n - 8, tail: tail}, nil
}

// tailReader serves reads within the end of a file from memory, while it
// holds it.
type tailReader struct {
	io.ReaderAt
	off  int64
	tail []byte
}

func (r *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if r.tail != nil && off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.tail)) {
		return copy(p, r.tail[off-r.off:]), nil
	}
	return r.ReaderAt.ReadAt(p, off)
}

// checkThrift checks that data starts with a Thrift struct in the compact
// protocol (as Parquet footers are) in which every list, set, map and
// string fits in the bytes left: each item takes at least one byte.
func checkThrift(data []byte) error {
	c := thriftChecker{b: data}
	return c.structure(0)
}

type thriftChecker struct {
	b []byte
	i int
}

var errThriftShort = errors.New("truncated Thrift data")

func (c *thriftChecker) left() uint64 { return uint64(len(c.b) - c.i) }

func (c *thriftChecker) skip(n uint64) error {
	if n > c.left() {
		return fmt.Errorf("%d bytes wanted, %d left", n, c.left())
	}
	c.i += int(n)
	return nil
}

func (c *thriftChecker) byte1() (byte, error) {
	if c.i >= len(c.b) {
		return 0, errThriftShort
	}
	c.i++
	return c.b[c.i-1], nil
}

func (c *thriftChecker) uvarint() (uint64, error) {
	x, n := binary.Uvarint(c.b[c.i:])
	if n <= 0 {
		return 0, errThriftShort
	}
	c.i += n
	return x, nil
}

func (c *thriftChecker) structure(depth int) error {
	if depth > 64 {
		return errors.New("structs nested too deep")
	}
	for {
		h, err := c.byte1()
		if err != nil || h == 0 { // 0 ends the struct
			return err
		}
		if h>>4 == 0 { // a field id that is not a delta: a varint follows
			if _, err := c.uvarint(); err != nil {
				return err
			}
		}
		if err := c.value(h&0x0f, depth, true); err != nil {
			return err
		}
	}
}

// value skips one value of compact type t (a bool field's value is in its
// header, a bool item is a byte).
func (c *thriftChecker) value(t byte, depth int, field bool) error {
	switch t {
	case 1, 2: // bool
		if field {
			return nil
		}
		return c.skip(1)
	case 3: // byte
		return c.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := c.uvarint()
		return err
	case 7: // double
		return c.skip(8)
	case 8: // binary
		n, err := c.uvarint()
		if err != nil {
			return err
		}
		return c.skip(n)
	case 9, 10: // list, set
		h, err := c.byte1()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = c.uvarint(); err != nil {
				return err
			}
		}
		if n > c.left() {
			return fmt.Errorf("a list of %d items in %d bytes", n, c.left())
		}
		for range n {
			if err := c.value(h&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := c.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := c.byte1()
		if err != nil {
			return err
		}
		if n > c.left()/2 {
			return fmt.Errorf("a map of %d entries in %d bytes", n, c.left())
		}
		for range n {
			if err := c.value(kv>>4, depth+1, false); err != nil {
				return err
			}
			if err := c.value(kv&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return c.structure(depth + 1)
	case 13: // uuid
		return c.skip(16)
	}
	return fmt.Errorf("unknown Thrift type %d", t)
}

func panicError(name string, p any) error {
	stack := string(debug.Stack())
	if i := strings.Index(stack, "panic("); i >= 0 {
		stack = stack[i:]
	}
	if len(stack) > 600 {
		stack = stack[:600]
	}
	return fmt.Errorf("parquetio: %s: corrupt or unreadable Parquet (parquet-go panicked: %v)\n%s", name, p, stack)
}

// compatible checks that the file schema has every leaf column of T's schema
// with the same physical kind.
func compatible(t reflect.Type, file *parquet.Schema, allowMissing bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("row type %v is not a struct", t)
	}
	want := parquet.SchemaOf(reflect.New(t).Elem().Interface())
	var missing, wrong []string
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		fl, ok := file.Lookup(path...)
		if !ok {
			missing = append(missing, strings.Join(path, "."))
			continue
		}
		wk, fk := wl.Node.Type().Kind(), fl.Node.Type().Kind()
		if wk != fk {
			wrong = append(wrong, fmt.Sprintf("%s is %v in the file, %v in %v", strings.Join(path, "."), fk, wk, t))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("schema does not match %v: %s", t, strings.Join(wrong, "; "))
	}
	if len(missing) > 0 && (!allowMissing || len(missing) == len(want.Columns())) {
		return fmt.Errorf("schema does not match %v: file lacks column(s) %s", t, strings.Join(missing, ", "))
	}
	return nil
}

// NumRowGroups is the number of row groups in the file.
func (r *Reader[T]) NumRowGroups() int { return len(r.groups) }

// NumRows is the number of rows in the file.
func (r *Reader[T]) NumRows() int64 { return r.pf.NumRows() }

// RowGroupRows is the number of rows in row group i.
func (r *Reader[T]) RowGroupRows(i int) int64 { return r.groups[i].NumRows() }

// RowGroupBytes is the compressed size in bytes of row group i (as the
// footer states it).
func (r *Reader[T]) RowGroupBytes(i int) int64 {
	md := r.pf.Metadata()
	if i < len(md.RowGroups) {
		if s := md.RowGroups[i].TotalCompressedSize; s > 0 {
			return s
		}
		return md.RowGroups[i].TotalByteSize
	}
	return 0
}

// Rows iterates over the rows of row groups [start, end). Reading stops at
// the first error, which is yielded with a zero T; errors name the file.
// Rows are read in batches (64 rows with the columnar decoder; BatchSize,
// or the row group's size if smaller, with parquet-go's reader); each
// yielded T is the caller's.
func (r *Reader[T]) Rows(start, end int) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if start < 0 || end > len(r.groups) || start > end {
			yield(zero, fmt.Errorf("parquetio: %s: row group range [%d,%d) out of [0,%d)", r.name, start, end, len(r.groups)))
			return
		}
		if r.plan != nil {
			r.columnarRows(start, end, yield)
			return
		}
		buf := make([]T, BatchSize)
		for g := start; g < end; g++ {
			var gr *parquet.GenericReader[T]
			if err := r.guard(g, func() error {
				gr = parquet.NewGenericRowGroupReader[T](r.groups[g])
				return nil
			}); err != nil {
				yield(zero, err)
				return
			}
			want := r.groups[g].NumRows()
			// parquet-go's Read costs in proportion to the buffer it is
			// given, not to the rows it finds (a 1024-row buffer makes
			// reading a 2-row group of Datums some 20 times slower), so
			// a small row group is read with a buffer its size.
			batch := buf[:max(1, min(int64(len(buf)), want))]
			var got int64
			for {
				clear(batch)
				var n int
				var rerr error
				err := r.guard(g, func() error {
					n, rerr = gr.Read(batch)
					return nil
				})
				if err != nil {
					_ = r.guard(g, gr.Close)
					yield(zero, err)
					return
				}
				got += int64(n)
				for i := 0; i < n; i++ {
					if !yield(batch[i], nil) {
						_ = r.guard(g, gr.Close)
						return
					}
				}
				if rerr == io.EOF || (rerr == nil && n == 0) {
					break
				}
				if rerr != nil {
					_ = r.guard(g, gr.Close)
					yield(zero, fmt.Errorf("parquetio: %s: row group %d: %w", r.name, g, rerr))
					return
				}
			}
			if err := r.guard(g, gr.Close); err != nil {
				yield(zero, err)
				return
			}
			if got != want {
				yield(zero, fmt.Errorf("parquetio: %s: row group %d: read %d rows, footer says %d", r.name, g, got, want))
				return
			}
		}
	}
}

// columnarRows is Rows with the columnar decoder. Rows are decoded in
// batches under guard, and yielded outside it, so that a panic in the
// caller's loop is not taken for a corrupt file.
func (r *Reader[T]) columnarRows(start, end int, yield func(T, error) bool) {
	var zero T
	buf := make([]T, columnarBatch)
	for g := start; g < end; g++ {
		var d *rowGroupDecoder
		if err := r.guard(g, func() error {
			d = newRowGroupDecoder(r.plan, r.groups[g])
			return nil
		}); err != nil {
			yield(zero, err)
			return
		}
		stopped, err := r.columnarGroup(g, d, buf, yield)
		if cerr := r.guard(g, d.close); err == nil {
			err = cerr
		}
		if stopped {
			return
		}
		if err != nil {
			yield(zero, err)
			return
		}
	}
}

// columnarGroup yields the rows of row group g from d, decoding them into
// buf a batch at a time; stopped says the caller ended the loop.
func (r *Reader[T]) columnarGroup(g int, d *rowGroupDecoder, buf []T, yield func(T, error) bool) (stopped bool, err error) {
	want := r.groups[g].NumRows()
	for got := int64(0); got < want; {
		batch := buf[:min(int64(len(buf)), want-got)]
		clear(batch)
		if err := r.guard(g, func() error {
			if err := decodeRows(d, batch); err != nil {
				return fmt.Errorf("row %d: %w", got, err)
			}
			return nil
		}); err != nil {
			return false, err
		}
		got += int64(len(batch))
		for i := range batch {
			if !yield(batch[i], nil) {
				return true, nil
			}
		}
	}
	return false, r.guard(g, func() error { return d.finish(want) })
}

// guard runs f, turning a panic into an error naming the file and row group.
func (r *Reader[T]) guard(g int, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(fmt.Sprintf("%s (row group %d)", r.name, g), p)
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("parquetio: %s: row group %d: %w", r.name, g, err)
	}
	return nil
}

// All iterates over every row of the file.
func (r *Reader[T]) All() iter.Seq2[T, error] { return r.Rows(0, len(r.groups)) }

// Close closes the underlying file.
func (r *Reader[T]) Close() error {
	if err := r.file.Close(); err != nil {
		return fmt.Errorf("parquetio: close %s: %w", r.name, err)
	}
	return nil
}

// ReadAll reads every row of the Parquet file path of fsys.
func ReadAll[T any](fsys storage.FS, path string) ([]T, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquetio: %w", err)
	}
	r, err := Open[T](f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	defer r.Close()
	out := make([]T, 0, r.NumRows())
	for row, err := range r.All() {
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// WriteFile writes rows as a new Parquet file path of fsys (which must not
// exist). On error the partial file is removed.
func WriteFile[T any](fsys storage.FS, path string, rows []T, opts ...WriterOption) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("parquetio: %w", err)
	}
	w := NewWriter[T](f, opts...)
	err = w.Write(rows...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("parquetio: close %s: %w", path, cerr)
	}
	if err != nil {
		_ = fsys.RemoveAll(path)
		return fmt.Errorf("parquetio: write %s: %w", path, err)
	}
	return nil
}

// pageBufferSize is the size of a column's page buffer in a writer: a page
// is cut when it fills. parquet-go's default, 256 KiB, makes an open
// writer of the CrawlDB's 30-odd columns hold about 7 MiB whatever it
// writes. Measured on a 300,000-URL CrawlDB (bench/crawldb): 64 KiB pages
// made it 7.3% larger and 128 KiB 3.0%; 128 KiB halves what a writer
// holds for that.
const pageBufferSize = 128 << 10
