package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// appendRecordJSON appends v (a Parquet record struct) as a JSON object
// whose keys are the Parquet column names, in column order. Times are
// RFC 3339 in UTC (null when zero), values with a String method of their
// own (statuses) print as that string, signatures as hex, other byte
// slices as text when they are UTF-8 and as "base64:..." otherwise.
// extra fields, if given, come first.
func appendRecordJSON(b []byte, v any, extra ...[2]string) []byte {
	b = append(b, '{')
	for i, kv := range extra {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, kv[0])
		b = append(b, ':')
		b = appendJSONString(b, kv[1])
	}
	rv := reflect.ValueOf(v)
	return appendStructFields(b, rv, len(extra) > 0)
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

func appendStructFields(b []byte, v reflect.Value, comma bool) []byte {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, ok := columnName(f)
		if !ok {
			continue
		}
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = strconv.AppendQuote(b, name)
		b = append(b, ':')
		b = appendJSONValue(b, v.Field(i), name)
	}
	return append(b, '}')
}

func appendJSONString(b []byte, s string) []byte {
	out, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return append(b, `""`...)
	}
	return append(b, out...)
}

func appendJSONValue(b []byte, v reflect.Value, name string) []byte {
	t := v.Type()
	if t == timeType {
		tm := v.Interface().(time.Time)
		if tm.IsZero() {
			return append(b, "null"...)
		}
		return appendJSONString(b, tm.UTC().Format(time.RFC3339Nano))
	}
	if t.Kind() != reflect.String && t.Kind() != reflect.Struct && t.Implements(stringerType) {
		return appendJSONString(b, v.Interface().(fmt.Stringer).String())
	}
	switch t.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10)
	case reflect.Float32:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 32)
	case reflect.Float64:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
	case reflect.String:
		return appendJSONString(b, v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...)
		}
		return appendJSONValue(b, v.Elem(), name)
	case reflect.Struct:
		b = append(b, '{')
		return appendStructFields(b, v, false)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			raw := v.Bytes()
			switch {
			case v.IsNil():
				return append(b, "null"...)
			case strings.HasSuffix(name, "signature"):
				return appendJSONString(b, hex.EncodeToString(raw))
			case utf8.Valid(raw):
				return appendJSONString(b, string(raw))
			default:
				return appendJSONString(b, "base64:"+base64.StdEncoding.EncodeToString(raw))
			}
		}
		b = append(b, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, v.Index(i), name)
		}
		return append(b, ']')
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, fmt.Sprint(k))
			b = append(b, ':')
			b = appendJSONValue(b, v.MapIndex(k), name)
		}
		return append(b, '}')
	}
	return appendJSONString(b, fmt.Sprint(v.Interface()))
}
