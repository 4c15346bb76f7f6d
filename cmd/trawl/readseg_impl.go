package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

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
			n, err := segment.CountRecords(fsys, p, d)
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
	format := c.String("format")
	switch format {
	case "json":
	case "arrow":
		if len(c.StringSlice("dir")) != 1 {
			return usageErrorf("readseg dump: --format arrow writes one stage: give one --dir (one of %s)", strings.Join(segment.RecordDirs(), ", "))
		}
	default:
		return usageErrorf("readseg dump: --format must be json or arrow, not %q", format)
	}
	selected, err := dumpDirs(fsys, p, c.StringSlice("dir"))
	if err != nil {
		return err
	}
	o := segment.DumpOptions{Limit: c.Int64("limit")}
	if o.Limit < 0 {
		return usageErrorf("readseg dump: --limit must not be negative, not %d", o.Limit)
	}
	if st := c.String("status"); st != "" {
		if o.Status, err = crawldb.ParseStatus(st); err != nil {
			return usageErrorf("readseg dump --status: %w", err)
		}
		// Only the stages with statuses; asked for one without, an error.
		var with []string
		for _, d := range selected {
			if segment.HasStatus(d) {
				with = append(with, d)
			} else if len(c.StringSlice("dir")) > 0 {
				return usageErrorf("readseg dump --status: %s records have no status (crawl_generate, crawl_fetch and crawl_parse have)", d)
			}
		}
		selected = with
	}
	return s.writeOutput(c.String("output"), func(w io.Writer) error {
		for _, d := range selected {
			dump := segment.DumpJSON
			if format == "arrow" {
				dump = segment.DumpArrow
			}
			if err := dump(fsys, p, d, o, w); err != nil {
				return fmt.Errorf("readseg dump %s: %w", d, err)
			}
		}
		return nil
	})
}

// dumpDirs are the record directories readseg dump writes: those asked
// for with --dir, else every one the segment has.
func dumpDirs(fsys storage.FS, seg string, want []string) ([]string, error) {
	if len(want) > 0 {
		for _, d := range want {
			if !slices.Contains(segment.RecordDirs(), d) {
				return nil, usageErrorf("readseg dump: unknown --dir %q (want one of %s)", d, strings.Join(segment.RecordDirs(), ", "))
			}
		}
		return want, nil
	}
	var have []string
	for _, d := range segment.RecordDirs() {
		ok, err := storage.Exists(fsys, seg+"/"+d)
		if err != nil {
			return nil, err
		}
		if ok {
			have = append(have, d)
		}
	}
	return have, nil
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
