package parquetio_test

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
)

// fuzzFileName is the name corrupt files are opened under; every error
// must name it.
const fuzzFileName = "crawl/crawldb/current/part-r-00000.parquet"

// bytesFile is a storage.File over bytes.
type bytesFile struct{ *bytes.Reader }

func (bytesFile) Close() error { return nil }

// parquetBytes writes rows as a Parquet file with parquetio.
func parquetBytes[T any](t testing.TB, rows []T, opts ...parquetio.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquetio.NewWriter[T](&buf, opts...)
	if err := w.Write(rows...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fuzzDatums() []crawldb.Datum {
	base := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	rows := make([]crawldb.Datum, 5)
	for i := range rows {
		d := crawldb.Datum{
			URL: "http://h.sim.test/page/" + string(rune('a'+i)), Host: "h.sim.test", Status: crawldb.Status(1 + i%3),
			FetchTime: base.Add(time.Duration(i) * time.Hour), FetchInterval: 86400, Score: float32(i) / 2,
			HTTPStatus: 200, ContentType: "text/html", ClusterID: -1, Source: crawldb.SourceDefault,
			Features: crawldb.Features{Words: int32(100 * i), Bytes: int64(1000 * i)},
		}
		if i%2 == 0 {
			d.Signature = []byte{1, 2, byte(i)}
			d.Metadata = map[string]string{"_ngt_": "1763720000", "k": string(rune('a' + i))}
			d.History = []crawldb.Observation{{Time: base, Changed: true}, {Time: base.Add(time.Hour)}}
		}
		rows[i] = d
	}
	return rows
}

func fuzzFetches() []segment.Fetch {
	ds := fuzzDatums()
	rows := make([]segment.Fetch, 3)
	for i := range rows {
		rows[i] = segment.Fetch{URL: ds[i].URL, Status: 33, FetchTime: ds[i].FetchTime, HTTPStatus: 200,
			ContentType: "text/html", Message: "ok", Datum: ds[i]}
	}
	rows[2].RedirectURL, rows[2].HTTPStatus = "http://h.sim.test/", 301
	return rows
}

// readParquet opens data as a Parquet file of T rows and reads every row,
// then row groups one at a time: an error naming the file, or rows, as
// many as the footer says.
func readParquet[T any](t *testing.T, data []byte) (rows int, err error) {
	t.Helper()
	named := func(err error) error {
		if err != nil && !strings.Contains(err.Error(), fuzzFileName) {
			t.Fatalf("error does not name the file: %v", err)
		}
		return err
	}
	r, err := parquetio.Open[T](bytesFile{bytes.NewReader(data)}, fuzzFileName)
	if err != nil {
		return 0, named(err)
	}
	defer r.Close()
	var groupRows int64
	for g := range r.NumRowGroups() {
		groupRows += r.RowGroupRows(g)
		_ = r.RowGroupBytes(g)
	}
	if groupRows != r.NumRows() {
		t.Fatalf("row groups hold %d rows, NumRows %d", groupRows, r.NumRows())
	}
	for _, err := range r.All() {
		if err != nil {
			return rows, named(err)
		}
		rows++
	}
	if int64(rows) != r.NumRows() {
		t.Fatalf("read %d rows without error, NumRows %d", rows, r.NumRows())
	}
	for g := range r.NumRowGroups() {
		for _, err := range r.Rows(g, g+1) {
			if err != nil {
				return rows, named(err)
			}
		}
	}
	return rows, nil
}

// Edits FuzzParquetRead makes to a good file.
const (
	editOverwrite = iota // the patch over the bytes at the offset
	editInsert           // the patch inserted at the offset
	editDelete           // as many bytes as the patch has removed at the offset
	editTruncate         // the file cut at the offset, the patch appended
	editRaw              // the patch is the whole file
	numEdits
)

// editFile applies one edit to a copy of good: the fuzz input is an edit of
// a real file rather than a whole file, so that it stays small and each
// mutation lands in a real file's structure. fromEnd counts off from the
// end of the file, where the footer is.
func editFile(good []byte, edit uint8, off uint32, fromEnd bool, patch []byte) []byte {
	edit %= numEdits
	if edit == editRaw {
		return patch
	}
	o := int(off % uint32(len(good)+1))
	if fromEnd {
		o = len(good) - o
	}
	data := make([]byte, 0, len(good)+len(patch))
	switch edit {
	case editOverwrite:
		data = append(append(append(data, good[:o]...), patch...), good[min(len(good), o+len(patch)):]...)
	case editInsert:
		data = append(append(append(data, good[:o]...), patch...), good[o:]...)
	case editDelete:
		data = append(append(data, good[:o]...), good[min(len(good), o+len(patch)):]...)
	case editTruncate:
		data = append(append(data, good[:o]...), patch...)
	}
	return data
}

// FuzzParquetRead opens corrupt and truncated Parquet files, edits of good
// files written by parquetio (CrawlDB rows and crawl_fetch rows) or
// arbitrary bytes, and reads all their rows: an error naming the file or
// rows, never a panic.
func FuzzParquetRead(f *testing.F) {
	datums := parquetBytes(f, fuzzDatums(), parquetio.RowGroupRows(2))
	fetches := parquetBytes(f, fuzzFetches())
	empty := parquetBytes[crawldb.Datum](f, nil)
	goods := [][]byte{datums, fetches, empty}
	for i := range goods {
		file := uint8(i)
		f.Add(file, uint8(editOverwrite), uint32(0), false, []byte{}) // the good file
		f.Add(file, uint8(editTruncate), uint32(1), true, []byte{})
		f.Add(file, uint8(editTruncate), uint32(len(goods[i])/2), false, []byte{})
		f.Add(file, uint8(editDelete), uint32(4), false, bytes.Repeat([]byte{0}, len(goods[i])/2))
		f.Add(file, uint8(editOverwrite), uint32(8), true, []byte{0xff, 0xff, 0xff, 0x7f}) // the footer length
		f.Add(file, uint8(editOverwrite), uint32(20), true, []byte{0x5a})
		f.Add(file, uint8(editInsert), uint32(100), true, []byte{0x15, 0x00})
		f.Add(file, uint8(editOverwrite), uint32(4), false, []byte{0x15, 0x04, 0x15, 0xff, 0xff, 0xff, 0xff, 0x0f})
	}
	for _, raw := range []string{"", "PAR1", "PAR1\x00\x00\x00\x00PAR1", "PAR1\xff\xff\xff\xffPAR1"} {
		f.Add(uint8(0), uint8(editRaw), uint32(0), false, []byte(raw))
	}
	f.Fuzz(func(t *testing.T, file, edit uint8, off uint32, fromEnd bool, patch []byte) {
		good := goods[int(file)%len(goods)]
		data := editFile(good, edit, off, fromEnd, patch)
		n, err := readParquet[crawldb.Datum](t, data)
		if bytes.Equal(data, datums) && (err != nil || n != len(fuzzDatums())) {
			t.Fatalf("the good file: %d rows, %v", n, err)
		}
		_, _ = readParquet[segment.Fetch](t, data)
	})
}

// TestOpenCorruptFooter: a footer length past the start of the file, or a
// list in the footer longer than the footer, is an error naming the file,
// found before parquet-go allocates what they state: up to 4 GiB for a
// 12-byte file, or tens of GiB and a fatal out-of-memory error for a list
// of 2^31 schema elements (found by FuzzParquetRead).
func TestOpenCorruptFooter(t *testing.T) {
	good := parquetBytes(t, fuzzDatums())
	empty := parquetBytes[crawldb.Datum](t, nil)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"4 GiB footer", []byte("PAR1\xff\xff\xff\xffPAR1")},
		{"footer past the start", []byte("PAR1\xfc&H\x05DatPAR1")},
		{"footer one byte too long", editFile(good, editOverwrite, 8, true, binary.LittleEndian.AppendUint32(nil, uint32(len(good)-11)))},
		{"2^31 schema elements", editFile(empty, editOverwrite, 8, false, []byte("\xff\xff\xff\x7f"))},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := parquetio.Open[crawldb.Datum](bytesFile{bytes.NewReader(c.data)}, fuzzFileName)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), fuzzFileName) || !strings.Contains(err.Error(), "corrupt footer") {
			t.Errorf("%s: want a corrupt footer error naming the file, got %v", c.name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Errorf("%s: opening allocated %d MiB", c.name, n>>20)
		}
	}
	// Good files still open and read.
	for _, data := range [][]byte{good, empty} {
		if _, err := readParquet[crawldb.Datum](t, data); err != nil {
			t.Fatal(err)
		}
	}
}
