package revisit

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// TracePage is one page of a recorded change history (a trace): its URL,
// the six features a crawl records of it, and the times it changed. Rate,
// if positive, is its true change rate per day (known for a synthetic
// trace); otherwise the oracle policy takes the rate the trace shows
// (changes over the observed days). Real pages need not change as Poisson
// processes: a trace carries any history (timetables, bursts, long quiet
// spells) as it was observed.
type TracePage struct {
	URL      string           `parquet:"url"`
	Features crawldb.Features `parquet:"features"`
	Changes  []time.Time      `parquet:"changes,list"`
	Rate     float64          `parquet:"rate"`
	// LastModified says the page's server sends a Last-Modified date
	// (the time of its last change), which the estimating schedule uses
	// to date a change it detects.
	LastModified bool `parquet:"last_modified"`
}

// The CSV form of a trace has a header row and these columns: url, the
// six features (words, outlinks, inlinks, images, depth, bytes), changes
// (RFC 3339 times separated by spaces) and, optionally and in any order
// after them, rate and last_modified (true or false; absent: false).
var traceCSVHeader = []string{"url", "words", "outlinks", "inlinks", "images", "depth", "bytes", "changes"}

// traceCSVOptional are the optional columns of the CSV form.
var traceCSVOptional = []string{"rate", "last_modified"}

// ReadTrace reads a trace file: Parquet (.parquet, TracePage rows) or CSV
// (any other name; see WriteTraceCSV for the columns). A malformed row is
// an error naming its line or row.
func ReadTrace(file string) ([]TracePage, error) {
	if strings.EqualFold(filepath.Ext(file), ".parquet") {
		rows, err := parquetio.ReadAll[TracePage](storage.NewLocal(), file)
		if err != nil {
			return nil, fmt.Errorf("revisit: trace %s: %w", file, err)
		}
		return rows, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("revisit: trace: %w", err)
	}
	defer f.Close()
	rows, err := ReadTraceCSV(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("revisit: trace %s: %w", file, err)
	}
	return rows, nil
}

// ReadTraceCSV reads the CSV form of a trace.
func ReadTraceCSV(r io.Reader) ([]TracePage, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	opt := map[string]int{} // optional column → its index
	ok := slices.Equal(head[:min(len(head), len(traceCSVHeader))], traceCSVHeader)
	for i := len(traceCSVHeader); ok && i < len(head); i++ {
		_, dup := opt[head[i]]
		ok = !dup && slices.Contains(traceCSVOptional, head[i])
		opt[head[i]] = i
	}
	if !ok {
		return nil, fmt.Errorf("header %q: want %s[,rate][,last_modified]", strings.Join(head, ","), strings.Join(traceCSVHeader, ","))
	}
	var out []TracePage
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(rec), len(head))
		}
		p, err := traceRow(rec, opt)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, p)
	}
}

func traceRow(rec []string, opt map[string]int) (TracePage, error) {
	p := TracePage{URL: rec[0]}
	var n [6]int64
	for i := range n {
		v, err := strconv.ParseInt(strings.TrimSpace(rec[1+i]), 10, 64)
		if err != nil || v < 0 {
			return p, fmt.Errorf("%s %q: want a count >= 0", traceCSVHeader[1+i], rec[1+i])
		}
		n[i] = v
	}
	p.Features = crawldb.Features{Words: int32(n[0]), Outlinks: int32(n[1]), Inlinks: int32(n[2]),
		Images: int32(n[3]), Depth: int32(n[4]), Bytes: n[5]}
	for _, f := range strings.Fields(rec[7]) {
		t, err := time.Parse(time.RFC3339, f)
		if err != nil {
			return p, fmt.Errorf("change time %q: %w", f, err)
		}
		p.Changes = append(p.Changes, t)
	}
	if i, ok := opt["rate"]; ok && strings.TrimSpace(rec[i]) != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
		if err != nil || v < 0 {
			return p, fmt.Errorf("rate %q: want a rate >= 0 per day", rec[i])
		}
		p.Rate = v
	}
	if i, ok := opt["last_modified"]; ok && strings.TrimSpace(rec[i]) != "" {
		v, err := strconv.ParseBool(strings.TrimSpace(rec[i]))
		if err != nil {
			return p, fmt.Errorf("last_modified %q: want true or false", rec[i])
		}
		p.LastModified = v
	}
	return p, nil
}

// traceTimeLayout is RFC 3339 with milliseconds, as WriteTraceCSV writes
// change times (ReadTraceCSV takes any RFC 3339 time).
const traceTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// WriteTraceCSV writes pages as the CSV form of a trace, with the rate
// and last_modified columns.
func WriteTraceCSV(w io.Writer, pages []TracePage) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(traceCSVHeader), traceCSVOptional...)); err != nil {
		return err
	}
	for _, p := range pages {
		f := p.Features
		ch := make([]string, len(p.Changes))
		for i, t := range p.Changes {
			ch[i] = t.UTC().Format(traceTimeLayout)
		}
		rec := []string{p.URL, strconv.Itoa(int(f.Words)), strconv.Itoa(int(f.Outlinks)), strconv.Itoa(int(f.Inlinks)),
			strconv.Itoa(int(f.Images)), strconv.Itoa(int(f.Depth)), strconv.FormatInt(f.Bytes, 10), strings.Join(ch, " "),
			strconv.FormatFloat(p.Rate, 'g', -1, 64), strconv.FormatBool(p.LastModified)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// TraceOf returns the pages of tr as a trace (the changes in its period,
// its true rates), for WriteTraceCSV: the synthetic web's history in the
// form a recorded one takes.
func TraceOf(tr *Truth) []TracePage {
	out := make([]TracePage, len(tr.Pages))
	for i, p := range tr.Pages {
		tp := TracePage{URL: p.URL, Features: p.Features, Rate: p.Rate, LastModified: p.LastModified}
		for _, s := range tr.Events.Page(i) {
			tp.Changes = append(tp.Changes, tr.Start.Add(secondsDuration(s)))
		}
		out[i] = tp
	}
	return out
}

// secondsDuration converts seconds to a Duration, rounded to the
// millisecond the trace formats keep.
func secondsDuration(s float64) time.Duration {
	return time.Duration(s*1000+0.5) * time.Millisecond
}

// NewTraceTruth makes a Truth from a recorded history: the pages of the
// trace and their changes in (start, start+horizon]; changes outside are
// ignored. A zero start means midnight UTC of the day of the earliest
// change. A page's rate is the trace's Rate, else its changes over the
// period (per day). URLs must be valid and distinct.
func NewTraceTruth(pages []TracePage, start time.Time, horizon time.Duration) (*Truth, error) {
	if horizon <= 0 {
		return nil, fmt.Errorf("revisit: horizon %v: want a positive duration", horizon)
	}
	if len(pages) == 0 {
		return nil, errors.New("revisit: the trace has no pages")
	}
	if start.IsZero() {
		first := time.Time{}
		for _, p := range pages {
			for _, t := range p.Changes {
				if first.IsZero() || t.Before(first) {
					first = t
				}
			}
		}
		if first.IsZero() {
			return nil, errors.New("revisit: the trace records no change: give its start")
		}
		start = first.UTC().Truncate(24 * time.Hour)
	}
	tr := &Truth{Start: start, Horizon: horizon}
	per := make([][]float64, 0, len(pages))
	seen := make(map[string]bool, len(pages))
	days := horizon.Hours() / 24
	for i, p := range pages {
		u, err := urlutil.Normalize(p.URL)
		if err != nil {
			return nil, fmt.Errorf("revisit: trace page %d: %w", i+1, err)
		}
		if seen[u] {
			return nil, fmt.Errorf("revisit: trace page %d: %s given twice", i+1, u)
		}
		seen[u] = true
		var ev []float64
		for _, t := range p.Changes {
			s := t.Sub(start).Seconds()
			if s > 0 && s <= horizon.Seconds() {
				ev = append(ev, s)
			}
		}
		slices.Sort(ev)
		rate := p.Rate
		if rate <= 0 {
			rate = float64(len(ev)) / days
		}
		tr.Pages = append(tr.Pages, Page{ID: i, URL: u, Host: urlutil.Host(u), Rate: rate, Features: p.Features, LastModified: p.LastModified})
		per = append(per, ev)
	}
	ev, err := NewEvents(per)
	if err != nil {
		return nil, err
	}
	tr.Events = ev
	return tr, nil
}
