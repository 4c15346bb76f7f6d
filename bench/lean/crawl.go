package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures Crawl.
type Options struct {
	// Seeds are the URLs of the first round.
	Seeds []string
	// DNSAddr is the simweb's DNS server (host:port, loopback).
	DNSAddr string
	// ClockURL, if set, is the simweb's clock endpoint
	// (http://ADDR/_simweb/clock): before round r (from 0) the crawl POSTs
	// Now + r days to it, as trawl crawl --clock-url --days-per-round 1
	// does, so that both crawlers see the same page versions.
	ClockURL string
	// Now is the simulated time of the first round (used with ClockURL).
	Now time.Time
	// Rounds is the number of rounds (at least 1).
	Rounds int
	// Workers is the number of concurrent fetches.
	Workers int
	// MaxBody caps the bytes read of a body; the rest is dropped.
	MaxBody int64
	// Out is the directory the Parquet files go to: per round r,
	// content-r.parquet, parse-r.parquet and db-r.parquet.
	Out string
	// Logger receives progress (default: discard).
	Logger *slog.Logger
}

// Stage names the parts of a round whose CPU Crawl measures.
type Stage int

// The stages of a round, in order.
const (
	StageFetch    Stage = iota // GET every frontier URL, bodies into memory
	StageContent               // write the content Parquet file
	StageParse                 // tokenize the HTML bodies
	StageParseOut              // write the parse Parquet file
	StageMerge                 // sort the outlinks, merge them into the db, write it
	numStages
)

var stageNames = [numStages]string{"fetch", "content", "parse", "parse-out", "merge"}

// String is the stage's name.
func (s Stage) String() string { return stageNames[s] }

// Result reports a Crawl.
type Result struct {
	// Fetched counts responses with status 200 (what trawl counts as
	// fetched, and what CPU per page divides by); Responses all responses
	// (redirects, 404s...); Errors fetches that got no response.
	Fetched, Responses, Errors int64
	// Redirects counts 3xx responses with a Location.
	Redirects int64
	// Parsed counts the HTML pages parsed; Outlinks the links they gave
	// (before de-duplication).
	Parsed, Outlinks int64
	// BodyBytes counts body bytes read.
	BodyBytes int64
	// ContentBytes is the size of the content Parquet files.
	ContentBytes int64
	// DBSize is the number of distinct URLs known at the end; Unfetched
	// how many of them are left for a next round.
	DBSize, Unfetched int
	// RoundsRun is the number of rounds that fetched something.
	RoundsRun int
	// StageCPU is the process's CPU time (user + sys) spent in each stage,
	// over all rounds.
	StageCPU [numStages]time.Duration
	// FirstError is one fetch error, for diagnosis.
	FirstError string
}

// fetched is one fetch's outcome, kept in memory until the round's files
// are written.
type fetched struct {
	url         string
	status      int32
	contentType string
	location    string // absolute redirect target, or ""
	body        []byte
	time        time.Time
	err         error
}

// Crawl runs the lean crawl: Rounds rounds of fetch, write content, parse,
// write parse output, merge. It stops early when the frontier is empty.
func Crawl(ctx context.Context, o Options) (*Result, error) {
	if o.Rounds < 1 {
		return nil, fmt.Errorf("lean: rounds = %d, want at least 1", o.Rounds)
	}
	if o.Workers < 1 {
		return nil, fmt.Errorf("lean: workers = %d, want at least 1", o.Workers)
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := checkLoopback(o.DNSAddr); err != nil {
		return nil, fmt.Errorf("lean: DNS server: %w", err)
	}
	client := newClient(o.DNSAddr, o.Workers)
	defer client.CloseIdleConnections()

	var db db
	seeds := slices.Clone(o.Seeds)
	slices.Sort(seeds)
	db.merge(slices.Compact(seeds))

	res := &Result{}
	for round := range o.Rounds {
		frontier := db.unfetched()
		if len(frontier) == 0 {
			break
		}
		res.RoundsRun++
		if o.ClockURL != "" {
			if err := setClock(ctx, client, o.ClockURL, o.Now.AddDate(0, 0, round)); err != nil {
				return nil, err
			}
		}
		if err := runRound(ctx, o, client, &db, frontier, round, res); err != nil {
			return nil, fmt.Errorf("lean: round %d: %w", round+1, err)
		}
		o.Logger.Info("round done", "round", round+1, "frontier", len(frontier), "db", db.len())
	}
	res.DBSize = db.len()
	res.Unfetched = len(db.unfetched())
	return res, nil
}

// runRound fetches frontier and writes the round's files.
func runRound(ctx context.Context, o Options, client *http.Client, db *db, frontier []string, round int, res *Result) error {
	clock := newStageClock()

	pages := fetchAll(ctx, client, frontier, o.Workers, o.MaxBody)
	for i := range pages {
		p := &pages[i]
		switch {
		case p.err != nil:
			res.Errors++
			if res.FirstError == "" {
				res.FirstError = p.err.Error()
			}
			continue
		case p.status == http.StatusOK:
			res.Fetched++
		case p.location != "":
			res.Redirects++
		}
		res.Responses++
		res.BodyBytes += int64(len(p.body))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	clock.lap(&res.StageCPU[StageFetch])

	contentFile := filepath.Join(o.Out, fmt.Sprintf("content-%d.parquet", round+1))
	n, err := writeContent(contentFile, pages)
	if err != nil {
		return err
	}
	res.ContentBytes += n
	clock.lap(&res.StageCPU[StageContent])

	parsed := parseAll(pages, o.Workers)
	clock.lap(&res.StageCPU[StageParse])

	if err := writeParse(filepath.Join(o.Out, fmt.Sprintf("parse-%d.parquet", round+1)), parsed); err != nil {
		return err
	}
	clock.lap(&res.StageCPU[StageParseOut])

	// Every URL of the frontier was tried: the db has no other unfetched
	// ones. The new URLs are the outlinks and the redirect targets.
	db.markAllFetched()
	var links []string
	for i := range parsed {
		res.Parsed++
		res.Outlinks += int64(len(parsed[i].Outlinks))
		links = append(links, parsed[i].Outlinks...)
	}
	for i := range pages {
		if pages[i].location != "" {
			links = append(links, pages[i].location)
		}
	}
	slices.Sort(links)
	db.merge(slices.Compact(links))
	if err := db.write(filepath.Join(o.Out, fmt.Sprintf("db-%d.parquet", round+1))); err != nil {
		return err
	}
	clock.lap(&res.StageCPU[StageMerge])
	return nil
}

// leanConnsPerHost bounds the connections to one host, so that a crawl
// of many hosts keeps its connections alive rather than dialling new ones.
const leanConnsPerHost = 2

// newClient returns the crawl's HTTP client: keep-alive, up to workers
// connections per host, redirects returned rather than followed, names
// resolved by the Go resolver asking dnsAddr only, and connections to
// loopback addresses only.
func newClient(dnsAddr string, workers int) *http.Client {
	var dnsDialer net.Dialer
	resolver := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dnsDialer.DialContext(ctx, network, dnsAddr)
		},
	}
	dialer := &net.Dialer{
		Timeout:  10 * time.Second,
		Resolver: resolver,
		Control: func(_, address string, _ syscall.RawConn) error {
			return checkLoopback(address)
		},
	}
	tr := &http.Transport{
		DialContext: dialer.DialContext,
		// No cap on idle connections in all (net/http's default is 100):
		// with more hosts than that, connections would be closed and
		// dialled again all the time.
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: leanConnsPerHost,
		MaxConnsPerHost:     leanConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// checkLoopback rejects an address (host:port) whose host is not a
// loopback IP.
func checkLoopback(hostport string) error {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return fmt.Errorf("address %q: want a loopback IP:port: %w", hostport, err)
	}
	if !ap.Addr().IsLoopback() {
		return fmt.Errorf("address %q is not loopback: the lean crawler connects to loopback only", hostport)
	}
	return nil
}

// setClock sets the simweb's simulated time.
func setClock(ctx context.Context, client *http.Client, clockURL string, t time.Time) error {
	u := clockURL + "?t=" + url.QueryEscape(t.UTC().Format(time.RFC3339Nano))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return fmt.Errorf("lean: setting the clock: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("lean: setting the clock: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("lean: setting the clock at %s: %s", clockURL, resp.Status)
	}
	return nil
}

// fetchAll GETs every URL with workers concurrent fetches and returns the
// outcomes in the order of urls.
func fetchAll(ctx context.Context, client *http.Client, urls []string, workers int, maxBody int64) []fetched {
	out := make([]fetched, len(urls))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = fetchOne(ctx, client, urls[i], maxBody)
			}
		})
	}
	// The URLs are sorted, so a host's come together: hand them out in a
	// fixed shuffled order instead, so that the workers spread over the
	// hosts and each host is served over few kept-alive connections.
	order := rand.New(rand.NewPCG(1, uint64(len(urls)))).Perm(len(urls))
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// fetchOne GETs one URL and reads its body (up to maxBody bytes).
func fetchOne(ctx context.Context, client *http.Client, u string, maxBody int64) fetched {
	f := fetched{url: u, time: time.Now().UTC()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		f.err = fmt.Errorf("%s: %w", u, err)
		return f
	}
	req.Header.Set("User-Agent", "lean-bench")
	resp, err := client.Do(req)
	if err != nil {
		f.err = fmt.Errorf("%s: %w", u, err)
		return f
	}
	defer resp.Body.Close()
	f.status = int32(resp.StatusCode)
	f.contentType = resp.Header.Get("Content-Type")
	f.body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		f.err = fmt.Errorf("%s: reading the body: %w", u, err)
		return f
	}
	if resp.StatusCode/100 == 3 {
		if loc, err := resp.Location(); err == nil {
			if s, ok := cleanURL(loc); ok {
				f.location = s
			}
		}
	}
	return f
}

// stageClock measures the process's CPU time between laps.
type stageClock struct{ last time.Duration }

func newStageClock() *stageClock { return &stageClock{last: processCPU()} }

// lap adds the CPU time since the last lap to *d.
func (c *stageClock) lap(d *time.Duration) {
	now := processCPU()
	*d += now - c.last
	c.last = now
}

// processCPU is the process's CPU time so far (user + sys, RUSAGE_SELF).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in bytes (ru_maxrss).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // Linux reports KiB
}

// readSeeds reads a seed file: one URL a line, blank lines and lines
// starting with # skipped, anything after the URL (tab-separated
// metadata) dropped.
func readSeeds(name string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading seeds: %w", err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, errors.New("reading seeds: " + name + " has no URLs")
	}
	return out, nil
}
