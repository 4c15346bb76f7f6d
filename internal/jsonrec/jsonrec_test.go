package jsonrec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/jsonrec"
	"github.com/trawl/trawl/segment"
)

// hardStrings need escaping of every kind.
var hardStrings = []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f\b\f", "ünïcødé ✓",
	"bad\xffutf8", "\u2028 and \u2029", "<a href='x?a=1&b=2'>", "\x7f"}

func TestAppendString(t *testing.T) {
	for _, s := range hardStrings {
		b := jsonrec.AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%q → %s: %v", s, b, err)
			continue
		}
		want := s
		if s == "bad\xffutf8" {
			want = "bad\ufffdutf8"
		}
		if got != want {
			t.Errorf("%q → %s → %q", s, b, got)
		}
	}
}

// stdRecord has what encoding/json encodes as the Encoder does.
type stdRecord struct {
	S   string            `json:"s"`
	P   *string           `json:"p"`
	Nil *string           `json:"nil"`
	I   int32             `json:"i"`
	U   uint64            `json:"u"`
	F   float64           `json:"f"`
	B   bool              `json:"b"`
	L   []stdElem         `json:"l"`
	M   map[string]string `json:"m"`
	E   stdElem           `json:"e"`
}

type stdElem struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// TestEscapeHTMLMatchesEncodingJSON: with EscapeHTML the bytes are those
// of encoding/json.Marshal (readdb dump's JSON depends on it).
func TestEscapeHTMLMatchesEncodingJSON(t *testing.T) {
	enc := jsonrec.New[stdRecord](jsonrec.Options{EscapeHTML: true})
	for _, s := range hardStrings {
		r := stdRecord{S: s, P: &s, I: -7, U: 1 << 60, F: 0.1, B: true,
			L: []stdElem{{s, 1}, {"x", 2}}, M: map[string]string{s: s, "b&": "<", "a": ">"}, E: stdElem{s, 3}}
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := enc.Append(nil, &r); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
}

func sampleFetch() segment.Fetch {
	at := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	return segment.Fetch{
		URL: "http://h0001.sim.test/p/1.html", Status: crawldb.StatusFetchSuccess, FetchTime: at,
		HTTPStatus: 200, ContentType: "text/html", ETag: `"abc"`,
		Datum: crawldb.Datum{URL: "http://h0001.sim.test/p/1.html", Host: "h0001.sim.test", Status: crawldb.StatusDBFetched,
			FetchTime: at, Score: 1.5, Signature: []byte{1, 2, 3}, Metadata: map[string]string{"b": "2", "a": "1"},
			History: []crawldb.Observation{{Time: at, Changed: true}}},
	}
}

func TestAppendRecord(t *testing.T) {
	f := sampleFetch()
	b := jsonrec.New[segment.Fetch](jsonrec.Options{}).Append(nil, &f, [2]string{"dir", "crawl_fetch"})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	d := m["datum"].(map[string]any)
	if m["dir"] != "crawl_fetch" || m["status"] != "fetch_success" || m["status_code"] != float64(33) ||
		d["status"] != "db_fetched" || d["status_code"] != float64(2) || m["redirect_url"] != "" ||
		d["signature"] != "010203" || d["prev_fetch_time"] != nil || d["score"] != 1.5 ||
		d["metadata"].(map[string]any)["a"] != "1" || d["history"].([]any)[0].(map[string]any)["changed"] != true {
		t.Errorf("record JSON: %s", b)
	}
}

func TestAppendEmptyRecordWithExtras(t *testing.T) {
	type empty struct{}
	got := jsonrec.New[empty](jsonrec.Options{}).Append(nil, &empty{}, [2]string{"dir", "x"})
	if string(got) != `{"dir":"x"}` {
		t.Errorf("got %s", got)
	}
}

func BenchmarkAppendRecord(b *testing.B) {
	f := sampleFetch()
	var buf []byte
	enc := jsonrec.New[segment.Fetch](jsonrec.Options{})
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.Append(buf[:0], &f, [2]string{"dir", "crawl_fetch"})
	}
	b.SetBytes(int64(len(buf)))
}

// dumpRows are 100,000 CrawlDB rows, as readdb dump writes them.
func dumpRows() []crawldb.Datum {
	at := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	ds := make([]crawldb.Datum, 100_000)
	for i := range ds {
		ds[i] = crawldb.Datum{URL: fmt.Sprintf("http://h%04d.sim.test/p/%d.html?a=1&b=2", i%100, i),
			Host: fmt.Sprintf("h%04d.sim.test", i%100), Status: crawldb.StatusDBFetched,
			FetchTime: at.Add(time.Duration(i) * time.Millisecond), ModifiedTime: at, Score: 1.5,
			Signature: bytes.Repeat([]byte{0xab}, 16), Metadata: map[string]string{"b": "2", "a": "1"},
			FetchInterval: 2592000, HTTPStatus: 200, ContentType: "text/html",
			History: []crawldb.Observation{{Time: at, Changed: true}, {Time: at.Add(time.Hour)}}}
	}
	return ds
}

// BenchmarkDump100k compares the Encoder with encoding/json on a 100k-row
// dump of CrawlDB rows (one op = the whole dump).
func BenchmarkDump100k(b *testing.B) {
	ds := dumpRows()
	b.Run("jsonrec", func(b *testing.B) {
		enc := jsonrec.New[crawldb.Datum](jsonrec.Options{})
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = buf[:0]
			for i := range ds {
				buf = append(enc.Append(buf, &ds[i]), '\n')
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			e := json.NewEncoder(&buf)
			for i := range ds {
				if err := e.Encode(&ds[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("readdb-dump", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			w := crawldb.NewJSONWriter(&buf)
			for i := range ds {
				if err := w.Write(&ds[i]); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
		}
		b.SetBytes(int64(buf.Len()))
	})
}
