package storage_test

import (
	"testing"

	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/storagetest"
)

// TestLocalContract runs the storage.FS contract suite on the local disk.
func TestLocalContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) (storage.FS, string) {
		return storage.NewLocal(), t.TempDir()
	})
}
