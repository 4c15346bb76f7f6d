package main

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// rawResult is what the raw client reports on stdout, as one JSON object.
type rawResult struct {
	// URLs is the number of URLs given; Responses those that got an HTTP
	// response (any status), OK those answered 200, Errors the rest.
	URLs      int   `json:"urls"`
	Responses int64 `json:"responses"`
	OK        int64 `json:"ok"`
	Errors    int64 `json:"errors"`
	// Bytes counts body bytes read (after the transport's gzip decoding).
	Bytes int64 `json:"bytes"`
	// Lookups counts DNS queries sent; Dials connections opened.
	Lookups int64 `json:"lookups"`
	Dials   int64 `json:"dials"`
	// Seconds is the time from the first request to the last response.
	Seconds float64 `json:"seconds"`
	// FirstError is one error message, for diagnosis.
	FirstError string `json:"first_error,omitempty"`
}

// rawMain is the raw-limit mode of the harness binary: it GETs every URL of
// the file urls (one per line) with conns concurrent connections, at most one
// per host at a time (the free host with the most URLs left first),
// keep-alive on, redirects not followed, bodies read and discarded, names
// resolved with a plain A query to dnsServer at each dial, and prints a
// rawResult.
func rawMain(args []string) error {
	if len(args) != 4 {
		return errors.New("usage: raw URLS-FILE DNS-SERVER CONNECTIONS AGENT")
	}
	urlsFile, dnsServer, agent := args[0], args[1], args[3]
	var conns int
	if _, err := fmt.Sscan(args[2], &conns); err != nil || conns < 1 {
		return fmt.Errorf("raw: connections %q: want a positive number", args[2])
	}
	urls, err := readLines(urlsFile)
	if err != nil {
		return err
	}
	res, err := rawFetch(context.Background(), urls, dnsServer, conns, agent, nil)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// readLines reads the non-empty lines of a file.
func readLines(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading URLs: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading URLs from %s: %w", name, err)
	}
	return out, nil
}

// rawFetch fetches urls as rawMain describes. wrap, if not nil, wraps the
// transport (tests observe the requests with it). It is one function on
// purpose: the bare client the others are measured against, all in view.
func rawFetch(ctx context.Context, urls []string, dnsServer string, conns int, agent string,
	wrap func(http.RoundTripper) http.RoundTripper) (*rawResult, error) {
	// Per-host queues, in the file's order within a host.
	var (
		hostIndex = map[string]int{}
		queues    [][]string
	)
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("raw: URL %q: %w", u, err)
		}
		i, ok := hostIndex[pu.Host]
		if !ok {
			i = len(queues)
			hostIndex[pu.Host] = i
			queues = append(queues, nil)
		}
		queues[i] = append(queues[i], u)
	}

	res := &rawResult{URLs: len(urls)}
	var lookups, dials atomic.Int64
	dnsClient := &dns.Client{Timeout: 5 * time.Second}
	var dialer net.Dialer
	tr := &http.Transport{
		// One connection per host, kept alive between its requests; no
		// limit on idle connections over all hosts.
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     90 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip := net.ParseIP(host)
			if ip == nil {
				lookups.Add(1)
				ip, err = lookupA(ctx, dnsClient, dnsServer, host)
				if err != nil {
					return nil, err
				}
			}
			dials.Add(1)
			return dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		},
	}
	defer tr.CloseIdleConnections()
	var rt http.RoundTripper = tr
	if wrap != nil {
		rt = wrap(tr)
	}
	client := &http.Client{
		Transport: rt,
		Timeout:   30 * time.Second,
		// Redirects are answers, as for trawl fetch --follow-redirects 0.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	sched := newHostScheduler(queues)
	var (
		responses atomic.Int64
		ok        atomic.Int64
		failed    atomic.Int64
		bytes     atomic.Int64
		errOnce   sync.Once
	)
	get := func(u string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", agent)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		responses.Add(1)
		n, err := io.Copy(io.Discard, resp.Body)
		bytes.Add(n)
		if err != nil {
			return fmt.Errorf("%s: reading the body: %w", u, err)
		}
		if resp.StatusCode == http.StatusOK {
			ok.Add(1)
		}
		return nil
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for {
				h, u, more := sched.take()
				if !more {
					return
				}
				if err := get(u); err != nil {
					failed.Add(1)
					errOnce.Do(func() { res.FirstError = err.Error() })
				}
				sched.release(h)
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Responses, res.OK, res.Errors, res.Bytes = responses.Load(), ok.Load(), failed.Load(), bytes.Load()
	res.Lookups, res.Dials = lookups.Load(), dials.Load()
	return res, nil
}

// hostScheduler hands out URLs so that a host has at most one request in
// flight, and, among the hosts that are free, the one with the most URLs
// left goes first: with one connection per host the busiest hosts set the
// wall time, so keeping them busy gets closest to the latency floor.
type hostScheduler struct {
	mu       sync.Mutex
	cond     *sync.Cond
	queues   [][]string
	free     hostHeap // hosts with URLs left and no request in flight
	inFlight int      // hosts with a request in flight
}

func newHostScheduler(queues [][]string) *hostScheduler {
	s := &hostScheduler{queues: queues}
	s.cond = sync.NewCond(&s.mu)
	s.free = hostHeap{queues: queues}
	for h := range queues {
		s.free.hosts = append(s.free.hosts, h)
	}
	heap.Init(&s.free)
	return s
}

// take waits for a free host and returns it with its next URL; more is
// false once every URL has been handed out and answered.
func (s *hostScheduler) take() (host int, u string, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.free.Len() == 0 {
		if s.inFlight == 0 {
			return 0, "", false
		}
		s.cond.Wait()
	}
	h := heap.Pop(&s.free).(int)
	u = s.queues[h][0]
	s.queues[h] = s.queues[h][1:]
	s.inFlight++
	return h, u, true
}

// release marks host's request done.
func (s *hostScheduler) release(host int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	if len(s.queues[host]) > 0 {
		heap.Push(&s.free, host)
	}
	// Wake every waiter: a host came free, or the work may be done.
	s.cond.Broadcast()
}

// hostHeap is a max-heap of host indexes by URLs left.
type hostHeap struct {
	hosts  []int
	queues [][]string
}

func (h hostHeap) Len() int { return len(h.hosts) }
func (h hostHeap) Less(i, j int) bool {
	return len(h.queues[h.hosts[i]]) > len(h.queues[h.hosts[j]])
}
func (h hostHeap) Swap(i, j int) { h.hosts[i], h.hosts[j] = h.hosts[j], h.hosts[i] }

// Push adds a host (heap.Interface).
func (h *hostHeap) Push(x any) { h.hosts = append(h.hosts, x.(int)) }

// Pop removes the last host (heap.Interface).
func (h *hostHeap) Pop() any {
	x := h.hosts[len(h.hosts)-1]
	h.hosts = h.hosts[:len(h.hosts)-1]
	return x
}

// lookupA asks server for host's A record (no cache, as net/http's own
// resolver dials without one).
func lookupA(ctx context.Context, c *dns.Client, server, host string) (net.IP, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(host), dns.TypeA)
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil {
		return nil, fmt.Errorf("looking up %s at %s: %w", host, server, err)
	}
	if r.Rcode != dns.RcodeSuccess {
		return nil, fmt.Errorf("looking up %s at %s: %s", host, server, dns.RcodeToString[r.Rcode])
	}
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			return a.A, nil
		}
	}
	return nil, fmt.Errorf("looking up %s at %s: no A record", host, server)
}
