package crawldb

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/trawl/trawl/arrowio"
	"github.com/trawl/trawl/internal/jsonrec"
	"github.com/trawl/trawl/parquetio"
)

// DumpFilter selects the datums readdb dump writes. The zero value selects
// everything.
type DumpFilter struct {
	// Status, if not 0, is the only status written.
	Status Status
	// Regex, if not nil, must match the URL somewhere (Go regexp
	// semantics: unlike Nutch's -regex, which must match the whole URL,
	// anchor with ^ and $ for that).
	Regex *regexp.Regexp
	// Limit, if positive, is the most datums written.
	Limit int64
}

// NewDumpFilter builds a filter from readdb dump's flags: a db_* status by
// name or number (db_fetched or 2, ...; empty for any), a regular expression on the URL (empty
// for any) and a limit (0 for none).
func NewDumpFilter(status, regex string, limit int64) (DumpFilter, error) {
	var f DumpFilter
	if status != "" {
		s, err := ParseStatus(status)
		if err != nil {
			return f, fmt.Errorf("crawldb: dump --status: %w", err)
		}
		if !s.IsDB() {
			return f, fmt.Errorf("crawldb: dump --status %s: the CrawlDB holds only the db_* statuses (1 to 8)", s)
		}
		f.Status = s
	}
	if regex != "" {
		re, err := regexp.Compile(regex)
		if err != nil {
			return f, fmt.Errorf("crawldb: dump --regex %q: %w", regex, err)
		}
		f.Regex = re
	}
	if limit < 0 {
		return f, fmt.Errorf("crawldb: dump --limit must not be negative, not %d", limit)
	}
	f.Limit = limit
	return f, nil
}

// Match reports whether d passes the status and regex conditions.
func (f DumpFilter) Match(d *Datum) bool {
	if f.Status != 0 && d.Status != f.Status {
		return false
	}
	if f.Regex != nil && !f.Regex.MatchString(d.URL) {
		return false
	}
	return true
}

// DumpWriter writes datums in one format. Close flushes buffered output
// (and writes a Parquet footer); it does not close the underlying writer.
type DumpWriter interface {
	Write(d *Datum) error
	Close() error
}

// DumpFormats lists the formats NewDumpWriter accepts.
func DumpFormats() []string { return []string{"csv", "json", "parquet", "arrow"} }

// NewDumpWriter returns a writer of the named format ("csv", "json" for
// JSON Lines, "parquet", or "arrow" for an Arrow IPC stream) to w.
func NewDumpWriter(format string, w io.Writer) (DumpWriter, error) {
	switch format {
	case "arrow":
		return NewArrowWriter(w, arrowio.Options{})
	case "csv":
		return NewCSVWriter(w), nil
	case "json":
		return NewJSONWriter(w), nil
	case "parquet":
		return NewParquetWriter(w), nil
	}
	return nil, fmt.Errorf("crawldb: unknown dump format %q (known: %v)", format, DumpFormats())
}

// Dump writes the datums of rows that pass f to w, at most f.Limit, and
// closes w. It returns how many were written. Memory use is constant.
func Dump(ctx context.Context, rows iter.Seq2[Datum, error], f DumpFilter, w DumpWriter) (n int64, err error) {
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	seen := 0
	for d, err := range rows {
		if err != nil {
			return n, err
		}
		if seen++; seen%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return n, fmt.Errorf("crawldb: dump: %w", err)
			}
		}
		if !f.Match(&d) {
			continue
		}
		if err := w.Write(&d); err != nil {
			return n, err
		}
		n++
		if f.Limit > 0 && n >= f.Limit {
			break
		}
	}
	return n, nil
}

// textTimeLayout is RFC 3339 with milliseconds when there are any.
const textTimeLayout = "2006-01-02T15:04:05.999Z07:00"

// timeText formats a time as RFC 3339 in UTC with milliseconds when there
// are any; the zero time as "".
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return string(appendTime(make([]byte, 0, 24), t))
}

// appendTime appends t in UTC as textTimeLayout does, without parsing the
// layout each time (dumps format millions of times).
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, textTimeLayout)
	}
	h, mi, s := t.Clock()
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(two(b, y/100), y%100)
	b = two(append(b, '-'), int(mo))
	b = two(append(b, '-'), d)
	b = two(append(b, 'T'), h)
	b = two(append(b, ':'), mi)
	b = two(append(b, ':'), s)
	if ms := t.Nanosecond() / 1e6; ms > 0 {
		digits := [3]byte{byte('0' + ms/100), byte('0' + ms/10%10), byte('0' + ms%10)}
		n := 3
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[:n]...)
	}
	return append(b, 'Z')
}

// appendHistory formats a change history compactly: one "time+"
// (changed), "time-" (unchanged) or "time*" (the first fetch) per observation, oldest first, space
// separated, times as RFC 3339 UTC.
func appendHistory(b []byte, h []Observation) []byte {
	for i, o := range h {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendTime(b, o.Time)
		switch {
		case o.Initial:
			b = append(b, '*')
		case o.Changed:
			b = append(b, '+')
		default:
			b = append(b, '-')
		}
	}
	return b
}

// csvHeader is the header row of the CSV dump: the Parquet column names,
// with features flattened to features.words etc. and the status as both
// code and name.
var csvHeader = []string{
	"url", "host", "status_code", "status", "fetch_time", "prev_fetch_time", "modified_time", "generate_time",
	"fetch_interval", "fixed_interval", "retries", "score", "signature", "http_status", "content_type",
	"etag", "last_modified", "fetch_count", "change_count", "history",
	"features.words", "features.outlinks", "features.inlinks", "features.images", "features.depth", "features.bytes",
	"cluster_id", "cluster_sample", "schedule_source", "metadata",
	"relevance", "link_relevance", "off_topic", "off_topic_hops",
}

// CSVHeader returns the header row of the CSV dump.
func CSVHeader() []string { return append([]string(nil), csvHeader...) }

type csvWriter struct {
	w       *csv.Writer
	header  bool
	rec     []string
	scratch []byte
}

// NewCSVWriter returns a CSV DumpWriter (RFC 4180, header row first; see
// CSVHeader). Times are RFC 3339 UTC ("" for never), the signature hex,
// the history as "time+" (changed) or "time-" (unchanged) per
// observation, oldest first, space separated, the metadata a JSON object.
func NewCSVWriter(w io.Writer) DumpWriter {
	return &csvWriter{w: csv.NewWriter(w), rec: make([]string, len(csvHeader))}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func (c *csvWriter) Write(d *Datum) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(csvHeader); err != nil {
			return fmt.Errorf("crawldb: csv dump: %w", err)
		}
	}
	md := ""
	if len(d.Metadata) > 0 {
		b, err := json.Marshal(d.Metadata)
		if err != nil {
			return fmt.Errorf("crawldb: csv dump %s: metadata: %w", d.URL, err)
		}
		md = string(b)
	}
	r := c.rec
	r[0], r[1], r[2], r[3] = d.URL, d.Host, itoa(int64(d.Status)), d.Status.String()
	r[4], r[5], r[6], r[7] = timeText(d.FetchTime), timeText(d.PrevFetchTime), timeText(d.ModifiedTime), timeText(d.GenerateTime)
	r[8], r[9], r[10] = itoa(int64(d.FetchInterval)), strconv.FormatBool(d.FixedInterval), itoa(int64(d.Retries))
	r[11], r[12], r[13], r[14] = strconv.FormatFloat(float64(d.Score), 'g', -1, 32), hex.EncodeToString(d.Signature), itoa(int64(d.HTTPStatus)), d.ContentType
	c.scratch = appendHistory(c.scratch[:0], d.History)
	r[15], r[16], r[17], r[18], r[19] = d.ETag, d.LastModified, itoa(int64(d.FetchCount)), itoa(int64(d.ChangeCount)), string(c.scratch)
	f := d.Features
	r[20], r[21], r[22], r[23], r[24], r[25] = itoa(int64(f.Words)), itoa(int64(f.Outlinks)), itoa(int64(f.Inlinks)), itoa(int64(f.Images)), itoa(int64(f.Depth)), itoa(f.Bytes)
	r[26], r[27], r[28], r[29] = itoa(int64(d.ClusterID)), strconv.FormatBool(d.ClusterSample), string(d.Source), md
	r[30], r[31] = strconv.FormatFloat(float64(d.Relevance), 'g', -1, 32), strconv.FormatFloat(float64(d.LinkRelevance), 'g', -1, 32)
	r[32], r[33] = strconv.FormatBool(d.OffTopic), itoa(int64(d.OffTopicHops))
	if err := c.w.Write(r); err != nil {
		return fmt.Errorf("crawldb: csv dump: %w", err)
	}
	return nil
}

func (c *csvWriter) Close() error {
	if !c.header { // an empty dump still has its header
		c.header = true
		if err := c.w.Write(csvHeader); err != nil {
			return fmt.Errorf("crawldb: csv dump: %w", err)
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("crawldb: csv dump: %w", err)
	}
	return nil
}

// jsonDatum is a Datum as JSON: keys are the Parquet column names.
type jsonDatum struct {
	URL           string            `json:"url"`
	Host          string            `json:"host"`
	Status        string            `json:"status"`
	StatusCode    uint8             `json:"status_code"`
	FetchTime     *string           `json:"fetch_time"`
	PrevFetchTime *string           `json:"prev_fetch_time"`
	ModifiedTime  *string           `json:"modified_time"`
	GenerateTime  *string           `json:"generate_time"`
	FetchInterval int32             `json:"fetch_interval"`
	FixedInterval bool              `json:"fixed_interval"`
	Retries       int32             `json:"retries"`
	Score         float32           `json:"score"` // NaN and infinities: null
	Signature     *string           `json:"signature"`
	HTTPStatus    int32             `json:"http_status"`
	ContentType   string            `json:"content_type"`
	ETag          string            `json:"etag"`
	LastModified  string            `json:"last_modified"`
	FetchCount    int32             `json:"fetch_count"`
	ChangeCount   int32             `json:"change_count"`
	History       []jsonObservation `json:"history"`
	Features      jsonFeatures      `json:"features"`
	ClusterID     int32             `json:"cluster_id"`
	ClusterSample bool              `json:"cluster_sample"`
	Source        string            `json:"schedule_source"`
	Metadata      map[string]string `json:"metadata"`
	Relevance     float32           `json:"relevance"`
	LinkRelevance float32           `json:"link_relevance"`
	OffTopic      bool              `json:"off_topic"`
	OffTopicHops  int32             `json:"off_topic_hops"`
}

type jsonFeatures struct {
	Words    int32 `json:"words"`
	Outlinks int32 `json:"outlinks"`
	Inlinks  int32 `json:"inlinks"`
	Images   int32 `json:"images"`
	Depth    int32 `json:"depth"`
	Bytes    int64 `json:"bytes"`
}

type jsonObservation struct {
	Time         string `json:"time"`
	Changed      bool   `json:"changed"`
	LastModified string `json:"last_modified,omitempty"`
	Initial      bool   `json:"initial,omitempty"`
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := timeText(t)
	return &s
}

// MarshalDatumJSON encodes d as one JSON object whose keys are the
// Parquet column names: the status by name, its number as status_code, times as RFC 3339 UTC (null
// for never), the signature as hex (null if none), features as an object
// with their column names.
func MarshalDatumJSON(d *Datum) ([]byte, error) {
	return appendDatumJSON(nil, d), nil
}

// datumEncoder encodes a jsonDatum byte for byte as encoding/json.Marshal
// would (the JSON dumps of the CrawlDB and of segments share one encoder).
var datumEncoder = jsonrec.New[jsonDatum](jsonrec.Options{EscapeHTML: true})

// appendDatumJSON appends the MarshalDatumJSON object of d to b.
func appendDatumJSON(b []byte, d *Datum) []byte {
	j := jsonDatum{
		URL: d.URL, Host: d.Host, Status: d.Status.String(), StatusCode: uint8(d.Status),
		FetchTime: optTime(d.FetchTime), PrevFetchTime: optTime(d.PrevFetchTime),
		ModifiedTime: optTime(d.ModifiedTime), GenerateTime: optTime(d.GenerateTime),
		FetchInterval: d.FetchInterval, FixedInterval: d.FixedInterval, Retries: d.Retries,
		Score: d.Score, HTTPStatus: d.HTTPStatus, ContentType: d.ContentType,
		ETag: d.ETag, LastModified: d.LastModified, FetchCount: d.FetchCount, ChangeCount: d.ChangeCount,
		History: make([]jsonObservation, len(d.History)), Features: jsonFeatures(d.Features), ClusterID: d.ClusterID,
		ClusterSample: d.ClusterSample, Source: string(d.Source), Metadata: d.Metadata,
		Relevance: d.Relevance, LinkRelevance: d.LinkRelevance, OffTopic: d.OffTopic, OffTopicHops: d.OffTopicHops,
	}
	if len(d.Signature) > 0 {
		s := hex.EncodeToString(d.Signature)
		j.Signature = &s
	}
	for i, o := range d.History {
		j.History[i] = jsonObservation{Time: timeText(o.Time), Changed: o.Changed, Initial: o.Initial}
		if lm, ok := o.LastModified(); ok {
			j.History[i].LastModified = timeText(lm)
		}
	}
	if j.Metadata == nil {
		j.Metadata = map[string]string{}
	}
	return datumEncoder.Append(b, &j)
}

type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewJSONWriter returns a JSON Lines DumpWriter: one MarshalDatumJSON
// object per line.
func NewJSONWriter(w io.Writer) DumpWriter { return &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)} }

func (j *jsonWriter) Write(d *Datum) error {
	j.buf = append(appendDatumJSON(j.buf[:0], d), '\n')
	if _, err := j.w.Write(j.buf); err != nil {
		return fmt.Errorf("crawldb: json dump: %w", err)
	}
	return nil
}

func (j *jsonWriter) Close() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("crawldb: json dump: %w", err)
	}
	return nil
}

// parquetDumpBatch is how many rows the Parquet dump buffers per write.
const parquetDumpBatch = 256

type parquetWriter struct {
	w   *parquetio.Writer[Datum]
	buf []Datum
}

// NewParquetWriter returns a DumpWriter of a Parquet file with the
// CrawlDB's own schema (zstd), readable as a CrawlDB part.
func NewParquetWriter(w io.Writer) DumpWriter {
	return &parquetWriter{w: parquetio.NewWriter[Datum](w), buf: make([]Datum, 0, parquetDumpBatch)}
}

func (p *parquetWriter) Write(d *Datum) error {
	p.buf = append(p.buf, *d)
	if len(p.buf) == cap(p.buf) {
		return p.flush()
	}
	return nil
}

func (p *parquetWriter) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	err := p.w.Write(p.buf...)
	clear(p.buf)
	p.buf = p.buf[:0]
	if err != nil {
		return fmt.Errorf("crawldb: parquet dump: %w", err)
	}
	return nil
}

func (p *parquetWriter) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	if err := p.w.Close(); err != nil {
		return fmt.Errorf("crawldb: parquet dump: %w", err)
	}
	return nil
}

type arrowWriter struct {
	w *arrowio.Writer[Datum]
}

// NewArrowWriter returns a DumpWriter of an Arrow IPC stream whose
// columns mirror the CrawlDB's Parquet columns, with status_name (the
// status's name, dictionary encoded) after status, in record batches
// bounded as o says (see package arrowio).
func NewArrowWriter(w io.Writer, o arrowio.Options) (DumpWriter, error) {
	o.Enums = append(o.Enums, StatusEnum())
	aw, err := arrowio.NewWriter[Datum](w, o)
	if err != nil {
		return nil, fmt.Errorf("crawldb: arrow dump: %w", err)
	}
	return &arrowWriter{w: aw}, nil
}

func (a *arrowWriter) Write(d *Datum) error {
	if err := a.w.Write(d); err != nil {
		return fmt.Errorf("crawldb: arrow dump: %w", err)
	}
	return nil
}

func (a *arrowWriter) Close() error {
	if err := a.w.Close(); err != nil {
		return fmt.Errorf("crawldb: arrow dump: %w", err)
	}
	return nil
}

// ScoredURL is a URL with its score.
type ScoredURL struct {
	URL   string
	Score float32
}

// better reports whether a ranks before b: higher score, then smaller URL.
func better(a, b ScoredURL) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.URL < b.URL
}

// TopN keeps the N best-scoring URLs seen (ties broken by URL order) in a
// bounded heap: memory is O(N). NaN scores are ignored. Not safe for
// concurrent use; Merge per-goroutine TopNs.
type TopN struct {
	n int
	h topHeap
}

// NewTopN returns a TopN keeping n URLs (none if n <= 0).
func NewTopN(n int) *TopN { return &TopN{n: max(n, 0)} }

// Add offers one URL.
func (t *TopN) Add(url string, score float32) {
	if t.n == 0 || math.IsNaN(float64(score)) {
		return
	}
	s := ScoredURL{URL: url, Score: score}
	if len(t.h) < t.n {
		heap.Push(&t.h, s)
		return
	}
	if better(s, t.h[0]) {
		t.h[0] = s
		heap.Fix(&t.h, 0)
	}
}

// Merge offers every URL o keeps.
func (t *TopN) Merge(o *TopN) {
	for _, s := range o.h {
		t.Add(s.URL, s.Score)
	}
}

// Result returns the kept URLs, best first.
func (t *TopN) Result() []ScoredURL {
	out := append([]ScoredURL(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// topHeap is a min-heap: the root is the worst kept URL.
type topHeap []ScoredURL

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(ScoredURL)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Top returns the n best-scoring datums of rows, best first, ties in URL
// order (readdb top).
func Top(ctx context.Context, rows iter.Seq2[Datum, error], n int) ([]ScoredURL, error) {
	t := NewTopN(n)
	seen := 0
	for d, err := range rows {
		if err != nil {
			return nil, err
		}
		if seen++; seen%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("crawldb: top: %w", err)
			}
		}
		t.Add(d.URL, d.Score)
	}
	return t.Result(), nil
}
