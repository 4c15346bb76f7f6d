package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// CheckOptions configure CheckPage and CheckRobots: the fetch and parse
// jobs' options, which the checks use as those jobs do (the fetch job's
// Segment, TimeLimit, Now and Parse, and the parse job's Segment,
// Reducers and Focus are not used).
type CheckOptions struct {
	Fetch FetchOptions
	Parse ParseOptions
	// NoRobots fetches without robots.txt (CheckPage only).
	NoRobots bool
	// Log receives the fetcher's logs; nil means slog.Default().
	Log *slog.Logger
	// Files reads the URL filters' rule files.
	Files mapreduce.Resolver
}

// PageCheck is what CheckPage found: what a crawl's fetch and parse of
// one URL would do.
type PageCheck struct {
	// URL is the URL checked, normalized as inject normalizes seeds.
	URL string
	// Fetches are the fetcher's results, in order: the URL's, then those
	// of the redirect targets the fetcher followed.
	Fetches []*fetcher.Result
	// Robots are the robots.txt files the fetcher got (none under
	// NoRobots).
	Robots []*fetcher.RobotsFetch
	// Page is the result whose content was parsed (the last fetch, when a
	// success); nil if none.
	Page *fetcher.Result
	// NotParsed says why nothing was parsed ("" when Parse or ParseError
	// is set).
	NotParsed string
	// Parse is the parser's result; ParseError its failure.
	Parse      *parser.Result
	ParseError error
	// Links are the page's links and what the parser's checks
	// (normalization, scope, filters, caps) did to each.
	Links []parser.LinkTrace
	// SignatureKind is the crawl's signature (parser.SignatureMD5 or
	// parser.SignatureTextProfile) and Signature its value.
	SignatureKind string
	Signature     []byte
}

// checkFetcher returns the fetcher of a check and its resolver, to close.
func checkFetcher(o CheckOptions, robots func(*fetcher.RobotsFetch), robotsOnly bool) (*fetcher.Fetcher, *resolver.Resolver, error) {
	fo, err := o.Fetch.fetcherOptions()
	if err != nil {
		return nil, nil, err
	}
	rc := o.Fetch.resolverConfig()
	rc.Log = o.Log
	dns, err := resolver.New(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("resolver: %w", err)
	}
	fo.Resolver = dns
	fo.Log = o.Log
	fo.NoProgressLog, fo.ProgressInterval = true, 0
	fo.OnRobots = robots
	fo.IgnoreRobots = o.NoRobots && !robotsOnly
	fo.RobotsOnly = robotsOnly
	f, err := fetcher.New(fo)
	if err != nil {
		dns.Close()
		return nil, nil, err
	}
	return f, dns, nil
}

// normalizeCheckURL normalizes a URL given to a check, which must be an
// absolute http or https URL.
func normalizeCheckURL(raw string) (string, error) {
	u, err := urlutil.Normalize(raw)
	if err != nil {
		return "", err
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return u, nil
}

// CheckPage fetches rawURL with the fetch job's fetcher and parses it with
// the parse job's parser, as a crawl would (Nutch's ParserChecker): robots
// unless NoRobots, the address guard, the content limit, redirects
// followed up to FollowRedirects. Failures to fetch or parse are in the
// PageCheck; the error is for options that do not work and a URL that is
// not one.
func CheckPage(ctx context.Context, o CheckOptions, rawURL string) (*PageCheck, error) {
	u, err := normalizeCheckURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if err := o.Parse.validateCheck(); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	pc := &PageCheck{URL: u}
	var mu sync.Mutex // robots.txt files of several hosts may come at once
	f, dns, err := checkFetcher(o, func(r *fetcher.RobotsFetch) {
		mu.Lock()
		defer mu.Unlock()
		pc.Robots = append(pc.Robots, r)
	}, false)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer dns.Close()
	_, err = f.Run(ctx, []fetcher.Request{{URL: u}}, func(r *fetcher.Result) error {
		pc.Fetches = append(pc.Fetches, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check: fetch %s: %w", u, err)
	}
	if err := pc.parse(o); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	return pc, nil
}

// validateCheck checks the parse options a check uses.
func (o ParseOptions) validateCheck() error {
	o.Segment = "check" // not used, but Validate wants one
	return o.Validate()
}

// parse parses the last fetch, if a success, as the parse job would.
func (pc *PageCheck) parse(o CheckOptions) error {
	if len(pc.Fetches) == 0 {
		pc.NotParsed = "the fetcher gave no result"
		return nil
	}
	last := pc.Fetches[len(pc.Fetches)-1]
	if last.Status != crawldb.StatusFetchSuccess {
		pc.NotParsed = fmt.Sprintf("not fetched with success (%s): the parse job skips it", last.Status)
		return nil
	}
	pc.Page = last
	if last.Truncated && !o.Parse.ParseTruncated {
		pc.NotParsed = "truncated at the content limit, and the parse job skips truncated pages (parser.skipTruncated)"
		return nil
	}
	filters, err := o.Parse.Filters.spec(o.Files)
	if err != nil {
		return err
	}
	o.Parse.Reducers = 1
	job := planParse(Env{}, "check", o.Parse, filters)
	po, err := job.parserOptions()
	if err != nil {
		return err
	}
	po.Trace = func(l parser.LinkTrace) { pc.Links = append(pc.Links, l) }
	content := segment.Content{
		URL: last.Request.URL, BaseURL: last.Request.URL, ContentType: last.ContentType,
		Headers: flatHeader(last.Header), Body: last.Body, Truncated: last.Truncated, FetchTime: last.Time.UTC(),
	}
	res, err := parser.New(po).Parse(content)
	if err != nil {
		pc.ParseError = err
		var pe *parser.Error
		if !errors.As(err, &pe) {
			return err
		}
		return nil
	}
	pc.Parse = res
	pc.SignatureKind = job.Signature
	pc.Signature = res.Signature(job.Signature)
	return nil
}

// RobotsCheck is what CheckRobots found: what a crawl's fetcher would
// make of a URL's robots.txt.
type RobotsCheck struct {
	// URL is the URL checked, normalized.
	URL string
	// Result is the fetcher's verdict: robots_denied, skipped with
	// fetcher.RobotsOnlyAllowed (allowed), skipped for another reason
	// (robots.txt unavailable: a 5xx; a Crawl-delay above the cap), an
	// exception (no answer) or refused (a private address).
	Result *fetcher.Result
	// Allowed is true when the fetcher would fetch the URL.
	Allowed bool
	// Robots is how the fetcher got robots.txt (nil if it sent no
	// request, as for a refused address).
	Robots *fetcher.RobotsFetch
}

// CheckRobots gets rawURL's robots.txt with the fetch job's fetcher, as a
// crawl would (the agent, redirects, status handling, the address guard),
// and returns the fetcher's verdict for the URL without fetching it.
func CheckRobots(ctx context.Context, o CheckOptions, rawURL string) (*RobotsCheck, error) {
	u, err := normalizeCheckURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("robots check: %w", err)
	}
	rc := &RobotsCheck{URL: u}
	var mu sync.Mutex
	f, dns, err := checkFetcher(o, func(r *fetcher.RobotsFetch) {
		mu.Lock()
		defer mu.Unlock()
		rc.Robots = r
	}, true)
	if err != nil {
		return nil, fmt.Errorf("robots check: %w", err)
	}
	defer dns.Close()
	_, err = f.Run(ctx, []fetcher.Request{{URL: u}}, func(r *fetcher.Result) error {
		if rc.Result == nil {
			rc.Result = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("robots check: %s: %w", u, err)
	}
	if rc.Result == nil {
		return nil, fmt.Errorf("robots check: %s: the fetcher gave no result", u)
	}
	rc.Allowed = rc.Result.Code == fetcher.CodeSkipped && rc.Result.Message == fetcher.RobotsOnlyAllowed
	return rc, nil
}

// URLCheck is what the crawl's normalizer and URL filters make of one URL
// (Nutch's URLNormalizerChecker and URLFilterChecker).
type URLCheck struct {
	// Input is the URL as given; Normalized what the normalizer made of
	// it ("" when it does not normalize: Error says why).
	Input      string `json:"input"`
	Normalized string `json:"normalized,omitempty"`
	Error      string `json:"error,omitempty"`
	// Kept is true when the filters keep the URL; Reason is the
	// rejecting filter's reason otherwise.
	Kept   bool   `json:"kept"`
	Reason string `json:"reason,omitempty"`
}

// URLChecker checks URLs with the normalizer and URL filters of the
// crawl's jobs.
type URLChecker struct {
	filters urlutil.Filters
}

// NewURLChecker returns the checker of the URL filters o (their rule files
// read through files).
func NewURLChecker(o URLFilterOptions, files mapreduce.Resolver) (*URLChecker, error) {
	spec, err := o.spec(files)
	if err != nil {
		return nil, fmt.Errorf("url check: %w", err)
	}
	fs, err := spec.filters()
	if err != nil {
		return nil, fmt.Errorf("url check: %w", err)
	}
	return &URLChecker{filters: fs}, nil
}

// Check normalizes raw as inject and the parser do, then applies the
// filters to it as they apply them to seeds and outlinks.
func (c *URLChecker) Check(raw string) URLCheck {
	out := URLCheck{Input: raw}
	u, err := urlutil.Normalize(raw)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Normalized, out.Kept = u, true
	if c.filters != nil {
		out.Kept, out.Reason = c.filters.Filter(u)
	}
	return out
}
