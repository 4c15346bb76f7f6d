package parquetio

import (
	"context"
	"fmt"
	"io/fs"
	"iter"
	"path"
	"strings"

	"github.com/trawl/trawl/storage"
)

// IsPart reports whether a directory entry is a data part of a job output:
// a regular *.parquet file whose name does not start with _ or . (those are
// markers such as _SUCCESS, and temporaries).
func IsPart(fi fs.FileInfo) bool {
	n := fi.Name()
	return !fi.IsDir() && strings.HasSuffix(n, ".parquet") && !strings.HasPrefix(n, "_") && !strings.HasPrefix(n, ".")
}

// PartFiles lists the part files (IsPart) of a job output directory as
// paths in fsys, sorted by name.
func PartFiles(fsys storage.FS, dir string) ([]string, error) {
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		if IsPart(fi) {
			out = append(out, path.Join(dir, fi.Name()))
		}
	}
	return out, nil
}

// ReadParts iterates over the rows of the Parquet files parts of fsys, one
// file after another, each opened only while it is read. It checks ctx
// every 1,024 rows. Iteration stops at the first error: that of opening
// or reading a file (which names it), or ctx's, as "reading FILE: ...".
func ReadParts[T any](ctx context.Context, fsys storage.FS, parts []string, opts ...ReaderOption) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, name := range parts {
			if !readPart(ctx, fsys, name, opts, yield) {
				return
			}
		}
	}
}

// readPart yields the rows of one file; false means stop.
func readPart[T any](ctx context.Context, fsys storage.FS, name string, opts []ReaderOption, yield func(T, error) bool) bool {
	var zero T
	f, err := fsys.Open(name)
	if err != nil {
		yield(zero, err)
		return false
	}
	r, err := Open[T](f, name, opts...)
	if err != nil {
		f.Close()
		yield(zero, err)
		return false
	}
	defer r.Close()
	n := 0
	for row, err := range r.All() {
		if err != nil {
			yield(zero, err)
			return false
		}
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				yield(zero, fmt.Errorf("reading %s: %w", path.Base(name), err))
				return false
			}
		}
		if !yield(row, nil) {
			return false
		}
	}
	return true
}
