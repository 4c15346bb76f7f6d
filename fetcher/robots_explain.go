package fetcher

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The fetcher decides robots.txt with github.com/temoto/robotstxt, which
// does not say which group and rule decided. ExplainRobots reads a
// robots.txt as that library does, token for token (its quirks included:
// a group is chosen by the longest User-agent that is a prefix of the
// agent's name; the longest matching rule wins, a wildcard rule counting
// the length of its regular expression; of two rules of one length the
// first listed wins; a file with one bad line is unparsable, which allows
// everything), and keeps the line of every group and rule. Tests check
// that its verdict is the library's on many generated files.

// RobotsExplanation says why robots.txt allows or denies a URL (see
// ExplainRobots).
type RobotsExplanation struct {
	// Allowed is the verdict, the fetcher's.
	Allowed bool
	// Parsed is false when the file does not parse (ParseError says
	// why): the fetcher then allows everything. A file with no rules at
	// all parses.
	Parsed     bool
	ParseError string
	// Group is the group that applies to the agent; nil when none does
	// (no group for the agent and no "User-agent: *").
	Group *RobotsGroup
	// Rule is the rule that decided; nil when none of the group's rules
	// matches (everything is allowed by default). Matching are all the
	// group's rules that match, in file order (Rule among them).
	Rule     *RobotsRule
	Matching []RobotsRule
	// Reason explains the verdict in a sentence.
	Reason string
	// CrawlDelay is the group's Crawl-delay (0: none).
	CrawlDelay time.Duration
	// Sitemaps are the Sitemap lines' URLs, in file order.
	Sitemaps []string
	// Path is what the rules were matched against: the URL's escaped path
	// ("/" if empty) and query.
	Path string
}

// RobotsGroup is one agent's group of a robots.txt: the rules of every
// group naming the agent, in file order.
type RobotsGroup struct {
	// Agent is the User-agent value (lower case) chosen for the agent;
	// Lines are the lines naming it (1-based).
	Agent string
	Lines []int
	Rules []RobotsRule
	// CrawlDelay is the last Crawl-delay of the agent's groups.
	CrawlDelay time.Duration
}

// RobotsRule is one Allow or Disallow line.
type RobotsRule struct {
	// Line is the rule's line (1-based) and Text the line as written
	// (comments and surrounding space removed).
	Line int
	Text string
	// Allow tells Allow from Disallow; Path is the rule's path as the
	// library keeps it (a "/" added in front, trailing "*" removed), and
	// Pattern is true for a path with "*" or "$", matched as a regular
	// expression.
	Allow   bool
	Path    string
	Pattern bool
	// Length is the rule's precedence: the path's length, or the length
	// of a pattern's regular expression.
	Length int

	re *regexp.Regexp
}

// matches reports whether the rule matches path, as the library matches.
func (r *RobotsRule) matches(path string) bool {
	if r.re != nil {
		return r.re.MatchString(path)
	}
	return strings.HasPrefix(path, r.Path)
}

// Directive returns "Allow" or "Disallow".
func (r *RobotsRule) Directive() string {
	if r.Allow {
		return "Allow"
	}
	return "Disallow"
}

// robotsToken is one token of a robots.txt and the line it starts on.
type robotsToken struct {
	text string
	line int
}

const robotsEOL = "\n"

// scanRobots splits body into tokens as the library's scanner does.
func scanRobots(body []byte) []robotsToken {
	var toks []robotsToken
	pos, line := 0, 1
	if bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		pos = 3
	}
	next := func() (rune, int) {
		if pos >= len(body) {
			return -1, 0
		}
		if body[pos] < utf8.RuneSelf {
			return rune(body[pos]), 1
		}
		return utf8.DecodeRune(body[pos:])
	}
	isSpace := func(c rune) bool { return c == ' ' || c == '\t' || c == '\v' }
	isEOL := func(c rune) bool { return c == '\n' || c == '\r' }
	advance := func(c rune, w int) {
		if c == '\n' {
			line++
		}
		pos += w
	}
	skipEOLs := func() {
		for c, w := next(); c != -1 && isEOL(c); c, w = next() {
			advance(c, w)
		}
	}
	keyFound := false
	for {
		c, w := next()
		for c != -1 && isSpace(c) {
			advance(c, w)
			c, w = next()
		}
		switch {
		case c == -1:
			return toks
		case isEOL(c):
			keyFound = false
			at := line
			skipEOLs()
			toks = append(toks, robotsToken{robotsEOL, at})
			continue
		case c == '#':
			keyFound = false
			at := line
			for c != -1 && !isEOL(c) {
				advance(c, w)
				c, w = next()
			}
			skipEOLs()
			if c, _ = next(); c == -1 {
				return toks
			}
			toks = append(toks, robotsToken{robotsEOL, at})
			continue
		}
		at := line
		var tok strings.Builder
		tok.WriteRune(c)
		advance(c, w)
		for c, w = next(); c != -1 && !isSpace(c) && !isEOL(c); c, w = next() {
			if c == ':' && !keyFound {
				advance(c, w)
				keyFound = true
				break
			}
			tok.WriteRune(c)
			advance(c, w)
		}
		toks = append(toks, robotsToken{tok.String(), at})
	}
}

// robotsGroupSet is a parsed robots.txt: the groups by agent.
type robotsGroupSet struct {
	groups   map[string]*RobotsGroup
	sitemaps []string
}

// parseRobotsLines parses body as the library does; lines are body's
// lines, for the rules' text.
func parseRobotsLines(body []byte) (*robotsGroupSet, error) {
	toks := scanRobots(body)
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(body)), "\n")
	text := func(line int) string {
		if line < 1 || line > len(lines) {
			return ""
		}
		l := lines[line-1]
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		return strings.TrimSpace(strings.TrimPrefix(l, "\ufeff"))
	}
	set := &robotsGroupSet{groups: map[string]*RobotsGroup{}}
	var agents []string
	emptyGroup := true
	var errs []string
	uaLines := map[string][]int{}
	forAgents := func(f func(*RobotsGroup)) {
		for _, a := range agents {
			g := set.groups[a]
			if g == nil {
				g = &RobotsGroup{Agent: a}
				set.groups[a] = g
			}
			f(g)
		}
	}
	for p := 0; p < len(toks); {
		t1 := toks[p]
		p++
		if p >= len(toks) {
			break // a key with no value ends the file
		}
		t2 := toks[p].text
		key := strings.ToLower(t1.text)
		if key == robotsEOL {
			continue
		}
		p++ // the value
		switch key {
		case "user-agent", "useragent":
			if !emptyGroup {
				agents = nil
			}
			if len(agents) == 0 {
				emptyGroup = true
			}
			a := strings.ToLower(t2)
			agents = append(agents, a)
			uaLines[a] = append(uaLines[a], t1.line)
		case "disallow", "allow":
			if len(agents) == 0 {
				errs = append(errs, fmt.Sprintf("line %d: %s before User-agent", t1.line, t1.text))
				continue
			}
			emptyGroup = false
			r := RobotsRule{Line: t1.line, Text: text(t1.line), Allow: key == "allow"}
			path := t2
			if !strings.HasPrefix(path, "*") && !strings.HasPrefix(path, "/") {
				path = "/" + path
			}
			path = strings.TrimRight(path, "*")
			if strings.ContainsAny(path, "*$") {
				expr := regexp.QuoteMeta(path)
				expr = strings.ReplaceAll(expr, `\*`, `.*`)
				expr = strings.ReplaceAll(expr, `\$`, `$`)
				re, err := regexp.Compile(expr)
				if err != nil {
					errs = append(errs, fmt.Sprintf("line %d: %v", t1.line, err))
					continue
				}
				r.re, r.Pattern, r.Length = re, true, len(re.String())
			} else {
				r.Length = len(path)
			}
			r.Path = path
			forAgents(func(g *RobotsGroup) { g.Rules = append(g.Rules, r) })
		case "sitemap":
			set.sitemaps = append(set.sitemaps, t2)
		case "crawl-delay", "crawldelay":
			cd, err := strconv.ParseFloat(t2, 64)
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("line %d: Crawl-delay %q: not a number", t1.line, t2))
				continue
			case cd < 0 || math.IsInf(cd, 0) || math.IsNaN(cd):
				errs = append(errs, fmt.Sprintf("line %d: Crawl-delay invalid value %q", t1.line, t2))
				continue
			}
			if len(agents) == 0 {
				errs = append(errs, fmt.Sprintf("line %d: Crawl-delay before User-agent", t1.line))
				continue
			}
			emptyGroup = false
			d := time.Duration(cd * float64(time.Second))
			forAgents(func(g *RobotsGroup) { g.CrawlDelay = d })
		}
	}
	for a, g := range set.groups {
		g.Lines = uaLines[a]
	}
	if len(errs) > 0 {
		return set, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return set, nil
}

// findGroup returns the group for agent (lower case), as the library
// chooses it: the longest User-agent that is a prefix of agent, else "*".
func (set *robotsGroupSet) findGroup(agent string) *RobotsGroup {
	best, n := set.groups["*"], 0
	if best != nil {
		n = 1
	}
	for a, g := range set.groups {
		if a != "*" && strings.HasPrefix(agent, a) && len(a) > n {
			best, n = g, len(a)
		}
	}
	return best
}

// ExplainRobots reads body, a robots.txt answered with 200, for agent (the
// fetcher's agent name, its product token matched) and u, as the fetcher
// does, and explains the verdict.
func ExplainRobots(body []byte, agent string, u *url.URL) *RobotsExplanation {
	agent = Options{Agent: agent}.robotsAgent()
	ex := &RobotsExplanation{Allowed: true, Parsed: true, Path: robotsPath(u)}
	if len(bytes.TrimSpace(body)) == 0 {
		ex.Reason = "robots.txt is empty: everything is allowed"
		return ex
	}
	set, err := parseRobotsLines(body)
	if err != nil {
		ex.Parsed, ex.ParseError = false, err.Error()
		ex.Reason = "robots.txt does not parse (" + err.Error() + "): everything is allowed, as for an unreadable robots.txt"
		return ex
	}
	ex.Sitemaps = set.sitemaps
	g := set.findGroup(agent)
	if g == nil {
		ex.Reason = fmt.Sprintf("no User-agent line matches %q and there is no \"User-agent: *\": everything is allowed", agent)
		return ex
	}
	ex.Group, ex.CrawlDelay = g, g.CrawlDelay
	var best *RobotsRule
	n := 0
	for i := range g.Rules {
		r := &g.Rules[i]
		if !r.matches(ex.Path) && !(r.re == nil && r.Path == "/") {
			continue
		}
		if r.re == nil && r.Path == "/" {
			// The library's "weakest match": "/" counts when nothing
			// matched before it.
			if n == 0 {
				best, n = r, 1
			}
			ex.Matching = append(ex.Matching, *r)
			continue
		}
		ex.Matching = append(ex.Matching, *r)
		if r.Length > n {
			best, n = r, r.Length
		}
	}
	if best == nil {
		ex.Reason = fmt.Sprintf("no rule of the group matches %s: allowed by default", ex.Path)
		return ex
	}
	rule := *best
	ex.Rule = &rule
	ex.Allowed = rule.Allow
	kind := "path"
	if rule.Pattern {
		kind = "pattern (length of its regular expression)"
	}
	ex.Reason = fmt.Sprintf("line %d %q is the longest matching rule for %s (%s length %d)", rule.Line, rule.Text, ex.Path, kind, rule.Length)
	for _, m := range ex.Matching {
		if m.Line != rule.Line && m.Length == rule.Length {
			ex.Reason += fmt.Sprintf("; line %d %q is as long but comes later, and the first listed wins", m.Line, m.Text)
			break
		}
	}
	return ex
}
