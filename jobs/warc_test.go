package jobs

import (
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/warc"
	"github.com/trawl/trawl/warc/warctest"
)

// warcSite is a loopback web server of a few kinds of responses, each
// path's entity body (as served, before any Content-Encoding) kept to
// compare with the archive.
type warcSite struct {
	srv    *httptest.Server
	bodies map[string][]byte // by path
	status map[string]int
}

func serveWARCSite(t testing.TB) *warcSite {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	bin := make([]byte, 50<<10)
	for i := range bin {
		bin[i] = byte(rng.IntN(256))
	}
	s := &warcSite{
		bodies: map[string][]byte{
			"/page.html":   []byte(`<html><head><title>Page</title></head><body><a href="/gz.html">gz</a> text</body></html>`),
			"/gz.html":     []byte("<html><body>" + strings.Repeat("compressed words ", 500) + "</body></html>"),
			"/data.bin":    bin,
			"/missing":     []byte("no such page\n"),
			"/moved":       []byte(`<a href="/page.html">moved</a>`),
			"/chunked.txt": []byte(strings.Repeat("a chunked line\n", 300)),
		},
		status: map[string]int{"/missing": 404, "/moved": 301},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch r.URL.Path {
		case "/page.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		case "/gz.html":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			var zb bytes.Buffer
			zw := gzip.NewWriter(&zb)
			zw.Write(body)
			zw.Close()
			body = zb.Bytes()
		case "/data.bin":
			w.Header().Set("Content-Type", "application/octet-stream")
		case "/missing":
			w.Header().Set("Content-Type", "text/plain")
		case "/moved":
			w.Header().Set("Location", "/page.html")
			w.Header().Set("Content-Type", "text/html")
		case "/chunked.txt":
			w.Header().Set("Content-Type", "text/plain")
			for i := 0; i < len(body); i += 1000 {
				w.Write(body[i:min(i+1000, len(body))])
				w.(http.Flusher).Flush() // no Content-Length: chunked
			}
			return
		}
		if st := s.status[r.URL.Path]; st != 0 {
			w.WriteHeader(st)
		}
		w.Write(body)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *warcSite) urls() []string {
	var out []string
	for p := range s.bodies {
		out = append(out, s.srv.URL+p)
	}
	return out
}

// checkWARC reads the WARC directory of a segment fetched from s back
// with the independent reader and checks a request and response record
// of every URL, their payloads and the indexes.
func (s *warcSite) checkWARC(t *testing.T, dir string) warctest.Dir {
	t.Helper()
	d := warctest.CheckDir(t, dir)
	if len(d.Files) == 0 {
		t.Fatalf("no WARC file in %s", dir)
	}
	ids := map[string]warctest.Record{}
	for _, recs := range d.Files {
		for _, r := range recs {
			ids[r.ID] = r
		}
	}
	resp := d.Responses()
	for path, body := range s.bodies {
		u := s.srv.URL + path
		r, ok := resp[u]
		if !ok {
			t.Errorf("%s: no response record", u)
			continue
		}
		want := s.status[path]
		if want == 0 {
			want = 200
		}
		if r.Status != want || !bytes.Equal(r.Payload, body) {
			t.Errorf("%s: status %d, payload %d bytes; served %d, %d bytes", u, r.Status, len(r.Payload), want, len(body))
		}
		if r.IP != "127.0.0.1" {
			t.Errorf("%s: WARC-IP-Address %q", u, r.IP)
		}
		q := ids[r.ConcurrentTo]
		if q.Type != "request" || q.ConcurrentTo != r.ID || q.Header.Get("User-Agent") == "" {
			t.Errorf("%s: request record %+v not linked to response %s", u, q, r.ID)
		}
		if path == "/gz.html" && (r.Header.Get("Content-Encoding") != "" || r.Header.Get(warc.OrigPrefix+"Content-Encoding") != "gzip") {
			t.Errorf("%s: decoded body archived with header %v", u, r.Header)
		}
	}
	return d
}

// TestFetchWARC: a fetch with WARC on writes, beside the segment, WARC
// files that an independent reader validates, with every response
// (success, redirect, 404, gzip, chunked, binary) and its request, and
// CDXJ indexes whose offsets address the records; with the fetch parsing
// and as Hadoop Streaming map tasks too.
func TestFetchWARC(t *testing.T) {
	site := serveWARCSite(t)
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, mode := range []string{"local", "parse", "streaming"} {
		t.Run(mode, func(t *testing.T) {
			env := testEnv(t)
			gen := generateAll(t, env, site.urls(), now, 2)
			o := FetchOptions{Segment: gen.Segment, Agent: "warc-test", NoServerDelay: true, AllowPrivate: true,
				ConnectTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, NoProgressLog: true, Now: now,
				WARC: &WARCOptions{Host: "testhost"}, ContentTypes: []string{"*/*"}}
			switch mode {
			case "parse":
				o.Parse = &ParseOptions{Signature: parser.SignatureTextProfile}
			case "streaming":
				env.Runner = streamingMapOnly(t, env.Storage)
			}
			res, err := Fetch(context.Background(), env, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fetched != 4 {
				t.Errorf("fetched %d pages, want 4", res.Fetched)
			}
			dir := filepath.Join(gen.Segment, segment.DirWARC)
			d := site.checkWARC(t, dir)
			for name := range d.Files {
				if !strings.HasPrefix(name, "trawl-") || !strings.Contains(name, "-testhost~") {
					t.Errorf("file name %s", name)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, segment.SuccessFile)); err != nil {
				t.Errorf("WARC directory not published: %v", err)
			}
			st, err := segment.Inspect(storageLocal(), gen.Segment)
			if err != nil || !st.Has(segment.DirWARC) || st.State < segment.StateFetched {
				t.Errorf("segment status %+v, %v", st, err)
			}
		})
	}
}

// TestFetchWithoutWARC: WARC is off by default, and then the fetch keeps
// nothing of the exchange it does not need.
func TestFetchWithoutWARC(t *testing.T) {
	site := serveWARCSite(t)
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	env := testEnv(t)
	gen := generateAll(t, env, site.urls(), now, 1)
	o := FetchOptions{Segment: gen.Segment, Agent: "warc-test", NoServerDelay: true, AllowPrivate: true, NoProgressLog: true, Now: now}
	if fo, err := o.fetcherOptions(); err != nil || fo.KeepExchange {
		t.Fatalf("fetcher options keep the exchange without WARC (%v)", err)
	}
	if _, err := Fetch(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	if dirExists(filepath.Join(gen.Segment, segment.DirWARC)) {
		t.Error("a fetch without WARC wrote a warc directory")
	}
}

// TestExportWARC: warc export writes a fetched segment's content as
// response records an independent reader validates, each payload the
// page served, with indexes addressing them; into the segment by
// default, refusing to overwrite without Force; and the same as Hadoop
// Streaming map tasks.
func TestExportWARC(t *testing.T) {
	site := serveWARCSite(t)
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	env := testEnv(t)
	gen := generateAll(t, env, site.urls(), now, 2)
	if _, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "warc-test", NoServerDelay: true,
		AllowPrivate: true, NoProgressLog: true, Now: now, ContentTypes: []string{"*/*"}}); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, dir string) {
		t.Helper()
		d := warctest.CheckDir(t, dir)
		resp := d.Responses()
		if len(resp) != 4 {
			t.Errorf("%d response records, want the 4 pages fetched with success", len(resp))
		}
		for u, r := range resp {
			body := site.bodies[strings.TrimPrefix(u, site.srv.URL)]
			if r.Status != 200 || !bytes.Equal(r.Payload, body) || r.ConcurrentTo != "" {
				t.Errorf("%s: status %d, %d bytes (served %d), concurrent to %q", u, r.Status, len(r.Payload), len(body), r.ConcurrentTo)
			}
		}
	}
	res, err := ExportWARC(context.Background(), env, WARCExportOptions{Segments: []string{gen.Segment}})
	if err != nil {
		t.Fatal(err)
	}
	inSeg := filepath.Join(gen.Segment, segment.DirWARC)
	if res.Responses != 4 || res.Files == 0 || len(res.Outputs) != 1 || res.Outputs[0] != inSeg {
		t.Errorf("result %+v", res)
	}
	check(t, inSeg)
	before, _ := os.ReadDir(inSeg)
	if _, err := ExportWARC(context.Background(), env, WARCExportOptions{Segments: []string{gen.Segment}}); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second export without Force: %v", err)
	}
	if after, _ := os.ReadDir(inSeg); len(after) != len(before) {
		t.Errorf("a refused export changed %s", inSeg)
	}
	if _, err := ExportWARC(context.Background(), env, WARCExportOptions{Segments: []string{gen.Segment}, Force: true}); err != nil {
		t.Errorf("an export with Force: %v", err)
	}
	check(t, inSeg)

	senv := env
	senv.Runner = streamingMapOnly(t, env.Storage)
	out := filepath.Join(t.TempDir(), "export")
	if _, err := ExportWARC(context.Background(), senv, WARCExportOptions{Segments: []string{gen.Segment}, Out: out}); err != nil {
		t.Fatal(err)
	}
	check(t, out)

	// A segment without content is refused, and nothing is written.
	gen2 := generateAll(t, testEnv(t), site.urls(), now, 1)
	if _, err := ExportWARC(context.Background(), env, WARCExportOptions{Segments: []string{gen2.Segment}}); err == nil ||
		dirExists(filepath.Join(gen2.Segment, segment.DirWARC)) {
		t.Errorf("export of an unfetched segment: %v", err)
	}
}

// BenchmarkFetchJobWARC is BenchmarkFetchJob with WARC files written:
// compare its cpu-µs/page (the whole process's, the loopback web's
// included) with BenchmarkFetchJob's.
func BenchmarkFetchJobWARC(b *testing.B) { benchmarkFetchJob(b, &WARCOptions{Host: "bench"}) }
