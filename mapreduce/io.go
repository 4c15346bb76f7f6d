package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Resolver turns a URI into a file system and a path within it.
// *storage.Resolver implements it.
type Resolver interface {
	Resolve(uri string) (storage.FS, string, error)
}

// InputOption configures an Input.
type InputOption func(*inputOpts)

type inputOpts struct {
	optional       bool
	wholeFiles     bool
	splitGroups    int
	rowWeight      int64
	requireSuccess bool
	allowMissing   bool
}

// Optional makes a missing input path mean "no input" instead of an error.
func Optional() InputOption { return func(o *inputOpts) { o.optional = true } }

// WholeFiles makes one map task per input file, never splitting a file by
// row groups (the fetcher needs one task per fetch-list part).
func WholeFiles() InputOption { return func(o *inputOpts) { o.wholeFiles = true } }

// RowWeight tells the engine that a row of this input is about n records of
// work for its map function (a row that emits several records), where a
// row of an input without the option is one. The local engine runs the map
// tasks with the most work first, so that the heaviest does not run last,
// alone on one core. n < 1 leaves the default of 1.
func RowWeight(n int) InputOption { return func(o *inputOpts) { o.rowWeight = int64(n) } }

// weight is a row's weight: RowWeight's, or 1 below that.
func (o inputOpts) weight() int64 { return max(o.rowWeight, 1) }

// SplitRowGroups makes map tasks of n row groups each (by default a split
// is about SplitBytes of compressed row groups).
func SplitRowGroups(n int) InputOption {
	return func(o *inputOpts) {
		if n > 0 {
			o.splitGroups = n
		}
	}
}

// RequireSuccess requires a directory input to be a published job output:
// it must hold a _SUCCESS file.
func RequireSuccess() InputOption { return func(o *inputOpts) { o.requireSuccess = true } }

// AllowMissingColumns lets the input's files lack some of the record
// type's columns, which then read as zero values: for record types that
// gained fields (a CrawlDB written by an earlier trawl). Columns present
// must still have the record's types.
func AllowMissingColumns() InputOption { return func(o *inputOpts) { o.allowMissing = true } }

// readerOptions are the parquetio options of an input.
func (o inputOpts) readerOptions() []parquetio.ReaderOption {
	if o.allowMissing {
		return []parquetio.ReaderOption{parquetio.AllowMissingColumns()}
	}
	return nil
}

// SplitBytes is the target compressed size of a map split when an input is
// split by size.
const SplitBytes = 64 << 20

// input is the Input built by From.
type input[V any] struct{ impl inputImpl[V] }

func (in *input[V]) Path() string        { return in.impl.path }
func (in *input[V]) input() inputImpl[V] { return in.impl }

// inputImpl is the engine's view of an Input with the record type erased.
type inputImpl[V any] struct {
	path       string
	opts       inputOpts
	recordType reflect.Type
	// groups reads a file's footer: the compressed size and the rows of
	// each row group.
	groups func(f storage.File, name string) (sizes, rows []int64, err error)
	// run maps the rows of row groups [start, end) of a file (end < 0:
	// to the last). check is called after each record; its error stops
	// the map.
	run func(t *Task, f storage.File, name string, start, end int, emit Emit[V], check func() error, records *int64) error
}

// From is an input of Parquet rows of type R at path (a Parquet file, or a
// directory whose *.parquet files are read in name order, ignoring names
// that start with _ or .), mapped by m.
func From[R, V any](path string, m MapFunc[R, V], opts ...InputOption) Input[V] {
	var o inputOpts
	for _, f := range opts {
		f(&o)
	}
	return &input[V]{impl: inputImpl[V]{
		path:       path,
		opts:       o,
		recordType: reflect.TypeFor[R](),
		groups: func(f storage.File, name string) ([]int64, []int64, error) {
			r, err := parquetio.Open[R](f, name, o.readerOptions()...)
			if err != nil {
				f.Close()
				return nil, nil, err
			}
			defer r.Close()
			sizes := make([]int64, r.NumRowGroups())
			rows := make([]int64, len(sizes))
			for i := range sizes {
				sizes[i], rows[i] = r.RowGroupBytes(i), r.RowGroupRows(i)
			}
			return sizes, rows, nil
		},
		run: func(t *Task, f storage.File, name string, start, end int, emit Emit[V], check func() error, records *int64) error {
			r, err := parquetio.Open[R](f, name, o.readerOptions()...)
			if err != nil {
				f.Close()
				return err
			}
			defer r.Close()
			if end < 0 {
				end = r.NumRowGroups()
			}
			if m == nil {
				return fmt.Errorf("input %s: nil map function", path)
			}
			row := int64(0)
			for rec, err := range r.Rows(start, end) {
				if err != nil {
					return err
				}
				if err := t.Ctx.Err(); err != nil {
					return err
				}
				*records++
				if err := m(t, rec, emit); err != nil {
					return fmt.Errorf("map %s (row %d from row group %d): %w", name, row, start, err)
				}
				if err := check(); err != nil {
					return err
				}
				row++
			}
			return nil
		},
	}}
}

// partSink receives the output records of one task for one output; it
// creates its part file on the first record it accepts (a part file exists
// only if it has rows, on both engines).
type partSink[O any] interface {
	offer(o *O) error
	close() (rows, bytes int64, err error)
}

// output is the Output built by Write and WriteRouted.
type output[O any] struct{ impl outputImpl[O] }

func (o *output[O]) Path() string          { return o.impl.path }
func (o *output[O]) output() outputImpl[O] { return o.impl }

// outputImpl is the engine's view of an Output with the record type erased.
type outputImpl[O any] struct {
	path string
	// sink returns a sink that creates its file with create when needed;
	// its writer spools row groups in spoolDir.
	sink func(create func() (io.WriteCloser, error), spoolDir string) partSink[O]
	// files, when set, replaces sink: the task's FileSink for the split
	// or partition part, creating files by name (WriteFiles).
	files func(part int, create func(name string) (io.WriteCloser, error)) partSink[O]
}

// FileSink writes one task's records of a WriteFiles output into files it
// names itself. The engine gives it the records of one map split or
// reduce partition, then closes it; the files it created are committed
// with the task and published with the job's other outputs, or removed if
// the task or the job fails, as part files are.
type FileSink[O any] interface {
	// Write takes one output record (the sink may ignore it).
	Write(o *O) error
	// Close finishes the sink's files and reports the records and bytes
	// it wrote.
	Close() (records, bytes int64, err error)
}

// WriteFiles is an output of files that a FileSink writes and names, in
// the directory path, under the same commit protocol as Parquet outputs
// (for a map-only job, one sink per map split). newSink gets the split's
// (or partition's) index and a function that creates a file of that name
// in the task's staging directory; names must be unique across the job's
// tasks (the commit fails on a name two tasks wrote) and must not begin
// with "part-" or "_", which the engine's own files use.
func WriteFiles[O any](path string, newSink func(part int, create func(name string) (io.WriteCloser, error)) FileSink[O]) Output[O] {
	return &output[O]{impl: outputImpl[O]{
		path: path,
		files: func(part int, create func(name string) (io.WriteCloser, error)) partSink[O] {
			checked := func(name string) (io.WriteCloser, error) {
				if name == "" || strings.HasPrefix(name, "part-") || strings.HasPrefix(name, "_") || strings.ContainsAny(name, "/\\") {
					return nil, fmt.Errorf("output %s: file name %q is reserved or not a plain name", path, name)
				}
				return create(name)
			}
			return fileSink[O]{newSink(part, checked)}
		},
	}}
}

// fileSink adapts a FileSink to the engine's partSink.
type fileSink[O any] struct{ s FileSink[O] }

func (f fileSink[O]) offer(o *O) error                  { return f.s.Write(o) }
func (f fileSink[O]) close() (rows, n int64, err error) { return f.s.Close() }

// Write is an output of every record of type O, as Parquet part files under
// the directory path.
func Write[O any](path string) Output[O] {
	return WriteRouted(path, func(o O) (O, bool) { return o, true })
}

// WriteRouted is an output of the records route accepts, converted to type
// T, as Parquet part files under path. A job with several routed outputs
// writes records of different types from one reduce (as Hadoop's
// MultipleOutputs does). opts are added to the part files' writer options
// (parquetio.WithCompression, for one); the engine sets the spool
// directory.
func WriteRouted[T, O any](path string, route func(O) (T, bool), opts ...parquetio.WriterOption) Output[O] {
	return &output[O]{impl: outputImpl[O]{
		path: path,
		sink: func(create func() (io.WriteCloser, error), spoolDir string) partSink[O] {
			return &routedSink[T, O]{route: route, create: create, spoolDir: spoolDir, opts: opts}
		},
	}}
}

type routedSink[T, O any] struct {
	route    func(O) (T, bool)
	create   func() (io.WriteCloser, error)
	spoolDir string
	opts     []parquetio.WriterOption
	f        io.WriteCloser
	cw       countingWriter
	w        *parquetio.Writer[T]
	batch    []T
}

const sinkBatch = 256

func (s *routedSink[T, O]) offer(o *O) error {
	t, ok := s.route(*o)
	if !ok {
		return nil
	}
	if s.w == nil {
		f, err := s.create()
		if err != nil {
			return err
		}
		s.f = f
		s.cw.w = f
		s.w = parquetio.NewWriter[T](&s.cw, append(slices.Clip(s.opts), parquetio.SpoolDir(s.spoolDir))...)
	}
	s.batch = append(s.batch, t)
	if len(s.batch) >= sinkBatch {
		return s.flush()
	}
	return nil
}

func (s *routedSink[T, O]) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	err := s.w.Write(s.batch...)
	clear(s.batch)
	s.batch = s.batch[:0]
	return err
}

func (s *routedSink[T, O]) close() (rows, n int64, err error) {
	if s.w == nil {
		return 0, 0, nil
	}
	err = s.flush()
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close part file: %w", cerr)
	}
	return s.w.Rows(), s.cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// inputFile is one file of an input.
type inputFile struct {
	uri  string // for manifests and messages
	fs   storage.FS
	path string
}

// listInput lists the Parquet files of an input path.
func listInput(ctx context.Context, res Resolver, uri string, o inputOpts) ([]inputFile, error) {
	fsys, p, err := res.Resolve(uri)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", uri, err)
	}
	st, err := fsys.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && o.optional {
			return nil, nil
		}
		return nil, fmt.Errorf("input %s: %w", uri, err)
	}
	if !st.IsDir() {
		return []inputFile{{uri: uri, fs: fsys, path: p}}, nil
	}
	if o.requireSuccess {
		if _, err := fsys.Stat(path.Join(p, "_SUCCESS")); err != nil {
			return nil, fmt.Errorf("input %s: not a published job output (no _SUCCESS): %w", uri, err)
		}
	}
	ents, err := fsys.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", uri, err)
	}
	var out []inputFile
	for _, e := range ents {
		n := e.Name()
		if !parquetio.IsPart(e) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, inputFile{uri: joinURI(uri, n), fs: fsys, path: path.Join(p, n)})
	}
	return out, nil
}

// joinURI appends a base name to a directory URI or path.
func joinURI(dir, name string) string {
	return strings.TrimRight(dir, "/") + "/" + name
}

// splitURI splits an output URI into its parent and base name.
func splitURI(uri string) (dir, name string) {
	u := strings.TrimRight(uri, "/")
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		return ".", u
	}
	return u[:i], u[i+1:]
}
