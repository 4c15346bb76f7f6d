// Package warctest reads WARC files and CDXJ indexes back for tests, with
// an independent reader (github.com/nlnwa/gowarc) that validates every
// record strictly: syntax, WARC/1.1 conformance, Content-Length, block and
// payload digests.
package warctest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nlnwa/gowarc"
)

// Record is a WARC record as the independent reader read it.
type Record struct {
	// Offset is the record's offset in its file.
	Offset int64
	// Type, ID, Date, TargetURI, IP, ConcurrentTo, WarcinfoID,
	// ContentType, BlockDigest, PayloadDigest, Truncated and Filename are
	// the WARC header fields of those names ("" when absent).
	Type, ID, Date, TargetURI, IP, ConcurrentTo, WarcinfoID      string
	ContentType, BlockDigest, PayloadDigest, Truncated, Filename string
	// Status and Header are an HTTP response's; RequestLine and Header an
	// HTTP request's.
	Status      int
	RequestLine string
	Header      http.Header
	// Payload is the entity body (HTTP records) or the whole block.
	Payload []byte
}

// ReadFile reads every record of the WARC file path, failing t on any
// validation error.
func ReadFile(t testing.TB, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// gowarcMu serializes the independent reader: every gowarc reader calls
// uuid.EnableRandPool, which writes a package variable of
// github.com/google/uuid, so two tests reading WARC files at once race
// (the race detector reports it).
var gowarcMu sync.Mutex

// read reads and validates every record of a WARC stream.
func read(r io.Reader) ([]Record, error) {
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	rd, err := gowarc.NewWarcFileReaderFromStream(r, 0, gowarc.WithStrictValidation(),
		gowarc.WithBlockErrorPolicy(gowarc.ErrFail), gowarc.WithFixDigest(false), gowarc.WithFixContentLength(false),
		gowarc.WithAddMissingDigest(false), gowarc.WithAddMissingRecordId(false), gowarc.WithFixSyntaxErrors(false))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []Record
	for {
		rec, off, val, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if val != nil && !val.Valid() {
			rec.Close()
			return out, errors.New("record at " + strconv.FormatInt(off, 10) + ": " + val.String())
		}
		h := rec.WarcHeader()
		r := Record{Offset: off, Type: rec.Type().String(), ID: h.Get(gowarc.WarcRecordID), Date: h.Get(gowarc.WarcDate),
			TargetURI: h.Get(gowarc.WarcTargetURI), IP: h.Get(gowarc.WarcIPAddress), ConcurrentTo: h.Get(gowarc.WarcConcurrentTo),
			WarcinfoID: h.Get(gowarc.WarcWarcinfoID), ContentType: h.Get(gowarc.ContentType), BlockDigest: h.Get(gowarc.WarcBlockDigest),
			PayloadDigest: h.Get(gowarc.WarcPayloadDigest), Truncated: h.Get(gowarc.WarcTruncated), Filename: h.Get(gowarc.WarcFilename)}
		var pr io.Reader
		switch b := rec.Block().(type) {
		case gowarc.HttpResponseBlock:
			r.Status, r.Header = b.HttpStatusCode(), *b.HttpHeader()
			pr, err = b.PayloadBytes()
		case gowarc.HttpRequestBlock:
			r.RequestLine, r.Header = b.HttpRequestLine(), *b.HttpHeader()
			pr, err = b.PayloadBytes()
		default:
			pr, err = b.RawBytes()
		}
		if err == nil {
			r.Payload, err = io.ReadAll(pr)
		}
		rec.Close()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// IndexLine is one CDXJ line.
type IndexLine struct {
	Key, Time string
	Fields    map[string]string
}

// Dir is the WARC files of a directory and their indexes.
type Dir struct {
	// Files maps each WARC file's name to its records.
	Files map[string][]Record
	// Index maps each WARC file's name to its CDXJ lines.
	Index map[string][]IndexLine
}

// Responses returns the response records of every file, by target URI
// (a URI fetched twice keeps its last record).
func (d Dir) Responses() map[string]Record {
	m := map[string]Record{}
	for _, recs := range d.Files {
		for _, r := range recs {
			if r.Type == "response" {
				m[r.TargetURI] = r
			}
		}
	}
	return m
}

// CheckDir reads every WARC file (*.warc.gz) of dir and its CDXJ index
// (the same name with .cdxj for .warc.gz), and checks the indexes: each
// sorted by key and time, one line per response record, and each line's
// offset and length the gzip member of a response record of that URL and
// payload digest, read alone by the independent reader.
func CheckDir(t testing.TB, dir string) Dir {
	t.Helper()
	warcs, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	d := Dir{Files: map[string][]Record{}, Index: map[string][]IndexLine{}}
	for _, p := range warcs {
		name := filepath.Base(p)
		recs := ReadFile(t, p)
		d.Files[name] = recs
		if len(recs) == 0 || recs[0].Type != "warcinfo" || recs[0].Filename != name {
			t.Fatalf("%s does not begin with its warcinfo record", name)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		iname := strings.TrimSuffix(name, ".warc.gz") + ".cdxj"
		lines := readIndex(t, filepath.Join(dir, iname))
		d.Index[name] = lines
		var responses int
		for _, r := range recs {
			if r.Type == "response" {
				responses++
			}
		}
		if len(lines) != responses {
			t.Errorf("%s: %d lines for %d response records", iname, len(lines), responses)
		}
		if !slices.IsSortedFunc(lines, func(a, b IndexLine) int {
			return strings.Compare(a.Key+" "+a.Time, b.Key+" "+b.Time)
		}) {
			t.Errorf("%s is not sorted by key and time", iname)
		}
		for _, l := range lines {
			checkLine(t, iname, name, data, l)
		}
	}
	return d
}

// checkLine checks that one index line addresses its record in data, the
// content of the WARC file name.
func checkLine(t testing.TB, iname, name string, data []byte, l IndexLine) {
	t.Helper()
	off, err1 := strconv.ParseInt(l.Fields["offset"], 10, 64)
	n, err2 := strconv.ParseInt(l.Fields["length"], 10, 64)
	if err1 != nil || err2 != nil || off < 0 || n <= 0 || off+n > int64(len(data)) {
		t.Errorf("%s: line for %s: bad offset %q or length %q", iname, l.Fields["url"], l.Fields["offset"], l.Fields["length"])
		return
	}
	if l.Fields["filename"] != name {
		t.Errorf("%s: line for %s names file %q", iname, l.Fields["url"], l.Fields["filename"])
	}
	member := data[off : off+n]
	// The range is exactly one gzip member: it decompresses alone, to
	// its end, with nothing after it.
	zr, err := gzip.NewReader(bytes.NewReader(member))
	if err != nil {
		t.Errorf("%s: line for %s: offset %d is not a gzip member: %v", iname, l.Fields["url"], off, err)
		return
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Errorf("%s: line for %s: member at %d: %v", iname, l.Fields["url"], off, err)
		return
	}
	if rest, _ := io.ReadAll(bufio.NewReader(zr)); len(rest) != 0 {
		t.Errorf("%s: line for %s: member at %d does not end at its length", iname, l.Fields["url"], off)
	}
	recs, err := read(bytes.NewReader(member))
	if err != nil || len(recs) != 1 {
		t.Errorf("%s: line for %s: the member at %d is not one valid record (%d records, %v)", iname, l.Fields["url"], off, len(recs), err)
		return
	}
	r := recs[0]
	if r.Type != "response" || r.TargetURI != l.Fields["url"] || r.PayloadDigest != l.Fields["digest"] ||
		strconv.Itoa(r.Status) != l.Fields["status"] {
		t.Errorf("%s: line %s %s %v addresses a %s record of %s, status %d, digest %s", iname, l.Key, l.Time, l.Fields,
			r.Type, r.TargetURI, r.Status, r.PayloadDigest)
	}
}

// readIndex reads a CDXJ file: "KEY TIME {json}" lines.
func readIndex(t testing.TB, path string) []IndexLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	var lines []IndexLine
	for l := range strings.Lines(string(data)) {
		key, rest, ok1 := strings.Cut(strings.TrimSuffix(l, "\n"), " ")
		ts, js, ok2 := strings.Cut(rest, " ")
		var f map[string]string
		if !ok1 || !ok2 || len(ts) != 14 || json.Unmarshal([]byte(js), &f) != nil {
			t.Fatalf("%s: bad CDXJ line %q", path, l)
		}
		lines = append(lines, IndexLine{Key: key, Time: ts, Fields: f})
	}
	return lines
}
