package fetcher

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// wireReader counts the bytes read from the network and keeps the first
// error that is not io.EOF, so that a decoding error can be told from a
// network one.
type wireReader struct {
	r   io.Reader
	n   int64
	err error
}

func (w *wireReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.n += int64(n)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// body is a response body as read.
type body struct {
	data      []byte
	truncated bool
	wire      int64 // bytes read from the network
	// decodeErr is set when a compressed body could not be decoded to its
	// end: data holds what was decoded (Nutch's unzipBestEffort).
	decodeErr error
}

// readBody reads at most limit bytes of the decoded body of a response
// with the given Content-Encoding and declared length (-1 if unknown).
// gzip, x-gzip and deflate (zlib or raw) are decoded; other encodings are
// kept as sent. Both the decoded bytes and the bytes read from the network
// are bounded by limit, so that a compression bomb is cut at the limit
// and never inflated past it. A network error (reset, timeout, a body
// shorter than its Content-Length) is returned as the error.
func readBody(r io.Reader, encoding string, length, limit int64) (body, error) {
	w := &wireReader{r: io.LimitReader(r, limit+1)}
	var dec io.Reader = w
	enc := strings.ToLower(strings.TrimSpace(encoding))
	compressed := false
	switch enc {
	case "gzip", "x-gzip":
		br := bufio.NewReader(w)
		if h, err := br.Peek(2); err != nil || h[0] != 0x1f || h[1] != 0x8b {
			// Not gzip after all (a server that labels plain bytes):
			// keep the bytes as sent.
			dec = br
			break
		}
		compressed = true
		zr, err := gzip.NewReader(br)
		if err != nil {
			if w.err != nil {
				return body{wire: w.n}, w.err
			}
			return body{wire: w.n, truncated: true, decodeErr: err}, nil
		}
		defer zr.Close()
		dec = zr
	case "deflate":
		compressed = true
		br := bufio.NewReader(w)
		if h, err := br.Peek(2); err == nil && isZlibHeader(h) {
			zr, err := zlib.NewReader(br)
			if err != nil {
				// A zlib header that does not decode (a preset
				// dictionary, a window over 32 KiB, or cut short) is a
				// decoding error, as a bad gzip header is: the body is
				// kept as decoded (nothing), and only a network error
				// fails the request.
				if w.err != nil {
					return body{wire: w.n}, w.err
				}
				return body{wire: w.n, truncated: true, decodeErr: fmt.Errorf("deflate body: %w", err)}, nil
			}
			defer zr.Close()
			dec = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			dec = fr
		}
	}
	hint := length
	if compressed {
		hint = -1
	}
	data, err := readLimited(dec, limit, hint)
	b := body{data: data, wire: w.n}
	if int64(len(data)) > limit {
		b.data, b.truncated = data[:limit], true
	}
	if w.n > limit {
		// The wire limit was hit: what follows was never read.
		b.truncated = true
	}
	switch {
	case w.err != nil:
		return b, w.err
	case err == nil || err == io.EOF:
		return b, nil
	case compressed && !b.truncated:
		// A corrupt stream: keep what decoded.
		b.decodeErr = err
		b.truncated = true
		return b, nil
	case compressed:
		return b, nil // the stream was cut by the wire limit
	default:
		return b, err
	}
}

// readLimited reads r to EOF or to limit+1 bytes, whichever is first,
// into a buffer of hint+1 bytes when the length is known (hint > 0), so
// that a body of the announced length is read without growing the buffer
// (bytes.Buffer.ReadFrom would double it to look for EOF), and of 32 KiB
// otherwise, grown as needed.
func readLimited(r io.Reader, limit, hint int64) ([]byte, error) {
	size := min(32<<10, limit+1)
	if hint > 0 {
		size = min(hint+1, limit+1)
	}
	buf := make([]byte, 0, size)
	left := limit + 1
	for left > 0 {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(int64(cap(buf)), left)))
		}
		p := buf[len(buf):cap(buf)]
		if int64(len(p)) > left {
			p = p[:left]
		}
		n, err := r.Read(p)
		buf, left = buf[:len(buf)+n], left-int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			return buf, err
		}
	}
	return buf, io.EOF
}

// isZlibHeader reports whether h starts a zlib stream (RFC 1950): method
// 8 (deflate) and a header checksum that is a multiple of 31.
func isZlibHeader(h []byte) bool {
	return len(h) >= 2 && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}
