package urlutil

import "testing"

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.example.com/a":      "www.example.com",
		"http://WWW.Example.com:8080/a": "www.example.com",
		"https://u:p@host.org/":         "host.org",
		"http://[2001:db8::1]:8080/x":   "[2001:db8::1]",
		"http://127.0.0.1:80/":          "127.0.0.1",
		"http://a.com?x=http://b.com/":  "a.com",
		"http://a.com#frag":             "a.com",
		"http://a.com":                  "a.com",
		"not a url":                     "",
		"mailto:x@y.com":                "",
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestDomain(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.example.com/":      "example.com",
		"http://example.com/":          "example.com",
		"http://a.b.example.co.uk/":    "example.co.uk",
		"http://foo.blogspot.com/":     "foo.blogspot.com", // a private suffix on the list
		"http://x.y.github.io/":        "y.github.io",
		"http://co.uk/":                "co.uk", // a public suffix itself
		"http://com/":                  "com",
		"http://127.0.0.1:8080/":       "127.0.0.1",
		"http://[2001:db8::1]/":        "[2001:db8::1]",
		"http://localhost:8080/":       "localhost",
		"http://h0001.sim.test/p/1":    "h0001.sim.test", // .test is not on the list
		"http://intranet.corp.local/":  "intranet.corp.local",
		"http://xn--bcher-kva.de/":     "xn--bcher-kva.de",
		"http://www.xn--bcher-kva.de/": "xn--bcher-kva.de",
		"junk":                         "",
	} {
		if got := Domain(in); got != want {
			t.Errorf("Domain(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestDepth(t *testing.T) {
	for in, want := range map[string]int{
		"http://a.com/":           0,
		"http://a.com":            0,
		"http://a.com/x":          1,
		"http://a.com/x/":         1,
		"http://a.com/a/b/":       2,
		"http://a.com/a//b":       2,
		"http://a.com/a/b/c.html": 3,
		"http://a.com/a?x=/b/c/d": 1,
		"http://a.com/a#/b/c":     1,
		"nonsense":                0,
	} {
		if got := Depth(in); got != want {
			t.Errorf("Depth(%q) = %d; want %d", in, got, want)
		}
	}
}

func TestScope(t *testing.T) {
	from := "http://www.example.com/a/page.html"
	cases := []struct {
		s    Scope
		to   string
		want bool
	}{
		{ScopeAny, "http://other.org/", true},
		{ScopeAny, "junk", true},
		{ScopeHost, "http://www.example.com/b", true},
		{ScopeHost, "https://www.example.com:8443/b", true}, // host, not origin
		{ScopeHost, "http://shop.example.com/", false},
		{ScopeHost, "junk", false},
		{ScopeDomain, "http://shop.example.com/", true},
		{ScopeDomain, "http://example.com/", true},
		{ScopeDomain, "http://example.org/", false},
		{ScopeDomain, "http://evil-example.com/", false},
		{ScopeDomain, "junk", false},
	}
	for _, c := range cases {
		if got := c.s.Allows(from, c.to); got != c.want {
			t.Errorf("%v.Allows(%q, %q) = %v; want %v", c.s, from, c.to, got, c.want)
		}
		ok, reason := c.s.Check(from, c.to)
		if ok != c.want || (ok && reason != "") || (!ok && reason != "scope-"+c.s.String()) {
			t.Errorf("%v.Check(%q) = %v, %q", c.s, c.to, ok, reason)
		}
	}
	// Hosts outside the public suffix list are their own domain, so the
	// synthetic web's hosts are separate domains.
	if ScopeDomain.Allows("http://h0001.sim.test/", "http://h0002.sim.test/") {
		t.Error("h0001.sim.test and h0002.sim.test share a domain")
	}
	if !ScopeDomain.Allows("http://h0001.sim.test/", "http://h0001.sim.test/x") {
		t.Error("same host not in domain scope")
	}
	// Two blogs on blogspot.com are different registered domains.
	if ScopeDomain.Allows("http://a.blogspot.com/", "http://b.blogspot.com/") {
		t.Error("a.blogspot.com and b.blogspot.com share a domain")
	}
	for in, want := range map[string]Scope{"": ScopeAny, "any": ScopeAny, "HOST": ScopeHost, " domain ": ScopeDomain} {
		got, err := ParseScope(in)
		if err != nil || got != want {
			t.Errorf("ParseScope(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseScope("site"); err == nil {
		t.Error("ParseScope(site) succeeded")
	}
	if Scope(9).String() != "Scope(9)" || Scope(9).Allows(from, from) {
		t.Error("unknown scope")
	}
}

func BenchmarkDomain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Domain("https://www.news.example.co.uk/article/1")
	}
}
