package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"

	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/sitemap"
	"github.com/trawl/trawl/urlutil"
)

// Counter names of the sitemap job's fetching (job group "sitemap").
const (
	ctrSMHosts         = "hosts"
	ctrSMFetched       = "sitemaps_fetched"
	ctrSMFailed        = "sitemaps_failed"
	ctrSMIndexes       = "sitemap_indexes"
	ctrSMRobotsDenied  = "sitemaps_robots_denied"
	ctrSMOffHost       = "sitemaps_off_host"
	ctrSMTooDeep       = "sitemaps_too_deep"
	ctrSMCut           = "sitemaps_cut"
	ctrSMFromRobots    = "sitemaps_from_robots"
	ctrSMHostsSkipped  = "hosts_skipped"
	ctrSMEntries       = "urls_listed"
	ctrSMRefused       = "urls_refused"
	ctrSMOutOfScope    = "urls_out_of_scope"
	ctrSMBadFields     = "entries_bad_fields"
	ctrSMRobotsRequest = "robots_requests"
)

// maxSitemapRedirects bounds the redirects followed for one robots.txt or
// sitemap request.
const maxSitemapRedirects = 5

// sitemapFetcher fetches the sitemaps of the hosts of one map task,
// several hosts at once, one request at a time per host.
type sitemapFetcher struct {
	s       sitemapJob
	t       *mapreduce.Task
	client  *http.Client
	dns     *resolver.Resolver
	filters urlutil.Filters
	ua      string // User-Agent header
	agent   string // robots.txt product token
	emitMu  sync.Mutex
	emit    mapreduce.Emit[smValue]
}

// newSitemapFetcher makes the task's fetcher: its resolver (the fetch
// job's, fetcher.dns.* and --dns-server) and an HTTP client whose dialer
// refuses private addresses unless AllowPrivate, as the fetcher's does.
func newSitemapFetcher(t *mapreduce.Task, s sitemapJob, filters urlutil.Filters, emit mapreduce.Emit[smValue]) (*sitemapFetcher, error) {
	cfg := s.Fetch.resolverConfig()
	cfg.Log = t.Log
	dns, err := resolver.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("sitemap: DNS resolver: %w", err)
	}
	f := &sitemapFetcher{s: s, t: t, dns: dns, filters: filters, emit: emit}
	f.ua, f.agent = userAgents(s.Fetch.Agent)
	connect := s.Fetch.ConnectTimeout
	if connect <= 0 {
		connect = fetcher.DefaultConnectTimeout
	}
	read := s.Fetch.ReadTimeout
	if read <= 0 {
		read = fetcher.DefaultReadTimeout
	}
	tr := &http.Transport{
		DialContext:           f.dialer(connect),
		MaxIdleConnsPerHost:   1,
		ResponseHeaderTimeout: read,
		IdleConnTimeout:       30 * time.Second,
		DisableCompression:    true, // Parse decompresses gzip files itself, within the size limit
	}
	f.client = &http.Client{
		Transport: tr,
		Timeout:   read,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxSitemapRedirects {
				return fmt.Errorf("more than %d redirects", maxSitemapRedirects)
			}
			req.Header.Set("User-Agent", f.ua)
			return nil
		},
	}
	return f, nil
}

// userAgents returns the User-Agent header of agent and the name its
// robots.txt groups are matched with, as the fetcher makes them.
func userAgents(agent string) (ua, robots string) {
	agent = strings.TrimSpace(agent)
	ua = agent
	if !strings.Contains(agent, "/") {
		ua = agent + "/" + fetcher.Version
	}
	robots = agent
	if i := strings.IndexAny(robots, "/ \t"); i >= 0 {
		robots = robots[:i]
	}
	return ua, strings.ToLower(robots)
}

// close releases the client's connections and the resolver.
func (f *sitemapFetcher) close() {
	f.client.CloseIdleConnections()
	_ = f.dns.Close()
}

// dialer resolves with the task's resolver and refuses private,
// loopback and link-local addresses unless AllowPrivate.
func (f *sitemapFetcher) dialer(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else {
			lctx, cancel := context.WithTimeout(ctx, timeout)
			addrs, err = f.dns.LookupNetIP(lctx, host)
			cancel()
			if err != nil {
				return nil, &fetcher.DNSError{Host: host, Err: err}
			}
		}
		var allowed []netip.Addr
		for _, a := range addrs {
			if f.s.Fetch.AllowPrivate || !fetcher.PrivateAddr(a) {
				allowed = append(allowed, a)
			}
		}
		if len(allowed) == 0 {
			if len(addrs) == 0 {
				return nil, fmt.Errorf("resolve %s: no address", host)
			}
			return nil, &fetcher.RefusedError{Host: host, Addr: addrs[0]}
		}
		d := net.Dialer{Timeout: timeout}
		var first error
		for _, a := range allowed {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
		}
		return nil, first
	}
}

// fetchAll fetches the sitemaps of hosts, Threads hosts at a time.
func (f *sitemapFetcher) fetchAll(ctx context.Context, hosts []sitemapHostRow) {
	work := make(chan sitemapHostRow)
	var wg sync.WaitGroup
	for range min(f.s.threads(), len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				f.host(ctx, h)
			}
		}()
	}
	for _, h := range hosts {
		select {
		case work <- h:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
}

// hostVisit is the state of the visit of one host: its robots.txt rules
// and the time of its last request.
type hostVisit struct {
	origin *url.URL
	group  *robotstxt.Group // nil: everything allowed
	delay  time.Duration
	last   time.Time
}

// sitemapItem is a sitemap to fetch: its URL, how deep in indexes it was
// found (1: named by the file or robots.txt), and whether it may list
// any URL of its host (it or its index was named in robots.txt).
type sitemapItem struct {
	url       string
	depth     int
	hostScope bool
}

// host fetches the robots.txt of one origin, then its sitemaps (those of
// the sitemap URL files, and with Robots those its robots.txt names),
// following indexes breadth first up to MaxDepth, each sitemap once, with
// the server delay (or the robots.txt Crawl-delay, if longer) between two
// requests.
func (f *sitemapFetcher) host(ctx context.Context, h sitemapHostRow) {
	t := f.t
	t.Count(ctrSMHosts, 1)
	log := t.Log.With("host", h.Origin)
	origin, err := url.Parse(h.Origin)
	if err != nil || origin.Host == "" {
		log.Warn("sitemap: not a URL origin", "origin", urlutil.Redact(h.Origin))
		t.Count(ctrSMHostsSkipped, 1)
		return
	}
	v := &hostVisit{origin: origin, delay: f.s.serverDelay()}
	robotsSitemaps, ok := f.robots(ctx, v, log)
	if !ok {
		t.Count(ctrSMHostsSkipped, 1)
		t.Count(ctrSMFailed, int64(len(h.Sitemaps)))
		return
	}
	var queue []sitemapItem
	for _, s := range h.Sitemaps {
		queue = append(queue, sitemapItem{url: s, depth: 1})
	}
	if h.Robots {
		for _, s := range robotsSitemaps {
			t.Count(ctrSMFromRobots, 1)
			u, err := url.Parse(strings.TrimSpace(s))
			if err == nil && !u.IsAbs() {
				u = origin.ResolveReference(u) // RFC 9309 wants absolute URLs; a relative one is taken from the host's root
			}
			if err != nil || !sitemap.SameHost(origin, u) || (u.Scheme != "http" && u.Scheme != "https") {
				log.Info("sitemap: robots.txt names a sitemap on another host; refused", "sitemap", urlutil.Redact(s))
				t.Count(ctrSMOffHost, 1)
				continue
			}
			n, err := urlutil.Normalize(u.String())
			if err != nil {
				t.Count(ctrSMRefused, 1)
				continue
			}
			queue = append(queue, sitemapItem{url: n, depth: 1, hostScope: true})
		}
	}
	seen := map[string]bool{}
	for len(queue) > 0 && ctx.Err() == nil {
		it := queue[0]
		queue = queue[1:]
		if seen[it.url] {
			continue
		}
		seen[it.url] = true
		queue = append(queue, f.sitemap(ctx, v, it, log)...)
	}
}

// robots fetches the origin's robots.txt (Nutch's rules, as the fetcher
// applies them: a 200 is parsed, any other 4xx or 3xx end allows
// everything), sets the visit's rules and delay, and returns the
// Sitemap: lines. A network error, a refused address or a 5xx leaves the
// host for later: ok is false. A Crawl-delay above the fetcher's cap
// skips the host, as the fetcher does.
func (f *sitemapFetcher) robots(ctx context.Context, v *hostVisit, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) (sitemaps []string, ok bool) {
	f.t.Count(ctrSMRobotsRequest, 1)
	target := v.origin.Scheme + "://" + v.origin.Host + "/robots.txt"
	resp, err := f.get(ctx, v, target)
	if err != nil {
		log.Warn("sitemap: robots.txt unavailable; host skipped", "err", describeErr(err))
		return nil, false
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		log.Warn("sitemap: robots.txt unavailable; host skipped", "status", resp.StatusCode)
		return nil, false
	case resp.StatusCode != http.StatusOK:
		return nil, true
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, fetcher.RobotsLimit))
	if err != nil {
		log.Warn("sitemap: robots.txt unavailable; host skipped", "err", describeErr(err))
		return nil, false
	}
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return nil, true
	}
	v.group = data.FindGroup(f.agent)
	if d := v.group.CrawlDelay; d > v.delay {
		if limit := f.s.maxCrawlDelay(); limit > 0 && d > limit {
			log.Info("sitemap: robots.txt Crawl-delay above fetcher.maxCrawlDelay; host skipped", "crawl_delay", d)
			return nil, false
		}
		v.delay = d
	}
	return data.Sitemaps, true
}

// sitemap fetches and parses one sitemap and emits its URLs; it returns
// the sitemaps of an index, to fetch next.
func (f *sitemapFetcher) sitemap(ctx context.Context, v *hostVisit, it sitemapItem, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) []sitemapItem {
	t := f.t
	u, err := url.Parse(it.url)
	if err != nil {
		t.Count(ctrSMFailed, 1)
		return nil
	}
	if v.group != nil && !v.group.Test(robotsPathOf(u)) {
		log.Info("sitemap: robots.txt disallows the sitemap", "sitemap", urlutil.Redact(it.url))
		t.Count(ctrSMRobotsDenied, 1)
		return nil
	}
	resp, err := f.get(ctx, v, it.url)
	if err != nil {
		log.Warn("sitemap: fetch failed", "sitemap", urlutil.Redact(it.url), "err", describeErr(err))
		t.Count(ctrSMFailed, 1)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Warn("sitemap: fetch failed", "sitemap", urlutil.Redact(it.url), "status", resp.StatusCode)
		t.Count(ctrSMFailed, 1)
		return nil
	}
	res, err := sitemap.Parse(u, resp.Header.Get("Content-Type"), resp.Body,
		sitemap.Options{Strict: f.s.strict(), HostScope: it.hostScope})
	if err != nil {
		log.Warn("sitemap: not parsed", "err", err)
		t.Count(ctrSMFailed, 1)
		return nil
	}
	t.Count(ctrSMFetched, 1)
	t.Count(ctrSMOffHost, int64(res.OffHost))
	t.Count(ctrSMOutOfScope, int64(res.OutOfScope))
	t.Count(ctrSMRefused, int64(res.Invalid))
	t.Count(ctrSMBadFields, int64(res.BadFields))
	if res.Cut != "" {
		log.Warn("sitemap: cut", "sitemap", urlutil.Redact(it.url), "why", res.Cut)
		t.Count(ctrSMCut, 1)
	}
	if res.Kind == sitemap.Index {
		t.Count(ctrSMIndexes, 1)
		var next []sitemapItem
		for _, s := range res.Sitemaps {
			n, err := urlutil.Normalize(s)
			if err != nil {
				t.Count(ctrSMRefused, 1)
				continue
			}
			if it.depth >= f.s.maxDepth() {
				log.Info("sitemap: index nested deeper than sitemap.maxDepth; not followed", "sitemap", urlutil.Redact(n))
				t.Count(ctrSMTooDeep, 1)
				continue
			}
			next = append(next, sitemapItem{url: n, depth: it.depth + 1, hostScope: it.hostScope})
		}
		return next
	}
	for _, e := range res.URLs {
		f.entry(e, it.url)
	}
	return nil
}

// entry normalizes and filters one sitemap URL, as inject does a seed,
// and emits it.
func (f *sitemapFetcher) entry(e sitemap.Entry, from string) {
	t := f.t
	t.Count(ctrSMEntries, 1)
	n, err := urlutil.Normalize(e.URL)
	if err != nil {
		t.Count(ctrSMRefused, 1)
		return
	}
	if f.filters != nil {
		if ok, _ := f.filters.Filter(n); !ok {
			t.Count(ctrSMRefused, 1)
			return
		}
	}
	v := smValue{Kind: kindSitemap, Entry: &smEntry{
		LastMod: e.LastMod, ChangeFreq: string(e.ChangeFreq), Priority: e.Priority, Sitemap: from,
	}}
	f.emitMu.Lock()
	f.emit(n, v)
	f.emitMu.Unlock()
}

// get sends one GET to the visit's host after its delay.
func (f *sitemapFetcher) get(ctx context.Context, v *hostVisit, target string) (*http.Response, error) {
	if wait := time.Until(v.last.Add(v.delay)); !v.last.IsZero() && wait > 0 {
		tm := time.NewTimer(wait)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return nil, ctx.Err()
		}
	}
	defer func() { v.last = time.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.ua)
	req.Header.Set("Accept", "application/xml, text/xml, text/plain;q=0.9, application/gzip;q=0.8, */*;q=0.5")
	return f.client.Do(req)
}

// robotsPathOf is the part of u robots.txt rules match.
func robotsPathOf(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// describeErr is err for a log line, its refusal explained.
func describeErr(err error) string {
	var ref *fetcher.RefusedError
	if errors.As(err, &ref) {
		return ref.Error()
	}
	return urlutil.Redact(err.Error())
}
