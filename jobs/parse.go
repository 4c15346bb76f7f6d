package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
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

// ParseOptions configures Parse. Only Segment is required.
type ParseOptions struct {
	// Segment is the segment directory (URI); it must hold a published
	// content and crawl_fetch.
	Segment string
	// MaxOutlinks caps the outlinks kept per page (Nutch's
	// db.max.outlinks.per.page); 0 means parser.DefaultMaxOutlinks (100).
	// It must not be negative: AllOutlinks lifts the cap.
	MaxOutlinks int
	// AllOutlinks keeps every outlink of a page, with no cap (MaxOutlinks
	// must then be 0); false caps them at MaxOutlinks.
	AllOutlinks bool
	// Filters are applied to every outlink after normalization (which
	// always happens). The zero value filters nothing.
	Filters URLFilterOptions
	// Scope keeps only outlinks within the page's host or registered
	// domain; the zero value, urlutil.ScopeAny, keeps them all.
	Scope urlutil.Scope
	// Signature is the signature used for change detection, set as
	// ParseData.Signature and in crawl_parse: parser.SignatureMD5 ("md5",
	// the default when empty) or parser.SignatureTextProfile
	// ("text-profile"). With text-profile, ParseData.FuzzySignature holds
	// it too and the MD5 signature is kept (hex) in
	// ParseData.Meta["signature.md5"]; with md5 the text profile is not
	// computed (nothing would read it) and FuzzySignature is empty.
	Signature string
	// IgnoreInternalLinks and IgnoreExternalLinks drop outlinks to the
	// page's own host and to other hosts (registered domains when Scope is
	// urlutil.ScopeDomain) (Nutch's db.ignore.internal.links and
	// db.ignore.external.links); false keeps them.
	IgnoreInternalLinks, IgnoreExternalLinks bool
	// EmbeddedLinks also takes the resources pages embed (images,
	// scripts, style sheets, media) as outlinks, as wget's
	// --page-requisites does (parser.Options.EmbeddedLinks); false takes
	// navigational links only.
	EmbeddedLinks bool
	// Types are the media types parsed (parser.Options.Types), each one
	// of parser.Types; empty means all of them. A stored page of a type
	// left out fails to parse as a page of an unknown type does: it keeps
	// its content and gets the MD5 of its body as its signature, with no
	// text or outlinks (Nutch without that type's parse plugin).
	Types []string
	// ParseTruncated parses pages the fetcher cut at its content limit.
	// By default (false) they are skipped, as Nutch's
	// parser.skip.truncated does: a cut page gives a partial text and
	// link set.
	ParseTruncated bool
	// Reducers is the number of reduce tasks (parse tasks and part files
	// per output); 0 means the runner's parallelism. It must not be
	// negative.
	Reducers int
	// Focus, with a topic, rates pages and links and follows only the
	// relevant links (see FocusOptions); the zero value follows every
	// link.
	Focus FocusOptions
}

// Validate checks o as Parse does before it touches the segment: a
// segment given, MaxOutlinks and Reducers not negative (and MaxOutlinks 0
// with AllOutlinks), a known Scope and Signature. (The URL filters' rule
// files are checked when Parse reads them.)
func (o ParseOptions) Validate() error {
	switch {
	case o.Segment == "":
		return errors.New("no segment given")
	case o.MaxOutlinks < 0:
		return fmt.Errorf("the outlink cap %d is negative (to keep every outlink, set AllOutlinks)", o.MaxOutlinks)
	case o.AllOutlinks && o.MaxOutlinks != 0:
		return fmt.Errorf("both an outlink cap (%d) and no cap (AllOutlinks) given", o.MaxOutlinks)
	case o.Reducers < 0:
		return fmt.Errorf("the number of reducers %d is negative", o.Reducers)
	case o.Scope != urlutil.ScopeAny && o.Scope != urlutil.ScopeHost && o.Scope != urlutil.ScopeDomain:
		return fmt.Errorf("unknown outlink scope %d", int(o.Scope))
	}
	if _, err := parser.ParseSignatureKind(o.Signature); err != nil {
		return err
	}
	if err := parser.CheckTypes(o.Types); err != nil {
		return err
	}
	return o.Focus.Validate()
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
	// Outlinks is the number of outlinks kept (links written to crawl_parse).
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

// Parse parses the fetched pages of a segment (Nutch's ParseSegment with
// ParseOutputFormat) and writes its parse_data (segment.ParseData),
// parse_text (segment.ParseText) and crawl_parse (segment.ParseUpdate).
//
// One engine job joins the segment's content and crawl_fetch by URL and
// parses. When the two outputs' part files pair up by name, as every
// fetch writes them, the join is map-side: a map task per content part
// reads that part's crawl_fetch into memory and parses the pages as it
// reads them, on GOMAXPROCS goroutines, without shuffling the bodies (see
// mapSideJob). Otherwise both are shuffled by URL and the reduce tasks
// parse, on as many cores as there are reducers. A content row
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
// the page features, the fetch time) whose Links are the kept outlinks
// (target, anchor) and whose Score is the cash each passes on,
// OPICLinkCash(page score, outlinks kept): where Nutch writes a LINKED
// datum per outlink, the links ride in the page's row. A meta refresh
// target is the first outlink; when nofollow keeps it out of the outlinks,
// it still gets a StatusLinked update without cash (Nutch treats a refresh
// as a redirect, whatever nofollow says).
//
// A page that fails to parse (a type the parser does not read, or one
// ParseOptions.Types leaves out; a malformed PDF; a recovered panic) gets
// a parse_data row with Success false and the reason, and, as in Nutch
// (whose signature falls back to the MD5 of the raw content), a
// StatusSignature update with the MD5 of the body, so that updatedb still
// detects changes of the pages it does not parse. Truncated content is
// skipped unless ParseTruncated (a parse_data row says so; no update).
// Failures never stop the job.
//
// The three outputs are published one after the other; if a crash leaves
// some but not all of them, Parse removes them and parses again. If all
// three exist it returns ErrSegmentParsed.
func Parse(ctx context.Context, env Env, o ParseOptions) (res *ParseResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	seg := strings.TrimRight(o.Segment, "/")
	log := env.log().With("job", JobParse, "segment", seg)
	filters, err := o.Filters.spec(env.resolver())
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
	if err := readyToParse(seg, st); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := removePartialParse(fsys, segPath, st, log); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	job := planParse(env, seg, o, filters)
	if job.MapSide, err = mapSideParts(fsys, segPath); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	jr, err := env.Run(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	res = parseResult(seg, jr.Counters, start)
	log.Info("parse done", "parsed", res.Parsed, "failed", res.Failed, "skipped", res.Skipped,
		"outlinks", res.Outlinks, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// readyToParse checks that the segment seg, in state st, is fetched and
// neither parsed nor merged.
func readyToParse(seg string, st segment.Status) error {
	switch st.State {
	case segment.StateMerged:
		return fmt.Errorf("segment %s is already merged into the CrawlDB: its parse would never be merged", seg)
	case segment.StateIncomplete, segment.StateGenerated, segment.StateFetched:
		for _, in := range segment.FetchOutputs() {
			if !st.Has(in) {
				return fmt.Errorf("segment %s has no published %s (was it fetched?)", seg, in)
			}
		}
	case segment.StateParsed:
		return fmt.Errorf("segment %s: %w (it holds %s)", seg, ErrSegmentParsed, strings.Join(segment.ParseOutputs(), ", "))
	}
	return nil
}

// removePartialParse removes the parse outputs an interrupted parse
// published in part. The segment (at segPath, in state st) is fetched and
// not parsed: what is partial is what such a parse left.
func removePartialParse(fsys storage.FS, segPath string, st segment.Status, log *slog.Logger) error {
	if len(st.Partial) == 0 {
		return nil
	}
	log.Warn("segment partly parsed (a run died while publishing): removing its parse outputs and parsing again", "outputs", st.Partial)
	return segment.RemoveOutputs(fsys, segPath, st.Partial, log)
}

// planParse describes the parse job of the segment seg (o validated).
func planParse(env Env, seg string, o ParseOptions, filters filterSpec) parseJob {
	reducers := o.Reducers
	if reducers == 0 {
		reducers = env.parallelism()
	}
	sig, _ := parser.ParseSignatureKind(o.Signature) // checked by Validate
	return parseJob{
		Segment:             seg,
		NumReduce:           min(reducers, mapreduce.MaxReduce),
		MaxOutlinks:         o.MaxOutlinks,
		AllOutlinks:         o.AllOutlinks,
		Scope:               o.Scope,
		Signature:           sig,
		IgnoreInternalLinks: o.IgnoreInternalLinks,
		IgnoreExternalLinks: o.IgnoreExternalLinks,
		EmbeddedLinks:       o.EmbeddedLinks,
		ParseTruncated:      o.ParseTruncated,
		Filters:             filters,
		Focus:               o.Focus,
		Types:               o.Types,
	}
}

// parseResult reports a parse of seg from its counters.
func parseResult(seg string, ctrs *mapreduce.Counters, start time.Time) *ParseResult {
	get := func(name string) int64 { return ctrs.Get(JobParse, name) }
	return &ParseResult{
		Segment: seg,
		Parsed:  get(ctrParsed), Failed: get(ctrParseFailed), Skipped: get(ctrSkipped),
		Outlinks: get(ctrOutlinks), NoIndex: get(ctrNoIndex), NoFollow: get(ctrNoFollow),
		Counters: ctrs, Duration: time.Since(start),
	}
}

// parseJob is the parse engine job (see Parse): it joins a segment's
// content and crawl_fetch by URL and parses in the reduce tasks.
type parseJob struct {
	// Segment is the segment directory (URI, no trailing '/').
	Segment string
	// NumReduce is the number of reduce tasks; 0 means the engine's
	// default.
	NumReduce int
	// MaxOutlinks, AllOutlinks, Scope, IgnoreInternalLinks,
	// IgnoreExternalLinks and ParseTruncated are ParseOptions'.
	MaxOutlinks                              int
	AllOutlinks                              bool
	Scope                                    urlutil.Scope
	IgnoreInternalLinks, IgnoreExternalLinks bool
	ParseTruncated                           bool
	EmbeddedLinks                            bool `json:",omitempty"`
	// Types is ParseOptions.Types.
	Types []string `json:",omitempty"`
	// Signature is ParseOptions.Signature resolved:
	// parser.SignatureMD5 or parser.SignatureTextProfile.
	Signature string
	// Filters are the outlink filters, their rule files' text included.
	Filters filterSpec
	// Focus is ParseOptions.Focus, the topic included.
	Focus FocusOptions `json:",omitempty"`
	// MapSide parses in map tasks, each joining a content part with the
	// crawl_fetch part of the same name (see mapSideParse), instead of
	// shuffling content and crawl_fetch to reduce tasks by URL.
	MapSide bool `json:",omitempty"`
}

func (parseJob) JobName() string { return JobParse }

// options are the ParseOptions the job's fields come from, but for the
// filters, to be checked as Parse checks them.
func (s parseJob) options() ParseOptions {
	return ParseOptions{Segment: s.Segment, MaxOutlinks: s.MaxOutlinks, AllOutlinks: s.AllOutlinks,
		Scope: s.Scope, Signature: s.Signature, IgnoreInternalLinks: s.IgnoreInternalLinks,
		IgnoreExternalLinks: s.IgnoreExternalLinks, ParseTruncated: s.ParseTruncated, Reducers: s.NumReduce, Focus: s.Focus,
		EmbeddedLinks: s.EmbeddedLinks, Types: s.Types}
}

// Job builds the job (the driver and the Hadoop task entry, through
// Registry, both build it this way).
func (s parseJob) Job() (mapreduce.Runnable, error) {
	if err := s.options().Validate(); err != nil {
		return nil, fmt.Errorf("parse job: %w", err)
	}
	pr, err := s.pageParser()
	if err != nil {
		return nil, fmt.Errorf("parse job: %w", err)
	}
	if s.MapSide {
		return s.mapSideJob(pr), nil
	}
	return &mapreduce.Job[parseValue, parseOut]{
		Name:      JobParse,
		Inputs:    parseJobInputs(s.Segment),
		Reduce:    pr.reduce,
		NumReduce: s.NumReduce,
		Outputs:   parseJobOutputs(s.Segment),
	}, nil
}

// pageParser builds the parse reduce.
func (s parseJob) pageParser() (*pageParser, error) {
	po, err := s.parserOptions()
	if err != nil {
		return nil, err
	}
	return &pageParser{p: parser.New(po), signature: s.Signature, parseTruncated: s.ParseTruncated, focus: s.Focus}, nil
}

// parserOptions are the options of the job's parser.
func (s parseJob) parserOptions() (parser.Options, error) {
	filters, err := s.Filters.filters()
	if err != nil {
		return parser.Options{}, err
	}
	po := parser.Options{MaxOutlinks: s.MaxOutlinks, Scope: s.Scope,
		IgnoreInternalLinks: s.IgnoreInternalLinks, IgnoreExternalLinks: s.IgnoreExternalLinks,
		EmbeddedLinks: s.EmbeddedLinks, NoTextProfile: s.Signature != parser.SignatureTextProfile,
		Types: s.Types}
	if s.AllOutlinks {
		po.MaxOutlinks = -1 // parser.Options' "no cap"
	}
	if filters != nil {
		po.Filter = filters
	}
	return po, nil
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
	// Hops is the page's off-topic hops from its fetch-list row; Seed
	// says no crawled page links to it (an injected seed).
	Hops int32
	Seed bool
}

// parseFetchOf is what parse needs of the crawl_fetch row f.
func parseFetchOf(f *segment.Fetch) parseFetch {
	return parseFetch{Status: f.Status, Score: f.Datum.Score, FetchTime: f.FetchTime,
		Hops: f.Datum.OffTopicHops, Seed: f.Datum.Features.Inlinks == 0}
}

// parseOut is one output record of the parse reduce, routed to one of the
// three outputs.
type parseOut struct {
	Data   *segment.ParseData
	Text   *segment.ParseText
	Update *segment.ParseUpdate
}

// parseJobInputs are the parse job's inputs: the segment's content and
// crawl_fetch, keyed by URL.
func parseJobInputs(seg string) []mapreduce.Input[parseValue] {
	content := storage.Join(seg, segment.DirContent)
	fetch := storage.Join(seg, segment.DirFetch)
	return []mapreduce.Input[parseValue]{
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
			emit(f.URL, parseValue{Kind: parseKindFetch, Fetch: parseFetchOf(&f)})
			return nil
		}, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()),
	}
}

// parseJobOutputs are the parse job's outputs in the segment: parse_data,
// parse_text and crawl_parse.
func parseJobOutputs(seg string) []mapreduce.Output[parseOut] {
	return parseRouted(seg, func(o parseOut) parseOut { return o })
}

// parseRouted are the outputs parse_data, parse_text and crawl_parse of
// the segment seg for a job whose records R carry parse rows (get returns
// a record's): the parse job's, and a fetch's that parses.
func parseRouted[R any](seg string, get func(R) parseOut) []mapreduce.Output[R] {
	return []mapreduce.Output[R]{
		mapreduce.WriteRouted(storage.Join(seg, segment.DirParseData), func(r R) (segment.ParseData, bool) {
			if o := get(r); o.Data != nil {
				return *o.Data, true
			}
			return segment.ParseData{}, false
		}),
		mapreduce.WriteRouted(storage.Join(seg, segment.DirParseText), func(r R) (segment.ParseText, bool) {
			if o := get(r); o.Text != nil {
				return *o.Text, true
			}
			return segment.ParseText{}, false
		}),
		mapreduce.WriteRouted(storage.Join(seg, segment.DirCrawlParse), func(r R) (segment.ParseUpdate, bool) {
			if o := get(r); o.Update != nil {
				return *o.Update, true
			}
			return segment.ParseUpdate{}, false
		}),
	}
}

// pageParser is the parse reduce: it joins a page's fetch outcome and
// content, parses, and writes the three outputs.
type pageParser struct {
	p              *parser.Parser
	signature      string
	parseTruncated bool
	focus          FocusOptions
}

// maxMessage bounds ParseData.Message.
const maxMessage = 1024

func (pp *pageParser) reduce(t *mapreduce.Task, url string, values iter.Seq[parseValue], out func(parseOut)) error {
	fetch, content := joinPage(t, values)
	pp.page(t, url, fetch, content, out)
	return nil
}

// page parses one page, given its crawl_fetch outcome and content (either
// may be nil), and writes its outputs to out; it counts in t's group.
// The parse job's reduce and a fetch that parses (FetchOptions.Parse) both
// parse through it.
func (pp *pageParser) page(t *mapreduce.Task, url string, fetch *parseFetch, content *segment.Content, out func(parseOut)) {
	if !parsable(t, fetch, content) {
		return
	}
	fetchTime := fetch.FetchTime
	if fetchTime.IsZero() {
		fetchTime = content.FetchTime
	}
	if content.Truncated && !pp.parseTruncated {
		skipTruncated(t, url, content, out)
		return
	}
	res, err := pp.p.Parse(*content)
	if err != nil {
		parseFailed(t, url, content, fetchTime, err, pp.signature == parser.SignatureTextProfile, out)
		return
	}
	countParsed(t, content, res)
	pp.write(t, url, *fetch, fetchTime, res, out)
}

// joinPage returns a page's crawl_fetch outcome and content (the first of
// each; further contents are counted as duplicates), either of them nil
// when missing.
func joinPage(t *mapreduce.Task, values iter.Seq[parseValue]) (fetch *parseFetch, content *segment.Content) {
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
	return fetch, content
}

// parsable reports whether a page has content to parse, fetched with
// success, counting why not.
func parsable(t *mapreduce.Task, fetch *parseFetch, content *segment.Content) bool {
	switch {
	case content == nil:
		if fetch != nil && fetch.Status == crawldb.StatusFetchSuccess {
			t.Count(ctrNoContent, 1)
		}
		return false
	case fetch == nil:
		t.Count(ctrSkipped, 1)
		t.Count(ctrSkipNoFetch, 1)
		return false
	case fetch.Status != crawldb.StatusFetchSuccess:
		t.Count(ctrSkipped, 1)
		t.Count(ctrSkipStatus+fetch.Status.String(), 1)
		return false
	}
	return true
}

// rawFeatures are the features of a page known without parsing it.
func rawFeatures(url string, content *segment.Content) crawldb.Features {
	return crawldb.Features{Depth: int32(urlutil.Depth(url)), Bytes: int64(len(content.Body))}
}

// skipTruncated records a truncated page as not parsed.
func skipTruncated(t *mapreduce.Task, url string, content *segment.Content, out func(parseOut)) {
	t.Count(ctrSkipped, 1)
	t.Count(ctrSkipTruncated, 1)
	out(parseOut{Data: &segment.ParseData{URL: url,
		Message:  fmt.Sprintf("not parsed: content truncated at %d bytes (parse truncated content to parse it)", len(content.Body)),
		Features: rawFeatures(url, content)}})
}

// parseFailed records a page that failed to parse: a parse_data row with
// the reason and, as Nutch's signature falls back to the MD5 of the raw
// content, a signature update with that MD5 (also the row's
// FuzzySignature when fuzzy, the text-profile signature being in use).
func parseFailed(t *mapreduce.Task, url string, content *segment.Content, fetchTime time.Time, err error, fuzzy bool, out func(parseOut)) {
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
	sum := parser.MD5Signature("", content.Body)
	feat := rawFeatures(url, content)
	msg := err.Error()
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "..."
	}
	data := &segment.ParseData{URL: url, Message: msg, Signature: sum, Features: feat}
	if fuzzy {
		data.FuzzySignature = sum
	}
	out(parseOut{Data: data})
	out(parseOut{Update: &segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature, Signature: sum, Features: feat, FetchTime: fetchTime}})
}

// countParsed counts a parsed page.
func countParsed(t *mapreduce.Task, content *segment.Content, res *parser.Result) {
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
}

// focusLinks returns the links of a parsed page's crawl_parse row: every
// outlink, or in a focused crawl the links followed, with their RW (the
// hops their targets inherit are the page's); it sets the page's own
// rating in sig.
func (pp *pageParser) focusLinks(t *mapreduce.Task, sig *segment.ParseUpdate, fetch parseFetch, res *parser.Result) []segment.ParseLink {
	if pp.focus.Topic == nil {
		if len(res.Outlinks) == 0 {
			return nil
		}
		links := make([]segment.ParseLink, len(res.Outlinks))
		for i, l := range res.Outlinks {
			links[i] = segment.ParseLink{URL: l.URL, Anchor: l.Anchor}
		}
		return links
	}
	f := pp.focus.RatePage(res.Title, res.Text, fetch.Hops, fetch.Seed)
	sig.Relevance, sig.OffTopic, sig.OffTopicHops = f.Relevance, f.OffTopic, f.Hops
	if f.OffTopic {
		t.Count(ctrOffTopic, 1)
	} else {
		t.Count(ctrOnTopic, 1)
	}
	if !f.Follow {
		t.Count(ctrNotFollowed, int64(len(res.Outlinks)))
		return nil
	}
	var links []segment.ParseLink
	for _, l := range res.Outlinks {
		rw, ok := pp.focus.FollowLink(l.Anchor, l.URL, res.Title)
		if !ok {
			t.Count(ctrBelowThreshold, 1)
			continue
		}
		links = append(links, segment.ParseLink{URL: l.URL, Anchor: l.Anchor, Relevance: rw})
	}
	return links
}

// write writes a parsed page's parse_data and parse_text rows and its
// crawl_parse row: its signature and the links it follows, each passing
// on the OPIC share of score in the row's Score (and, for a nofollow
// page, a StatusLinked row to its refresh target, without cash).
func (pp *pageParser) write(t *mapreduce.Task, url string, fetch parseFetch, fetchTime time.Time, res *parser.Result, out func(parseOut)) {
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
	sigRow := &segment.ParseUpdate{URL: url, Status: crawldb.StatusSignature,
		Signature: sig, Features: res.Features, FetchTime: fetchTime}
	links := pp.focusLinks(t, sigRow, fetch, res)
	sigRow.Links, sigRow.Score = links, OPICLinkCash(fetch.Score, len(links))
	out(parseOut{Update: sigRow})
	t.Count(ctrOutlinks, int64(len(links)))
	if res.NoFollow && res.Redirect != "" {
		t.Count(ctrRefreshLinks, 1)
		out(parseOut{Update: &segment.ParseUpdate{URL: res.Redirect, Status: crawldb.StatusLinked,
			FromURL: url, FetchTime: fetchTime}})
	}
}
