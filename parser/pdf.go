package parser

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on what parsing one PDF may cost. A PDF is a graph of objects
// whose streams are usually compressed, so a small file can describe a
// great deal of work: a content stream that inflates a thousandfold, a
// page tree that claims a billion pages or loops back on itself. These
// bounds keep every PDF within the cost of a large HTML page.
const (
	// MaxPDFPages is the number of pages whose text is extracted; later
	// pages are left out (Result.Meta["pdf_pages_skipped"]).
	MaxPDFPages = 2000
	// MaxPDFPageContent bounds the decoded content streams of one page;
	// a page above it is left out.
	MaxPDFPageContent = 8 << 20
	// MaxPDFContent bounds the decoded content streams of the whole
	// document; the pages after it is reached are left out.
	MaxPDFContent = 64 << 20
	// MaxPDFText is the most runes of text kept; the pages after it is
	// reached are left out.
	MaxPDFText = 4 << 20
	// maxPDFTreeNodes bounds the page-tree nodes visited (a tree that
	// loops back on itself would otherwise be walked forever), and
	// maxPDFTreeDepth its depth.
	maxPDFTreeNodes = 4 * MaxPDFPages
	maxPDFTreeDepth = 64
	// pdfReadFactor and pdfReadExtra bound the bytes the PDF reader may
	// read from the body, all reads counted: pdfReadFactor times the
	// body plus pdfReadExtra. The reader reads an object again each time
	// it is looked up, so a well-formed file reads its bytes several
	// times; a hostile one whose cross-reference sections or objects
	// refer back to themselves would read forever.
	pdfReadFactor = 64
	pdfReadExtra  = 16 << 20
)

// errPDFReadBudget is the panic value of a PDF read past its budget.
var errPDFReadBudget = errors.New("pdf: read budget exhausted (the file refers back to itself, or is far too complex)")

// budgetReaderAt is a bytes.Reader whose ReadAt panics with
// errPDFReadBudget once left bytes have been read: the PDF reader has no
// bound of its own on loops through the file, and every loop reads. The
// panic is recovered by the reader's own recovers (an error for the
// document or the page) or by Parse's.
type budgetReaderAt struct {
	r    *bytes.Reader
	left int64
}

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	b.left -= int64(len(p))
	if b.left < 0 {
		panic(errPDFReadBudget)
	}
	return b.r.ReadAt(p, off)
}

// parsePDF fills res from a PDF body (application/pdf), as Nutch's
// parse-tika does for PDF: the text of every page (github.com/ledongthuc/pdf
// reads the content streams and decodes the fonts' encodings), the title
// from the document information dictionary, and the outlinks from the
// pages' link annotations (/Annots entries of /Subtype /Link whose action
// is a /URI), resolved and checked like an HTML page's. Encrypted PDFs
// with an empty user password are read; others fail. Res.Meta gets
// "pdf_pages" (the page count read from the page tree) and, when the
// bounds above left pages out, "pdf_pages_skipped".
func (p *Parser) parsePDF(res *Result, body []byte, pageURL string) (err error) {
	// The PDF reader panics on objects that are not what the format says
	// (and errPDFReadBudget is a panic): a malformed file, not a bug here.
	defer func() {
		if v := recover(); v != nil {
			if e, ok := v.(error); ok {
				err = fmt.Errorf("pdf: malformed file: %w", e)
			} else {
				err = fmt.Errorf("pdf: malformed file: %v", v)
			}
		}
	}()
	rd := &budgetReaderAt{r: bytes.NewReader(body), left: pdfReadFactor*int64(len(body)) + pdfReadExtra}
	r, err := pdf.NewReader(rd, int64(len(body)))
	if err != nil {
		return fmt.Errorf("pdf: %w", err)
	}
	info := r.Trailer().Key("Info")
	res.Title = cleanPDFText(info.Key("Title").Text())
	res.Charset, res.CharsetSource = "utf-8", ""
	res.Meta = map[string]string{"charset": "utf-8"}
	for _, k := range []string{"Author", "Subject", "Keywords"} {
		if v := cleanPDFText(info.Key(k).Text()); v != "" {
			res.Meta[strings.ToLower(k)] = v
		}
	}

	pages := pdfPages(r.Trailer().Key("Root").Key("Pages"))
	st := p.scratch.Get().(*htmlState)
	st.reset()
	defer func() {
		if !st.tooBig() {
			st.reset()
			p.scratch.Put(st)
		}
	}()
	var (
		text    textBuf
		total   int64
		skipped int
	)
	text.reset(MaxPDFText)
	for i, pg := range pages {
		if i >= MaxPDFPages || text.full {
			skipped += len(pages) - i
			break
		}
		n := pdfContentSize(pg.V.Key("Contents"), min(MaxPDFPageContent, MaxPDFContent-total)+1)
		if n > MaxPDFPageContent || total+n > MaxPDFContent {
			skipped++
			continue
		}
		total += n
		s, err := pg.GetPlainText(nil)
		if err == nil {
			text.write([]byte(s))
			text.sep()
		}
		annots := pg.V.Key("Annots")
		for j := range min(annots.Len(), MaxRawLinks) {
			a := annots.Index(j)
			if a.Key("Subtype").Name() != "Link" {
				continue
			}
			uri := strings.TrimSpace(a.Key("A").Key("URI").RawString())
			if uri == "" {
				continue
			}
			if len(st.links) >= MaxRawLinks {
				st.overflow++
				continue
			}
			st.links = append(st.links, rawLink{href: uri})
		}
	}
	if rd.left < 0 {
		return errPDFReadBudget
	}
	res.Text = text.String()
	res.Features.Words = int32(text.words)
	res.Meta["pdf_pages"] = fmt.Sprint(len(pages))
	if skipped > 0 {
		res.Meta["pdf_pages_skipped"] = fmt.Sprint(skipped)
	}
	p.resolveLinks(res, st, pageURL)
	return nil
}

// pdfPages returns the leaves (/Type /Page) of a page tree in document
// order, visiting at most maxPDFTreeNodes nodes no deeper than
// maxPDFTreeDepth, so that a tree whose /Kids loop back ends.
func pdfPages(root pdf.Value) []pdf.Page {
	var (
		out     []pdf.Page
		visited int
	)
	var walk func(v pdf.Value, depth int)
	walk = func(v pdf.Value, depth int) {
		if visited >= maxPDFTreeNodes || depth > maxPDFTreeDepth || v.Kind() != pdf.Dict {
			return
		}
		visited++
		switch v.Key("Type").Name() {
		case "Page":
			out = append(out, pdf.Page{V: v})
		case "Pages":
			kids := v.Key("Kids")
			for i := range kids.Len() {
				walk(kids.Index(i), depth+1)
			}
		}
	}
	walk(root, 0)
	return out
}

// pdfContentSize returns the decoded size of a page's content streams (a
// stream or an array of them), reading no more than limit bytes: a size
// of limit means "at least".
func pdfContentSize(v pdf.Value, limit int64) int64 {
	var n int64
	read := func(s pdf.Value) {
		if n >= limit || s.Kind() != pdf.Stream {
			return
		}
		rd := s.Reader()
		defer rd.Close()
		m, _ := io.CopyN(io.Discard, rd, limit-n)
		n += m
	}
	if v.Kind() == pdf.Array {
		for i := range v.Len() {
			read(v.Index(i))
		}
	} else {
		read(v)
	}
	return n
}

// cleanPDFText trims a document information string and drops the NULs
// and other control characters some producers leave in it.
func cleanPDFText(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' {
			return -1
		}
		return r
	}, s))
}
