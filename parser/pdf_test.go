package parser_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// makePDF writes a PDF with fpdf (an independent writer): a title, the
// given pages of text, and on the first page a link annotation to each
// of links.
func makePDF(t testing.TB, title string, pages []string, links []string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetTitle(title, true)
	f.SetAuthor("Ada Lovelace", true)
	f.SetFont("Helvetica", "", 12)
	for i, text := range pages {
		f.AddPage()
		f.Cell(40, 10, text)
		if i == 0 {
			for j, l := range links {
				f.LinkString(10, 20+float64(j)*10, 50, 8, l)
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParsePDF: a PDF's text, page by page, its title and author, and
// its link annotations as outlinks, resolved and filtered as an HTML
// page's are.
func TestParsePDF(t *testing.T) {
	body := makePDF(t, "Quarterly report", []string{"Revenue grew in the third quarter.", "Costs fell sharply."},
		[]string{"http://other.example/annex.html", "http://h.example/docs/terms.html", "http://h.example/logo.png"})
	p := parser.New(parser.Options{Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions())})
	r, err := p.Parse(segment.Content{URL: "http://h.example/docs/report.pdf", ContentType: "application/pdf", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if r.MediaType != "application/pdf" || r.Title != "Quarterly report" || r.Meta["author"] != "Ada Lovelace" {
		t.Errorf("media type %q, title %q, author %q", r.MediaType, r.Title, r.Meta["author"])
	}
	if want := "Revenue grew in the third quarter. Costs fell sharply."; r.Text != want {
		t.Errorf("text %q, want %q", r.Text, want)
	}
	if r.Features.Words != 9 || r.Meta["pdf_pages"] != "2" || r.Meta["pdf_pages_skipped"] != "" {
		t.Errorf("words %d, meta %v", r.Features.Words, r.Meta)
	}
	var got []string
	for _, o := range r.Outlinks {
		got = append(got, o.URL)
	}
	// The .png is refused by the default suffix filter, as in an HTML page.
	if want := []string{"http://other.example/annex.html", "http://h.example/docs/terms.html"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outlinks %v, want %v", got, want)
	}
	if len(r.MD5) == 0 {
		t.Error("no signature")
	}
	// The same PDF sniffed, without a content type.
	r2, err := p.Parse(segment.Content{URL: "http://h.example/docs/report.pdf", Body: body})
	if err != nil || r2.MediaType != "application/pdf" || r2.Text != r.Text {
		t.Errorf("sniffed: %v, %+v", err, r2)
	}
}

// rawPDF lays out a PDF by hand from its objects (object i+1 is objs[i])
// with a correct cross-reference table, so that a test can build files
// no PDF writer would.
func rawPDF(objs []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailer, xref)
	return b.Bytes()
}

// stream is a PDF stream object of data, deflated.
func stream(data []byte) string {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes())
}

// TestParsePDFHostile: PDFs built to make a reader work forever or
// without bound end with an error or a partial result, never a panic or
// a hang: a page tree whose /Kids loop back, a page claiming a billion
// pages, a content stream that inflates past the bound, a cross-reference
// chain that points back at itself, a truncated file, garbage.
func TestParsePDFHostile(t *testing.T) {
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
	text := stream([]byte("BT /F1 12 Tf 72 712 Td (hello pdf) Tj ET"))
	page := func(contents string) string {
		return "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents " + contents + " >>"
	}
	loop := rawPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 1000000000 >>",
		page("4 0 R"),
		text,
		font,
	}, "")
	bomb := rawPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>",
		page("4 0 R"),
		stream(bytes.Repeat([]byte(" "), parser.MaxPDFPageContent+1)),
		font,
		page("7 0 R"),
		text,
	}, "")
	good := rawPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		page("4 0 R"),
		text,
		font,
	}, "")
	// The trailer's /Prev points at the cross-reference table itself.
	xrefAt := bytes.LastIndex(good, []byte("xref\n"))
	prevLoop := rawPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		page("4 0 R"),
		text,
		font,
	}, fmt.Sprintf("/Prev %d", xrefAt))

	p := parser.New(parser.Options{})
	parse := func(body []byte) (*parser.Result, error) {
		return p.Parse(segment.Content{URL: "http://h.example/x.pdf", ContentType: "application/pdf", Body: body})
	}
	r, err := parse(good)
	if err != nil || r.Text != "hello pdf" {
		t.Fatalf("the well-formed file: %v, %+v", err, r)
	}
	// The loop is walked to the depth bound: the page is read once per
	// level, and the walk ends.
	r, err = parse(loop)
	if err != nil || !strings.HasPrefix(r.Text, "hello pdf") || r.Meta["pdf_pages"] == "" {
		t.Errorf("looping page tree: %v, %+v", err, r)
	}
	r, err = parse(bomb)
	if err != nil || r.Text != "hello pdf" || r.Meta["pdf_pages_skipped"] != "1" {
		t.Errorf("inflating content stream: %v, %+v", err, r)
	}
	if _, err := parse(prevLoop); err != nil {
		var pe *parser.Error
		if ok := asParserError(err, &pe); ok && pe.Panic {
			t.Errorf("xref loop: a panic: %v", err)
		}
	}
	for _, body := range [][]byte{good[:len(good)/2], []byte("%PDF-1.4\ngarbage"), []byte("%PDF-1.7\n%%EOF\n"), nil} {
		_, err := parse(body)
		if err == nil {
			t.Errorf("%q: no error", truncate(body))
			continue
		}
		if pe, ok := err.(*parser.Error); !ok || pe.Panic || !strings.Contains(err.Error(), "pdf") {
			t.Errorf("%q: %v, want a pdf error", truncate(body), err)
		}
	}
}

func asParserError(err error, pe **parser.Error) bool {
	e, ok := err.(*parser.Error)
	*pe = e
	return ok
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// TestTypes: Options.Types narrows what Parse parses; a page of a type
// left out fails as an unknown type does, and CheckTypes refuses a type
// Parse does not know.
func TestTypes(t *testing.T) {
	pdfBody := makePDF(t, "Report", []string{"Some text."}, nil)
	pages := map[string]segment.Content{
		"text/html":       htmlPage("http://h.example/", "<title>T</title><p>x"),
		"text/plain":      {URL: "http://h.example/a.txt", ContentType: "text/plain", Body: []byte("plain")},
		"application/pdf": {URL: "http://h.example/r.pdf", ContentType: "application/pdf", Body: pdfBody},
	}
	for _, tc := range []struct {
		types []string
		want  map[string]bool // media type -> parsed
	}{
		{nil, map[string]bool{"text/html": true, "text/plain": true, "application/pdf": true}},
		{parser.Types(), map[string]bool{"text/html": true, "text/plain": true, "application/pdf": true}},
		{[]string{"text/html", "text/plain"}, map[string]bool{"text/html": true, "text/plain": true}},
		{[]string{"application/pdf"}, map[string]bool{"application/pdf": true}},
	} {
		p := parser.New(parser.Options{Types: tc.types})
		for media, c := range pages {
			r, err := p.Parse(c)
			switch {
			case tc.want[media] && (err != nil || r.MediaType != media):
				t.Errorf("types %v: %s: err %v", tc.types, media, err)
			case !tc.want[media] && (!errors.Is(err, parser.ErrUnsupportedType) || !strings.Contains(err.Error(), "not among the types")):
				t.Errorf("types %v: %s: err %v, want ErrUnsupportedType", tc.types, media, err)
			}
		}
	}
	if err := parser.CheckTypes(parser.Types()); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"image/png", "text/HTML", "text/*", ""} {
		if err := parser.CheckTypes([]string{"text/html", bad}); err == nil || !strings.Contains(err.Error(), "application/pdf") {
			t.Errorf("CheckTypes(%q): %v", bad, err)
		}
	}
}
