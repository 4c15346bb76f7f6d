package main

import (
	"context"
	"fmt"
	"io"
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

// curvePoint is the state of a fetch after one more page request.
type curvePoint struct {
	t     time.Duration // since the fetch's first request
	pages int64         // page requests answered 200 so far
	share float64       // share of the fetch list's total quality fetched so far
}

// policyRun is one fetch of the policy experiment.
type policyRun struct {
	policy    string
	keepAlive bool
	delay     time.Duration
	wall      time.Duration
	rss       int64
	srv       served
	// crawl is the time from the first request to the last response.
	crawl time.Duration
	curve []curvePoint
	// server is what the run's requests cost the servers.
	server serverTime
}

func (r policyRun) label() string {
	if r.keepAlive {
		return r.policy
	}
	return r.policy + " (no keep-alive)"
}

// rate is pages per second of crawl time.
func (r policyRun) rate() float64 { return float64(r.srv.ok) / r.crawl.Seconds() }

// rate90 is pages per second until 90% of the run's pages were fetched:
// the rate without the tail of the last hosts.
func (r policyRun) rate90() float64 {
	for _, p := range r.curve {
		if float64(p.pages) >= 0.9*float64(r.srv.ok) && p.t > 0 {
			return float64(p.pages) / p.t.Seconds()
		}
	}
	return 0
}

// timeTo returns the share of the crawl time at which the quality share
// first reached q (1 if never).
func (r policyRun) timeTo(q float64) float64 {
	for _, p := range r.curve {
		if p.share >= q {
			return p.t.Seconds() / r.crawl.Seconds()
		}
	}
	return 1
}

// auc is the area under the quality-share curve over normalized crawl
// time: 1 would be all quality at once, 0.5 quality fetched at a constant
// rate.
func (r policyRun) auc() float64 {
	var a float64
	prevT, prevS := 0.0, 0.0
	for _, p := range r.curve {
		t := p.t.Seconds() / r.crawl.Seconds()
		a += prevS * (t - prevT)
		prevT, prevS = t, p.share
	}
	return a + prevS*(1-prevT)
}

// runPolicies runs the crawl-scheduling paper's experiment: one fetch list
// whose scores are page quality, fetched with a polite delay by each
// policy, for each quality model. It is one function on purpose: an
// experiment's script, step by step as bench/README.md describes it.
func runPolicies(ctx context.Context, log *slog.Logger, o options, feat features) error {
	policies := splitList(o.policies)
	if !feat.policy {
		log.Warn("trawl fetch has no --policy yet: measuring its default (breadth-first) only")
		policies = []string{"default"}
	}
	if len(policies) == 0 {
		return fmt.Errorf("-policies: none given")
	}
	hz, err := simweb.ParseHazards(o.hazards)
	if err != nil {
		return fmt.Errorf("-hazards: %w", err)
	}
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages, cfg.Hazards = o.seed, o.policyHosts, o.policyPages, hz
	// The policy runs' web costs -connect-latency per connection (0 by
	// default); the keep-alive runs' (2 by default) is served on its own
	// when that differs, since simweb's costs are fixed when it serves.
	so := simweb.ServeOptions{Latency: o.policyLatency, ConnectLatency: max(0, o.connectLatency),
		AccessLogLimit: 4*o.policyPages + 100_000}
	kaConnect := o.connectLatency
	if kaConnect < 0 {
		kaConnect = 2
	}
	e, err := serveWeb(ctx, log, filepath.Join(o.dir, "policies"), cfg, so, accessLogName(o.accessLog, "policies"))
	if err != nil {
		return err
	}
	defer e.close()
	kaEnv := e
	if o.keepAliveRun && kaConnect != so.ConnectLatency {
		kso := so
		kso.ConnectLatency = kaConnect
		if kaEnv, err = serveWeb(ctx, log, filepath.Join(o.dir, "policies-keepalive"), cfg, kso, accessLogName(o.accessLog, "policies-keepalive")); err != nil {
			return err
		}
		defer kaEnv.close()
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	politeness := o.politeness
	if politeness != "" && !feat.politeness {
		log.Warn("trawl fetch has no --politeness yet: its default applies", "politeness", politeness)
		politeness = ""
	}

	// policyWeb is a served web with the fetch list of one quality model.
	type policyWeb struct {
		e         *webEnv
		connect   float64
		global    []string
		seg       string
		fetchList []string
		quality   map[int]float64
		inList    map[int]bool
		total     float64
	}
	prepare := func(e *webEnv, connect float64, q string) (policyWeb, error) {
		pw := policyWeb{e: e, connect: connect, global: []string{"--crawl", e.crawl, "--memory", o.memory, "--log-level", "warn"}}
		set := selectURLs(e.web, e.srv)
		quality, err := qualities(e.web, set.ids, q, o.seed)
		if err != nil {
			return pw, err
		}
		pw.quality = quality
		// Scores scaled to a mean of 1 over the injected URLs (the
		// ranking is what matters; this keeps float32 scores well away
		// from underflow and rounding).
		var sum float64
		for _, id := range set.ids {
			sum += quality[id]
		}
		lines := make([]string, len(set.urls))
		for i, u := range set.urls {
			score := quality[set.ids[i]] * float64(len(set.ids)) / sum
			lines[i] = u + "\tscore=" + strconv.FormatFloat(score, 'g', 8, 64)
		}
		if pw.seg, pw.fetchList, err = e.segmentFor(ctx, o.trawl, pw.global, lines, 1, "--max-per-host", strconv.Itoa(o.policyMaxPerHost)); err != nil {
			return pw, err
		}
		pw.inList = map[int]bool{}
		for _, u := range pw.fetchList {
			if id, ok := e.pageOf(u); ok && !pw.inList[id] {
				pw.inList[id] = true
				pw.total += quality[id]
			}
		}
		if err := checkScores(pw.seg, e, quality); err != nil {
			return pw, err
		}
		log.Info("policy experiment: segment generated", "quality", q, "urls", len(pw.fetchList), "connect_latency", connect)
		_, err = e.window(ctx)
		return pw, err
	}

	type result struct {
		quality string
		urls    int
		runs    []policyRun
	}
	for qi, q := range splitList(o.qualities) {
		pw, err := prepare(e, so.ConnectLatency, q)
		if err != nil {
			return err
		}
		fetchList := pw.fetchList
		res := result{quality: q, urls: len(fetchList)}
		fetch := func(pw policyWeb, policy string, delay time.Duration, keepAlive bool) (policyRun, error) {
			if err := clearSegment(pw.seg); err != nil {
				return policyRun{}, err
			}
			args := append(slices.Clone(pw.global), "fetch", pw.seg, "--agent", o.agent,
				"--server-delay", delay.String(), "--allow-private", "--dns-server", pw.e.srv.DNSAddr(),
				"--max-connections", strconv.Itoa(o.conns))
			if policy != "default" {
				args = append(args, "--policy", policy)
			}
			if politeness != "" {
				args = append(args, "--politeness", politeness)
			}
			if !keepAlive {
				args = append(args, feat.keepAlive)
			}
			log.Info("policy experiment: fetch", "quality", q, "policy", policy, "delay", delay, "keep_alive", keepAlive,
				"politeness", politeness, "connect_latency", pw.connect)
			m, err := measure(ctx, "fetch "+policy, os.Stderr, o.trawl, args...)
			if err != nil {
				return policyRun{}, err
			}
			entries, err := pw.e.window(ctx)
			if err != nil {
				return policyRun{}, err
			}
			r := policyRun{policy: policy, keepAlive: keepAlive, delay: delay, wall: m.wall, rss: m.maxRSS, srv: countServed(entries)}
			r.crawl, r.curve = qualityCurve(entries, pw.quality, pw.inList, pw.total)
			r.server = serverTimeOf(entries)
			log.Info("policy experiment: measured", "quality", q, "policy", r.label(), "pages", r.srv.ok,
				"crawl", r.crawl.Round(time.Millisecond), "to_80pc", fmt.Sprintf("%.2f", r.timeTo(0.8)))
			return r, nil
		}
		for _, p := range policies {
			r, err := fetch(pw, p, o.policyDelay, true)
			if err != nil {
				return err
			}
			res.runs = append(res.runs, r)
		}
		printPolicies(os.Stdout, o, q, len(fetchList), o.policyDelay, politeness, pw.connect, res.runs)
		if qi == 0 && o.keepAliveRun {
			if feat.keepAlive == "" {
				log.Warn("trawl fetch has no keep-alive setting yet: no keep-alive run")
			} else {
				// The best policy by throughput, with keep-alive and with
				// one request per connection, at -keep-alive-delay.
				best := slices.MaxFunc(res.runs, func(a, b policyRun) int {
					return cmpFloat(a.rate(), b.rate())
				})
				kpw := pw
				if kaEnv != e {
					if kpw, err = prepare(kaEnv, kaConnect, q); err != nil {
						return err
					}
				}
				var ka []policyRun
				for _, on := range []bool{true, false} {
					r, err := fetch(kpw, best.policy, o.keepAliveDelay, on)
					if err != nil {
						return err
					}
					ka = append(ka, r)
				}
				printPolicies(os.Stdout, o, q+", keep-alive against one request per connection", len(kpw.fetchList), o.keepAliveDelay, politeness, kpw.connect, ka)
				if err := plotPolicies(o.out, q+"-keepalive", ka); err != nil {
					return err
				}
				res.runs = append(res.runs, ka...)
			}
		}
		if err := writeCurves(filepath.Join(o.out, "policies-"+q+".csv"), res.runs); err != nil {
			return err
		}
		if err := plotPolicies(o.out, q, res.runs[:len(policies)]); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stdout, "plots and curves in %s\n", o.out)
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// qualities returns a quality per page id for the model named q:
// "pagerank" (simweb's truth) or "zipf" (1/rank, ranks a random permutation
// of the ids drawn from seed: Zipf with a = 1).
func qualities(w *simweb.Web, ids []int, q string, seed uint64) (map[int]float64, error) {
	out := make(map[int]float64, len(ids))
	switch q {
	case "pagerank":
		for _, id := range ids {
			out[id] = w.Page(id).PageRank
		}
	case "zipf":
		r := rand.New(rand.NewPCG(seed, 0x21bf))
		perm := r.Perm(len(ids))
		for i, id := range ids {
			out[id] = 1 / float64(perm[i]+1)
		}
	default:
		return nil, fmt.Errorf("-qualities: unknown model %q (want pagerank, zipf)", q)
	}
	return out, nil
}

// pageOf returns the page id a URL of the web names.
func (e *webEnv) pageOf(u string) (int, bool) {
	h, ok := e.hostOf(u)
	if !ok {
		return 0, false
	}
	pu, err := url.Parse(u)
	if err != nil {
		return 0, false
	}
	return e.web.Lookup(h, pu.EscapedPath())
}

// checkScores makes sure generate carried the injected quality into the
// fetch list's scores (the policies rank by it): every row's score is its
// page's quality times one factor, to float32 precision.
func checkScores(seg string, e *webEnv, quality map[int]float64) error {
	rows, err := readFetchScores(seg)
	if err != nil {
		return err
	}
	k, bad, n := 0.0, 0, 0
	var first string
	for u, s := range rows {
		id, ok := e.pageOf(u)
		if !ok || quality[id] == 0 {
			continue
		}
		n++
		r := float64(s) / quality[id]
		if k == 0 {
			k = r
		}
		if d := r/k - 1; d > 1e-4 || d < -1e-4 {
			if bad == 0 {
				first = fmt.Sprintf("%s: score %g, quality %g", u, s, quality[id])
			}
			bad++
		}
	}
	if n == 0 || bad > 0 {
		return fmt.Errorf("the fetch list's scores are not proportional to the injected quality for %d of %d URLs (first: %s)", bad, n, first)
	}
	return nil
}

// qualityCurve builds the pages and quality-share curve of a fetch from its
// access-log entries: time from the first request (robots.txt included) to
// each page response, in order of response. It returns the crawl time (to
// the last response) and the curve.
func qualityCurve(entries []simweb.Access, quality map[int]float64, inList map[int]bool, total float64) (time.Duration, []curvePoint) {
	var pages []simweb.Access
	var t0, t1 time.Time
	for _, a := range entries {
		if a.Host == "" {
			continue
		}
		if t0.IsZero() || a.Start.Before(t0) {
			t0 = a.Start
		}
		if a.End.After(t1) {
			t1 = a.End
		}
		if a.Path != "/robots.txt" && a.Path != robotsMainPath {
			pages = append(pages, a)
		}
	}
	slices.SortFunc(pages, func(a, b simweb.Access) int { return a.End.Compare(b.End) })
	var (
		curve []curvePoint
		n     int64
		got   float64
		seen  = map[int32]bool{}
	)
	for _, a := range pages {
		if a.Status == 200 {
			n++
		}
		if a.Status > 0 && a.Page >= 0 && inList[int(a.Page)] && !seen[a.Page] {
			seen[a.Page] = true
			got += quality[int(a.Page)]
		}
		curve = append(curve, curvePoint{t: a.End.Sub(t0), pages: n, share: got / total})
	}
	return t1.Sub(t0), curve
}

func printPolicies(out io.Writer, o options, q string, urls int, delay time.Duration, politeness string, connect float64, runs []policyRun) {
	fmt.Fprintf(out, "\npolicy experiment, quality = %s: simweb seed %d, %d hosts (names, simweb DNS), %d URLs in the fetch list, latency x%g, connect latency x%g, hazards %s;\n",
		q, o.seed, o.policyHosts, urls, o.policyLatency, connect, o.hazards)
	pol := ""
	if politeness != "" {
		pol = " --politeness " + politeness
	}
	fmt.Fprintf(out, "fetch list: generate --max-per-host %d (each host's best URLs by quality); trawl fetch --server-delay %s%s --max-connections %d (one fetch task)\n\n", o.policyMaxPerHost, delay, pol, o.conns)
	fmt.Fprintf(out, "| %-28s | %6s | %7s | %7s | %7s | %5s | %8s | %5s | %6s | %5s | %6s | %7s |\n",
		"policy", "pages", "crawl", "wall", "pages/s", "x 1st", "p/s 90%", "x 1st", "to 80%", "AUC", "conns", "RSS")
	fmt.Fprintln(out, "|------------------------------|--------|---------|---------|---------|-------|----------|-------|--------|-------|--------|---------|")
	base, base90 := runs[0].rate(), runs[0].rate90() // breadth-first, or keep-alive on
	for _, r := range runs {
		fmt.Fprintf(out, "| %-28s | %6d | %6.1fs | %6.1fs | %7.0f | %5.2f | %8.0f | %5.2f | %5.0f%% | %5.3f | %6d | %3.0f MiB |\n",
			r.label(), r.srv.ok, r.crawl.Seconds(), r.wall.Seconds(), r.rate(), r.rate()/base, r.rate90(), r.rate90()/base90,
			100*r.timeTo(0.8), r.auc(), r.srv.conns, float64(r.rss)/(1<<20))
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "pages: page requests answered 200 (simweb access log); crawl: first request to last response; pages/s over crawl time,")
	fmt.Fprintln(out, "p/s 90%: until 90% of the pages were fetched (without the last hosts' tail); x 1st: over the first row's; conns: TCP connections;")
	fmt.Fprintln(out, "to 80%: share of the crawl time until 80% of the fetch list's total quality was fetched; AUC: area under the quality-share curve over normalized time")
	printBounds(out, o.conns, runs)
}

// printBounds prints what no schedule can beat, from the first run's
// server-side request times: the shortest crawl of the same requests over
// the same connections, and the most pages by a share of the first run's
// crawl time, against each run's pages then.
func printBounds(out io.Writer, conns int, runs []policyRun) {
	first := runs[0]
	st := first.server
	if st.total <= 0 {
		return
	}
	lb := st.makespanBound(conns)
	fmt.Fprintf(out, "\nbounds from the first run's server-side request times (%.1f s in all): no schedule of these requests over %d connections, one per host,\n", st.total.Seconds(), conns)
	fmt.Fprintf(out, "crawls in less than %.1f s (total/%d, longest host %.1f s), so none beats the first row's pages/s over the whole crawl by more than %.2fx;\n",
		lb.Seconds(), conns, st.longestHost().Seconds(),
		first.crawl.Seconds()/lb.Seconds())
	fmt.Fprintln(out, "pages by a share of the first run's crawl time, x the first run's, and the most any schedule knowing every host's speed in advance could have:")
	fmt.Fprintln(out)
	fmt.Fprintf(out, "| %-28s |", "time")
	shares := []float64{0.1, 0.25, 0.5, 0.75}
	for _, f := range shares {
		fmt.Fprintf(out, " %3.0f%% (%5.1fs) |", 100*f, f*first.crawl.Seconds())
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "|------------------------------|")
	for range shares {
		fmt.Fprintf(out, "---------------|")
	}
	fmt.Fprintln(out)
	for _, r := range runs {
		fmt.Fprintf(out, "| %-28s |", r.label())
		for _, f := range shares {
			t := time.Duration(f * float64(first.crawl))
			fmt.Fprintf(out, " %5d (%4.2fx) |", r.pagesAt(t), float64(r.pagesAt(t))/float64(max(1, first.pagesAt(t))))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "| %-28s |", "bound (speeds known)")
	for _, f := range shares {
		t := time.Duration(f * float64(first.crawl))
		b := st.pagesBound(conns, t)
		fmt.Fprintf(out, " %5.0f (%4.2fx) |", b, b/float64(max(1, first.pagesAt(t))))
	}
	fmt.Fprintln(out)
}

// writeCurves writes the runs' curves as CSV (policy, seconds, pages,
// quality share), thinned to at most 2,000 points per run.
func writeCurves(name string, runs []policyRun) error {
	var b strings.Builder
	b.WriteString("policy,seconds,pages,quality_share\n")
	for _, r := range runs {
		for _, p := range thin(r.curve, 2000) {
			fmt.Fprintf(&b, "%s,%.3f,%d,%.6f\n", r.label(), p.t.Seconds(), p.pages, p.share)
		}
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing curves: %w", err)
	}
	return nil
}

// thin keeps at most n points of a curve, evenly spaced, and the last.
func thin(c []curvePoint, n int) []curvePoint {
	if len(c) <= n {
		return c
	}
	out := make([]curvePoint, 0, n+1)
	step := float64(len(c)) / float64(n)
	for i := 0.0; int(i) < len(c); i += step {
		out = append(out, c[int(i)])
	}
	if out[len(out)-1] != c[len(c)-1] {
		out = append(out, c[len(c)-1])
	}
	return out
}
