package urlutil

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/trawl/trawl/storage"
)

// RegexFilter is a rule list in Nutch's regex-urlfilter.txt syntax:
//
//	# comment
//	-\.(gif|jpg|png)$
//	+^https?://([a-z0-9-]+\.)*example\.com/
//
// Each rule is '+' (accept) or '-' (reject) followed by a regular
// expression that is searched for anywhere in the URL. The first rule that
// matches decides; a URL that no rule matches is rejected, as in Nutch.
// Blank lines and lines starting with '#', a space or a tab are ignored.
//
// The expressions use Go's RE2 syntax, which is Java's minus backreferences
// and lookaround; Nutch's default loop rule "-.*(/[^/]+)/[^/]+\1/[^/]+\1/"
// cannot be written in it, and PathLoopFilter does that job.
type RegexFilter struct {
	name  string
	rules []regexRule
}

type regexRule struct {
	accept bool
	re     *regexp.Regexp
	reason string // for reject rules: "regex:<name>:<line>"
}

// ParseRegexRules reads rules from r; name (usually the file's path) is
// used in error messages and in rejection reasons. A bad line, a regular
// expression that does not compile, or a file without any rule (which would
// reject every URL) is an error naming the file and line.
func ParseRegexRules(r io.Reader, name string) (*RegexFilter, error) {
	f := &RegexFilter{name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \t\r")
		if text == "" {
			continue
		}
		var accept bool
		switch text[0] {
		case '+':
			accept = true
		case '-':
			accept = false
		case '#', ' ', '\t':
			continue
		default:
			return nil, fmt.Errorf("urlutil: %s:%d: a rule must start with '+' or '-', '#' starts a comment: %q", name, line, text)
		}
		expr := text[1:]
		if expr == "" {
			return nil, fmt.Errorf("urlutil: %s:%d: empty regular expression after %q (use %c. to match every URL)", name, line, text[0], text[0])
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			hint := ""
			if strings.Contains(expr, `\1`) || strings.Contains(expr, "(?=") || strings.Contains(expr, "(?!") ||
				strings.Contains(expr, "(?<=") || strings.Contains(expr, "(?<!") {
				hint = " (Go's RE2 syntax has no backreferences or lookaround; for repeated path segments use the path-loop filter)"
			}
			return nil, fmt.Errorf("urlutil: %s:%d: invalid regular expression %q: %v%s", name, line, expr, err, hint)
		}
		rule := regexRule{accept: accept, re: re}
		if !accept {
			rule.reason = fmt.Sprintf("regex:%s:%d", name, line)
		}
		f.rules = append(f.rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("urlutil: read regex rules %s after line %d: %w", name, line, err)
	}
	if len(f.rules) == 0 {
		return nil, fmt.Errorf("urlutil: %s: no rules; a rule file without rules would reject every URL (add \"+.\" to accept all)", name)
	}
	return f, nil
}

// LoadRegexRules reads a rule file from a file system (local or HDFS).
func LoadRegexRules(fsys storage.FS, path string) (*RegexFilter, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("urlutil: load regex rules: %w", err)
	}
	defer f.Close()
	return ParseRegexRules(f, path)
}

// Name is the name the rules were parsed under.
func (f *RegexFilter) Name() string { return f.name }

// Len is the number of rules.
func (f *RegexFilter) Len() int { return len(f.rules) }

// Filter implements Filter: the first matching rule decides; no match
// rejects with ReasonRegexNoMatch.
func (f *RegexFilter) Filter(u string) (bool, string) {
	for i := range f.rules {
		r := &f.rules[i]
		if r.re.MatchString(u) {
			return r.accept, r.reason
		}
	}
	return false, ReasonRegexNoMatch
}
