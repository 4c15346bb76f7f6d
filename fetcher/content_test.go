package fetcher

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// TestConditionalGet: a refetch with the stored ETag and Last-Modified is
// conditional, and a host that honours it answers 304 →
// fetch_notmodified; a host that ignores it answers 200.
func TestConditionalGet(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(1, 20, 300, 0), 0)
	byMode := map[simweb.Validators]int{}
	for h := range 20 {
		info := w.Host(h)
		if _, seen := byMode[info.Validators]; seen {
			continue
		}
		if ids := hostPages(w, h); len(ids) > 0 {
			byMode[info.Validators] = ids[0]
		}
	}
	for _, m := range []simweb.Validators{simweb.ValidatorsBoth, simweb.ValidatorsETag, simweb.ValidatorsLastMod, simweb.ValidatorsIgnored} {
		if _, ok := byMode[m]; !ok {
			t.Fatalf("no host with validators %v: pick another seed", m)
		}
	}
	o := testOptions(t, srv)
	var first []Request
	for _, id := range byMode {
		first = append(first, Request{URL: srv.URL(id), ID: id})
	}
	res1, _ := fetchAll(t, o, first)
	var second []Request
	for _, q := range first {
		r := res1[q.URL]
		if r == nil || r.Status != crawldb.StatusFetchSuccess {
			t.Fatalf("%s: first fetch %+v", q.URL, r)
		}
		second = append(second, Request{URL: q.URL, ID: q.ID, ETag: r.ETag, LastModified: r.LastModified})
	}
	seq := srv.AccessLog().Len()
	res2, st := fetchAll(t, o, second)
	waitIdle(t, srv)
	for mode, id := range byMode {
		u := srv.URL(id)
		r := res2[u]
		want := crawldb.StatusFetchNotModified
		if mode == simweb.ValidatorsIgnored || mode == simweb.ValidatorsNone {
			want = crawldb.StatusFetchSuccess
		}
		if r == nil || r.Status != want {
			t.Errorf("validators %v: %+v, want %v", mode, r, want)
			continue
		}
		if want == crawldb.StatusFetchNotModified && (r.HTTPStatus != 304 || len(r.Body) != 0) {
			t.Errorf("validators %v: HTTP %d with %d body bytes", mode, r.HTTPStatus, len(r.Body))
		}
	}
	for _, a := range srv.AccessLog().Since(seq) {
		if a.Path == "/robots.txt" {
			continue
		}
		p, _ := w.Lookup(mustHost(t, w, a.Host), a.Path)
		wantCond := w.Host(w.Page(p).Host).Validators != simweb.ValidatorsNone
		if a.Conditional != wantCond {
			t.Errorf("%s%s: conditional = %v, want %v", a.Host, a.Path, a.Conditional, wantCond)
		}
	}
	if st.NotModified == 0 {
		t.Error("no fetch_notmodified")
	}
}

func mustHost(t testing.TB, w *simweb.Web, name string) int {
	t.Helper()
	h, ok := w.HostByName(name)
	if !ok {
		t.Fatalf("no host %s", name)
	}
	return h
}

// TestContentLimits: the 5 MiB page is cut at the content limit, and the
// gzip bomb (3 GiB inflated) is cut at the limit after reading no more
// than the limit from the network; both are successes marked Truncated.
// A page under the limit is whole.
func TestContentLimits(t *testing.T) {
	w, srv := serveWeb(t, smallWeb(8, 6, 120, simweb.HazardBombs), 0)
	var huge, bomb, normal = -1, -1, -1
	for id := range w.NumPages() {
		switch p := w.Page(id); {
		case p.Kind == simweb.KindHuge:
			huge = id
		case p.Kind == simweb.KindBomb:
			bomb = id
		case p.Kind == simweb.KindLeaf && p.RobotsAllowed && w.Host(p.Host).Role == simweb.RoleNormal && normal < 0:
			normal = id
		}
	}
	if huge < 0 || bomb < 0 || normal < 0 {
		t.Fatalf("web lacks the huge page (%d), the bomb (%d) or a normal leaf (%d)", huge, bomb, normal)
	}
	const limit = 64 << 10
	o := testOptions(t, srv)
	o.ContentLimit = limit
	res, _ := fetchAll(t, o, requests(srv.URL(huge), srv.URL(bomb), srv.URL(normal)))
	for _, id := range []int{huge, bomb} {
		r := res[srv.URL(id)]
		if r == nil || r.Status != crawldb.StatusFetchSuccess || !r.Truncated || len(r.Body) != limit {
			t.Fatalf("%s (%s): %+v", srv.URL(id), w.Page(id).Kind, summary(r))
		}
		if r.WireBytes > limit+1 {
			t.Errorf("%s: read %d bytes from the network, limit %d", srv.URL(id), r.WireBytes, limit)
		}
	}
	if r := res[srv.URL(bomb)]; !bytes.Contains(r.Body[:min(4096, len(r.Body))], []byte("<")) {
		t.Errorf("the bomb's body was not decoded: %q", r.Body[:64])
	}
	r := res[srv.URL(normal)]
	want, err := w.Body(normal, w.Version(normal, srv.Now()), srv.Addressing())
	if err != nil {
		t.Fatal(err)
	}
	if r == nil || r.Truncated || !bytes.Equal(r.Body, want) {
		t.Errorf("normal page: truncated=%v, %d bytes, want the %d bytes served", r.Truncated, len(r.Body), len(want))
	}
}

func summary(r *Result) string {
	if r == nil {
		return "no result"
	}
	return fmt.Sprintf("%v %v http=%d truncated=%v body=%d wire=%d %q", r.Code, r.Status, r.HTTPStatus, r.Truncated, len(r.Body), r.WireBytes, r.Message)
}

// gz compresses b with gzip.
func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadBody(t *testing.T) {
	text := bytes.Repeat([]byte("The quick brown fox jumps over the lazy dog. "), 200) // 9000 bytes
	var zl, raw bytes.Buffer
	zw := zlib.NewWriter(&zl)
	zw.Write(text)
	zw.Close()
	fw, _ := flate.NewWriter(&raw, flate.BestSpeed)
	fw.Write(text)
	fw.Close()
	bomb := gz(t, make([]byte, 4<<20)) // 4 MiB of zeros in ~4 KiB
	cut := gz(t, text)
	cut = cut[:len(cut)/2]
	corrupt := gz(t, text)
	corrupt[len(corrupt)/2] ^= 0xff

	cases := []struct {
		name      string
		in        []byte
		enc       string
		limit     int64
		want      []byte
		truncated bool
		garbage   bool // what decodes may be garbage
	}{
		{"identity", text, "", 1 << 20, text, false, false},
		{"identity cut", text, "", 1000, text[:1000], true, false},
		{"gzip", gz(t, text), "gzip", 1 << 20, text, false, false},
		{"x-gzip cut", gz(t, text), "X-Gzip", 1000, text[:1000], true, false},
		{"deflate zlib", zl.Bytes(), "deflate", 1 << 20, text, false, false},
		{"deflate raw", raw.Bytes(), "deflate", 1 << 20, text, false, false},
		{"bomb", bomb, "gzip", 100_000, make([]byte, 100_000), true, false},
		{"gzip cut short", cut, "gzip", 1 << 20, nil, true, false},
		{"gzip corrupt", corrupt, "gzip", 1 << 20, nil, true, true},
		{"not gzip", text, "gzip", 1 << 20, text, false, false},
		{"unknown encoding kept", gz(t, text), "br", 1 << 20, gz(t, text), false, false},
	}
	for _, c := range cases {
		b, err := readBody(bytes.NewReader(c.in), c.enc, int64(len(c.in)), c.limit)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if b.truncated != c.truncated {
			t.Errorf("%s: truncated = %v, want %v", c.name, b.truncated, c.truncated)
		}
		if int64(len(b.data)) > c.limit || b.wire > c.limit+1 {
			t.Errorf("%s: %d bytes decoded, %d read, limit %d", c.name, len(b.data), b.wire, c.limit)
		}
		if c.want != nil && !bytes.Equal(b.data, c.want) {
			t.Errorf("%s: got %d bytes, want %d", c.name, len(b.data), len(c.want))
		}
		if c.want == nil && !c.garbage && !bytes.HasPrefix(text, b.data) {
			t.Errorf("%s: the decoded prefix (%d bytes) is not the text's", c.name, len(b.data))
		}
	}
	// A network error is an error, with what was read.
	netErr := errors.New("connection reset by peer")
	_, err := readBody(io.MultiReader(bytes.NewReader(text[:100]), errReader{netErr}), "", -1, 1<<20)
	if !errors.Is(err, netErr) {
		t.Errorf("network error: %v", err)
	}
	_, err = readBody(io.MultiReader(bytes.NewReader(gz(t, text)[:50]), errReader{netErr}), "gzip", -1, 1<<20)
	if !errors.Is(err, netErr) {
		t.Errorf("network error in a gzip body: %v", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestRobotsRules: robots.txt answers as Nutch reads them: 403 and 404
// allow everything, 5xx defers the host (no page requested, URLs
// skipped), redirects are followed (up to 5), a file that does not
// parse allows everything, and the most specific User-agent group wins.
func TestRobotsRules(t *testing.T) {
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Error(w, "no", code)
				return
			}
			site("")(w, r)
		}
	}
	forbidden := newRecorder(t, "127.0.3.1", status(403))
	broken := newRecorder(t, "127.0.3.2", status(500))
	moved := newRecorder(t, "127.0.3.3", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/r1", http.StatusMovedPermanently)
		case "/r1":
			http.Redirect(w, r, "/real-robots.txt", http.StatusFound)
		case "/real-robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /secret\n")
		default:
			site("")(w, r)
		}
	})
	loop := newRecorder(t, "127.0.3.4", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/robots") {
			http.Redirect(w, r, "/robots"+r.URL.Path, http.StatusFound)
			return
		}
		site("")(w, r)
	})
	garbage := newRecorder(t, "127.0.3.5", site("Disallow: /\n\x00\xff<html>not robots</html>\n"))
	agents := newRecorder(t, "127.0.3.6", site("User-agent: *\nDisallow: /\n\nUser-agent: trawl-test\nDisallow: /nope\nAllow: /\n"))

	urls := []string{
		forbidden.base + "/a", broken.base + "/a", broken.base + "/b", moved.base + "/a", moved.base + "/secret/x",
		loop.base + "/a", garbage.base + "/a", agents.base + "/a", agents.base + "/nope/b",
	}
	o := Options{Agent: "trawl-test", ServerDelay: 20 * time.Millisecond, AllowPrivate: true, Log: testLog(), NoProgressLog: true}
	reqs := requests(urls...)
	res, st := fetchAll(t, o, reqs)
	checkAllReported(t, reqs, res)
	want := map[string]Code{
		forbidden.base + "/a": CodeSuccess, moved.base + "/a": CodeSuccess, moved.base + "/secret/x": CodeRobotsDenied,
		loop.base + "/a": CodeSuccess, garbage.base + "/a": CodeSuccess, agents.base + "/a": CodeSuccess,
		agents.base + "/nope/b": CodeRobotsDenied,
	}
	for u, c := range want {
		if r := res[u]; r == nil || r.Code != c {
			t.Errorf("%s: %s, want %v", u, summary(r), c)
		}
	}
	for _, u := range []string{broken.base + "/a", broken.base + "/b"} {
		checkSkipped(t, u, res[u], "skipped: robots.txt unavailable (HTTP 500)")
	}
	if n := broken.pages(); n != 0 {
		t.Errorf("robots.txt 500: %d pages requested", n)
	}
	if st.Unfetched != 2 || st.Skipped != 2 || st.RobotsDenied != 2 || st.Gone != 0 {
		t.Errorf("Unfetched %d, Skipped %d, RobotsDenied %d, Gone %d; want 2, 2, 2, 0", st.Unfetched, st.Skipped, st.RobotsDenied, st.Gone)
	}
	if n := len(loop.requests()); n != 1+MaxRobotsRedirects+1 {
		t.Errorf("redirect loop: %d requests, want %d robots + 1 page", n, 1+MaxRobotsRedirects)
	}
	if g := minGap(moved.requests()); g < o.ServerDelay {
		t.Errorf("robots.txt redirects on one host %v apart, want the server delay", g)
	}
}

// BenchmarkReadBody measures decoding a gzip page of 64 KiB within the
// content limit.
func BenchmarkReadBody(b *testing.B) {
	page := bytes.Repeat([]byte("<p>The quick brown fox jumps over the lazy dog.</p>\n"), 1300)
	z := gz(b, page)
	b.SetBytes(int64(len(page)))
	for range b.N {
		body, err := readBody(bytes.NewReader(z), "gzip", int64(len(z)), DefaultContentLimit)
		if err != nil || len(body.data) != len(page) {
			b.Fatalf("%d bytes, %v", len(body.data), err)
		}
	}
}

// TestRequestHeaders checks every request's header: the agent and the
// Accept headers on each, and a conditional request's validators on that
// request only, not on the unconditional ones after it (the requests of a
// run share their header, and a conditional one adds to a copy); and that
// a kept exchange's request header is the one sent.
func TestRequestHeaders(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]http.Header{}
	rec := newRecorder(t, "127.0.3.9", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		site("")(w, r)
	})
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, Log: testLog(), NoProgressLog: true,
		KeepExchange: true}
	lastMod := "Thu, 01 Jan 2026 00:00:00 GMT"
	reqs := []Request{
		{URL: rec.base + "/a", ID: 1, ETag: `"x"`, LastModified: lastMod},
		{URL: rec.base + "/b", ID: 2},
		{URL: rec.base + "/c", ID: 3, ETag: `"y"`},
		{URL: rec.base + "/d", ID: 4},
	}
	res, _ := fetchAll(t, o, reqs)
	want := map[string][2]string{"/a": {`"x"`, lastMod}, "/b": {}, "/c": {`"y"`, ""}, "/d": {}}
	mu.Lock()
	defer mu.Unlock()
	for path, v := range want {
		h := sent[path]
		if h == nil {
			t.Errorf("%s was not requested", path)
			continue
		}
		if !strings.HasPrefix(h.Get("User-Agent"), "trawl-test") || h.Get("Accept") == "" || h.Get("Accept-Encoding") != "gzip, deflate" {
			t.Errorf("%s: agent %q, accept %q, accept-encoding %q", path, h.Get("User-Agent"), h.Get("Accept"), h.Get("Accept-Encoding"))
		}
		if got := [2]string{h.Get("If-None-Match"), h.Get("If-Modified-Since")}; got != v {
			t.Errorf("%s: validators sent %q, want %q", path, got, v)
		}
		if r := res[rec.base+path]; r == nil || r.RequestHeader.Get("If-None-Match") != v[0] || r.RequestHeader.Get("User-Agent") != h.Get("User-Agent") {
			t.Errorf("%s: kept request header %v, sent %v", path, r.RequestHeader, h)
		}
	}
}

// TestMediaType checks that mediaType gives the type mime.ParseMediaType
// gives, valid or not (where it fails, the text before any parameters,
// trimmed and in lower case), without parsing the parameters.
func TestMediaType(t *testing.T) {
	for _, v := range []string{"", "text/html", "Text/HTML; charset=UTF-8", " text/plain ;charset=x", "text/html; charset",
		"text/html;;", "application/xhtml+xml", "image/svg+xml; q=0.5", "bogus", "text/html; a=\"unterminated", ";", " ; x=y",
		"TEXT/HTML\t;\tcharset=\"utf-8\"", "text/ html"} {
		want, _, err := mime.ParseMediaType(v)
		if err != nil {
			want, _, _ = strings.Cut(v, ";")
			want = strings.ToLower(strings.TrimSpace(want))
		}
		if got := mediaType(v); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", v, got, want)
		}
	}
}
