package fetcher

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzAgents are the crawler names every fuzzed robots.txt is read for,
// besides the fuzzed one.
var fuzzAgents = []string{"trawl", "trawl-test/1.0 (+http://example.test/bot)", "*", ""}

// fuzzRobotsURLs are URLs every fuzzed robots.txt is checked against,
// besides the fuzzed path.
var fuzzRobotsURLs = []string{
	"http://example.test/",
	"http://example.test",
	"http://example.test/private/a.html?x=1&y=%2F",
	"https://example.test:8443/%7Euser/index.php",
	"http://example.test/a%2Fb/c;d?e",
	"http://example.test/robots.txt",
}

// FuzzRobots feeds arbitrary bytes to the robots.txt parser as the fetcher
// uses it (parseRobots, then allowed and delay): no panic, a file that does
// not parse allows everything, answers are deterministic, and the
// Crawl-delay is never negative.
func FuzzRobots(f *testing.F) {
	for _, s := range []string{
		"",
		"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n",
		"User-agent: *\nDisallow: /\n\nUser-agent: trawl\nDisallow: /nope\nAllow: /\nCrawl-delay: 0.5\n",
		"User-agent: *\nDisallow: /*.php$\nAllow: /a*b\nDisallow: /%7Euser\n",
		"User-agent: trawl\r\nDisallow: /private/\r\nSitemap: http://example.test/s.xml\r\nHost: example.test\r\n",
		"Disallow: /\n",                        // rule before any User-agent: does not parse
		"User-agent: *\nCrawl-delay: 1e10\n",   // past time.Duration's range
		"User-agent: *\nCrawl-delay: -1\n",     // rejected by the parser
		"User-agent: *\nCrawl-delay: banana\n", // rejected by the parser
		"User-agent: *\nDisallow: /\n\x00\xff<html>not robots</html>\n",
		"# only a comment\n\n\n",
		"User-agent: *\nDisallow: /a*b$*$\nDisallow: *\n",
	} {
		f.Add([]byte(s), "trawl", "/private/x?q=1")
	}
	f.Add([]byte("User-agent: Trawl\nDisallow: /\n"), "TRAWL/2.0", "/")
	f.Fuzz(func(t *testing.T, data []byte, agent, path string) {
		for _, a := range append([]string{agent}, fuzzAgents...) {
			rules, ok := parseRobots(data, a)
			if rules == nil {
				t.Fatalf("agent %q: nil rules", a)
			}
			if rules.status != 200 {
				t.Fatalf("agent %q: status %d, want 200", a, rules.status)
			}
			if !ok && !rules.allowAll {
				t.Fatalf("agent %q: a file that does not parse must allow everything", a)
			}
			if d := rules.delay(); d < 0 {
				t.Fatalf("agent %q: negative Crawl-delay %v", a, d)
			}
			urls := fuzzRobotsURLs
			if u, err := url.Parse("http://example.test" + path); err == nil {
				urls = append([]string{u.String()}, urls...)
			}
			for _, raw := range urls {
				u, err := url.Parse(raw)
				if err != nil {
					continue
				}
				p := robotsPath(u)
				if p == "" {
					t.Fatalf("%s: empty robots path", raw)
				}
				got := rules.allowed(u)
				if again := rules.allowed(u); again != got {
					t.Fatalf("agent %q, %s: allowed is not deterministic", a, raw)
				}
				if rules.allowAll && !got {
					t.Fatalf("agent %q, %s: denied by rules that allow all", a, raw)
				}
			}
		}
	})
}

// The Content-Encodings a fuzzed body is read with: the decoded ones,
// their spellings, and ones kept as sent.
var fuzzEncodings = []string{"", "identity", "gzip", "x-gzip", " GZip ", "deflate", "br", "compress", "zstd"}

// fuzzLimits are the content limits a fuzzed body is read with (the
// largest well under DefaultContentLimit, for speed: cutting at it is the
// same code).
var fuzzLimits = []int64{1, 7, 100, 4096, 64 << 10}

// fuzzDecoded reports whether readBody decodes encoding.
func fuzzDecoded(encoding string) bool {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "gzip", "x-gzip", "deflate":
		return true
	}
	return false
}

// fuzzCompress returns data encoded as the Content-Encoding enc sends it
// (deflate both ways servers send it: zlib, and raw when raw is set).
func fuzzCompress(t testing.TB, enc string, data []byte, raw bool) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch {
	case enc == "deflate" && raw:
		fw, err := flate.NewWriter(&buf, flate.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	case enc == "deflate":
		w = zlib.NewWriter(&buf)
	default:
		w = gzip.NewWriter(&buf)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkBody checks what readBody made of in (the bytes on the wire) within
// limit, when reading in never fails.
func checkBody(t *testing.T, what string, in []byte, enc string, b body, err error, limit int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: error %v from a body that reads without error", what, err)
	}
	if int64(len(b.data)) > limit {
		t.Fatalf("%s: %d bytes decoded, over the limit %d", what, len(b.data), limit)
	}
	if b.wire > limit+1 || b.wire > int64(len(in)) {
		t.Fatalf("%s: %d bytes read of %d, limit %d", what, b.wire, len(in), limit)
	}
	if b.decodeErr != nil && !b.truncated {
		t.Fatalf("%s: decode error %v on a body not marked truncated", what, b.decodeErr)
	}
	if !fuzzDecoded(enc) {
		// Kept as sent, cut at the limit.
		want := in[:min(int64(len(in)), limit)]
		if !bytes.Equal(b.data, want) {
			t.Fatalf("%s: kept %d bytes, want the first %d sent", what, len(b.data), len(want))
		}
		if b.truncated != (int64(len(in)) > limit) || b.decodeErr != nil {
			t.Fatalf("%s: truncated %v, decode error %v", what, b.truncated, b.decodeErr)
		}
	}
}

// FuzzReadBody reads arbitrary bytes as a response body with each
// Content-Encoding and a few content limits: readBody returns the body (cut
// at the limit, marked truncated, or kept as decoded so far with a decode
// error), never an error for a body that reads without one, never more than
// the limit. The fuzzed bytes are also compressed and must decode back.
func FuzzReadBody(f *testing.F) {
	text := []byte(strings.Repeat("<p>The quick brown fox jumps over the lazy dog.</p>\n", 20))
	gzText := fuzzCompress(f, "gzip", text, false)
	zText := fuzzCompress(f, "deflate", text, false)
	rawText := fuzzCompress(f, "deflate", text, true)
	bomb := fuzzCompress(f, "gzip", make([]byte, 1<<20), false)
	for _, in := range [][]byte{
		nil,
		text,
		gzText,
		gzText[:len(gzText)/2],
		append(bytes.Clone(gzText), gzText...), // two gzip members
		zText,
		zText[:7],
		rawText,
		bomb,
		{0x1f, 0x8b},
		{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff}, // FEXTRA past the end
		{0x78, 0xbb, 0, 0, 0, 2},                            // zlib header asking for a preset dictionary
		{0x88, 0x1c, 3, 0},                                  // zlib header with a 64 KiB window
		{0x78, 0x9c},
		{0xff, 0xff, 0xff, 0xff},
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, enc := range fuzzEncodings {
			for _, limit := range fuzzLimits {
				b, err := readBody(bytes.NewReader(in), enc, int64(len(in)), limit)
				checkBody(t, "enc "+enc, in, enc, b, err, limit)
				// The same with an unknown length.
				b, err = readBody(bytes.NewReader(in), enc, -1, limit)
				checkBody(t, "enc "+enc+", no length", in, enc, b, err, limit)
				// A network error after the bytes is the error, unless
				// the limit or the end of the stream came first.
				netErr := errors.New("connection reset by peer")
				b, err = readBody(io.MultiReader(bytes.NewReader(in), fuzzErrReader{netErr}), enc, -1, limit)
				if err != nil && !errors.Is(err, netErr) {
					t.Fatalf("enc %q, network error: got %v", enc, err)
				}
				if err == nil && !fuzzDecoded(enc) && int64(len(in)) <= limit {
					t.Fatalf("enc %q: a network error after %d bytes (limit %d) was lost", enc, len(in), limit)
				}
				if int64(len(b.data)) > limit || b.wire > limit+1 {
					t.Fatalf("enc %q, network error: %d bytes decoded, %d read, limit %d", enc, len(b.data), b.wire, limit)
				}
			}
		}
		// The fuzzed bytes compressed decode back, cut at the limit.
		for _, c := range []struct {
			enc string
			raw bool
		}{{"gzip", false}, {"deflate", false}, {"deflate", true}} {
			z := fuzzCompress(t, c.enc, in, c.raw)
			if c.raw && isZlibHeader(z) {
				continue // "deflate" that looks like zlib is read as zlib
			}
			for _, limit := range fuzzLimits {
				b, err := readBody(bytes.NewReader(z), c.enc, int64(len(z)), limit)
				checkBody(t, c.enc+" round trip", z, c.enc, b, err, limit)
				if b.decodeErr != nil && b.wire <= limit {
					t.Fatalf("%s (raw %v): a valid stream within the wire limit gave decode error %v", c.enc, c.raw, b.decodeErr)
				}
				if !bytes.HasPrefix(in, b.data) {
					t.Fatalf("%s (raw %v): decoded %d bytes that are not a prefix of the %d sent", c.enc, c.raw, len(b.data), len(in))
				}
				if !b.truncated && !bytes.Equal(b.data, in) {
					t.Fatalf("%s (raw %v): decoded %d bytes of %d, not marked truncated", c.enc, c.raw, len(b.data), len(in))
				}
				if int64(len(z)) <= limit && int64(len(in)) <= limit && (b.truncated || !bytes.Equal(b.data, in)) {
					t.Fatalf("%s (raw %v): %d bytes within the limit %d decoded to %d, truncated %v", c.enc, c.raw, len(in), limit, len(b.data), b.truncated)
				}
			}
		}
	})
}

type fuzzErrReader struct{ err error }

func (e fuzzErrReader) Read([]byte) (int, error) { return 0, e.err }

// FuzzReadResponse parses arbitrary bytes as the raw HTTP/1.1 response to
// a GET, with net/http's parser (status line, headers, Content-Length,
// chunked transfer coding), and reads its body as the fetcher does: an
// error or a body within the limit, never a panic.
func FuzzReadResponse(f *testing.F) {
	text := []byte("<html><body>hello, world</body></html>\n")
	gzText := fuzzCompress(f, "gzip", text, false)
	zText := fuzzCompress(f, "deflate", text, false)
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 39\r\n\r\n" + string(text),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" + chunked(gzText) + "0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n" + string(gzText),
		"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n" + string(zText),
		"HTTP/1.0 200 OK\r\nContent-Encoding: x-gzip\r\nConnection: close\r\n\r\n" + string(gzText[:10]),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nxx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Length: 11\r\n\r\n0123456789",
		"HTTP/1.1 301 Moved\r\nLocation: /robots2.txt\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\nbody",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"garbage\r\n\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/page", nil)
		if err != nil {
			t.Fatal(err)
		}
		parse := func() *http.Response {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), req)
			if err != nil {
				return nil
			}
			return resp
		}
		resp := parse()
		if resp == nil {
			return // not a response: the transport's error
		}
		// The body as net/http delivers it (the fuzz input bounds it).
		full, fullErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		enc := resp.Header.Get("Content-Encoding")
		for _, limit := range fuzzLimits {
			resp := parse()
			if resp == nil {
				t.Fatal("the response parsed once, then not")
			}
			b, err := readBody(resp.Body, enc, resp.ContentLength, limit)
			resp.Body.Close()
			if int64(len(b.data)) > limit || b.wire > limit+1 || b.wire > int64(len(full)) {
				t.Fatalf("%d bytes decoded, %d read of %d, limit %d (err %v)", len(b.data), b.wire, len(full), limit, err)
			}
			if b.decodeErr != nil && !b.truncated {
				t.Fatalf("decode error %v on a body not marked truncated", b.decodeErr)
			}
			if err != nil && (fullErr == nil || err.Error() != fullErr.Error()) {
				t.Fatalf("error %v from a body net/http reads with error %v", err, fullErr)
			}
			if fullErr != nil && int64(len(full)) <= limit && err == nil && !fuzzDecoded(enc) {
				t.Fatalf("the body's error %v (after %d bytes, limit %d) was lost", fullErr, len(full), limit)
			}
			if !fuzzDecoded(enc) && !bytes.Equal(b.data, full[:min(int64(len(full)), limit)]) {
				t.Fatalf("kept %d bytes, want the first %d of the %d bytes of the body", len(b.data), min(int64(len(full)), limit), len(full))
			}
		}
	})
}

// chunked returns b as one chunk of the chunked transfer coding.
func chunked(b []byte) string {
	return strconv.FormatInt(int64(len(b)), 16) + "\r\n" + string(b) + "\r\n"
}

// TestReadBodyBadZlibHeader: a "deflate" body whose zlib header does not
// decode (a preset dictionary, a window over 32 KiB, cut short) is a
// decoding error kept in the body, as a bad gzip header is, not a network
// error failing the request (found by FuzzReadBody).
func TestReadBodyBadZlibHeader(t *testing.T) {
	for _, in := range [][]byte{
		{0x78, 0xbb, 0, 0, 0, 2, 3, 0}, // a preset dictionary we do not have
		{0x78, 0xbb, 0, 0},             // the dictionary id cut short
		{0x88, 0x1c, 3, 0},             // a 64 KiB window, over zlib's 32 KiB
	} {
		b, err := readBody(bytes.NewReader(in), "deflate", int64(len(in)), DefaultContentLimit)
		if err != nil {
			t.Errorf("% x: error %v, want a decode error in the body", in, err)
			continue
		}
		if b.decodeErr == nil || !b.truncated || len(b.data) != 0 {
			t.Errorf("% x: decodeErr %v, truncated %v, %d bytes; want a decode error, truncated, no bytes", in, b.decodeErr, b.truncated, len(b.data))
		}
	}
	// A network error while reading the header is still the error.
	netErr := errors.New("connection reset by peer")
	_, err := readBody(io.MultiReader(bytes.NewReader([]byte{0x78, 0xbb, 0}), fuzzErrReader{netErr}), "deflate", -1, DefaultContentLimit)
	if !errors.Is(err, netErr) {
		t.Errorf("network error in a zlib header: %v", err)
	}
}

// TestRobotsHugeCrawlDelay: a Crawl-delay too long for a time.Duration
// (past about 292 years) is the longest delay, above any MaxCrawlDelay, not
// a negative one that reads as no delay (FuzzRobots checks that the delay
// is never negative).
func TestRobotsHugeCrawlDelay(t *testing.T) {
	for _, v := range []string{"9300000000", "1e10", "1e300"} {
		rules, ok := parseRobots([]byte("User-agent: *\nDisallow: /private\nCrawl-delay: "+v+"\n"), "trawl")
		if !ok {
			t.Fatalf("Crawl-delay %s: the file does not parse", v)
		}
		if d := rules.delay(); d < 1000*time.Hour {
			t.Errorf("Crawl-delay %s: delay %v, want the longest", v, d)
		}
	}
	// A delay that fits is kept as given.
	rules, _ := parseRobots([]byte("User-agent: *\nCrawl-delay: 2.5\n"), "trawl")
	if d := rules.delay(); d != 2500*time.Millisecond {
		t.Errorf("Crawl-delay 2.5: delay %v", d)
	}
	// A server asking for it is skipped as above the cap, not fetched
	// with no delay at all.
	srv := newRecorder(t, "127.0.0.1", site("User-agent: *\nCrawl-delay: 1e10\n"))
	o := Options{Agent: "trawl-test", ServerDelay: 20 * time.Millisecond, AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	res, _ := fetchAll(t, o, requests(srv.base+"/a", srv.base+"/b"))
	for _, u := range []string{srv.base + "/a", srv.base + "/b"} {
		if r := res[u]; r == nil || r.Code != CodeSkipped {
			t.Errorf("%s: %s, want skipped (Crawl-delay above the cap)", u, summary(r))
		}
	}
	if n := srv.pages(); n != 0 {
		t.Errorf("%d pages requested from a server asking for a Crawl-delay of 1e10 s", n)
	}
}
