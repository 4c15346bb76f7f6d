// Command lean is the lean pipeline: a minimal breadth-first crawler of a
// synthetic web (trawl simweb serve) that does only the essential work of
// a crawl, as a reference for trawl's CPU per page measured on the same
// machine in the same run (scripts/leanratio.sh).
//
// Each round it GETs every URL of the frontier once (plain net/http,
// keep-alive, Workers concurrent fetches, names resolved through the
// simweb's DNS server, redirects not followed but their targets kept for
// the next round, bodies read up to 1 MiB), writes the responses to a
// zstd-compressed Parquet file, parses every HTML page with one pass of
// golang.org/x/net/html's tokenizer (outlinks, title, visible text),
// writes that to another Parquet file, and merges the sorted, distinct
// outlinks into its db: a sorted list of URLs with a fetched flag, written
// to Parquet each round. The next frontier is the db's unfetched URLs.
//
// It reports the 200 responses fetched, the process's own CPU time (user +
// sys) per such page, its peak RSS, the wall time, the content Parquet
// bytes and the CPU time of each stage.
//
//	go run ./bench/lean -trawl bin/trawl                                  # starts its own simweb
//	go run ./bench/lean -http 127.0.0.1:P -dns 127.0.0.1:Q -seeds seeds.txt   # a running one
//
// It imports nothing of trawl, so that it stays a fair reference.
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
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultWorkers is -workers' default: of 4, 8, 16, 32 and 64 concurrent
// fetches, 32 cost the least CPU per page on a 2-core machine (fewer leave
// the process waking for every response; more add nothing), so the
// reference is not made dearer than it needs to be.
const defaultWorkers = 32

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lean:", err)
		os.Exit(1)
	}
}

// run parses the flags, starts a simweb if asked, crawls and reports.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("lean", flag.ContinueOnError)
	var (
		httpAddr = fs.String("http", "", "the running simweb's HTTP `ADDR` (for its clock)")
		dnsAddr  = fs.String("dns", "", "the running simweb's DNS server `ADDR`")
		seeds    = fs.String("seeds", "", "the seed `FILE` (one URL a line)")
		trawl    = fs.String("trawl", "", "start a simweb with this trawl `BINARY` instead (as scripts/crawlcpu.sh does)")
		pages    = fs.Int("pages", 20000, "content pages of the simweb -trawl starts")
		hosts    = fs.Int("hosts", 200, "hosts of the simweb -trawl starts")
		rounds   = fs.Int("rounds", 5, "crawl rounds")
		workers  = fs.Int("workers", defaultWorkers, "concurrent fetches (and parses)")
		out      = fs.String("out", "", "keep the Parquet files in `DIR` (default: a temporary directory, removed)")
		now      = fs.String("now", "2026-01-01T00:00:00Z", "simulated time of round 1, set on the simweb's clock before each round one day apart as trawl crawl --days-per-round 1 does (\"\": leave the clock alone)")
		verbose  = fs.Bool("v", false, "log each round to stderr")
		cpuprof  = fs.String("cpuprofile", "", "write a CPU profile of the crawl to `FILE`")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}

	if *trawl != "" {
		if *httpAddr != "" || *dnsAddr != "" || *seeds != "" {
			return errors.New("-trawl starts its own simweb: give it or -http, -dns and -seeds, not both")
		}
		dir, err := os.MkdirTemp("", "lean-simweb-")
		if err != nil {
			return fmt.Errorf("simweb: %w", err)
		}
		defer os.RemoveAll(dir)
		sw, err := startSimweb(ctx, *trawl, dir, *pages, *hosts)
		if err != nil {
			return err
		}
		defer sw.stop()
		*httpAddr, *dnsAddr, *seeds = sw.httpAddr, sw.dnsAddr, sw.seeds
	}
	if *dnsAddr == "" || *seeds == "" {
		return errors.New("give -dns and -seeds of a running simweb (and -http for its clock), or -trawl BINARY")
	}
	o := Options{DNSAddr: *dnsAddr, Rounds: *rounds, Workers: *workers, Logger: logger}
	if *now != "" {
		if *httpAddr == "" {
			return errors.New("-now sets the simweb's clock: give -http too, or -now ''")
		}
		if err := checkLoopback(*httpAddr); err != nil {
			return fmt.Errorf("-http: %w", err)
		}
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		o.Now, o.ClockURL = t, "http://"+*httpAddr+"/_simweb/clock"
	}
	var err error
	if o.Seeds, err = readSeeds(*seeds); err != nil {
		return err
	}
	o.Out = *out
	if o.Out == "" {
		if o.Out, err = os.MkdirTemp("", "lean-out-"); err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		defer os.RemoveAll(o.Out)
	} else if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}

	start := time.Now()
	res, err := Crawl(ctx, o)
	if err != nil {
		return err
	}
	report(stdout, res, time.Since(start))
	return nil
}

// report prints res in the key-value style of scripts/crawlcpu.sh.
func report(w io.Writer, res *Result, wall time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	user := time.Duration(ru.Utime.Nano())
	sys := time.Duration(ru.Stime.Nano())
	n := max(res.Fetched, 1)
	fmt.Fprintf(w, "pages fetched   %d\n", res.Fetched)
	fmt.Fprintf(w, "responses       %d (%d redirects); %d errors; %d HTML pages parsed, %d outlinks\n",
		res.Responses, res.Redirects, res.Errors, res.Parsed, res.Outlinks)
	fmt.Fprintf(w, "db              %d URLs, %d unfetched after %d rounds\n", res.DBSize, res.Unfetched, res.RoundsRun)
	fmt.Fprintf(w, "cpu user+sys    %.2f s (user %.2f, sys %.2f); wall %s\n",
		(user + sys).Seconds(), user.Seconds(), sys.Seconds(), wall.Round(10*time.Millisecond))
	fmt.Fprintf(w, "cpu per page    %.0f us\n", float64((user+sys).Microseconds())/float64(n))
	fmt.Fprintf(w, "peak RSS        %.0f MiB\n", float64(peakRSS())/(1<<20))
	fmt.Fprintf(w, "content bytes   %d (%.0f per page)\n", res.ContentBytes, float64(res.ContentBytes)/float64(n))
	var stages []string
	for s := range numStages {
		stages = append(stages, fmt.Sprintf("%s %.0f", s, float64(res.StageCPU[s].Microseconds())/float64(n)))
	}
	fmt.Fprintf(w, "stage cpu       %s us per page\n", strings.Join(stages, ", "))
	if res.FirstError != "" {
		fmt.Fprintf(w, "first error     %s\n", res.FirstError)
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(la)); len(f) >= 3 {
			fmt.Fprintf(w, "load average    %s\n", strings.Join(f[:3], " "))
		}
	}
}

// simwebProc is a trawl simweb serve process.
type simwebProc struct {
	cmd               *exec.Cmd
	httpAddr, dnsAddr string
	seeds             string
	waited            chan struct{}
}

// startSimweb starts `trawl simweb serve` as scripts/crawlcpu.sh does, its
// seeds and output into dir, and waits until it serves.
func startSimweb(ctx context.Context, trawl, dir string, pages, hosts int) (*simwebProc, error) {
	bin, err := filepath.Abs(trawl)
	if err != nil {
		return nil, fmt.Errorf("simweb: %w", err)
	}
	seeds := filepath.Join(dir, "seeds.txt")
	outName := filepath.Join(dir, "serve.out")
	outFile, err := os.Create(outName)
	if err != nil {
		return nil, fmt.Errorf("simweb: %w", err)
	}
	defer outFile.Close()
	cmd := exec.Command(bin, "--log-level", "warn", "simweb", "serve",
		"--pages", strconv.Itoa(pages), "--hosts", strconv.Itoa(hosts),
		"--latency", "0", "--hazards", "none", "--seeds-out", seeds)
	cmd.Stdout, cmd.Stderr = outFile, outFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("simweb: starting %s: %w", bin, err)
	}
	sw := &simwebProc{cmd: cmd, seeds: seeds, waited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(sw.waited)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case <-sw.waited:
			data, _ := os.ReadFile(outName)
			return nil, fmt.Errorf("simweb: the server exited before serving: %s", strings.TrimSpace(string(data)))
		case <-deadline:
			sw.stop()
			return nil, errors.New("simweb: not serving after 2 minutes")
		case <-ctx.Done():
			sw.stop()
			return nil, fmt.Errorf("simweb: %w", ctx.Err())
		case <-tick.C:
		}
		data, err := os.ReadFile(outName)
		if err != nil {
			sw.stop()
			return nil, fmt.Errorf("simweb: %w", err)
		}
		serving := false
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "http:":
				sw.httpAddr = f[1]
			case len(f) >= 2 && f[0] == "dns:":
				sw.dnsAddr = f[1]
			case len(f) >= 1 && f[0] == "serving":
				serving = true
			}
		}
		if !serving {
			continue
		}
		if sw.httpAddr == "" || sw.dnsAddr == "" {
			sw.stop()
			return nil, fmt.Errorf("simweb: no http: or dns: line in its output: %s", strings.TrimSpace(string(data)))
		}
		return sw, nil
	}
}

// stop interrupts the server and waits for it to exit.
func (s *simwebProc) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.waited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.waited
	}
}
