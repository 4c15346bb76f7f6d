package fetcher

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// checkExplanation fails t unless ExplainRobots agrees with the fetcher's
// verdict (RobotsAllowed, temoto/robotstxt) for body, agent and u: the
// verdict, the Crawl-delay, whether the file parses and its sitemaps.
func checkExplanation(t *testing.T, body []byte, agent string, u *url.URL) *RobotsExplanation {
	t.Helper()
	ex := ExplainRobots(body, agent, u)
	allowed, delay, parsed := RobotsAllowed(body, agent, u)
	if ex.Allowed != allowed || ex.Parsed != parsed || (parsed && ex.CrawlDelay != delay) {
		t.Fatalf("robots.txt %q, agent %q, %s:\nexplained allowed=%v parsed=%v delay=%v (%s)\nfetcher   allowed=%v parsed=%v delay=%v",
			body, agent, u, ex.Allowed, ex.Parsed, ex.CrawlDelay, ex.Reason, allowed, parsed, delay)
	}
	if ex.Rule != nil && ex.Rule.Allow != ex.Allowed {
		t.Fatalf("robots.txt %q, %s: rule %+v decided, but allowed=%v", body, u, ex.Rule, ex.Allowed)
	}
	if parsed {
		if data, err := robotstxt.FromBytes(body); err == nil && !slices.Equal(data.Sitemaps, ex.Sitemaps) {
			t.Fatalf("robots.txt %q: sitemaps %q, the library's %q", body, ex.Sitemaps, data.Sitemaps)
		}
	}
	return ex
}

// randomRobots makes a robots.txt of the kinds of lines real ones have,
// malformed ones included.
func randomRobots(rng *rand.Rand) []byte {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	var b strings.Builder
	if rng.IntN(20) == 0 {
		b.WriteString("\ufeff")
	}
	if rng.IntN(4) > 0 {
		b.WriteString("User-agent: " + pick("*", "mybot", "my", "other") + "\n")
	}
	n := rng.IntN(12)
	for range n {
		if rng.IntN(8) == 0 {
			b.WriteString(pick(" ", "\t", "  "))
		}
		sep := pick(":", ": ", " : ", ":\t", " ", ":  ", "")
		switch rng.IntN(10) {
		case 0, 1, 2:
			b.WriteString(pick("User-agent", "user-agent", "USER-AGENT", "Useragent"))
			b.WriteString(sep)
			b.WriteString(pick("*", "mybot", "MyBot", "my", "m", "other", "mybot/1.0", "mybotx", "", "*bot"))
		case 3, 4, 5:
			b.WriteString(pick("Disallow", "disallow", "DISALLOW"))
			b.WriteString(sep)
			b.WriteString(randomRobotsPath(rng))
		case 6, 7:
			b.WriteString(pick("Allow", "allow"))
			b.WriteString(sep)
			b.WriteString(randomRobotsPath(rng))
		case 8:
			b.WriteString(pick("Crawl-delay", "crawldelay", "Sitemap", "Host", "Foo", "Sitemap"))
			b.WriteString(sep)
			b.WriteString(pick("1", "2.5", "-1", "abc", "0", "1e400", "http://a.example/sitemap.xml", "https://b.example:8080/s.xml", "", "3", "0.5", "/x"))
		default:
			b.WriteString(pick("# comment", "", "garbage line", ":", "Disallow:/a:b", "User-agent: a b", "#"))
		}
		if rng.IntN(5) == 0 {
			b.WriteString(pick(" # note", "#x", " "))
		}
		b.WriteString(pick("\n", "\n", "\r\n", "\r", "\n\n", "\n \n"))
	}
	return []byte(b.String())
}

func randomRobotsPath(rng *rand.Rand) string {
	paths := []string{"/", "", "/a", "/a/", "/a*", "*", "/*.pdf$", "/a$", "a", "/a/b", "/%61", "/a?x=1",
		"/*?", "/a b", "$", "/a#b", "/é", "*a", "/$", "/ab", "/a/b/c", "/**", "/a*b", "/private", "/x.pdf"}
	return paths[rng.IntN(len(paths))]
}

var robotsTestURLs = []string{"/", "/a", "/a/", "/a/b", "/ab", "/b", "/x.pdf", "/a?x=1", "/%61", "/a.pdf?x",
	"/%C3%A9", "/a/b/c", "/private/x", "/a:b", "/?", "/a*b"}

// TestExplainRobotsAgreesWithFetcher generates many robots.txt files and
// checks that the explanation's verdict is the fetcher's for each of
// several URLs and agents.
func TestExplainRobotsAgreesWithFetcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	agents := []string{"mybot", "MyBot/2.0", "other", "m", "mybotx"}
	denied, byRule := 0, 0
	for range 3000 {
		body := randomRobots(rng)
		for _, p := range robotsTestURLs {
			u, err := url.Parse("http://h.example" + p)
			if err != nil {
				t.Fatal(err)
			}
			ex := checkExplanation(t, body, agents[rng.IntN(len(agents))], u)
			if !ex.Allowed {
				denied++
			}
			if ex.Rule != nil {
				byRule++
			}
		}
	}
	// The generator must exercise both verdicts and the rules.
	if denied < 3000 || byRule < 6000 {
		t.Fatalf("generator too weak: %d denied, %d decided by a rule", denied, byRule)
	}
}

// FuzzExplainRobots checks the explanation against the fetcher's verdict
// on arbitrary files.
func FuzzExplainRobots(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a\nAllow: /a/b\n"), "mybot", "/a/b")
	f.Add([]byte("User-agent: my\nDisallow: /*.pdf$\n"), "mybot", "/x.pdf")
	f.Add([]byte("user-agent mybot\r\ndisallow /\r\n"), "mybot", "/")
	f.Add([]byte("Crawl-delay: 1\nUser-agent: *\n"), "a", "/")
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		if strings.TrimSpace(agent) == "" || strings.ContainsAny(agent, "\r\n") {
			return
		}
		u, err := url.Parse("http://h.example/" + strings.TrimPrefix(path, "/"))
		if err != nil {
			return
		}
		checkExplanation(t, body, agent, u)
	})
}

// TestExplainRobotsRules checks which line decides, and why, on files
// written by hand.
func TestExplainRobotsRules(t *testing.T) {
	const file = `# robots.txt
User-agent: *
Disallow: /private
Allow: /private/open   # a public corner

User-agent: mybot
User-agent: otherbot
Disallow: /a
Allow: /a
Disallow: /*.pdf$
Crawl-delay: 2.5

Sitemap: http://h.example/sitemap.xml
`
	for _, c := range []struct {
		agent, path string
		allowed     bool
		line        int    // 0: no rule
		groupAgent  string // "": no group
		reason      string // part of the reason
	}{
		{"somebot", "/private/x", false, 3, "*", "longest matching rule"},
		{"somebot", "/private/open/y", true, 4, "*", "longest matching rule"},
		{"somebot", "/public", true, 0, "*", "allowed by default"},
		{"mybot", "/private/x", true, 0, "mybot", "allowed by default"},
		{"MyBot/1.0", "/a/x", false, 8, "mybot", "first listed wins"},
		{"otherbot", "/doc/x.pdf", false, 10, "otherbot", "regular expression"},
	} {
		u, err := url.Parse("http://h.example" + c.path)
		if err != nil {
			t.Fatal(err)
		}
		ex := checkExplanation(t, []byte(file), c.agent, u)
		line := 0
		if ex.Rule != nil {
			line = ex.Rule.Line
		}
		if ex.Allowed != c.allowed || line != c.line || !strings.Contains(ex.Reason, c.reason) {
			t.Errorf("%s %s: allowed %v by line %d (%s); want %v by line %d (%q)", c.agent, c.path, ex.Allowed, line, ex.Reason, c.allowed, c.line, c.reason)
		}
		if ex.Group == nil || ex.Group.Agent != c.groupAgent {
			t.Errorf("%s %s: group %+v, want %q", c.agent, c.path, ex.Group, c.groupAgent)
		}
	}
	u, _ := url.Parse("http://h.example/")
	ex := ExplainRobots([]byte(file), "mybot", u)
	if ex.Group == nil || !slices.Equal(ex.Group.Lines, []int{6}) || ex.CrawlDelay.Seconds() != 2.5 {
		t.Errorf("mybot's group: %+v, crawl-delay %v; want lines [6], 2.5s", ex.Group, ex.CrawlDelay)
	}
	if !slices.Equal(ex.Sitemaps, []string{"http://h.example/sitemap.xml"}) {
		t.Errorf("sitemaps %q", ex.Sitemaps)
	}
	ex = ExplainRobots([]byte("Disallow: /\n"), "mybot", u)
	if ex.Parsed || !ex.Allowed || !strings.Contains(ex.ParseError, "before User-agent") {
		t.Errorf("a rule before any User-agent: %+v; want unparsable, allowed", ex)
	}
}
