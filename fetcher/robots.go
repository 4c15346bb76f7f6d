package fetcher

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/temoto/robotstxt"

	"github.com/trawl/trawl/urlutil"
)

// robotsRules are the robots.txt rules of one origin for this crawler.
type robotsRules struct {
	allowAll bool
	group    *robotstxt.Group
	// status is the HTTP status of the robots.txt answer (after
	// redirects), 0 if none.
	status int
}

// allowed reports whether the rules let the crawler fetch u. Rules match
// the path and query as sent (percent-encoded).
func (r *robotsRules) allowed(u *url.URL) bool {
	if r.allowAll || r.group == nil {
		return true
	}
	return r.group.Test(robotsPath(u))
}

// robotsPath is the part of u that robots.txt rules match: the escaped
// path ("/" if empty) and the query.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// delay is the Crawl-delay of the crawler's group (0 if none).
func (r *robotsRules) delay() time.Duration {
	if r.allowAll || r.group == nil {
		return 0
	}
	// robotstxt rejects negative delays but converts the seconds to a
	// Duration unchecked: past 2^63 ns (about 292 years) the conversion
	// overflows, to math.MinInt64 on amd64, which would read as no delay
	// at all. The server asked for the longest delay: give it that, as the
	// saturating conversion on arm64 does, so that MaxCrawlDelay skips it.
	if r.group.CrawlDelay < 0 {
		return math.MaxInt64
	}
	return r.group.CrawlDelay
}

// allowAllRules are the rules of a run that ignores robots.txt
// (Options.IgnoreRobots).
var allowAllRules = &robotsRules{allowAll: true}

// RobotsOnlyAllowed is the message of the result of a URL robots.txt
// allows, under Options.RobotsOnly.
const RobotsOnlyAllowed = "skipped: allowed by robots.txt (robots.txt check only, not fetched)"

// What the fetcher made of an origin's robots.txt (RobotsFetch.Outcome).
const (
	RobotsParsed      = "parsed"      // a 200 answer, parsed: its rules apply
	RobotsUnparsable  = "unparsable"  // a 200 answer that does not parse: everything allowed
	RobotsAllowAll    = "allow-all"   // a 4xx or other non-5xx answer: everything allowed
	RobotsDeferred    = "deferred"    // a 5xx answer: the host's URLs wait for a later round
	RobotsUnreachable = "unreachable" // no answer: the host's URLs fail
	RobotsRefused     = "refused"     // a refused address (private without AllowPrivate)
)

// RobotsFetch is how a run got one origin's robots.txt (see
// Options.OnRobots).
type RobotsFetch struct {
	// Origin is scheme://host[:port].
	Origin string
	// Requests are the robots.txt URLs requested, redirects followed, in
	// order, each with its HTTP status (0: no response).
	Requests []RobotsRequest
	// Status is the last answer's HTTP status (0: none); Body its body
	// (at most RobotsLimit bytes) when Status is 200.
	Status int
	Body   []byte
	// Outcome is what the fetcher made of it (RobotsParsed, ...) and
	// Message why it failed, for the failures.
	Outcome string
	Message string
	// Agent is the name matched against the User-agent lines.
	Agent string
	// CrawlDelay is the Crawl-delay of the group that applies (0: none).
	CrawlDelay time.Duration
}

// RobotsRequest is one robots.txt request of a RobotsFetch.
type RobotsRequest struct {
	URL        string `json:"url"`
	HTTPStatus int    `json:"http_status"`
}

// RobotsAllowed reports whether the robots.txt body (a 200 answer) lets
// agent fetch u, as the fetcher decides it, with the Crawl-delay of the
// group that applies and whether the body parsed (one that does not
// allows everything).
func RobotsAllowed(body []byte, agent string, u *url.URL) (allowed bool, crawlDelay time.Duration, parsed bool) {
	rules, parsed := parseRobots(body, Options{Agent: agent}.robotsAgent())
	return rules.allowed(u), rules.delay(), parsed
}

// robotsOutcome is how getting an origin's robots.txt ended.
type robotsOutcome uint8

const (
	robotsOK          robotsOutcome = iota // rules to apply
	robotsWait                             // not the server's turn yet: try later
	robotsAbandoned                        // the run is ending
	robotsDeferred                         // a 5xx: leave the server for the round
	robotsUnreachable                      // a network or DNS error
	robotsRefused                          // a private address (or a redirect to one), not allowed
)

// parseRobots turns a 200 answer's body into rules for agent. A file that
// does not parse allows everything, as an unreadable robots.txt does in
// RFC 9309.
func parseRobots(body []byte, agent string) (*robotsRules, bool) {
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return &robotsRules{allowAll: true, status: 200}, false
	}
	return &robotsRules{group: data.FindGroup(agent), status: 200}, true
}

// robotsFor returns the robots.txt rules for u's origin, fetching them if
// needed (Nutch's HttpRobotRulesParser): up to MaxRobotsRedirects
// redirects are followed; a 200 is parsed; any 4xx (401 and 403 included,
// as with Nutch's default http.robots.403.allow) and other codes allow
// everything; a 5xx defers the server's visits for the round (Nutch's
// http.robots.5xx.defer.visits); a network error makes the server
// unreachable, and a refused address, the server's own or a redirect
// target's, refused. Every request is a request to the server and waits
// for its turn; msg explains a failure.
func (r *run) robotsFor(ctx context.Context, s *server, u *url.URL) (rules *robotsRules, out robotsOutcome, msg string) {
	origin := u.Scheme + "://" + u.Host
	if rules := r.sched.robotsRules(s, origin); rules != nil {
		return rules, robotsOK, ""
	}
	// The first robots request waits like any request; the redirects
	// that follow are part of one visit and wait for their turn too.
	if !r.waitTurn(ctx, s, false) {
		if ctx.Err() != nil {
			return nil, robotsAbandoned, ""
		}
		return nil, robotsWait, ""
	}
	target := origin + "/robots.txt"
	var trace *RobotsFetch
	if r.o.OnRobots != nil {
		trace = &RobotsFetch{Origin: origin, Agent: r.agent}
		defer func() {
			if out == robotsAbandoned || out == robotsWait {
				return
			}
			switch out {
			case robotsDeferred:
				trace.Outcome = RobotsDeferred
			case robotsUnreachable:
				trace.Outcome = RobotsUnreachable
			case robotsRefused:
				trace.Outcome = RobotsRefused
			}
			trace.Message = msg
			if rules != nil {
				trace.CrawlDelay = rules.delay()
			}
			r.o.OnRobots(trace)
		}()
	}
	var resp *response
	for hop := 0; ; hop++ {
		var err error
		began := time.Now()
		resp, err = r.do(ctx, s, target, nil, RobotsLimit, true)
		if trace != nil {
			rq := RobotsRequest{URL: target}
			if resp != nil {
				rq.HTTPStatus = resp.status
				trace.Status = resp.status
			}
			trace.Requests = append(trace.Requests, rq)
		}
		r.o.Count(CounterRobotsRequests, 1)
		if resp != nil {
			r.sched.answered(s, resp.elapsed, resp.body.wire, resp.keepAlive, resp.serverClosed, err != nil, 0)
		} else if err != nil && ctx.Err() == nil {
			r.sched.answered(s, time.Since(began), 0, false, false, true, 0)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, robotsAbandoned, ""
			}
			var ref *RefusedError
			if errors.As(err, &ref) {
				if hop > 0 {
					return nil, robotsRefused, "refused to follow the robots.txt redirect to " + target + ": " + ref.reason()
				}
				return nil, robotsRefused, ref.Error()
			}
			return nil, robotsUnreachable, "robots.txt: " + describe(err)
		}
		if resp.status < 300 || resp.status >= 400 || hop >= MaxRobotsRedirects {
			break
		}
		loc := resp.header.Get("Location")
		next, err := urlutil.ResolveReference(target, loc)
		if loc == "" || err != nil || !strings.HasPrefix(next, "http") {
			break
		}
		target = next
		if nu, err := url.Parse(next); err == nil && r.sameServer(nu, s) {
			if !r.waitTurn(ctx, s, true) {
				return nil, robotsAbandoned, ""
			}
		}
	}
	switch st := resp.status; {
	case st == 200:
		var ok bool
		rules, ok = parseRobots(resp.body.data, r.agent)
		if !ok {
			r.o.Count(CounterRobotsUnparsable, 1)
		}
		if trace != nil {
			trace.Body, trace.Outcome = resp.body.data, RobotsParsed
			if !ok {
				trace.Outcome = RobotsUnparsable
			}
		}
	case st >= 500:
		r.o.Count(CounterRobotsDeferred, 1)
		return nil, robotsDeferred, fmt.Sprintf("robots.txt unavailable (HTTP %d)", st)
	default:
		rules = &robotsRules{allowAll: true, status: st}
		if trace != nil {
			trace.Outcome = RobotsAllowAll
		}
	}
	r.sched.setRobots(s, origin, rules)
	if d := rules.delay(); d > 0 {
		r.sched.setCrawlDelay(s, d)
	}
	return rules, robotsOK, ""
}
