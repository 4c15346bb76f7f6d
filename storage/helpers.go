package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
)

// WriteFileAtomic writes data to path so that readers see either the old
// file or the whole new one, never a part: it writes path.tmp-XXXXXXXX
// (a random suffix, created exclusively) and renames it over path. On error
// the temporary file is removed and path is left as it was.
func WriteFileAtomic(fsys FS, path string, data []byte) (err error) {
	var tmp string
	var w io.WriteCloser
	for attempt := 0; ; attempt++ {
		tmp = fmt.Sprintf("%s.tmp-%016x", path, rand.Uint64())
		w, err = fsys.Create(tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 9 {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	defer func() {
		if err != nil {
			_ = fsys.RemoveAll(tmp)
		}
	}()
	if _, err = w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadFile reads a whole file.
func ReadFile(fsys FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	size := f.Size()
	if size < 0 {
		size = 0
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(io.NewSectionReader(f, 0, size), buf)
	if err != nil {
		return nil, fmt.Errorf("read %s: %d of %d bytes: %w", path, n, size, err)
	}
	// The file may have grown since Open; read what follows, if anything.
	rest, err := io.ReadAll(io.NewSectionReader(f, size, 1<<62))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return append(buf, rest...), nil
}

// Exists reports whether path exists (as a file or a directory). Errors
// other than "does not exist" are returned.
func Exists(fsys FS, path string) (bool, error) {
	_, err := fsys.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("exists %s: %w", path, err)
}
