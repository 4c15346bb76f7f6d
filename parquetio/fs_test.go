package parquetio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/trawl/trawl/storage"
)

// dirFS is a minimal local storage.FS for these tests (the storage
// package's own local FS is written separately).
type dirFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

func (dirFS) Open(p string) (storage.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (dirFS) Create(p string) (io.WriteCloser, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}
func (dirFS) Rename(a, b string) error           { return os.Rename(a, b) }
func (dirFS) RemoveAll(p string) error           { return os.RemoveAll(p) }
func (dirFS) MkdirAll(p string) error            { return os.MkdirAll(p, 0o755) }
func (dirFS) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }
func (dirFS) ReadDir(p string) ([]fs.FileInfo, error) {
	es, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(es))
	for _, e := range es {
		i, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("readdir %s: %w", p, err)
		}
		out = append(out, i)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}
