package crawldb_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/mapreduce"
)

// roundTrip encodes d and decodes it into a Datum that held other values.
func roundTrip(t *testing.T, d *crawldb.Datum) (crawldb.Datum, []byte) {
	t.Helper()
	b := d.AppendShuffle([]byte("prefix"))
	if string(b[:6]) != "prefix" {
		t.Fatal("AppendShuffle changed what it appends to")
	}
	b = b[6:]
	got := crawldb.Datum{URL: "stale", History: []crawldb.Observation{{Changed: true}}, Metadata: map[string]string{"a": "b"}}
	if err := got.UnmarshalShuffle(bytes.Clone(b)); err != nil {
		t.Fatalf("UnmarshalShuffle: %v", err)
	}
	return got, b
}

// TestDatumShuffle checks that a Datum's shuffle encoding gives back
// every field: filled at random (every field set), the zero Datum, empty
// rather than nil slices and maps, and times outside UnixNano's range;
// and that it is deterministic, whatever the order of the metadata map.
func TestDatumShuffle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		var d crawldb.Datum
		crawldbtest.Fill(t, r, reflect.ValueOf(&d).Elem())
		got, b := roundTrip(t, &d)
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("round trip %d:\n got %+v\nwant %+v", i, got, d)
		}
		for range 5 {
			if b2 := d.AppendShuffle(nil); !bytes.Equal(b2, b) {
				t.Fatal("two encodings of one datum differ")
			}
		}
	}
	far := time.Date(2500, 1, 2, 3, 4, 5, 6, time.UTC)
	farMilli := time.Date(2600, 1, 2, 3, 4, 5, 7e6, time.UTC)
	for _, d := range []crawldb.Datum{
		{},
		{Signature: []byte{}, History: []crawldb.Observation{}, Metadata: map[string]string{}},
		{URL: "http://a/", FetchTime: far, PrevFetchTime: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC),
			History: []crawldb.Observation{{Time: far, Initial: true}}, Metadata: map[string]string{"": ""}},
		{ModifiedTime: farMilli, GenerateTime: time.UnixMilli(-1).UTC(), FetchTime: time.UnixMilli(1767225600123).UTC()},
		// Whole milliseconds past UnixMilli's range (found by the
		// engine's codec fuzzer).
		{FetchTime: time.Unix(3458764513820540928, 0).UTC(), PrevFetchTime: time.Unix(-3458764513820540928, 5e6).UTC()},
	} {
		got, _ := roundTrip(t, &d)
		if !reflect.DeepEqual(got, d) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, d)
		}
	}
}

// TestDatumShuffleCorrupt checks that every truncation of an encoding,
// and an encoding with bytes added, is an error, not a panic or a datum.
func TestDatumShuffleCorrupt(t *testing.T) {
	var d crawldb.Datum
	crawldbtest.Fill(t, rand.New(rand.NewPCG(3, 4)), reflect.ValueOf(&d).Elem())
	b := d.AppendShuffle(nil)
	for n := range len(b) {
		var got crawldb.Datum
		if err := got.UnmarshalShuffle(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes decoded without an error", n, len(b))
		}
	}
	var got crawldb.Datum
	if err := got.UnmarshalShuffle(append(bytes.Clone(b), 'x')); err == nil {
		t.Fatal("a trailing byte decoded without an error")
	}
}

// TestDatumShuffleInCodec checks that the engine's codec encodes a Datum,
// by value and by pointer, with the Datum's own encoding.
func TestDatumShuffleInCodec(t *testing.T) {
	type value struct {
		Kind uint8
		Old  *crawldb.Datum
		In   crawldb.Datum
		Nil  *crawldb.Datum
	}
	c, err := mapreduce.NewCodec[value]()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var v value
	crawldbtest.Fill(t, r, reflect.ValueOf(&v.In).Elem())
	old := v.In
	old.URL = "http://other/"
	v.Kind, v.Old = 3, &old
	b := c.Append(nil, &v)
	if !bytes.Contains(b, v.In.AppendShuffle(nil)) || !bytes.Contains(b, old.AppendShuffle(nil)) {
		t.Error("the codec did not use the Datum's own encoding")
	}
	var got value
	if err := c.Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, v)
	}
}

// BenchmarkDatumShuffle measures a typical row's encoding and decoding.
func BenchmarkDatumShuffle(b *testing.B) {
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	d := crawldb.Datum{URL: "http://host-017.sim.test:8080/section/page-00123.html", Host: "host-017.sim.test",
		Status: crawldb.StatusDBFetched, FetchTime: now, PrevFetchTime: now.Add(-24 * time.Hour), ModifiedTime: now.Add(-48 * time.Hour),
		GenerateTime: now, FetchInterval: 86400, Score: 0.42, Signature: make([]byte, 16), HTTPStatus: 200, ContentType: "text/html",
		ETag: `"abc123-456"`, LastModified: "Sat, 03 Jan 2026 00:00:00 GMT", FetchCount: 4, ChangeCount: 2, ClusterID: -1}
	for i := range 4 {
		d.History = append(d.History, crawldb.Observation{Time: now.Add(time.Duration(-i) * 24 * time.Hour), Changed: i%2 == 0, Modified: now.UnixMilli()})
	}
	buf := d.AppendShuffle(nil)
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			buf = d.AppendShuffle(buf[:0])
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		var got crawldb.Datum
		for b.Loop() {
			if err := got.UnmarshalShuffle(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzDatumUnmarshalShuffle decodes arbitrary bytes as a shuffle datum:
// never a panic, and what decodes encodes to bytes that decode to a
// datum with the same encoding (compared as bytes, so that a NaN score
// equals itself).
func FuzzDatumUnmarshalShuffle(f *testing.F) {
	var d crawldb.Datum
	crawldbtest.Fill(f, rand.New(rand.NewPCG(7, 8)), reflect.ValueOf(&d).Elem())
	f.Add(d.AppendShuffle(nil))
	f.Add((&crawldb.Datum{}).AppendShuffle(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got crawldb.Datum
		if err := got.UnmarshalShuffle(data); err != nil {
			return
		}
		b := got.AppendShuffle(nil)
		var again crawldb.Datum
		if err := again.UnmarshalShuffle(b); err != nil {
			t.Fatalf("re-encoded datum does not decode: %v", err)
		}
		if b2 := again.AppendShuffle(nil); !bytes.Equal(b2, b) {
			t.Fatalf("round trip of a decoded datum:\n got %+v\nwant %+v", again, got)
		}
	})
}
