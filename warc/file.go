package warc

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// DefaultMaxFileSize is the size past which a FileWriter starts a new
// file, as Heritrix's default: 1 GB.
const DefaultMaxFileSize = 1_000_000_000

// DefaultPrefix is the file name prefix of a FileWriter without one.
const DefaultPrefix = "trawl"

// Info is what a file's warcinfo record says of the crawl.
type Info struct {
	// Software names the writing software and its version.
	Software string
	// Agent is the crawler's User-Agent (http-header-user-agent; ""
	// takes the User-Agent of the file's first request) and
	// Robots its robots.txt policy ("obey" or "ignore"). Operator,
	// Description and IsPartOf are written when set.
	Agent, Robots                   string
	Operator, Description, IsPartOf string
}

// fields returns the warcinfo block: application/warc-fields lines.
func (in Info) fields(host string) []byte {
	var b []byte
	add := func(k, v string) {
		if v != "" {
			b = appendHeaderLine(b, k, v)
		}
	}
	add("software", in.Software)
	add("format", "WARC File Format 1.1")
	add("conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/")
	add("hostname", host)
	add("http-header-user-agent", in.Agent)
	add("robots", in.Robots)
	add("operator", in.Operator)
	add("description", in.Description)
	add("isPartOf", in.IsPartOf)
	return b
}

// FileOptions configures a FileWriter.
type FileOptions struct {
	// Create creates a file by name (the WARC files and their CDXJ
	// indexes); required.
	Create func(name string) (io.WriteCloser, error)
	// Prefix begins the file names; "" means DefaultPrefix. Host ends
	// them (Heritrix's host part); "" means the machine's host name.
	Prefix, Host string
	// MaxFileSize: a file that reached this many bytes is closed before
	// the next exchange is written (so a file may pass it by one
	// exchange); 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Level is the gzip level; 0 means gzip.DefaultCompression.
	Level int
	// Info goes into every file's warcinfo record.
	Info Info
	// Now is the clock of the file names' timestamps; nil means
	// time.Now.
	Now func() time.Time
}

// FileStats counts what a FileWriter wrote.
type FileStats struct {
	// Files is the number of WARC files, Records of WARC records (the
	// warcinfo records too), Responses of response records; Bytes the
	// bytes of the WARC and CDXJ files.
	Files, Records, Responses, Bytes int64
}

// FileWriter writes exchanges into WARC files it rolls at a size, and
// each file's CDXJ index beside it (see the package doc). It is not safe
// for concurrent use.
type FileWriter struct {
	o      FileOptions
	name   string // current file
	f      io.WriteCloser
	w      *Writer
	infoID string
	index  []IndexEntry
	head   []byte
	stats  FileStats
	err    error
}

// NewFileWriter returns a writer with options o; it creates its first
// file at the first exchange.
func NewFileWriter(o FileOptions) (*FileWriter, error) {
	if o.Create == nil {
		return nil, errors.New("warc: no Create function")
	}
	if o.MaxFileSize < 0 {
		return nil, fmt.Errorf("warc: negative maximum file size %d", o.MaxFileSize)
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(o.Prefix+o.Host, "/\\") {
		return nil, fmt.Errorf("warc: file name parts %q, %q hold a path separator", o.Prefix, o.Host)
	}
	if o.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("warc: host name: %w", err)
		}
		o.Host = h
	}
	if o.Level == 0 {
		o.Level = gzip.DefaultCompression
	}
	if _, err := gzip.NewWriterLevel(io.Discard, o.Level); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &FileWriter{o: o}, nil
}

// FileName returns the name of a WARC file opened at t with the given
// serial number: {prefix}-{yyyyMMddHHmmssSSS}-{serial:05d}-{host}.warc.gz.
func FileName(prefix string, t time.Time, serial int64, host string) string {
	ts := t.UTC().Format("20060102150405.000")
	return fmt.Sprintf("%s-%s%s-%05d-%s.warc.gz", prefix, ts[:14], ts[15:], serial, host)
}

// IndexName returns the name of the CDXJ index of the WARC file warcName.
func IndexName(warcName string) string {
	return strings.TrimSuffix(strings.TrimSuffix(warcName, ".gz"), ".warc") + ".cdxj"
}

// Write writes the records of one exchange: its request record (if
// e.RequestHeader is set) and its response record, and indexes the
// response.
func (fw *FileWriter) Write(e *Exchange) error {
	if fw.err != nil {
		return fw.err
	}
	if err := fw.write(e); err != nil {
		fw.err = err
		return err
	}
	return nil
}

func (fw *FileWriter) write(e *Exchange) error {
	key, err := Key(e.URL)
	if err != nil {
		return fmt.Errorf("warc: %s: %w", e.URL, err)
	}
	if fw.w != nil && fw.w.Offset() >= fw.o.MaxFileSize {
		if err := fw.closeFile(); err != nil {
			return err
		}
	}
	if fw.w == nil {
		if err := fw.openFile(e); err != nil {
			return err
		}
	}
	respID, err := NewRecordID()
	if err != nil {
		return err
	}
	date := FormatDate(e.Time)
	common := func(typ, id string) []Field {
		fs := []Field{{"WARC-Type", typ}, {"WARC-Record-ID", id}, {"WARC-Date", date},
			{"WARC-Target-URI", e.URL}, {"WARC-Warcinfo-ID", fw.infoID}}
		if e.IP != "" {
			fs = append(fs, Field{"WARC-IP-Address", e.IP})
		}
		return fs
	}
	var reqID string
	if e.RequestHeader != nil {
		if reqID, err = NewRecordID(); err != nil {
			return err
		}
	}
	fields := common(TypeResponse, respID)
	if reqID != "" {
		fields = append(fields, Field{"WARC-Concurrent-To", reqID})
	}
	fields = append(fields, Field{"Content-Type", ContentTypeHTTPResponse})
	if e.Truncated {
		fields = append(fields, Field{"WARC-Truncated", "length"})
	}
	fw.head = appendResponseHead(fw.head[:0], e)
	wr, err := fw.w.Write(&Record{Fields: fields, Head: fw.head, Payload: e.Body})
	if err != nil {
		return fmt.Errorf("warc: %s: %w", fw.name, err)
	}
	fw.stats.Records++
	fw.stats.Responses++
	mt, _, _ := mime.ParseMediaType(e.Header.Get("Content-Type"))
	fw.index = append(fw.index, IndexEntry{Key: key, Time: e.Time, URL: e.URL, Mime: mt, Status: e.Status,
		Digest: wr.PayloadDigest, Length: wr.Length, Offset: wr.Offset, Filename: fw.name})
	if reqID == "" {
		return nil
	}
	fields = append(common(TypeRequest, reqID), Field{"WARC-Concurrent-To", respID}, Field{"Content-Type", ContentTypeHTTPRequest})
	if fw.head, err = appendRequestHead(fw.head[:0], e); err != nil {
		return err
	}
	if _, err := fw.w.Write(&Record{Fields: fields, Head: fw.head}); err != nil {
		return fmt.Errorf("warc: %s: %w", fw.name, err)
	}
	fw.stats.Records++
	return nil
}

// openFile opens the next file and writes its warcinfo record; without
// an Info.Agent, the agent is the User-Agent of e's request.
func (fw *FileWriter) openFile(e *Exchange) error {
	name := FileName(fw.o.Prefix, fw.o.Now(), fw.stats.Files, fw.o.Host)
	f, err := fw.o.Create(name)
	if err != nil {
		return fmt.Errorf("warc: create %s: %w", name, err)
	}
	w, err := NewWriter(f, fw.o.Level)
	if err != nil {
		f.Close()
		return err
	}
	id, err := NewRecordID()
	if err != nil {
		f.Close()
		return err
	}
	fw.name, fw.f, fw.w, fw.infoID = name, f, w, id
	fw.stats.Files++
	rec := Record{
		Fields: []Field{{"WARC-Type", TypeWarcinfo}, {"WARC-Record-ID", id}, {"WARC-Date", FormatDate(fw.o.Now())},
			{"WARC-Filename", name}, {"Content-Type", ContentTypeWarcFields}},
		Head:            fw.info(e).fields(fw.o.Host),
		NoPayloadDigest: true,
	}
	if _, err := w.Write(&rec); err != nil {
		return fmt.Errorf("warc: %s: %w", name, err)
	}
	fw.stats.Records++
	return nil
}

// info is the warcinfo of a file opened for e.
func (fw *FileWriter) info(e *Exchange) Info {
	in := fw.o.Info
	if in.Agent == "" && e.RequestHeader != nil {
		in.Agent = e.RequestHeader.Get("User-Agent")
	}
	return in
}

// closeFile finishes the current file and writes its index.
func (fw *FileWriter) closeFile() error {
	err := fw.w.Flush()
	if cerr := fw.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("warc: close %s: %w", fw.name, cerr)
	}
	fw.stats.Bytes += fw.w.Offset()
	if err != nil {
		return err
	}
	SortIndex(fw.index)
	iname := IndexName(fw.name)
	f, err := fw.o.Create(iname)
	if err != nil {
		return fmt.Errorf("warc: create %s: %w", iname, err)
	}
	cw := countWriter{w: f, n: &fw.stats.Bytes}
	err = WriteIndex(cw, fw.index)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("warc: close %s: %w", iname, cerr)
	}
	clear(fw.index)
	fw.index = fw.index[:0]
	fw.w, fw.f, fw.name = nil, nil, ""
	return err
}

// Close finishes the current file and its index.
func (fw *FileWriter) Close() error {
	if fw.w == nil {
		return fw.err
	}
	err := fw.closeFile()
	if fw.err != nil {
		return fw.err
	}
	return err
}

// Stats returns what the writer wrote so far (Bytes counts closed files).
func (fw *FileWriter) Stats() FileStats { return fw.stats }
