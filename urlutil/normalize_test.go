package urlutil

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

type normCase struct{ in, want string }

func runNormCases(t *testing.T, n *Normalizer, cases []normCase) {
	t.Helper()
	for _, c := range cases {
		got, err := n.Normalize(c.in)
		if err != nil {
			t.Errorf("Normalize(%q): unexpected error %v; want %q", c.in, err, c.want)
			continue
		}
		if got != c.want {
			t.Errorf("Normalize(%q) = %q; want %q", c.in, got, c.want)
			continue
		}
		again, err := n.Normalize(got)
		if err != nil || again != got {
			t.Errorf("not idempotent: Normalize(%q) = %q, %v", got, again, err)
		}
	}
}

// Nutch's TestBasicURLNormalizer (testNormalizer, testNUTCH1098,
// testNUTCH2064), with trawl's deliberate differences noted.
func TestNormalizeNutchBasic(t *testing.T) {
	runNormCases(t, defaultNormalizer, []normCase{
		{" http://foo.com/ ", "http://foo.com/"},
		{"HTTP://foo.com/", "http://foo.com/"},
		{"http://Foo.Com/index.html", "http://foo.com/index.html"},
		{"http://foo.com:80/index.html", "http://foo.com/index.html"},
		{"http://foo.com:81/", "http://foo.com:81/"},
		{"http://example.com:/", "http://example.com/"},
		{"https://example.com:/foobar.html", "https://example.com/foobar.html"},
		{"http://foo.com", "http://foo.com/"},
		{"http://foo.com/foo.html#ref", "http://foo.com/foo.html"},
		{"http://foo.com/aa/./foo.html", "http://foo.com/aa/foo.html"},
		{"http://foo.com/aa/../", "http://foo.com/"},
		{"http://foo.com/aa/bb/../", "http://foo.com/aa/"},
		{"http://foo.com/aa/..", "http://foo.com/"},
		{"http://foo.com/aa/bb/cc/../../foo.html", "http://foo.com/aa/foo.html"},
		{"http://foo.com/aa/bb/../cc/dd/../ee/foo.html", "http://foo.com/aa/cc/ee/foo.html"},
		{"http://foo.com/../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com/../../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com/../aa/../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com/aa/../../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com/aa/../bb/../foo.html/../../", "http://foo.com/"},
		{"http://foo.com/../aa/foo.html", "http://foo.com/aa/foo.html"},
		{"http://foo.com/a..a/foo.html", "http://foo.com/a..a/foo.html"},
		{"http://foo.com/a..a/../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com/foo.foo/../foo.html", "http://foo.com/foo.html"},
		{"http://foo.com//aa/bb/foo.html", "http://foo.com/aa/bb/foo.html"},
		{"http://foo.com/aa//bb/foo.html", "http://foo.com/aa/bb/foo.html"},
		{"http://foo.com/aa/bb//foo.html", "http://foo.com/aa/bb/foo.html"},
		{"http://foo.com//aa//bb//foo.html", "http://foo.com/aa/bb/foo.html"},
		{"http://foo.com////aa////bb////foo.html", "http://foo.com/aa/bb/foo.html"},
		{"http://foo.com/aa?referer=http://bar.com", "http://foo.com/aa?referer=http://bar.com"},
		// NUTCH-1098: percent-encoding.
		{"http://foo.com/%66oo.html", "http://foo.com/foo.html"},
		{"http://foo.com/%66oo.htm%6c", "http://foo.com/foo.html"},
		{"http://foo.com/%66oo.ht%6dl", "http://foo.com/foo.html"},
		{"http://foo.com/%66oo.ht%6d%6c", "http://foo.com/foo.html"},
		{"http://foo.com/%66oo.htm%C0", "http://foo.com/foo.htm%C0"},
		{"http://foo.com/%66oo.htm%1A", "http://foo.com/foo.htm%1A"},
		{"http://foo.com/%66oo.htm%c0", "http://foo.com/foo.htm%C0"},
		{"http://foo.com/you%20too.html", "http://foo.com/you%20too.html"},
		{"http://foo.com/you too.html", "http://foo.com/you%20too.html"},
		{"http://foo.com/file.html%23cz", "http://foo.com/file.html%23cz"},
		{"http://foo.com/fast/dir%2fcz", "http://foo.com/fast/dir%2Fcz"},
		{"http://mydomain.com/en Espa\u00F1ol.aspx", "http://mydomain.com/en%20Espa%C3%B1ol.aspx"},
		// NUTCH-2064: reserved characters stay escaped, '+' stays.
		{"http://x.com/s?q=a%26b&m=10", "http://x.com/s?q=a%26b&m=10"},
		{"http://x.com/show?http%3A%2F%2Fx.com%2Fb", "http://x.com/show?http%3A%2F%2Fx.com%2Fb"},
		{"http://google.com/search?q=c%2B%2B", "http://google.com/search?q=c%2B%2B"},
		{"http://x.com/s?q=a+b", "http://x.com/s?q=a+b"},
		{"http://x.com/./a/../%66.html", "http://x.com/f.html"},
		{"http://x.com/?x[y]=1", "http://x.com/?x%5By%5D=1"},
		{"http://x.com/foo\u0080", "http://x.com/foo%C2%80"},
		{"http://x.com/foo%c2%80", "http://x.com/foo%C2%80"},
		// Difference: IDN hosts become punycode (Nutch keeps Unicode).
		{"http://b\u00fccher.de/", "http://xn--bcher-kva.de/"},
	})
}

// Nutch's urlnormalizer-regex sample/regex-normalize-default.test, the
// session-id, query-cleaning and slash rules (the default-page rules are
// commented out in Nutch's shipped regex-normalize.xml and not done here).
func TestNormalizeNutchRegexDefault(t *testing.T) {
	runNormCases(t, defaultNormalizer, []normCase{
		{"http://foo.com/foo.php?PHPSESSID=cdc993a493e899bed04f4d0c8a462a03", "http://foo.com/foo.php"},
		{"http://foo.com/foo.php?f=2&PHPSESSID=cdc993a493e899bed04f4d0c8a462a03", "http://foo.com/foo.php?f=2"},
		{"http://foo.com/foo.php?f=2&PHPSESSID=cdc993a493e899bed04f4d0c8a462a03&q=3", "http://foo.com/foo.php?f=2&q=3"},
		{"http://foo.com/foo.php?PHPSESSID=cdc993a493e899bed04f4d0c8a462a03&f=2", "http://foo.com/foo.php?f=2"},
		{"http://www.foo.com/foo.php?Bv_SessionID=fassassddsajkl", "http://www.foo.com/foo.php"},
		{"http://www.foo.com/foo.php?Bv_SessionID=fassassddsajkl&x=y", "http://www.foo.com/foo.php?x=y"},
		{"http://www.foo.com/foo.html;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED", "http://www.foo.com/foo.html"},
		{"http://www.foo.com/foo.html?param=1&another=2;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED", "http://www.foo.com/foo.html?param=1&another=2"},
		{"http://www.foo.com/foo.html;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED?param=1&another=2", "http://www.foo.com/foo.html?param=1&another=2"},
		{"http://www.foo.com/foo.php?&x=1&sid=xyz&something=1", "http://www.foo.com/foo.php?x=1&something=1"},
		{"http://www.foo.com/foo.html?_sessionID=824A6C0A13a7e11205wxN28F44E3", "http://www.foo.com/foo.html"},
		{"http://www.foo.com/foo.php?_sessionid=qmyrcedt&outputformat=html&path=/3_images/foo", "http://www.foo.com/foo.php?outputformat=html&path=/3_images/foo"},
		{"http://www.foo.com/foo.php?_pid=2&_spid=0&lang=en&_sessionid=e36902d5bb2d0d922fc24b43", "http://www.foo.com/foo.php?_pid=2&_spid=0&lang=en"},
		{"http://www.foo.com/foo.php?app=content&content=overview&lang=en&_sid=587fba8f825b05844526519fdb7d75c8&b=35&m=47", "http://www.foo.com/foo.php?app=content&content=overview&lang=en&b=35&m=47"},
		// NUTCH-706, NUTCH-1328: NewsId and the like are not session ids.
		{"http://www.foo.com/fa/newsdetail.aspx?NewsID=1567539", "http://www.foo.com/fa/newsdetail.aspx?NewsID=1567539"},
		{"http://www.foo.com/home.cfm?language=en&country=uk&addressid=250646&pagingpos=0", "http://www.foo.com/home.cfm?language=en&country=uk&addressid=250646&pagingpos=0"},
		{"http://www.foo.com/foo.html#something", "http://www.foo.com/foo.html"},
		{"http://www.foo.com/foo.html?&x=y", "http://www.foo.com/foo.html?x=y"},
		{"http://www.foo.com/foo.html?x=y&&&z=a", "http://www.foo.com/foo.html?x=y&z=a"},
		{"http://www.foo.com/foo.html?", "http://www.foo.com/foo.html"},
		{"http://www.foo.com//path//foo.html", "http://www.foo.com/path/foo.html"},
		{"https://www.foo.com//path//foo.html", "https://www.foo.com/path/foo.html"},
		// Difference: a query after a fragment is part of the fragment
		// (RFC 3986); Nutch's regex keeps it.
		{"http://www.foo.com/foo.html#something?x=y", "http://www.foo.com/foo.html"},
	})
}

// One table per rule of the package documentation.
func TestNormalizeRules(t *testing.T) {
	rules := map[string][]normCase{
		"trim and tab/newline removal": {
			{"\t http://a.com/x \r\n", "http://a.com/x"},
			{"http://a.com/lo\nng/pa\tth", "http://a.com/long/path"},
			{"\x00http://a.com/\x1f", "http://a.com/"},
		},
		"scheme and host case": {
			{"HtTpS://WWW.Example.COM/Path/CASE", "https://www.example.com/Path/CASE"},
			{"hTTp://A.com/?Q=V", "http://a.com/?Q=V"},
		},
		"slashes after scheme and backslashes": {
			{"http:\\\\a.com\\b\\c", "http://a.com/b/c"},
			{"http:///a.com/b", "http://a.com/b"},
			{"https:/\\a.com/b", "https://a.com/b"},
		},
		"IDN to punycode": {
			{"http://M\u00dcNCHEN.de/", "http://xn--mnchen-3ya.de/"},
			{"http://%C3%BC.example/", "http://xn--tda.example/"},
			{"http://\uff21\uff22\uff23\uff0ecom/", "http://abc.com/"},
			{"http://xn--bcher-kva.DE/", "http://xn--bcher-kva.de/"},
			{"http://\u4f8b\u3048.\u30c6\u30b9\u30c8/", "http://xn--r8jz45g.xn--zckzah/"},
		},
		"real-world ASCII hosts the IDNA profile would reject": {
			{"http://my_host.example.com/", "http://my_host.example.com/"},
			{"http://r3---sn-abc.googlevideo.com/x", "http://r3---sn-abc.googlevideo.com/x"},
		},
		"trailing dot of host": {
			{"http://example.com./", "http://example.com/"},
			{"http://Example.COM.:8080", "http://example.com:8080/"},
		},
		"ports": {
			{"http://a.com:80/", "http://a.com/"},
			{"https://a.com:443/", "https://a.com/"},
			{"http://a.com:443/", "http://a.com:443/"},
			{"https://a.com:80/", "https://a.com:80/"},
			{"http://a.com:0080/", "http://a.com/"},
			{"http://a.com:08080/", "http://a.com:8080/"},
			{"http://a.com:/", "http://a.com/"},
			{"http://a.com:00/", "http://a.com:0/"},
			{"ftp://a.com:21/f", "ftp://a.com/f"},
		},
		"IP literals": {
			{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
			{"http://[2001:DB8:0:0::1]/", "http://[2001:db8::1]/"},
			{"http://[::FFFF:192.0.2.1]:80/", "http://[::ffff:192.0.2.1]/"},
		},
		"fragment": {
			{"http://a.com/#", "http://a.com/"},
			{"http://a.com#x", "http://a.com/"},
			{"http://a.com/p?q=1#x?y", "http://a.com/p?q=1"},
		},
		"percent-encoding": {
			{"http://a.com/%7ejoe/%41%42%2d%2E%5f", "http://a.com/~joe/AB-._"},
			{"http://a.com/a%2fb%3Fc%3d", "http://a.com/a%2Fb%3Fc%3D"},
			{"http://a.com/100%", "http://a.com/100%25"},
			{"http://a.com/%g1%", "http://a.com/%25g1%25"},
			{"http://a.com/\u00e9t\u00e9?q=\u00e9", "http://a.com/%C3%A9t%C3%A9?q=%C3%A9"},
			{"http://a.com/\"<>{}|^`", "http://a.com/%22%3C%3E%7B%7D%7C%5E%60"},
			{"http://a.com/?a=b c&d=\"e\"", "http://a.com/?a=b%20c&d=%22e%22"},
			{"http://a.com/p?u=http://b.com/?x", "http://a.com/p?u=http://b.com/?x"},
			{"http://a.com/\xff\xfe", "http://a.com/%FF%FE"},
		},
		"dot segments": {
			{"http://a.com/a/./b/../c", "http://a.com/a/c"},
			{"http://a.com/a/b/./", "http://a.com/a/b/"},
			{"http://a.com/a/b/.", "http://a.com/a/b/"},
			{"http://a.com/a/%2E%2e/b", "http://a.com/b"},
			{"http://a.com/a/.%2E", "http://a.com/"},
			{"http://a.com/.hidden/..x/x..", "http://a.com/.hidden/..x/x.."},
			{"http://a.com/..?q=1", "http://a.com/?q=1"},
		},
		"slashes": {
			{"http://a.com//", "http://a.com/"},
			{"http://a.com/a//b///", "http://a.com/a/b/"},
			{"http://a.com/a?x=//y", "http://a.com/a?x=//y"},
		},
		"session ids": {
			{"http://a.com/x;JSESSIONID=abc", "http://a.com/x"},
			{"http://a.com/x;jsessionid=abc;type=a", "http://a.com/x;type=a"},
			{"http://a.com/d;jsessionid=1/e", "http://a.com/d/e"},
			{"http://a.com/;jsessionid=1", "http://a.com/"},
			{"http://a.com/?ASPSESSIONIDQQGGQGPK=ABCDEF&page=2", "http://a.com/?page=2"},
			{"http://a.com/?aspsessionid=1", "http://a.com/"},
			{"http://a.com/?lsid=1&jsid=2&bv_sid=3&sessionid=4&phpsessid=5&x=6", "http://a.com/?x=6"},
			{"http://a.com/?SID=1", "http://a.com/"},
			{"http://a.com/?sid", "http://a.com/?sid"},
			{"http://a.com/?usersid=1&sidebar=2&side=3", "http://a.com/?usersid=1&sidebar=2&side=3"},
			{"http://a.com/?a=1;sid=2;b=3", "http://a.com/?a=1;b=3"},
			{"http://a.com/?%73id=1&b=2", "http://a.com/?b=2"},
			{"http://a.com/a/..;jsessionid=1/b", "http://a.com/b"},
			{"http://a.com/;sid=1/;sid=2/x", "http://a.com/x"},
			{"http://a.com/sid=1;x=2", "http://a.com/sid=1;x=2"},
			{"http://a.com/a/b/..;sid=1", "http://a.com/a/"},
			{"http://a.com/a;x;jsessionid=1;;y", "http://a.com/a;x;;y"},
		},
		"query tidying": {
			{"http://a.com/?", "http://a.com/"},
			{"http://a.com/?&", "http://a.com/"},
			{"http://a.com/?&&a=1&&b=2&", "http://a.com/?a=1&b=2"},
			{"http://a.com/?b=2&a=1", "http://a.com/?b=2&a=1"},
			{"http://a.com/?a=&b", "http://a.com/?a=&b"},
			{"http://a.com/??x", "http://a.com/??x"},
			{"http://a.com/?=", "http://a.com/?="},
		},
		"userinfo removed": {
			{"http://User:Pa%73s@A.com/", "http://a.com/"},
			{"http://user:pass@a.com:8080/x?q=1", "http://a.com:8080/x?q=1"},
			{"http://user@a.com/", "http://a.com/"},
			{"http://@a.com/", "http://a.com/"},
			{"http://:@a.com/", "http://a.com/"},
			{"http://a@b@c.com/", "http://c.com/"},
			{"https://u:p%40ss@[2001:db8::1]:443/", "https://[2001:db8::1]/"},
			{"ftp://anonymous:me@ftp.example.com/pub/", "ftp://ftp.example.com/pub/"},
			{"http:\\\\u:p@a.com\\x", "http://a.com/x"},
			{"http://u:p w@a.com/", "http://a.com/"},
			{"http://u:pa\tss@a.com/", "http://a.com/"},
			{"http://a.com/x@y?z=u:p@h", "http://a.com/x@y?z=u:p@h"}, // '@' after the authority is data
		},
		"other schemes with an authority": {
			{"FTP://Ftp.Example.com/pub/../x", "ftp://ftp.example.com/x"},
			{"git+ssh://h.com/r", "git+ssh://h.com/r"},
		},
	}
	for name, cases := range rules {
		t.Run(name, func(t *testing.T) { runNormCases(t, defaultNormalizer, cases) })
	}
}

func TestNormalizeErrors(t *testing.T) {
	cases := []struct{ in, reason string }{
		{"", "empty URL"},
		{"   ", "empty URL"},
		{"www.example.com/page", "missing scheme"},
		{"/relative/path", "missing scheme"},
		{"1http://a.com/", "missing scheme"},
		{"mailto:joe@example.com", "missing host"},
		{"javascript:void(0)", "missing host"},
		{"http:/a.com/", "missing host"},
		{"http://", "missing host"},
		{"http:///", "missing host"},
		{"http://:80/", "missing host"},
		{"http://user@/", "missing host"},
		{"user:pass@a.com/x", "missing host: URL without"},
		{"http://a.com/x\x01y", "control character 0x01"},
		{"http://a.com/\x7f/", "control character 0x7F"},
		{"http://a.com:8o/", `invalid port "8o"`},
		{"http://a.com:65536/", "out of range"},
		{"http://a.com:123456/", "out of range"},
		{"http://a b.com/", "not allowed"},
		{"http://a%20b.com/", "not allowed"},
		{"http://a.com%2F/", "not allowed"},
		{"http://a..com/", "empty label"},
		{"http://.a.com/", "empty label"},
		{"http://a.com../", "empty label"},
		{"http://" + strings.Repeat("a", 64) + ".com/", "longer than 63"},
		{"http://" + strings.Repeat("abcdefghi.", 26) + "com/", "longer than 253"},
		{"http://a!.com/", "not allowed"},
		{"http://%zz.com/", "bad percent-encoding"},
		{"http://%FF.com/", "not valid UTF-8"},
		{"http://256.1.1.1/", "IPv4"},
		{"http://1.2.3/", "IPv4"},
		{"http://01.2.3.4/", "IPv4"},
		{"http://example.123/", "IPv4"},
		{"http://[::1/", "unclosed IPv6"},
		{"http://[::1]x/", "after IPv6"},
		{"http://[fe80::1%25eth0]/", "zone"},
		{"http://[1.2.3.4]/", "bad IPv6"},
		{"http://[g::1]/", "bad IPv6"},
		{"http://-\u00e4.com/", "internationalized"},
	}
	for _, c := range cases {
		got, err := Normalize(c.in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q; want error containing %q", c.in, got, c.reason)
			continue
		}
		var ne *NormalizeError
		if !errors.As(err, &ne) {
			t.Errorf("Normalize(%q) error %T is not *NormalizeError", c.in, err)
			continue
		}
		if !strings.Contains(ne.Reason, c.reason) {
			t.Errorf("Normalize(%q) reason %q; want it to contain %q", c.in, ne.Reason, c.reason)
		}
		if ne.Input != Redact(c.in) || !strings.Contains(err.Error(), "cannot normalize") {
			t.Errorf("Normalize(%q) error %q does not carry the input, redacted", c.in, err)
		}
	}
	// Long inputs are shortened in the message, not in the error value.
	long := "bad" + strings.Repeat("x", 1000)
	_, err := Normalize(long)
	var ne *NormalizeError
	if !errors.As(err, &ne) || ne.Input != long || len(err.Error()) > 300 {
		t.Errorf("long input error: %v", err)
	}
}

func TestNormalizerOptions(t *testing.T) {
	keep := NewNormalizer(NormalizerOptions{KeepSessionIDs: true})
	runNormCases(t, keep, []normCase{
		{"http://a.com/x;jsessionid=1?PHPSESSID=2&&a=1", "http://a.com/x;jsessionid=1?PHPSESSID=2&a=1"},
		{"http://a.com//x;jsessionid=1//", "http://a.com/x;jsessionid=1/"},
	})
	strip := NewNormalizer(NormalizerOptions{StripParams: []string{"utm_source", "UTM_Medium"}})
	runNormCases(t, strip, []normCase{
		{"http://a.com/?utm_source=x&id=5&utm_medium=y&UTM_SOURCE=z", "http://a.com/?id=5"},
		{"http://a.com/?utm_source", "http://a.com/"},
		{"http://a.com/?utm_sourcex=1&jsessionid=2", "http://a.com/?utm_sourcex=1"},
	})
}

// RFC 3986 section 5.4 examples; the fragment is dropped and the result is
// normalized, so "//g" gains a "/" path.
func TestResolveReference(t *testing.T) {
	const base = "http://a/b/c/d;p?q"
	cases := []normCase{
		{"g", "http://a/b/c/g"},
		{"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"},
		{"/g", "http://a/g"},
		{"//g", "http://g/"},
		{"?y", "http://a/b/c/d;p?y"},
		{"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q"},
		{"g#s", "http://a/b/c/g"},
		{"g?y#s", "http://a/b/c/g?y"},
		{";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"},
		{"g;x?y#s", "http://a/b/c/g;x?y"},
		{"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"},
		{"./", "http://a/b/c/"},
		{"..", "http://a/b/"},
		{"../", "http://a/b/"},
		{"../g", "http://a/b/g"},
		{"../..", "http://a/"},
		{"../../", "http://a/"},
		{"../../g", "http://a/g"},
		{"../../../g", "http://a/g"},
		{"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"},
		{"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."},
		{".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."},
		{"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"},
		{"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"},
		{"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g"},
		{"g#s/../x", "http://a/b/c/g"},
		{"http:g", "http://a/b/c/g"},
		// Beyond the RFC: what pages really contain.
		{"  g h\n", "http://a/b/c/g%20h"},
		{"HTTPS://Other.com/x", "https://other.com/x"},
		{"\\\\other.com\\x", "http://other.com/x"},
		{"\\g", "http://a/g"},
		{"http://a/b/c/d;p?q#frag", "http://a/b/c/d;p?q"},
		{"g;jsessionid=5", "http://a/b/c/g"},
	}
	for _, c := range cases {
		got, err := ResolveReference(base, c.in)
		if err != nil || got != c.want {
			t.Errorf("ResolveReference(%q, %q) = %q, %v; want %q", base, c.in, got, err, c.want)
		}
	}
	// An un-normalized base works, and bases without a query.
	if got, err := ResolveReference("HTTP://A.com:80/x/y.html#f", "z?q=1"); err != nil || got != "http://a.com/x/z?q=1" {
		t.Errorf("got %q, %v", got, err)
	}
	if got, err := ResolveReference("http://a.com", "z"); err != nil || got != "http://a.com/z" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, c := range []struct{ base, href, want string }{
		{"http://a.com/", "mailto:x@y.z", "missing host"},
		{"http://a.com/", "javascript:alert(1)", "missing host"},
		{"http://a.com/", "http://bad host/", "not allowed"},
		{"http://a.com/", "x\x00y", "control character"},
		{"not a url", "x", "base URL"},
		{"http://a.com/", "https:g", "missing host"}, // another scheme: absolute, and "https:g" has no "//"
	} {
		_, err := ResolveReference(c.base, c.href)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ResolveReference(%q, %q) err = %v; want %q", c.base, c.href, err, c.want)
		}
	}
}

// checkNormalized asserts the properties every Normalize result must have.
func checkNormalized(t *testing.T, in, out string) {
	t.Helper()
	again, err := Normalize(out)
	if err != nil {
		t.Fatalf("Normalize(%q) = %q, which fails to normalize: %v", in, out, err)
	}
	if again != out {
		t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
	}
	u, err := url.Parse(out)
	if err != nil {
		t.Fatalf("Normalize(%q) = %q, which net/url rejects: %v", in, out, err)
	}
	if u.User != nil || HasUserinfo(out) {
		t.Fatalf("Normalize(%q) = %q: has userinfo", in, out)
	}
	if u.Host == "" || u.Scheme == "" {
		t.Fatalf("Normalize(%q) = %q: net/url sees no scheme or host", in, out)
	}
	if h := u.Hostname(); h != strings.ToLower(h) {
		t.Fatalf("Normalize(%q) = %q: host not lower-case", in, out)
	}
	if strings.Contains(out, "#") || u.Fragment != "" {
		t.Fatalf("Normalize(%q) = %q: has a fragment", in, out)
	}
	if !strings.HasPrefix(u.EscapedPath(), "/") {
		t.Fatalf("Normalize(%q) = %q: path does not start with /", in, out)
	}
	if strings.Contains(u.EscapedPath(), "//") {
		t.Fatalf("Normalize(%q) = %q: path has //", in, out)
	}
	if Host(out) != u.Hostname() && "["+u.Hostname()+"]" != Host(out) {
		t.Fatalf("Host(%q) = %q; net/url says %q", out, Host(out), u.Hostname())
	}
}

// A property test: random URLs assembled from awkward pieces normalize to
// strings that are stable, parse with net/url and have no fragment.
func TestNormalizeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	schemes := []string{"http", "HTTP", "https", "HtTpS", "ftp"}
	seps := []string{"://", ":///", ":\\\\", "://"}
	users := []string{"", "", "", "u@", "u:p@", "@", "a%40b@", "ü@"}
	hosts := []string{"a.com", "WWW.Example.COM", "example.com.", "bücher.de", "%41.com", "127.0.0.1",
		"[::1]", "[2001:DB8::1]", "x_y.test", "xn--bcher-kva.de", "ÉCOLE.fr", "h0001.sim.test"}
	ports := []string{"", "", ":80", ":443", ":8080", ":", ":0021"}
	segs := []string{"a", "B", ".", "..", "", "%2e", "%2E%2E", "%7e", "%41", "%zz", "%", "a b", "é", "x;jsessionid=1",
		";sid=2", "a;b=c", "%2F", "\\", "index.html", "?", "\"", "[x]", "~u", "+", "%25", "%252E"}
	qparts := []string{"a=1", "", "&", "sid=1", "PHPSESSID=x", "b=%7e", "c=d e", "x=%2f", "q=?", "z=é", "t;jsessionid=3", "=", "+=+"}
	frags := []string{"", "", "#", "#f", "#f?x=1", "#%zz"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		b.WriteString(pick(schemes) + pick(seps) + pick(users) + pick(hosts) + pick(ports))
		for n := r.IntN(6); n > 0; n-- {
			b.WriteString("/" + pick(segs))
		}
		if r.IntN(2) == 0 {
			b.WriteString("?")
			for n := r.IntN(5); n > 0; n-- {
				b.WriteString(pick(qparts))
				if r.IntN(3) > 0 {
					b.WriteString("&")
				}
			}
		}
		b.WriteString(pick(frags))
		in := b.String()
		out, err := Normalize(in)
		if err != nil {
			continue
		}
		checkNormalized(t, in, out)
	}
}

func BenchmarkNormalize(b *testing.B) {
	cases := map[string]string{
		"canonical":    "https://www.example.com/news/2026/11/article-12345.html?page=2&lang=en",
		"mixed-case":   "HTTP://WWW.Example.COM:80/News/2026/./11/../11/Article.html?b=2&&a=1#top",
		"session-id":   "http://shop.example.com/cart;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED?item=5&PHPSESSID=cdc993a493e899bed04f4d0c8a462a03",
		"escapes":      "http://example.com/%7Euser/caf%c3%a9/a%20b?q=%41%42c+d",
		"idn":          "http://bücher.example.de/straße/",
		"simweb-style": "http://h0042.sim.test/p/1234",
	}
	for name, u := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Normalize(u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResolveReference(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResolveReference("https://www.example.com/news/2026/index.html", "../archive/page-2.html?x=1#c"); err != nil {
			b.Fatal(err)
		}
	}
}
