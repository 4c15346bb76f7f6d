package mapreduce_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
)

// The value types fuzzed: the shapes of the jobs' shuffle values (their
// own types are unexported in package jobs), with the real CrawlDB and
// segment rows inside, and one of every other supported kind.

// dbRecord has the shape of updatedb's shuffle value.
type dbRecord struct {
	Kind    uint8
	Old     *crawldb.Datum
	Fetch   *segment.Fetch
	Parse   *segment.ParseUpdate
	Cluster *clusterRecord
}

type clusterRecord struct {
	Label  int32
	Sample bool
}

// fetchRecord has the shape of the fetch job's shuffle value.
type fetchRecord struct {
	Fetch   *segment.Fetch
	Content *segment.Content
}

// parseRecord has the shape of the parse job's shuffle value, and a parse
// output row.
type parseRecord struct {
	Kind  uint8
	Fetch struct {
		Status    crawldb.Status
		Score     float32
		FetchTime time.Time
	}
	Content *segment.Content
	Data    *segment.ParseData
}

// blob encodes itself (mapreduce.ShuffleMarshaler): its bytes as they are.
type blob string

func (b blob) AppendShuffle(dst []byte) []byte { return append(dst, b...) }

func (b *blob) UnmarshalShuffle(data []byte) error {
	*b = blob(data)
	return nil
}

// mixed has every other kind the codec supports.
type mixed struct {
	Bool    bool
	Int     int
	I8      int8
	U       uint
	U16     [3]uint16
	F64     float64
	C64     complex64
	C128    complex128
	Nested  map[string][]byte
	ByID    map[int32]*segment.Outlink
	Times   []time.Time
	PTime   *time.Time
	Deep    **string
	Blob    blob
	Blobs   []blob
	BlobKey map[blob]int64
	Lists   [][]int16
	Source  crawldb.Source
	Ptrs    []*crawldb.Features
	hidden  int // skipped by the codec
}

// codecCase runs the decoding checks for one value type.
type codecCase struct {
	name   string
	decode func(t *testing.T, data []byte)
	fill   func(t *testing.T, s *fillSource)
	// samples are the encodings of good values.
	samples func() [][]byte
}

func newCodecCase[V any](t testing.TB, name string, samples ...V) codecCase {
	c, err := mapreduce.NewCodec[V]()
	if err != nil {
		t.Fatalf("codec of %s: %v", name, err)
	}
	return codecCase{
		name: name,
		decode: func(t *testing.T, data []byte) {
			var v V
			err := c.Decode(data, &v)
			// Decoding into a value that holds data gives the same.
			var w V
			fill(reflect.ValueOf(&w).Elem(), &fillSource{b: data}, 0)
			werr := c.Decode(data, &w)
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s: decode into a zero value: %v; into a full one: %v", name, err, werr)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "decode ") {
					t.Fatalf("%s: error without context: %v", name, err)
				}
				return
			}
			if !equalValues(reflect.ValueOf(v), reflect.ValueOf(w)) {
				t.Fatalf("%s: decoding into a full value merged into it:\n%+v\n%+v", name, v, w)
			}
			checkRoundTrip(t, name, c, &v)
		},
		fill: func(t *testing.T, s *fillSource) {
			var v V
			fill(reflect.ValueOf(&v).Elem(), s, 0)
			checkRoundTrip(t, name, c, &v)
		},
		samples: func() [][]byte {
			var out [][]byte
			for _, v := range samples {
				out = append(out, c.Append(nil, &v))
			}
			return out
		},
	}
}

// checkRoundTrip checks that v encodes, decodes to an equal value, and that
// value encodes to the same bytes.
func checkRoundTrip[V any](t *testing.T, name string, c *mapreduce.Codec[V], v *V) {
	t.Helper()
	enc := c.Append(nil, v)
	var got V
	if err := c.Decode(enc, &got); err != nil {
		t.Fatalf("%s: decoding an encoded value: %v\nvalue %+v\nbytes %x", name, err, *v, enc)
	}
	if !equalValues(reflect.ValueOf(*v), reflect.ValueOf(got)) {
		t.Fatalf("%s: round trip changed the value:\n%+v\n%+v", name, *v, got)
	}
	if enc2 := c.Append(nil, &got); !bytes.Equal(enc, enc2) {
		t.Fatalf("%s: re-encoding differs:\n%x\n%x", name, enc, enc2)
	}
	// Appending after other bytes leaves them and appends the same.
	prefix := []byte("prefix")
	if enc3 := c.Append(prefix, v); !bytes.Equal(enc3[:len(prefix)], []byte("prefix")) || !bytes.Equal(enc3[len(prefix):], enc) {
		t.Fatalf("%s: Append after a prefix differs", name)
	}
}

// equalValues compares a and b as the codec promises to keep them: times
// as instants (decoding gives UTC), floats by their bits (NaNs included),
// exported struct fields only.
func equalValues(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Complex64, reflect.Complex128:
		ca, cb := a.Complex(), b.Complex()
		return math.Float64bits(real(ca)) == math.Float64bits(real(cb)) &&
			math.Float64bits(imag(ca)) == math.Float64bits(imag(cb))
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equalValues(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() && !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// fillSource hands out the fuzz input's bytes, then zeros.
type fillSource struct{ b []byte }

func (s *fillSource) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *fillSource) uint64() uint64 {
	var x uint64
	for range 8 {
		x = x<<8 | uint64(s.byte())
	}
	return x
}

func (s *fillSource) bytes(n int) []byte {
	n = min(n, len(s.b))
	p := s.b[:n:n]
	s.b = s.b[n:]
	return p
}

// fill sets the exported parts of v from s: every value the codec
// supports, nil and empty containers, extreme numbers, NaNs, invalid
// UTF-8, times in and out of UnixNano's range and in other zones.
func fill(v reflect.Value, s *fillSource, depth int) {
	t := v.Type()
	if t == reflect.TypeFor[time.Time]() {
		var tm time.Time
		switch s.byte() % 5 {
		case 0: // zero
		case 1: // within UnixNano's range
			tm = time.Unix(0, int64(s.uint64())).UTC()
		case 2: // any second
			tm = time.Unix(int64(s.uint64()), int64(s.uint64()%1e9)).UTC()
		case 3: // another zone
			tm = time.Unix(int64(s.uint64()>>30), int64(s.uint64()%1e9)).In(time.FixedZone("X", int(int32(s.uint64())%86400)))
		case 4: // millisecond times, as the CrawlDB keeps them
			tm = time.UnixMilli(int64(s.uint64() >> 20)).UTC()
		}
		v.Set(reflect.ValueOf(tm))
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(s.byte()&1 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := int64(s.uint64())
		for v.OverflowInt(x) {
			x >>= 8
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x := s.uint64()
		for v.OverflowUint(x) {
			x >>= 8
		}
		v.SetUint(x)
	case reflect.Float32:
		v.SetFloat(float64(math.Float32frombits(uint32(s.uint64()))))
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(s.uint64()))
	case reflect.Complex64:
		v.SetComplex(complex(float64(math.Float32frombits(uint32(s.uint64()))), float64(math.Float32frombits(uint32(s.uint64())))))
	case reflect.Complex128:
		v.SetComplex(complex(math.Float64frombits(s.uint64()), math.Float64frombits(s.uint64())))
	case reflect.String:
		n := int(s.byte())
		if n > 200 {
			n = 200 + int(s.byte())*4 // past a one-byte length
		}
		v.SetString(string(s.bytes(n)))
	case reflect.Slice:
		c := s.byte()
		if c%4 == 0 || depth > 4 {
			v.SetZero()
			return
		}
		n := int(c>>2) % 9
		if t.Elem().Kind() == reflect.Uint8 && c&0x80 != 0 {
			n = int(s.byte()) * 2
		}
		sl := reflect.MakeSlice(t, n, n)
		for i := range n {
			fill(sl.Index(i), s, depth+1)
		}
		v.Set(sl)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), s, depth+1)
		}
	case reflect.Map:
		c := s.byte()
		if c%4 == 0 || depth > 4 {
			v.SetZero()
			return
		}
		n := int(c>>2) % 6
		m := reflect.MakeMapWithSize(t, n)
		for range n {
			k := reflect.New(t.Key()).Elem()
			e := reflect.New(t.Elem()).Elem()
			fill(k, s, depth+1)
			fill(e, s, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if s.byte()%3 == 0 || depth > 4 {
			v.SetZero()
			return
		}
		p := reflect.New(t.Elem())
		fill(p.Elem(), s, depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), s, depth+1)
			}
		}
	}
}

func sampleDatum(i int) *crawldb.Datum {
	base := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	d := &crawldb.Datum{
		URL:           "http://h.sim.test/a/b/page.html",
		Host:          "h.sim.test",
		Status:        crawldb.Status(i % 8),
		FetchTime:     base.Add(time.Duration(i) * time.Minute),
		PrevFetchTime: base.Add(-time.Duration(i) * time.Hour),
		FetchInterval: 2592000,
		Score:         1.0 / float32(i+1),
		Signature:     []byte{0xde, 0xad, byte(i), 1, 2, 3},
		HTTPStatus:    200,
		ContentType:   "text/html",
		ETag:          `"abc123"`,
		Features:      crawldb.Features{Words: 812, Outlinks: 40, Inlinks: int32(i), Depth: 3, Bytes: 20431},
		ClusterID:     -1,
		Source:        crawldb.SourceAdaptive,
		Metadata:      map[string]string{"_ngt_": "1763720000", "src": "seed"},
	}
	for j := range 3 {
		d.History = append(d.History, crawldb.Observation{Time: base.Add(-time.Duration(j) * 24 * time.Hour), Changed: j%2 == 0})
	}
	return d
}

func codecCases(t testing.TB) []codecCase {
	fetch := &segment.Fetch{URL: "http://h.sim.test/", Status: 33, FetchTime: time.Unix(1763720000, 0).UTC(), HTTPStatus: 200,
		ContentType: "text/html", Message: "ok", Datum: *sampleDatum(1)}
	content := &segment.Content{URL: "http://h.sim.test/", ContentType: "text/html", Headers: map[string]string{"Server": "x"},
		Body: []byte("<html>hello</html>"), FetchTime: time.Unix(1763720000, 5).UTC()}
	far := time.Date(9999, 1, 1, 0, 0, 0, 1, time.UTC)
	str := "deep"
	pstr := &str
	return []codecCase{
		newCodecCase(t, "dbRecord",
			dbRecord{Kind: 1, Old: sampleDatum(0)},
			dbRecord{Kind: 2, Fetch: fetch},
			dbRecord{Kind: 3, Parse: &segment.ParseUpdate{URL: "http://a.test/", Status: 67, Score: 0.5, FetchTime: far}},
			dbRecord{Kind: 4, Cluster: &clusterRecord{Label: -1, Sample: true}}),
		newCodecCase(t, "fetchRecord", fetchRecord{Fetch: fetch, Content: content}, fetchRecord{}),
		newCodecCase(t, "parseRecord", parseRecord{Kind: 1, Content: content,
			Data: &segment.ParseData{URL: "http://h.sim.test/", Outlinks: []segment.Outlink{{URL: "http://b.test/", Anchor: "b"}}, Meta: map[string]string{}}}),
		newCodecCase(t, "Datum", *sampleDatum(2), crawldb.Datum{}),
		newCodecCase(t, "map", map[string]string{"a": "1", "": ""}, map[string]string(nil)),
		newCodecCase(t, "mixed", mixed{Int: -5, F64: math.NaN(), Nested: map[string][]byte{"x": nil, "y": {}},
			Times: []time.Time{{}, far, time.Unix(-1e12, 3).UTC()}, PTime: &far, Deep: &pstr, Blob: blob(strings.Repeat("b", 300)),
			Blobs: []blob{"", "x"}, BlobKey: map[blob]int64{"k": 1}, Lists: [][]int16{nil, {}, {-1}}}),
	}
}

// FuzzCodecDecode decodes arbitrary bytes as the jobs' shuffle values:
// an error (with context), or a value that encodes and decodes back to
// itself; never a panic, and never a value merged into what *v held.
func FuzzCodecDecode(f *testing.F) {
	cases := codecCases(f)
	for _, c := range cases {
		for _, good := range c.samples() {
			f.Add(good)
			f.Add(good[:len(good)/2])
			f.Add(append(bytes.Clone(good), 0))
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{1, 1, 0x80, 0x80, 0x80, 0x80, 0x08})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range cases {
			c.decode(t, data)
		}
	})
}

// FuzzCodecRoundTrip builds values of the jobs' shuffle types from the
// fuzz input and checks that Append then Decode gives them back.
func FuzzCodecRoundTrip(f *testing.F) {
	cases := codecCases(f)
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 0x80, 0x7f, 0xfe}, 200))
	for _, c := range cases {
		for _, good := range c.samples() {
			f.Add(good)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range cases {
			c.fill(t, &fillSource{b: data})
		}
	})
}
