// Command colly is the colly peer of trawl's fetch benchmark (bench/fetch):
// it GETs every URL of a list with github.com/gocolly/colly/v2 and prints
// what it got as one JSON object on stdout.
//
// Settings equivalent to the other contenders': an asynchronous collector
// (colly.Async), one LimitRule per host with Parallelism 1 (colly applies a
// rule's parallelism to all the hosts the rule matches together, so a single
// DomainGlob "*" rule would allow one request in all; one rule per host is
// how colly limits each host), at most -connections requests in flight in
// all (a semaphore in the transport: colly has no global limit of its own),
// keep-alive on with one connection per host, redirects not followed,
// robots.txt obeyed (colly's own check, made inside Visit), bodies read by
// colly, no link following and no HTML parsing (no OnHTML callback). The URL
// list is visited in file order from one goroutine.
//
// It is its own Go module so that colly stays out of trawl's go.mod.
//
//	colly -urls urls.txt -connections 64 -agent colly-bench
package main

import (
	"bufio"
	"encoding/json"
	"flag"
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

	"github.com/gocolly/colly/v2"
)

// result is what the harness prints.
type result struct {
	URLs      int   `json:"urls"`
	Responses int64 `json:"responses"`
	OK        int64 `json:"ok"`
	Errors    int64 `json:"errors"`
	Bytes     int64 `json:"bytes"`
	// Seconds is the time from the first Visit to the end of Wait.
	Seconds    float64 `json:"seconds"`
	FirstError string  `json:"first_error,omitempty"`
}

func main() {
	urlsFile := flag.String("urls", "", "file with one URL per line")
	conns := flag.Int("connections", 64, "requests in flight in all (one per host)")
	agent := flag.String("agent", "colly-bench", "User-Agent")
	robots := flag.Bool("robots", true, "obey robots.txt")
	timeout := flag.Duration("timeout", 30*time.Second, "request timeout")
	flag.Parse()
	if err := run(*urlsFile, *conns, *agent, *robots, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
}

func run(urlsFile string, conns int, agent string, robots bool, timeout time.Duration) error {
	if urlsFile == "" || conns < 1 {
		return fmt.Errorf("need -urls and -connections >= 1")
	}
	urls, err := readLines(urlsFile)
	if err != nil {
		return err
	}
	c := colly.NewCollector(colly.Async(true), colly.UserAgent(agent))
	c.IgnoreRobotsTxt = !robots
	c.MaxBodySize = 0 // no limit (the web's largest page is far below colly's 10 MiB default anyway)
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        0, // no limit over all hosts
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		IdleConnTimeout:     90 * time.Second,
	}
	// Our own client: colly's redirect handler runs its revisit check
	// before the handler, which would turn a redirect whose target is
	// also in the list into an error and the target's own visit into
	// "already visited". Redirects are answers, except for robots.txt
	// (colly fetches it with the same client and cannot read a 301, as
	// trawl follows robots.txt redirects).
	c.SetClient(&http.Client{
		Transport: &capped{rt: tr, slots: make(chan struct{}, conns)},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if via[0].URL.Path == "/robots.txt" && len(via) < 5 {
				return nil
			}
			return http.ErrUseLastResponse
		},
	})

	hosts := map[string]bool{}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			return fmt.Errorf("%s: URL %q: %w", urlsFile, u, err)
		}
		if !hosts[pu.Host] {
			hosts[pu.Host] = true
			if err := c.Limit(&colly.LimitRule{DomainGlob: pu.Host, Parallelism: 1}); err != nil {
				return fmt.Errorf("limit rule for %s: %w", pu.Host, err)
			}
		}
	}

	res := result{URLs: len(urls)}
	var responses, ok, failed, bytes atomic.Int64
	var once sync.Once
	c.OnResponse(func(r *colly.Response) {
		responses.Add(1)
		bytes.Add(int64(len(r.Body)))
		if r.StatusCode == http.StatusOK {
			ok.Add(1)
		}
	})
	c.OnError(func(r *colly.Response, err error) {
		// colly reports every status outside 2xx as an error; a status is
		// still a response.
		if r != nil && r.StatusCode > 0 {
			responses.Add(1)
			bytes.Add(int64(len(r.Body)))
			return
		}
		failed.Add(1)
		once.Do(func() { res.FirstError = err.Error() })
	})
	start := time.Now()
	for _, u := range urls {
		if err := c.Visit(u); err != nil {
			// robots.txt refusals and visit errors: counted, not fatal.
			failed.Add(1)
			once.Do(func() { res.FirstError = u + ": " + err.Error() })
		}
	}
	c.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Responses, res.OK, res.Errors, res.Bytes = responses.Load(), ok.Load(), failed.Load(), bytes.Load()
	return json.NewEncoder(os.Stdout).Encode(res)
}

// capped is a RoundTripper that lets at most cap(slots) requests be in
// flight at once, from sending the request until the body is closed.
type capped struct {
	rt    http.RoundTripper
	slots chan struct{}
}

// RoundTrip implements http.RoundTripper.
func (c *capped) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case c.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		<-c.slots
		return nil, err
	}
	resp.Body = &releaser{ReadCloser: resp.Body, release: func() { <-c.slots }}
	return resp, nil
}

// releaser frees a slot once, when the body is closed.
type releaser struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

// Close closes the body and frees the slot.
func (r *releaser) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(r.release)
	return err
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
