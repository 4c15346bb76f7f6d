package faultfs_test

import (
	"testing"

	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/faultfs"
	"github.com/trawl/trawl/storage/storagetest"
)

// TestContract runs the storage.FS contract suite on the local disk
// wrapped by faultfs with rules that only count (Nth < 0): a wrapper that
// fails nothing must keep every promise of the FS it wraps.
func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) (storage.FS, string) {
		rules := []faultfs.Rule{
			{Op: faultfs.Create, Nth: -1},
			{Op: faultfs.Write, Nth: -1},
			{Op: faultfs.Close, Nth: -1},
			{Op: faultfs.Rename, Nth: -1},
			{Op: faultfs.Remove, Nth: -1},
			{Op: faultfs.Mkdir, Nth: -1},
		}
		fsys := faultfs.New(storage.NewLocal(), rules...)
		t.Cleanup(func() {
			if f := fsys.Failed(); len(f) != 0 {
				t.Errorf("calls failed by rules that only count: %q", f)
			}
		})
		return fsys, t.TempDir()
	})
}
