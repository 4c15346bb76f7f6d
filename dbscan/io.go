package dbscan

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// I/O for offline experiments (`trawl dbscan`): points from CSV or
// Parquet, labels to CSV, and points to the PointRow Parquet the
// partitioned jobs read.

// ReadCSV reads points from CSV: a header row naming the columns, then one
// row per point, every field a number (as strconv.ParseFloat reads it;
// surrounding spaces are ignored), used as given. It returns the points
// and the header. An error names the input (name), the line and the
// column; NaN and infinities are errors too.
//
// The rows are parsed in parallel, in chunks of whole lines, on
// GOMAXPROCS goroutines; the points keep the rows' order. From the first
// chunk holding a double quote on, the rest is read by encoding/csv on
// one goroutine, which gives quoted fields their exact CSV meaning.
func ReadCSV(r io.Reader, name string) (Points, []string, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	cr := csv.NewReader(br) // reads from br itself: it is big enough
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return Points{}, nil, fmt.Errorf("dbscan: %s: empty, no header row", name)
	}
	if err != nil {
		return Points{}, nil, fmt.Errorf("dbscan: %s: %w", name, err)
	}
	header = append([]string(nil), header...)
	last, _ := cr.FieldPos(len(header) - 1)
	last += strings.Count(header[len(header)-1], "\n")
	for i, h := range header {
		header[i] = strings.TrimSpace(h)
		if _, err := strconv.ParseFloat(header[i], 64); err == nil && header[i] != "" {
			return Points{}, nil, fmt.Errorf("dbscan: %s:1: the first row should be a header, but column %d is the number %s", name, i+1, header[i])
		}
	}
	rr := &csvRows{name: name, header: header, workers: runtime.GOMAXPROCS(0), chunk: csvChunkSize, size: sizeOf(r)}
	pts, err := rr.read(br, last+1)
	if err != nil {
		return Points{}, nil, err
	}
	return pts, header, nil
}

// csvChunkSize is the size of the chunks of lines ReadCSV parses in
// parallel.
const csvChunkSize = 1 << 20

// csvRows reads the rows of a CSV file after its header: in chunks of
// about chunk bytes, on workers goroutines. size is the input's size in
// bytes when known (else 0): the points' slice is then allocated once,
// from the first chunk's bytes per row.
type csvRows struct {
	name    string
	header  []string
	workers int
	chunk   int
	size    int64
}

// sizeOf returns the size of r when it says (a storage.File or an
// *os.File), else 0.
func sizeOf(r io.Reader) int64 {
	switch f := r.(type) {
	case interface{ Size() int64 }:
		return f.Size()
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

// csvBufs are a chunk's buffers, reused for later chunks.
type csvBufs struct {
	buf  []byte
	vals []float64
}

// csvChunk is a chunk of whole lines: buf, whose first line is line
// number line. A worker parses it into vals or err and then closes done.
// A chunk with a double quote is not parsed (quoted): the rest of the
// input, from its first line on, is rest.
type csvChunk struct {
	buf    []byte
	line   int
	vals   []float64
	err    error
	done   chan struct{}
	quoted bool
	rest   io.Reader
}

// read parses the rows of br, whose first line is line number line.
func (rr *csvRows) read(br *bufio.Reader, line int) (Points, error) {
	pts := NewPoints(len(rr.header), 1024)
	var (
		order = make(chan *csvChunk, 2*rr.workers+2) // chunks in input order
		work  = make(chan *csvChunk, 2*rr.workers+2)
		free  = make(chan csvBufs, 2*rr.workers+4) // buffers to reuse
		quit  = make(chan struct{})
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		defer func() {
			// A reader that panics is an error, after the chunks before.
			if p := recover(); p != nil {
				ch := &csvChunk{err: fmt.Errorf("dbscan: %s: read: %v", rr.name, p), done: make(chan struct{})}
				close(ch.done)
				select {
				case order <- ch:
				case <-quit:
				}
			}
		}()
		rr.split(br, line, order, work, free, quit)
	}()
	for range rr.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				select {
				case <-quit:
					ch.err = errors.New("stopped")
				default:
					ch.vals, ch.err = rr.parseSafe(ch.buf, ch.line, ch.vals)
				}
				close(ch.done)
			}
		}()
	}
	stop := func() {
		close(quit)
		for range order {
		}
		wg.Wait()
	}
	var read int64 // bytes of the chunks appended
	for ch := range order {
		<-ch.done
		if ch.err != nil {
			stop()
			return Points{}, ch.err
		}
		if ch.quoted {
			stop()
			if err := rr.readQuoted(ch.rest, ch.line, &pts); err != nil {
				return Points{}, err
			}
			return pts, nil
		}
		read += int64(len(ch.buf))
		if need := len(pts.Data) + len(ch.vals); need > cap(pts.Data) && rr.size > 0 && read > 0 {
			// Room for the rows of the whole input at the bytes per
			// row seen so far, and a little more.
			est := int(float64(need)*float64(rr.size)/float64(read)*1.02) + 64*len(rr.header)
			pts.Data = slices.Grow(pts.Data, max(est, need)-len(pts.Data))
		}
		pts.Data = append(pts.Data, ch.vals...)
		select {
		case free <- csvBufs{ch.buf[:0], ch.vals[:0]}:
		default:
		}
	}
	wg.Wait()
	return pts, nil
}

// split cuts br into chunks of whole lines, sending each to order and,
// to be parsed, to work, until the input ends, a chunk holds a double
// quote (then it sends that chunk as quoted and stops) or quit is closed.
func (rr *csvRows) split(br *bufio.Reader, line int, order, work chan<- *csvChunk, free <-chan csvBufs, quit <-chan struct{}) {
	var carry []byte
	for {
		var bufs csvBufs
		select {
		case bufs = <-free:
		default:
		}
		buf := bufs.buf
		if cap(buf) < rr.chunk+len(carry) {
			buf = make([]byte, 0, rr.chunk+len(carry))
		}
		buf = append(buf[:0], carry...)
		n, err := io.ReadFull(br, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		end := err == io.EOF || err == io.ErrUnexpectedEOF
		ch := &csvChunk{line: line, vals: bufs.vals, done: make(chan struct{})}
		if err != nil && !end {
			ch.err = fmt.Errorf("dbscan: %s:%d: %w", rr.name, line, err)
			close(ch.done)
			select {
			case order <- ch:
			case <-quit:
			}
			return
		}
		cut := len(buf)
		if !end {
			cut = bytes.LastIndexByte(buf, '\n') + 1
			if cut == 0 {
				// A line longer than the buffer: read on.
				carry = buf
				continue
			}
		}
		ch.buf = buf[:cut]
		carry = append([]byte(nil), buf[cut:]...)
		if bytes.IndexByte(buf, '"') >= 0 {
			ch.quoted = true
			ch.rest = io.MultiReader(bytes.NewReader(buf), br)
			close(ch.done)
			select {
			case order <- ch:
			case <-quit:
			}
			return
		}
		line += bytes.Count(ch.buf, []byte{'\n'})
		select {
		case order <- ch:
		case <-quit:
			return
		}
		select {
		case work <- ch:
		case <-quit:
			return
		}
		if end {
			return
		}
	}
}

// parse parses the lines of b, the first of which is line number line,
// appending their values to vals, as encoding/csv would read them
// (TrimLeadingSpace, every row as many fields as the header, empty lines
// skipped, a trailing carriage return dropped) when b holds no double
// quote.
func (rr *csvRows) parse(b []byte, line int, vals []float64) ([]float64, error) {
	dim := len(rr.header)
	vals = slices.Grow(vals[:0], (bytes.Count(b, []byte{'\n'})+1)*dim)
	for ; len(b) > 0; line++ {
		ln := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			ln, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if n := len(ln); n > 0 && ln[n-1] == '\r' {
			ln = ln[:n-1]
		}
		if len(ln) == 0 {
			continue
		}
		if bytes.Count(ln, []byte{','}) != dim-1 {
			return vals, fmt.Errorf("dbscan: %s:%d: %w", rr.name, line, csv.ErrFieldCount)
		}
		for k := range dim {
			f := ln
			if i := bytes.IndexByte(ln, ','); i >= 0 {
				f, ln = ln[:i], ln[i+1:]
			}
			v, err := strconv.ParseFloat(string(bytes.TrimSpace(f)), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return vals, fmt.Errorf("dbscan: %s:%d: column %q: %q is not a finite number", rr.name, line, rr.header[k], bytes.TrimLeftFunc(f, unicode.IsSpace))
			}
			vals = append(vals, v)
		}
	}
	return vals, nil
}

// parseSafe is parse with a panic turned into an error naming the chunk's
// first line.
func (rr *csvRows) parseSafe(b []byte, line int, vals []float64) (_ []float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dbscan: %s:%d: internal error parsing the rows from here: %v", rr.name, line, p)
		}
	}()
	return rr.parse(b, line, vals)
}

// readQuoted reads the rows of r, the first of which is on line number
// line, with encoding/csv, appending them to pts.
func (rr *csvRows) readQuoted(r io.Reader, line int, pts *Points) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = len(rr.header)
	off := line - 1
	row := make([]float64, len(rr.header))
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("dbscan: %s:%d: %w", rr.name, off+pe.Line, pe.Err)
			}
			return fmt.Errorf("dbscan: %s: %w", rr.name, err)
		}
		for i, f := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				l, _ := cr.FieldPos(i)
				return fmt.Errorf("dbscan: %s:%d: column %q: %q is not a finite number", rr.name, off+l, rr.header[i], f)
			}
			row[i] = v
		}
		pts.Data = append(pts.Data, row...)
	}
}

// ReadParquet reads points from a Parquet file: one point per row, from
// the named columns, or, when columns is empty, from every top-level
// column of a numeric type (INT32, INT64, FLOAT, DOUBLE without a
// decimal, date or time annotation) in schema order; other columns (a
// URL, say) are skipped. Values are used as given. It returns the points
// and the columns used. A null, NaN or infinite value is an error naming
// the file, the row and the column; a corrupt file is an error, never a
// panic.
func ReadParquet(f storage.File, name string, columns []string) (pts Points, used []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dbscan: %s: corrupt or unreadable Parquet (%v)\n%s", name, p, firstLines(debug.Stack(), 12))
		}
	}()
	pf, err := parquet.OpenFile(f, f.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return Points{}, nil, fmt.Errorf("dbscan: open %s: %w", name, err)
	}
	cols, err := newParquetColumns(pf.Schema(), name, columns)
	if err != nil {
		return Points{}, nil, err
	}
	pts = NewPoints(len(cols.used), int(pf.NumRows()))
	var rowNo int64
	for g, rg := range pf.RowGroups() {
		if err := cols.readGroup(rg, g, &pts, &rowNo); err != nil {
			return Points{}, nil, err
		}
	}
	if rowNo != pf.NumRows() {
		return Points{}, nil, fmt.Errorf("dbscan: %s: read %d rows, the footer says %d", name, rowNo, pf.NumRows())
	}
	return pts, cols.used, nil
}

// parquetColumns is what ReadParquet reads from a file: the leaf column
// of each dimension, and the columns' names.
type parquetColumns struct {
	// name is the file's name, for errors.
	name string
	// used names the dimensions' columns; where maps a leaf column index
	// to its dimension.
	used  []string
	where map[int]int
	// buf, x and seen are readGroup's buffers, reused for every group.
	buf  []parquet.Row
	x    []float64
	seen []bool
}

// newParquetColumns chooses the columns of a file's schema that
// ReadParquet reads (see there): the named ones, checked, or every
// numeric top-level column.
func newParquetColumns(schema *parquet.Schema, name string, columns []string) (*parquetColumns, error) {
	var colIdx []int
	var used []string
	if len(columns) == 0 {
		for _, fld := range schema.Fields() {
			if numericColumn(fld) == nil {
				lc, _ := schema.Lookup(fld.Name())
				colIdx = append(colIdx, lc.ColumnIndex)
				used = append(used, fld.Name())
			}
		}
		if len(used) == 0 {
			return nil, fmt.Errorf("dbscan: %s has no numeric top-level column", name)
		}
	} else {
		for _, c := range columns {
			lc, ok := schema.Lookup(c)
			if !ok || len(lc.Path) != 1 {
				return nil, fmt.Errorf("dbscan: %s has no top-level column %q", name, c)
			}
			if err := numericColumn(lc.Node); err != nil {
				return nil, fmt.Errorf("dbscan: %s: column %q: %w", name, c, err)
			}
			colIdx = append(colIdx, lc.ColumnIndex)
			used = append(used, c)
		}
	}
	where := make(map[int]int, len(colIdx)) // leaf column -> dimension
	for d, c := range colIdx {
		if _, dup := where[c]; dup {
			return nil, fmt.Errorf("dbscan: %s: column %q given twice", name, used[d])
		}
		where[c] = d
	}
	return &parquetColumns{name: name, used: used, where: where,
		buf: make([]parquet.Row, 256), x: make([]float64, len(used)), seen: make([]bool, len(used))}, nil
}

// readGroup appends the points of row group g, rg, to pts; *rowNo counts
// the rows read before and after it.
func (pc *parquetColumns) readGroup(rg parquet.RowGroup, g int, pts *Points, rowNo *int64) error {
	rows := rg.Rows()
	for {
		n, rerr := rows.ReadRows(pc.buf)
		for _, row := range pc.buf[:n] {
			if err := pc.point(row, *rowNo); err != nil {
				rows.Close()
				return err
			}
			pts.Data = append(pts.Data, pc.x...)
			*rowNo++
		}
		if rerr == io.EOF || (rerr == nil && n == 0) {
			break
		}
		if rerr != nil {
			rows.Close()
			return fmt.Errorf("dbscan: %s: row group %d: %w", pc.name, g, rerr)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("dbscan: %s: row group %d: %w", pc.name, g, err)
	}
	return nil
}

// point sets pc.x to the coordinates of row number rowNo, checking that
// every dimension has a finite value.
func (pc *parquetColumns) point(row parquet.Row, rowNo int64) error {
	x, seen := pc.x, pc.seen
	clear(seen)
	for _, v := range row {
		d, ok := pc.where[v.Column()]
		if !ok {
			continue
		}
		val, err := numericValue(v)
		if err != nil {
			return fmt.Errorf("dbscan: %s: row %d, column %q: %w", pc.name, rowNo, pc.used[d], err)
		}
		x[d], seen[d] = val, true
	}
	for d, ok := range seen {
		if !ok {
			return fmt.Errorf("dbscan: %s: row %d has no value in column %q", pc.name, rowNo, pc.used[d])
		}
	}
	return nil
}

// numericColumn says why a schema node is not a numeric top-level column
// (nil if it is one).
func numericColumn(n parquet.Node) error {
	if !n.Leaf() || n.Repeated() {
		return errors.New("not a plain (non-nested, non-repeated) column")
	}
	switch n.Type().Kind() {
	case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
	default:
		return fmt.Errorf("type %v is not numeric", n.Type().Kind())
	}
	if lt := n.Type().LogicalType(); lt != nil && lt.Value != nil {
		if _, ok := lt.Value.(*format.IntType); !ok {
			return fmt.Errorf("logical type %v is not a plain number", lt)
		}
	}
	return nil
}

func numericValue(v parquet.Value) (float64, error) {
	if v.IsNull() {
		return 0, errors.New("null")
	}
	var f float64
	switch v.Kind() {
	case parquet.Int32:
		f = float64(v.Int32())
	case parquet.Int64:
		f = float64(v.Int64())
	case parquet.Float:
		f = float64(v.Float())
	case parquet.Double:
		f = v.Double()
	default:
		return 0, fmt.Errorf("a %v value", v.Kind())
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%v is not a finite number", f)
	}
	return f, nil
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// ReadPoints reads points from uri: a CSV file (name ending in .csv, see
// ReadCSV; columns then selects and orders columns by header name), or a
// Parquet file or directory of Parquet part files (see ReadParquet). It
// returns the points and their column names.
func ReadPoints(res mapreduce.Resolver, uri string, columns []string) (Points, []string, error) {
	if res == nil {
		res = storage.NewResolver()
	}
	fsys, p, err := res.Resolve(uri)
	if err != nil {
		return Points{}, nil, fmt.Errorf("dbscan: %w", err)
	}
	st, err := fsys.Stat(p)
	if err != nil {
		return Points{}, nil, fmt.Errorf("dbscan: %w", err)
	}
	if !st.IsDir() && strings.EqualFold(path.Ext(p), ".csv") {
		f, err := fsys.Open(p)
		if err != nil {
			return Points{}, nil, fmt.Errorf("dbscan: %w", err)
		}
		defer f.Close()
		pts, header, err := ReadCSV(f, uri)
		if err != nil || len(columns) == 0 {
			return pts, header, err
		}
		return selectColumns(pts, header, columns, uri)
	}
	files := []string{p}
	if st.IsDir() {
		ents, err := fsys.ReadDir(p)
		if err != nil {
			return Points{}, nil, fmt.Errorf("dbscan: %w", err)
		}
		files = files[:0]
		for _, e := range ents {
			if parquetio.IsPart(e) {
				files = append(files, path.Join(p, e.Name()))
			}
		}
		if len(files) == 0 {
			return Points{}, nil, fmt.Errorf("dbscan: %s holds no Parquet file", uri)
		}
	}
	var all Points
	var names []string
	for _, fp := range files {
		f, err := fsys.Open(fp)
		if err != nil {
			return Points{}, nil, fmt.Errorf("dbscan: %w", err)
		}
		pts, used, err := ReadParquet(f, fp, columns)
		f.Close()
		if err != nil {
			return Points{}, nil, err
		}
		if names == nil {
			all, names = pts, used
			continue
		}
		if strings.Join(used, "\x00") != strings.Join(names, "\x00") {
			return Points{}, nil, fmt.Errorf("dbscan: %s has columns %v, the files before it %v", fp, used, names)
		}
		all.Data = append(all.Data, pts.Data...)
	}
	return all, names, nil
}

// selectColumns keeps the named columns of pts, in the order given.
func selectColumns(pts Points, header, columns []string, name string) (Points, []string, error) {
	idx := make([]int, len(columns))
	for j, c := range columns {
		idx[j] = -1
		for i, h := range header {
			if h == c {
				idx[j] = i
			}
		}
		if idx[j] < 0 {
			return Points{}, nil, fmt.Errorf("dbscan: %s has no column %q (it has %s)", name, c, strings.Join(header, ", "))
		}
	}
	out := NewPoints(len(columns), pts.Len())
	row := make([]float64, len(columns))
	for i := range pts.Len() {
		x := pts.At(i)
		for j, k := range idx {
			row[j] = x[k]
		}
		out.Data = append(out.Data, row...)
	}
	return out, append([]string(nil), columns...), nil
}

// WriteLabelsCSV writes labels as CSV: the header "label", then one label
// per line in the order given (Noise is -1).
func WriteLabelsCSV(w io.Writer, labels []int32) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("label\n")
	var b []byte
	for _, l := range labels {
		b = strconv.AppendInt(b[:0], int64(l), 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dbscan: write labels: %w", err)
	}
	return nil
}

// PointKey is the key WritePointRows gives point i: its index, zero-padded
// to 12 digits, so that the keys' order is the points' order.
func PointKey(i int) string { return fmt.Sprintf("%012d", i) }

// WritePointRows writes pts as one Parquet file of PointRow rows keyed by
// PointKey, the partitioned jobs' input (Source.Points).
func WritePointRows(w io.Writer, pts Points) error {
	pw := parquetio.NewWriter[PointRow](w)
	batch := make([]PointRow, 0, 1024)
	for i := range pts.Len() {
		batch = append(batch, PointRow{Key: PointKey(i), X: pts.At(i)})
		if len(batch) == cap(batch) {
			if err := pw.Write(batch...); err != nil {
				return fmt.Errorf("dbscan: write points: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := pw.Write(batch...); err != nil {
		return fmt.Errorf("dbscan: write points: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("dbscan: write points: %w", err)
	}
	return nil
}

// LabelsOf turns the assignments of points written by WritePointRows
// (sorted by key, as ReadAssignments returns them) back into labels in
// point order, checking that every point 0..n-1 is there once.
func LabelsOf(as []Assignment, n int) ([]int32, error) {
	if len(as) != n {
		return nil, fmt.Errorf("dbscan: %d assignments for %d points", len(as), n)
	}
	labels := make([]int32, n)
	for i, a := range as {
		if a.Key != PointKey(i) {
			return nil, fmt.Errorf("dbscan: assignment %d is for key %q, want %q", i, a.Key, PointKey(i))
		}
		labels[i] = a.Label
	}
	return labels, nil
}
