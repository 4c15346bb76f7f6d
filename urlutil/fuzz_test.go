package urlutil

import "testing"

// FuzzNormalize checks that Normalize never panics and that whatever it
// returns is idempotent, parses with net/url, has a lower-case host and no
// fragment. ResolveReference is fuzzed along with it, using the input as a
// link on a fixed page, and Redact, whose result must have no userinfo.
// Seeds live in testdata/fuzz/FuzzNormalize.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com/",
		"HTTP://Foo.Com:80/a/./b/../c?&&x=1#f",
		"http://bücher.de/ü?ü=ü",
		"http://[2001:DB8::1]:8080/%7e/",
		"http://a.com/x;jsessionid=1?PHPSESSID=2&a=1",
		"http://user:pass@a.com/",
		"http:/\t/u:p@a.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if out, err := Normalize(in); err == nil {
			checkNormalized(t, in, out)
		}
		if r := Redact(in); HasUserinfo(r) {
			t.Fatalf("Redact(%q) = %q, which still has userinfo", in, r)
		}
		if out, err := ResolveReference("http://h.example/a/b/c?q=1", in); err == nil {
			checkNormalized(t, in, out)
		}
	})
}
