package urlutil

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// NormalizeError says why a URL cannot be normalized. Input is the URL as
// given, with any user name and password removed (see Redact), so that the
// error can be logged; Reason is a short English explanation.
type NormalizeError struct {
	Input  string
	Reason string
}

// Error implements error. Very long inputs are shortened in the message.
func (e *NormalizeError) Error() string {
	in := e.Input
	if len(in) > 200 {
		in = in[:200] + "..."
	}
	return fmt.Sprintf("urlutil: cannot normalize %q: %s", in, e.Reason)
}

// errorf makes a *NormalizeError; input is redacted. Callers must not put
// the userinfo into the reason.
func errorf(input, format string, args ...any) error {
	return &NormalizeError{Input: Redact(input), Reason: fmt.Sprintf(format, args...)}
}

// NormalizerOptions configures a Normalizer. The zero value gives the
// default behaviour of Normalize.
type NormalizerOptions struct {
	// KeepSessionIDs disables the removal of session-id path parameters and
	// query parameters.
	KeepSessionIDs bool
	// StripParams names further query parameters to drop (exact names,
	// case-insensitive), e.g. "utm_source". Empty by default, as in Nutch.
	StripParams []string
}

// Normalizer normalizes URLs; see the package documentation for the rules.
// A Normalizer is immutable once made and safe for concurrent use.
type Normalizer struct {
	keepSessionIDs bool
	stripParams    map[string]struct{} // lower-case names
}

// NewNormalizer returns a Normalizer with the given options.
func NewNormalizer(o NormalizerOptions) *Normalizer {
	n := &Normalizer{keepSessionIDs: o.KeepSessionIDs}
	if len(o.StripParams) > 0 {
		n.stripParams = make(map[string]struct{}, len(o.StripParams))
		for _, p := range o.StripParams {
			n.stripParams[strings.ToLower(p)] = struct{}{}
		}
	}
	return n
}

// defaultNormalizer backs Normalize and ResolveReference. It is never
// modified.
var defaultNormalizer = NewNormalizer(NormalizerOptions{})

// Normalize returns the canonical form of raw with the default options, or
// a *NormalizeError saying why raw is not a usable URL (no scheme, no host,
// an invalid host or port, a control character).
func Normalize(raw string) (string, error) { return defaultNormalizer.Normalize(raw) }

// ResolveReference resolves href (as found in a link) against the URL base
// and normalizes the result, with the default options.
func ResolveReference(base, href string) (string, error) {
	return defaultNormalizer.ResolveReference(base, href)
}

// Character classes for percent-encoding.
var (
	// unreserved: ALPHA DIGIT - . _ ~ (RFC 3986 section 2.3).
	unreservedSet = charSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
	// pathSet: pchar and '/': unreserved, sub-delims, ':' and '@'.
	pathSet = charSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/")
	// querySet: pchar, '/' and '?'.
	querySet = charSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?")
)

// charSet is a byte-membership table. Tables are built once and only read.
type charTable [256]bool

func charSet(chars string) *charTable {
	var t charTable
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return &t
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendEscaped appends s to buf with percent-encoding normalized: escapes
// of unreserved characters decoded, other escapes upper-cased, a stray '%'
// encoded as %25, and bytes outside allowed encoded.
func appendEscaped(buf []byte, s string, allowed *charTable) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					v := hi<<4 | lo
					if unreservedSet[v] {
						buf = append(buf, v)
					} else {
						buf = append(buf, '%', upperHex[hi], upperHex[lo])
					}
					i += 2
					continue
				}
			}
			buf = append(buf, '%', '2', '5')
			continue
		}
		if allowed[c] {
			buf = append(buf, c)
		} else {
			buf = append(buf, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return buf
}

// trimSpaceControl removes leading and trailing bytes <= 0x20 (space and C0
// controls), as the WHATWG URL parser does.
func trimSpaceControl(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// prepare trims raw, drops tab, CR and LF inside it, and rejects any other
// control character.
func prepare(raw string) (string, error) {
	s := trimSpaceControl(raw)
	strip := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			if c != '\t' && c != '\n' && c != '\r' {
				return "", errorf(raw, "control character 0x%02X in URL", c)
			}
			strip = true
		}
	}
	if !strip {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b = append(b, c)
		}
	}
	return string(b), nil
}

// schemeEnd returns the index of the ':' that ends a scheme at the start of
// s, or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

// isSpecial reports whether scheme (lower-case) is one of the WHATWG
// "special" schemes with an authority, where '\' counts as '/'.
func isSpecial(scheme string) bool {
	switch scheme {
	case "http", "https", "ftp", "ws", "wss":
		return true
	}
	return false
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// Normalize returns the canonical form of raw, or a *NormalizeError.
func (n *Normalizer) Normalize(raw string) (string, error) {
	if u, ok := n.normalized(raw); ok {
		return u, nil
	}
	return n.normalize(raw)
}

// normalize is Normalize without the fast path.
func (n *Normalizer) normalize(raw string) (string, error) {
	s, err := prepare(raw)
	if err != nil {
		return "", err
	}
	scheme, special, auth, rest, err := splitAuthority(raw, s)
	if err != nil {
		return "", err
	}
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	path, query, hasQuery := rest, "", false
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		path, query, hasQuery = rest[:q], rest[q+1:], true
	}

	buf := make([]byte, 0, len(s)+8)
	buf = append(buf, scheme...)
	buf = append(buf, "://"...)

	// Userinfo (user:password@) is dropped: credentials must never reach
	// the CrawlDB, a segment or a log line.
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	host, port, err := splitHostPort(raw, auth)
	if err != nil {
		return "", err
	}
	if buf, err = appendHost(buf, raw, host); err != nil {
		return "", err
	}
	if port != "" {
		for j := 0; j < len(port); j++ {
			if port[j] < '0' || port[j] > '9' {
				return "", errorf(raw, "invalid port %q", port)
			}
		}
		port = strings.TrimLeft(port, "0")
		if port == "" {
			port = "0"
		}
		if len(port) > 5 || (len(port) == 5 && port > "65535") {
			return "", errorf(raw, "port %s out of range", port)
		}
		if port != defaultPort(scheme) {
			buf = append(buf, ':')
			buf = append(buf, port...)
		}
	}

	// Path.
	if special && strings.IndexByte(path, '\\') >= 0 {
		path = strings.ReplaceAll(path, "\\", "/")
	}
	ps := len(buf)
	buf = appendEscaped(buf, path, pathSet)
	if len(buf) == ps {
		buf = append(buf, '/')
	} else if n.needsCleaning(buf[ps:]) {
		buf = n.cleanPath(buf, ps)
	}

	// Query.
	if hasQuery {
		qs := len(buf)
		buf = append(buf, '?')
		buf = appendEscaped(buf, query, querySet)
		buf = n.tidyQuery(buf, qs)
	}
	if string(buf) == raw {
		return raw, nil
	}
	return string(buf), nil
}

// splitAuthority splits s, a prepared URL (see prepare), into its
// lower-case scheme, whether the scheme is special, its authority (with
// any userinfo) and the rest (path, query and fragment). raw is the input,
// for errors.
func splitAuthority(raw, s string) (scheme string, special bool, auth, rest string, err error) {
	if s == "" {
		return "", false, "", "", errorf(raw, "empty URL")
	}
	i := schemeEnd(s)
	if i < 0 {
		return "", false, "", "", errorf(raw, "missing scheme (expected e.g. http://)")
	}
	scheme = strings.ToLower(s[:i])
	rest = s[i+1:]
	special = isSpecial(scheme)
	if special {
		k := 0
		for k < len(rest) && (rest[k] == '/' || rest[k] == '\\') {
			k++
		}
		if k < 2 {
			return "", false, "", "", errorf(raw, "missing host: %s URL without \"//\"", scheme)
		}
		rest = rest[k:]
	} else {
		if !strings.HasPrefix(rest, "//") {
			if strings.IndexByte(rest, '@') >= 0 {
				// "user:password@host": what looks like a scheme may
				// be a user name, which the reason must not repeat.
				return "", false, "", "", errorf(raw, "missing host: URL without \"//\"")
			}
			return "", false, "", "", errorf(raw, "missing host: %s URL without \"//\"", scheme)
		}
		rest = rest[2:]
	}
	// The authority ends at the path, query or fragment.
	end := len(rest)
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		if c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			end = j
			break
		}
	}
	return scheme, special, rest[:end], rest[end:], nil
}

// HasUserinfo reports whether raw has userinfo: a user name, and maybe a
// password, before an '@' in its authority, which Normalize removes. It is
// false for input that Normalize rejects before reading the authority.
func HasUserinfo(raw string) bool {
	if strings.IndexByte(raw, '@') < 0 {
		return false
	}
	s, err := prepare(raw)
	if err != nil {
		return false
	}
	_, _, auth, _, err := splitAuthority(raw, s)
	return err == nil && strings.LastIndexByte(auth, '@') > 0
}

// splitHostPort splits an authority without userinfo.
func splitHostPort(raw, auth string) (host, port string, err error) {
	if strings.HasPrefix(auth, "[") {
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return "", "", errorf(raw, "invalid host: unclosed IPv6 literal")
		}
		host, rest := auth[:j+1], auth[j+1:]
		if rest == "" {
			return host, "", nil
		}
		if rest[0] != ':' {
			return "", "", errorf(raw, "invalid host: text after IPv6 literal")
		}
		return host, rest[1:], nil
	}
	if k := strings.LastIndexByte(auth, ':'); k >= 0 {
		return auth[:k], auth[k+1:], nil
	}
	return auth, "", nil
}

// appendHost appends the normalized form of host to buf.
func appendHost(buf []byte, raw, host string) ([]byte, error) {
	if host == "" {
		return nil, errorf(raw, "missing host")
	}
	if host[0] == '[' {
		inner := host[1 : len(host)-1]
		if strings.IndexByte(inner, '%') >= 0 {
			return nil, errorf(raw, "invalid host: IPv6 zone identifiers are not allowed")
		}
		addr, err := netip.ParseAddr(inner)
		if err != nil || !addr.Is6() {
			return nil, errorf(raw, "invalid host: bad IPv6 address %q", inner)
		}
		buf = append(buf, '[')
		buf = addr.AppendTo(buf)
		return append(buf, ']'), nil
	}
	h := host
	if strings.IndexByte(h, '%') >= 0 {
		d, ok := percentDecode(h)
		if !ok {
			return nil, errorf(raw, "invalid host: bad percent-encoding in %q", host)
		}
		h = d
	}
	if !isASCII(h) {
		if !utf8.ValidString(h) {
			return nil, errorf(raw, "invalid host: not valid UTF-8")
		}
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return nil, errorf(raw, "invalid host: internationalized name %q: %v", h, err)
		}
		h = a
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return nil, errorf(raw, "missing host")
	}
	if len(h) > 253 {
		return nil, errorf(raw, "invalid host: longer than 253 bytes")
	}
	start := len(buf)
	labelStart := start
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '.':
			if len(buf) == labelStart {
				return nil, errorf(raw, "invalid host %q: empty label", h)
			}
			if len(buf)-labelStart > 63 {
				return nil, errorf(raw, "invalid host %q: label longer than 63 bytes", h)
			}
			buf = append(buf, c)
			labelStart = len(buf)
			continue
		default:
			return nil, errorf(raw, "invalid host %q: character %q not allowed", h, c)
		}
		buf = append(buf, c)
	}
	if len(buf) == labelStart {
		return nil, errorf(raw, "invalid host %q: empty label", h)
	}
	if len(buf)-labelStart > 63 {
		return nil, errorf(raw, "invalid host %q: label longer than 63 bytes", h)
	}
	// A numeric last label makes the host an IPv4 address.
	if last := buf[labelStart:]; allDigits(last) {
		addr, err := netip.ParseAddr(string(buf[start:]))
		if err != nil || !addr.Is4() {
			return nil, errorf(raw, "invalid host %q: not a dotted-decimal IPv4 address", h)
		}
	}
	return buf, nil
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// percentDecode decodes every %XX escape in s; ok is false if an escape is
// malformed.
func percentDecode(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), true
}

// needsCleaning reports whether an escaped path has empty or dot segments,
// or parameters that may be session ids.
func (n *Normalizer) needsCleaning(p []byte) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '/':
			if i+1 < len(p) && (p[i+1] == '/' || p[i+1] == '.') {
				return true
			}
		case ';':
			if !n.keepSessionIDs {
				return true
			}
		}
	}
	return false
}

// cleanPath rewrites buf[ps:], an escaped path starting with '/', in place:
// session-id path parameters go, dot segments are resolved and empty
// segments dropped, keeping a trailing slash. The result is never longer
// than the input, so writing never overtakes reading.
func (n *Normalizer) cleanPath(buf []byte, ps int) []byte {
	end := len(buf)
	w, r := ps, ps // output end and read position (at a '/'); w <= r
	trailing := false
	for r < end {
		segStart := r + 1
		segEnd := end
		if j := bytes.IndexByte(buf[segStart:end], '/'); j >= 0 {
			segEnd = segStart + j
		}
		seg := buf[segStart:segEnd]
		last := segEnd == end
		if !n.keepSessionIDs && bytes.IndexByte(seg, ';') >= 0 {
			seg = compactParams(seg, true)
		}
		switch {
		case len(seg) == 0 || (len(seg) == 1 && seg[0] == '.'):
			trailing = last
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			if w > ps {
				w = ps + bytes.LastIndexByte(buf[ps:w], '/')
			}
			trailing = last
		default:
			buf[w] = '/'
			w++
			w += copy(buf[w:], seg)
			trailing = false
		}
		r = segEnd
	}
	if w == ps || trailing {
		buf[w] = '/'
		w++
	}
	return buf[:w]
}

// tidyQuery rewrites buf[qs:], which holds '?' and an escaped query, in
// place: empty parameters and session ids go; if nothing is left the '?'
// goes too.
func (n *Normalizer) tidyQuery(buf []byte, qs int) []byte {
	end := len(buf)
	r, w := qs+1, qs+1 // read and write positions; w <= r always
	for r <= end {
		pe := end
		if j := bytes.IndexByte(buf[r:end], '&'); j >= 0 {
			pe = r + j
		}
		if kept := n.filterParam(buf[r:pe]); len(kept) > 0 {
			if w > qs+1 {
				buf[w] = '&'
				w++
			}
			w += copy(buf[w:], kept)
		}
		r = pe + 1
	}
	if w == qs+1 {
		return buf[:qs]
	}
	return buf[:w]
}

// filterParam returns what is left of one query parameter (possibly
// compacted in place), or nothing if it is to be dropped.
func (n *Normalizer) filterParam(p []byte) []byte {
	if len(p) == 0 {
		return nil
	}
	if !n.keepSessionIDs {
		if bytes.IndexByte(p, ';') >= 0 {
			p = compactParams(p, false)
		} else if isSessionParam(p) {
			return nil
		}
	}
	if len(n.stripParams) > 0 && len(p) > 0 {
		name := p
		if eq := bytes.IndexByte(p, '='); eq >= 0 {
			name = p[:eq]
		}
		if _, drop := n.stripParams[strings.ToLower(string(name))]; drop {
			return nil
		}
	}
	return p
}

// compactParams drops ';'-separated session-id pieces from p in place and
// returns what is left. With keepFirst the first piece (a path segment's
// name) always stays. In a query this is Nutch's rule that also strips
// ";jsessionid=..." inside a parameter.
func compactParams(p []byte, keepFirst bool) []byte {
	w, r := 0, 0
	first := true
	for r <= len(p) {
		pe := len(p)
		if j := bytes.IndexByte(p[r:], ';'); j >= 0 {
			pe = r + j
		}
		if piece := p[r:pe]; (keepFirst && r == 0) || !isSessionParam(piece) {
			if !first { // w < r here, so this overwrites nothing unread
				p[w] = ';'
				w++
			}
			w += copy(p[w:], piece)
			first = false
		}
		r = pe + 1
	}
	return p[:w]
}

// isSessionParam reports whether "name=value" has a session-id name.
func isSessionParam(p []byte) bool {
	eq := bytes.IndexByte(p, '=')
	if eq < 0 {
		return false
	}
	return isSessionName(p[:eq])
}

// isSessionName matches Nutch's (?i)_?(l|j|bv_)?(sid|phpsessid|sessionid)
// and ASP's aspsessionid followed by letters.
func isSessionName(name []byte) bool {
	if len(name) > 0 && name[0] == '_' {
		name = name[1:]
	}
	if sessionBase(name) {
		return true
	}
	if len(name) > 1 && (name[0]|0x20 == 'l' || name[0]|0x20 == 'j') && sessionBase(name[1:]) {
		return true
	}
	if len(name) > 3 && bytes.EqualFold(name[:3], []byte("bv_")) && sessionBase(name[3:]) {
		return true
	}
	if len(name) >= 12 && bytes.EqualFold(name[:12], []byte("aspsessionid")) {
		for _, c := range name[12:] {
			if c|0x20 < 'a' || c|0x20 > 'z' {
				return false
			}
		}
		return true
	}
	return false
}

func sessionBase(b []byte) bool {
	switch len(b) {
	case 3:
		return bytes.EqualFold(b, []byte("sid"))
	case 9:
		return bytes.EqualFold(b, []byte("phpsessid")) || bytes.EqualFold(b, []byte("sessionid"))
	}
	return false
}
