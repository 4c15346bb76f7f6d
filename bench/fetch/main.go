// Command fetch is the fetch benchmark harness of trawl. It serves a
// synthetic web (package simweb) from its own process on loopback, injects
// URLs of it into a fresh crawl, generates one segment with all of them,
// and measures contenders, each in its own process, one after another.
// Requests are counted from simweb's access log, the same way for every
// contender. Two experiments (-experiment):
//
// throughput: trawl against its peers and the raw limit. Every host is
// served on its own loopback address (ServeOptions.IPPerHost) and URLs
// name hosts by address, so every contender fetches exactly the same URLs
// with no DNS at all: the segment's fetch list. Contenders, all with 64
// connections in all and one per host:
//
//   - raw: a bare net/http client (this binary's "raw" mode), the busiest
//     free host first, keep-alive on, bodies read and discarded;
//   - colly: bench/peers/colly (its own Go module), colly.Async with a
//     Parallelism-1 LimitRule per host;
//   - scrapy: bench/peers/scrapy/listspider.py under Debian's Scrapy;
//   - wget: `wget -i` (no recursion), as 64 processes over lists split by
//     host, and as one process (one connection) for a limited time;
//   - trawl fetch (per policy) and trawl parse.
//
// policies: the crawl-scheduling paper's experiment. A web of 1,500 hosts
// with latency x10 (median 150 ms) served by name (simweb's DNS); each
// URL injected with its quality as score (PageRank, then Zipf(1) random
// values), one fetch list of each host's 15 best URLs; fetched with
// --server-delay 1s, --politeness connection (-politeness: the delay
// between connections, as in the paper) and 64 connections by each
// --policy of trawl fetch: pages and quality share over time (tables, CSV
// and PNG plots into -out), time to 80% of the quality, area under the
// quality curve; then the best policy by throughput with keep-alive and
// with one request per connection (at -keep-alive-delay), on a web whose
// connections cost 2 x the host's latency more (-connect-latency: TCP and
// TLS handshakes; 0 for the other runs unless given). The latency and the per-host bound
// make 64 connections, not the hosts' politeness delays, bound the crawl,
// as in the paper; -policy-latency 1 -policy-hosts 500 -policy-max-per-host
// 60 is the host-bound case.
//
//	go run ./bench/fetch -trawl bin/trawl                          # both, at full scale
//	go run ./bench/fetch -trawl bin/trawl -experiment throughput -hosts 100 -pages 5000
//	go run ./bench/fetch -trawl bin/trawl -experiment policies -policy-pages 5000 -out /tmp/plots
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/trawl/trawl/simweb"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "raw":
			if err := rawMain(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "raw:", err)
				os.Exit(1)
			}
			return
		case "wgetpool":
			if err := wgetPoolMain(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "wgetpool:", err)
				os.Exit(1)
			}
			return
		}
	}
	var o options
	flag.StringVar(&o.experiments, "experiment", "throughput,policies", "experiments to run, comma-separated: throughput, policies")
	flag.StringVar(&o.trawl, "trawl", "bin/trawl", "the trawl binary to measure")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "trawl-bench-fetch"), "work directory (wiped)")
	flag.StringVar(&o.out, "out", "bench-fetch-out", "directory for the plots (PNG) and the policy curves (CSV)")
	flag.Uint64Var(&o.seed, "seed", 1, "simweb seed")
	flag.IntVar(&o.hosts, "hosts", 500, "throughput: simweb regular hosts")
	flag.IntVar(&o.pages, "pages", 50_000, "throughput: simweb content pages")
	flag.Float64Var(&o.latency, "latency", 1, "scale of the simweb hosts' latency (1: the generated mix, median 15 ms; 0: none)")
	flag.StringVar(&o.hazards, "hazards", "traps", "simweb hazards (see trawl simweb serve --help); the default keeps only those that cost one quick response each")
	flag.IntVar(&o.conns, "connections", 64, "concurrent connections in all, for every contender (trawl: split evenly over its fetch tasks)")
	flag.IntVar(&o.fetchers, "fetchers", runtime.NumCPU(), "throughput: fetch-list parts (generate --num-fetchers), run at once")
	flag.IntVar(&o.runs, "runs", 1, "throughput: measure each contender this many times, alternating; the table shows every run")
	flag.StringVar(&o.agent, "agent", "trawl-bench", "user agent prefix: contenders send AGENT-raw, AGENT-colly, ... (trawl sends AGENT)")
	flag.StringVar(&o.memory, "memory", "256MiB", "engine memory budget passed to trawl")
	flag.StringVar(&o.peers, "peers", "colly,scrapy,wget,wget1", "throughput: peers to measure (colly, scrapy, wget = 64 wget processes, wget1 = one wget process); empty for none")
	flag.StringVar(&o.collyDir, "colly-dir", "bench/peers/colly", "the colly harness module (built with go build)")
	flag.StringVar(&o.scrapySpider, "scrapy-spider", "bench/peers/scrapy/listspider.py", "the Scrapy spider file")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "the Python with Scrapy installed (Debian's python3-scrapy)")
	flag.StringVar(&o.wget, "wget", "wget", "the wget binary")
	flag.DurationVar(&o.wget1Limit, "wget1-limit", 2*time.Minute, "throughput: the single wget process is stopped after this (its rate is over what it fetched); 0 means no limit")
	flag.StringVar(&o.trawlPolicies, "trawl-policies", "auto", "throughput: trawl fetch --policy values to measure, comma-separated; \"default\" means no --policy flag; auto: default, and capacity if trawl fetch has --policy")
	flag.StringVar(&o.policies, "policies", "breadth-first,performance,quality,capacity", "policies: the --policy values compared")
	flag.IntVar(&o.policyHosts, "policy-hosts", 1500, "policies: simweb regular hosts")
	flag.IntVar(&o.policyPages, "policy-pages", 20_000, "policies: simweb content pages")
	flag.Float64Var(&o.policyLatency, "policy-latency", 10, "policies: scale of the simweb hosts' latency (10: median 150 ms, so that 64 connections, not the hosts' delays, bound the crawl, as in the paper)")
	flag.DurationVar(&o.policyDelay, "policy-delay", time.Second, "policies: trawl fetch --server-delay")
	flag.IntVar(&o.policyMaxPerHost, "policy-max-per-host", 15, "policies: generate --max-per-host (the best URLs by quality of each host; bounds a run, since a host gets one request per -policy-delay); -1 for all")
	flag.DurationVar(&o.keepAliveDelay, "keep-alive-delay", 0, "policies: trawl fetch --server-delay of the keep-alive runs (with -politeness request trawl waits the delay between any two requests to a host, on a new connection once it is over 0; with connection, between connections)")
	flag.StringVar(&o.qualities, "qualities", "pagerank,zipf", "policies: page quality models, comma-separated (pagerank, zipf)")
	flag.StringVar(&o.politeness, "politeness", "connection", "policies: trawl fetch --politeness (request: the server delay between any two requests, Nutch's; connection: between connections, as the paper); empty for no flag")
	flag.Float64Var(&o.connectLatency, "connect-latency", -1, "simweb's connection cost (trawl simweb serve --connect-latency K: a connection's first response waits K x the host's latency more, for TCP/TLS handshakes); negative: 2 for the keep-alive runs (served on a web of their own), 0 elsewhere")
	flag.BoolVar(&o.keepAliveRun, "keep-alive-run", true, "policies: also fetch with the best policy and keep-alive off (if trawl fetch has a keep-alive setting)")
	flag.StringVar(&o.accessLog, "access-log", "", "write simweb's access log (every request of every contender) as JSON lines to `FILE`-throughput.jsonl and FILE-policies.jsonl, for diagnosis")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
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
	experiments, trawl, dir, out, hazards, agent, memory string
	peers, collyDir, scrapySpider, python, wget          string
	accessLog, politeness                                string
	trawlPolicies, policies, qualities                   string
	seed                                                 uint64
	hosts, pages, conns, fetchers, runs                  int
	policyHosts, policyPages, policyMaxPerHost           int
	latency, policyLatency, connectLatency               float64
	wget1Limit, policyDelay, keepAliveDelay              time.Duration
	keepAliveRun, keep                                   bool
}

// run runs the experiments o asks for.
func run(ctx context.Context, log *slog.Logger, o options) error {
	if o.conns < o.fetchers || o.fetchers < 1 || o.runs < 1 {
		return fmt.Errorf("need -fetchers >= 1, -connections >= -fetchers and -runs >= 1")
	}
	if err := os.RemoveAll(o.dir); err != nil {
		return fmt.Errorf("wiping %s: %w", o.dir, err)
	}
	trawl, err := filepath.Abs(o.trawl)
	if err != nil {
		return fmt.Errorf("-trawl: %w", err)
	}
	o.trawl = trawl
	feat, err := trawlFeatures(ctx, trawl)
	if err != nil {
		return err
	}
	for _, x := range splitList(o.experiments) {
		switch x {
		case "throughput":
			err = runThroughput(ctx, log, o, feat)
		case "policies":
			err = runPolicies(ctx, log, o, feat)
		default:
			err = fmt.Errorf("-experiment: unknown experiment %q (want throughput, policies)", x)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", x, err)
		}
	}
	return nil
}

// accessLogName is the access log file of an experiment ("" if none).
func accessLogName(prefix, experiment string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "-" + experiment + ".jsonl"
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// features are the trawl fetch settings this harness uses when the binary
// has them (read from trawl fetch --help).
type features struct {
	// policy: --policy exists; keepAlive is the flag that turns keep-alive
	// off ("" if none).
	policy    bool
	keepAlive string
	// politeness: --politeness exists.
	politeness bool
	// fetchParse: --parse exists (the fetch parses as it fetches).
	fetchParse bool
}

func trawlFeatures(ctx context.Context, trawl string) (features, error) {
	m, err := measure(ctx, "trawl fetch --help", os.Stderr, trawl, "fetch", "--help")
	if err != nil {
		return features{}, err
	}
	help := string(m.stdout)
	var f features
	f.policy = strings.Contains(help, "--policy")
	f.politeness = strings.Contains(help, "--politeness")
	f.fetchParse = strings.Contains(help, "--parse ")
	switch {
	case strings.Contains(help, "--no-keep-alive"):
		f.keepAlive = "--no-keep-alive"
	case strings.Contains(help, "--keep-alive"):
		f.keepAlive = "--keep-alive=false"
	case strings.Contains(help, "--disable-keep-alive"):
		f.keepAlive = "--disable-keep-alive"
	}
	return f, nil
}

// urlSet is the URL set both contenders fetch.
type urlSet struct {
	// urls are the URLs injected; fetchList the number generate put in
	// the segment (after inject's normalization and filters).
	urls      []string
	ids       []int
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
			s.ids = append(s.ids, id)
		}
	}
	return s
}

// bounds sets the latency floors of fetching urls with conns connections,
// one per host, from the hosts' median latencies scaled by latency.
func (s *urlSet) bounds(e *webEnv, urls []string, latency float64, conns int) {
	perHost := map[int]time.Duration{}
	var sum time.Duration
	for _, u := range urls {
		h, ok := e.hostOf(u)
		if !ok {
			continue
		}
		d := time.Duration(float64(e.web.Host(h).Latency) * latency)
		perHost[h] += d
		sum += d
	}
	for _, d := range perHost {
		s.serialFloor = max(s.serialFloor, d)
	}
	s.spreadFloor = sum / time.Duration(conns)
}
