package parquetio

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestCompressions writes the same rows with every compression: each file
// reads back equal through Open and through Arrow (an independent reader),
// and its column chunks carry the codec asked for.
func TestCompressions(t *testing.T) {
	dir := t.TempDir()
	want := makeRecs(3000, 11)
	codecs := map[Compression]format.CompressionCodec{
		ZstdDefault: format.Zstd, ZstdFastest: format.Zstd, Snappy: format.Snappy, None: format.Uncompressed,
	}
	sizes := map[Compression]int64{}
	for _, c := range Compressions() {
		path := filepath.Join(dir, string(c)+".parquet")
		if err := WriteFile(dirFS{}, path, want, RowGroupRows(1000), WithCompression(c)); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got, err := ReadAll[rec](dirFS{}, path)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		normalize(want)
		normalize(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rows read back differ", c)
		}
		if n := readArrow(t, path); n != int64(len(want)) {
			t.Errorf("%s: arrow read %d rows, want %d", c, n, len(want))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sizes[c] = int64(len(data))
		pf, err := parquet.OpenFile(memFile{bytes.NewReader(data)}, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range pf.Metadata().RowGroups {
			for _, cc := range rg.Columns {
				if cc.MetaData.Codec != codecs[c] {
					t.Fatalf("%s: column %v written with %v", c, cc.MetaData.PathInSchema, cc.MetaData.Codec)
				}
			}
		}
	}
	if sizes[ZstdDefault] >= sizes[None] || sizes[ZstdFastest] >= sizes[None] || sizes[Snappy] >= sizes[None] {
		t.Errorf("compressed files not smaller than uncompressed: %v", sizes)
	}
}

// TestParseCompression: names are checked, "" is the default, and a writer
// given an unknown one fails.
func TestParseCompression(t *testing.T) {
	if c, err := ParseCompression(""); c != ZstdFastest || err != nil {
		t.Errorf(`ParseCompression("") = %q, %v`, c, err)
	}
	if c, err := ParseCompression(" Snappy "); c != Snappy || err != nil {
		t.Errorf(`ParseCompression(" Snappy ") = %q, %v`, c, err)
	}
	if _, err := ParseCompression("gzip"); err == nil {
		t.Error(`ParseCompression("gzip"): no error`)
	}
	w := NewWriter[rec](&countingDiscard{}, WithCompression("gzip"))
	if err := w.Write(makeRecs(1, 1)...); err == nil {
		t.Error("a writer with an unknown compression wrote")
	}
	if err := w.Close(); err == nil {
		t.Error("a writer with an unknown compression closed without error")
	}
}

type countingDiscard struct{ n int }

func (w *countingDiscard) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
