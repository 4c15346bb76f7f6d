// Command crawldb is the CrawlDB benchmark harness: it builds a synthetic
// crawl (a CrawlDB of -urls URLs and one segment of -fetched fetched URLs
// with outlinks), then measures, each in its own process, in one run:
//
//   - the copy limit: reading every CrawlDB row and writing it back with the
//     same Parquet settings, no shuffle;
//   - trawl generate over the CrawlDB;
//   - trawl updatedb of the segment into the CrawlDB;
//
// and prints records per second, wall time, CPU time, the cores it kept
// busy, peak RSS and the ratio of each job's time to the copy limit. Given
// several sizes it runs each in turn, then prints each job's time at each
// size against the copy limit and against the first size, and can plot
// them.
//
//	go run ./bench/crawldb -trawl bin/trawl            # 2,000,000 URLs, 200,000 fetched
//	go run ./bench/crawldb -trawl bin/trawl -urls 200000 -fetched 20000
//	go run ./bench/crawldb -trawl bin/trawl -urls 1000000,2000000,4000000,10000000 -plot crawldb.png
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/bench/internal/proc"
	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "copy" {
		if err := copyLimit(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "copy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "gen" {
		// gen CRAWL URLS FETCHED LINKS PARTS: build the synthetic crawl in a
		// process of its own, so the measured processes do not inherit a
		// large parent's memory high-water mark across fork and exec.
		n := make([]int, 4)
		for i := range n {
			n[i], _ = strconv.Atoi(os.Args[3+i])
		}
		seg, err := generateData(os.Args[2], n[0], n[1], n[2], n[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println(seg)
		return
	}
	var (
		trawl   = flag.String("trawl", "bin/trawl", "the trawl binary to measure")
		dir     = flag.String("dir", filepath.Join(os.TempDir(), "trawl-bench-crawldb"), "work directory (wiped)")
		urlList = flag.String("urls", "2000000", "URLs in the CrawlDB; a comma-separated list runs each size in turn and prints a table of them all")
		fetched = flag.Int("fetched", 0, "URLs fetched in the segment (0: a tenth of -urls)")
		links   = flag.Int("outlinks", 10, "outlinks per parsed page (half to new URLs)")
		parts   = flag.Int("parts", 4, "CrawlDB part files")
		memory  = flag.String("memory", "256MiB", "engine memory budget passed to trawl")
		plotOut = flag.String("plot", "", "write a PNG plot of the jobs' wall times against the CrawlDB size to `FILE`")
		keep    = flag.Bool("keep", false, "keep the work directory (of the last size)")
	)
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var sizes []sizeRun
	for _, f := range strings.Split(*urlList, ",") {
		urls, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || urls <= 0 {
			fmt.Fprintf(os.Stderr, "bench/crawldb: -urls %q: want positive counts\n", *urlList)
			os.Exit(2)
		}
		fe := *fetched
		if fe == 0 {
			fe = urls / 10
		}
		ms, err := run(log, *trawl, *dir, urls, fe, *links, *parts, *memory)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/crawldb:", err)
			os.Exit(1)
		}
		sizes = append(sizes, sizeRun{urls: urls, ms: ms})
		if !*keep {
			os.RemoveAll(*dir)
		}
	}
	if len(sizes) > 1 {
		printSizes(sizes, *memory)
	}
	if *plotOut != "" {
		if err := plotSizes(*plotOut, sizes); err != nil {
			fmt.Fprintln(os.Stderr, "bench/crawldb:", err)
			os.Exit(1)
		}
	}
}

// measurement is one measured process.
type measurement struct {
	name    string
	records int
	wall    time.Duration
	cpu     time.Duration
	maxRSS  int64 // bytes
}

// sizeRun is the measurements of one CrawlDB size: copy limit, generate,
// updatedb.
type sizeRun struct {
	urls int
	ms   []measurement
}

func run(log *slog.Logger, trawl, dir string, urls, fetched, links, parts int, memory string) ([]measurement, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	crawl := filepath.Join(dir, "crawl")
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	gen := exec.Command(self, "gen", crawl, strconv.Itoa(urls), strconv.Itoa(fetched), strconv.Itoa(links), strconv.Itoa(parts))
	gen.Stderr = os.Stderr
	out, err := gen.Output()
	if err != nil {
		return nil, fmt.Errorf("building the synthetic crawl: %w", err)
	}
	seg := strings.TrimSpace(string(out))
	log.Info("synthetic crawl built", "dir", crawl, "urls", urls, "fetched", fetched, "took", time.Since(start).Round(time.Millisecond))

	current := filepath.Join(crawl, "crawldb", "current")
	var ms []measurement
	m, err := measure("copy limit", urls, self, "copy", current, filepath.Join(dir, "copy"))
	if err != nil {
		return nil, err
	}
	ms = append(ms, m)
	m, err = measure("generate", urls, trawl, "--crawl", crawl, "--memory", memory,
		"generate", "--topN", strconv.Itoa(fetched), "--now", "+100d")
	if err != nil {
		return nil, err
	}
	ms = append(ms, m)
	m, err = measure("updatedb", urls, trawl, "--crawl", crawl, "--memory", memory, "updatedb", seg)
	if err != nil {
		return nil, err
	}
	ms = append(ms, m)

	fmt.Printf("\nCrawlDB of %d URLs, segment of %d fetched URLs with %d outlinks each, memory budget %s, %d cores\n\n",
		urls, fetched, links, memory, numCPU())
	fmt.Printf("| %-10s | %12s | %10s | %10s | %10s | %12s | %13s |\n", "job", "CrawlDB rows/s", "wall", "CPU", "cores busy", "peak RSS", "x copy limit")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|%s|\n", dashes(12), dashes(16), dashes(12), dashes(12), dashes(12), dashes(14), dashes(15))
	for _, m := range ms {
		fmt.Printf("| %-10s | %14.0f | %10s | %10s | %10.2f | %8.0f MiB | %13.2f |\n", m.name,
			float64(m.records)/m.wall.Seconds(), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond),
			m.cpu.Seconds()/m.wall.Seconds(), float64(m.maxRSS)/(1<<20), m.wall.Seconds()/ms[0].wall.Seconds())
	}
	return ms, nil
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func numCPU() int {
	n, _ := strconv.Atoi(os.Getenv("GOMAXPROCS"))
	if n > 0 {
		return n
	}
	return runtimeNumCPU()
}

// measure runs a command, waits for it and returns its wall time and peak
// RSS (proc.Run). generate's exit status 1 (nothing due) is not an error.
func measure(name string, records int, bin string, args ...string) (measurement, error) {
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	u, err := proc.Run(cmd)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && name == "generate" && exit.ExitCode() == 1) {
		return measurement{}, fmt.Errorf("%s: %w", name, err)
	}
	return measurement{name: name, records: records, wall: u.Wall, cpu: u.CPU, maxRSS: u.PeakRSS}, nil
}

// copyLimit reads every row of every part in src and writes it to a part of
// the same name in dst with parquetio's default settings, as the engine
// writes CrawlDB parts.
func copyLimit(src, dst string) error {
	fsys := storage.NewLocal()
	infos, err := fsys.ReadDir(src)
	if err != nil {
		return err
	}
	if err := fsys.MkdirAll(dst); err != nil {
		return err
	}
	for _, fi := range infos {
		if filepath.Ext(fi.Name()) != ".parquet" {
			continue
		}
		if err := copyPart(fsys, filepath.Join(src, fi.Name()), filepath.Join(dst, fi.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyPart(fsys storage.FS, src, dst string) error {
	f, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := parquetio.Open[crawldb.Datum](f, src)
	if err != nil {
		return err
	}
	out, err := fsys.Create(dst)
	if err != nil {
		return err
	}
	w := parquetio.NewWriter[crawldb.Datum](out)
	for d, err := range r.All() {
		if err != nil {
			out.Close()
			return err
		}
		if err := w.Write(d); err != nil {
			out.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
