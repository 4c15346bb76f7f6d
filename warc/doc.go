// Package warc writes web archives: WARC/1.1 files (ISO 28500:2017) of a
// crawl's HTTP exchanges, and CDXJ indexes of them as pywb and
// OpenWayback read them.
//
// # WARC files
//
// A WARC file is a sequence of records. Each record is a header block of
// named fields, much like an HTTP header, then a content block of
// Content-Length bytes, then two CRLFs:
//
//	WARC/1.1
//	WARC-Type: response
//	WARC-Record-ID: <urn:uuid:6d0c2a5e-...>
//	WARC-Date: 2026-11-27T19:39:14.123Z
//	WARC-Target-URI: http://example.com/
//	WARC-IP-Address: 93.184.215.14
//	WARC-Concurrent-To: <urn:uuid:...>
//	WARC-Warcinfo-ID: <urn:uuid:...>
//	Content-Type: application/http;msgtype=response
//	WARC-Block-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ
//	WARC-Payload-Digest: sha1:...
//	Content-Length: 1234
//
//	HTTP/1.1 200 OK
//	Content-Type: text/html
//	...
//
// This package writes three record types. A warcinfo record heads every
// file: its block is "application/warc-fields" describing the software,
// the format, and the crawl (its agent and robots policy). Each fetch
// gives a request record (the HTTP request sent) and a response record
// (the HTTP response: status line, header and entity body), each naming
// the other in WARC-Concurrent-To, and both naming their warcinfo in
// WARC-Warcinfo-ID. A record's WARC-Block-Digest is the SHA-1 of its whole
// content block, its WARC-Payload-Digest the SHA-1 of the payload, the
// entity body after the HTTP header; both are written "sha1:" and base32,
// as Heritrix and warcio write them, so readers can check them.
//
// Every record is a gzip member of its own, and the file (".warc.gz") is
// their concatenation, which any gzip reader decompresses as one stream.
// A record's offset in the file and its compressed length therefore
// address it: seek there and decompress one member to read one record.
// That is what the CDXJ index stores.
//
// # Decoded bodies
//
// trawl's fetcher stores bodies decoded: gzip and deflate
// Content-Encoding removed (other encodings are kept as sent), any
// chunked Transfer-Encoding removed by the HTTP client. A response record
// must describe the bytes it holds, or its digests and lengths would not
// validate, so the HTTP header written is rewritten to agree with the
// body: a Content-Encoding the body no longer has, a Transfer-Encoding
// and a Content-Length that differs from the body's length are kept under
// their names prefixed with X-Archive-Orig- (pywb's prefix for original
// headers it rewrote), and Content-Length is set to the body's length.
// A body cut at the content limit is marked WARC-Truncated: length.
//
// # File names and rolling
//
// Files are named as Heritrix names them,
// {prefix}-{timestamp}-{serial}-{host}.warc.gz, the timestamp of 17
// digits (yyyyMMddHHmmssSSS) when the file was opened, the serial of 5
// digits counting the writer's files; a writer opens a new file, with its
// own warcinfo, once the current one reaches the maximum size (1 GB by
// default, as Heritrix).
//
// # CDXJ
//
// Beside every WARC file, its index: one line per response record,
//
//	com,example)/index.html 20261127193914 {"url":"http://www.example.com/index.html","mime":"text/html","status":"200","digest":"sha1:...","length":"1043","offset":"0","filename":"trawl-....warc.gz"}
//
// the SURT key of the URL (Key), the 14-digit capture time, then a JSON
// object with the URL, media type, HTTP status, payload digest, the
// record's compressed length and offset in the file, and the file's name.
// Lines are sorted by key, then time, so a replay tool can binary-search
// them. The index of a file X.warc.gz is X.cdxj.
package warc
