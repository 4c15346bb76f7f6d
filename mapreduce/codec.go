package mapreduce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
)

// ShuffleMarshaler is implemented by value types that encode themselves for
// the shuffle (for speed or to control the encoding). The encoding must be
// deterministic: equal values give equal bytes.
type ShuffleMarshaler interface {
	// AppendShuffle appends the encoding of the value to dst.
	AppendShuffle(dst []byte) []byte
}

// ShuffleUnmarshaler is the decoding side of ShuffleMarshaler, implemented
// on the pointer type. It receives exactly the bytes AppendShuffle appended
// and must not retain them.
type ShuffleUnmarshaler interface {
	UnmarshalShuffle(data []byte) error
}

// Codec is the shuffle encoding of values of type V: a compact,
// deterministic binary format built by reflection once per type.
//
// The format: bools are one byte; signed integers zigzag varints; unsigned
// integers uvarints; float32/float64 fixed 4/8 bytes (IEEE bits, little
// endian); strings a uvarint length and the bytes; slices and maps a uvarint
// of 0 for nil or length+1, then the elements (map entries sorted by the
// encoding of their keys, so equal maps give equal bytes); arrays their
// elements; structs their exported fields in order; pointers a byte 0 (nil)
// or 1 and the element; time.Time a byte 0 for the zero time, 1 and the
// zigzag varint of UnixNano, or 2 and the seconds and nanoseconds (outside
// UnixNano's range), decoding to UTC; types implementing ShuffleMarshaler a
// uvarint length and their own bytes. Interfaces, channels and functions
// are not supported (NewCodec fails). Unexported struct fields are skipped.
//
// A Codec is immutable after NewCodec and safe for concurrent use.
type Codec[V any] struct {
	enc encFunc
	dec decFunc
}

type encFunc func(b []byte, v reflect.Value) []byte
type decFunc func(d *decoder, v reflect.Value) error

// NewCodec builds the codec of V, or says which part of V is unsupported.
func NewCodec[V any]() (*Codec[V], error) {
	b := codecBuilder{enc: map[reflect.Type]*encFunc{}, dec: map[reflect.Type]*decFunc{}}
	t := reflect.TypeFor[V]()
	enc, err := b.encoder(t, t.String())
	if err != nil {
		return nil, err
	}
	dec, _ := b.decoder(t)
	return &Codec[V]{enc: enc, dec: dec}, nil
}

// Append appends the encoding of *v to dst.
func (c *Codec[V]) Append(dst []byte, v *V) []byte {
	return c.enc(dst, reflect.ValueOf(v).Elem())
}

// Decode decodes data, which must hold exactly one encoded value, into *v.
// *v is overwritten, not merged into.
func (c *Codec[V]) Decode(data []byte, v *V) error {
	var zero V
	*v = zero
	d := decoder{b: data}
	if err := c.dec(&d, reflect.ValueOf(v).Elem()); err != nil {
		return fmt.Errorf("decode %v: %w", reflect.TypeFor[V](), err)
	}
	if d.i != len(d.b) {
		return fmt.Errorf("decode %v: %d trailing bytes", reflect.TypeFor[V](), len(d.b)-d.i)
	}
	return nil
}

// EncodeValue returns the shuffle encoding of v (see Codec). It builds the
// codec on every call; hot paths keep a Codec instead.
func EncodeValue[V any](v V) ([]byte, error) {
	c, err := NewCodec[V]()
	if err != nil {
		return nil, err
	}
	return c.Append(nil, &v), nil
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	marshalerType     = reflect.TypeFor[ShuffleMarshaler]()
	unmarshalerType   = reflect.TypeFor[ShuffleUnmarshaler]()
	errShortBuffer    = errors.New("truncated value")
	errVarintOverflow = errors.New("bad varint")
)

type codecBuilder struct {
	enc map[reflect.Type]*encFunc
	dec map[reflect.Type]*decFunc
}

func (b *codecBuilder) encoder(t reflect.Type, where string) (encFunc, error) {
	if p, ok := b.enc[t]; ok {
		// Possibly still being built (recursive type): call through.
		return func(buf []byte, v reflect.Value) []byte { return (*p)(buf, v) }, nil
	}
	p := new(encFunc)
	b.enc[t] = p
	f, err := b.buildEncoder(t, where)
	if err != nil {
		return nil, err
	}
	*p = f
	return f, nil
}

// buildEncoder builds the encoder of t (see Codec for the format); where
// names t's place in the codec's type for errors.
func (b *codecBuilder) buildEncoder(t reflect.Type, where string) (encFunc, error) {
	if t.Implements(marshalerType) && reflect.PointerTo(t).Implements(unmarshalerType) {
		return encMarshaler, nil
	}
	if t == timeType {
		return encTime, nil
	}
	if enc := scalarEncoder(t); enc != nil {
		return enc, nil
	}
	switch t.Kind() {
	case reflect.Slice:
		if isByteSlice(t) {
			return encBytes, nil
		}
		return b.sliceEncoder(t, where)
	case reflect.Array:
		return b.arrayEncoder(t, where)
	case reflect.Map:
		return b.mapEncoder(t, where)
	case reflect.Pointer:
		return b.pointerEncoder(t, where)
	case reflect.Struct:
		return b.structEncoder(t, where)
	}
	return nil, fmt.Errorf("shuffle codec: %s: type %v (kind %v) is not supported", where, t, t.Kind())
}

// isByteSlice reports whether t is a slice of bytes encoded as a whole
// (its element type does not encode itself).
func isByteSlice(t reflect.Type) bool {
	return t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(marshalerType)
}

// encMarshaler encodes a ShuffleMarshaler: a uvarint length and its bytes.
func encMarshaler(buf []byte, v reflect.Value) []byte {
	m := v.Interface().(ShuffleMarshaler)
	// Reserve room for a one-byte length and fix up if longer.
	start := len(buf)
	buf = append(buf, 0)
	buf = m.AppendShuffle(buf)
	n := len(buf) - start - 1
	if n < 0x80 {
		buf[start] = byte(n)
		return buf
	}
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(n))
	buf = append(buf, hdr[:h-1]...)
	copy(buf[start+h:], buf[start+1:start+1+n])
	copy(buf[start:], hdr[:h])
	return buf
}

// scalarEncoder returns the encoder of a bool, number or string kind, or
// nil for other kinds.
func scalarEncoder(t reflect.Type) encFunc {
	switch t.Kind() {
	case reflect.Bool:
		return encBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(buf []byte, v reflect.Value) []byte { return binary.AppendVarint(buf, v.Int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(buf []byte, v reflect.Value) []byte { return binary.AppendUvarint(buf, v.Uint()) }
	case reflect.Float32:
		return func(buf []byte, v reflect.Value) []byte {
			return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v.Float())))
		}
	case reflect.Float64:
		return func(buf []byte, v reflect.Value) []byte {
			return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
		}
	case reflect.Complex64, reflect.Complex128:
		return encComplex
	case reflect.String:
		return encString
	}
	return nil
}

func encBool(buf []byte, v reflect.Value) []byte {
	if v.Bool() {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func encComplex(buf []byte, v reflect.Value) []byte {
	c := v.Complex()
	buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(real(c)))
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(imag(c)))
}

func encString(buf []byte, v reflect.Value) []byte {
	s := v.String()
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// encBytes encodes a byte slice: 0 for nil, else its length+1 and its
// bytes.
func encBytes(buf []byte, v reflect.Value) []byte {
	if v.IsNil() {
		return append(buf, 0)
	}
	s := v.Bytes()
	buf = binary.AppendUvarint(buf, uint64(len(s))+1)
	return append(buf, s...)
}

// sliceEncoder encodes a slice: 0 for nil, else its length+1 and its
// elements.
func (b *codecBuilder) sliceEncoder(t reflect.Type, where string) (encFunc, error) {
	elem, err := b.encoder(t.Elem(), where+"[]")
	if err != nil {
		return nil, err
	}
	return func(buf []byte, v reflect.Value) []byte {
		if v.IsNil() {
			return append(buf, 0)
		}
		n := v.Len()
		buf = binary.AppendUvarint(buf, uint64(n)+1)
		for i := 0; i < n; i++ {
			buf = elem(buf, v.Index(i))
		}
		return buf
	}, nil
}

// arrayEncoder encodes an array: its elements.
func (b *codecBuilder) arrayEncoder(t reflect.Type, where string) (encFunc, error) {
	elem, err := b.encoder(t.Elem(), where+"[]")
	if err != nil {
		return nil, err
	}
	n := t.Len()
	return func(buf []byte, v reflect.Value) []byte {
		for i := 0; i < n; i++ {
			buf = elem(buf, v.Index(i))
		}
		return buf
	}, nil
}

// mapEncoder encodes a map: 0 for nil, else its length+1 and its entries
// sorted by the encoding of their keys.
func (b *codecBuilder) mapEncoder(t reflect.Type, where string) (encFunc, error) {
	kenc, err := b.encoder(t.Key(), where+"[key]")
	if err != nil {
		return nil, err
	}
	venc, err := b.encoder(t.Elem(), where+"[value]")
	if err != nil {
		return nil, err
	}
	return func(buf []byte, v reflect.Value) []byte {
		if v.IsNil() {
			return append(buf, 0)
		}
		n := v.Len()
		buf = binary.AppendUvarint(buf, uint64(n)+1)
		if n == 0 {
			return buf
		}
		// Encode entries into scratch space, then append them sorted
		// by key bytes.
		type ent struct{ k0, k1, v1 int }
		var scratch []byte
		ents := make([]ent, 0, n)
		it := v.MapRange()
		for it.Next() {
			k0 := len(scratch)
			scratch = kenc(scratch, it.Key())
			k1 := len(scratch)
			scratch = venc(scratch, it.Value())
			ents = append(ents, ent{k0, k1, len(scratch)})
		}
		slices.SortFunc(ents, func(a, b ent) int {
			return bytes.Compare(scratch[a.k0:a.k1], scratch[b.k0:b.k1])
		})
		for _, e := range ents {
			buf = append(buf, scratch[e.k0:e.v1]...)
		}
		return buf
	}, nil
}

// pointerEncoder encodes a pointer: 0 for nil, else 1 and the element.
func (b *codecBuilder) pointerEncoder(t reflect.Type, where string) (encFunc, error) {
	elem, err := b.encoder(t.Elem(), "*"+where)
	if err != nil {
		return nil, err
	}
	return func(buf []byte, v reflect.Value) []byte {
		if v.IsNil() {
			return append(buf, 0)
		}
		return elem(append(buf, 1), v.Elem())
	}, nil
}

// structEncoder encodes a struct: its exported fields in order.
func (b *codecBuilder) structEncoder(t reflect.Type, where string) (encFunc, error) {
	var idx []int
	var encs []encFunc
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		e, err := b.encoder(f.Type, where+"."+f.Name)
		if err != nil {
			return nil, err
		}
		idx = append(idx, i)
		encs = append(encs, e)
	}
	return func(buf []byte, v reflect.Value) []byte {
		for j, i := range idx {
			buf = encs[j](buf, v.Field(i))
		}
		return buf
	}, nil
}

func encTime(buf []byte, v reflect.Value) []byte {
	var tm time.Time
	if v.CanAddr() {
		tm = *(*time.Time)(v.Addr().UnsafePointer())
	} else {
		tm = v.Interface().(time.Time)
	}
	if tm.IsZero() {
		return append(buf, 0)
	}
	s := tm.Unix()
	// UnixNano is defined for years 1678..2261.
	if s > -9223372036 && s < 9223372035 {
		return binary.AppendVarint(append(buf, 1), tm.UnixNano())
	}
	buf = binary.AppendVarint(append(buf, 2), s)
	return binary.AppendUvarint(buf, uint64(tm.Nanosecond()))
}

type decoder struct {
	b []byte
	i int
}

func (d *decoder) uvarint() (uint64, error) {
	x, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		if n == 0 {
			return 0, errShortBuffer
		}
		return 0, errVarintOverflow
	}
	d.i += n
	return x, nil
}

func (d *decoder) varint() (int64, error) {
	x, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		if n == 0 {
			return 0, errShortBuffer
		}
		return 0, errVarintOverflow
	}
	d.i += n
	return x, nil
}

func (d *decoder) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.i) {
		return nil, errShortBuffer
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s, nil
}

func (d *decoder) byte1() (byte, error) {
	if d.i >= len(d.b) {
		return 0, errShortBuffer
	}
	c := d.b[d.i]
	d.i++
	return c, nil
}

// count reads a nil-or-length prefix, bounding the length by the bytes
// left (every element takes at least minSize bytes).
func (d *decoder) count(minSize int) (n int, isNil bool, err error) {
	x, err := d.uvarint()
	if err != nil {
		return 0, false, err
	}
	if x == 0 {
		return 0, true, nil
	}
	x--
	if minSize > 0 && x > uint64((len(d.b)-d.i)/minSize) {
		return 0, false, fmt.Errorf("length %d exceeds the %d bytes left", x, len(d.b)-d.i)
	}
	if x > math.MaxInt32 {
		return 0, false, fmt.Errorf("length %d too large", x)
	}
	return int(x), false, nil
}

func (b *codecBuilder) decoder(t reflect.Type) (decFunc, error) {
	if p, ok := b.dec[t]; ok {
		return func(d *decoder, v reflect.Value) error { return (*p)(d, v) }, nil
	}
	p := new(decFunc)
	b.dec[t] = p
	f := b.buildDecoder(t)
	*p = f
	return f, nil
}

// buildDecoder mirrors buildEncoder; the encoder has already rejected
// unsupported types.
func (b *codecBuilder) buildDecoder(t reflect.Type) decFunc {
	if t.Implements(marshalerType) && reflect.PointerTo(t).Implements(unmarshalerType) {
		return decMarshaler
	}
	if t == timeType {
		return decTime
	}
	if dec := scalarDecoder(t); dec != nil {
		return dec
	}
	switch t.Kind() {
	case reflect.Slice:
		if isByteSlice(t) {
			return bytesDecoder(t)
		}
		return b.sliceDecoder(t)
	case reflect.Array:
		return b.arrayDecoder(t)
	case reflect.Map:
		return b.mapDecoder(t)
	case reflect.Pointer:
		return b.pointerDecoder(t)
	case reflect.Struct:
		return b.structDecoder(t)
	}
	return func(d *decoder, v reflect.Value) error {
		return fmt.Errorf("type %v is not supported", t)
	}
}

// decMarshaler decodes a ShuffleUnmarshaler's length and bytes.
func decMarshaler(d *decoder, v reflect.Value) error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	data, err := d.bytes(n)
	if err != nil {
		return err
	}
	return v.Addr().Interface().(ShuffleUnmarshaler).UnmarshalShuffle(data)
}

// scalarDecoder returns the decoder of a bool, number or string kind, or
// nil for other kinds.
func scalarDecoder(t reflect.Type) decFunc {
	switch t.Kind() {
	case reflect.Bool:
		return decBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decUint
	case reflect.Float32:
		return decFloat32
	case reflect.Float64:
		return decFloat64
	case reflect.Complex64, reflect.Complex128:
		return decComplex
	case reflect.String:
		return decString
	}
	return nil
}

func decBool(d *decoder, v reflect.Value) error {
	c, err := d.byte1()
	if err != nil {
		return err
	}
	if c > 1 {
		return fmt.Errorf("bad bool byte %d", c)
	}
	v.SetBool(c == 1)
	return nil
}

func decInt(d *decoder, v reflect.Value) error {
	x, err := d.varint()
	if err != nil {
		return err
	}
	if v.OverflowInt(x) {
		return fmt.Errorf("%d overflows %v", x, v.Type())
	}
	v.SetInt(x)
	return nil
}

func decUint(d *decoder, v reflect.Value) error {
	x, err := d.uvarint()
	if err != nil {
		return err
	}
	if v.OverflowUint(x) {
		return fmt.Errorf("%d overflows %v", x, v.Type())
	}
	v.SetUint(x)
	return nil
}

func decFloat32(d *decoder, v reflect.Value) error {
	s, err := d.bytes(4)
	if err != nil {
		return err
	}
	v.SetFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(s))))
	return nil
}

func decFloat64(d *decoder, v reflect.Value) error {
	s, err := d.bytes(8)
	if err != nil {
		return err
	}
	v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(s)))
	return nil
}

func decComplex(d *decoder, v reflect.Value) error {
	s, err := d.bytes(16)
	if err != nil {
		return err
	}
	v.SetComplex(complex(math.Float64frombits(binary.LittleEndian.Uint64(s)), math.Float64frombits(binary.LittleEndian.Uint64(s[8:]))))
	return nil
}

func decString(d *decoder, v reflect.Value) error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	s, err := d.bytes(n)
	if err != nil {
		return err
	}
	v.SetString(string(s))
	return nil
}

// bytesDecoder decodes a byte slice of type t into a copy of its bytes.
func bytesDecoder(t reflect.Type) decFunc {
	return func(d *decoder, v reflect.Value) error {
		n, isNil, err := d.count(1)
		if err != nil || isNil {
			return err
		}
		s, err := d.bytes(uint64(n))
		if err != nil {
			return err
		}
		cp := reflect.MakeSlice(t, n, n)
		copy(cp.Bytes(), s)
		v.Set(cp)
		return nil
	}
}

func (b *codecBuilder) sliceDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	return func(d *decoder, v reflect.Value) error {
		n, isNil, err := d.count(0)
		if err != nil || isNil {
			return err
		}
		if n > len(d.b)-d.i && t.Elem().Size() > 0 {
			// Every element takes at least one byte unless it is of
			// zero size.
			return fmt.Errorf("length %d exceeds the %d bytes left", n, len(d.b)-d.i)
		}
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n; i++ {
			if err := elem(d, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
}

func (b *codecBuilder) arrayDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	n := t.Len()
	return func(d *decoder, v reflect.Value) error {
		for i := 0; i < n; i++ {
			if err := elem(d, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
}

func (b *codecBuilder) mapDecoder(t reflect.Type) decFunc {
	kdec, _ := b.decoder(t.Key())
	vdec, _ := b.decoder(t.Elem())
	return func(d *decoder, v reflect.Value) error {
		n, isNil, err := d.count(1)
		if err != nil || isNil {
			return err
		}
		m := reflect.MakeMapWithSize(t, n)
		k := reflect.New(t.Key()).Elem()
		e := reflect.New(t.Elem()).Elem()
		for i := 0; i < n; i++ {
			k.SetZero()
			e.SetZero()
			if err := kdec(d, k); err != nil {
				return err
			}
			if err := vdec(d, e); err != nil {
				return err
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
		return nil
	}
}

func (b *codecBuilder) pointerDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	return func(d *decoder, v reflect.Value) error {
		c, err := d.byte1()
		if err != nil {
			return err
		}
		switch c {
		case 0:
			v.SetZero()
			return nil
		case 1:
			p := reflect.New(t.Elem())
			if err := elem(d, p.Elem()); err != nil {
				return err
			}
			v.Set(p)
			return nil
		}
		return fmt.Errorf("bad pointer flag %d", c)
	}
}

func (b *codecBuilder) structDecoder(t reflect.Type) decFunc {
	var idx []int
	var decs []decFunc
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		dd, _ := b.decoder(f.Type)
		idx = append(idx, i)
		decs = append(decs, dd)
	}
	return func(d *decoder, v reflect.Value) error {
		for j, i := range idx {
			if err := decs[j](d, v.Field(i)); err != nil {
				return fmt.Errorf("%s: %w", t.Field(i).Name, err)
			}
		}
		return nil
	}
}

func decTime(d *decoder, v reflect.Value) error {
	c, err := d.byte1()
	if err != nil {
		return err
	}
	var tm time.Time
	switch c {
	case 0:
	case 1:
		ns, err := d.varint()
		if err != nil {
			return err
		}
		tm = time.Unix(0, ns).UTC()
	case 2:
		s, err := d.varint()
		if err != nil {
			return err
		}
		ns, err := d.uvarint()
		if err != nil {
			return err
		}
		if ns >= 1e9 {
			return fmt.Errorf("bad nanoseconds %d", ns)
		}
		tm = time.Unix(s, int64(ns)).UTC()
	default:
		return fmt.Errorf("bad time flag %d", c)
	}
	if v.CanAddr() {
		*(*time.Time)(v.Addr().UnsafePointer()) = tm
	} else {
		v.Set(reflect.ValueOf(tm))
	}
	return nil
}
