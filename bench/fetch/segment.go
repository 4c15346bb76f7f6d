package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// The columns of the segment's files this harness reads: only those, so
// that it reads segments of trawl binaries built before or after schema
// additions (segment.Fetch, segment.Generate, segment.ParseData).
type (
	fetchRow struct {
		URL        string `parquet:"url"`
		HTTPStatus int32  `parquet:"http_status"`
	}
	generateRow struct {
		URL   string  `parquet:"url"`
		Score float32 `parquet:"score"`
	}
	urlRow struct {
		URL string `parquet:"url"`
	}
)

// segmentCounts are what trawl fetch and parse wrote to the segment.
type segmentCounts struct {
	// rows of crawl_fetch; responses those with an HTTP status, ok those
	// with 200.
	rows, responses, ok int64
	// parsed is the number of parse_data rows.
	parsed int64
}

// countSegment reads the segment's crawl_fetch rows and counts its
// parse_data rows.
func countSegment(seg string) (segmentCounts, error) {
	var c segmentCounts
	fsys := storage.NewLocal()
	err := eachPart(fsys, filepath.Join(seg, segment.DirFetch), func(f storage.File, name string) error {
		r, err := parquetio.Open[fetchRow](f, name)
		if err != nil {
			return err
		}
		for row, err := range r.All() {
			if err != nil {
				return err
			}
			c.rows++
			if row.HTTPStatus > 0 {
				c.responses++
			}
			if row.HTTPStatus == 200 {
				c.ok++
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	err = eachPart(fsys, filepath.Join(seg, segment.DirParseData), func(f storage.File, name string) error {
		r, err := parquetio.Open[urlRow](f, name)
		if err != nil {
			return err
		}
		c.parsed += r.NumRows()
		return nil
	})
	return c, err
}

// readFetchList returns the URLs of the segment's crawl_generate.
func readFetchList(seg string) ([]string, error) {
	var urls []string
	err := eachPart(storage.NewLocal(), filepath.Join(seg, segment.DirGenerate), func(f storage.File, name string) error {
		r, err := parquetio.Open[generateRow](f, name)
		if err != nil {
			return err
		}
		for row, err := range r.All() {
			if err != nil {
				return err
			}
			urls = append(urls, row.URL)
		}
		return nil
	})
	return urls, err
}

// readFetchScores returns the score of every URL of the segment's
// crawl_generate.
func readFetchScores(seg string) (map[string]float32, error) {
	scores := map[string]float32{}
	err := eachPart(storage.NewLocal(), filepath.Join(seg, segment.DirGenerate), func(f storage.File, name string) error {
		r, err := parquetio.Open[generateRow](f, name)
		if err != nil {
			return err
		}
		for row, err := range r.All() {
			if err != nil {
				return err
			}
			scores[row.URL] = row.Score
		}
		return nil
	})
	return scores, err
}

// eachPart calls fn with every Parquet part file of a job output directory.
func eachPart(fsys storage.FS, dir string, fn func(f storage.File, name string) error) error {
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, fi := range infos {
		if !strings.HasSuffix(fi.Name(), ".parquet") {
			continue
		}
		name := filepath.Join(dir, fi.Name())
		f, err := fsys.Open(name)
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		err = fn(f, name)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	}
	return nil
}

// clearSegment removes what fetch and parse wrote, so the segment can be
// fetched again.
func clearSegment(seg string) error {
	for _, d := range []string{segment.DirFetch, segment.DirContent, segment.DirParseData, segment.DirParseText, segment.DirCrawlParse} {
		if err := storage.NewLocal().RemoveAll(filepath.Join(seg, d)); err != nil {
			return fmt.Errorf("clearing %s for the next run: %w", seg, err)
		}
	}
	return nil
}
