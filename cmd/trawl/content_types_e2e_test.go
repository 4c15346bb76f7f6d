package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"codeberg.org/go-pdf/fpdf"
)

// contentSite serves a home page that links an about page and a PDF, and
// embeds a style sheet, a script and an image; the PDF links a page no
// HTML page links to.
func contentSite(t *testing.T) *httptest.Server {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetTitle("Annual figures", true)
	f.AddPage()
	f.SetFont("Helvetica", "", 12)
	f.Cell(40, 10, "Turnover doubled this year.")
	var pdf bytes.Buffer
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(pdf.Bytes())
		case "/s.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, "body { margin: 0 }")
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, "console.log(1)")
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n...."))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><title>Home</title><link rel="stylesheet" href="/s.css">`+
				`<script src="/app.js"></script></head><body><img src="/logo.png" alt="logo">`+
				`<a href="/about.html">About</a> <a href="/doc.pdf">Report</a></body></html>`)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><title>"+r.URL.Path+"</title><p>page</p></html>")
		}
	}))
	t.Cleanup(srv.Close)
	f.LinkString(10, 20, 50, 8, srv.URL+"/from-pdf.html")
	if err := f.Output(&pdf); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestCrawlContentTypes: by default a crawl fetches and parses HTML and
// PDF (the PDF's link annotation leads to a page no HTML page links to)
// and takes no embedded resources; with --parse-types text/html it
// stores the PDF without reading it; with --embedded-links,
// --content-types '*/*' and the suffix filter off it fetches and stores
// the style sheet, the script and the image too, as wget
// --page-requisites does.
func TestCrawlContentTypes(t *testing.T) {
	srv := contentSite(t)
	r := newRunner(t)
	seeds := filepath.Join(r.dir, "seeds.txt")
	writeTestFile(t, seeds, srv.URL+"/\n")
	base := []string{"--log-level", "warn", "crawl", "--seeds", seeds, "--allow-private", "--agent", "trawl-e2e",
		"--server-delay", "0", "--rounds", "3"}
	plain := filepath.Join(r.dir, "plain")
	r.ok(append([]string{"--crawl", plain}, base...)...)
	rows := dumpRows(t, r, plain)
	for _, p := range []string{"/", "/about.html", "/doc.pdf", "/from-pdf.html"} {
		if row := rows[srv.URL+p]; row == nil || row["status"] != "db_fetched" {
			t.Errorf("default crawl: %s: %v, want db_fetched", p, row)
		}
	}
	for _, p := range []string{"/s.css", "/app.js", "/logo.png"} {
		if row := rows[srv.URL+p]; row != nil {
			t.Errorf("default crawl: %s is in the CrawlDB: %v", p, row)
		}
	}

	// --parse-types without PDF: the PDF is fetched and stored, but its
	// link is not read, so the page only it links to is never found.
	htmlOnly := filepath.Join(r.dir, "html-only")
	r.ok(append([]string{"--crawl", htmlOnly}, append(base, "--parse-types", "text/html")...)...)
	rows = dumpRows(t, r, htmlOnly)
	for _, p := range []string{"/", "/about.html", "/doc.pdf"} {
		if row := rows[srv.URL+p]; row == nil || row["status"] != "db_fetched" {
			t.Errorf("--parse-types text/html: %s: %v, want db_fetched", p, row)
		}
	}
	if row := rows[srv.URL+"/from-pdf.html"]; row != nil {
		t.Errorf("--parse-types text/html: the page only the PDF links to is in the CrawlDB: %v", row)
	}

	all := filepath.Join(r.dir, "all")
	r.env = append(r.env, "TRAWL_URLFILTER_SUFFIX=false")
	r.ok(append([]string{"--crawl", all}, append(base, "--embedded-links", "--content-types", "*/*")...)...)
	rows = dumpRows(t, r, all)
	for _, p := range []string{"/", "/about.html", "/doc.pdf", "/from-pdf.html", "/s.css", "/app.js", "/logo.png"} {
		if row := rows[srv.URL+p]; row == nil || row["status"] != "db_fetched" {
			t.Errorf("--embedded-links --content-types '*/*': %s: %v, want db_fetched", p, row)
		}
	}
}
