package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/simweb"
)

// webEnv is one synthetic web served on loopback, and the crawl directory
// the harness injects its URLs into.
type webEnv struct {
	web *simweb.Web
	srv *simweb.Server
	// dir is the experiment's work directory; crawl its crawl directory.
	dir, crawl string
	// hosts maps a host name or address (without port) to its index.
	hosts map[string]int
	// seq is the last access-log entry already accounted for.
	seq int64
	// accessLog is the JSON-lines access log file, if any.
	accessLog *os.File
}

// close stops the server and closes the access log (after the server,
// which flushes it).
func (e *webEnv) close() error {
	err := e.srv.Close()
	if e.accessLog != nil {
		if cerr := e.accessLog.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// serveWeb generates the web cfg describes and serves it with so (DNS on
// a free loopback port, the access log kept in memory up to logLimit
// entries); accessLog, if not "", receives every request as a JSON line.
func serveWeb(ctx context.Context, log *slog.Logger, dir string, cfg simweb.Config, so simweb.ServeOptions, accessLog string) (*webEnv, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	var alf *os.File
	if accessLog != "" {
		f, err := os.Create(accessLog)
		if err != nil {
			return nil, fmt.Errorf("-access-log: %w", err)
		}
		alf, so.AccessLogJSONL = f, f
	}
	start := time.Now()
	web, err := simweb.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("generating the synthetic web: %w", err)
	}
	so.DNSAddr = "127.0.0.1:0"
	so.Logger = log.With("component", "simweb")
	srv, err := web.Serve(ctx, so)
	if err != nil {
		if alf != nil {
			alf.Close()
		}
		return nil, fmt.Errorf("serving the synthetic web: %w", err)
	}
	e := &webEnv{web: web, srv: srv, dir: dir, crawl: filepath.Join(dir, "crawl"), hosts: map[string]int{}, accessLog: alf}
	for i := range web.NumHosts() {
		h := web.Host(i)
		e.hosts[strings.ToLower(h.Name)] = i
		if h.IP.IsValid() {
			e.hosts[h.IP.String()] = i
		}
	}
	log.Info("synthetic web served", "hosts", cfg.Hosts, "web_urls", web.NumPages(), "ip_per_host", so.IPPerHost,
		"http", srv.HTTPAddr(), "dns", srv.DNSAddr(), "took", time.Since(start).Round(time.Millisecond))
	return e, nil
}

// hostOf returns the index of the host a URL names (by name or address).
func (e *webEnv) hostOf(u string) (int, bool) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, false
	}
	i, ok := e.hosts[strings.ToLower(pu.Hostname())]
	return i, ok
}

// window waits until the server is idle and returns the access-log entries
// recorded since the previous call.
func (e *webEnv) window(ctx context.Context) ([]simweb.Access, error) {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.srv.WaitIdle(wctx); err != nil {
		return nil, fmt.Errorf("waiting for simweb to finish its requests: %w", err)
	}
	log := e.srv.AccessLog()
	entries := log.Since(e.seq)
	if n := log.Len(); n > e.seq {
		if want := n - e.seq; int64(len(entries)) < want {
			return nil, fmt.Errorf("access log kept %d of the %d entries of the last contender: raise its limit", len(entries), want)
		}
		e.seq = n
	}
	return entries, nil
}

// robotsMainPath is where simweb's hosts whose /robots.txt answers 301
// redirect to: a robots.txt request too.
const robotsMainPath = "/robots-main.txt"

// served counts what a window of the access log shows: page requests
// (robots.txt excluded), those answered 200, and robots.txt requests.
type served struct {
	requests, ok, robots int64
	conns                int
}

func countServed(entries []simweb.Access) served {
	var s served
	conns := map[uint64]bool{}
	for _, a := range entries {
		if a.Host == "" {
			continue
		}
		conns[a.Conn] = true
		if a.Path == "/robots.txt" || a.Path == robotsMainPath {
			s.robots++
			continue
		}
		s.requests++
		if a.Status == 200 {
			s.ok++
		}
	}
	s.conns = len(conns)
	return s
}

// segmentFor injects lines (URLs, optionally with TAB-separated fields)
// into a fresh CrawlDB under e.crawl and generates one segment of all of
// them in fetchers parts (generate's extra arguments added). It returns
// the segment and its fetch list.
func (e *webEnv) segmentFor(ctx context.Context, trawl string, global []string, lines []string, fetchers int, extra ...string) (string, []string, error) {
	if err := os.RemoveAll(e.crawl); err != nil {
		return "", nil, fmt.Errorf("wiping %s: %w", e.crawl, err)
	}
	seedsFile := filepath.Join(e.dir, "seeds.txt")
	if err := os.WriteFile(seedsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", nil, fmt.Errorf("writing the URL list: %w", err)
	}
	if _, err := measure(ctx, "inject", os.Stderr, trawl, append(slices.Clone(global), "inject", seedsFile)...); err != nil {
		return "", nil, err
	}
	genArgs := append(slices.Clone(global), "generate",
		"--topN", strconv.Itoa(2*len(lines)), "--num-fetchers", strconv.Itoa(fetchers), "--now", "+1h")
	gen, err := measure(ctx, "generate", os.Stderr, trawl, append(genArgs, extra...)...)
	if err != nil {
		return "", nil, err
	}
	seg := strings.TrimSpace(string(gen.stdout))
	if seg == "" {
		return "", nil, fmt.Errorf("generate printed no segment")
	}
	// Inject normalizes and filters URLs (a few simweb paths fail the
	// path-loop filter), so the fetch list, not the seed file, is the URL
	// set every contender fetches.
	fetchList, err := readFetchList(seg)
	if err != nil {
		return "", nil, err
	}
	return seg, fetchList, nil
}

// writeLines writes lines to a file in e.dir and returns its path.
func (e *webEnv) writeLines(name string, lines []string) (string, error) {
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return p, nil
}

// shuffled returns a copy of urls in a random order drawn from seed.
func shuffled(urls []string, seed uint64) []string {
	out := slices.Clone(urls)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
