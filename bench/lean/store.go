package main

import (
	"fmt"
	"os"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdFastest is the page codec of every file the lean crawl writes:
// parquet-go's own zstd codec at its fastest level.
var zstdFastest = &zstd.Codec{Level: zstd.SpeedFastest}

// contentRow is one fetched URL in the content Parquet file.
type contentRow struct {
	URL         string    `parquet:"url"`
	Status      int32     `parquet:"status"`
	ContentType string    `parquet:"content_type"`
	Body        []byte    `parquet:"body"`
	FetchTime   time.Time `parquet:"fetch_time,timestamp(millisecond)"`
}

// dbRow is one URL of the db Parquet file.
type dbRow struct {
	URL     string `parquet:"url"`
	Fetched bool   `parquet:"fetched"`
}

// writeRows writes rows to a new zstd-compressed Parquet file and returns
// its size.
func writeRows[T any](name string, rows []T) (int64, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", name, err)
	}
	w := parquet.NewGenericWriter[T](f, parquet.Compression(zstdFastest))
	if _, err := w.Write(rows); err != nil {
		f.Close()
		return 0, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		f.Close()
		return 0, fmt.Errorf("writing %s: %w", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("writing %s: %w", name, err)
	}
	return st.Size(), nil
}

// writeContent writes a row for every page that got a response and
// returns the file's size.
func writeContent(name string, pages []fetched) (int64, error) {
	rows := make([]contentRow, 0, len(pages))
	for i := range pages {
		p := &pages[i]
		if p.err != nil {
			continue
		}
		rows = append(rows, contentRow{URL: p.url, Status: p.status, ContentType: p.contentType, Body: p.body, FetchTime: p.time})
	}
	return writeRows(name, rows)
}

// writeParse writes the parse outputs.
func writeParse(name string, rows []parsed) error {
	_, err := writeRows(name, rows)
	return err
}

// db is the lean crawl's URL database: every URL known, sorted and
// distinct, with whether it was fetched (tried) yet.
type db struct {
	urls    []string
	fetched []bool
}

func (d *db) len() int { return len(d.urls) }

// unfetched returns the URLs not fetched yet, in order.
func (d *db) unfetched() []string {
	var out []string
	for i, u := range d.urls {
		if !d.fetched[i] {
			out = append(out, u)
		}
	}
	return out
}

// markAllFetched marks every URL fetched.
func (d *db) markAllFetched() {
	for i := range d.fetched {
		d.fetched[i] = true
	}
}

// merge adds the URLs of add (sorted and distinct) that the db lacks, as
// not fetched: one linear merge of the two sorted lists.
func (d *db) merge(add []string) {
	urls := make([]string, 0, len(d.urls)+len(add))
	fetched := make([]bool, 0, len(d.urls)+len(add))
	i, j := 0, 0
	for i < len(d.urls) || j < len(add) {
		switch {
		case j == len(add) || (i < len(d.urls) && d.urls[i] < add[j]):
			urls, fetched = append(urls, d.urls[i]), append(fetched, d.fetched[i])
			i++
		case i == len(d.urls) || add[j] < d.urls[i]:
			urls, fetched = append(urls, add[j]), append(fetched, false)
			j++
		default: // equal: known already
			urls, fetched = append(urls, d.urls[i]), append(fetched, d.fetched[i])
			i++
			j++
		}
	}
	d.urls, d.fetched = urls, fetched
}

// write writes the db to a Parquet file.
func (d *db) write(name string) error {
	rows := make([]dbRow, len(d.urls))
	for i, u := range d.urls {
		rows[i] = dbRow{URL: u, Fetched: d.fetched[i]}
	}
	_, err := writeRows(name, rows)
	return err
}
