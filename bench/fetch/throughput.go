package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/trawl/trawl/simweb"
)

// row is one measured contender of the throughput table.
type row struct {
	name string
	// trawl marks trawl's own rows (the others are peers or the limit).
	trawl bool
	// pages are page requests answered 200 by simweb (access log);
	// requests all page requests; robots robots.txt requests; conns the
	// TCP connections used.
	srv  served
	wall time.Duration
	rss  int64
	// partial: the process was stopped at a time limit (the rate is over
	// what it fetched).
	partial bool
	// note is the contender's own account, for the notes under the table.
	note string
	// noRate: parse, whose pages are the segment's, not requests.
	noRate bool
	pages  int64
	// server is what the contender's requests cost the servers.
	server serverTime
}

func (r row) rate() float64 { return float64(r.pages) / r.wall.Seconds() }

// runThroughput measures trawl against the raw limit and its peers on one
// web served per host on loopback addresses. It is one function on
// purpose: an experiment's script, step by step as bench/README.md
// describes it.
func runThroughput(ctx context.Context, log *slog.Logger, o options, feat features) error {
	hz, err := simweb.ParseHazards(o.hazards)
	if err != nil {
		return fmt.Errorf("-hazards: %w", err)
	}
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = o.seed, o.hosts, o.pages, hz
	so := simweb.ServeOptions{IPPerHost: true, Latency: o.latency, ConnectLatency: max(0, o.connectLatency),
		AccessLogLimit: 4*o.pages + 100_000}
	e, err := serveWeb(ctx, log, filepath.Join(o.dir, "throughput"), cfg, so, accessLogName(o.accessLog, "throughput"))
	if err != nil {
		return err
	}
	defer e.close()
	set := selectURLs(e.web, e.srv)
	global := []string{"--crawl", e.crawl, "--memory", o.memory, "--log-level", "warn"}
	seg, fetchList, err := e.segmentFor(ctx, o.trawl, global, set.urls, o.fetchers)
	if err != nil {
		return err
	}
	set.fetchList = len(fetchList)
	set.bounds(e, fetchList, o.latency, o.conns)
	log.Info("segment generated", "segment", seg, "urls", len(fetchList), "dropped_by_inject", len(set.urls)-len(fetchList))
	if _, err := e.window(ctx); err != nil { // nothing so far; sets the mark
		return err
	}

	// The raw client takes the fetch list as generated (it schedules by
	// host itself); colly and Scrapy take it shuffled (a host-grouped
	// list would starve their per-host slots); wget takes it grouped by
	// host (its only way to reuse a connection).
	urlsFile, err := e.writeLines("fetchlist.txt", fetchList)
	if err != nil {
		return err
	}
	shuffledFile, err := e.writeLines("fetchlist-shuffled.txt", shuffled(fetchList, o.seed))
	if err != nil {
		return err
	}
	peers := splitList(o.peers)
	var colly string
	if slices.Contains(peers, "colly") {
		if colly, err = buildColly(ctx, o, e.dir); err != nil {
			return err
		}
	}
	var wgetLists []string
	if slices.Contains(peers, "wget") || slices.Contains(peers, "wget1") {
		if wgetLists, err = e.wgetLists(fetchList, o.conns); err != nil {
			return err
		}
	}
	trawlPolicies := splitList(o.trawlPolicies)
	if o.trawlPolicies == "auto" {
		trawlPolicies = []string{"default"}
		if feat.policy {
			trawlPolicies = []string{"capacity", "default"}
		}
	}
	if !feat.policy && slices.ContainsFunc(trawlPolicies, func(p string) bool { return p != "default" }) {
		log.Warn("trawl fetch has no --policy yet: measuring its default only")
		trawlPolicies = []string{"default"}
	}
	// The default policy runs last, so that parse reads its output.
	if i := slices.Index(trawlPolicies, "default"); i >= 0 {
		trawlPolicies = append(slices.Delete(trawlPolicies, i, i+1), "default")
	}

	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the harness binary: %w", err)
	}
	perTask := o.conns / o.fetchers
	var runs [][]row
	for i := range o.runs {
		var rows []row
		add := func(r row) error {
			entries, err := e.window(ctx)
			if err != nil {
				return err
			}
			r.srv = countServed(entries)
			r.server = serverTimeOf(entries)
			if !r.noRate {
				r.pages = r.srv.ok
			}
			rows = append(rows, r)
			log.Info("measured", "contender", r.name, "run", i+1, "pages", r.pages, "wall", r.wall.Round(time.Millisecond), "rss_mib", r.rss>>20)
			return nil
		}
		log.Info("raw limit", "run", i+1)
		m, err := measure(ctx, "raw", os.Stderr, self, "raw", urlsFile, e.srv.DNSAddr(), strconv.Itoa(o.conns), o.agent+"-raw")
		if err != nil {
			return err
		}
		if err := add(row{name: "raw net/http", wall: m.wall, rss: m.maxRSS, note: string(m.stdout)}); err != nil {
			return err
		}
		for _, p := range peers {
			r, err := runPeer(ctx, log, o, p, colly, shuffledFile, wgetLists, self)
			if err != nil {
				return err
			}
			if err := add(r); err != nil {
				return err
			}
		}
		var fetchDefault measurement
		for j, p := range trawlPolicies {
			if i > 0 || j > 0 {
				if err := clearSegment(seg); err != nil {
					return err
				}
			}
			args := append(slices.Clone(global), "fetch", seg, "--agent", o.agent,
				"--server-delay", "0", "--allow-private", "--dns-server", e.srv.DNSAddr(),
				"--max-connections", strconv.Itoa(perTask))
			name := "trawl fetch"
			if p != "default" {
				args = append(args, "--policy", p)
				name += " " + p
			}
			log.Info("trawl fetch", "run", i+1, "policy", p)
			m, err := measure(ctx, name, os.Stderr, o.trawl, args...)
			if err != nil {
				return err
			}
			if err := add(row{name: name, trawl: true, wall: m.wall, rss: m.maxRSS}); err != nil {
				return err
			}
			if p == "default" {
				fetchDefault = m
			}
		}
		if fetchDefault.wall > 0 {
			log.Info("trawl parse", "run", i+1)
			m, err := measure(ctx, "parse", os.Stderr, o.trawl, append(slices.Clone(global), "parse", seg)...)
			if err != nil {
				return err
			}
			counts, err := countSegment(seg)
			if err != nil {
				return err
			}
			note := fmt.Sprintf("crawl_fetch %d rows (%d 200, %d other responses, %d without one), parse_data %d rows",
				counts.rows, counts.ok, counts.responses-counts.ok, counts.rows-counts.responses, counts.parsed)
			if err := add(row{name: "trawl parse", trawl: true, noRate: true, pages: counts.parsed, wall: m.wall, rss: m.maxRSS, note: note}); err != nil {
				return err
			}
			fetch := rows[slices.IndexFunc(rows, func(r row) bool { return r.name == "trawl fetch" })]
			rows = append(rows, row{name: "trawl fetch+parse", trawl: true, srv: fetch.srv, pages: fetch.pages,
				wall: fetch.wall + m.wall, rss: max(fetch.rss, m.maxRSS)})
			if feat.fetchParse {
				// The fetch that parses as it fetches (Nutch's
				// fetcher.parse; what crawl runs), on the same list.
				if err := clearSegment(seg); err != nil {
					return err
				}
				args := append(slices.Clone(global), "fetch", seg, "--parse", "--agent", o.agent,
					"--server-delay", "0", "--allow-private", "--dns-server", e.srv.DNSAddr(),
					"--max-connections", strconv.Itoa(perTask))
				log.Info("trawl fetch --parse", "run", i+1)
				m, err := measure(ctx, "fetch --parse", os.Stderr, o.trawl, args...)
				if err != nil {
					return err
				}
				if err := add(row{name: "trawl fetch --parse", trawl: true, wall: m.wall, rss: m.maxRSS}); err != nil {
					return err
				}
			}
		}
		runs = append(runs, rows)
	}
	printThroughput(os.Stdout, o, set, runs)
	return nil
}

func printThroughput(out io.Writer, o options, set urlSet, runs [][]row) {
	fmt.Fprintf(out, "\nsimweb seed %d: %d hosts, each on its own 127.0.x.y, URLs by address; %d URLs in the web, %d injected (left out: %d hostile, %d unresolvable, %d robots-disallowed), %d in the fetch list\n",
		o.seed, o.hosts, set.webURLs, len(set.urls), set.hostile, set.unresolvable, set.robots, set.fetchList)
	fmt.Fprintf(out, "latency x%g, hazards %s; %d connections (trawl: %d fetch tasks x %d), one per host; %d cores\n",
		o.latency, o.hazards, o.conns, o.fetchers, o.conns/o.fetchers, runtime.NumCPU())
	fmt.Fprintf(out, "latency floor (median latencies): the busiest host's URLs one after another %s; all URLs over %d connections %s\n\n",
		set.serialFloor.Round(time.Millisecond), o.conns, set.spreadFloor.Round(time.Millisecond))
	fmt.Fprintf(out, "| %-33s | %7s | %9s | %8s | %9s | %6s | %11s |\n", "contender", "pages", "wall", "pages/s", "peak RSS", "x raw", "trawl/peer")
	fmt.Fprintln(out, "|-----------------------------------|---------|-----------|----------|-----------|--------|-------------|")
	for i, rows := range runs {
		suffix := ""
		if len(runs) > 1 {
			suffix = fmt.Sprintf(" (run %d)", i+1)
		}
		var raw, trawl float64
		for _, r := range rows {
			switch r.name {
			case "raw net/http":
				raw = r.rate()
			case "trawl fetch":
				trawl = r.rate()
			}
		}
		for _, r := range rows {
			xraw, vs := "—", "—"
			if !r.noRate && raw > 0 {
				xraw = fmt.Sprintf("%.2f", r.rate()/raw)
			}
			if !r.trawl && trawl > 0 && r.name != "raw net/http" {
				vs = fmt.Sprintf("%.2f", trawl/r.rate())
			}
			name := r.name
			if r.partial {
				name += " (stopped)"
			}
			fmt.Fprintf(out, "| %-33s | %7d | %8.2fs | %8.0f | %5.0f MiB | %6s | %11s |\n",
				name+suffix, r.pages, r.wall.Seconds(), r.rate(), float64(r.rss)/(1<<20), xraw, vs)
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "pages: page requests simweb answered 200 (access log; robots.txt not counted), parse: parse_data rows; wall: process start to exit;")
	fmt.Fprintln(out, "peak RSS: VmHWM (wget x64: the sum of the 64 processes' peaks); x raw: pages/s over raw's; trawl/peer: trawl fetch's (default policy) pages/s over the peer's")
	for i, rows := range runs {
		ri := slices.IndexFunc(rows, func(r row) bool { return r.name == "raw net/http" })
		if ri < 0 || rows[ri].server.total <= 0 {
			continue
		}
		raw := rows[ri]
		lb := raw.server.makespanBound(o.conns)
		best := float64(raw.pages) / lb.Seconds()
		fmt.Fprintf(out, "run %d: bound from raw's server-side request times (%.1f s in all, longest host %.1f s): no client of these requests over %d connections, one per host, takes less than %.1f s, so none exceeds %.0f pages/s, that is at most",
			i+1, raw.server.total.Seconds(), raw.server.longestHost().Seconds(),
			o.conns, lb.Seconds(), best)
		sep := ""
		for _, r := range rows {
			if !r.trawl && !r.noRate && r.name != "raw net/http" && r.rate() > 0 {
				fmt.Fprintf(out, "%s %.2fx %s", sep, best/r.rate(), r.name)
				sep = ","
			}
		}
		fmt.Fprintln(out)
	}
	for i, rows := range runs {
		fmt.Fprintf(out, "run %d:\n", i+1)
		for _, r := range rows {
			if r.noRate && r.note == "" {
				continue
			}
			fmt.Fprintf(out, "  %s: %d page requests (%d answered 200), %d robots.txt requests, %d connections", r.name, r.srv.requests, r.srv.ok, r.srv.robots, r.srv.conns)
			if r.note != "" {
				fmt.Fprintf(out, "; own account: %s", trimJSON(r.note))
			}
			fmt.Fprintln(out)
		}
	}
}

// trimJSON compacts a one-line JSON report for the notes.
func trimJSON(s string) string {
	var v map[string]any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
