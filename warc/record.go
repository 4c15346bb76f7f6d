package warc

import (
	"bufio"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/gzip"
)

// Version is the WARC version this package writes.
const Version = "WARC/1.1"

// The record types this package writes (WARC-Type).
const (
	TypeWarcinfo = "warcinfo"
	TypeRequest  = "request"
	TypeResponse = "response"
)

// The content types of the record blocks this package writes.
const (
	ContentTypeWarcFields   = "application/warc-fields"
	ContentTypeHTTPRequest  = "application/http;msgtype=request"
	ContentTypeHTTPResponse = "application/http;msgtype=response"
)

// dateLayout is WARC-Date's layout: UTC, W3C-ISO8601 with millisecond
// fractions, which WARC/1.1 allows.
const dateLayout = "2006-01-02T15:04:05.000Z"

// Field is one named WARC header field.
type Field struct {
	Name, Value string
}

// Record is a WARC record to write: its fields besides WARC/1.1,
// WARC-Block-Digest, WARC-Payload-Digest and Content-Length (which the
// writer computes), and its content block in two parts: Head, then
// Payload. The payload digest is the SHA-1 of Payload; records without a
// payload (warcinfo) set NoPayloadDigest.
type Record struct {
	Fields          []Field
	Head            []byte
	Payload         []byte
	NoPayloadDigest bool
}

// Written says where a record went: its offset in the file and its
// length there (the gzip member's), and its payload digest ("sha1:...",
// "" without one).
type Written struct {
	Offset, Length int64
	PayloadDigest  string
}

// Writer writes WARC records to one stream, each record a gzip member of
// its own, so that the offset and length of a member address its record.
// It is not safe for concurrent use.
type Writer struct {
	out   *bufio.Writer
	off   int64 // bytes written to out
	zw    *gzip.Writer
	head  []byte
	block hash.Hash
	pay   hash.Hash
}

// NewWriter returns a writer of gzip-compressed records to w at the gzip
// level (gzip.DefaultCompression for Heritrix's default), counting
// offsets from 0.
func NewWriter(w io.Writer, level int) (*Writer, error) {
	zw, err := gzip.NewWriterLevel(io.Discard, level)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	return &Writer{out: bufio.NewWriterSize(w, 64<<10), zw: zw, block: sha1.New(), pay: sha1.New()}, nil
}

// Offset is the number of bytes written so far: the offset of the next
// record.
func (w *Writer) Offset() int64 { return w.off }

// Write writes one record as one gzip member.
func (w *Writer) Write(r *Record) (Written, error) {
	w.block.Reset()
	w.block.Write(r.Head)
	w.block.Write(r.Payload)
	blockDigest := digestString(w.block)
	var payDigest string
	if !r.NoPayloadDigest {
		w.pay.Reset()
		w.pay.Write(r.Payload)
		payDigest = digestString(w.pay)
	}
	h := append(w.head[:0], Version...)
	h = append(h, "\r\n"...)
	for _, f := range r.Fields {
		h = appendField(h, f.Name, f.Value)
	}
	h = appendField(h, "WARC-Block-Digest", blockDigest)
	if payDigest != "" {
		h = appendField(h, "WARC-Payload-Digest", payDigest)
	}
	h = appendField(h, "Content-Length", strconv.Itoa(len(r.Head)+len(r.Payload)))
	h = append(h, "\r\n"...)
	w.head = h

	start := w.off
	cw := countWriter{w: w.out, n: &w.off}
	w.zw.Reset(cw)
	for _, p := range [][]byte{h, r.Head, r.Payload, []byte("\r\n\r\n")} {
		if _, err := w.zw.Write(p); err != nil {
			return Written{}, fmt.Errorf("warc: write record: %w", err)
		}
	}
	if err := w.zw.Close(); err != nil {
		return Written{}, fmt.Errorf("warc: write record: %w", err)
	}
	return Written{Offset: start, Length: w.off - start, PayloadDigest: payDigest}, nil
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	if err := w.out.Flush(); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// countWriter counts the bytes written through it into *n.
type countWriter struct {
	w io.Writer
	n *int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// digestString is "sha1:" and the base32 of h's sum, as Heritrix and
// warcio write digests.
func digestString(h hash.Hash) string {
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// PayloadDigest is the WARC-Payload-Digest of a payload: "sha1:" and the
// base32 of its SHA-1.
func PayloadDigest(payload []byte) string {
	h := sha1.New()
	h.Write(payload)
	return digestString(h)
}

// NewRecordID returns a new WARC-Record-ID, a random UUID URN in angle
// brackets.
func NewRecordID() (string, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("warc: record id: %w", err)
	}
	return "<urn:uuid:" + id.String() + ">", nil
}

// FormatDate formats t as a WARC-Date.
func FormatDate(t time.Time) string { return t.UTC().Format(dateLayout) }
