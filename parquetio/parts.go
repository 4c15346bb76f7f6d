package parquetio

import (
	"io/fs"
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
