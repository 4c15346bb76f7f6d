package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/internal/jsonrec"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// stage reads one stage directory of a segment with its record type.
type stage struct {
	dir   string
	count func(fsys storage.FS, dir string) (int64, error)
	dump  func(fsys storage.FS, dir string, limit int64, w io.Writer) error
}

func stageOf[T any](dir string) stage {
	return stage{
		dir: dir,
		count: func(fsys storage.FS, dir string) (int64, error) {
			var n int64
			err := eachPart[T](fsys, dir, func(r *parquetio.Reader[T]) (bool, error) {
				n += r.NumRows()
				return true, nil
			})
			return n, err
		},
		dump: func(fsys storage.FS, path string, limit int64, w io.Writer) error {
			var n int64
			var buf []byte
			enc := jsonrec.New[T](jsonrec.Options{})
			return eachPart[T](fsys, path, func(r *parquetio.Reader[T]) (bool, error) {
				for rec, err := range r.All() {
					if err != nil {
						return false, err
					}
					if limit > 0 && n >= limit {
						return false, nil
					}
					n++
					buf = enc.Append(buf[:0], &rec, [2]string{"dir", dir})
					buf = append(buf, '\n')
					if _, err := w.Write(buf); err != nil {
						return false, err
					}
				}
				return true, nil
			})
		},
	}
}

// segmentStages are a segment's stage directories, in pipeline order.
func segmentStages() []stage {
	return []stage{
		stageOf[segment.Generate](segment.DirGenerate),
		stageOf[segment.Fetch](segment.DirFetch),
		stageOf[segment.Content](segment.DirContent),
		stageOf[segment.ParseData](segment.DirParseData),
		stageOf[segment.ParseText](segment.DirParseText),
		stageOf[segment.ParseUpdate](segment.DirCrawlParse),
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

func (s *session) readsegList(c *cli.Context) error {
	var segs []string
	if c.Args().Present() {
		for _, a := range c.Args().Slice() {
			u, err := s.segmentURI(a)
			if err != nil {
				return err
			}
			segs = append(segs, u)
		}
	} else {
		root := s.crawlPath("segments")
		fsys, p, err := s.resolve(root)
		if err != nil {
			return err
		}
		infos, err := fsys.ReadDir(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("readseg list: %w", err)
		}
		for _, fi := range infos {
			if fi.IsDir() && !strings.HasPrefix(fi.Name(), "_") && !strings.HasPrefix(fi.Name(), ".") {
				segs = append(segs, storage.Join(root, fi.Name()))
			}
		}
	}
	tw := tabwriter.NewWriter(s.io.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEGMENT\tGENERATED\tFETCHED\tPARSED\tSTATE\tPATH")
	byDir := map[string]stage{}
	for _, st := range segmentStages() {
		byDir[st.dir] = st
	}
	for _, seg := range segs {
		fsys, p, err := s.resolve(seg)
		if err != nil {
			return err
		}
		cols := []string{storage.Base(seg)}
		for _, d := range []string{segment.DirGenerate, segment.DirFetch, segment.DirParseData} {
			dir := p + "/" + d
			ok, err := storage.Exists(fsys, dir)
			if err != nil {
				return fmt.Errorf("readseg list: %w", err)
			}
			if !ok {
				cols = append(cols, "-")
				continue
			}
			n, err := byDir[d].count(fsys, dir)
			if err != nil {
				return fmt.Errorf("readseg list: %w", err)
			}
			cols = append(cols, fmt.Sprint(n))
		}
		st, err := segment.Inspect(fsys, p)
		if err != nil {
			return fmt.Errorf("readseg list: %w", err)
		}
		cols = append(cols, st.State.String(), seg)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

func (s *session) readsegDump(c *cli.Context) error {
	seg, err := s.segmentURI(c.Args().First())
	if err != nil {
		return err
	}
	fsys, p, err := s.resolve(seg)
	if err != nil {
		return err
	}
	want := c.StringSlice("dir")
	stages := segmentStages()
	var selected []stage
	if len(want) == 0 {
		for _, st := range stages {
			ok, err := storage.Exists(fsys, p+"/"+st.dir)
			if err != nil {
				return err
			}
			if ok {
				selected = append(selected, st)
			}
		}
	} else {
	next:
		for _, d := range want {
			for _, st := range stages {
				if st.dir == d {
					selected = append(selected, st)
					continue next
				}
			}
			return usageErrorf("readseg dump: unknown --dir %q (want one of crawl_generate, crawl_fetch, content, parse_data, parse_text, crawl_parse)", d)
		}
	}
	return s.writeOutput(c.String("output"), func(w io.Writer) error {
		for _, st := range selected {
			if err := st.dump(fsys, p+"/"+st.dir, c.Int64("limit"), w); err != nil {
				return fmt.Errorf("readseg dump %s: %w", st.dir, err)
			}
		}
		return nil
	})
}

// writeOutput runs f on a buffered stdout, or on the file path (a new local
// file, removed if f fails).
func (s *session) writeOutput(path string, f func(w io.Writer) error) error {
	if path == "" || path == "-" {
		bw := bufio.NewWriterSize(s.io.stdout, 1<<16)
		if err := f(bw); err != nil {
			bw.Flush()
			return err
		}
		return bw.Flush()
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	bw := bufio.NewWriterSize(file, 1<<16)
	err = f(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("output %s: %w", path, cerr)
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
