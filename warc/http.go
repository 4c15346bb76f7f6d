package warc

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exchange is one HTTP fetch to archive: the request sent and the
// response received.
type Exchange struct {
	// URL is the URL fetched (WARC-Target-URI).
	URL string
	// Time is when the fetch happened (WARC-Date).
	Time time.Time
	// IP is the server's address (WARC-IP-Address); "" if unknown.
	IP string
	// RequestHeader is the header of the GET request sent, without Host
	// (the URL's host is written); nil writes no request record (a
	// segment's content rows keep no request).
	RequestHeader http.Header
	// Proto is the response's protocol; "" means HTTP/1.1.
	Proto string
	// Status is the response's status code.
	Status int
	// Header is the response's header as received.
	Header http.Header
	// Body is the entity body as stored: decoded from gzip and deflate
	// Content-Encoding, without chunked Transfer-Encoding (see the
	// package doc). Truncated says it was cut at a length limit.
	Body      []byte
	Truncated bool
}

// OrigPrefix prefixes the names of the response header fields rewritten
// to agree with the stored body, keeping their original values (pywb's
// X-Archive-Orig- convention).
const OrigPrefix = "X-Archive-Orig-"

// decodedEncodings are the content codings trawl's fetcher decodes
// (fetcher.readBody): a body stored with only these was stored decoded.
var decodedEncodings = map[string]bool{"gzip": true, "x-gzip": true, "deflate": true, "identity": true}

// storedDecoded reports whether a body with Content-Encoding ce is stored
// decoded: every coding in ce is one the fetcher decodes.
func storedDecoded(ce string) bool {
	for c := range strings.SplitSeq(ce, ",") {
		if !decodedEncodings[strings.ToLower(strings.TrimSpace(c))] {
			return false
		}
	}
	return true
}

// appendResponseHead appends the HTTP status line and header of e, as
// archived: fields in name order, rewritten to agree with e.Body (see
// the package doc), then the empty line.
func appendResponseHead(b []byte, e *Exchange) []byte {
	proto := e.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	b = append(b, proto...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.Status), 10)
	if text := http.StatusText(e.Status); text != "" {
		b = append(b, ' ')
		b = append(b, text...)
	}
	b = append(b, "\r\n"...)
	names := make([]string, 0, len(e.Header))
	for k := range e.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	length := strconv.Itoa(len(e.Body))
	for _, k := range names {
		vs := e.Header[k]
		switch http.CanonicalHeaderKey(k) {
		case "Content-Encoding":
			if storedDecoded(strings.Join(vs, ",")) {
				k = OrigPrefix + k
			}
		case "Transfer-Encoding":
			k = OrigPrefix + k
		case "Content-Length":
			if len(vs) == 1 && vs[0] == length {
				continue // written below
			}
			k = OrigPrefix + k
		}
		for _, v := range vs {
			b = appendHeaderLine(b, k, v)
		}
	}
	b = appendHeaderLine(b, "Content-Length", length)
	return append(b, "\r\n"...)
}

// appendRequestHead appends the request line and header of e's GET
// request: Host first, then the other fields in name order, then the
// empty line.
func appendRequestHead(b []byte, e *Exchange) ([]byte, error) {
	u, err := url.Parse(e.URL)
	if err != nil {
		return nil, fmt.Errorf("warc: request URL: %w", err)
	}
	b = append(b, "GET "...)
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\n"...)
	b = appendHeaderLine(b, "Host", u.Host)
	names := make([]string, 0, len(e.RequestHeader))
	for k := range e.RequestHeader {
		if http.CanonicalHeaderKey(k) != "Host" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range e.RequestHeader[k] {
			b = appendHeaderLine(b, k, v)
		}
	}
	return append(b, "\r\n"...), nil
}

// appendHeaderLine appends "name: value" and CRLF, with any CR or LF in
// the value (which net/http never returns) turned into spaces so that a
// value cannot end the header.
func appendHeaderLine(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, "\r\n"...)
}
