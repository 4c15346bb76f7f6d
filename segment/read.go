package segment

import (
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"

	"github.com/trawl/trawl/arrowio"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/internal/jsonrec"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// What readseg needs (Nutch's SegmentReader): the record directories of a
// segment, their record counts and their records as JSON lines.

// RecordDirs are a segment's record directories in pipeline order:
// DirGenerate, DirFetch, DirContent, DirParseData, DirParseText,
// DirCrawlParse.
func RecordDirs() []string { return slices.Clone(recordDirs) }

var recordDirs = []string{DirGenerate, DirFetch, DirContent, DirParseData, DirParseText, DirCrawlParse}

// recordDir reads one record directory with its record type.
type recordDir struct {
	count func(fsys storage.FS, dir string) (int64, error)
	dump  func(fsys storage.FS, dir, name string, o DumpOptions, w io.Writer) error
	arrow func(fsys storage.FS, dir string, o DumpOptions, w io.Writer) error
	// hasStatus says the records have a status (crawldb.Status) column.
	hasStatus bool
}

// DumpOptions select the records Dump writes.
type DumpOptions struct {
	// Limit, if positive, is the most records written.
	Limit int64
	// Status, if not 0, is the only status written; the directory's
	// records must have one (HasStatus).
	Status crawldb.Status
}

// HasStatus reports whether the records of the record directory name (one
// of RecordDirs) have a status: crawl_generate, crawl_fetch and
// crawl_parse do.
func HasStatus(name string) bool { return recordTypes[name].hasStatus }

var recordTypes = map[string]recordDir{
	DirGenerate:   recordDirOf[Generate](),
	DirFetch:      recordDirOf[Fetch](),
	DirContent:    recordDirOf[Content](),
	DirParseData:  recordDirOf[ParseData](),
	DirParseText:  recordDirOf[ParseText](),
	DirCrawlParse: recordDirOf[ParseUpdate](),
}

func lookupDir(name string) (recordDir, error) {
	rd, ok := recordTypes[name]
	if !ok {
		return rd, fmt.Errorf("segment: unknown record directory %q (want one of %v)", name, recordDirs)
	}
	return rd, nil
}

// CountRecords returns the number of records in the record directory name
// (one of RecordDirs) of the segment at segPath, from the part files'
// footers.
func CountRecords(fsys storage.FS, segPath, name string) (int64, error) {
	rd, err := lookupDir(name)
	if err != nil {
		return 0, err
	}
	return rd.count(fsys, path.Join(segPath, name))
}

// DumpJSON writes the records of the record directory name (one of
// RecordDirs) of the segment at segPath that o selects to w as JSON
// lines, each with a "dir" field naming the directory, and a status as its
// name ("status") and its number ("status_code").
func DumpJSON(fsys storage.FS, segPath, name string, o DumpOptions, w io.Writer) error {
	rd, err := lookupDir(name)
	if err != nil {
		return err
	}
	if o.Status != 0 && !rd.hasStatus {
		return fmt.Errorf("segment: %s records have no status to select", name)
	}
	return rd.dump(fsys, path.Join(segPath, name), name, o, w)
}

// DumpArrow writes the records of the record directory name (one of
// RecordDirs) of the segment at segPath that o selects to w as an Arrow
// IPC stream, part by part in record batches of bounded size; its columns
// mirror the directory's Parquet columns, a status column followed by its
// name (status_name, dictionary encoded). The schema's metadata names the
// directory under "trawl.dir".
func DumpArrow(fsys storage.FS, segPath, name string, o DumpOptions, w io.Writer) error {
	rd, err := lookupDir(name)
	if err != nil {
		return err
	}
	if o.Status != 0 && !rd.hasStatus {
		return fmt.Errorf("segment: %s records have no status to select", name)
	}
	return rd.arrow(fsys, path.Join(segPath, name), o, w)
}

// eachSelected calls f on every record of dir that o selects, part by
// part, until f fails or o.Limit records were passed.
func eachSelected[T any](fsys storage.FS, dir string, o DumpOptions, f func(rec *T) error) error {
	var n int64
	match := selector[T](o)
	return eachPart[T](fsys, dir, func(r *parquetio.Reader[T]) (bool, error) {
		for rec, err := range r.All() {
			if err != nil {
				return false, err
			}
			if o.Limit > 0 && n >= o.Limit {
				return false, nil
			}
			if !match(&rec) {
				continue
			}
			n++
			if err := f(&rec); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// statusField returns the index of T's top-level Status field of type
// crawldb.Status, or -1.
func statusField[T any]() int {
	f, ok := reflect.TypeFor[T]().FieldByName("Status")
	if !ok || f.Type != reflect.TypeFor[crawldb.Status]() || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}

// selector returns a function reporting whether a record passes o's
// status condition.
func selector[T any](o DumpOptions) func(rec *T) bool {
	idx := statusField[T]()
	if o.Status == 0 || idx < 0 {
		return func(*T) bool { return true }
	}
	return func(rec *T) bool {
		return crawldb.Status(reflect.ValueOf(rec).Elem().Field(idx).Uint()) == o.Status
	}
}

func recordDirOf[T any]() recordDir {
	return recordDir{
		hasStatus: statusField[T]() >= 0,
		count: func(fsys storage.FS, dir string) (int64, error) {
			var n int64
			err := eachPart[T](fsys, dir, func(r *parquetio.Reader[T]) (bool, error) {
				n += r.NumRows()
				return true, nil
			})
			return n, err
		},
		dump: func(fsys storage.FS, dir, name string, o DumpOptions, w io.Writer) error {
			var buf []byte
			enc := jsonrec.New[T](jsonrec.Options{})
			return eachSelected(fsys, dir, o, func(rec *T) error {
				buf = enc.Append(buf[:0], rec, [2]string{"dir", name})
				buf = append(buf, '\n')
				_, err := w.Write(buf)
				return err
			})
		},
		arrow: func(fsys storage.FS, dir string, o DumpOptions, w io.Writer) (err error) {
			aw, err := arrowio.NewWriter[T](w, arrowio.Options{Enums: []arrowio.Enum{crawldb.StatusEnum()},
				Metadata: map[string]string{"trawl.dir": path.Base(dir)}})
			if err != nil {
				return err
			}
			defer func() {
				if cerr := aw.Close(); err == nil {
					err = cerr
				}
			}()
			return eachSelected(fsys, dir, o, aw.Write)
		},
	}
}

// eachPart opens every part file of dir in turn and calls f until it
// returns false or an error.
func eachPart[T any](fsys storage.FS, dir string, f func(r *parquetio.Reader[T]) (bool, error)) error {
	parts, err := parquetio.PartFiles(fsys, dir)
	if err != nil {
		return err
	}
	for _, p := range parts {
		file, err := fsys.Open(p)
		if err != nil {
			return err
		}
		r, err := parquetio.Open[T](file, p)
		if err != nil {
			file.Close()
			return err
		}
		more, err := f(r)
		if cerr := r.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil || !more {
			return err
		}
	}
	return nil
}
