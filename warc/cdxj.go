package warc

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// cdxTimeLayout is the CDXJ capture time: 14 digits, UTC.
const cdxTimeLayout = "20060102150405"

// IndexEntry is one CDXJ line: a response record of a WARC file.
type IndexEntry struct {
	// Key is the URL's SURT key (Key) and Time the capture time.
	Key  string
	Time time.Time
	// URL, Mime (media type without parameters), Status (HTTP status),
	// Digest (the payload digest, "sha1:..."), Length and Offset (the
	// record's gzip member in the file) and Filename (the WARC file's
	// name) are the JSON fields.
	URL      string
	Mime     string
	Status   int
	Digest   string
	Length   int64
	Offset   int64
	Filename string
}

// cdxjFields is the JSON object of a CDXJ line. pywb writes every value
// as a string; so does this.
type cdxjFields struct {
	URL      string `json:"url"`
	Mime     string `json:"mime,omitempty"`
	Status   string `json:"status"`
	Digest   string `json:"digest"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// SortIndex sorts entries as a CDXJ index is sorted: by key, then time
// (then offset, so equal captures keep their file order).
func SortIndex(entries []IndexEntry) {
	slices.SortStableFunc(entries, func(a, b IndexEntry) int {
		if c := cmp.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
}

// WriteIndex writes entries to w as CDXJ lines, in the order given (sort
// them with SortIndex first).
func WriteIndex(w io.Writer, entries []IndexEntry) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // each object ends its line
	enc.SetEscapeHTML(false)
	for i := range entries {
		e := &entries[i]
		bw.WriteString(e.Key)
		bw.WriteByte(' ')
		bw.WriteString(e.Time.UTC().Format(cdxTimeLayout))
		bw.WriteByte(' ')
		if err := enc.Encode(cdxjFields{
			URL: e.URL, Mime: e.Mime, Status: strconv.Itoa(e.Status), Digest: e.Digest,
			Length: strconv.FormatInt(e.Length, 10), Offset: strconv.FormatInt(e.Offset, 10), Filename: e.Filename,
		}); err != nil {
			return fmt.Errorf("cdxj: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cdxj: %w", err)
	}
	return nil
}
