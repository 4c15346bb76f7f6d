package segment_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/segment"
)

// Each segment record type must round-trip through parquet-go and be
// readable, column by column, by Arrow's Parquet reader.

var t0 = time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)

func TestGenerateLayout(t *testing.T) {
	crawldbtest.RoundTrip[segment.Generate](t, crawldbtest.SampleDatums(100, 3))
}

func TestFetchLayout(t *testing.T) {
	datums := crawldbtest.SampleDatums(120, 4)
	rows := make([]segment.Fetch, len(datums))
	for i, d := range datums {
		f := segment.Fetch{URL: d.URL, Datum: d}
		switch i % 4 {
		case 0:
			f.Status, f.HTTPStatus, f.FetchTime = crawldb.StatusFetchSuccess, 200, t0.Add(time.Duration(i)*time.Second)
			f.ContentType, f.ETag, f.LastModified = "text/html", `"abc"`, "Sat, 21 Nov 2026 10:00:00 GMT"
		case 1:
			f.Status, f.HTTPStatus, f.FetchTime = crawldb.StatusFetchRedirPerm, 301, t0
			f.RedirectURL = "http://elsewhere.example/"
		case 2:
			f.Status, f.Message = crawldb.StatusFetchRetry, "connection refused"
			// FetchTime zero: the fetch never happened.
		case 3:
			f.Status, f.HTTPStatus, f.FetchTime = crawldb.StatusFetchGone, 404, t0
		}
		rows[i] = f
	}
	crawldbtest.RoundTrip(t, rows, parquet.MaxRowsPerRowGroup(50))
}

func TestContentLayout(t *testing.T) {
	var rows []segment.Content
	for i := 0; i < 50; i++ {
		c := segment.Content{URL: fmt.Sprintf("http://h.example/%d", i), BaseURL: "http://h.example/",
			ContentType: "text/html", FetchTime: t0.Add(time.Duration(i) * time.Minute)}
		if i%3 != 0 {
			c.Headers = map[string]string{"Content-Type": "text/html", "X-N": fmt.Sprint(i)}
			c.Body = []byte(fmt.Sprintf("<html>%d\x00\xff</html>", i))
			c.Truncated = i%5 == 0
		}
		if i%7 == 0 {
			c.FetchTime = time.Time{}
		}
		rows = append(rows, c)
	}
	crawldbtest.RoundTrip(t, rows)
}

func TestParseDataLayout(t *testing.T) {
	var rows []segment.ParseData
	for i := 0; i < 60; i++ {
		p := segment.ParseData{URL: fmt.Sprintf("http://h.example/%03d", i), Success: i%6 != 0}
		if !p.Success {
			p.Message = "bad html"
		} else {
			p.Title = fmt.Sprintf("Title «%d»", i)
			for j := 0; j < i%5; j++ {
				p.Outlinks = append(p.Outlinks, segment.Outlink{URL: fmt.Sprintf("http://o.example/%d/%d", i, j), Anchor: fmt.Sprint("a", j)})
			}
			p.Signature = []byte{byte(i), 1, 2, 3}
			if i%2 == 0 {
				p.FuzzySignature = []byte{byte(i), 9}
			}
			p.Features = crawldb.Features{Words: int32(i * 10), Outlinks: int32(len(p.Outlinks)), Depth: 1, Bytes: int64(i) << 20}
			p.NoIndex, p.NoFollow = i%4 == 0, i%8 == 0
			p.Canonical = "http://h.example/c"
			p.RefreshURL = ""
			p.Meta = map[string]string{"robots": "noindex"}
		}
		rows = append(rows, p)
	}
	crawldbtest.RoundTrip(t, rows)
}

func TestParseTextLayout(t *testing.T) {
	rows := []segment.ParseText{{URL: "http://a/", Text: "hello world"}, {URL: "http://b/"}, {URL: "http://c/", Text: "ünïcode\n\ttabs"}}
	crawldbtest.RoundTrip(t, rows)
}

func TestParseUpdateLayout(t *testing.T) {
	var rows []segment.ParseUpdate
	for i := 0; i < 40; i++ {
		u := segment.ParseUpdate{URL: fmt.Sprintf("http://t.example/%d", i)}
		if i%2 == 0 {
			u.Status, u.Signature, u.FetchTime = crawldb.StatusSignature, []byte{1, byte(i)}, t0
			u.Features = crawldb.Features{Words: int32(i), Images: 3}
			for k := range i % 5 {
				u.Links = append(u.Links, segment.ParseLink{URL: fmt.Sprintf("http://t.example/%d/%d", i, k), Anchor: "a", Relevance: float32(k) / 4})
			}
		} else {
			u.Status, u.FromURL, u.Anchor, u.Score = crawldb.StatusLinked, "http://f.example/", "anchor", float32(i)/7
		}
		rows = append(rows, u)
	}
	crawldbtest.RoundTrip(t, rows)
}

func TestParseUpdateLinked(t *testing.T) {
	page := segment.ParseUpdate{URL: "http://a/", Status: crawldb.StatusSignature, Score: 0.25, FetchTime: t0, OffTopicHops: 2,
		Links: []segment.ParseLink{{URL: "http://b/", Anchor: "b", Relevance: 0.5}, {URL: "http://c/"}}}
	want := []segment.ParseUpdate{
		{URL: "http://b/", Status: crawldb.StatusLinked, FromURL: "http://a/", Anchor: "b", Score: 0.25, FetchTime: t0, Relevance: 0.5, OffTopicHops: 2},
		{URL: "http://c/", Status: crawldb.StatusLinked, FromURL: "http://a/", Score: 0.25, FetchTime: t0, OffTopicHops: 2},
	}
	if got := page.Linked(); !reflect.DeepEqual(got, want) {
		t.Errorf("Linked() = %+v, want %+v", got, want)
	}
	one := want[0]
	if got := one.Linked(); !reflect.DeepEqual(got, []segment.ParseUpdate{one}) {
		t.Errorf("a StatusLinked row's Linked() = %+v, want itself", got)
	}
	bare := segment.ParseUpdate{URL: "http://a/", Status: crawldb.StatusSignature}
	if got := bare.Linked(); got != nil {
		t.Errorf("a row without links: Linked() = %+v, want nil", got)
	}
}
