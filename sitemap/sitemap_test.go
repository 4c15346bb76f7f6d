package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>http://example.com/dir/a?x=1&amp;y=2</loc>
    <lastmod>2026-11-01</lastmod>
    <changefreq>Daily</changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>http://example.com/pic.png</image:loc></image:image>
  </url>
  <url><loc> http://example.com/dir/b </loc><lastmod>2026-10-02T10:30:00+02:00</lastmod><changefreq>sometimes</changefreq><priority>7</priority></url>
  <url><loc>http://example.com/other/c</loc></url>
  <url><loc>http://other.example/dir/c</loc></url>
  <url><loc>ftp://example.com/dir/d</loc></url>
  <url><loc></loc></url>
</urlset>`

func TestParseURLSet(t *testing.T) {
	res, err := Parse(mustURL(t, "http://example.com/dir/sitemap.xml"), "text/xml", strings.NewReader(urlset), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{URL: "http://example.com/dir/a?x=1&y=2", LastMod: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), ChangeFreq: Daily, Priority: 0.8},
		{URL: "http://example.com/dir/b", LastMod: time.Date(2026, 10, 2, 8, 30, 0, 0, time.UTC), Priority: DefaultPriority},
	}
	if res.Kind != URLSet || fmt.Sprint(res.URLs) != fmt.Sprint(want) {
		t.Fatalf("got %v %+v\nwant %+v", res.Kind, res.URLs, want)
	}
	if res.OutOfScope != 2 || res.Invalid != 2 || res.BadFields != 1 || res.Cut != "" || res.Gzip {
		t.Errorf("counts: %+v", res)
	}
	// The robots.txt scope: the whole host, not other hosts.
	res, err = Parse(mustURL(t, "http://example.com/dir/sitemap.xml"), "", strings.NewReader(urlset), Options{Strict: true, HostScope: true})
	if err != nil || len(res.URLs) != 3 || res.OutOfScope != 1 {
		t.Errorf("host scope: %d URLs, %d out of scope, %v", len(res.URLs), res.OutOfScope, err)
	}
	// Not strict: every absolute http URL.
	res, err = Parse(mustURL(t, "http://example.com/dir/sitemap.xml"), "", strings.NewReader(urlset), Options{})
	if err != nil || len(res.URLs) != 4 || res.OutOfScope != 0 {
		t.Errorf("not strict: %d URLs, %d out of scope, %v", len(res.URLs), res.OutOfScope, err)
	}
}

func TestParseIndexGzipAndOffHost(t *testing.T) {
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>http://example.com/s1.xml</loc><lastmod>2026-01-01</lastmod></sitemap>
<sitemap><loc>http://example.com:80/deep/s2.xml.gz</loc></sitemap>
<sitemap><loc>http://evil.example/s3.xml</loc></sitemap>
<sitemap><loc>https://example.com/s4.xml</loc></sitemap>
</sitemapindex>`
	for _, c := range []struct {
		name, ct string
		body     []byte
		gzip     bool
	}{
		{"sitemap.xml", "application/xml", []byte(index), false},
		{"sitemap.xml.gz", "application/x-gzip", gz(t, index), true},
		{"sitemap.xml", "text/xml", gz(t, index), true},              // magic only
		{"sitemap.xml.gz", "application/gzip", []byte(index), false}, // decompressed on the way
	} {
		res, err := Parse(mustURL(t, "http://example.com/"+c.name), c.ct, bytes.NewReader(c.body), Options{Strict: true})
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, c.ct, err)
		}
		if res.Kind != Index || res.Gzip != c.gzip || res.OffHost != 2 ||
			fmt.Sprint(res.Sitemaps) != "[http://example.com/s1.xml http://example.com:80/deep/s2.xml.gz]" {
			t.Errorf("%s %s: %+v", c.name, c.ct, res)
		}
	}
}

func TestParseText(t *testing.T) {
	body := "\ufeff http://example.com/a\n\nhttp://example.com/b\r\nnot a url\nhttp://example.org/x\n"
	res, err := Parse(mustURL(t, "http://example.com/sitemap.txt"), "text/plain", strings.NewReader(body), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.URLs) != 2 || res.URLs[1].URL != "http://example.com/b" || res.URLs[0].Priority != DefaultPriority ||
		res.Invalid != 1 || res.OutOfScope != 1 {
		t.Errorf("%+v", res)
	}
	_, err = Parse(mustURL(t, "http://example.com/s.txt"), "", strings.NewReader("hello\nworld\n"), Options{})
	if !errors.Is(err, ErrNotSitemap) {
		t.Errorf("text without URLs: %v", err)
	}
}

func TestParseNotSitemap(t *testing.T) {
	for _, body := range []string{"", "  \n", "<html><body>hi</body></html>", "<rss version=\"2.0\"></rss>", "<urlset", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset/>"} {
		_, err := Parse(mustURL(t, "http://example.com/s.xml"), "", strings.NewReader(body), Options{})
		if err == nil {
			t.Errorf("%q: no error", body)
		}
	}
	// A corrupt gzip stream.
	_, err := Parse(mustURL(t, "http://example.com/s.xml.gz"), "", bytes.NewReader([]byte{0x1f, 0x8b, 1, 2, 3}), Options{})
	if err == nil {
		t.Error("corrupt gzip: no error")
	}
}

func TestParseBrokenXMLKeepsWhatCameBefore(t *testing.T) {
	body := `<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url><url><loc>http://example.com/c</oops></url></urlset>`
	res, err := Parse(mustURL(t, "http://example.com/s.xml"), "", strings.NewReader(body), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.URLs) != 2 || !strings.Contains(res.Cut, "broken XML") || !strings.Contains(res.Cut, "kept the 2 entries") {
		t.Errorf("%d URLs, cut %q", len(res.URLs), res.Cut)
	}
}

// writeURLSet writes a <urlset> of n URLs of example.com.
func writeURLSet(w io.Writer, n int) {
	fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range n {
		fmt.Fprintf(w, "<url><loc>http://example.com/p%d</loc></url>\n", i)
	}
	fmt.Fprint(w, `</urlset>`)
}

func TestParseURLLimit(t *testing.T) {
	var b bytes.Buffer
	writeURLSet(&b, MaxURLs+5000)
	r := &countReads{r: bytes.NewReader(b.Bytes())}
	res, err := Parse(mustURL(t, "http://example.com/s.xml"), "", r, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.URLs) != MaxURLs || !strings.Contains(res.Cut, "50000 URLs") {
		t.Fatalf("%d URLs, cut %q", len(res.URLs), res.Cut)
	}
	if res.URLs[MaxURLs-1].URL != fmt.Sprintf("http://example.com/p%d", MaxURLs-1) {
		t.Errorf("last URL kept %q", res.URLs[MaxURLs-1].URL)
	}
	if r.n >= int64(b.Len()) {
		t.Errorf("read all %d bytes past the URL limit", r.n)
	}
}

// countReads counts the bytes read from r.
type countReads struct {
	r io.Reader
	n int64
}

func (c *countReads) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestParseSizeLimitOnDecompressedStream(t *testing.T) {
	// 4000 URLs of ~40 bytes, compressed to a few KB; a 64 KiB limit cuts
	// the decompressed stream, and Parse reads no more of it.
	var b bytes.Buffer
	writeURLSet(&b, 4000)
	const limit = 64 << 10
	res, err := Parse(mustURL(t, "http://example.com/s.xml.gz"), "", bytes.NewReader(gz(t, b.String())), Options{MaxBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Gzip || res.Bytes != limit || !strings.Contains(res.Cut, "65536-byte limit") || len(res.URLs) == 0 || len(res.URLs) >= 4000 {
		t.Fatalf("gzip %v, %d bytes, %d URLs, cut %q", res.Gzip, res.Bytes, len(res.URLs), res.Cut)
	}
	// A file of exactly the limit is whole.
	var e bytes.Buffer
	writeURLSet(&e, 10)
	exact := e.String()
	res, err = Parse(mustURL(t, "http://example.com/s.xml"), "", strings.NewReader(exact), Options{MaxBytes: int64(len(exact))})
	if err != nil || res.Cut != "" || len(res.URLs) != 10 {
		t.Errorf("exact size: %v %q %d", err, res.Cut, len(res.URLs))
	}
	// A text sitemap cut at the limit.
	var txt strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&txt, "http://example.com/t%d\n", i)
	}
	res, err = Parse(mustURL(t, "http://example.com/s.txt"), "", strings.NewReader(txt.String()), Options{MaxBytes: 1000})
	if err != nil || res.Cut == "" || len(res.URLs) == 0 || len(res.URLs) > 60 {
		t.Fatalf("text: %v %q %d", err, res.Cut, len(res.URLs))
	}
	// The line cut by the limit is not taken for a shorter URL.
	for i, e := range res.URLs {
		if want := fmt.Sprintf("http://example.com/t%d", i); e.URL != want {
			t.Errorf("text URL %d: %q, want %q", i, e.URL, want)
		}
	}
	if n := strings.Count(txt.String()[:1000], "\n"); len(res.URLs) != n {
		t.Errorf("text: %d URLs kept, want the %d whole lines", len(res.URLs), n)
	}
}

func TestParseW3CDate(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1997":                      time.Date(1997, 1, 1, 0, 0, 0, 0, time.UTC),
		"1997-07":                   time.Date(1997, 7, 1, 0, 0, 0, 0, time.UTC),
		"1997-07-16":                time.Date(1997, 7, 16, 0, 0, 0, 0, time.UTC),
		"1997-07-16T19:20+01:00":    time.Date(1997, 7, 16, 18, 20, 0, 0, time.UTC),
		"1997-07-16T19:20:30+01:00": time.Date(1997, 7, 16, 18, 20, 30, 0, time.UTC),
		"1997-07-16T19:20:30.45Z":   time.Date(1997, 7, 16, 19, 20, 30, 450000000, time.UTC),
	} {
		got, err := ParseW3CDate(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "yesterday", "1997-13-01", "1997-07-16T19:20", "16/07/1997"} {
		if _, err := ParseW3CDate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestChangeFreqInterval(t *testing.T) {
	for c, want := range map[ChangeFreq]time.Duration{
		Always: time.Second, Hourly: time.Hour, Daily: 24 * time.Hour, Weekly: 7 * 24 * time.Hour,
		Monthly: 30 * 24 * time.Hour, Yearly: 365 * 24 * time.Hour, Never: 2147483647 * time.Second,
	} {
		if got, ok := c.Interval(); !ok || got != want {
			t.Errorf("%s: %v", c, got)
		}
	}
	if _, ok := ChangeFreq("sometimes").Interval(); ok {
		t.Error("unknown change frequency mapped")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(urlset), "text/xml", false)
	f.Add([]byte(`<sitemapindex><sitemap><loc>http://example.com/a.xml</loc></sitemap></sitemapindex>`), "", true)
	f.Add([]byte("http://example.com/a\nhttp://example.com/b\n"), "text/plain", false)
	f.Add(gz(f, urlset), "application/x-gzip", true)
	f.Add([]byte{0x1f, 0x8b, 8, 0}, "", false)
	f.Add([]byte("<urlset><url><loc>http://example.com/a</loc><lastmod>2026-99</lastmod><priority>NaN</priority></url"), "", false)
	f.Fuzz(func(t *testing.T, body []byte, ct string, hostScope bool) {
		loc, _ := url.Parse("http://example.com/dir/sitemap.xml")
		res, err := Parse(loc, ct, bytes.NewReader(body), Options{Strict: true, HostScope: hostScope, MaxBytes: 1 << 16, MaxURLs: 100})
		if err != nil {
			return
		}
		if len(res.URLs) > 100 || len(res.Sitemaps) > 100 || res.Bytes > 1<<16 {
			t.Fatalf("over the limits: %d URLs %d sitemaps %d bytes", len(res.URLs), len(res.Sitemaps), res.Bytes)
		}
		for _, e := range res.URLs {
			u, err := url.Parse(e.URL)
			if err != nil || !InScope(loc, u, hostScope) || !(e.Priority >= 0 && e.Priority <= 1) {
				t.Fatalf("bad entry kept: %+v", e)
			}
		}
	})
}

// BenchmarkParseFullGzip parses a gzipped sitemap of the protocol's
// 50,000 URLs, each with all its fields.
func BenchmarkParseFullGzip(b *testing.B) {
	var x bytes.Buffer
	fmt.Fprint(&x, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range MaxURLs {
		fmt.Fprintf(&x, "<url><loc>http://example.com/dir/page-%d.html</loc><lastmod>2026-01-02T03:04:05+01:00</lastmod><changefreq>weekly</changefreq><priority>0.%d</priority></url>\n", i, i%10)
	}
	fmt.Fprint(&x, `</urlset>`)
	body := gz(b, x.String())
	loc := mustURL(b, "http://example.com/dir/sitemap.xml.gz")
	b.ReportMetric(float64(x.Len()), "xml-bytes")
	b.ResetTimer()
	for b.Loop() {
		res, err := Parse(loc, "application/x-gzip", bytes.NewReader(body), Options{Strict: true})
		if err != nil || len(res.URLs) != MaxURLs {
			b.Fatal(err)
		}
	}
}
