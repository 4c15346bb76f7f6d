// Command contentcodec measures what each content compression
// (parquetio.Compressions) costs to write and saves on disk, on the content
// of a real crawl: it reads every segment's content rows into memory, then
// for each compression writes them all as one Parquet file in memory, the
// way the fetch job does (parquetio.Writer, batches of 256 rows), and
// prints the CPU time (user + sys of the writing thread, from getrusage)
// per row and the bytes per row. Each compression is written -n times and
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
	rows, body, err := readContent(*crawl)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d content rows, %d body bytes (%.0f per row)\n\n", len(rows), body, float64(body)/float64(len(rows)))
	fmt.Println("| compression  | CPU per row | bytes per row | of body |")
	fmt.Println("|--------------|-------------|---------------|---------|")
	for _, c := range parquetio.Compressions() {
		best := time.Duration(1 << 62)
		var size int64
		for range *n {
			cpu, sz, err := write(rows, c)
			if err != nil {
				log.Fatal(err)
			}
			best, size = min(best, cpu), sz
		}
		fmt.Printf("| %-12s | %8.1f µs | %13.0f | %6.1f%% |\n", c,
			float64(best.Microseconds())/float64(len(rows)), float64(size)/float64(len(rows)), 100*float64(size)/float64(body))
	}
}

// readContent reads the content rows of every segment of the crawl.
func readContent(crawl string) ([]segment.Content, int64, error) {
	fsys := storage.NewLocal()
	dirs, err := filepath.Glob(filepath.Join(crawl, "segments", "*", segment.DirContent))
	if err != nil {
		return nil, 0, fmt.Errorf("list segments: %w", err)
	}
	var rows []segment.Content
	var body int64
	for _, dir := range dirs {
		parts, err := parquetio.PartFiles(fsys, dir)
		if err != nil {
			return nil, 0, fmt.Errorf("content of %s: %w", dir, err)
		}
		for _, p := range parts {
			f, err := fsys.Open(p)
			if err != nil {
				return nil, 0, fmt.Errorf("open %s: %w", p, err)
			}
			r, err := parquetio.Open[segment.Content](f, p)
			if err != nil {
				return nil, 0, err
			}
			for c, err := range r.All() {
				if err != nil {
					r.Close()
					return nil, 0, err
				}
				rows = append(rows, c)
				body += int64(len(c.Body))
			}
			if err := r.Close(); err != nil {
				return nil, 0, fmt.Errorf("close %s: %w", p, err)
			}
		}
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("no content rows under %s/segments", crawl)
	}
	return rows, body, nil
}

// write writes rows with compression c and returns the CPU time of the
// writing thread and the file's size.
func write(rows []segment.Content, c parquetio.Compression) (time.Duration, int64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runtime.GC()
	var cw countWriter
	start := threadCPU()
	w := parquetio.NewWriter[segment.Content](&cw, parquetio.WithCompression(c))
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
