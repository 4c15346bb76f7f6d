package parquetio

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/trawl/trawl/storage"
)

// TestPartFiles lists only the data parts of an output directory: markers,
// temporaries, subdirectories and other files are skipped; names sorted.
func TestPartFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"part-r-00001.parquet", "part-r-00000.parquet", "_SUCCESS",
		"_counters.json", ".part-r-00002.parquet.tmp", "_tmp.parquet", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := PartFiles(storage.NewLocal(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "part-r-00000.parquet"), filepath.Join(dir, "part-r-00001.parquet")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PartFiles = %v, want %v", got, want)
	}
	if _, err := PartFiles(storage.NewLocal(), filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory gave no error")
	}
}
