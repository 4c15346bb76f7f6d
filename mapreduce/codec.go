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
	"unsafe"

	"github.com/trawl/trawl/internal/shufflebin"
)

// ShuffleMarshaler is implemented by value types that encode themselves for
// the shuffle (for speed or to control the encoding), with a method on the
// type or on its pointer (a Codec calls it through a pointer to the value).
// The encoding must be deterministic: equal values give equal bytes.
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
// or 1 and the element; time.Time a flag byte, then the zigzag varint of
// UnixMilli for a whole millisecond, else of UnixNano, or the seconds and
// nanoseconds outside UnixNano's range (shufflebin.AppendTime), decoding
// to UTC; types whose pointer implements ShuffleMarshaler and
// ShuffleUnmarshaler a uvarint length and their own bytes. Interfaces,
// channels and functions are not supported (NewCodec fails). Unexported
// struct fields are skipped.
//
// A Codec is immutable after NewCodec and safe for concurrent use.
type Codec[V any] struct {
	enc encFunc
	dec decFunc
}

// encFunc appends the encoding of the value at p; decFunc decodes into
// the zeroed value at p. Both work on the value's memory through
// unsafe.Pointer, with field offsets and element sizes fixed when the
// codec is built: going through reflect.Value for every field and element
// cost about twice as much.
type encFunc func(b []byte, p unsafe.Pointer) []byte
type decFunc func(d *decoder, p unsafe.Pointer) error

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
	return c.enc(dst, unsafe.Pointer(v))
}

// Decode decodes data, which must hold exactly one encoded value, into *v.
// *v is overwritten, not merged into.
func (c *Codec[V]) Decode(data []byte, v *V) error {
	var zero V
	*v = zero
	d := decoder{b: data}
	if err := c.dec(&d, unsafe.Pointer(v)); err != nil {
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
		if *p != nil {
			return *p, nil
		}
		// Still being built (a recursive type): call through.
		return func(buf []byte, v unsafe.Pointer) []byte { return (*p)(buf, v) }, nil
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
	if isMarshaler(t) {
		return marshalerEncoder(t), nil
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

// isMarshaler reports whether values of t encode themselves: *t is a
// ShuffleMarshaler (with a method on t or on *t) and a ShuffleUnmarshaler.
func isMarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(marshalerType) && pt.Implements(unmarshalerType)
}

// isByteSlice reports whether t is a slice of bytes encoded as a whole
// (its element type does not encode itself).
func isByteSlice(t reflect.Type) bool {
	return t.Elem().Kind() == reflect.Uint8 && !isMarshaler(t.Elem())
}

// marshalerEncoder encodes a ShuffleMarshaler of type t: a uvarint length
// and its bytes. It calls the method through a pointer to the value, so
// that a large value is not copied into an interface.
func marshalerEncoder(t reflect.Type) encFunc {
	return func(buf []byte, p unsafe.Pointer) []byte {
		m := reflect.NewAt(t, p).Interface().(ShuffleMarshaler)
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
}

// scalarEncoder returns the encoder of a bool, number or string kind, or
// nil for other kinds.
func scalarEncoder(t reflect.Type) encFunc {
	switch t.Kind() {
	case reflect.Bool:
		return encBool
	case reflect.Int:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(buf, int64(*(*int)(p))) }
	case reflect.Int8:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(buf, int64(*(*int8)(p))) }
	case reflect.Int16:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(buf, int64(*(*int16)(p))) }
	case reflect.Int32:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(buf, int64(*(*int32)(p))) }
	case reflect.Int64:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(buf, *(*int64)(p)) }
	case reflect.Uint:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, uint64(*(*uint)(p))) }
	case reflect.Uint8:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, uint64(*(*uint8)(p))) }
	case reflect.Uint16:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, uint64(*(*uint16)(p))) }
	case reflect.Uint32:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, uint64(*(*uint32)(p))) }
	case reflect.Uint64:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, *(*uint64)(p)) }
	case reflect.Uintptr:
		return func(buf []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(buf, uint64(*(*uintptr)(p))) }
	case reflect.Float32:
		return func(buf []byte, p unsafe.Pointer) []byte {
			return binary.LittleEndian.AppendUint32(buf, math.Float32bits(*(*float32)(p)))
		}
	case reflect.Float64:
		return func(buf []byte, p unsafe.Pointer) []byte {
			return binary.LittleEndian.AppendUint64(buf, math.Float64bits(*(*float64)(p)))
		}
	case reflect.Complex64:
		return func(buf []byte, p unsafe.Pointer) []byte { return appendComplex(buf, complex128(*(*complex64)(p))) }
	case reflect.Complex128:
		return func(buf []byte, p unsafe.Pointer) []byte { return appendComplex(buf, *(*complex128)(p)) }
	case reflect.String:
		return encString
	}
	return nil
}

func encBool(buf []byte, p unsafe.Pointer) []byte {
	if *(*bool)(p) {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func appendComplex(buf []byte, c complex128) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(real(c)))
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(imag(c)))
}

func encString(buf []byte, p unsafe.Pointer) []byte {
	s := *(*string)(p)
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// encBytes encodes a byte slice: 0 for nil, else its length+1 and its
// bytes.
func encBytes(buf []byte, p unsafe.Pointer) []byte {
	s := *(*[]byte)(p)
	if s == nil {
		return append(buf, 0)
	}
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
	size := t.Elem().Size()
	return func(buf []byte, p unsafe.Pointer) []byte {
		s := reflect.NewAt(t, p).Elem()
		if s.IsNil() {
			return append(buf, 0)
		}
		n := s.Len()
		buf = binary.AppendUvarint(buf, uint64(n)+1)
		base := s.UnsafePointer()
		for i := 0; i < n; i++ {
			buf = elem(buf, unsafe.Add(base, uintptr(i)*size))
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
	n, size := t.Len(), t.Elem().Size()
	return func(buf []byte, p unsafe.Pointer) []byte {
		for i := 0; i < n; i++ {
			buf = elem(buf, unsafe.Add(p, uintptr(i)*size))
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
	return func(buf []byte, p unsafe.Pointer) []byte {
		v := reflect.NewAt(t, p).Elem()
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
		k := reflect.New(t.Key()).Elem()
		e := reflect.New(t.Elem()).Elem()
		kp, ep := k.Addr().UnsafePointer(), e.Addr().UnsafePointer()
		it := v.MapRange()
		for it.Next() {
			k.SetIterKey(it)
			e.SetIterValue(it)
			k0 := len(scratch)
			scratch = kenc(scratch, kp)
			k1 := len(scratch)
			scratch = venc(scratch, ep)
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
	return func(buf []byte, p unsafe.Pointer) []byte {
		e := *(*unsafe.Pointer)(p)
		if e == nil {
			return append(buf, 0)
		}
		return elem(append(buf, 1), e)
	}, nil
}

// structEncoder encodes a struct: its exported fields in order.
func (b *codecBuilder) structEncoder(t reflect.Type, where string) (encFunc, error) {
	var offs []uintptr
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
		offs = append(offs, f.Offset)
		encs = append(encs, e)
	}
	return func(buf []byte, p unsafe.Pointer) []byte {
		for j, off := range offs {
			buf = encs[j](buf, unsafe.Add(p, off))
		}
		return buf
	}, nil
}

func encTime(buf []byte, p unsafe.Pointer) []byte {
	return shufflebin.AppendTime(buf, *(*time.Time)(p))
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

// complex reads a complex number: its real and imaginary float64s.
func (d *decoder) complex() (complex128, error) {
	s, err := d.bytes(16)
	if err != nil {
		return 0, err
	}
	return complex(math.Float64frombits(binary.LittleEndian.Uint64(s)), math.Float64frombits(binary.LittleEndian.Uint64(s[8:]))), nil
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
		if *p != nil {
			return *p, nil
		}
		// Still being built (a recursive type): call through.
		return func(d *decoder, v unsafe.Pointer) error { return (*p)(d, v) }, nil
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
	if isMarshaler(t) {
		return marshalerDecoder(t)
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
			return decBytes
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
	return func(d *decoder, p unsafe.Pointer) error {
		return fmt.Errorf("type %v is not supported", t)
	}
}

// marshalerDecoder decodes a ShuffleUnmarshaler's length and bytes.
func marshalerDecoder(t reflect.Type) decFunc {
	return func(d *decoder, p unsafe.Pointer) error {
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		data, err := d.bytes(n)
		if err != nil {
			return err
		}
		return reflect.NewAt(t, p).Interface().(ShuffleUnmarshaler).UnmarshalShuffle(data)
	}
}

// scalarDecoder returns the decoder of a bool, number or string kind, or
// nil for other kinds.
func scalarDecoder(t reflect.Type) decFunc {
	switch t.Kind() {
	case reflect.Bool:
		return decBool
	case reflect.Int:
		return intDecoder(t, func(p unsafe.Pointer, x int64) { *(*int)(p) = int(x) })
	case reflect.Int8:
		return intDecoder(t, func(p unsafe.Pointer, x int64) { *(*int8)(p) = int8(x) })
	case reflect.Int16:
		return intDecoder(t, func(p unsafe.Pointer, x int64) { *(*int16)(p) = int16(x) })
	case reflect.Int32:
		return intDecoder(t, func(p unsafe.Pointer, x int64) { *(*int32)(p) = int32(x) })
	case reflect.Int64:
		return intDecoder(t, func(p unsafe.Pointer, x int64) { *(*int64)(p) = x })
	case reflect.Uint:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uint)(p) = uint(x) })
	case reflect.Uint8:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uint8)(p) = uint8(x) })
	case reflect.Uint16:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uint16)(p) = uint16(x) })
	case reflect.Uint32:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uint32)(p) = uint32(x) })
	case reflect.Uint64:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uint64)(p) = x })
	case reflect.Uintptr:
		return uintDecoder(t, func(p unsafe.Pointer, x uint64) { *(*uintptr)(p) = uintptr(x) })
	case reflect.Float32:
		return decFloat32
	case reflect.Float64:
		return decFloat64
	case reflect.Complex64:
		return func(d *decoder, p unsafe.Pointer) error {
			c, err := d.complex()
			*(*complex64)(p) = complex64(c)
			return err
		}
	case reflect.Complex128:
		return func(d *decoder, p unsafe.Pointer) error {
			c, err := d.complex()
			*(*complex128)(p) = c
			return err
		}
	case reflect.String:
		return decString
	}
	return nil
}

func decBool(d *decoder, p unsafe.Pointer) error {
	c, err := d.byte1()
	if err != nil {
		return err
	}
	if c > 1 {
		return fmt.Errorf("bad bool byte %d", c)
	}
	*(*bool)(p) = c == 1
	return nil
}

// intDecoder decodes a signed integer of type t, stored by set once it is
// known to fit.
func intDecoder(t reflect.Type, set func(unsafe.Pointer, int64)) decFunc {
	return fitDecoder(t, (*decoder).varint, set)
}

// uintDecoder decodes an unsigned integer of type t, stored by set once it
// is known to fit.
func uintDecoder(t reflect.Type, set func(unsafe.Pointer, uint64)) decFunc {
	return fitDecoder(t, (*decoder).uvarint, set)
}

// fitDecoder decodes an integer of type t with read and stores it with set
// if it fits in t's bits.
func fitDecoder[X int64 | uint64](t reflect.Type, read func(*decoder) (X, error), set func(unsafe.Pointer, X)) decFunc {
	bits := t.Bits()
	return func(d *decoder, p unsafe.Pointer) error {
		x, err := read(d)
		if err != nil {
			return err
		}
		if trunc := (x << (64 - bits)) >> (64 - bits); x != trunc {
			return fmt.Errorf("%d overflows %v", x, t)
		}
		set(p, x)
		return nil
	}
}

func decFloat32(d *decoder, p unsafe.Pointer) error {
	s, err := d.bytes(4)
	if err != nil {
		return err
	}
	*(*float32)(p) = math.Float32frombits(binary.LittleEndian.Uint32(s))
	return nil
}

func decFloat64(d *decoder, p unsafe.Pointer) error {
	s, err := d.bytes(8)
	if err != nil {
		return err
	}
	*(*float64)(p) = math.Float64frombits(binary.LittleEndian.Uint64(s))
	return nil
}

func decString(d *decoder, p unsafe.Pointer) error {
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	s, err := d.bytes(n)
	if err != nil {
		return err
	}
	*(*string)(p) = string(s)
	return nil
}

// decBytes decodes a byte slice into a copy of its bytes.
func decBytes(d *decoder, p unsafe.Pointer) error {
	n, isNil, err := d.count(1)
	if err != nil || isNil {
		return err
	}
	s, err := d.bytes(uint64(n))
	if err != nil {
		return err
	}
	*(*[]byte)(p) = append(make([]byte, 0, n), s...)
	return nil
}

func (b *codecBuilder) sliceDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	size := t.Elem().Size()
	return func(d *decoder, p unsafe.Pointer) error {
		n, isNil, err := d.count(0)
		if err != nil || isNil {
			return err
		}
		if n > len(d.b)-d.i && size > 0 {
			// Every element takes at least one byte unless it is of
			// zero size.
			return fmt.Errorf("length %d exceeds the %d bytes left", n, len(d.b)-d.i)
		}
		s := reflect.MakeSlice(t, n, n)
		base := s.UnsafePointer()
		for i := 0; i < n; i++ {
			if err := elem(d, unsafe.Add(base, uintptr(i)*size)); err != nil {
				return err
			}
		}
		reflect.NewAt(t, p).Elem().Set(s)
		return nil
	}
}

func (b *codecBuilder) arrayDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	n, size := t.Len(), t.Elem().Size()
	return func(d *decoder, p unsafe.Pointer) error {
		for i := 0; i < n; i++ {
			if err := elem(d, unsafe.Add(p, uintptr(i)*size)); err != nil {
				return err
			}
		}
		return nil
	}
}

func (b *codecBuilder) mapDecoder(t reflect.Type) decFunc {
	kdec, _ := b.decoder(t.Key())
	vdec, _ := b.decoder(t.Elem())
	return func(d *decoder, p unsafe.Pointer) error {
		n, isNil, err := d.count(1)
		if err != nil || isNil {
			return err
		}
		m := reflect.MakeMapWithSize(t, n)
		k := reflect.New(t.Key()).Elem()
		e := reflect.New(t.Elem()).Elem()
		kp, ep := k.Addr().UnsafePointer(), e.Addr().UnsafePointer()
		for i := 0; i < n; i++ {
			k.SetZero()
			e.SetZero()
			if err := kdec(d, kp); err != nil {
				return err
			}
			if err := vdec(d, ep); err != nil {
				return err
			}
			m.SetMapIndex(k, e)
		}
		reflect.NewAt(t, p).Elem().Set(m)
		return nil
	}
}

func (b *codecBuilder) pointerDecoder(t reflect.Type) decFunc {
	elem, _ := b.decoder(t.Elem())
	et := t.Elem()
	return func(d *decoder, p unsafe.Pointer) error {
		c, err := d.byte1()
		if err != nil {
			return err
		}
		switch c {
		case 0:
			*(*unsafe.Pointer)(p) = nil
			return nil
		case 1:
			e := reflect.New(et).UnsafePointer()
			if err := elem(d, e); err != nil {
				return err
			}
			*(*unsafe.Pointer)(p) = e
			return nil
		}
		return fmt.Errorf("bad pointer flag %d", c)
	}
}

func (b *codecBuilder) structDecoder(t reflect.Type) decFunc {
	var offs []uintptr
	var names []string
	var decs []decFunc
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		dd, _ := b.decoder(f.Type)
		offs = append(offs, f.Offset)
		names = append(names, f.Name)
		decs = append(decs, dd)
	}
	return func(d *decoder, p unsafe.Pointer) error {
		for j, off := range offs {
			if err := decs[j](d, unsafe.Add(p, off)); err != nil {
				return fmt.Errorf("%s: %w", names[j], err)
			}
		}
		return nil
	}
}

func decTime(d *decoder, p unsafe.Pointer) error {
	r := shufflebin.NewReader(d.b[d.i:])
	tm := r.Time()
	if err := r.Err(); err != nil {
		return err
	}
	d.i += r.Offset()
	*(*time.Time)(p) = tm
	return nil
}
