// Command fetch is the fetch-and-parse benchmark harness: it serves a
// synthetic web (package simweb) on loopback, injects every URL a polite
// crawler may fetch from it into a fresh crawl, generates one segment with
// all of them, and then measures, each in its own process, in one run:
//
//   - the raw limit: a bare net/http client (this binary's "raw" mode)
//     GETting the same URLs (the segment's fetch list) with the same number
//     of connections, one per host at a time and the busiest free host
//     first, keep-alive on, names resolved through simweb's DNS server,
//     bodies read and discarded, nothing parsed or written;
//   - trawl fetch with no politeness delay, then trawl parse;
//
// and prints pages per second, wall time and peak RSS of each, with the
// ratio of trawl's throughput to the raw limit.
//
//	go run ./bench/fetch -trawl bin/trawl                       # 500 hosts, 50,000 pages
//	go run ./bench/fetch -trawl bin/trawl -hosts 100 -pages 5000 -latency 0
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trawl/trawl/simweb"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "raw" {
		if err := rawMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "raw:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.trawl, "trawl", "bin/trawl", "the trawl binary to measure")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "trawl-bench-fetch"), "work directory (wiped)")
	flag.Uint64Var(&o.seed, "seed", 1, "simweb seed")
	flag.IntVar(&o.hosts, "hosts", 500, "simweb regular hosts")
	flag.IntVar(&o.pages, "pages", 50_000, "simweb content pages")
	flag.Float64Var(&o.latency, "latency", 1, "scale of the simweb hosts' latency (1: the generated mix, median 15 ms; 0: none)")
	flag.StringVar(&o.hazards, "hazards", "traps", "simweb hazards (see trawl simweb serve --help); the default keeps only those that cost one quick response each")
	flag.IntVar(&o.conns, "connections", 64, "concurrent connections in all, for both contenders (trawl: split evenly over its fetch tasks)")
	flag.IntVar(&o.fetchers, "fetchers", runtime.NumCPU(), "fetch-list parts (generate --num-fetchers), run at once")
	flag.IntVar(&o.runs, "runs", 1, "measure each contender this many times, alternating; the table shows every run")
	flag.StringVar(&o.agent, "agent", "trawl-bench", "user agent of both contenders")
	flag.StringVar(&o.memory, "memory", "256MiB", "engine memory budget passed to trawl")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.StringVar(&o.accessLog, "access-log", "", "write simweb's access log (every request, both contenders) to `FILE` as JSON lines, for diagnosis")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, log, o)
	if !o.keep {
		os.RemoveAll(o.dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/fetch:", err)
		os.Exit(1)
	}
}

// options are the harness's flags.
type options struct {
	trawl, dir, hazards, agent, memory  string
	accessLog                           string
	seed                                uint64
	hosts, pages, conns, fetchers, runs int
	latency                             float64
	keep                                bool
}

func run(ctx context.Context, log *slog.Logger, o options) error {
	if o.conns < o.fetchers || o.fetchers < 1 || o.runs < 1 {
		return fmt.Errorf("need -fetchers >= 1, -connections >= -fetchers and -runs >= 1")
	}
	if err := os.RemoveAll(o.dir); err != nil {
		return fmt.Errorf("wiping %s: %w", o.dir, err)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("work directory: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the harness binary: %w", err)
	}
	trawl, err := filepath.Abs(o.trawl)
	if err != nil {
		return fmt.Errorf("-trawl: %w", err)
	}

	// The synthetic web, served from this process.
	hz, err := simweb.ParseHazards(o.hazards)
	if err != nil {
		return fmt.Errorf("-hazards: %w", err)
	}
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = o.seed, o.hosts, o.pages, hz
	start := time.Now()
	web, err := simweb.New(cfg)
	if err != nil {
		return fmt.Errorf("generating the synthetic web: %w", err)
	}
	so := simweb.ServeOptions{
		DNSAddr:        "127.0.0.1:0",
		Latency:        o.latency,
		AccessLogLimit: 1024,
		Logger:         log.With("component", "simweb"),
	}
	if o.accessLog != "" {
		f, err := os.Create(o.accessLog)
		if err != nil {
			return fmt.Errorf("-access-log: %w", err)
		}
		defer f.Close() // after srv.Close, which flushes the log
		so.AccessLogJSONL = f
	}
	srv, err := web.Serve(ctx, so)
	if err != nil {
		return fmt.Errorf("serving the synthetic web: %w", err)
	}
	defer srv.Close()
	set := selectURLs(web, srv)
	log.Info("synthetic web served", "hosts", o.hosts, "web_urls", web.NumPages(), "urls", len(set.urls),
		"http", srv.HTTPAddr(), "dns", srv.DNSAddr(), "took", time.Since(start).Round(time.Millisecond))
	seedsFile := filepath.Join(o.dir, "seeds.txt")
	if err := os.WriteFile(seedsFile, []byte(strings.Join(set.urls, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the URL list: %w", err)
	}

	// The crawl: every URL injected, one segment with all of them.
	crawl := filepath.Join(o.dir, "crawl")
	global := []string{"--crawl", crawl, "--memory", o.memory, "--log-level", "warn"}
	if _, err := measure(ctx, "inject", os.Stderr, trawl, append(global, "inject", seedsFile)...); err != nil {
		return err
	}
	gen, err := measure(ctx, "generate", os.Stderr, trawl, append(global, "generate",
		"--topN", strconv.Itoa(2*len(set.urls)), "--num-fetchers", strconv.Itoa(o.fetchers), "--now", "+1h")...)
	if err != nil {
		return err
	}
	seg := strings.TrimSpace(string(gen.stdout))
	if seg == "" {
		return fmt.Errorf("generate printed no segment")
	}
	// The raw client gets the fetch list itself: inject normalizes and
	// filters URLs (a few simweb paths fail the path-loop filter), so the
	// fetch list, not the seed file, is the URL set both fetch.
	fetchList, err := readFetchList(seg)
	if err != nil {
		return err
	}
	set.fetchList = len(fetchList)
	set.bounds(web, fetchList, o.latency, o.conns)
	urlsFile := filepath.Join(o.dir, "fetchlist.txt")
	if err := os.WriteFile(urlsFile, []byte(strings.Join(fetchList, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the fetch list: %w", err)
	}
	log.Info("segment generated", "segment", seg, "urls", len(fetchList), "dropped_by_inject", len(set.urls)-len(fetchList))

	perTask := o.conns / o.fetchers
	fetchArgs := append(append([]string{}, global...), "fetch", seg, "--agent", o.agent,
		"--server-delay", "0", "--allow-private", "--dns-server", srv.DNSAddr(),
		"--max-connections", strconv.Itoa(perTask))
	parseArgs := append(append([]string{}, global...), "parse", seg)

	var runs []runResult
	for i := range o.runs {
		if i > 0 {
			if err := clearSegment(seg); err != nil {
				return err
			}
		}
		var r runResult
		log.Info("raw limit", "run", i+1)
		m, err := measure(ctx, "raw", os.Stderr, self, "raw", urlsFile, srv.DNSAddr(), strconv.Itoa(o.conns), o.agent)
		if err != nil {
			return err
		}
		r.raw = m
		if err := json.Unmarshal(m.stdout, &r.rawRes); err != nil {
			return fmt.Errorf("raw: reading its result %q: %w", m.stdout, err)
		}
		if r.rawRes.FirstError != "" {
			log.Warn("raw client errors", "errors", r.rawRes.Errors, "first", r.rawRes.FirstError)
		}
		log.Info("trawl fetch", "run", i+1)
		if r.fetch, err = measure(ctx, "fetch", os.Stderr, trawl, fetchArgs...); err != nil {
			return err
		}
		log.Info("trawl parse", "run", i+1)
		if r.parse, err = measure(ctx, "parse", os.Stderr, trawl, parseArgs...); err != nil {
			return err
		}
		if r.counts, err = countSegment(seg); err != nil {
			return err
		}
		runs = append(runs, r)
	}
	printTable(os.Stdout, o, set, runs)
	return nil
}

// urlSet is the URL set both contenders fetch.
type urlSet struct {
	// urls are the URLs injected; fetchList the number generate put in
	// the segment (after inject's normalization and filters).
	urls      []string
	fetchList int
	// webURLs is the number of URLs the web knows; the others count those
	// left out, by reason.
	webURLs                       int
	hostile, unresolvable, robots int
	// serialFloor is the largest sum over one host of its median latency
	// per fetch-list URL: with one connection per host, no client
	// finishes much sooner. spreadFloor is the sum over all URLs divided
	// by the connections.
	serialFloor, spreadFloor time.Duration
}

// selectURLs takes every URL of the web that a polite crawler requests
// and that answers promptly: all but those on hostile hosts (which never
// answer or trickle), on hosts that do not resolve, and those robots.txt
// disallows (trawl does not request them, the raw client would).
func selectURLs(w *simweb.Web, srv *simweb.Server) urlSet {
	s := urlSet{webURLs: w.NumPages()}
	for id := range w.NumPages() {
		p := w.Page(id)
		switch {
		case p.Kind == simweb.KindHostile:
			s.hostile++
		case p.Kind == simweb.KindUnresolvable:
			s.unresolvable++
		case !p.RobotsAllowed:
			s.robots++
		default:
			s.urls = append(s.urls, srv.URL(id))
		}
	}
	return s
}

// bounds sets the latency floors of fetching urls with conns connections,
// one per host, from the hosts' median latencies scaled by latency.
func (s *urlSet) bounds(w *simweb.Web, urls []string, latency float64, conns int) {
	perHost := map[int]time.Duration{}
	var sum time.Duration
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			continue
		}
		h, ok := w.HostByName(pu.Hostname())
		if !ok {
			continue
		}
		d := time.Duration(float64(w.Host(h).Latency) * latency)
		perHost[h] += d
		sum += d
	}
	for _, d := range perHost {
		s.serialFloor = max(s.serialFloor, d)
	}
	s.spreadFloor = sum / time.Duration(conns)
}

// runResult is one run of both contenders.
type runResult struct {
	raw, fetch, parse measurement
	rawRes            rawResult
	counts            segmentCounts
}

func printTable(out io.Writer, o options, set urlSet, runs []runResult) {
	fmt.Fprintf(out, "\nsimweb seed %d: %d hosts, %d URLs in the web, %d injected (left out: %d hostile, %d unresolvable, %d robots-disallowed), %d in the fetch list\n",
		o.seed, o.hosts, set.webURLs, len(set.urls), set.hostile, set.unresolvable, set.robots, set.fetchList)
	fmt.Fprintf(out, "latency x%g, hazards %s; %d connections (trawl: %d fetch tasks x %d), one per host; %d cores\n",
		o.latency, o.hazards, o.conns, o.fetchers, o.conns/o.fetchers, runtime.NumCPU())
	fmt.Fprintf(out, "latency floor (median latencies): the busiest host's URLs one after another %s; all URLs over %d connections %s\n\n",
		set.serialFloor.Round(time.Millisecond), o.conns, set.spreadFloor.Round(time.Millisecond))
	fmt.Fprintf(out, "| %-29s | %7s | %9s | %8s | %9s | %9s |\n", "contender", "pages", "wall", "pages/s", "peak RSS", "x raw")
	fmt.Fprintln(out, "|-------------------------------|---------|-----------|----------|-----------|-----------|")
	row := func(name string, pages int64, wall time.Duration, rss int64, raw float64) {
		rate := float64(pages) / wall.Seconds()
		ratio := "1.00"
		if raw > 0 {
			ratio = fmt.Sprintf("%.2f", rate/raw)
		} else if raw < 0 {
			ratio = "—"
		}
		fmt.Fprintf(out, "| %-29s | %7d | %8.2fs | %8.0f | %5.0f MiB | %9s |\n", name, pages, wall.Seconds(), rate, float64(rss)/(1<<20), ratio)
	}
	for i, r := range runs {
		suffix := ""
		if len(runs) > 1 {
			suffix = fmt.Sprintf(" (run %d)", i+1)
		}
		rawRate := float64(r.rawRes.OK) / r.raw.wall.Seconds()
		row("raw net/http"+suffix, r.rawRes.OK, r.raw.wall, r.raw.maxRSS, 0)
		row("trawl fetch"+suffix, r.counts.ok, r.fetch.wall, r.fetch.maxRSS, rawRate)
		row("trawl parse"+suffix, r.counts.parsed, r.parse.wall, r.parse.maxRSS, -1)
		row("trawl fetch+parse"+suffix, r.counts.ok, r.fetch.wall+r.parse.wall, max(r.fetch.maxRSS, r.parse.maxRSS), rawRate)
	}
	fmt.Fprintln(out)
	for i, r := range runs {
		fmt.Fprintf(out, "run %d: raw %d responses (%d 200, %d errors, %d dials, %d DNS queries, %.1f MiB of bodies, %.2fs from first request to last response); "+
			"trawl crawl_fetch %d rows (%d 200, %d other responses, %d without one), parse_data %d rows\n",
			i+1, r.rawRes.Responses, r.rawRes.OK, r.rawRes.Errors, r.rawRes.Dials, r.rawRes.Lookups, float64(r.rawRes.Bytes)/(1<<20), r.rawRes.Seconds,
			r.counts.rows, r.counts.ok, r.counts.responses-r.counts.ok, r.counts.rows-r.counts.responses, r.counts.parsed)
	}
	fmt.Fprintln(out, "pages: URLs answered 200 (raw), fetch_success rows (trawl fetch), parse_data rows (trawl parse); wall: process start to exit; peak RSS: VmHWM")
}
