package fetcher

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/trawl/trawl/crawldb"
)

// TestContentTypes: with Options.ContentTypes, a 200 answer of another
// type is a fetch_success without a body, read no further than maxDrain
// (a big one closes the connection); a type known only by sniffing is
// judged by what the body is; nil stores everything.
func TestContentTypes(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 200<<10)...)
	srv := newRecorder(t, "127.0.5.1", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/big.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		case "/small.css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			io.WriteString(w, "p { color: red }")
		case "/unlabelled":
			// No Content-Type: net/http would sniff one; an explicit
			// octet-stream leaves it to the crawler.
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(png[:64])
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			io.WriteString(w, "%PDF-1.4\n")
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>page</p>")
		}
	})
	paths := []string{"/a.html", "/big.png", "/small.css", "/unlabelled", "/doc.pdf", "/b.html"}
	var urls []string
	for _, p := range paths {
		urls = append(urls, srv.base+p)
	}
	o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, Log: testLog(), NoProgressLog: true,
		ContentTypes: []string{"text/html", "application/xhtml+xml", "text/plain", "application/pdf"}}
	res, st := fetchAll(t, o, requests(urls...))
	for _, p := range paths {
		r := res[srv.base+p]
		if r == nil || r.Status != crawldb.StatusFetchSuccess || r.HTTPStatus != 200 {
			t.Fatalf("%s: %s, want fetch_success", p, summary(r))
		}
		refused := p == "/big.png" || p == "/small.css" || p == "/unlabelled"
		if r.TypeRefused != refused || (len(r.Body) == 0) != refused {
			t.Errorf("%s: refused %v with %d body bytes (%q), want refused %v", p, r.TypeRefused, len(r.Body), r.Message, refused)
		}
		if refused && r.Message != "content not stored: "+r.ContentType+" is not a stored content type" {
			t.Errorf("%s: message %q", p, r.Message)
		}
	}
	if st.Bytes > 64<<10 {
		t.Errorf("%d body bytes read: the 200 KiB image was read", st.Bytes)
	}

	// "image/*" stores the image; nil stores everything.
	o.ContentTypes = []string{"text/html", "image/*"}
	res, _ = fetchAll(t, o, requests(srv.base+"/big.png", srv.base+"/small.css"))
	if r := res[srv.base+"/big.png"]; r.TypeRefused || len(r.Body) != len(png) {
		t.Errorf("image/*: %s", summary(r))
	}
	if r := res[srv.base+"/small.css"]; !r.TypeRefused {
		t.Errorf("image/*: the style sheet was stored")
	}
	o.ContentTypes = nil
	res, _ = fetchAll(t, o, requests(srv.base+"/small.css"))
	if r := res[srv.base+"/small.css"]; r.TypeRefused || string(r.Body) != "p { color: red }" {
		t.Errorf("every type: %s", summary(r))
	}
}

// TestTypeMatcher: patterns and their errors.
func TestTypeMatcher(t *testing.T) {
	m, err := NewTypeMatcher([]string{"Text/HTML", " image/* ", "application/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	for mt, want := range map[string]bool{"text/html": true, "TEXT/HTML": true, "image/png": true, "image/svg+xml": true,
		"application/pdf": true, "text/plain": false, "application/pdfx": false, "imagex/png": false, "": false} {
		if got := m.Match(mt); got != want {
			t.Errorf("Match(%q) = %v, want %v", mt, got, want)
		}
	}
	all, err := NewTypeMatcher([]string{"*"})
	if err != nil || !all.Match("x/y") {
		t.Errorf("*: %v", err)
	}
	for _, bad := range [][]string{nil, {"html"}, {"*/html"}, {"text/"}, {"text/ht*"}, {"text/html; charset=utf-8"}, {"a/b/c"}} {
		if _, err := NewTypeMatcher(bad); err == nil {
			t.Errorf("NewTypeMatcher(%q) accepted", bad)
		}
	}
	if err := (Options{Agent: "x", ContentTypes: []string{"nonsense"}}).Validate(); err == nil {
		t.Error("Options with a bad content type validated")
	}
}
