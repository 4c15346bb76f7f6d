package urlutil

import (
	"errors"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"http://a.com/", "http://a.com/"},
		{"http://user:pass@a.com/x", "http://a.com/x"},
		{"HTTPS://user:pass@a.com", "HTTPS://a.com"},
		{"http://user@a.com/", "http://a.com/"},
		{"http://@a.com/", "http://a.com/"},
		{"http://a@b@c.com/", "http://c.com/"},
		{`http:\\user:pass@a.com\x`, `http:\\a.com\x`},
		{"http:user:pass@a.com", "http:a.com"},
		{"http:/user:pass@a.com/", "http:/a.com/"},
		{"http:/\t/user:pass@a.com/", "http:/\t/a.com/"},
		{"http://us er:pa ss@a.com/x", "http://a.com/x"},
		{"http://user:pa\tss@a.com/x", "http://a.com/x"},
		{"ftp://anonymous:me@ftp.example.com/pub", "ftp://ftp.example.com/pub"},
		{"git+ssh://git@h.example/r", "git+ssh://h.example/r"},
		{"//user:pass@a.com/x", "//a.com/x"},
		{"user:pass@a.com/x", "a.com/x"},
		{"my_user:p@ss@a.com", "a.com"},
		{"proxy=user:pass@h:8080", "h:8080"}, // more than needed, on the safe side
		{"k=http://user:pass@h/", "k=http://h/"},
		{`field "http://user:pass@b.example/" is not key=value`, `field "http://b.example/" is not key=value`},
		{"see http://a:b@h1.example/ and ftp://c:d@h2.example/ too", "see http://h1.example/ and ftp://h2.example/ too"},
		{"x\thttp://u:p@h.example/\tscore=1", "x\thttp://h.example/\tscore=1"},
		// Not userinfo: left alone.
		{"mailto:joe@example.com", "mailto:joe@example.com"},
		{"joe@example.com", "joe@example.com"},
		{"http://a.com/x@y", "http://a.com/x@y"},
		{"http://a.com/~u:p@x", "http://a.com/~u:p@x"},
		{"http://a.com/a:b@c", "http://a.com/a:b@c"},
		{"no at sign: http://a.com/", "no at sign: http://a.com/"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHasUserinfo(t *testing.T) {
	for in, want := range map[string]bool{
		"http://user:pass@a.com/":    true,
		"http://user@a.com/":         true,
		"HTTP:\\\\u:p@a.com":         true,
		" http://u:p\t@a.com/ ":      true,
		"http://@a.com/":             false, // nothing before the '@'
		"http://a.com/x@y":           false,
		"http://a.com/?u=a:b@c":      false,
		"mailto:joe@example.com":     false,
		"user:pass@a.com":            false, // rejected before the authority
		"http://a.com/":              false,
		"http://u:p@a.com/\x01x":     false, // rejected: control character
		"foo://user:pass@a.example/": true,
	} {
		if got := HasUserinfo(in); got != want {
			t.Errorf("HasUserinfo(%q) = %v, want %v", in, got, want)
		}
	}
}

// Errors about a URL that does not normalize never repeat its userinfo.
func TestNormalizeErrorRedacted(t *testing.T) {
	for _, in := range []string{
		"http://user:secret@bad host/",
		"http://user:secret@a.com:99999/",
		"http://user:secret@a.com:8o/",
		"http://user:secret@/",
		"user:secret@a.com/x",
		"http:user:secret@a..com",
		"http://user:secret@a.com/\x01x",
		"ftp://user:secret@[::1/",
	} {
		_, err := Normalize(in)
		if err == nil {
			t.Errorf("Normalize(%q) succeeded", in)
			continue
		}
		var ne *NormalizeError
		if !errors.As(err, &ne) {
			t.Errorf("Normalize(%q): %T, not a *NormalizeError", in, err)
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "user") {
			t.Errorf("Normalize(%q): error repeats the userinfo: %v", in, err)
		}
		_, err = ResolveReference("http://a.com/", in)
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "user")) {
			t.Errorf("ResolveReference(_, %q): error repeats the userinfo: %v", in, err)
		}
		_, err = ResolveReference(in, "x")
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "user")) {
			t.Errorf("ResolveReference(%q, _): error repeats the userinfo: %v", in, err)
		}
	}
	_, err := ResolveReference("not a base", "http://user:secret@x y/")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("ResolveReference with a bad base: %v", err)
	}
}
