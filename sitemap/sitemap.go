// Package sitemap parses sitemaps as the sitemaps.org protocol defines
// them, for trawl's sitemap job (Nutch's SitemapProcessor).
//
// # The protocol
//
// A sitemap tells a crawler which URLs of a site exist, and for each,
// optionally, when it last changed and how often it changes. It comes in
// three forms, all UTF-8:
//
//   - An XML <urlset> of <url> elements, each with a <loc> (the absolute
//     URL, required, at most 2,048 characters) and the optional
//     <lastmod> (a W3C datetime: YYYY, YYYY-MM, YYYY-MM-DD, or a date
//     with hh:mm, hh:mm:ss or hh:mm:ss.s and a zone, Z or +hh:mm),
//     <changefreq> (always, hourly, daily, weekly, monthly, yearly or
//     never) and <priority> (0.0 to 1.0, relative to the site's other
//     URLs; 0.5 when absent).
//   - An XML <sitemapindex> of <sitemap> elements, each with the <loc> of
//     another sitemap (and an optional <lastmod>): a site with more URLs
//     than one file may hold splits them over several sitemaps and lists
//     those in an index. An index may not list indexes.
//   - A plain-text file with one absolute URL a line and nothing else.
//
// Any of them may be gzip-compressed. The content type (application/gzip,
// application/x-gzip) or a name ending in ".gz" says so (Result.Labelled),
// and the gzip magic bytes 1f 8b decide: Parse decompresses a file that
// starts with them, however it is labelled, and reads a labelled file
// without them as it is (an HTTP client or proxy decompressed it on the
// way, undoing a Content-Encoding). One sitemap file lists at most
// 50,000 URLs and is at most 50 MB (52,428,800 bytes) uncompressed: Parse
// reads the decompressed stream up to that size and no further, keeps
// at most that many URLs, and says in Result.Cut what it cut.
//
// # Scope
//
// A sitemap may only list URLs in its own scope: the same scheme, host
// and port as the sitemap's URL, with a path in the directory of the
// sitemap's path (http://example.com/catalog/sitemap.xml may list
// http://example.com/catalog/... but not http://example.com/images/...).
// A sitemap named in a host's robots.txt (a Sitemap: line) may list any
// URL of that host (Options.HostScope). With Options.Strict, URLs out of
// scope are refused and counted (Result.OutOfScope), as crawler-commons'
// strict parsing does for Nutch; the sitemaps an index lists must be on
// the index's own host and the others are refused (Result.OffHost)
// whatever Strict says.
//
// # Errors
//
// Parse never panics on its input. Input that is not a sitemap at all
// (an HTML page, an RSS feed, an empty file, XML broken before its root
// element) is an error. Damage later in the file (broken XML, the size or
// URL limits) ends the parse there: what came before is returned, and
// Result.Cut says why the rest was dropped. An entry with a bad field
// keeps its URL without the field (Result.BadFields); an entry whose URL
// is not an absolute http or https URL is dropped (Result.Invalid).
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// The protocol's limits on one sitemap file.
const (
	// MaxURLs is the most URLs (or sitemaps, in an index) one file may list.
	MaxURLs = 50000
	// MaxBytes is the most bytes one file may hold, uncompressed.
	MaxBytes = 50 * 1024 * 1024
	// MaxURLLength is the longest URL a sitemap may give, in characters.
	MaxURLLength = 2048
	// DefaultPriority is the priority of a URL whose entry gives none.
	DefaultPriority = 0.5
)

// Kind says which form a sitemap has.
type Kind uint8

// The kinds of sitemap.
const (
	// URLSet is an XML <urlset> or a plain-text list: a list of pages.
	URLSet Kind = iota
	// Index is an XML <sitemapindex>: a list of sitemaps.
	Index
)

// String returns the kind's root element name.
func (k Kind) String() string {
	if k == Index {
		return "sitemapindex"
	}
	return "urlset"
}

// ChangeFreq is a <changefreq> value, "" when the entry gives none.
type ChangeFreq string

// The protocol's change frequencies.
const (
	Always  ChangeFreq = "always"
	Hourly  ChangeFreq = "hourly"
	Daily   ChangeFreq = "daily"
	Weekly  ChangeFreq = "weekly"
	Monthly ChangeFreq = "monthly"
	Yearly  ChangeFreq = "yearly"
	Never   ChangeFreq = "never"
)

// Interval is the fetch interval a change frequency stands for, as
// Nutch's SitemapProcessor maps them: always 1 second, hourly an hour,
// daily a day, weekly 7 days, monthly 30 days, yearly 365 days, never
// the largest interval (math.MaxInt32 seconds). ok is false for "" or an
// unknown value.
func (c ChangeFreq) Interval() (d time.Duration, ok bool) {
	switch c {
	case Always:
		return time.Second, true
	case Hourly:
		return time.Hour, true
	case Daily:
		return 24 * time.Hour, true
	case Weekly:
		return 7 * 24 * time.Hour, true
	case Monthly:
		return 30 * 24 * time.Hour, true
	case Yearly:
		return 365 * 24 * time.Hour, true
	case Never:
		return math.MaxInt32 * time.Second, true
	}
	return 0, false
}

// Entry is one URL of a <urlset> (or of a text sitemap, with only URL
// and the default Priority).
type Entry struct {
	// URL is the <loc>, as given (trimmed).
	URL string
	// LastMod is the <lastmod> in UTC; zero when absent or bad.
	LastMod time.Time
	// ChangeFreq is the <changefreq>, lower case; "" when absent or bad.
	ChangeFreq ChangeFreq
	// Priority is the <priority>, DefaultPriority when absent or bad.
	Priority float32
}

// Options configure Parse. The zero value applies no scope check and
// the protocol's limits.
type Options struct {
	// Strict refuses URLs outside the sitemap's scope (see the package
	// documentation).
	Strict bool
	// HostScope widens the scope to every URL of the sitemap's host (for
	// a sitemap named in the host's robots.txt).
	HostScope bool
	// MaxURLs and MaxBytes lower the protocol's limits (for tests); 0 or
	// more than the protocol's means the protocol's.
	MaxURLs  int
	MaxBytes int64
}

func (o Options) limits() (int, int64) {
	n, b := o.MaxURLs, o.MaxBytes
	if n <= 0 || n > MaxURLs {
		n = MaxURLs
	}
	if b <= 0 || b > MaxBytes {
		b = MaxBytes
	}
	return n, b
}

// Result is what Parse found in one sitemap file.
type Result struct {
	// Kind is the sitemap's form.
	Kind Kind
	// Gzip says the file was gzip-compressed (and Parse decompressed
	// it); Labelled that its content type or name said gzip.
	Gzip, Labelled bool
	// URLs are the pages of a URLSet, in file order.
	URLs []Entry
	// Sitemaps are the sitemap URLs of an Index, in file order.
	Sitemaps []string
	// Invalid counts entries dropped because their URL is missing, not
	// an absolute http or https URL, or too long.
	Invalid int
	// OutOfScope counts URLs refused by the scope check (Strict).
	OutOfScope int
	// OffHost counts the sitemaps of an index refused for being on
	// another host than the index.
	OffHost int
	// BadFields counts entries kept without a <lastmod>, <changefreq> or
	// <priority> that did not parse.
	BadFields int
	// Bytes is the number of uncompressed bytes read.
	Bytes int64
	// Cut, when not empty, says why the file was not read to its end:
	// the size or URL limit, or broken XML, and what was kept.
	Cut string
}

// ErrNotSitemap is wrapped by Parse's error for input that is not a
// sitemap (no <urlset> or <sitemapindex> root, no URL in a text file).
var ErrNotSitemap = errors.New("not a sitemap")

// Parse reads one sitemap from r. loc is the sitemap's own URL (for the
// scope check and the ".gz" test) and contentType the Content-Type it was
// served with ("" if unknown). It returns an error only when nothing of
// the input is usable; see the package documentation.
func Parse(loc *url.URL, contentType string, r io.Reader, o Options) (*Result, error) {
	maxURLs, maxBytes := o.limits()
	res := &Result{}
	br := bufio.NewReader(r)
	var in io.Reader = br
	res.Labelled = labelledGzip(loc, contentType)
	if isGzip(br) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("sitemap %s: gzip: %w", loc, err)
		}
		defer zr.Close()
		in = zr
		res.Gzip = true
	}
	// One byte past the limit tells a file of exactly MaxBytes from a
	// longer one; the parsers never see it.
	cr := &countingReader{r: io.LimitReader(in, maxBytes+1), limit: maxBytes}
	p := &parser{loc: loc, o: o, res: res, maxURLs: maxURLs, cr: cr}
	body := bufio.NewReader(cr)
	first, err := firstByte(body)
	if err != nil {
		return nil, fmt.Errorf("sitemap %s: %w", loc, err)
	}
	if first == '<' {
		err = p.parseXML(body)
	} else {
		err = p.parseText(body)
	}
	res.Bytes = min(cr.n, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("sitemap %s: %w", loc, err)
	}
	if cr.over && (res.Cut == "" || p.cutBySize) {
		res.Cut = fmt.Sprintf("stopped at the %d-byte limit of a sitemap file (uncompressed); kept the %d entries before it", maxBytes, len(res.URLs)+len(res.Sitemaps))
	}
	return res, nil
}

// isGzip reports whether the stream is gzip-compressed. The content
// type (application/gzip, application/x-gzip) or a ".gz" name says a file
// is compressed, but the bytes decide: a labelled file that does not start
// with the gzip magic 1f 8b was decompressed on the way (an HTTP client or
// proxy undoing a Content-Encoding) and is read as it is, and a file that
// starts with the magic is decompressed whatever its label.
func isGzip(br *bufio.Reader) bool {
	magic, _ := br.Peek(2)
	return len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
}

// labelledGzip reports whether the content type or the name says gzip.
func labelledGzip(loc *url.URL, contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	return ct == "application/gzip" || ct == "application/x-gzip" ||
		(loc != nil && strings.HasSuffix(strings.ToLower(loc.Path), ".gz"))
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// firstByte skips a UTF-8 byte order mark and white space and returns the
// first byte that follows, without consuming it.
func firstByte(r *bufio.Reader) (byte, error) {
	if bom, _ := r.Peek(3); bytes.Equal(bom, []byte{0xef, 0xbb, 0xbf}) {
		_, _ = r.Discard(3)
	}
	for {
		b, err := r.ReadByte()
		if err == io.EOF {
			return 0, fmt.Errorf("%w: empty file", ErrNotSitemap)
		}
		if err != nil {
			return 0, err
		}
		if !isSpace(b) {
			_ = r.UnreadByte()
			return b, nil
		}
	}
}

// countingReader counts the bytes read through it and notes when the
// stream goes past limit (it is given a reader of limit+1 bytes at most,
// and returns no more than limit).
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
	over  bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		// Look for one more byte: if there is one, the file is too long.
		var one [1]byte
		if k, _ := c.r.Read(one[:]); k > 0 {
			c.over = true
		}
		return 0, io.EOF
	}
	if rest := c.limit - c.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// parser holds the state of one Parse.
type parser struct {
	loc       *url.URL
	o         Options
	res       *Result
	maxURLs   int
	cutBySize bool
	cr        *countingReader
}

// sizeCut reports whether the input was cut at the size limit (known
// once the parser has read to the end of what it was given).
func (p *parser) sizeCut() bool { return p.cr != nil && p.cr.over }

// full reports whether the URL limit is reached, noting the cut.
func (p *parser) full() bool {
	if len(p.res.URLs)+len(p.res.Sitemaps) < p.maxURLs {
		return false
	}
	p.res.Cut = fmt.Sprintf("stopped at the limit of %d URLs a sitemap file; the rest of the file was not read", p.maxURLs)
	return true
}

// parseText reads a plain-text sitemap: one URL a line. A last line
// without its newline in a file cut at the size limit is dropped: it may
// be a URL cut short.
func (p *parser) parseText(r *bufio.Reader) error {
	lines := 0
	for {
		raw, err := r.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF && p.sizeCut() {
			return nil
		}
		if line := strings.TrimSpace(raw); line != "" {
			lines++
			if p.full() {
				return nil
			}
			p.addURL(Entry{URL: line, Priority: DefaultPriority})
		}
		if err == io.EOF {
			break
		}
	}
	if lines > 0 && len(p.res.URLs) == 0 && p.res.OutOfScope == 0 {
		return fmt.Errorf("%w: a text file whose %d lines hold no absolute http or https URL", ErrNotSitemap, lines)
	}
	return nil
}

// xmlEntry is a <url> or <sitemap> element.
type xmlEntry struct {
	Loc        string `xml:"loc"`
	LastMod    string `xml:"lastmod"`
	ChangeFreq string `xml:"changefreq"`
	Priority   string `xml:"priority"`
}

// parseXML reads an XML sitemap: a <urlset> or a <sitemapindex>.
func (p *parser) parseXML(r io.Reader) error {
	d := xml.NewDecoder(r)
	d.Strict = true
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return in, nil
		}
		return nil, fmt.Errorf("encoding %q: a sitemap must be UTF-8", label)
	}
	root := false
	entry := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !root {
				return fmt.Errorf("%w: no <urlset> or <sitemapindex> element", ErrNotSitemap)
			}
			return nil
		}
		if err != nil {
			return p.broken(d, root, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			switch se.Name.Local {
			case "urlset":
				p.res.Kind, entry = URLSet, "url"
			case "sitemapindex":
				p.res.Kind, entry = Index, "sitemap"
			default:
				return fmt.Errorf("%w: the root element is <%s>, not <urlset> or <sitemapindex>", ErrNotSitemap, se.Name.Local)
			}
			root = true
			continue
		}
		if se.Name.Local != entry {
			if err := d.Skip(); err != nil {
				return p.broken(d, root, err)
			}
			continue
		}
		var e xmlEntry
		if err := d.DecodeElement(&e, &se); err != nil {
			return p.broken(d, root, err)
		}
		if p.full() {
			return nil
		}
		if p.res.Kind == Index {
			p.addSitemap(e.Loc)
		} else {
			p.addURL(p.entry(e))
		}
	}
}

// broken handles an XML error: before the root it is the parse's error;
// after it the parse ends with what it has, and Cut says why.
func (p *parser) broken(d *xml.Decoder, root bool, err error) error {
	if !root {
		return fmt.Errorf("%w: %v", ErrNotSitemap, err)
	}
	kept := len(p.res.URLs) + len(p.res.Sitemaps)
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF") {
		p.cutBySize = true
		p.res.Cut = fmt.Sprintf("the XML ends early (offset %d); kept the %d entries before it", d.InputOffset(), kept)
		return nil
	}
	line, _ := d.InputPos()
	p.res.Cut = fmt.Sprintf("broken XML at line %d: %v; kept the %d entries before it", line, err, kept)
	return nil
}

// entry turns a <url> into an Entry, counting the fields that do not
// parse.
func (p *parser) entry(e xmlEntry) Entry {
	out := Entry{URL: strings.TrimSpace(e.Loc), Priority: DefaultPriority}
	bad := false
	if s := strings.TrimSpace(e.LastMod); s != "" {
		t, err := ParseW3CDate(s)
		if err != nil {
			bad = true
		} else {
			out.LastMod = t
		}
	}
	if s := strings.TrimSpace(e.ChangeFreq); s != "" {
		c := ChangeFreq(strings.ToLower(s))
		if _, ok := c.Interval(); ok {
			out.ChangeFreq = c
		} else {
			bad = true
		}
	}
	if s := strings.TrimSpace(e.Priority); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			bad = true
		} else {
			out.Priority = float32(f)
		}
	}
	if bad {
		p.res.BadFields++
	}
	return out
}

// addURL checks an entry's URL and scope and keeps it.
func (p *parser) addURL(e Entry) {
	u, ok := absoluteHTTP(e.URL)
	if !ok {
		p.res.Invalid++
		return
	}
	if p.o.Strict && !InScope(p.loc, u, p.o.HostScope) {
		p.res.OutOfScope++
		return
	}
	p.res.URLs = append(p.res.URLs, e)
}

// addSitemap checks a sitemap URL of an index and keeps it.
func (p *parser) addSitemap(loc string) {
	loc = strings.TrimSpace(loc)
	u, ok := absoluteHTTP(loc)
	if !ok {
		p.res.Invalid++
		return
	}
	if !SameHost(p.loc, u) {
		p.res.OffHost++
		return
	}
	p.res.Sitemaps = append(p.res.Sitemaps, loc)
}

// absoluteHTTP parses s as an absolute http or https URL with a host, at
// most MaxURLLength long.
func absoluteHTTP(s string) (*url.URL, bool) {
	if s == "" || len(s) > MaxURLLength {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, false
	}
	return u, true
}

// SameHost reports whether a and b name the same host and port (the
// scheme's default port when none is given), case-insensitively.
func SameHost(a, b *url.URL) bool {
	if a == nil || b == nil {
		return false
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// InScope reports whether a sitemap at loc may list u: the same scheme,
// host and port, and u's path inside the directory of loc's path; with
// hostScope (a sitemap from robots.txt) any path of the host.
func InScope(loc, u *url.URL, hostScope bool) bool {
	if loc == nil || u == nil || !strings.EqualFold(loc.Scheme, u.Scheme) || !SameHost(loc, u) {
		return false
	}
	if hostScope {
		return true
	}
	dir := path.Dir(loc.EscapedPath())
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return strings.HasPrefix(p, dir)
}

// w3cLayouts are the W3C datetime forms (a profile of ISO 8601), most
// precise first; time.RFC3339Nano's parse accepts any fraction of a
// second.
var w3cLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
	"2006-01",
	"2006",
}

// ParseW3CDate parses a W3C datetime (YYYY, YYYY-MM, YYYY-MM-DD,
// YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD or
// YYYY-MM-DDThh:mm:ss.sTZD, TZD being Z or +hh:mm or -hh:mm) and returns
// it in UTC. A date without a time is midnight UTC.
func ParseW3CDate(s string) (time.Time, error) {
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("lastmod %q is not a W3C datetime", s)
}
