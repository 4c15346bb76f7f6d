// Package jsonrec encodes records (structs such as Parquet rows) as JSON
// objects, one per call, for the JSON Lines dumps of the CrawlDB (trawl
// readdb dump) and of segments (trawl readseg dump).
//
// An Encoder is compiled once per record type: reflection on the struct
// tags happens then, not per record; on CrawlDB rows it takes about half
// the time of encoding/json (see BenchmarkDump100k). Keys are the
// fields' json tag names, else their Parquet column names, else their
// lower-cased Go names, in field order.
package jsonrec

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Options says how an Encoder writes strings. The zero value escapes only
// what JSON requires.
type Options struct {
	// EscapeHTML, if true, escapes strings exactly as encoding/json.Marshal
	// does: <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029 as
	// \u2028 and \u2029, backspace and form feed as \b and \f. False:
	// quotes, backslashes and control characters only (\n, \r, \t, other
	// control characters as \u00XX).
	EscapeHTML bool
}

// Encoder encodes records of type T. Values of each kind print as follows:
// times as RFC 3339 in UTC with the nanoseconds there are (null when
// zero); values with a String method of their own (statuses) as that
// string, and a struct field of an integer type with one also as its
// number under the key with "_code" added ("status":"db_fetched",
// "status_code":2); byte slices named *signature as hex, other byte slices as text
// when they are UTF-8 and as "base64:..." otherwise (null when nil); maps
// as objects sorted by key; NaN and infinite floats as null; nil pointers
// as null; other slices as arrays ([] when nil). An Encoder is safe for
// concurrent use.
type Encoder[T any] struct {
	enc encFunc
	str appendStringFunc
}

type (
	encFunc          func(b []byte, v reflect.Value) []byte
	appendStringFunc func(b []byte, s string) []byte
)

// New compiles the Encoder of T, which must be a struct type.
func New[T any](o Options) *Encoder[T] {
	c := compiler{str: AppendString}
	if o.EscapeHTML {
		c.str = appendStringHTML
	}
	return &Encoder[T]{enc: c.compile(reflect.TypeFor[T](), ""), str: c.str}
}

// Append appends *rec as one JSON object; extra key/value string pairs,
// if any, come first.
func (e *Encoder[T]) Append(b []byte, rec *T, extra ...[2]string) []byte {
	v := reflect.ValueOf(rec).Elem()
	if len(extra) == 0 {
		return e.enc(b, v)
	}
	b = append(b, '{')
	for _, kv := range extra {
		b = e.str(b, kv[0])
		b = append(b, ':')
		b = e.str(b, kv[1])
		b = append(b, ',')
	}
	// Encode the record's object after the extras, then drop its '{'.
	pos := len(b)
	b = e.enc(b, v)
	if len(b) == pos+2 { // "{}": drop the extras' trailing comma too
		b = b[:pos]
		b[pos-1] = '}'
		return b
	}
	copy(b[pos:], b[pos+1:])
	return b[:len(b)-1]
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// key returns the JSON key of a struct field, or false if the field is
// left out (tagged "-").
func key(f reflect.StructField) (string, bool) {
	for _, tagName := range []string{"json", "parquet"} {
		tag, ok := f.Tag.Lookup(tagName)
		if !ok {
			continue
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
	return strings.ToLower(f.Name), true
}

// compiler builds the encoders of types with one way of writing strings.
type compiler struct {
	str appendStringFunc
}

// compile returns the encoder of type t; name is the key of the field
// (byte slices named *signature print as hex).
func (c compiler) compile(t reflect.Type, name string) encFunc {
	switch {
	case t == timeType:
		return encodeTime
	case t.Kind() != reflect.String && t.Kind() != reflect.Struct && t.Implements(stringerType):
		return func(b []byte, v reflect.Value) []byte {
			return c.str(b, v.Interface().(fmt.Stringer).String())
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte, v reflect.Value) []byte { return strconv.AppendBool(b, v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) []byte { return strconv.AppendInt(b, v.Int(), 10) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(b []byte, v reflect.Value) []byte { return strconv.AppendUint(b, v.Uint(), 10) }
	case reflect.Float32, reflect.Float64:
		return encodeFloat(t.Bits())
	case reflect.String:
		return func(b []byte, v reflect.Value) []byte { return c.str(b, v.String()) }
	case reflect.Pointer:
		elem := c.compile(t.Elem(), name)
		return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, "null"...)
			}
			return elem(b, v.Elem())
		}
	case reflect.Struct:
		return c.compileStruct(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return c.compileBytes(strings.HasSuffix(name, "signature"))
		}
		return c.compileSlice(t, name)
	case reflect.Map:
		return c.compileMap(t, name)
	}
	return func(b []byte, v reflect.Value) []byte { return c.str(b, fmt.Sprint(v.Interface())) }
}

func encodeTime(b []byte, v reflect.Value) []byte {
	var tm time.Time
	if v.CanAddr() {
		tm = *v.Addr().Interface().(*time.Time) // no boxing copy
	} else {
		tm = v.Interface().(time.Time)
	}
	if tm.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = tm.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func encodeFloat(bits int) encFunc {
	return func(b []byte, v reflect.Value) []byte {
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, f, 'g', -1, bits)
	}
}

func (c compiler) compileStruct(t reflect.Type) encFunc {
	type field struct {
		index int
		key   []byte // "name":
		enc   encFunc
		code  []byte // ,"name_code": for integer Stringers, else nil
	}
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		k, ok := key(f)
		if !ok {
			continue
		}
		fd := field{index: i, key: append(c.str(nil, k), ':'), enc: c.compile(f.Type, k)}
		if isIntKind(f.Type.Kind()) && f.Type.Implements(stringerType) {
			fd.code = append(c.str([]byte{','}, k+"_code"), ':')
		}
		fields = append(fields, fd)
	}
	return func(b []byte, v reflect.Value) []byte {
		b = append(b, '{')
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, f.key...)
			b = f.enc(b, v.Field(f.index))
			if f.code != nil {
				b = append(b, f.code...)
				if fv := v.Field(f.index); fv.CanInt() {
					b = strconv.AppendInt(b, fv.Int(), 10)
				} else {
					b = strconv.AppendUint(b, fv.Uint(), 10)
				}
			}
		}
		return append(b, '}')
	}
}

// isIntKind reports whether k is a signed or unsigned integer kind.
func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func (c compiler) compileBytes(signature bool) encFunc {
	return func(b []byte, v reflect.Value) []byte {
		raw := v.Bytes()
		switch {
		case v.IsNil():
			return append(b, "null"...)
		case signature:
			b = append(b, '"')
			b = hex.AppendEncode(b, raw)
			return append(b, '"')
		case utf8.Valid(raw):
			return c.str(b, string(raw))
		default:
			b = append(b, `"base64:`...)
			b = base64.StdEncoding.AppendEncode(b, raw)
			return append(b, '"')
		}
	}
}

func (c compiler) compileSlice(t reflect.Type, name string) encFunc {
	elem := c.compile(t.Elem(), name)
	return func(b []byte, v reflect.Value) []byte {
		b = append(b, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = elem(b, v.Index(i))
		}
		return append(b, ']')
	}
}

func (c compiler) compileMap(t reflect.Type, name string) encFunc {
	elem := c.compile(t.Elem(), name)
	return func(b []byte, v reflect.Value) []byte {
		if v.Len() == 0 {
			return append(b, "{}"...)
		}
		type kv struct {
			key string
			val reflect.Value
		}
		kvs := make([]kv, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			kvs = append(kvs, kv{fmt.Sprint(it.Key().Interface()), it.Value()})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].key < kvs[j].key })
		b = append(b, '{')
		for i, e := range kvs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.str(b, e.key)
			b = append(b, ':')
			b = elem(b, e.val)
		}
		return append(b, '}')
	}
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendStringHTML appends s as a JSON string escaped as encoding/json
// escapes it by default (see Options.EscapeHTML).
func appendStringHTML(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters, <, > and &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
