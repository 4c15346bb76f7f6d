package urlutil

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fastNormalizers are the normalizers the fast paths are checked with:
// the default one, one that keeps session ids and one that strips
// parameters.
func fastNormalizers() []*Normalizer {
	return []*Normalizer{
		NewNormalizer(NormalizerOptions{}),
		NewNormalizer(NormalizerOptions{KeepSessionIDs: true}),
		NewNormalizer(NormalizerOptions{StripParams: []string{"utm_source"}}),
	}
}

// fastBases are normalized bases for the join check.
var fastBases = []string{
	"http://h.example/a/b/c?q=1", "http://h.example/", "https://x.example.co.uk:8443/d/e/", "http://1.2.3.4/~u/%C3%BC/p;x=1",
	"http://h.example/a;jsessionid=1/b?sid=3", "ftp://f.example/p/q",
}

// checkFast compares the fast paths with the general ones for one input:
// Normalize with normalize, and join with Normalize of the concatenation
// for every way of cutting the bases.
func checkFast(t *testing.T, n *Normalizer, in string) {
	t.Helper()
	got, gerr := n.Normalize(in)
	want, werr := n.normalize(in)
	if got != want || errString(gerr) != errString(werr) {
		t.Fatalf("Normalize(%q) = %q, %v; the general path gives %q, %v", in, got, gerr, want, werr)
	}
	for _, base := range fastBases {
		b, err := n.normalize(base)
		if err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
		se := strings.Index(b, "://")
		pathStart := se + 3 + strings.IndexByte(b[se+3:], '/')
		queryStart := len(b)
		if q := strings.IndexByte(b, '?'); q >= 0 {
			queryStart = q
		}
		dir := b[:strings.LastIndexByte(b[:queryStart], '/')+1]
		for _, c := range []struct {
			prefix string
			kind   tailKind
		}{{b[:pathStart], tailAuthority}, {b[:queryStart], tailQuery}, {dir, tailAfterSlash}} {
			got, gerr := n.join(c.prefix, in, c.kind)
			want, werr := n.normalize(c.prefix + in)
			if got != want || errString(gerr) != errString(werr) {
				t.Fatalf("join(%q, %q, %d) = %q, %v; Normalize of the concatenation gives %q, %v", c.prefix, in, c.kind, got, gerr, want, werr)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fastPieces are the pieces randomURL builds inputs from: the characters
// and sequences the fast paths have a rule for.
var fastPieces = []string{
	"http://", "https://", "HTTP://", "ftp://", "http:/", "http:\\\\", "h.example", "H.example", "a", "z", "0", "9", "-", "_", ".", "..", "/", "//",
	"/.", "/..", "\\", "?", "&", "=", "#", ";", ":", ":80", ":443", ":8080", ":0", ":080", ":65535", ":65536", ":", "@", "[::1]", "1.2.3.4", "1.2.3",
	"256.1.1.1", "01.2.3.4", "%", "%4", "%41", "%7e", "%7E", "%2F", "%2f", "%C3%BC", "%zz", "%25", "sid=1", "jsessionid=x", "PHPSESSID=y",
	"aspsessionidABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGH=1", "utm_source=s", "UTM_SOURCE", "x=1", " ", "\t", "\n", "\x00", "\x7f", "ü", "\xff",
	"~", "!", "$", "'", "(", ")", "*", "+", ",", "|", "^", "`", "{", "\"", "<", strings.Repeat("l", 63), strings.Repeat("m", 64),
}

func randomURL(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) > 0 {
		b.WriteString([]string{"http://", "https://", "/", ""}[r.IntN(4)])
	}
	for k := r.IntN(12); k >= 0; k-- {
		b.WriteString(fastPieces[r.IntN(len(fastPieces))])
	}
	return b.String()
}

// TestFastPaths checks the fast paths against the general ones on random
// inputs and on the normalization tests' own inputs.
func TestFastPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range fastNormalizers() {
		for _, in := range []string{
			"http://h.example/", "http://h.example", "http://h.example/a/b.html?x=1&y=2#f", "https://h.example:8443/%20x", "http://h.example:80/",
			"http://h.example/a/./b", "http://h.example/?", "http://h.example/?a&&b", "http://h.example/p;jsessionid=1", "http://1.2.3.4/",
			"http://1.2.3/", "http://h.example./", "http://a..b/", "b.html", "?q", "../x", "./x", "x/./y", "#", "/#f", "?#f", "",
		} {
			checkFast(t, n, in)
		}
		for i := 0; i < 3000; i++ {
			checkFast(t, n, randomURL(r))
		}
	}
}

// FuzzFastPaths checks the fast paths against the general ones on
// arbitrary input.
func FuzzFastPaths(f *testing.F) {
	for _, s := range []string{"http://h.example/a?b=1#c", "x/y?z", "/%41%2F", "https://h:8080/;sid=1"} {
		f.Add(s)
	}
	ns := fastNormalizers()
	f.Fuzz(func(t *testing.T, in string) {
		for _, n := range ns {
			checkFast(t, n, in)
		}
	})
}
