package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/jobs"
)

// textExcerpt is how many characters of a page's text parsechecker shows
// without --text.
const textExcerpt = 400

func parsecheckerCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "parsechecker",
		Usage:     "fetch and parse one URL as a crawl would, and show what it gives (Nutch's ParserChecker)",
		ArgsUsage: "URL",
		Description: `Fetches URL with the fetch job's fetcher and settings (the agent, robots.txt,
the address guard, the content limit, redirects followed as --follow-redirects
says, politeness delays between them) and parses it with the parse job's parser
and settings (normalizers, URL filters, --scope, --max-outlinks, the
signature). Nothing is written to the crawl directory.

It prints the fetch status (its name and Nutch's number) and HTTP status of the
URL and of every redirect the fetcher followed, the response headers, the
content type and length, the title, the first 400 characters of the text
(--text: all of it), every link of the page with its anchor, the URL the
normalizers made of it and whether the checks kept it (else why not: the
rejecting filter's reason, "duplicate", "cap", ...), the signature and the
parse status. --json prints the same as one JSON object.

--normalize-only and --filter-only check URLs without fetching them: what the
normalizer makes of each, and whether the URL filters (urlfilter.* settings,
as inject and parse apply them) keep it; several URLs may be given, or - to
read them from stdin, one a line.

--no-robots fetches without asking robots.txt (the crawl always asks). Loopback
and private addresses need --allow-private, as in a crawl. The exit status is 0
when the page was fetched and parsed, 3 otherwise (what happened is printed).

Examples:
   trawl parsechecker --agent mybot https://example.com/
   trawl parsechecker --agent mybot --text --max-outlinks -1 https://example.com/news
   trawl parsechecker --agent mybot --json https://example.com/ | jq .outlinks
   trawl parsechecker --agent mybot --no-robots --follow-redirects 3 http://example.com/old
   trawl parsechecker --agent mybot --allow-private --dns-server 127.0.0.1:5353 http://h0001.sim/   # a simweb server
   trawl parsechecker --filter-only 'HTTP://Example.com:80/a/../b.jpg' https://example.com/
   trawl parsechecker --normalize-only - < urls.txt`,
		Flags: append(append(fetchFlags(), parseFlags()...),
			&cli.BoolFlag{Name: "no-robots", Usage: "fetch without asking robots.txt (a crawl always asks)"},
			&cli.BoolFlag{Name: "text", Usage: "print all of the page's text, not its first 400 characters"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			&cli.BoolFlag{Name: "normalize-only", Usage: "print what the normalizer makes of each URL given (- reads them from stdin); fetch nothing (Nutch's URLNormalizerChecker)"},
			&cli.BoolFlag{Name: "filter-only", Usage: "normalize and filter each URL given (- reads them from stdin): +URL kept, -URL and the filter's reason rejected; fetch nothing (Nutch's URLFilterChecker)"},
		),
		Action: action(sio, (*session).parsechecker),
	}
}

// parsechecker runs the parsechecker command.
func (s *session) parsechecker(c *cli.Context) error {
	if c.Bool("normalize-only") || c.Bool("filter-only") {
		return s.urlcheck(c)
	}
	if c.NArg() != 1 {
		return usageErrorf("parsechecker: give one URL, got %d arguments (see trawl parsechecker --help)", c.NArg())
	}
	o, err := s.checkOptions("")
	if err != nil {
		return err
	}
	o.NoRobots = c.Bool("no-robots")
	pc, err := jobs.CheckPage(c.Context, o, c.Args().First())
	if err != nil {
		return usageErrorf("parsechecker: %w", err)
	}
	report := newPageReport(pc, c.Bool("text") || c.Bool("json"))
	if c.Bool("json") {
		enc := json.NewEncoder(s.io.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return fmt.Errorf("parsechecker: %w", err)
		}
	} else {
		report.print(s.io.stdout)
	}
	if report.ParseStatus != "success" {
		return withCode(exitFailure, fmt.Errorf("parsechecker: %s: %s", pc.URL, report.ParseStatus))
	}
	return nil
}

// checkOptions returns the checks' options from the settings; agent, if
// not empty, is the agent.
func (s *session) checkOptions(agent string) (jobs.CheckOptions, error) {
	fo, err := s.fetchOptions(agent)
	if err != nil {
		return jobs.CheckOptions{}, err
	}
	if agent != "" {
		fo.Agent = agent
	}
	po, err := s.parseOptions()
	if err != nil {
		return jobs.CheckOptions{}, err
	}
	return jobs.CheckOptions{Fetch: fo, Parse: po, Log: s.log, Files: s.resolver}, nil
}

// statusReport is a CrawlDB status: its name and Nutch's number.
type statusReport struct {
	Name   string `json:"name"`
	Number int    `json:"number"`
}

func statusOf(st crawldb.Status) statusReport {
	return statusReport{Name: st.String(), Number: int(st)}
}

func (s statusReport) String() string { return fmt.Sprintf("%s (%d)", s.Name, s.Number) }

// fetchReport is one fetcher result.
type fetchReport struct {
	URL         string              `json:"url"`
	From        string              `json:"redirected_from,omitempty"`
	Status      statusReport        `json:"status"`
	HTTPStatus  int                 `json:"http_status"`
	Message     string              `json:"message,omitempty"`
	RedirectURL string              `json:"redirect_url,omitempty"`
	Headers     map[string][]string `json:"headers,omitempty"`
	ContentType string              `json:"content_type,omitempty"`
	Length      int                 `json:"content_length"`
	Truncated   bool                `json:"truncated,omitempty"`
	ElapsedMS   float64             `json:"elapsed_ms"`
}

// robotsFetchReport is how the fetcher got a robots.txt.
type robotsFetchReport struct {
	Origin     string                  `json:"origin"`
	Requests   []fetcher.RobotsRequest `json:"requests"`
	Outcome    string                  `json:"outcome"`
	Message    string                  `json:"message,omitempty"`
	CrawlDelay string                  `json:"crawl_delay,omitempty"`
}

func robotsFetchOf(r *fetcher.RobotsFetch) robotsFetchReport {
	out := robotsFetchReport{Origin: r.Origin, Requests: r.Requests, Outcome: r.Outcome, Message: r.Message}
	if r.CrawlDelay > 0 {
		out.CrawlDelay = r.CrawlDelay.String()
	}
	return out
}

// linkReport is one link of the page.
type linkReport struct {
	Href    string `json:"href"`
	Anchor  string `json:"anchor,omitempty"`
	Refresh bool   `json:"refresh,omitempty"`
	URL     string `json:"url,omitempty"`
	Error   string `json:"error,omitempty"`
	Kept    bool   `json:"kept"`
	Dropped string `json:"dropped,omitempty"`
}

// pageReport is what parsechecker prints.
type pageReport struct {
	URL           string              `json:"url"`
	Robots        []robotsFetchReport `json:"robots,omitempty"`
	RobotsIgnored bool                `json:"robots_ignored,omitempty"`
	Fetches       []fetchReport       `json:"fetches"`
	ParseStatus   string              `json:"parse_status"`
	MediaType     string              `json:"media_type,omitempty"`
	Charset       string              `json:"charset,omitempty"`
	Title         string              `json:"title,omitempty"`
	Text          string              `json:"text,omitempty"`
	TextChars     int                 `json:"text_chars"`
	TextCut       bool                `json:"-"`
	NoIndex       bool                `json:"noindex,omitempty"`
	NoFollow      bool                `json:"nofollow,omitempty"`
	Canonical     string              `json:"canonical,omitempty"`
	LinksFound    int                 `json:"links_found"`
	LinksKept     int                 `json:"links_kept"`
	Dropped       map[string]int      `json:"links_dropped,omitempty"`
	Outlinks      []outlinkReport     `json:"outlinks"`
	Links         []linkReport        `json:"links"`
	SignatureKind string              `json:"signature_kind,omitempty"`
	Signature     string              `json:"signature,omitempty"`
}

// outlinkReport is an outlink the page keeps, as parse_data stores it.
type outlinkReport struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor,omitempty"`
}

// newPageReport turns a PageCheck into what parsechecker prints; allText
// keeps all of the text.
func newPageReport(pc *jobs.PageCheck, allText bool) *pageReport {
	r := &pageReport{URL: pc.URL, RobotsIgnored: len(pc.Robots) == 0, Outlinks: []outlinkReport{}, Links: []linkReport{}}
	for _, rf := range pc.Robots {
		r.Robots = append(r.Robots, robotsFetchOf(rf))
	}
	for _, f := range pc.Fetches {
		r.Fetches = append(r.Fetches, fetchReport{
			URL: f.Request.URL, From: f.Request.From, Status: statusOf(f.Status), HTTPStatus: f.HTTPStatus,
			Message: f.Message, RedirectURL: f.RedirectURL, Headers: f.Header, ContentType: f.ContentType,
			Length: len(f.Body), Truncated: f.Truncated, ElapsedMS: float64(f.Elapsed.Microseconds()) / 1000,
		})
	}
	switch {
	case pc.Parse != nil:
		r.ParseStatus = "success"
	case pc.ParseError != nil:
		r.ParseStatus = "failed: " + pc.ParseError.Error()
	default:
		r.ParseStatus = "not parsed: " + pc.NotParsed
	}
	if p := pc.Parse; p != nil {
		r.MediaType, r.Charset, r.Title = p.MediaType, p.Charset, p.Title
		r.NoIndex, r.NoFollow, r.Canonical = p.NoIndex, p.NoFollow, p.Canonical
		r.TextChars = utf8.RuneCountInString(p.Text)
		r.Text = p.Text
		if !allText && r.TextChars > textExcerpt {
			r.Text, r.TextCut = string([]rune(p.Text)[:textExcerpt]), true
		}
		r.LinksFound, r.LinksKept, r.Dropped = p.Links.Found, p.Links.Kept, p.Links.Dropped
		for _, o := range p.Outlinks {
			r.Outlinks = append(r.Outlinks, outlinkReport{URL: o.URL, Anchor: o.Anchor})
		}
		r.SignatureKind, r.Signature = pc.SignatureKind, hex.EncodeToString(pc.Signature)
	}
	for _, l := range pc.Links {
		lr := linkReport{Href: l.Href, Anchor: l.Anchor, Refresh: l.Refresh, URL: l.URL, Kept: l.Dropped == "", Dropped: l.Dropped}
		if l.Err != nil {
			lr.Error = l.Err.Error()
		}
		r.Links = append(r.Links, lr)
	}
	return r
}

// httpAnswer describes an HTTP status, 0 being none.
func httpAnswer(status int) string {
	if status == 0 {
		return "no answer"
	}
	return fmt.Sprintf("HTTP %d", status)
}

// print writes the report for people.
func (r *pageReport) print(w io.Writer) {
	fmt.Fprintf(w, "URL:            %s\n", r.URL)
	if r.RobotsIgnored {
		fmt.Fprintln(w, "robots.txt:     not asked (--no-robots)")
	}
	for _, rb := range r.Robots {
		fmt.Fprintf(w, "robots.txt:     %s: %s", rb.Origin, rb.Outcome)
		for _, rq := range rb.Requests {
			fmt.Fprintf(w, "; %s %s", rq.URL, httpAnswer(rq.HTTPStatus))
		}
		if rb.Message != "" {
			fmt.Fprintf(w, "; %s", rb.Message)
		}
		if rb.CrawlDelay != "" {
			fmt.Fprintf(w, "; Crawl-delay %s", rb.CrawlDelay)
		}
		fmt.Fprintln(w)
	}
	for i, f := range r.Fetches {
		if i > 0 {
			fmt.Fprintf(w, "redirect:       %s (from %s)\n", f.URL, f.From)
		}
		fmt.Fprintf(w, "fetch status:   %s\n", f.Status)
		fmt.Fprintf(w, "HTTP status:    %d\n", f.HTTPStatus)
		if f.Message != "" {
			fmt.Fprintf(w, "message:        %s\n", f.Message)
		}
		if f.RedirectURL != "" {
			fmt.Fprintf(w, "redirect to:    %s\n", f.RedirectURL)
		}
		if len(f.Headers) > 0 {
			fmt.Fprintln(w, "headers:")
			names := make([]string, 0, len(f.Headers))
			for k := range f.Headers {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(f.Headers[k], ", "))
			}
		}
		if f.ContentType != "" {
			fmt.Fprintf(w, "content type:   %s\n", f.ContentType)
		}
		trunc := ""
		if f.Truncated {
			trunc = " (truncated at the content limit)"
		}
		fmt.Fprintf(w, "content length: %d bytes%s\n", f.Length, trunc)
	}
	fmt.Fprintf(w, "parse status:   %s\n", r.ParseStatus)
	if r.ParseStatus != "success" {
		return
	}
	fmt.Fprintf(w, "parsed as:      %s, charset %s\n", r.MediaType, r.Charset)
	fmt.Fprintf(w, "title:          %s\n", r.Title)
	if r.NoIndex || r.NoFollow {
		fmt.Fprintf(w, "robots meta:    noindex=%v nofollow=%v\n", r.NoIndex, r.NoFollow)
	}
	if r.Canonical != "" {
		fmt.Fprintf(w, "canonical:      %s\n", r.Canonical)
	}
	fmt.Fprintf(w, "signature:      %s %s\n", r.SignatureKind, r.Signature)
	cut := ""
	if r.TextCut {
		cut = fmt.Sprintf(" (first %d of %d characters; --text for all)", textExcerpt, r.TextChars)
	}
	fmt.Fprintf(w, "text%s:\n%s\n", cut, r.Text)
	var dropped []string
	for k, n := range r.Dropped {
		dropped = append(dropped, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(dropped)
	fmt.Fprintf(w, "outlinks:       %d kept of %d links", r.LinksKept, r.LinksFound)
	if len(dropped) > 0 {
		fmt.Fprintf(w, " (dropped: %s)", strings.Join(dropped, ", "))
	}
	fmt.Fprintln(w)
	for _, l := range r.Links {
		verdict := "kept   "
		if !l.Kept {
			verdict = "dropped"
		}
		target := l.URL
		if target == "" {
			target = "(no URL)"
		}
		fmt.Fprintf(w, "  %s %s", verdict, target)
		if l.Anchor != "" {
			fmt.Fprintf(w, "  anchor %q", l.Anchor)
		}
		if l.Refresh {
			fmt.Fprint(w, "  (meta refresh)")
		}
		if l.Href != l.URL {
			fmt.Fprintf(w, "  href %q", l.Href)
		}
		if !l.Kept {
			fmt.Fprintf(w, "  reason: %s", l.Dropped)
		}
		if l.Error != "" {
			fmt.Fprintf(w, " (%s)", l.Error)
		}
		fmt.Fprintln(w)
	}
}

func robotscheckCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "robotscheck",
		Usage:     "tell whether robots.txt lets an agent fetch a URL, and why (robots.txt per RFC 9309, as the fetcher reads it)",
		ArgsUsage: "URL [AGENT]",
		Description: `Gets URL's robots.txt as the fetcher does in a crawl (the same request, agent,
redirects followed, content limit and address guard) and prints whether the
fetcher would fetch URL: allowed, denied, or not this round. It names the group
(the User-agent lines) that applies to AGENT, the rule (line) that decided and
why, the group's Crawl-delay and the Sitemap lines. URL itself is not fetched.

How the fetcher reads robots.txt: a 200 answer is parsed (one that does not
parse allows everything); any 4xx, 401 and 403 included, allows everything;
a 5xx defers the host's URLs to a later round; no answer fails them. Of a
file's groups the one whose User-agent is the longest prefix of AGENT's name
(its product token, lower case) applies, else "User-agent: *". Of the group's
rules the longest matching one decides (a rule with * or $ counts the length of
its regular expression); between two rules of one length the first listed wins
(RFC 9309 lets Allow win; the library the fetcher uses, temoto/robotstxt, does
not); with no matching rule the URL is allowed. A Crawl-delay above
--max-crawl-delay makes the fetcher skip the host for the round.

AGENT defaults to the crawl's agent (--agent, fetcher.agent). With --robots
FILE the rules of a local robots.txt are checked against URL, with no network.
Loopback and private addresses need --allow-private, as in a crawl. --json
prints one JSON object.

Examples:
   trawl robotscheck https://example.com/private/page mybot
   trawl robotscheck --agent mybot https://example.com/search?q=x
   trawl robotscheck --robots ./robots.txt https://example.com/a/b mybot
   trawl robotscheck --json https://example.com/ mybot | jq .allowed`,
		Flags: append(settingFlags("agent", "max-crawl-delay", "connect-timeout", "read-timeout", "allow-private",
			"dns-server", "queue-mode", "no-keep-alive"),
			&cli.StringFlag{Name: "robots", Usage: "check the rules of the robots.txt `FILE` instead of fetching the host's"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		),
		Action: action(sio, (*session).robotscheck),
	}
}

// robotsReport is what robotscheck prints.
type robotsReport struct {
	URL        string             `json:"url"`
	Agent      string             `json:"agent"`
	File       string             `json:"file,omitempty"`
	Robots     *robotsFetchReport `json:"robots,omitempty"`
	Verdict    string             `json:"verdict"`
	Allowed    bool               `json:"allowed"`
	Message    string             `json:"message,omitempty"`
	Parsed     *bool              `json:"parsed,omitempty"`
	ParseError string             `json:"parse_error,omitempty"`
	Group      *robotsGroupReport `json:"group,omitempty"`
	Rule       *robotsRuleReport  `json:"rule,omitempty"`
	Matching   []robotsRuleReport `json:"matching_rules,omitempty"`
	Reason     string             `json:"reason"`
	Path       string             `json:"path,omitempty"`
	CrawlDelay string             `json:"crawl_delay,omitempty"`
	Sitemaps   []string           `json:"sitemaps,omitempty"`
}

type robotsGroupReport struct {
	Agent string `json:"user_agent"`
	Lines []int  `json:"lines"`
}

type robotsRuleReport struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Allow  bool   `json:"allow"`
	Length int    `json:"length"`
}

func ruleReport(r fetcher.RobotsRule) robotsRuleReport {
	return robotsRuleReport{Line: r.Line, Text: r.Text, Allow: r.Allow, Length: r.Length}
}

// robotscheck runs the robotscheck command.
func (s *session) robotscheck(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageErrorf("robotscheck: give URL and optionally AGENT, got %d arguments (see trawl robotscheck --help)", c.NArg())
	}
	rawURL, agent := c.Args().Get(0), c.Args().Get(1)
	var rep *robotsReport
	var err error
	if file := c.String("robots"); file != "" {
		rep, err = s.robotsFileReport(rawURL, agent, file)
	} else {
		rep, err = s.robotsFetchReport(c, rawURL, agent)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(s.io.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("robotscheck: %w", err)
		}
		return nil
	}
	rep.print(s.io.stdout)
	return nil
}

// robotsFileReport checks a local robots.txt.
func (s *session) robotsFileReport(rawURL, agent, file string) (*robotsReport, error) {
	if agent == "" {
		agent = s.crawlAgent()
	}
	if agent == "" {
		return nil, usageErrorf("robotscheck: give AGENT, or %s", agentMissing)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, usageErrorf("robotscheck: %q is not an absolute URL", rawURL)
	}
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, usageErrorf("robotscheck: --robots: %w", err)
	}
	rep := &robotsReport{URL: rawURL, Agent: agent, File: file}
	if err := rep.explain(body, agent, u); err != nil {
		return nil, err
	}
	return rep, nil
}

// crawlAgent is the agent the settings give ("" if none).
func (s *session) crawlAgent() string { return strings.TrimSpace(s.cfg.String(config.FetcherAgent)) }

// robotsFetchReport gets and checks the URL's robots.txt as the fetcher
// does.
func (s *session) robotsFetchReport(c *cli.Context, rawURL, agent string) (*robotsReport, error) {
	o, err := s.checkOptions(agent)
	if err != nil {
		return nil, err
	}
	rc, err := jobs.CheckRobots(c.Context, o, rawURL)
	if err != nil {
		return nil, usageErrorf("robotscheck: %w", err)
	}
	rep := &robotsReport{URL: rc.URL, Agent: o.Fetch.Agent, Allowed: rc.Allowed}
	if rc.Robots != nil {
		rf := robotsFetchOf(rc.Robots)
		rep.Robots = &rf
	}
	res := rc.Result
	switch {
	case rc.Allowed:
		rep.Verdict = "allowed"
	case res.Code == fetcher.CodeRobotsDenied:
		rep.Verdict = "denied"
	default:
		rep.Verdict = "not fetched: " + res.Status.String()
		rep.Message = res.Message
	}
	rb := rc.Robots
	switch {
	case rb == nil:
		rep.Reason = "the fetcher asked no robots.txt: " + res.Message
	case rb.Outcome == fetcher.RobotsParsed || rb.Outcome == fetcher.RobotsUnparsable:
		u, err := url.Parse(rc.URL)
		if err != nil {
			return nil, fmt.Errorf("robotscheck: %w", err)
		}
		if err := rep.explain(rb.Body, o.Fetch.Agent, u); err != nil {
			return nil, err
		}
		if res.Code == fetcher.CodeSkipped && !rc.Allowed {
			rep.Reason += "; but " + res.Message
		}
	case rb.Outcome == fetcher.RobotsAllowAll:
		rep.Reason = fmt.Sprintf("robots.txt answered HTTP %d: a 4xx (or other non-5xx) answer allows everything", rb.Status)
	case rb.Outcome == fetcher.RobotsDeferred:
		rep.Reason = fmt.Sprintf("robots.txt answered HTTP %d: a 5xx makes the fetcher leave the host's URLs for a later round", rb.Status)
	default:
		rep.Reason = rb.Outcome + ": " + rb.Message
	}
	return rep, nil
}

// explain adds ExplainRobots' explanation of body to rep, and checks that
// its verdict is the fetcher's.
func (rep *robotsReport) explain(body []byte, agent string, u *url.URL) error {
	ex := fetcher.ExplainRobots(body, agent, u)
	allowed, _, _ := fetcher.RobotsAllowed(body, agent, u)
	if ex.Allowed != allowed {
		return fmt.Errorf("robotscheck: internal error: the explanation (allowed %v) disagrees with the fetcher (allowed %v) for %s", ex.Allowed, allowed, u)
	}
	if rep.Verdict == "" {
		rep.Allowed = allowed
		rep.Verdict = "denied"
		if allowed {
			rep.Verdict = "allowed"
		}
	}
	parsed := ex.Parsed
	rep.Parsed, rep.ParseError, rep.Reason, rep.Path = &parsed, ex.ParseError, ex.Reason, ex.Path
	rep.Sitemaps = ex.Sitemaps
	if ex.CrawlDelay > 0 {
		rep.CrawlDelay = ex.CrawlDelay.String()
	}
	if ex.Group != nil {
		rep.Group = &robotsGroupReport{Agent: ex.Group.Agent, Lines: ex.Group.Lines}
	}
	if ex.Rule != nil {
		r := ruleReport(*ex.Rule)
		rep.Rule = &r
	}
	for _, m := range ex.Matching {
		rep.Matching = append(rep.Matching, ruleReport(m))
	}
	return nil
}

// print writes the report for people.
func (rep *robotsReport) print(w io.Writer) {
	fmt.Fprintf(w, "URL:          %s\n", rep.URL)
	fmt.Fprintf(w, "agent:        %s\n", rep.Agent)
	if rep.File != "" {
		fmt.Fprintf(w, "robots.txt:   %s (local file)\n", rep.File)
	}
	if rb := rep.Robots; rb != nil {
		fmt.Fprintf(w, "robots.txt:   %s", rb.Outcome)
		for _, rq := range rb.Requests {
			fmt.Fprintf(w, "; %s %s", rq.URL, httpAnswer(rq.HTTPStatus))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "verdict:      %s\n", rep.Verdict)
	if rep.Message != "" {
		fmt.Fprintf(w, "message:      %s\n", rep.Message)
	}
	if rep.Group != nil {
		lines := make([]string, len(rep.Group.Lines))
		for i, l := range rep.Group.Lines {
			lines[i] = fmt.Sprint(l)
		}
		fmt.Fprintf(w, "group:        User-agent: %s (line %s)\n", rep.Group.Agent, strings.Join(lines, ", "))
	} else if rep.Parsed != nil && *rep.Parsed {
		fmt.Fprintln(w, "group:        none applies")
	}
	if rep.Rule != nil {
		fmt.Fprintf(w, "rule:         line %d: %s\n", rep.Rule.Line, rep.Rule.Text)
	}
	if len(rep.Matching) > 1 {
		for _, m := range rep.Matching {
			fmt.Fprintf(w, "  matching:   line %d: %s (length %d)\n", m.Line, m.Text, m.Length)
		}
	}
	fmt.Fprintf(w, "why:          %s\n", rep.Reason)
	if rep.CrawlDelay != "" {
		fmt.Fprintf(w, "crawl-delay:  %s\n", rep.CrawlDelay)
	}
	for _, sm := range rep.Sitemaps {
		fmt.Fprintf(w, "sitemap:      %s\n", sm)
	}
}

// urlcheck runs parsechecker --normalize-only and --filter-only.
func (s *session) urlcheck(c *cli.Context) error {
	if c.Bool("normalize-only") && c.Bool("filter-only") {
		return usageErrorf("parsechecker: --normalize-only or --filter-only, not both")
	}
	if c.NArg() == 0 {
		return usageErrorf("parsechecker: give the URLs to check, or - to read them from stdin")
	}
	fo, err := s.filters()
	if err != nil {
		return err
	}
	checker, err := jobs.NewURLChecker(fo, s.resolver)
	if err != nil {
		return usageErrorf("parsechecker: %w", err)
	}
	var urls []string
	for _, a := range c.Args().Slice() {
		if a != "-" {
			urls = append(urls, a)
			continue
		}
		data, err := io.ReadAll(s.io.stdin)
		if err != nil {
			return fmt.Errorf("parsechecker: stdin: %w", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				urls = append(urls, l)
			}
		}
	}
	enc := json.NewEncoder(s.io.stdout)
	filter := c.Bool("filter-only")
	for _, u := range urls {
		r := checker.Check(u)
		switch {
		case c.Bool("json"):
			if !filter {
				r.Kept, r.Reason = r.Error == "", ""
			}
			if err := enc.Encode(r); err != nil {
				return fmt.Errorf("parsechecker: %w", err)
			}
		case r.Error != "":
			fmt.Fprintf(s.io.stdout, "ERROR %s\t%s\n", r.Input, r.Error)
		case !filter:
			fmt.Fprintln(s.io.stdout, r.Normalized)
		case r.Kept:
			fmt.Fprintf(s.io.stdout, "+%s\n", r.Normalized)
		default:
			fmt.Fprintf(s.io.stdout, "-%s\t%s\n", r.Normalized, r.Reason)
		}
	}
	return nil
}
