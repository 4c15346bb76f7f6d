package mapreduce

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// testDatum has the shape of crawldb.Datum (copied here so the engine's
// tests do not depend on another package).
type testDatum struct {
	URL           string
	Host          string
	Status        uint8
	FetchTime     time.Time
	PrevFetchTime time.Time
	ModifiedTime  time.Time
	GenerateTime  time.Time
	FetchInterval int32
	FixedInterval bool
	Retries       int32
	Score         float32
	Signature     []byte
	HTTPStatus    int32
	ContentType   string
	ETag          string
	LastModified  string
	FetchCount    int32
	ChangeCount   int32
	History       []testObs
	Features      testFeatures
	ClusterID     int32
	Source        string
	Metadata      map[string]string
}

type testObs struct {
	Time    time.Time
	Changed bool
}

type testFeatures struct {
	Words, Outlinks, Inlinks, Images, Depth int32
	Bytes                                   int64
}

func sampleDatum(i int) testDatum {
	base := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	d := testDatum{
		URL:           fmt.Sprintf("http://h%04d.sim.test/a/b/page-%d.html", i%97, i),
		Host:          fmt.Sprintf("h%04d.sim.test", i%97),
		Status:        uint8(i % 8),
		FetchTime:     base.Add(time.Duration(i) * time.Minute),
		PrevFetchTime: base.Add(-time.Duration(i) * time.Hour),
		FetchInterval: 2592000,
		Retries:       int32(i % 3),
		Score:         1.0 / float32(i+1),
		Signature:     []byte{0xde, 0xad, byte(i), byte(i >> 8), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		HTTPStatus:    200,
		ContentType:   "text/html",
		ETag:          `"abc123"`,
		FetchCount:    int32(i % 10),
		ChangeCount:   int32(i % 4),
		Features:      testFeatures{Words: 812, Outlinks: 40, Inlinks: int32(i % 50), Images: 3, Depth: 3, Bytes: 20431},
		ClusterID:     -1,
		Source:        "adaptive",
	}
	for j := 0; j < 6; j++ {
		d.History = append(d.History, testObs{Time: base.Add(-time.Duration(j) * 24 * time.Hour), Changed: j%2 == 0})
	}
	if i%4 == 0 {
		d.Metadata = map[string]string{"_ngt_": "1763720000", "src": "seed", "a": "b"}
	}
	return d
}

type allKinds struct {
	B    bool
	I    int
	I8   int8
	I64  int64
	U    uint
	U16  uint16
	F32  float32
	F64  float64
	C    complex128
	S    string
	Bs   []byte
	NilB []byte
	EmpB []byte
	T    time.Time
	Zero time.Time
	Far  time.Time
	Arr  [3]int16
	Sl   []string
	M    map[int]string
	MP   map[string]*int
	P    *testObs
	NilP *testObs
	Named
	Rec    *allKinds
	hidden int
}

type Named int64

type custom struct{ a, b uint32 }

func (c custom) AppendShuffle(dst []byte) []byte {
	return fmt.Appendf(dst, "%d/%d", c.a, c.b)
}
func (c *custom) UnmarshalShuffle(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d/%d", &c.a, &c.b)
	return err
}

func roundTrip[V any](t *testing.T, v V) V {
	t.Helper()
	c, err := NewCodec[V]()
	if err != nil {
		t.Fatal(err)
	}
	b := c.Append(nil, &v)
	var got V
	if err := c.Decode(b, &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	b2 := c.Append(nil, &got)
	if !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs")
	}
	return got
}

func TestCodecRoundTrip(t *testing.T) {
	seven := 7
	v := allKinds{
		B: true, I: -123456789, I8: -8, I64: math.MinInt64, U: math.MaxUint64 >> 1, U16: 65535,
		F32: 3.5, F64: -math.Pi, C: complex(1, -2), S: "héllo\x00\t\n", Bs: []byte{0, 1, 2},
		EmpB: []byte{}, T: time.Date(2026, 1, 1, 0, 0, 0, 123, time.FixedZone("x", 3600)),
		Far: time.Date(3000, 1, 1, 0, 0, 0, 5, time.UTC), Arr: [3]int16{-1, 0, 1},
		Sl: []string{"a", "", "c"}, M: map[int]string{3: "c", -1: "a", 2: "b"},
		MP: map[string]*int{"x": &seven, "nil": nil}, P: &testObs{Time: time.Unix(5, 0), Changed: true},
		Named: -42, Rec: &allKinds{S: "inner", Sl: []string{}}, hidden: 9,
	}
	got := roundTrip(t, v)
	v.hidden = 0
	v.T = v.T.UTC()
	v.P.Time = v.P.Time.UTC()
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, v)
	}
	if got.EmpB == nil || got.NilB != nil || got.Rec.Sl == nil || got.Rec.M != nil {
		t.Fatal("nil and empty not preserved")
	}
	d := sampleDatum(12)
	if gd := roundTrip(t, d); !reflect.DeepEqual(gd, d) {
		t.Fatalf("datum round trip: %+v", gd)
	}
	if s := roundTrip(t, "plain"); s != "plain" {
		t.Fatal(s)
	}
	if cs := roundTrip(t, []custom{{1, 2}, {300, 4000000}}); !reflect.DeepEqual(cs, []custom{{1, 2}, {300, 4000000}}) {
		t.Fatalf("custom: %v", cs)
	}
	long := struct{ C custom }{custom{math.MaxUint32, math.MaxUint32}}
	if roundTrip(t, long) != long {
		t.Fatal("custom")
	}
}

func TestCodecCustomLongPayload(t *testing.T) {
	type big struct{ X bigM }
	v := big{X: bigM(bytes.Repeat([]byte("z"), 300))}
	got := roundTrip(t, v)
	if !bytes.Equal(got.X, v.X) {
		t.Fatal("long custom payload")
	}
}

type bigM []byte

func (b bigM) AppendShuffle(dst []byte) []byte { return append(dst, b...) }
func (b *bigM) UnmarshalShuffle(p []byte) error {
	*b = append(bigM(nil), p...)
	return nil
}

func TestCodecDeterministicMaps(t *testing.T) {
	c, err := NewCodec[map[string]int]()
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := 0; i < 50; i++ {
		m := map[string]int{}
		for _, k := range rand.Perm(40) {
			m[fmt.Sprint("k", k)] = k
		}
		b := c.Append(nil, &m)
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("map encoding not deterministic")
		}
	}
}

func TestCodecUnsupported(t *testing.T) {
	type bad struct {
		A int
		F func()
	}
	if _, err := NewCodec[bad](); err == nil || !bytesContains(err.Error(), "bad.F") {
		t.Fatalf("want an error naming the field, got %v", err)
	}
	if _, err := NewCodec[any](); err == nil {
		t.Fatal("interface accepted")
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// node is a recursive type: its codec calls itself through the builder's
// indirection.
type node struct {
	Name     string
	Next     *node
	Children []node
	ByName   map[string]*node
}

// TestCodecRecursive: recursive types round-trip, at every depth.
func TestCodecRecursive(t *testing.T) {
	c, err := NewCodec[node]()
	if err != nil {
		t.Fatal(err)
	}
	leaf := &node{Name: "leaf"}
	in := node{Name: "root", Next: &node{Name: "b", Next: leaf},
		Children: []node{{Name: "c1", Next: leaf}, {Name: "c2", Children: []node{{Name: "gc"}}}},
		ByName:   map[string]*node{"x": {Name: "x", ByName: map[string]*node{"y": leaf}}, "nil": nil}}
	var out node
	if err := c.Decode(c.Append(nil, &in), &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v, want %+v", out, in)
	}
}

// TestCodecCorrupt: truncated or random bytes give errors, never panics.
func TestCodecCorrupt(t *testing.T) {
	c, err := NewCodec[testDatum]()
	if err != nil {
		t.Fatal(err)
	}
	d := sampleDatum(4)
	b := c.Append(nil, &d)
	var out testDatum
	for i := 0; i < len(b); i++ {
		if err := c.Decode(b[:i], &out); err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
	if err := c.Decode(append(b, 0), &out); err == nil {
		t.Fatal("trailing byte accepted")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		junk := make([]byte, r.IntN(200))
		for j := range junk {
			junk[j] = byte(r.Uint32())
		}
		_ = c.Decode(junk, &out) // must not panic
	}
}

func BenchmarkCodec(b *testing.B) {
	ds := make([]testDatum, 256)
	for i := range ds {
		ds[i] = sampleDatum(i)
	}
	b.Run("encode/trawl", func(b *testing.B) {
		c, _ := NewCodec[testDatum]()
		var buf []byte
		n := 0
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = c.Append(buf[:0], &ds[i%len(ds)])
			n += len(buf)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/value")
	})
	b.Run("decode/trawl", func(b *testing.B) {
		c, _ := NewCodec[testDatum]()
		encs := make([][]byte, len(ds))
		for i := range ds {
			encs[i] = c.Append(nil, &ds[i])
		}
		var d testDatum
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := c.Decode(encs[i%len(encs)], &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/gob", func(b *testing.B) {
		// A fresh encoder per value, as a shuffle of independent values
		// needs (gob streams carry type info once per stream).
		var buf bytes.Buffer
		n := 0
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := gob.NewEncoder(&buf).Encode(&ds[i%len(ds)]); err != nil {
				b.Fatal(err)
			}
			n += buf.Len()
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/value")
	})
	b.Run("decode/gob", func(b *testing.B) {
		encs := make([][]byte, len(ds))
		for i := range ds {
			var buf bytes.Buffer
			_ = gob.NewEncoder(&buf).Encode(&ds[i])
			encs[i] = buf.Bytes()
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var d testDatum
			if err := gob.NewDecoder(bytes.NewReader(encs[i%len(encs)])).Decode(&d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		n := 0
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out, err := json.Marshal(&ds[i%len(ds)])
			if err != nil {
				b.Fatal(err)
			}
			n += len(out)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/value")
	})
	b.Run("decode/json", func(b *testing.B) {
		encs := make([][]byte, len(ds))
		for i := range ds {
			encs[i], _ = json.Marshal(&ds[i])
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var d testDatum
			if err := json.Unmarshal(encs[i%len(encs)], &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
