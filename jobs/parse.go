package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// JobParse is the parse engine job's name.
const JobParse = "parse"

// ParseOptions configures Parse.
type ParseOptions struct {
	// Segment is the segment directory (URI); it must hold a published
	// content and crawl_fetch.
	Segment string
	// MaxOutlinks caps the outlinks kept per page (Nutch's
	// db.max.outlinks.per.page); 0 means parser.DefaultMaxOutlinks (100),
	// -1 no cap.
	MaxOutlinks int
	// Filters are applied to every outlink after normalization (which
	// always happens). The zero value filters nothing.
	Filters URLFilterOptions
	// Scope keeps only outlinks within the page's host or registered
	// domain.
	Scope urlutil.Scope
	// Signature is the signature used for change detection, set as
	// ParseData.Signature and in crawl_parse: parser.SignatureMD5 ("md5",
	// the default when empty) or parser.SignatureTextProfile
	// ("text-profile"). ParseData.FuzzySignature always holds the text
	// profile; with text-profile, the MD5 signature is kept (hex) in
	// ParseData.Meta["signature.md5"].
	Signature string
	// IgnoreInternalLinks and IgnoreExternalLinks drop outlinks to the
	// page's own host and to other hosts (registered domains when Scope is
	// urlutil.ScopeDomain) (Nutch's db.ignore.internal.links and
	// db.ignore.external.links).
	IgnoreInternalLinks, IgnoreExternalLinks bool
	// ParseTruncated parses pages the fetcher cut at its content limit.
	// By default they are skipped, as Nutch's parser.skip.truncated does:
	// a cut page gives a partial text and link set.
	ParseTruncated bool
	// Reducers is the number of reduce tasks (parse tasks and part files
	// per output); 0 means the runner's parallelism.
	Reducers int
}

// ParseResult reports a Parse run.
type ParseResult struct {
	// Segment is the parsed segment.
	Segment string
	// Parsed counts pages parsed; Failed pages that failed to parse
	// (unsupported types, errors, recovered panics: recorded in parse_data
	// with Success false); Skipped contents not parsed (no successful
	// fetch, truncated).
	Parsed, Failed, Skipped int64
	// Outlinks is the number of outlinks kept (linked updates written).
	Outlinks int64
	// NoIndex and NoFollow count pages with those robots directives.
	NoIndex, NoFollow int64
	// Counters are the engine's and the job's counters (group "parse").
	Counters *mapreduce.Counters
	// Duration is the wall time of the run.
	Duration time.Duration
}

// ErrSegmentParsed is returned by Parse for a segment whose parse outputs
// are all published already.
var ErrSegmentParsed = errors.New("segment already parsed")

// Counters of the parse job (group "parse").
const (
	ctrParsed          = "parsed"
	ctrParseFailed     = "failed"
	ctrSkipped         = "skipped"
	ctrSkipTruncated   = "skipped_truncated"
	ctrSkipNoFetch     = "skipped_no_fetch_row"
	ctrSkipStatus      = "skipped_status_" // + fetch status name
	ctrNoContent       = "fetch_success_without_content"
	ctrDupContent      = "duplicate_content"
	ctrNoIndex         = "noindex"
	ctrNoFollow        = "nofollow"
	ctrOutlinks        = "outlinks"
	ctrLinksFound      = "links_found"
	ctrLinksDropped    = "links_dropped_" // + reason
	ctrRefresh         = "meta_refresh"
	ctrRefreshLinks    = "refresh_links_nofollow"
	ctrCanonical       = "canonical"
	ctrParsedBytes     = "bytes_parsed"
	ctrCharsetPrefix   = "charset_" // + encoding name
	ctrFailedPrefix    = "failed_"  // + unsupported_type, panic, error
	ctrMediaTypePrefix = "type_"    // + media type of parsed pages
)

// Conf keys of the parse job.
const (
	confParseSegment     = "parse.segment"
	confParseMaxOutlinks = "parse.maxOutlinks"
	confParseScope       = "parse.scope"
	confParseSignature   = "parse.signature"
	confParseIgnoreInt   = "parse.ignoreInternalLinks"
	confParseIgnoreExt   = "parse.ignoreExternalLinks"
	confParseTruncated   = "parse.parseTruncated"
)

// Parse parses the fetched pages of a segment (Nutch's ParseSegment with
// ParseOutputFormat) and writes its parse_data (segment.ParseData),
// parse_text (segment.ParseText) and crawl_parse (segment.ParseUpdate).
//
// One engine job reads the segment's content and crawl_fetch, keyed by
// URL, and parses in the reduce tasks, so parsing runs on as many cores as
// there are reducers whatever the number of content parts. A content row
// is parsed when its crawl_fetch row says fetch_success (Nutch's
// ParseSegment skips content whose fetch status is not success; it reads
// that status, and the page's score, from the content metadata, where
// Nutch's fetcher copies them; trawl's Content has no such metadata, so
// the job joins the two instead). The crawl_fetch row's Datum.Score is the
// page's CrawlDB score at generate time, which OPIC distributes.
//
// For each parsed page: a parse_data row (see package parser for what is
// extracted, and how it differs from Nutch's parse-html), a parse_text row,
// and in crawl_parse one StatusSignature update (the configured signature,
// the page features, the fetch time) and one StatusLinked update per kept
// outlink with Score = OPICLinkCash(page score, outlinks kept), FromURL and
// Anchor. A meta refresh target is the first outlink; when nofollow keeps
// it out of the outlinks, it still gets a StatusLinked update without cash
// (Nutch treats a refresh as a redirect, whatever nofollow says).
//
// A page that fails to parse (a type other than HTML or plain text, a
// recovered panic) gets a parse_data row with Success false and the reason,
// and, as in Nutch (whose signature falls back to the MD5 of the raw
// content), a StatusSignature update with the MD5 of the body, so that
// updatedb still detects changes of PDFs and the like. Truncated content is
// skipped unless ParseTruncated (a parse_data row says so; no update).
// Failures never stop the job.
//
// The three outputs are published one after the other; if a crash leaves
// some but not all of them, Parse removes them and parses again. If all
// three exist it returns ErrSegmentParsed.
func Parse(ctx context.Context, env Env, o ParseOptions) (res *ParseResult, err error) {
	start := time.Now()
	if o.Segment == "" {
		return nil, errors.New("parse: no segment given")
	}
	seg := strings.TrimRight(o.Segment, "/")
	sig, err := parser.ParseSignatureKind(o.Signature)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	log := env.log().With("job", JobParse, "segment", seg)
	spec, err := o.Filters.spec(env.resolver())
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	fsys, segPath, err := env.resolver().Resolve(seg)
	if err != nil {
		return nil, fmt.Errorf("parse: segment %s: %w", seg, err)
	}
	sl, st, err := env.takeSegment(fsys, segPath, JobParse, log)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	defer env.unlock(sl, &err)
	switch st.State {
	case segment.StateMerged:
		return nil, fmt.Errorf("parse: segment %s is already merged into the CrawlDB: its parse would never be merged", seg)
	case segment.StateIncomplete, segment.StateGenerated, segment.StateFetched:
		for _, in := range segment.FetchOutputs() {
			if !st.Has(in) {
				return nil, fmt.Errorf("parse: segment %s has no published %s (was it fetched?)", seg, in)
			}
		}
	case segment.StateParsed:
		return nil, fmt.Errorf("parse: segment %s: %w (it holds %s)", seg, ErrSegmentParsed, strings.Join(segment.ParseOutputs(), ", "))
	}
	// The segment is fetched and not parsed: what is partial is what an
	// interrupted parse left.
	if len(st.Partial) > 0 {
		log.Warn("segment partly parsed (a run died while publishing): removing its parse outputs and parsing again", "outputs", st.Partial)
		if err := segment.RemoveOutputs(fsys, segPath, st.Partial, log); err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
	}

	reducers := o.Reducers
	if reducers <= 0 {
		reducers = env.parallelism()
	}
	c := newConf()
	c.set(confParseSegment, seg)
	c.setInt(confNumReduce, int64(min(reducers, mapreduce.MaxReduce)))
	c.setInt(confParseMaxOutlinks, int64(o.MaxOutlinks))
	c.set(confParseScope, o.Scope.String())
	c.set(confParseSignature, sig)
	c.setBool(confParseIgnoreInt, o.IgnoreInternalLinks)
	c.setBool(confParseIgnoreExt, o.IgnoreExternalLinks)
	c.setBool(confParseTruncated, o.ParseTruncated)
	c.setJSON(confFilters, spec)
	if c.err != nil {
		return nil, fmt.Errorf("parse: %w", c.err)
	}
	job, err := newParseJob(c.m)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	jr, err := env.execute(ctx, job.Name, job.Conf, job)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	get := func(name string) int64 { return jr.Counters.Get(JobParse, name) }
	res = &ParseResult{
		Segment: seg,
		Parsed:  get(ctrParsed), Failed: get(ctrParseFailed), Skipped: get(ctrSkipped),
		Outlinks: get(ctrOutlinks), NoIndex: get(ctrNoIndex), NoFollow: get(ctrNoFollow),
		Counters: jr.Counters, Duration: time.Since(start),
	}
	log.Info("parse done", "parsed", res.Parsed, "failed", res.Failed, "skipped", res.Skipped,
		"outlinks", res.Outlinks, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// parseValue is the parse job's shuffle value: a page's crawl_fetch
// outcome or its content. Fetch values (kind 0) sort before content.
type parseValue struct {
	Kind    uint8
	Fetch   parseFetch
	Content *segment.Content
}

const (
	parseKindFetch   uint8 = 0
	parseKindContent uint8 = 1
)

// parseFetch is what parse needs of a crawl_fetch row.
type parseFetch struct {
	Status    crawldb.Status
	Score     float32
	FetchTime time.Time
}

// parseOut is one output record of the parse reduce, routed to one of the
// three outputs.
type parseOut struct {
	Data   *segment.ParseData
	Text   *segment.ParseText
	Update *segment.ParseUpdate
}

// newParseJob builds the parse engine job from its Conf.
func newParseJob(m map[string]string) (*mapreduce.Job[parseValue, parseOut], error) {
	c := &conf{m: m}
	seg := c.str(confParseSegment)
	parts := int(c.integer(confNumReduce))
	maxOut := int(c.integer(confParseMaxOutlinks))
	scope, err := urlutil.ParseScope(c.str(confParseScope))
	if err != nil {
		c.fail(confParseScope, err)
	}
	sig, err := parser.ParseSignatureKind(c.str(confParseSignature))
	if err != nil {
		c.fail(confParseSignature, err)
	}
	ignoreInt := c.boolean(confParseIgnoreInt)
	ignoreExt := c.boolean(confParseIgnoreExt)
	parseTruncated := c.boolean(confParseTruncated)
	filters := c.filters()
	if c.err != nil {
		return nil, c.err
	}
	if seg == "" {
		return nil, errors.New("parse job: conf lacks the segment")
	}
	po := parser.Options{MaxOutlinks: maxOut, Scope: scope, IgnoreInternalLinks: ignoreInt, IgnoreExternalLinks: ignoreExt}
	if filters != nil {
		po.Filter = filters
	}
	pr := &pageParser{p: parser.New(po), signature: sig, parseTruncated: parseTruncated}

	content := storage.Join(seg, segment.DirContent)
	fetch := storage.Join(seg, segment.DirFetch)
	return &mapreduce.Job[parseValue, parseOut]{
		Name: JobParse,
		Conf: m,
		Inputs: []mapreduce.Input[parseValue]{
			mapreduce.From(content, func(t *mapreduce.Task, ct segment.Content, emit mapreduce.Emit[parseValue]) error {
				if ct.URL == "" {
					return fmt.Errorf("%s: a content row without URL", content)
				}
				emit(ct.URL, parseValue{Kind: parseKindContent, Content: &ct})
				return nil
			}, mapreduce.RequireSuccess()),
			mapreduce.From(fetch, func(t *mapreduce.Task, f segment.Fetch, emit mapreduce.Emit[parseValue]) error {
				if f.URL == "" {
					return fmt.Errorf("%s: a crawl_fetch row without URL", fetch)
				}
				emit(f.URL, parseValue{Kind: parseKindFetch, Fetch: parseFetch{Status: f.Status, Score: f.Datum.Score, FetchTime: f.FetchTime}})
				return nil
			}, mapreduce.RequireSuccess()),
		},
		Reduce: func(t *mapreduce.Task, url string, values iter.Seq[parseValue], out func(parseOut)) error {
			return pr.reduce(t, url, values, out)
		},
		NumReduce: parts,
		Outputs: []mapreduce.Output[parseOut]{
			mapreduce.WriteRouted(storage.Join(seg, segment.DirParseData), func(o parseOut) (segment.ParseData, bool) {
				if o.Data == nil {
					return segment.ParseData{}, false
				}
				return *o.Data, true
			}),
			mapreduce.WriteRouted(storage.Join(seg, segment.DirParseText), func(o parseOut) (segment.ParseText, bool) {
				if o.Text == nil {
					return segment.ParseText{}, false
				}
				return *o.Text, true
			}),
			mapreduce.WriteRouted(storage.Join(seg, segment.DirCrawlParse), func(o parseOut) (segment.ParseUpdate, bool) {
				if o.Update == nil {
					return segment.ParseUpdate{}, false
				}
				return *o.Update, true
			}),
		},
	}, nil
}

// pageParser is the parse reduce: it joins a page's fetch outcome and
// content, parses, and writes the three outputs.
type pageParser struct {
	p              *parser.Parser
	signature      string
	parseTruncated bool
}

// maxMessage bounds ParseData.Message.
const maxMessage = 1024

func (pp *pageParser) reduce(t *mapreduce.Task, url string, values iter.Seq[parseValue], out func(parseOut)) error {
	var fetch *parseFetch
	var content *segment.Content
	for v := range values {
		switch v.Kind {
		case parseKindFetch:
			if fetch == nil {
				f := v.Fetch
				fetch = &f
			}
		case parseKindContent:
			if content == nil {
				content = v.Content
			} else {
				t.Count(ctrDupContent, 1)
			}
		}
	}
	switch {
	case content == nil:
		if fetch != nil && fetch.Status == crawldb.StatusFetchSuccess {
			t.Count(ctrNoContent, 1)
		}
		return nil
	case fetch == nil:
		t.Count(ctrSkipped, 1)
		t.Count(ctrSkipNoFetch, 1)
		return nil
	case fetch.Status != crawldb.StatusFetchSuccess:
		t.Count(ctrSkipped, 1)
		t.Count(ctrSkipStatus+fetch.Status.String(), 1)
		return nil
	}
	fetchTime := fetch.FetchTime
	if fetchTime.IsZero() {
		fetchTime = content.FetchTime
	}
	depth := int32(urlutil.Depth(url))
	if content.Truncated && !pp.parseTruncated {
		t.Count(ctrSkipped, 1)
		t.Count(ctrSkipTruncated, 1)
		out(parseOut{Data: &segment.ParseData{URL: url,
			Message:  fmt.Sprintf("not parsed: content truncated at %d bytes (parse truncated content to parse it)", len(content.Body)),
			Features: crawldb.Features{Depth: depth, Bytes: int64(len(content.Body))}}})
		return nil
	}

	res, err := pp.p.Parse(*content)
	if err != nil {
		var pe *parser.Error
		kind := "error"
		switch {
		case errors.Is(err, parser.ErrUnsupportedType):
			kind = "unsupported_type"
		case errors.As(err, &pe) && pe.Panic:
			kind = "panic"
			t.Log.Error("parser panicked; page recorded as a parse failure", "url", url, "err", err)
		}
		t.Count(ctrParseFailed, 1)
		t.Count(ctrFailedPrefix+kind, 1)
		// Nutch's fallback signature: the MD5 of the raw content.
		sum := parser.MD5Signature("", content.Body)
		feat := crawldb.Features{Depth: depth, Bytes: int64(len(content.Body))}
		msg := err.Error()
		if len(msg) > maxMessage {
			msg = strings.ToValidUTF8(msg[:maxMessage], "") + "..."
		}
		out(parseOut{Data: &segment.ParseData{URL: url, Message: msg, Signature: sum, FuzzySignature: sum, Features: feat}})
		out(parseOut{Update: &segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature, Signature: sum, Features: feat, FetchTime: fetchTime}})
		return nil
	}

	t.Count(ctrParsed, 1)
	t.Count(ctrParsedBytes, int64(len(content.Body)))
	t.Count(ctrMediaTypePrefix+res.MediaType, 1)
	t.Count(ctrCharsetPrefix+res.Charset, 1)
	t.Count(ctrLinksFound, int64(res.Links.Found))
	for reason, n := range res.Links.Dropped {
		t.Count(ctrLinksDropped+reason, int64(n))
	}
	if res.NoIndex {
		t.Count(ctrNoIndex, 1)
	}
	if res.NoFollow {
		t.Count(ctrNoFollow, 1)
	}
	if res.RefreshURL != "" {
		t.Count(ctrRefresh, 1)
	}
	if res.Canonical != "" {
		t.Count(ctrCanonical, 1)
	}
	sig := res.Signature(pp.signature)
	meta := res.Meta
	if pp.signature != parser.SignatureMD5 {
		meta["signature.md5"] = hex.EncodeToString(res.MD5)
	}
	out(parseOut{Data: &segment.ParseData{
		URL: url, Success: true, Title: res.Title, Outlinks: res.Outlinks,
		Signature: sig, FuzzySignature: res.TextProfile, Features: res.Features,
		NoIndex: res.NoIndex, NoFollow: res.NoFollow, Canonical: res.Canonical,
		RefreshURL: res.RefreshURL, Meta: meta,
	}})
	out(parseOut{Text: &segment.ParseText{URL: url, Text: res.Text}})
	out(parseOut{Update: &segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature,
		Signature: sig, Features: res.Features, FetchTime: fetchTime}})
	cash := OPICLinkCash(fetch.Score, len(res.Outlinks))
	for _, l := range res.Outlinks {
		out(parseOut{Update: &segment.ParseUpdate{URL: l.URL, Status: crawldb.StatusLinked,
			FromURL: url, Anchor: l.Anchor, Score: cash, FetchTime: fetchTime}})
	}
	t.Count(ctrOutlinks, int64(len(res.Outlinks)))
	if res.NoFollow && res.Redirect != "" {
		t.Count(ctrRefreshLinks, 1)
		out(parseOut{Update: &segment.ParseUpdate{URL: res.Redirect, Status: crawldb.StatusLinked,
			FromURL: url, FetchTime: fetchTime}})
	}
	return nil
}
