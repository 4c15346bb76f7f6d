// Command contentcodec measures what each compression
// (parquetio.Compressions) costs to write and saves on disk, on the content
// and the parse text of a real crawl: it reads every segment's content
// rows (then parse_text rows) into memory, then for each compression
// writes them all as one Parquet file in memory, the way the fetch job
// does (parquetio.Writer, batches of 256 rows), and prints the CPU time
// (user + sys of the writing thread, from getrusage) per row and the bytes
// per row. Each compression is written -n times and
// the least CPU time is kept, to damp the noise of a loaded machine.
//
//	scripts/crawlcpu.sh bin/trawl /tmp/crawlcpu     # a crawl to measure on
//	go run ./bench/contentcodec -crawl /tmp/crawlcpu/crawl
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

func main() {
	crawl := flag.String("crawl", "", "crawl directory whose segments' content is written (required)")
	n := flag.Int("n", 3, "writes of each compression; the least CPU time is kept")
	flag.Parse()
	if *crawl == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := measure(*crawl, segment.DirContent, *n, func(c segment.Content) int { return len(c.Body) }); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	if err := measure(*crawl, segment.DirParseText, *n, func(x segment.ParseText) int { return len(x.Text) }); err != nil {
		log.Fatal(err)
	}
}

// measure prints the table of one part: the rows of T in every segment's
// dir, whose payload (body or text) size is size.
func measure[T any](crawl, dir string, n int, size func(T) int) error {
	rows, body, err := readRows(crawl, dir, size)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d rows, %d payload bytes (%.0f per row)\n\n", dir, len(rows), body, float64(body)/float64(len(rows)))
	fmt.Println("| compression  | CPU per row | bytes per row | of payload |")
	fmt.Println("|--------------|-------------|---------------|------------|")
	for _, c := range parquetio.Compressions() {
		best := time.Duration(1 << 62)
		var sz int64
		for range n {
			cpu, s, err := write(rows, c)
			if err != nil {
				return err
			}
			best, sz = min(best, cpu), s
		}
		fmt.Printf("| %-12s | %8.1f µs | %13.0f | %9.1f%% |\n", c,
			float64(best.Microseconds())/float64(len(rows)), float64(sz)/float64(len(rows)), 100*float64(sz)/float64(body))
	}
	return nil
}

// readRows reads the rows of part dir of every segment of the crawl, and
// the sum of their payload sizes.
func readRows[T any](crawl, dir string, size func(T) int) ([]T, int64, error) {
	fsys := storage.NewLocal()
	dirs, err := filepath.Glob(filepath.Join(crawl, "segments", "*", dir))
	if err != nil {
		return nil, 0, fmt.Errorf("list segments: %w", err)
	}
	var rows []T
	var body int64
	for _, d := range dirs {
		parts, err := parquetio.PartFiles(fsys, d)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", d, err)
		}
		for _, p := range parts {
			f, err := fsys.Open(p)
			if err != nil {
				return nil, 0, fmt.Errorf("open %s: %w", p, err)
			}
			r, err := parquetio.Open[T](f, p)
			if err != nil {
				return nil, 0, err
			}
			for c, err := range r.All() {
				if err != nil {
					r.Close()
					return nil, 0, err
				}
				rows = append(rows, c)
				body += int64(size(c))
			}
			if err := r.Close(); err != nil {
				return nil, 0, fmt.Errorf("close %s: %w", p, err)
			}
		}
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("no %s rows under %s/segments", dir, crawl)
	}
	return rows, body, nil
}

// write writes rows with compression c and returns the CPU time of the
// writing thread and the file's size.
func write[T any](rows []T, c parquetio.Compression) (time.Duration, int64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runtime.GC()
	var cw countWriter
	start := threadCPU()
	w := parquetio.NewWriter[T](&cw, parquetio.WithCompression(c))
	for i := 0; i < len(rows); i += 256 {
		if err := w.Write(rows[i:min(i+256, len(rows))]...); err != nil {
			return 0, 0, fmt.Errorf("write %s: %w", c, err)
		}
	}
	if err := w.Close(); err != nil {
		return 0, 0, fmt.Errorf("close %s: %w", c, err)
	}
	return threadCPU() - start, cw.n, nil
}

// threadCPU is the user + system time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		log.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
