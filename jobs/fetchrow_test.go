package jobs

import (
	"reflect"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
)

// fillNonZero sets every settable field of v (a struct), recursively, to
// a non-zero value, so that a conversion that drops a field shows.
func fillNonZero(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(*n) * time.Minute)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillNonZero(t, v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillNonZero(t, s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillNonZero(t, k, n)
		fillNonZero(t, e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillNonZero(t, p.Elem(), n)
		v.Set(p)
	default:
		t.Fatalf("fillNonZero: field of kind %s", v.Kind())
	}
}

// TestFetchRowRoundTrip checks that a crawl_fetch row kept as a fetchRow
// comes back whole, every field of segment.Fetch set, with its datum
// taken from the fetch list, and without a datum for a redirect target.
func TestFetchRowRoundTrip(t *testing.T) {
	var want segment.Fetch
	n := 0
	fillNonZero(t, reflect.ValueOf(&want).Elem(), &n)
	rows := []crawldb.Datum{{URL: "http://other.test/"}, want.Datum}
	r := rowOf(&want, 1)
	if got := r.fetch(rows); !reflect.DeepEqual(got, &want) {
		t.Errorf("fetch-list row 1:\n got %+v\nwant %+v", got, &want)
	}
	r = rowOf(&want, -1)
	noDatum := want
	noDatum.Datum = crawldb.Datum{}
	if got := r.fetch(rows); !reflect.DeepEqual(got, &noDatum) {
		t.Errorf("redirect target (no row):\n got %+v\nwant %+v", got, &noDatum)
	}
}
