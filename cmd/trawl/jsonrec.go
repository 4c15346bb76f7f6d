package main

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

// recordEncoder encodes records of one struct type (a Parquet record) as
// JSON objects whose keys are the Parquet column names, in column order.
// Times are RFC 3339 in UTC (null when zero), values with a String method
// of their own (statuses) print as that string, signatures as hex, other
// byte slices as text when they are UTF-8 and as "base64:..." otherwise.
// It is built once per type (reflection on tags happens then, not per
// record) and is not tied to any global cache.
type recordEncoder[T any] struct {
	enc encFunc
}

type encFunc func(b []byte, v reflect.Value) []byte

func newRecordEncoder[T any]() *recordEncoder[T] {
	return &recordEncoder[T]{enc: compileEnc(reflect.TypeFor[T](), "")}
}

// append appends rec as one JSON object; extra key/value string pairs, if
// any, come first.
func (e *recordEncoder[T]) append(b []byte, rec T, extra ...[2]string) []byte {
	v := reflect.ValueOf(&rec).Elem()
	if len(extra) == 0 {
		return e.enc(b, v)
	}
	b = append(b, '{')
	for _, kv := range extra {
		b = appendJSONString(b, kv[0])
		b = append(b, ':')
		b = appendJSONString(b, kv[1])
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

// appendRecordJSON encodes one record; for many records of a type, use a
// recordEncoder.
func appendRecordJSON[T any](b []byte, rec T, extra ...[2]string) []byte {
	return newRecordEncoder[T]().append(b, rec, extra...)
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

func columnName(f reflect.StructField) (string, bool) {
	tag, ok := f.Tag.Lookup("parquet")
	if !ok {
		return strings.ToLower(f.Name), true
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

// compileEnc returns the encoder of type t; name is the column name (byte
// slices named *signature print as hex).
func compileEnc(t reflect.Type, name string) encFunc {
	switch {
	case t == timeType:
		return func(b []byte, v reflect.Value) []byte {
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
	case t.Kind() != reflect.String && t.Kind() != reflect.Struct && t.Implements(stringerType):
		return func(b []byte, v reflect.Value) []byte {
			return appendJSONString(b, v.Interface().(fmt.Stringer).String())
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
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		return func(b []byte, v reflect.Value) []byte {
			f := v.Float()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return append(b, "null"...)
			}
			return strconv.AppendFloat(b, f, 'g', -1, bits)
		}
	case reflect.String:
		return func(b []byte, v reflect.Value) []byte { return appendJSONString(b, v.String()) }
	case reflect.Pointer:
		elem := compileEnc(t.Elem(), name)
		return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, "null"...)
			}
			return elem(b, v.Elem())
		}
	case reflect.Struct:
		type field struct {
			index int
			key   []byte // "name":
			enc   encFunc
		}
		var fields []field
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			col, ok := columnName(f)
			if !ok {
				continue
			}
			key := append(appendJSONString(nil, col), ':')
			fields = append(fields, field{index: i, key: key, enc: compileEnc(f.Type, col)})
		}
		return func(b []byte, v reflect.Value) []byte {
			b = append(b, '{')
			for i, f := range fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, f.key...)
				b = f.enc(b, v.Field(f.index))
			}
			return append(b, '}')
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			sig := strings.HasSuffix(name, "signature")
			return func(b []byte, v reflect.Value) []byte {
				raw := v.Bytes()
				switch {
				case v.IsNil():
					return append(b, "null"...)
				case sig:
					b = append(b, '"')
					b = hex.AppendEncode(b, raw)
					return append(b, '"')
				case utf8.Valid(raw):
					return appendJSONString(b, string(raw))
				default:
					b = append(b, `"base64:`...)
					b = base64.StdEncoding.AppendEncode(b, raw)
					return append(b, '"')
				}
			}
		}
		elem := compileEnc(t.Elem(), name)
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
	case reflect.Map:
		elem := compileEnc(t.Elem(), name)
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
				b = appendJSONString(b, e.key)
				b = append(b, ':')
				b = elem(b, e.val)
			}
			return append(b, '}')
		}
	}
	return func(b []byte, v reflect.Value) []byte { return appendJSONString(b, fmt.Sprint(v.Interface())) }
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
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
