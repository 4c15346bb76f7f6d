package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// simwebCommand is trawl simweb and its subcommands. It is one literal on
// purpose, as every command definition is: help text, flags and actions,
// read top to bottom as the command's reference.
func simwebCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "simweb",
		Usage: "serve or describe the synthetic web (for tests, demos and evaluation)",
		Description: `A deterministic synthetic web on loopback: --hosts hosts h0001.sim.test, ...
with --pages pages, a link graph, changing pages on a simulated clock, robots.txt,
redirects, 404s and hostile servers (--hazards). With --topics K, a topical
web for focused crawlers: every host and page on one of K topics (astronomy,
cooking, football, ...), written in the topic's words, links mostly within a
topic, some hosts reachable only through pages of other topics. --change picks
how the pages' change rates are drawn (serve and truth). The same --seed,
--hosts, --pages, --hazards, --topics and --change always give the same web.

Examples:
   trawl simweb serve --seed 1 --hosts 100 --pages 5000
   trawl simweb serve --http 127.0.0.1:8080 --dns 127.0.0.1:5353 --seeds-out seeds.txt
   trawl simweb truth --out truth.parquet --http 127.0.0.1:8080
   trawl simweb serve --topics 6 --topic 0 --seeds-out seeds.txt
   trawl simweb topic --topics 6 --topic 0 --samples 5 > topic.txt`,
		Subcommands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "serve the synthetic web over HTTP and DNS on loopback until interrupted",
				Description: `Generates the web and serves it: every host on one HTTP listener (--http) by
Host header, or with --ip-per-host each host on its own 127.0.x.y address too,
and a DNS server (--dns) answering A records for *.sim.test. Writes the seed
URLs (every regular host's home page) to --seeds-out, or to a temporary file
removed on exit, and prints the addresses, the seed file and a trawl crawl
command for this server. Runs until SIGINT or SIGTERM.

The simulated clock starts at --start (default the web's epoch,
2026-01-01) and stands still until moved:
   curl -X POST 'http://HTTP_ADDR/_simweb/clock?advance=1d'
--access-log FILE writes every request as a JSON line (host, path, status,
real and simulated times, connection), for politeness checks.

--change MODEL makes revisit scheduling harder or easier: strong or weak
(features and kind predict a page's rate strongly or weakly), none (rates
independent of features, host and kind), drift (default rates, then each
page's rate switches once to a fresh draw within 120 days of the epoch).

With --topics K and --topic T, the seed file holds --topic-seeds home pages
for a crawl focused on topic T instead (half of them of topic T's hosts, none
behind a tunnel); trawl simweb topic prints the topic's description.

Examples:
   trawl simweb serve
   trawl simweb serve --seed 7 --hosts 500 --pages 50000 --latency 0 --hazards none
   trawl simweb serve --http 127.0.0.1:8080 --dns 127.0.0.1:5353 --seeds-out seeds.txt
   trawl simweb serve --ip-per-host --hazards default,-crawl-delay --access-log access.jsonl
   trawl simweb serve --topics 6 --topic 0 --topic-seeds 20 --seeds-out seeds.txt`,
				Flags: append(simwebGenFlags(),
					&cli.StringFlag{Name: "dns", Value: "127.0.0.1:0", Usage: "DNS server `ADDR` (loopback; port 0 picks one; empty: no DNS)"},
					&cli.Float64Flag{Name: "latency", Value: 1, Usage: "scale of the hosts' response latency (`F`; 0: none)"},
					&cli.Float64Flag{Name: "connect-latency", Usage: "what opening a connection costs, as a multiple of the host's latency (`K`; 0: none): the first response on each connection waits that much more, as TCP and TLS handshakes make it"},
					&cli.StringFlag{Name: "start", Usage: "simulated `TIME` when serving starts (RFC 3339 or a date; default the epoch)"},
					&cli.StringFlag{Name: "seeds-out", Usage: "write the seed URLs to `FILE` (kept after exit)"},
					&cli.StringFlag{Name: "access-log", Usage: "append every request to `FILE` as JSON lines"},
					&cli.IntFlag{Name: "topic", Value: -1, Usage: "with --topics: write seeds for a crawl focused on topic `T` (0..K-1) instead of every home page"},
					&cli.IntFlag{Name: "topic-seeds", Value: 20, Usage: "with --topic: how many seed URLs (`N`)"},
				),
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.Args().Present() {
						return usageErrorf("simweb serve takes no arguments, got %q", c.Args().First())
					}
					return s.simwebServe(c)
				}),
			},
			{
				Name:  "truth",
				Usage: "write the synthetic web's ground truth as Parquet",
				Description: `Writes one Parquet row per URL of the web (kind, status, redirect target, true
change rate, features, PageRank, robots status, ...) to --out, and with
--hosts-out one row per host. Give the generation flags of the server
(--seed, --hosts, --pages, --hazards, --change) and its addressing (--http
with the server's port, --ip-per-host) so that the URLs match the ones it
serves. Under --change drift the change_rate column is the rate before the
switch.

Examples:
   trawl simweb truth --out truth.parquet
   trawl simweb truth --seed 7 --hosts 500 --pages 50000 --http 127.0.0.1:8080 --out truth.parquet --hosts-out hosts.parquet
   duckdb -c "select kind, count(*) from 'truth.parquet' group by kind"`,
				Flags: append(simwebGenFlags(),
					&cli.StringFlag{Name: "out", Usage: "page truth Parquet `FILE` (required)"},
					&cli.StringFlag{Name: "hosts-out", Usage: "also write the host truth to `FILE`"},
				),
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.Args().Present() {
						return usageErrorf("simweb truth takes no arguments, got %q", c.Args().First())
					}
					return s.simwebTruth(c)
				}),
			},
			{
				Name:  "topic",
				Usage: "list the topics of a topical synthetic web, or print sample texts of one",
				Description: `Generates the web that --seed, --hosts, --pages, --hazards and --topics select
(give the flags of the server). Without --topic, lists its topics: name,
hosts, pages with the topic, pages behind tunnels (on hosts that no page of
their topic elsewhere links to). With --topic T, prints --samples sample texts
of topic T, one per line: the topic's description for a focused crawler.

Examples:
   trawl simweb topic --topics 6
   trawl simweb topic --topics 6 --topic 0 --samples 5 > topic.txt`,
				Flags: append(simwebWebFlags(),
					&cli.IntFlag{Name: "topic", Value: -1, Usage: "print sample texts of topic `T` (0..K-1)"},
					&cli.IntFlag{Name: "samples", Value: 5, Usage: "number of sample texts (`N`)"},
				),
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.Args().Present() {
						return usageErrorf("simweb topic takes no arguments, got %q", c.Args().First())
					}
					return s.simwebTopic(c)
				}),
			},
		},
	}
}

// simwebWebFlags are the flags that select the web, shared by serve,
// truth and topic.
func simwebWebFlags() []cli.Flag {
	d := simweb.DefaultConfig()
	return []cli.Flag{
		&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "`SEED` selecting the web"},
		&cli.IntFlag{Name: "hosts", Value: d.Hosts, Usage: fmt.Sprintf("number of regular hosts (`N`, at most %d)", simweb.MaxHosts)},
		&cli.IntFlag{Name: "pages", Value: d.Pages, Usage: "number of content pages over all hosts (`N`)"},
		&cli.StringFlag{Name: "hazards", Value: "default", Usage: "hostile features: `LIST` of slow, failing, traps, bombs, crawl-delay, hostile-links, or none, default, all; -NAME removes one"},
		&cli.IntFlag{Name: "topics", Usage: fmt.Sprintf("topical web of `K` topics (2..%d), for focused crawlers; 0: no topics", simweb.MaxTopics)},
	}
}

// simwebGenFlags are the flags that select the web and its addressing,
// shared by serve and truth.
func simwebGenFlags() []cli.Flag {
	return append(simwebWebFlags(),
		&cli.StringFlag{Name: "http", Value: "127.0.0.1:0", Usage: "HTTP listener `ADDR` (loopback; port 0 picks one)"},
		&cli.BoolFlag{Name: "ip-per-host", Usage: "also serve each host on its own 127.0.x.y address; URLs name hosts by address"},
		&cli.StringFlag{Name: "change", Value: "default", Usage: "change `MODEL` of the pages' rates: default, strong or weak (how well features predict a rate), none (rates independent of features, host and kind), drift (each page's rate switches once in the first 120 days)"},
	)
}

// simwebConfig builds the web's Config from the generation flags.
func simwebConfig(c *cli.Context) (simweb.Config, error) {
	cfg := simweb.DefaultConfig()
	cfg.Seed = c.Uint64("seed")
	cfg.Hosts = c.Int("hosts")
	cfg.Pages = c.Int("pages")
	h, err := simweb.ParseHazards(c.String("hazards"))
	if err != nil {
		return cfg, usageErrorf("--hazards: %w", err)
	}
	cfg.Hazards = h
	cfg.Topics = c.Int("topics") // 0 where the command has no --topics
	// --change is "" (the default model) where the command has no --change.
	m, err := simweb.ParseChangeModel(c.String("change"))
	if err != nil {
		return cfg, usageErrorf("--change: %w", err)
	}
	cfg.Change = m
	if cfg.Topics < 0 || cfg.Topics == 1 || cfg.Topics > simweb.MaxTopics {
		return cfg, usageErrorf("--topics must be 0 or between 2 and %d, not %d", simweb.MaxTopics, cfg.Topics)
	}
	if cfg.Hosts < 1 || cfg.Hosts > simweb.MaxHosts {
		return cfg, usageErrorf("--hosts must be between 1 and %d, not %d", simweb.MaxHosts, cfg.Hosts)
	}
	if cfg.Pages < cfg.Hosts || cfg.Pages > simweb.MaxPages {
		return cfg, usageErrorf("--pages must be between --hosts (%d) and %d, not %d", cfg.Hosts, simweb.MaxPages, cfg.Pages)
	}
	return cfg, nil
}

// newWeb generates the web the flags describe.
func (s *session) newWeb(c *cli.Context) (*simweb.Web, error) {
	cfg, err := simwebConfig(c)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w, err := simweb.New(cfg)
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	s.log.Info("synthetic web generated", "seed", cfg.Seed, "hosts", cfg.Hosts, "urls", w.NumPages(),
		"hazards", cfg.Hazards.String(), "topics", cfg.Topics, "change", string(cfg.Change), "duration", time.Since(start).Round(time.Millisecond))
	return w, nil
}

// topicFlag checks --topic against --topics and returns it (-1: not given).
func topicFlag(c *cli.Context) (int, error) {
	t, k := c.Int("topic"), c.Int("topics")
	switch {
	case t == -1:
		return -1, nil
	case k == 0:
		return 0, usageErrorf("--topic needs a topical web (--topics K)")
	case t < 0 || t >= k:
		return 0, usageErrorf("--topic must be between 0 and %d (--topics %d), not %d", k-1, k, t)
	}
	return t, nil
}

// loopbackAddr checks that addr is host:port on a loopback address.
func loopbackAddr(flag, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("--%s %q: want 127.0.0.1:PORT: %w", flag, addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return usageErrorf("--%s %q: the synthetic web serves on loopback only (127.0.0.0/8 or ::1)", flag, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usageErrorf("--%s %q: bad port", flag, addr)
	}
	return nil
}

// writeSeeds writes one URL per line to path, atomically.
func writeSeeds(path string, urls []string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("seed file: %w", err)
	}
	bw := bufio.NewWriter(f)
	for _, u := range urls {
		bw.WriteString(u)
		bw.WriteByte('\n')
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("seed file %s: %w", path, err)
	}
	return nil
}

func (s *session) simwebServe(c *cli.Context) error {
	httpAddr, dnsAddr := c.String("http"), c.String("dns")
	if err := loopbackAddr("http", httpAddr); err != nil {
		return err
	}
	if dnsAddr != "" {
		if err := loopbackAddr("dns", dnsAddr); err != nil {
			return err
		}
	}
	if c.Float64("connect-latency") < 0 {
		return usageErrorf("--connect-latency must be >= 0, not %g", c.Float64("connect-latency"))
	}
	if c.Float64("latency") < 0 {
		return usageErrorf("--latency must be >= 0, not %g", c.Float64("latency"))
	}
	topic, err := topicFlag(c)
	if err != nil {
		return err
	}
	if topic >= 0 && c.Int("topic-seeds") < 1 {
		return usageErrorf("--topic-seeds must be at least 1, not %d", c.Int("topic-seeds"))
	}
	var start time.Time
	if v := c.String("start"); v != "" {
		t, err := parseNow(v, time.Now())
		if err != nil {
			return usageErrorf("--start: %w", err)
		}
		start = t
	}
	w, err := s.newWeb(c)
	if err != nil {
		return err
	}
	// The server runs no engine job; its access log grows to
	// AccessLogLimit entries over the crawls it serves.
	s.mem.lift(s.log)
	opts := simweb.ServeOptions{
		HTTPAddr: httpAddr, DNSAddr: dnsAddr, IPPerHost: c.Bool("ip-per-host"),
		Latency: c.Float64("latency"), ConnectLatency: c.Float64("connect-latency"), Start: start, Logger: s.log,
	}
	if p := c.String("access-log"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("--access-log: %w", err))
		}
		defer f.Close()
		opts.AccessLogJSONL = f
	}
	srv, err := w.Serve(c.Context, opts)
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer srv.Close()

	seeds := c.String("seeds-out")
	if seeds == "" {
		_, port, _ := net.SplitHostPort(srv.HTTPAddr())
		seeds = filepath.Join(os.TempDir(), fmt.Sprintf("trawl-simweb-seeds-%d-%s.txt", w.Config().Seed, port))
		defer os.Remove(seeds)
	}
	urls := srv.Seeds()
	if topic >= 0 {
		urls = w.TopicSeeds(topic, c.Int("topic-seeds"), srv.Addressing())
	}
	if err := writeSeeds(seeds, urls); err != nil {
		return withCode(exitFailure, err)
	}
	s.printSimwebServe(srv, w, seeds, len(urls), topic, c.Bool("ip-per-host"))
	<-c.Context.Done()
	s.log.Info("stopping the synthetic web", "requests", srv.AccessLog().Len())
	if err := srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return withCode(exitFailure, fmt.Errorf("simweb: %w", err))
	}
	return nil
}

// printSimwebServe prints where a served web is and how to crawl it; the
// seed file holds nseeds URLs, for a crawl focused on topic (-1: none).
func (s *session) printSimwebServe(srv *simweb.Server, w *simweb.Web, seeds string, nseeds, topic int, ipPerHost bool) {
	cfg := w.Config()
	out := s.io.stdout
	fmt.Fprintf(out, "simweb: seed %d, %d hosts, %d URLs, hazards %s", cfg.Seed, cfg.Hosts, w.NumPages(), cfg.Hazards)
	if cfg.Change != "" && cfg.Change != simweb.ChangeDefault {
		fmt.Fprintf(out, ", change model %s", cfg.Change)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "http:   %s\n", srv.HTTPAddr())
	if srv.DNSAddr() != "" {
		fmt.Fprintf(out, "dns:    %s (udp and tcp)\n", srv.DNSAddr())
	}
	fmt.Fprintf(out, "seeds:  %s (%d URLs)\n", seeds, nseeds)
	if w.NumTopics() > 0 {
		fmt.Fprintf(out, "topics: %d (list them, or describe one with --topic T: trawl simweb topic --seed %d --hosts %d --pages %d --hazards %s --topics %d)\n",
			w.NumTopics(), cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards, cfg.Topics)
	}
	if topic >= 0 {
		fmt.Fprintf(out, "focus:  topic %d, %s: %d pages, %d of them behind tunnels\n", topic, w.TopicName(topic),
			w.TopicPages(topic), behindTunnels(w, topic))
	}
	fmt.Fprintf(out, "clock:  %s (POST http://%s/_simweb/clock?advance=1d)\n", srv.Now().Format(time.RFC3339), srv.HTTPAddr())
	crawlCmd := fmt.Sprintf("trawl crawl --seeds %s --allow-private --agent trawl-demo --server-delay 100ms", seeds)
	if srv.DNSAddr() != "" && !ipPerHost {
		crawlCmd += " --dns-server " + srv.DNSAddr()
	}
	fmt.Fprintf(out, "crawl:  %s --rounds 3 --days-per-round 1 --now %s --clock-url http://%s/_simweb/clock\n",
		crawlCmd, srv.Now().Format(time.RFC3339), srv.HTTPAddr())
	fmt.Fprintln(out, "serving until interrupted (Ctrl-C)")
	if f, ok := out.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
}

func (s *session) simwebTruth(c *cli.Context) error {
	out := c.String("out")
	if out == "" {
		return usageErrorf("simweb truth: --out FILE is required")
	}
	httpAddr := c.String("http")
	if err := loopbackAddr("http", httpAddr); err != nil {
		return err
	}
	_, portStr, _ := net.SplitHostPort(httpAddr)
	port, _ := strconv.Atoi(portStr)
	if port == 0 && c.Bool("ip-per-host") {
		return usageErrorf("simweb truth: --ip-per-host needs the server's port in --http")
	}
	w, err := s.newWeb(c)
	if err != nil {
		return err
	}
	a := simweb.Addressing{Port: port, IPPerHost: c.Bool("ip-per-host")}
	if err := writeFileWith(out, func(f *os.File) error { return w.WriteTruthAddressed(f, a) }); err != nil {
		return withCode(exitFailure, fmt.Errorf("simweb truth: %w", err))
	}
	if p := c.String("hosts-out"); p != "" {
		if err := writeFileWith(p, func(f *os.File) error { return w.WriteHostTruth(f, a) }); err != nil {
			return withCode(exitFailure, fmt.Errorf("simweb truth: %w", err))
		}
	}
	s.log.Info("truth written", "out", out, "urls", w.NumPages())
	return nil
}

// simwebTopic lists the web's topics, or prints sample texts of one.
func (s *session) simwebTopic(c *cli.Context) error {
	if c.Int("topics") == 0 {
		return usageErrorf("simweb topic: give the web's --topics K")
	}
	topic, err := topicFlag(c)
	if err != nil {
		return err
	}
	if topic >= 0 && c.Int("samples") < 1 {
		return usageErrorf("--samples must be at least 1, not %d", c.Int("samples"))
	}
	w, err := s.newWeb(c)
	if err != nil {
		return err
	}
	out := s.io.stdout
	if topic >= 0 {
		for _, text := range w.TopicSample(topic, c.Int("samples")) {
			fmt.Fprintln(out, text)
		}
		return nil
	}
	hosts := make([]int, w.NumTopics())
	for i := range w.NumHosts() {
		if t := w.Host(i).Topic; t >= 0 {
			hosts[t]++
		}
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "topic\tname\thosts\tpages\tbehind_tunnel")
	for t := range w.NumTopics() {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\n", t, w.TopicName(t), hosts[t], w.TopicPages(t), behindTunnels(w, t))
	}
	return tw.Flush()
}

// behindTunnels counts the pages of topic t that lie behind tunnels.
func behindTunnels(w *simweb.Web, t int) int {
	n := 0
	for id := range w.NumPages() {
		if w.PageTopic(id) == t && w.BehindTunnel(id) {
			n++
		}
	}
	return n
}

// writeFileWith creates path through a temporary file renamed into place,
// so that a failure leaves no partial file.
func writeFileWith(path string, write func(*os.File) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+"-*.tmp")
	if err != nil {
		return err
	}
	err = f.Chmod(0o644)
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// startSimweb generates and serves the synthetic web of `trawl crawl
// --simweb` in process and sets the crawl's options for it. cleanup stops
// the server and removes the seed file.
func (s *session) startSimweb(c *cli.Context, o *jobs.CrawlOptions) (srv *simweb.Server, cleanup func(), err error) {
	cfg, err := simwebConfig(c)
	if err != nil {
		return nil, nil, err
	}
	if c.Float64("latency") < 0 {
		return nil, nil, usageErrorf("--latency must be >= 0")
	}
	w, err := simweb.New(cfg)
	if err != nil {
		return nil, nil, withCode(exitFailure, err)
	}
	var cl cleanups
	srv, err = s.serveCrawlSimweb(c, w, &cl)
	if err == nil && len(o.Seeds) == 0 {
		var seeds string
		seeds, err = tempSeedFile(srv.Seeds(), &cl)
		o.Seeds = []string{seeds}
	}
	if err != nil {
		cl.run()
		return nil, nil, withCode(exitFailure, err)
	}
	s.crawlSimwebOptions(o, srv, cfg)
	s.log.Info("synthetic web served in process", "hosts", cfg.Hosts, "urls", w.NumPages(), "http", srv.HTTPAddr(),
		"dns", srv.DNSAddr(), "hazards", cfg.Hazards.String(), "agent", o.Fetch.Agent, "server_delay", o.Fetch.ServerDelay,
		"time_limit", o.Fetch.TimeLimit)
	fmt.Fprintf(s.io.stdout, "simweb: %d hosts, %d URLs on http://%s (DNS %s); %d seeds; %g simulated days per round\n",
		cfg.Hosts, w.NumPages(), srv.HTTPAddr(), srv.DNSAddr(), len(srv.Seeds()), o.RoundInterval.Hours()/24)
	return srv, cl.run, nil
}

// cleanups are functions run in reverse order, as deferred calls are.
type cleanups []func()

func (cl *cleanups) add(f func()) { *cl = append(*cl, f) }

func (cl *cleanups) run() {
	for i := len(*cl) - 1; i >= 0; i-- {
		(*cl)[i]()
	}
	*cl = nil
}

// serveCrawlSimweb serves w on loopback with its DNS server, writing the
// access log of --access-log, and records the web it serves in the crawl
// directory. What it opens is closed by cl.
func (s *session) serveCrawlSimweb(c *cli.Context, w *simweb.Web, cl *cleanups) (*simweb.Server, error) {
	// The crawl reads only the number of requests served (AccessLog.Len),
	// so the log keeps one entry in memory, not a million (about 400 MiB
	// in the crawl's own heap by the millionth request); --access-log
	// still gets every entry.
	opts := simweb.ServeOptions{HTTPAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", Latency: c.Float64("latency"),
		Logger: s.log.With("component", "simweb"), AccessLogLimit: 1}
	if p := c.String("access-log"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return nil, fmt.Errorf("--access-log: %w", err)
		}
		cl.add(func() { f.Close() })
		opts.AccessLogJSONL = f
	}
	// URLs name the server's port: serve on the port an earlier --simweb
	// crawl of this directory used, if free, so its URLs stay valid.
	cfg := w.Config()
	rec := simwebRecord{Seed: cfg.Seed, Hosts: cfg.Hosts, Pages: cfg.Pages, Hazards: cfg.Hazards.String()}
	prev, err := s.readSimwebRecord()
	if err != nil {
		return nil, err
	}
	if prev.HTTP != "" {
		if prev.Seed != rec.Seed || prev.Hosts != rec.Hosts || prev.Pages != rec.Pages || prev.Hazards != rec.Hazards {
			s.log.Warn("this crawl directory crawled a different synthetic web before", "file", s.crawlPath(simwebRecordFile),
				"was", fmt.Sprintf("seed %d, %d hosts, %d pages, hazards %s", prev.Seed, prev.Hosts, prev.Pages, prev.Hazards))
		}
		opts.HTTPAddr = prev.HTTP
	}
	// The server outlives the command's context: it must keep serving
	// while an interrupted job cleans up.
	ctx := context.WithoutCancel(c.Context)
	srv, err := w.Serve(ctx, opts)
	if err != nil && prev.HTTP != "" {
		s.log.Warn("the synthetic web's earlier port is taken: URLs of the earlier crawl will fail", "addr", prev.HTTP, "err", err)
		opts.HTTPAddr = "127.0.0.1:0"
		srv, err = w.Serve(ctx, opts)
	}
	if err != nil {
		return nil, err
	}
	cl.add(func() { srv.Close() })
	rec.HTTP = srv.HTTPAddr()
	return srv, s.writeSimwebRecord(rec)
}

// tempSeedFile writes urls to a temporary seed file, removed by cl, and
// returns its name.
func tempSeedFile(urls []string, cl *cleanups) (string, error) {
	f, err := os.CreateTemp("", "trawl-simweb-seeds-*.txt")
	if err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	cl.add(func() { os.Remove(f.Name()) })
	_, err = f.WriteString(strings.Join(urls, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	return f.Name(), nil
}

// crawlSimwebOptions points the crawl at srv: private addresses allowed,
// its DNS server, the demo's politeness where the settings leave it at its
// default, and the web's clock moved with the rounds (from its epoch
// unless --now is given).
func (s *session) crawlSimwebOptions(o *jobs.CrawlOptions, srv *simweb.Server, cfg simweb.Config) {
	o.Fetch.AllowPrivate = true
	o.Fetch.DNSServers = []string{srv.DNSAddr()}
	o.Generate.DNSServers = o.Fetch.DNSServers // for --partition-mode ip
	if !s.settingSet(config.FetcherServerDelay) {
		o.Fetch.ServerDelay = demoServerDelay
	}
	if !s.settingSet(config.FetcherTimeLimit) {
		o.Fetch.TimeLimit = demoTimeLimit
	}
	if o.Now.IsZero() {
		o.Start = cfg.Epoch
	}
	o.SetClock = func(_ context.Context, t time.Time) error { return srv.SetClock(t, 0) }
}

// simwebRecordFile, in the crawl directory, records the synthetic web an
// earlier `crawl --simweb` served, so that the next one serves it on the
// same port.
const simwebRecordFile = "simweb.json"

// simwebRecord is the content of simwebRecordFile.
type simwebRecord struct {
	HTTP    string `json:"http"`
	Seed    uint64 `json:"seed"`
	Hosts   int    `json:"hosts"`
	Pages   int    `json:"pages"`
	Hazards string `json:"hazards"`
}

func (s *session) readSimwebRecord() (simwebRecord, error) {
	var rec simwebRecord
	uri := s.crawlPath(simwebRecordFile)
	fsys, p, err := s.resolve(uri)
	if err != nil {
		return rec, err
	}
	data, err := storage.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("read %s: %w", uri, err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		s.log.Warn("ignoring an unreadable record of the synthetic web", "file", uri, "err", err)
		return simwebRecord{}, nil
	}
	return rec, nil
}

func (s *session) writeSimwebRecord(rec simwebRecord) error {
	uri := s.crawlPath(simwebRecordFile)
	fsys, p, err := s.resolve(uri)
	if err != nil {
		return err
	}
	if err := fsys.MkdirAll(path.Dir(p)); err != nil {
		return fmt.Errorf("create %s: %w", s.crawl(), err)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := storage.WriteFileAtomic(fsys, p, append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", uri, err)
	}
	return nil
}
