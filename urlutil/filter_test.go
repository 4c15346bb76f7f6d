package urlutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/storage"
)

type filterCase struct {
	url    string
	ok     bool
	reason string
}

func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		ok, reason := f.Filter(c.url)
		if ok != c.ok || reason != c.reason {
			t.Errorf("Filter(%q) = %v, %q; want %v, %q", c.url, ok, reason, c.ok, c.reason)
		}
	}
}

func TestSchemeFilter(t *testing.T) {
	runFilterCases(t, NewSchemeFilter("http", "HTTPS"), []filterCase{
		{"http://a.com/", true, ""},
		{"https://a.com/", true, ""},
		{"HTTPS://a.com/", true, ""},
		{"ftp://a.com/", false, ReasonScheme},
		{"file:///etc/passwd", false, ReasonScheme},
		{"mailto:a@b.c", false, ReasonScheme},
		{"httpx://a.com/", false, ReasonScheme},
		{"//a.com/", false, ReasonInvalid},
		{"", false, ReasonInvalid},
	})
}

func TestLengthFilter(t *testing.T) {
	base := "http://a.com/"
	f := LengthFilter{Max: 2083}
	runFilterCases(t, f, []filterCase{
		{base, true, ""},
		{base + strings.Repeat("x", 2083-len(base)), true, ""},
		{base + strings.Repeat("x", 2084-len(base)), false, ReasonTooLong},
	})
}

func TestSuffixFilter(t *testing.T) {
	f := NewSuffixFilter(DefaultDenySuffixes())
	runFilterCases(t, f, []filterCase{
		{"http://a.com/logo.gif", false, ReasonSuffix},
		{"http://a.com/LOGO.GIF", false, ReasonSuffix},
		{"http://a.com/photo.JpEg", false, ReasonSuffix},
		{"http://a.com/dl/app.exe", false, ReasonSuffix},
		{"http://a.com/a.tar.gz", false, ReasonSuffix},
		{"http://a.com/style.css?v=3", false, ReasonSuffix}, // query ignored
		{"http://a.com/song.mp3#t=10", false, ReasonSuffix},
		{"http://a.com/font.woff2", false, ReasonSuffix},
		{"http://a.com/page.html", true, ""},
		{"http://a.com/doc.pdf", true, ""}, // not on Nutch's list
		{"http://a.com/", true, ""},
		{"http://example.com", true, ""},                 // ".com" is a suffix of the host, not the path
		{"http://a.com/search?q=foo.com", true, ""},      // nor of the query
		{"http://a.com/view?img=a.jpg", true, ""},        // a suffix in the query does not count
		{"http://a.com/images.gif/", true, ""},           // a directory
		{"http://a.com/gif", true, ""},                   // no dot
		{"http://a.com/x.giff", true, ""},                // a longer extension
		{"http://a.com/x.verylongextension", true, ""},   // longer than any suffix
		{"http://a.com/archive.7Z", false, ReasonSuffix}, // digits in suffix
		{"http://a.com/" + strings.Repeat("y", 30) + ".PNG", false, ReasonSuffix},
		{"nonsense", false, ReasonInvalid},
	})
	// Suffixes that are not one extension.
	g := NewSuffixFilter([]string{" .TAR.GZ ", "~", "/feed/", ""})
	runFilterCases(t, g, []filterCase{
		{"http://a.com/x.tar.gz", false, ReasonSuffix},
		{"http://a.com/x.gz", true, ""},
		{"http://a.com/backup~", false, ReasonSuffix},
		{"http://a.com/blog/feed/", false, ReasonSuffix},
		{"http://a.com/blog/", true, ""},
	})
	// Each call gives a fresh list: changing one does not change the next.
	l := DefaultDenySuffixes()
	l[0] = "changed"
	if DefaultDenySuffixes()[0] != ".gif" {
		t.Fatal("DefaultDenySuffixes shares state")
	}
}

func TestPathLoopFilter(t *testing.T) {
	f := PathLoopFilter{MaxRepeats: 3, MaxSegments: 8}
	runFilterCases(t, f, []filterCase{
		{"http://a.com/", true, ""},
		{"http://a.com/a/b/a/", true, ""},
		{"http://a.com/a/b/a/c/a/", false, ReasonPathLoop},    // Nutch's example shape
		{"http://a.com/x/a/b/a/c/a/d", false, ReasonPathLoop}, // anywhere in the path
		{"http://a.com/a/a/a", false, ReasonPathLoop},         // adjacent
		{"http://a.com/cal/2026/cal/2027/cal/2028", false, ReasonPathLoop},
		{"http://a.com/a//a//b", true, ""},      // empty segments don't count
		{"http://a.com/a/b?x=/a/a/a", true, ""}, // query ignored
		{"http://a.com/1/2/3/4/5/6/7/8", true, ""},
		{"http://a.com/1/2/3/4/5/6/7/8/9", false, ReasonTooDeep},
		{"http://a.com/aa/a/aaa/aa/a", true, ""}, // prefixes are not repeats
		{"bad", false, ReasonInvalid},
	})
	// A long path with the depth check off uses the map path.
	long := PathLoopFilter{MaxRepeats: 3}
	var b strings.Builder
	b.WriteString("http://a.com")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "/s%d", i)
	}
	runFilterCases(t, long, []filterCase{
		{b.String(), true, ""},
		{b.String() + "/s5/s5", false, ReasonPathLoop},
	})
	runFilterCases(t, PathLoopFilter{}, []filterCase{{"http://a.com/a/a/a/a", true, ""}})
}

func writeRules(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "regex-urlfilter.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Nutch's default regex-urlfilter.txt, without its backreference loop rule
// (RE2 has none; PathLoopFilter does that job).
const nutchDefaultRules = `# The default url filter.
# Better for whole-internet crawling.

# skip file: ftp: and mailto: urls
-^(file|ftp|mailto):

# skip image and other suffixes we can't yet parse
-\.(gif|GIF|jpg|JPG|png|PNG|ico|ICO|css|sit|eps|wmf|zip|ppt|mpg|xls|gz|rpm|tgz|mov|MOV|exe|jpeg|JPEG|bmp|BMP)$

# skip URLs containing certain characters as probable queries, etc.
-[?*!@=]

# accept anything else
+.
`

func TestRegexFilterNutchDefault(t *testing.T) {
	p := writeRules(t, nutchDefaultRules)
	f, err := LoadRegexRules(storage.NewLocal(), p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 4 || f.Name() != p {
		t.Fatalf("Len = %d, Name = %q", f.Len(), f.Name())
	}
	runFilterCases(t, f, []filterCase{
		{"http://a.com/page.html", true, ""},
		{"ftp://a.com/x", false, "regex:" + p + ":5"},
		{"mailto:x@y.z", false, "regex:" + p + ":5"},
		{"http://a.com/x.JPG", false, "regex:" + p + ":8"},
		{"http://a.com/x.Jpg", true, ""}, // the rule is case-sensitive, as in Nutch
		{"http://a.com/s?q=1", false, "regex:" + p + ":11"},
	})
}

func TestRegexFilterFirstMatchWinsAndNoMatchRejects(t *testing.T) {
	f, err := ParseRegexRules(strings.NewReader(
		"+^https?://([a-z0-9-]+\\.)*example\\.com/public/\n"+
			"-^https?://([a-z0-9-]+\\.)*example\\.com/\n"+
			"   indented lines are comments, as in Nutch\n"+
			"\t+tab-indented too\n"+
			"+^https?://other\\.org/  \r\n"), "rules.txt")
	if err != nil {
		t.Fatal(err)
	}
	runFilterCases(t, f, []filterCase{
		{"http://www.example.com/public/x", true, ""},
		{"http://www.example.com/private/x", false, "regex:rules.txt:2"},
		{"https://other.org/anything", true, ""}, // trailing blanks and CR trimmed
		{"https://third.net/", false, ReasonRegexNoMatch},
	})
}

func TestRegexFilterErrors(t *testing.T) {
	cases := []struct{ content, want string }{
		{"+.\n*bad\n", "rules.txt:2: a rule must start with '+' or '-'"},
		{"# c\n\n+(unclosed\n", "rules.txt:3: invalid regular expression \"(unclosed\""},
		{"-.*(/[^/]+)/[^/]+\\1/[^/]+\\1/\n", "rules.txt:1: invalid regular expression"},
		{"-.*(/[^/]+)/[^/]+\\1/[^/]+\\1/\n", "no backreferences"},
		{"+(?<!x)y\n", "lookaround"},
		{"+.\n-\n", "rules.txt:2: empty regular expression"},
		{"# only comments\n\n", "rules.txt: no rules"},
		{"", "no rules"},
	}
	for _, c := range cases {
		_, err := ParseRegexRules(strings.NewReader(c.content), "rules.txt")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRegexRules(%q) err = %v; want it to contain %q", c.content, err, c.want)
		}
	}
	// A real file: the error names its path.
	p := writeRules(t, "+ok\n?what\n")
	_, err := LoadRegexRules(storage.NewLocal(), p)
	if err == nil || !strings.Contains(err.Error(), p+":2") {
		t.Errorf("LoadRegexRules error %v does not name %s:2", err, p)
	}
	_, err = LoadRegexRules(storage.NewLocal(), filepath.Join(t.TempDir(), "missing.txt"))
	if err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	// Lines longer than bufio's default token size are fine.
	long := "+" + strings.Repeat("a", 100000) + "\n"
	if _, err := ParseRegexRules(strings.NewReader(long), "long.txt"); err != nil {
		t.Errorf("long line: %v", err)
	}
}

func TestNewFiltersDefaults(t *testing.T) {
	fs := NewFilters(DefaultFilterOptions())
	if len(fs) != 4 {
		t.Fatalf("default chain has %d filters; want 4", len(fs))
	}
	runFilterCases(t, fs, []filterCase{
		{"http://www.example.com/news/a.html", true, ""},
		{"https://www.example.com/", true, ""},
		{"ftp://www.example.com/", false, ReasonScheme},
		{"http://a.com/" + strings.Repeat("x", 2100), false, ReasonTooLong},
		{"http://a.com/img.PNG", false, ReasonSuffix},
		{"http://a.com/a/b/a/b/a/b/", false, ReasonPathLoop},
		{"http://a.com" + strings.Repeat("/s", 1) + strings.Repeat("/t0/t1/t2", 3), false, ReasonPathLoop},
		{"http://a.com/ftp.gif", false, ReasonSuffix},
	})
	deep := "http://a.com"
	for i := 0; i < 33; i++ {
		deep += fmt.Sprintf("/d%d", i)
	}
	runFilterCases(t, fs, []filterCase{{deep, false, ReasonTooDeep}})

	// The zero options give the empty chain, which accepts everything.
	if n := len(NewFilters(FilterOptions{})); n != 0 {
		t.Fatalf("zero options: %d filters", n)
	}
	runFilterCases(t, NewFilters(FilterOptions{}), []filterCase{{"anything", true, ""}})

	// Regex filters come last, after the cheap ones.
	rx, err := ParseRegexRules(strings.NewReader("-secret\n+.\n"), "r")
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultFilterOptions()
	o.Regex = []*RegexFilter{rx, nil}
	runFilterCases(t, NewFilters(o), []filterCase{
		{"http://a.com/secret/x.html", false, "regex:r:1"},
		{"http://a.com/secret/x.gif", false, ReasonSuffix},
		{"http://a.com/open", true, ""},
	})
	// FilterFunc plugs any function into a chain.
	chain := Filters{FilterFunc(func(u string) (bool, string) {
		return !strings.Contains(u, "calendar"), "custom"
	})}
	runFilterCases(t, chain, []filterCase{
		{"http://a.com/calendar/2026", false, "custom"},
		{"http://a.com/x", true, ""},
	})
}

func BenchmarkFilters(b *testing.B) {
	urls := []string{
		"https://www.example.com/news/2026/11/article-12345.html?page=2&lang=en",
		"http://h0042.sim.test/p/1234",
		"http://cdn.example.com/img/logo.png",
		"http://a.com/cal/2026/cal/2027/cal/2028/",
	}
	b.Run("default", func(b *testing.B) {
		fs := NewFilters(DefaultFilterOptions())
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			fs.Filter(urls[i%len(urls)])
			i++
		}
	})
	b.Run("default+nutch-regex", func(b *testing.B) {
		rx, err := ParseRegexRules(strings.NewReader(nutchDefaultRules), "nutch")
		if err != nil {
			b.Fatal(err)
		}
		o := DefaultFilterOptions()
		o.Regex = []*RegexFilter{rx}
		fs := NewFilters(o)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			fs.Filter(urls[i%len(urls)])
			i++
		}
	})
}
