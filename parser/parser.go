package parser

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// DefaultMaxOutlinks is the default cap on outlinks per page (Nutch's
// db.max.outlinks.per.page).
const DefaultMaxOutlinks = 100

// MaxAnchorLength is the most runes of anchor text kept per link (Nutch's
// db.max.anchor.length).
const MaxAnchorLength = 100

// MaxTitleLength is the most runes of title kept.
const MaxTitleLength = 1024

// MaxMeta bounds the entries of Result.Meta; maxMetaValue the bytes of
// each value.
const (
	MaxMeta      = 32
	maxMetaValue = 1024
)

// MaxRawLinks bounds the links collected from one page before the checks
// (a page with more is cut there; LinkStats counts them as "limit").
const MaxRawLinks = 50000

// ErrUnsupportedType is the error (wrapped) for content of a media type
// the Parser does not parse: not one of Types, or left out of
// Options.Types.
var ErrUnsupportedType = errors.New("unsupported content type")

// Types returns the media types Parse parses, in the order of the package
// doc: HTML (three names), plain text and PDF. Each call returns a new
// slice.
func Types() []string {
	return []string{"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml", "text/plain", "application/pdf"}
}

// typeSet is a set of the media types of Types, bit i for Types()[i].
type typeSet uint8

// allTypes holds every type of Types.
const allTypes typeSet = 1<<5 - 1

// typeBit returns the bit of the media type media in a typeSet, or 0 for
// a type Parse does not know.
func typeBit(media string) typeSet {
	switch media {
	case "text/html":
		return 1 << 0
	case "application/xhtml+xml":
		return 1 << 1
	case "application/vnd.wap.xhtml+xml":
		return 1 << 2
	case "text/plain":
		return 1 << 3
	case "application/pdf":
		return 1 << 4
	}
	return 0
}

// CheckTypes checks a list of media types to parse (Options.Types): each
// must be one of Types, written as Types writes it.
func CheckTypes(types []string) error {
	for _, t := range types {
		if typeBit(t) == 0 {
			return fmt.Errorf("the parser cannot parse %q: it parses %s", t, strings.Join(Types(), ", "))
		}
	}
	return nil
}

// Options configure a Parser. The zero value resolves and normalizes links
// with the default normalizer, filters nothing and keeps
// DefaultMaxOutlinks links per page.
type Options struct {
	// Normalizer resolves and normalizes links; nil means the default
	// (urlutil.ResolveReference).
	Normalizer *urlutil.Normalizer
	// Filter, if set, is applied to every outlink (after normalization).
	Filter urlutil.Filter
	// Scope keeps only outlinks within the page's host or registered
	// domain (urlutil.ScopeAny keeps all).
	Scope urlutil.Scope
	// IgnoreExternalLinks drops outlinks to other hosts, or other
	// registered domains when Scope is ScopeDomain (Nutch's
	// db.ignore.external.links with db.ignore.external.links.mode).
	IgnoreExternalLinks bool
	// IgnoreInternalLinks drops outlinks to the page's own host (domain
	// when Scope is ScopeDomain) (Nutch's db.ignore.internal.links).
	IgnoreInternalLinks bool
	// EmbeddedLinks also takes the resources a page embeds as outlinks, as
	// wget --page-requisites fetches them: img, script, source, video,
	// audio and embed [src], and link[href] of a style sheet, icon,
	// preload or manifest. Their URLs then pass the outlink checks like
	// any link (the default suffix filter refuses images, style sheets
	// and scripts, as Nutch's does). False takes navigational links only,
	// as Nutch's default URL filters leave them.
	EmbeddedLinks bool
	// MaxOutlinks caps the outlinks kept per page; 0 means
	// DefaultMaxOutlinks, a negative value no cap.
	MaxOutlinks int
	// Types are the media types parsed, each one of Types (CheckTypes);
	// a page of a type left out fails with ErrUnsupportedType, as a page
	// of an unknown type does, so that its content is kept but not parsed
	// (as Nutch does for a type whose parse plugin is not in
	// plugin.includes). Empty means every type of Types. A type that is
	// not one of Types parses nothing.
	Types []string
	// TextProfile configures the fuzzy signature; the zero value means
	// DefaultTextProfile().
	TextProfile TextProfile
	// NoTextProfile skips the text-profile signature, for callers that use
	// the MD5 one only: Result.TextProfile is then nil. Profiling a page's
	// text costs several times what its MD5 does.
	NoTextProfile bool
	// Trace, if set, is called once for every link the page's outlinks
	// are made from, in document order (a refresh target first), with
	// what the checks did to it: for checking tools (trawl parsechecker)
	// that show why a link was kept or dropped. Links past MaxRawLinks
	// and those of rel=nofollow anchors are only counted (Result.Links).
	Trace func(LinkTrace)
}

// LinkTrace is what the parser did with one link of a page (see
// Options.Trace).
type LinkTrace struct {
	// Href is the link as written in the page; Anchor its anchor text;
	// Refresh is true for a <meta http-equiv=refresh> target.
	Href    string
	Anchor  string
	Refresh bool
	// URL is the link resolved against the base URL and normalized; ""
	// when no URL could be made of it (Err says why).
	URL string
	Err error
	// Dropped is "" for a kept link, else the reason it was dropped, as
	// LinkStats.Dropped counts it ("self", "duplicate", "cap",
	// "scope-host", "filter-" and the filter's reason, ...).
	Dropped string
}

// Result is what parsing one page gives.
type Result struct {
	// URL is the page's URL (Content.URL); BaseURL the URL links were
	// resolved against (<base href>, else Content.BaseURL, else URL),
	// normalized.
	URL     string
	BaseURL string
	// MediaType is the content type the page was parsed as (text/html,
	// text/plain, ...); Charset the encoding it was decoded from and
	// CharsetSource where that came from (CharsetFromHeader, ...).
	MediaType     string
	Charset       string
	CharsetSource string
	// Title is the page's title, Text its visible text (see the package
	// doc); both are empty when NoIndex.
	Title string
	Text  string
	// Outlinks are the links kept, in document order (empty when
	// NoFollow).
	Outlinks []segment.Outlink
	// NoIndex, NoFollow and NoCache are the page's robots directives
	// (meta robots or X-Robots-Tag).
	NoIndex, NoFollow, NoCache bool
	// Canonical is the <link rel=canonical> target, normalized ("" if
	// none or not a valid URL).
	Canonical string
	// RefreshURL is the target of a <meta http-equiv=refresh> (normalized;
	// "" if none) and RefreshDelay its delay in seconds.
	RefreshURL   string
	RefreshDelay int
	// Redirect is RefreshURL when it passed the outlink checks (self,
	// scope, filters): the URL the page redirects the crawl to.
	Redirect string
	// Meta holds the page's <meta name|property content> pairs and
	// "charset".
	Meta map[string]string
	// Features are the page's features (Inlinks 0).
	Features crawldb.Features
	// MD5 is MD5Signature and TextProfile TextProfileSignature of the
	// page's signature text (see the package doc); TextProfile is nil
	// under Options.NoTextProfile.
	MD5         []byte
	TextProfile []byte
	// Links counts what happened to the page's links.
	Links LinkStats
}

// Signature returns the signature of the given kind (SignatureMD5 or
// SignatureTextProfile; anything else is MD5).
func (r *Result) Signature(kind string) []byte {
	if kind == SignatureTextProfile {
		return r.TextProfile
	}
	return r.MD5
}

// LinkStats counts a page's links by outcome.
type LinkStats struct {
	// Found is the number of links in the page (before any check).
	Found int
	// Kept is len(Outlinks) (0 under NoFollow, though links are still
	// checked and counted).
	Kept int
	// Dropped counts dropped links by reason: "invalid" (no URL could be
	// made of it), "self", "duplicate", "internal", "external",
	// "scope-host" / "scope-domain", a filter's reason prefixed with
	// "filter-", "cap" (past MaxOutlinks) and "limit" (past MaxRawLinks).
	Dropped map[string]int
}

func (s *LinkStats) drop(reason string, n int) {
	if n == 0 {
		return
	}
	if s.Dropped == nil {
		s.Dropped = make(map[string]int, 4)
	}
	s.Dropped[reason] += n
}

// Error is a failure to parse one page.
type Error struct {
	URL string
	// Panic is true when the failure was a recovered panic.
	Panic bool
	Err   error
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("parse %s: %v", e.URL, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Parser parses pages with fixed Options. It is safe for concurrent use.
type Parser struct {
	o       Options
	norm    *urlutil.Normalizer
	maxOut  int       // <0: no cap
	types   typeSet   // the media types parsed
	scratch sync.Pool // *htmlState
	profs   sync.Pool // *profiler
}

// New returns a Parser with options o.
func New(o Options) *Parser {
	p := &Parser{o: o, norm: o.Normalizer, maxOut: o.MaxOutlinks}
	if p.norm == nil {
		p.norm = urlutil.NewNormalizer(urlutil.NormalizerOptions{})
	}
	if p.maxOut == 0 {
		p.maxOut = DefaultMaxOutlinks
	}
	if p.o.TextProfile == (TextProfile{}) {
		p.o.TextProfile = DefaultTextProfile()
	}
	p.types = allTypes
	if len(o.Types) > 0 {
		p.types = 0
		for _, t := range o.Types {
			p.types |= typeBit(t)
		}
	}
	p.scratch.New = func() any { return new(htmlState) }
	p.profs.New = func() any { return new(profiler) }
	return p
}

// Parse parses c with options o; see Parser.Parse.
func Parse(c segment.Content, o Options) (*Result, error) { return New(o).Parse(c) }

// Parse parses one page. It fails (with an *Error) for a page whose URL
// cannot be normalized, for content types it cannot parse (wrapping
// ErrUnsupportedType), and if parsing panics; it never panics itself.
func (p *Parser) Parse(c segment.Content) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res = nil
			err = &Error{URL: c.URL, Panic: true, Err: fmt.Errorf("panic: %v\n%s", v, stackHead(debug.Stack()))}
		}
	}()
	pageURL, err := p.norm.Normalize(c.URL)
	if err != nil {
		return nil, &Error{URL: c.URL, Err: fmt.Errorf("page URL: %w", err)}
	}
	ctype := c.ContentType
	if ctype == "" {
		ctype = header(c.Headers, "Content-Type")
	}
	media := mediaType(ctype, c.Body)
	if bit := typeBit(media); bit&p.types == 0 {
		err := fmt.Errorf("%w %q", ErrUnsupportedType, media)
		if bit != 0 {
			err = fmt.Errorf("%w: not among the types this parser is set to parse", err)
		}
		return nil, &Error{URL: c.URL, Err: err}
	}
	base := pageURL
	if c.BaseURL != "" && c.BaseURL != c.URL {
		if b, err := p.norm.Normalize(c.BaseURL); err == nil {
			base = b
		}
	}
	res = &Result{URL: c.URL, BaseURL: base, MediaType: media}
	res.Features.Depth = int32(urlutil.Depth(pageURL))
	res.Features.Bytes = int64(len(c.Body))
	// The charset parameter may be in the header when ContentType holds
	// the media type only.
	csType := ctype
	if headerCharset(csType) == "" {
		if h := header(c.Headers, "Content-Type"); h != "" {
			csType = h
		}
	}
	// typeBit has let through only the types below.
	switch media {
	case "text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml":
		p.parseHTML(res, c.Body, csType, pageURL)
	case "text/plain":
		p.parsePlain(res, c.Body, csType)
	case "application/pdf":
		if err := p.parsePDF(res, c.Body, pageURL); err != nil {
			return nil, &Error{URL: c.URL, Err: err}
		}
	}
	if xr := header(c.Headers, "X-Robots-Tag"); xr != "" {
		var d robots
		d.parseHeader(xr)
		res.NoIndex = res.NoIndex || d.noindex
		res.NoFollow = res.NoFollow || d.nofollow
		res.NoCache = res.NoCache || d.nocache
	}
	p.finish(res, c.Body)
	return res, nil
}

// finish computes the signatures and applies the robots directives.
func (p *Parser) finish(res *Result, body []byte) {
	res.MD5 = titledMD5(res.Title, res.Text, body)
	if !p.o.NoTextProfile {
		sig := res.Text
		if res.Title != "" {
			if sig == "" {
				sig = res.Title
			} else {
				sig = res.Title + " " + sig
			}
		}
		pr := p.profs.Get().(*profiler)
		res.TextProfile = pr.sum(p.o.TextProfile, sig, body)
		if cap(pr.arena) < 1<<20 && len(pr.idx.slots) <= 1<<16 {
			p.profs.Put(pr)
		}
	}
	if res.NoIndex {
		res.Text, res.Title = "", ""
	}
	if res.NoFollow {
		res.Outlinks = nil
		res.Links.Kept = 0
	}
	res.Features.Outlinks = int32(len(res.Outlinks))
}

// mediaType returns the lower-case media type of ctype, sniffing body when
// ctype is empty or application/octet-stream.
func mediaType(ctype string, body []byte) string {
	mt := ""
	if ctype != "" {
		if m, _, err := mime.ParseMediaType(ctype); err == nil {
			mt = m
		} else {
			mt = strings.ToLower(strings.TrimSpace(strings.SplitN(ctype, ";", 2)[0]))
		}
	}
	if mt == "" || mt == "application/octet-stream" || mt == "unknown/unknown" {
		if m, _, err := mime.ParseMediaType(http.DetectContentType(body)); err == nil {
			mt = m
		}
	}
	return mt
}

// header returns the value of the named header, matched case-insensitively.
func header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// stackHead keeps the first lines of a stack trace for an error message.
func stackHead(st []byte) string {
	lines := strings.SplitN(string(st), "\n", 16)
	if len(lines) > 15 {
		lines = lines[:15]
	}
	return strings.Join(lines, "\n")
}
