package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f", "ünïcødé ✓", "bad\xffutf8", "\u2028"} {
		b := appendJSONString(nil, s)
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

func TestAppendRecordJSON(t *testing.T) {
	b := appendRecordJSON(nil, sampleFetch(), [2]string{"dir", "crawl_fetch"})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	d := m["datum"].(map[string]any)
	if m["dir"] != "crawl_fetch" || m["status"] != "fetch_success" || m["redirect_url"] != "" ||
		d["signature"] != "010203" || d["prev_fetch_time"] != nil || d["score"] != 1.5 ||
		d["metadata"].(map[string]any)["a"] != "1" || d["history"].([]any)[0].(map[string]any)["changed"] != true {
		t.Errorf("record JSON: %s", b)
	}
}

func BenchmarkAppendRecordJSON(b *testing.B) {
	f := sampleFetch()
	var buf []byte
	enc := newRecordEncoder[segment.Fetch]()
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.append(buf[:0], f, [2]string{"dir", "crawl_fetch"})
	}
	b.SetBytes(int64(len(buf)))
}
