package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trapsRun runs trawl in this process with a clean environment and
// returns its exit status and output.
func trapsRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := []string{"HOME=" + t.TempDir()}
	code = run(context.Background(), append([]string{"trawl"}, args...), strings.NewReader(""), &out, &errb, env)
	return code, out.String(), errb.String()
}

// trapsLastLine returns the last non-empty line of s.
func trapsLastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestInjectNoValidURLFails(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	garbage := filepath.Join(dir, "garbage.txt")
	writeTestFile(t, garbage, "not a url\nmailto:joe@example.com\ngopher://a.example/\nhttp://bad host/\n# a comment\n")

	// A new crawl: exit 3, a message naming the file and saying why, and
	// no crawl directory created.
	code, stdout, stderr := trapsRun(t, "--log-level", "warn", "--crawl", crawl, "inject", garbage)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailure, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	last := trapsLastLine(stderr)
	for _, want := range []string{"trawl: inject: no valid URL in " + garbage, "4 of 5 lines rejected",
		"3 not a valid URL", "1 rejected by the URL filters", "garbage.txt:1:", "missing scheme", "and 1 more"} {
		if !strings.Contains(last, want) {
			t.Errorf("error line %q lacks %q", last, want)
		}
	}
	if _, err := os.Stat(crawl); err == nil {
		t.Errorf("a failed inject created %s", crawl)
	}

	// An existing CrawlDB is left as it was.
	good := filepath.Join(dir, "good.txt")
	writeTestFile(t, good, "http://a.example/\nhttp://b.example/\n")
	if code, _, stderr := trapsRun(t, "--log-level", "warn", "--crawl", crawl, "inject", good); code != exitOK {
		t.Fatalf("inject: exit %d\n%s", code, stderr)
	}
	dump := func() string {
		t.Helper()
		code, out, stderr := trapsRun(t, "--log-level", "warn", "--crawl", crawl, "readdb", "dump", "--format", "json")
		if code != exitOK {
			t.Fatalf("readdb dump: exit %d\n%s", code, stderr)
		}
		return out
	}
	before := dump()
	cur := filepath.Join(crawl, "crawldb", "current")
	curBefore, err := os.Stat(cur)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := trapsRun(t, "--crawl", crawl, "inject", "--overwrite", garbage); code != exitFailure {
		t.Fatalf("inject of garbage into a CrawlDB: exit %d, want %d\n%s", code, exitFailure, stderr)
	}
	curAfter, err := os.Stat(cur)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(curBefore, curAfter) {
		t.Error("a failed inject installed a new CrawlDB version")
	}
	if after := dump(); after != before {
		t.Errorf("a failed inject changed the CrawlDB:\n%s\nwas\n%s", after, before)
	}
	entries, _ := os.ReadDir(filepath.Join(crawl, "crawldb"))
	for _, e := range entries {
		if e.Name() != "current" {
			t.Errorf("a failed inject left %s in the CrawlDB directory", e.Name())
		}
	}

	// Some valid lines: success, and the rejected lines are counted.
	mixed := filepath.Join(dir, "mixed.txt")
	writeTestFile(t, mixed, "not a url\nhttp://c.example/\n")
	code, _, stderr = trapsRun(t, "--log-level", "warn", "--crawl", crawl, "inject", mixed)
	if code != exitOK {
		t.Fatalf("inject of a partly valid file: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "seed lines rejected") || !strings.Contains(stderr, "rejected=1") {
		t.Errorf("no count of the rejected lines on stderr:\n%s", stderr)
	}
	if !strings.Contains(dump(), "http://c.example/") {
		t.Error("the valid URL of a partly valid file was not injected")
	}
}

func TestInjectCredentialsNeverShown(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	seeds := filepath.Join(dir, "seeds.txt")
	writeTestFile(t, seeds, strings.Join([]string{
		"http://user:pass@a.example/private",
		"https://admin:pass@b.example/\tscore=2",
		"http://user:pass@bad host/",
		"http://c.example/\thttp://user:pass@d.example/",
		"user:pass@e.example/",
	}, "\n")+"\n")
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := trapsRun(t, "--log-level", "debug", "--log-format", format, "--crawl", crawl, "inject", seeds)
		if code != exitOK {
			t.Fatalf("inject: exit %d\n%s", code, stderr)
		}
		if strings.Contains(stdout+stderr, "pass") {
			t.Errorf("--log-format %s: the output shows a password:\n%s%s", format, stdout, stderr)
		}
		if n := strings.Count(stderr, "credentials removed from URLs"); n != 1 {
			t.Errorf("--log-format %s: stderr says %d times that credentials were removed, want once:\n%s", format, n, stderr)
		}
	}
	code, stdout, stderr := trapsRun(t, "--log-level", "warn", "--crawl", crawl, "readdb", "dump", "--format", "json")
	if code != exitOK {
		t.Fatalf("readdb dump: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stdout, "pass") || strings.Contains(stdout, "admin") {
		t.Errorf("the CrawlDB holds credentials:\n%s", stdout)
	}
	for _, u := range []string{`"http://a.example/private"`, `"https://b.example/"`} {
		if !strings.Contains(stdout, u) {
			t.Errorf("the CrawlDB lacks %s:\n%s", u, stdout)
		}
	}
}
