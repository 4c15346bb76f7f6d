package warc_test

import (
	"bytes"
	"fmt"
	"github.com/klauspost/compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/warc"
	"github.com/trawl/trawl/warc/warctest"
)

func createIn(dir string) func(string) (io.WriteCloser, error) {
	return func(name string) (io.WriteCloser, error) { return os.Create(filepath.Join(dir, name)) }
}

func TestKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://www.Example.com/A/?b=2&a=1", "com,example)/a?a=1&b=2"},
		{"https://example.com", "com,example)/"},
		{"http://sub.example.co.uk:80/x/y.html#frag", "uk,co,example,sub)/x/y.html"},
		{"http://www2.example.com:8080/", "com,example:8080)/"},
		{"https://user:pw@example.com:443/p?", "com,example)/p"},
		{"http://127.0.0.1:8080/a/b/", "127.0.0.1:8080)/a/b"},
		{"http://example.com/?z=1&&a=2", "com,example)/?a=2&z=1"},
	} {
		got, err := warc.Key(c.in)
		if err != nil || got != c.want {
			t.Errorf("Key(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := warc.Key("/no/host"); err == nil {
		t.Error("Key of a URL without a host: no error")
	}
}

func TestFileName(t *testing.T) {
	ts := time.Date(2026, 11, 27, 19, 39, 14, 123_000_000, time.UTC)
	if got, want := warc.FileName("trawl", ts, 7, "node1"), "trawl-20261127193914123-00007-node1.warc.gz"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
	if got := warc.IndexName("a-1-00000-h.warc.gz"); got != "a-1-00000-h.cdxj" {
		t.Errorf("IndexName = %q", got)
	}
}

// TestFileWriter writes exchanges of several kinds into files rolled at a
// small size and reads them back with the independent reader: every
// record valid with its digests, payloads as given, headers rewritten to
// agree with decoded bodies, request and response linked, and every
// index line addressing its record.
func TestFileWriter(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	fw, err := warc.NewFileWriter(warc.FileOptions{Create: createIn(dir), Host: "test", MaxFileSize: 4 << 10, Now: now,
		Info: warc.Info{Software: "trawl test", Agent: "testbot/1.0", Robots: "obey"}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(rng.IntN(256))
	}
	html := []byte("<html><body>" + strings.Repeat("hello warc ", 100) + "</body></html>")
	req := http.Header{"User-Agent": {"testbot/1.0"}, "Accept-Encoding": {"gzip, deflate"}}
	type ex struct {
		warc.Exchange
		wantHeader map[string]string
	}
	exs := []ex{
		{warc.Exchange{URL: "http://www.example.com/b", IP: "127.0.0.1", RequestHeader: req, Status: 200,
			Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Content-Encoding": {"gzip"}, "Content-Length": {"87"}},
			Body:   html},
			map[string]string{"X-Archive-Orig-Content-Encoding": "gzip", "X-Archive-Orig-Content-Length": "87", "Content-Length": strconv.Itoa(len(html)), "Content-Encoding": ""}},
		{warc.Exchange{URL: "http://example.com/a?y=1&x=2", RequestHeader: req, Status: 200,
			Header: http.Header{"Content-Type": {"application/octet-stream"}, "Content-Length": {"3000"}}, Body: binary},
			map[string]string{"Content-Length": "3000", "X-Archive-Orig-Content-Length": ""}},
		{warc.Exchange{URL: "http://example.com/br", Status: 200,
			Header: http.Header{"Content-Type": {"text/plain"}, "Content-Encoding": {"br"}, "Transfer-Encoding": {"chunked"}}, Body: []byte("\x0b\x02raw")},
			map[string]string{"Content-Encoding": "br", "X-Archive-Orig-Transfer-Encoding": "chunked", "Content-Length": "5"}},
		{warc.Exchange{URL: "http://example.com/missing", RequestHeader: req, Status: 404,
			Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("not here\n")}, nil},
		{warc.Exchange{URL: "http://example.com/cut", RequestHeader: req, Status: 200, Truncated: true,
			Header: http.Header{"Content-Type": {"text/plain"}, "Content-Length": {"999999"}}, Body: html[:100]},
			map[string]string{"X-Archive-Orig-Content-Length": "999999", "Content-Length": "100"}},
	}
	for i := range exs {
		exs[i].Time = now()
		if err := fw.Write(&exs[i].Exchange); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	st := fw.Stats()
	d := warctest.CheckDir(t, dir)
	if st.Files < 2 || int(st.Files) != len(d.Files) {
		t.Fatalf("wrote %d files (read %d); want it rolled into 2 or more at 4 kB", st.Files, len(d.Files))
	}
	ids := map[string]warctest.Record{}
	var responses, requests int64
	for name, recs := range d.Files {
		info := recs[0]
		if !bytes.Contains(info.Payload, []byte("http-header-user-agent: testbot/1.0")) || !bytes.Contains(info.Payload, []byte("robots: obey")) {
			t.Errorf("%s: warcinfo lacks the agent or robots policy:\n%s", name, info.Payload)
		}
		for _, r := range recs[1:] {
			ids[r.ID] = r
			if r.WarcinfoID != info.ID {
				t.Errorf("%s: record %s names warcinfo %s, not its file's %s", name, r.ID, r.WarcinfoID, info.ID)
			}
		}
	}
	resp := d.Responses()
	for _, e := range exs {
		r, ok := resp[e.URL]
		if !ok {
			t.Errorf("no response record of %s", e.URL)
			continue
		}
		responses++
		if !bytes.Equal(r.Payload, e.Body) || r.Status != e.Status || r.PayloadDigest != warc.PayloadDigest(e.Body) {
			t.Errorf("%s: read status %d payload %d bytes %s; wrote %d, %d bytes", e.URL, r.Status, len(r.Payload), r.PayloadDigest, e.Status, len(e.Body))
		}
		if r.Date != warc.FormatDate(e.Time) || r.IP != e.IP {
			t.Errorf("%s: date %s IP %q; want %s %q", e.URL, r.Date, r.IP, warc.FormatDate(e.Time), e.IP)
		}
		if (r.Truncated == "length") != e.Truncated {
			t.Errorf("%s: WARC-Truncated %q, truncated %v", e.URL, r.Truncated, e.Truncated)
		}
		for k, v := range e.wantHeader {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s: header %s = %q, want %q", e.URL, k, got, v)
			}
		}
		if e.RequestHeader == nil {
			if r.ConcurrentTo != "" {
				t.Errorf("%s: no request written, yet WARC-Concurrent-To %s", e.URL, r.ConcurrentTo)
			}
			continue
		}
		q, ok := ids[r.ConcurrentTo]
		if !ok || q.Type != "request" || q.ConcurrentTo != r.ID || q.TargetURI != e.URL || q.Date != r.Date {
			t.Errorf("%s: response %s and its request %+v are not linked", e.URL, r.ID, q)
			continue
		}
		requests++
		if u, _ := url.Parse(e.URL); q.Header.Get("User-Agent") != "testbot/1.0" || q.RequestLine != u.RequestURI() {
			t.Errorf("%s: request line %q header %v", e.URL, q.RequestLine, q.Header)
		}
	}
	if st.Responses != responses || st.Records != requests+responses+st.Files {
		t.Errorf("stats %+v; read %d responses, %d requests", st, responses, requests)
	}
}

func TestFileWriterErrors(t *testing.T) {
	if _, err := warc.NewFileWriter(warc.FileOptions{}); err == nil {
		t.Error("no Create: no error")
	}
	if _, err := warc.NewFileWriter(warc.FileOptions{Create: createIn(t.TempDir()), Prefix: "a/b"}); err == nil {
		t.Error("a prefix with a slash: no error")
	}
	fw, err := warc.NewFileWriter(warc.FileOptions{Create: createIn(t.TempDir()), Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(&warc.Exchange{URL: "::bad", Status: 200}); err == nil {
		t.Error("a bad URL: no error")
	}
	if err := fw.Close(); err == nil {
		t.Error("Close after a failed write: no error")
	}
}

// BenchmarkFileWriter measures writing a 20 kB HTML page's exchange
// (request and response records, digests, gzip, index entry).
func BenchmarkFileWriter(b *testing.B) {
	for _, level := range []int{gzip.DefaultCompression, gzip.BestSpeed} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) { benchmarkFileWriter(b, level) })
	}
}

func benchmarkFileWriter(b *testing.B, level int) {
	page := []byte(strings.Repeat("<p>Some text of a page, with <a href=\"/link\">links</a>.</p>\n", 20<<10/60))
	fw, err := warc.NewFileWriter(warc.FileOptions{Create: func(string) (io.WriteCloser, error) { return nopCloser{io.Discard}, nil },
		Host: "bench", Level: level, Info: warc.Info{Software: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	e := &warc.Exchange{URL: "http://www.example.com/some/page.html", Time: time.Now(), IP: "192.0.2.1",
		RequestHeader: http.Header{"User-Agent": {"bench/1.0"}, "Accept": {"*/*"}}, Status: 200,
		Header: http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}, "Date": {"Fri, 27 Nov 2026 12:00:00 GMT"}},
		Body:   page}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if err := fw.Write(e); err != nil {
			b.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		b.Fatal(err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
