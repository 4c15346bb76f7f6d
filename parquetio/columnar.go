package parquetio

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A columnar decoder fills rows of T straight from the values of the file's
// column chunks, one column cursor per leaf of T, with setters compiled
// once per file from T's fields and the file's schema. parquet-go's
// GenericReader instead builds every row as a []parquet.Value and
// reconstructs it through reflection, which on CrawlDB rows costs about
// twice as much, with 70% more bytes allocated (BenchmarkReadDatum). The
// decoder also reads only the columns of T, so that a narrower struct
// reads fewer columns.
//
// The decoder takes the shapes trawl's row types have: scalar fields
// (bool, integers, floats, strings, []byte and time.Time as a TIMESTAMP),
// required or optional; nested structs written as required groups; a
// slice written as a LIST of scalars or of flat structs; and a map of
// scalars written as a MAP. A type or file with anything else (pointers,
// lists within lists, optional groups, a column the file lacks, a byte
// array of a logical type parquet-go converts such as JSON) gets no
// decoder, and its rows are read by parquet-go as before. Rows come out
// equal to parquet-go's: a null reads as the zero value, an empty list as
// an empty (not nil) slice, an empty map as an empty map.

// colPlan is the compiled decoder of T for one file schema.
type colPlan struct {
	leaves []leafPlan  // the top-level scalar leaves, nested structs' included
	groups []groupPlan // the lists and maps
	ncols  int         // leaves in all (the cursors a row group needs)
}

// leafPlan decodes one scalar leaf into the field at off of a struct.
type leafPlan struct {
	col    int // the file's column index
	cursor int // index of the cursor in a row group's cursors
	off    uintptr
	maxDef int
	set    setter
	name   string
}

// groupPlan decodes a list or map field at off from the leaves under it.
type groupPlan struct {
	off    uintptr
	typ    reflect.Type // the field's type: a slice or a map
	isMap  bool
	repDef int        // the definition level at which an element exists
	elem   []leafPlan // offsets within the element (list) or key, value (map)
	size   uintptr    // element size, for lists
	name   string
}

// setter stores a non-null value at p.
type setter func(p unsafe.Pointer, v *parquet.Value, last *string)

// errNoPlan means T or the file has a shape the columnar decoder does not
// take; parquet-go's reader is used instead.
var errNoPlan = errors.New("parquetio: no columnar plan")

var timeType = reflect.TypeFor[time.Time]()

// compilePlan compiles the decoder of rows of type t from file.
func compilePlan(t reflect.Type, file *parquet.Schema) (*colPlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, errNoPlan
	}
	p := &colPlan{}
	if err := p.addStruct(t, file, nil, 0, 0); err != nil {
		return nil, err
	}
	return p, nil
}

// fieldName returns the column name of struct field f, or "" to skip it.
func fieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag, ok := f.Tag.Lookup("parquet")
	if !ok {
		return f.Name, true
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

// addStruct adds the fields of struct t at base (under path, in the file).
// depthDef is the definition level of the struct's own node.
func (p *colPlan) addStruct(t reflect.Type, file *parquet.Schema, path []string, base uintptr, depthDef int) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, ok := fieldName(f)
		if !ok {
			continue
		}
		fp := childPath(path, name)
		off := base + f.Offset
		ft := f.Type
		switch {
		case ft == timeType || isScalar(ft):
			lp, err := leafOf(file, fp, ft, off, 0)
			if err != nil {
				return err
			}
			if lp.maxDef > depthDef+1 || lp.maxDef < depthDef {
				return errNoPlan
			}
			lp.cursor = p.ncols
			p.ncols++
			p.leaves = append(p.leaves, lp)
		case ft.Kind() == reflect.Struct:
			node, ok := nodeAt(file, fp)
			if !ok || node.Leaf() || !node.Required() {
				return errNoPlan
			}
			if err := p.addStruct(ft, file, fp, off, depthDef); err != nil {
				return err
			}
		case ft.Kind() == reflect.Slice:
			g, err := p.listOf(file, fp, ft, off, depthDef)
			if err != nil {
				return err
			}
			p.groups = append(p.groups, g)
		case ft.Kind() == reflect.Map:
			g, err := p.mapOf(file, fp, ft, off, depthDef)
			if err != nil {
				return err
			}
			p.groups = append(p.groups, g)
		default:
			return errNoPlan
		}
	}
	return nil
}

// listOf compiles a slice field written as a required LIST group:
// name (LIST) { repeated group list { required element } }.
func (p *colPlan) listOf(file *parquet.Schema, fp []string, ft reflect.Type, off uintptr, depthDef int) (groupPlan, error) {
	node, ok := nodeAt(file, fp)
	if !ok || node.Leaf() || !node.Required() || !isList(node) {
		return groupPlan{}, errNoPlan
	}
	lp := childPath(fp, "list")
	ln, ok := nodeAt(file, lp)
	if !ok || ln.Leaf() || !ln.Repeated() {
		return groupPlan{}, errNoPlan
	}
	ep := childPath(lp, "element")
	en, ok := nodeAt(file, ep)
	if !ok || !en.Required() {
		return groupPlan{}, errNoPlan
	}
	g := groupPlan{off: off, typ: ft, repDef: depthDef + 1, size: ft.Elem().Size(), name: strings.Join(fp, ".")}
	et := ft.Elem()
	switch {
	case et == timeType || isScalar(et):
		if !en.Leaf() {
			return groupPlan{}, errNoPlan
		}
		l, err := leafOf(file, ep, et, 0, 1)
		if err != nil {
			return groupPlan{}, err
		}
		g.elem = append(g.elem, l)
	case et.Kind() == reflect.Struct:
		if en.Leaf() {
			return groupPlan{}, errNoPlan
		}
		for i := 0; i < et.NumField(); i++ {
			f := et.Field(i)
			name, ok := fieldName(f)
			if !ok {
				continue
			}
			if f.Type != timeType && !isScalar(f.Type) {
				return groupPlan{}, errNoPlan
			}
			l, err := leafOf(file, childPath(ep, name), f.Type, f.Offset, 1)
			if err != nil {
				return groupPlan{}, err
			}
			g.elem = append(g.elem, l)
		}
	default:
		return groupPlan{}, errNoPlan
	}
	return p.finishGroup(g)
}

// mapOf compiles a map field written as a required MAP group:
// name (MAP) { repeated group key_value { required key; value } }.
func (p *colPlan) mapOf(file *parquet.Schema, fp []string, ft reflect.Type, off uintptr, depthDef int) (groupPlan, error) {
	node, ok := nodeAt(file, fp)
	if !ok || node.Leaf() || !node.Required() || !isMap(node) {
		return groupPlan{}, errNoPlan
	}
	kvp := childPath(fp, "key_value")
	kv, ok := nodeAt(file, kvp)
	if !ok || kv.Leaf() || !kv.Repeated() || len(kv.Fields()) != 2 {
		return groupPlan{}, errNoPlan
	}
	kt, vt := ft.Key(), ft.Elem()
	if !isScalar(kt) || !isScalar(vt) {
		return groupPlan{}, errNoPlan
	}
	g := groupPlan{off: off, typ: ft, isMap: true, repDef: depthDef + 1, name: strings.Join(fp, ".")}
	for _, part := range []struct {
		name string
		t    reflect.Type
	}{{"key", kt}, {"value", vt}} {
		l, err := leafOf(file, childPath(kvp, part.name), part.t, 0, 1)
		if err != nil {
			return groupPlan{}, err
		}
		g.elem = append(g.elem, l)
	}
	if g.elem[0].maxDef != g.repDef {
		return groupPlan{}, errNoPlan // a map key is required
	}
	return p.finishGroup(g)
}

// finishGroup checks the levels of a group's leaves and gives them cursors.
func (p *colPlan) finishGroup(g groupPlan) (groupPlan, error) {
	if len(g.elem) == 0 {
		return groupPlan{}, errNoPlan
	}
	for i := range g.elem {
		l := &g.elem[i]
		if l.maxDef < g.repDef || l.maxDef > g.repDef+1 {
			return groupPlan{}, errNoPlan
		}
		l.cursor = p.ncols
		p.ncols++
	}
	return g, nil
}

// childPath returns a new path: path, then name.
func childPath(path []string, name string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), name)
}

// nodeAt returns the file schema's node at path.
func nodeAt(file *parquet.Schema, path []string) (parquet.Node, bool) {
	var n parquet.Node = file
	for _, name := range path {
		var next parquet.Node
		for _, f := range n.Fields() {
			if f.Name() == name {
				next = f
				break
			}
		}
		if next == nil {
			return nil, false
		}
		n = next
	}
	return n, true
}

// isList and isMap report whether node's logical type is LIST or MAP.
func isList(node parquet.Node) bool { return logicalIs[*format.ListType](node) }
func isMap(node parquet.Node) bool  { return logicalIs[*format.MapType](node) }

// logicalIs reports whether node's logical type is a T.
func logicalIs[T format.LogicalTypeValue](node parquet.Node) bool {
	lt := node.Type().LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(T)
	return ok
}

// timestampUnit returns the unit of a TIMESTAMP leaf in nanoseconds.
func timestampUnit(node parquet.Node) (int64, bool) {
	lt := node.Type().LogicalType()
	if lt == nil {
		return 0, false
	}
	ts, ok := lt.Value.(*format.TimestampType)
	if !ok || ts.Unit.Value == nil {
		return 0, false
	}
	d := int64(ts.Unit.Value.Duration())
	return d, d > 0
}

// isScalar reports whether t is a kind a leaf setter takes.
func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	}
	return false
}

// leafOf compiles the leaf at path of the file into a field of type t; the
// leaf's repetition level must be rep.
func leafOf(file *parquet.Schema, path []string, t reflect.Type, off uintptr, rep int) (leafPlan, error) {
	lc, ok := file.Lookup(path...)
	if !ok || lc.MaxRepetitionLevel != rep {
		return leafPlan{}, errNoPlan
	}
	set, err := setterOf(lc.Node, t)
	if err != nil {
		return leafPlan{}, err
	}
	return leafPlan{col: lc.ColumnIndex, off: off, maxDef: lc.MaxDefinitionLevel, set: set, name: strings.Join(path, ".")}, nil
}

// setterOf returns the setter of a value of leaf node into a Go value of
// type t, converting as parquet-go's AssignValue does.
func setterOf(node parquet.Node, t reflect.Type) (setter, error) {
	kind := node.Type().Kind()
	if t == timeType {
		unit, ok := timestampUnit(node)
		if kind != parquet.Int64 || !ok {
			return nil, errNoPlan
		}
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) {
			*(*time.Time)(p) = time.Unix(0, v.Int64()*unit).UTC()
		}, nil
	}
	switch kind {
	case parquet.Boolean:
		if t.Kind() == reflect.Bool {
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*bool)(p) = v.Boolean() }, nil
		}
	case parquet.Int32:
		return intSetter(t, func(v *parquet.Value) int64 { return int64(v.Int32()) })
	case parquet.Int64:
		return intSetter(t, func(v *parquet.Value) int64 { return v.Int64() })
	case parquet.Float:
		switch t.Kind() {
		case reflect.Float32:
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*float32)(p) = v.Float() }, nil
		case reflect.Float64:
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*float64)(p) = float64(v.Float()) }, nil
		}
	case parquet.Double:
		switch t.Kind() {
		case reflect.Float64:
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*float64)(p) = v.Double() }, nil
		case reflect.Float32:
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*float32)(p) = float32(v.Double()) }, nil
		}
	case parquet.ByteArray:
		if !plainBytes(node) {
			return nil, errNoPlan // JSON, BSON and the like: parquet-go converts them
		}
		switch t.Kind() {
		case reflect.String:
			// A string equal to the column's last one is shared: dictionary
			// columns (hosts, content types) repeat them row after row.
			return func(p unsafe.Pointer, v *parquet.Value, last *string) {
				b := v.ByteArray()
				if string(b) != *last {
					*last = string(b)
				}
				*(*string)(p) = *last
			}, nil
		case reflect.Slice:
			return func(p unsafe.Pointer, v *parquet.Value, _ *string) {
				*(*[]byte)(p) = append([]byte{}, v.ByteArray()...)
			}, nil
		}
	}
	return nil, errNoPlan
}

// plainBytes reports whether a byte array leaf holds bytes or text as they
// are: no logical type, or STRING or ENUM.
func plainBytes(node parquet.Node) bool {
	lt := node.Type().LogicalType()
	if lt == nil || lt.Value == nil {
		return true
	}
	switch lt.Value.(type) {
	case *format.StringType, *format.EnumType:
		return true
	}
	return false
}

// intSetter returns the setter of an integer column into a field of
// integer kind t, truncating as a conversion does.
func intSetter(t reflect.Type, get func(*parquet.Value) int64) (setter, error) {
	switch t.Kind() {
	case reflect.Int:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*int)(p) = int(get(v)) }, nil
	case reflect.Int8:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*int8)(p) = int8(get(v)) }, nil
	case reflect.Int16:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*int16)(p) = int16(get(v)) }, nil
	case reflect.Int32:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*int32)(p) = int32(get(v)) }, nil
	case reflect.Int64:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*int64)(p) = get(v) }, nil
	case reflect.Uint:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*uint)(p) = uint(get(v)) }, nil
	case reflect.Uint8:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*uint8)(p) = uint8(get(v)) }, nil
	case reflect.Uint16:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*uint16)(p) = uint16(get(v)) }, nil
	case reflect.Uint32:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*uint32)(p) = uint32(get(v)) }, nil
	case reflect.Uint64:
		return func(p unsafe.Pointer, v *parquet.Value, _ *string) { *(*uint64)(p) = uint64(get(v)) }, nil
	}
	return nil, errNoPlan
}

// cursor streams the values of one column chunk.
type cursor struct {
	pages parquet.Pages
	vr    parquet.ValueReader
	buf   []parquet.Value
	i     int
	last  string // the last string set from this column
	name  string
	done  bool
}

// cursorBatch is how many values a cursor reads at a time. The values of
// a byte array column point into their pages, which stay in memory until
// the values are used: 64 bodies of a megabyte each are 64 MiB.
const cursorBatch = 64

// columnarBatch is how many rows the columnar decoder decodes between
// yields: rows hold copies of their byte arrays, so a batch of large pages
// is as large as its rows (BatchSize rows of megabyte bodies would be a
// gigabyte), and decoding fewer at a time costs nothing measurable.
const columnarBatch = 64

// fill reads more values, keeping the unread ones; it reports false at
// the end of the column chunk.
func (c *cursor) fill() (bool, error) {
	if c.done {
		return false, nil
	}
	n := copy(c.buf[:cap(c.buf)], c.buf[c.i:])
	c.buf, c.i = c.buf[:n], 0
	if cap(c.buf)-n < cursorBatch/2 {
		b := make([]parquet.Value, n, 2*cap(c.buf))
		copy(b, c.buf)
		c.buf = b
	}
	for {
		if c.vr == nil {
			page, err := c.pages.ReadPage()
			if err == io.EOF {
				c.done = true
				return len(c.buf) > 0, nil
			}
			if err != nil {
				return false, fmt.Errorf("column %s: %w", c.name, err)
			}
			c.vr = page.Values()
		}
		m, err := c.vr.ReadValues(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+m]
		if err == io.EOF {
			c.vr = nil
		} else if err != nil {
			return false, fmt.Errorf("column %s: %w", c.name, err)
		}
		if m > 0 {
			return true, nil
		}
	}
}

// peek returns the next value of the column without taking it.
func (c *cursor) peek() (*parquet.Value, error) {
	if c.i == len(c.buf) {
		ok, err := c.fill()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("column %s ends before the row group does", c.name)
		}
	}
	return &c.buf[c.i], nil
}

// next returns the next value of the column.
func (c *cursor) next() (*parquet.Value, error) {
	v, err := c.peek()
	if err == nil {
		c.i++
	}
	return v, err
}

// repeats counts the values after the next one that continue its row
// (repetition level above 0), reading ahead as far as it takes.
func (c *cursor) repeats() (int, error) {
	n := 0
	for j := c.i + 1; ; j++ {
		if j == len(c.buf) {
			k := j - c.i
			ok, err := c.fill()
			if err != nil {
				return 0, err
			}
			j = c.i + k
			if !ok || j == len(c.buf) {
				return n, nil
			}
		}
		if c.buf[j].RepetitionLevel() == 0 {
			return n, nil
		}
		n++
	}
}

// rowGroupDecoder decodes the rows of one row group.
type rowGroupDecoder struct {
	plan    *colPlan
	cursors []cursor
	entry   [2]string // decodeStringMap's key and value
}

// newRowGroupDecoder opens the columns of g that plan reads.
func newRowGroupDecoder(plan *colPlan, g parquet.RowGroup) *rowGroupDecoder {
	chunks := g.ColumnChunks()
	d := &rowGroupDecoder{plan: plan, cursors: make([]cursor, plan.ncols)}
	open := func(l *leafPlan) {
		c := &d.cursors[l.cursor]
		c.pages = chunks[l.col].Pages()
		c.buf = make([]parquet.Value, 0, cursorBatch)
		c.name = l.name
	}
	for i := range plan.leaves {
		open(&plan.leaves[i])
	}
	for gi := range plan.groups {
		for i := range plan.groups[gi].elem {
			open(&plan.groups[gi].elem[i])
		}
	}
	return d
}

// close closes the column chunks' page readers.
func (d *rowGroupDecoder) close() error {
	var errs []error
	for i := range d.cursors {
		if d.cursors[i].pages != nil {
			errs = append(errs, d.cursors[i].pages.Close())
		}
	}
	return errors.Join(errs...)
}

// decode fills the zeroed row at p with the next row.
func (d *rowGroupDecoder) decode(p unsafe.Pointer) error {
	for i := range d.plan.leaves {
		l := &d.plan.leaves[i]
		c := &d.cursors[l.cursor]
		v, err := c.next()
		if err != nil {
			return err
		}
		if v.RepetitionLevel() != 0 {
			return fmt.Errorf("column %s: a repeated value in a scalar column", c.name)
		}
		if v.DefinitionLevel() == l.maxDef {
			l.set(unsafe.Add(p, l.off), v, &c.last)
		}
	}
	for gi := range d.plan.groups {
		if err := d.decodeGroup(&d.plan.groups[gi], unsafe.Add(p, d.plan.groups[gi].off)); err != nil {
			return err
		}
	}
	return nil
}

// decodeGroup fills the list or map at p.
func (d *rowGroupDecoder) decodeGroup(g *groupPlan, p unsafe.Pointer) error {
	first := &d.cursors[g.elem[0].cursor]
	v0, err := first.peek()
	if err != nil {
		return err
	}
	if v0.RepetitionLevel() != 0 {
		return fmt.Errorf("column %s: a row starts with a repeated value", first.name)
	}
	n := 0
	if v0.DefinitionLevel() >= g.repDef {
		more, err := first.repeats()
		if err != nil {
			return err
		}
		n = 1 + more
	}
	if g.isMap {
		return d.decodeMap(g, p, n)
	}
	base := reflect.MakeSlice(g.typ, n, n).UnsafePointer()
	*(*sliceHeader)(p) = sliceHeader{data: base, len: n, cap: n}
	if n == 0 {
		return d.skipEmpty(g)
	}
	for i := range g.elem {
		l := &g.elem[i]
		c := &d.cursors[l.cursor]
		for j := 0; j < n; j++ {
			v, err := c.next()
			if err != nil {
				return err
			}
			if (j == 0) != (v.RepetitionLevel() == 0) || v.DefinitionLevel() < g.repDef {
				return fmt.Errorf("column %s: its levels disagree with %s's", c.name, first.name)
			}
			if v.DefinitionLevel() == l.maxDef {
				l.set(unsafe.Add(base, uintptr(j)*g.size+l.off), v, &c.last)
			}
		}
	}
	return nil
}

// skipEmpty reads the one value each leaf of g has for an empty list or
// map.
func (d *rowGroupDecoder) skipEmpty(g *groupPlan) error {
	for i := range g.elem {
		c := &d.cursors[g.elem[i].cursor]
		v, err := c.next()
		if err != nil {
			return err
		}
		if v.RepetitionLevel() != 0 || v.DefinitionLevel() >= g.repDef {
			return fmt.Errorf("column %s: its levels disagree with %s's", c.name, d.cursors[g.elem[0].cursor].name)
		}
	}
	return nil
}

// sliceHeader is the memory layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

var stringMapType = reflect.TypeFor[map[string]string]()

// decodeMap fills the map at p with n entries.
func (d *rowGroupDecoder) decodeMap(g *groupPlan, p unsafe.Pointer, n int) error {
	if g.typ == stringMapType {
		// Metadata and headers: no reflection. The setters write
		// through d.entry, not a local pair, which would escape to the
		// heap: a setter is an indirect call.
		m := make(map[string]string, n)
		*(*map[string]string)(p) = m
		return d.mapEntries(g, n, unsafe.Pointer(&d.entry[0]), unsafe.Pointer(&d.entry[1]), func() {
			m[d.entry[0]] = d.entry[1]
			d.entry = [2]string{}
		})
	}
	m := reflect.MakeMapWithSize(g.typ, n)
	*(*unsafe.Pointer)(p) = m.UnsafePointer()
	key := reflect.New(g.typ.Key()).Elem()
	val := reflect.New(g.typ.Elem()).Elem()
	return d.mapEntries(g, n, key.Addr().UnsafePointer(), val.Addr().UnsafePointer(), func() {
		m.SetMapIndex(key, val)
		key.SetZero()
		val.SetZero()
	})
}

// mapEntries reads the n entries of map g: each key into key and value (if
// not null) into val, then put, which stores them and zeroes both.
func (d *rowGroupDecoder) mapEntries(g *groupPlan, n int, key, val unsafe.Pointer, put func()) error {
	if n == 0 {
		return d.skipEmpty(g)
	}
	kc, vc := &d.cursors[g.elem[0].cursor], &d.cursors[g.elem[1].cursor]
	for j := 0; j < n; j++ {
		kv, err := kc.next()
		if err != nil {
			return err
		}
		vv, err := vc.next()
		if err != nil {
			return err
		}
		if (j == 0) != (kv.RepetitionLevel() == 0) || (j == 0) != (vv.RepetitionLevel() == 0) || vv.DefinitionLevel() < g.repDef {
			return fmt.Errorf("column %s: its levels disagree with %s's", vc.name, kc.name)
		}
		g.elem[0].set(key, kv, &kc.last)
		if vv.DefinitionLevel() == g.elem[1].maxDef {
			g.elem[1].set(val, vv, &vc.last)
		}
		put()
	}
	return nil
}

// decodeRows fills the zeroed rows of buf with the next len(buf) rows.
func decodeRows[T any](d *rowGroupDecoder, buf []T) error {
	for i := range buf {
		if err := d.decode(unsafe.Pointer(&buf[i])); err != nil {
			return err
		}
	}
	return nil
}

// finish checks that no column has values left after the last row.
func (d *rowGroupDecoder) finish(rows int64) error {
	for i := range d.cursors {
		c := &d.cursors[i]
		if c.i < len(c.buf) {
			return fmt.Errorf("column %s has values after the row group's %d rows", c.name, rows)
		}
		if ok, err := c.fill(); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("column %s has values after the row group's %d rows", c.name, rows)
		}
	}
	return nil
}
