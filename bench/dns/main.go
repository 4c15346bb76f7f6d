// Command dns is the DNS benchmark harness of trawl:
// lookups of host names drawn Zipf-distributed from a fixed set, against
// a local github.com/miekg/dns server that answers every query after a
// delay (uniform 10–30 ms by default: 20 ms ± 10 ms), all in this
// process on loopback. Each query is answered in its own goroutine (the
// miekg/dns server starts one per UDP packet), so the server is not the
// bottleneck. The same sequence of names is looked up, by the same
// number of concurrent lookers (each doing one lookup after another), by:
//
//   - resolver: package resolver as the fetcher uses it (cache on);
//   - resolver-nocache: the same with the cache off (CacheSize -1): the
//     asynchronous client and the coalescing of concurrent lookups of one
//     name alone;
//   - dnslookup: the plain blocking miekg/dns client trawl used before
//     (bench/dns/dnslookup);
//   - net.Resolver: Go's resolver, pure Go (PreferGo), its Dial pointed at
//     the same server, asked for IPv4 only ("ip4") as the others are.
//
// Every contender starts cold (a new resolver). The baselines are time-
// bounded (-max-time): they stop when the time is up, and the table gives
// the number of lookups they did and their rate. It prints a markdown
// table (lookups/s, p50 and p99 latency per lookup, upstream queries the
// server saw, ratio to net.Resolver) and writes two plots to -out:
// dns-throughput.png (lookups/s) and dns-latency.png (the latency CDF).
//
//	go run ./bench/dns                                  # 1,000,000 lookups over 3,000 names
//	go run ./bench/dns -lookups 200000 -max-time 10s -out /tmp/dns
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/trawl/trawl/bench/dns/dnslookup"
	"github.com/trawl/trawl/resolver"
)

type options struct {
	lookups, names, lookers int
	zipfS                   float64
	delay, jitter, maxTime  time.Duration
	timeout                 time.Duration
	contenders, out         string
	seed                    uint64
}

func main() {
	var o options
	flag.IntVar(&o.lookups, "lookups", 1_000_000, "lookups per contender")
	flag.IntVar(&o.names, "names", 3000, "distinct host names")
	flag.Float64Var(&o.zipfS, "zipf-s", 1, "Zipf exponent s: the name of rank k is drawn with probability proportional to 1/k^s")
	flag.IntVar(&o.lookers, "concurrency", 256, "concurrent lookers, each doing one lookup after another")
	flag.DurationVar(&o.delay, "delay", 20*time.Millisecond, "mean delay of the server's answers")
	flag.DurationVar(&o.jitter, "jitter", 10*time.Millisecond, "the delay is uniform in [delay-jitter, delay+jitter]")
	flag.DurationVar(&o.maxTime, "max-time", 30*time.Second, "time bound of each contender (the baselines do not finish 1,000,000 lookups in reasonable time)")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Second, "per-query time-out of every contender")
	flag.StringVar(&o.contenders, "contenders", "resolver,resolver-nocache,dnslookup,net.Resolver", "contenders to run, comma-separated")
	flag.StringVar(&o.out, "out", "bench-dns-out", "directory for the plots (PNG)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the name sequence and the delays")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runBench(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/dns:", err)
		os.Exit(1)
	}
}

// result is one contender's run.
type result struct {
	name      string
	lookups   int
	failed    int64
	elapsed   time.Duration
	queries   int64
	latencies []time.Duration // sorted
	bounded   bool            // stopped by -max-time
	note      string
}

func (r *result) rate() float64 { return float64(r.lookups) / r.elapsed.Seconds() }

func (r *result) percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(r.latencies)))) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

func runBench(ctx context.Context, o options, out io.Writer) error {
	if o.lookups < 1 || o.names < 1 || o.lookers < 1 || o.zipfS < 0 || o.jitter > o.delay {
		return fmt.Errorf("bad options: lookups, names and concurrency must be positive, zipf-s >= 0, jitter <= delay")
	}
	srv, err := startServer(o)
	if err != nil {
		return err
	}
	defer srv.close()
	names := make([]string, o.names)
	for i := range names {
		names[i] = fmt.Sprintf("h%05d.bench.test.", i)
	}
	seq := zipfSequence(o.lookups, o.names, o.zipfS, o.seed)
	distinct := map[uint16]bool{}
	for _, i := range seq {
		distinct[i] = true
	}
	fmt.Fprintf(out, "DNS bench: %d lookups of %d names (%d distinct drawn, Zipf s=%g), %d concurrent lookers, server delay %v ± %v (uniform), GOMAXPROCS %d, time bound %v per contender\n\n",
		o.lookups, o.names, len(distinct), o.zipfS, o.lookers, o.delay, o.jitter, runtime.GOMAXPROCS(0), o.maxTime)

	var results []*result
	for _, name := range strings.Split(o.contenders, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		lookup, closeFn, note, err := contender(name, srv.addr, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench/dns: %s...\n", name)
		r := measure(ctx, name, lookup, names, seq, o, srv)
		r.note = note
		if closeFn != nil {
			r.note += closeFn()
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "bench/dns: %s: %d lookups in %v (%.0f/s), %d failed, %d queries\n",
			name, r.lookups, r.elapsed.Round(time.Millisecond), r.rate(), r.failed, r.queries)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	table(out, results)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}
	if err := plots(o.out, results); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	fmt.Fprintf(out, "\nplots: %s, %s\n", filepath.Join(o.out, "dns-throughput.png"), filepath.Join(o.out, "dns-latency.png"))
	return nil
}

type lookupFunc func(ctx context.Context, name string) error

// contender returns a contender's lookup function, a function closing it
// (which may return a note for the table) and a note.
func contender(name, addr string, o options) (lookupFunc, func() string, string, error) {
	switch name {
	case "resolver", "resolver-nocache":
		cfg := resolver.Config{Servers: []string{addr}, Timeout: o.timeout}
		if name == "resolver-nocache" {
			cfg.CacheSize = -1
		}
		r, err := resolver.New(cfg)
		if err != nil {
			return nil, nil, "", err
		}
		lookup := func(ctx context.Context, n string) error {
			_, err := r.LookupNetIP(ctx, n)
			return err
		}
		closeFn := func() string {
			st := r.Stats()
			r.Close()
			return fmt.Sprintf("hits %d, misses %d, coalesced %d, timeouts %d, resolution p50 %v p99 %v",
				st.Hits, st.Misses, st.Coalesced, st.Timeouts, st.P50.Round(time.Microsecond), st.P99.Round(time.Microsecond))
		}
		return lookup, closeFn, "", nil
	case "dnslookup":
		c, err := dnslookup.New([]string{addr}, o.timeout)
		if err != nil {
			return nil, nil, "", err
		}
		return func(ctx context.Context, n string) error {
			_, err := c.LookupNetIP(ctx, n)
			return err
		}, nil, "", nil
	case "net.Resolver":
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
		return func(ctx context.Context, n string) error {
			ctx, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			_, err := r.LookupNetIP(ctx, "ip4", n)
			return err
		}, nil, "", nil
	}
	return nil, nil, "", fmt.Errorf("unknown contender %q (resolver, resolver-nocache, dnslookup, net.Resolver)", name)
}

// measure runs o.lookers lookers over seq until it is done or the time
// bound is reached.
func measure(ctx context.Context, name string, lookup lookupFunc, names []string, seq []uint16, o options, srv *server) *result {
	ctx, cancel := context.WithTimeout(ctx, o.maxTime)
	defer cancel()
	q0 := srv.queries.Load()
	var next atomic.Int64
	var failed atomic.Int64
	lat := make([][]time.Duration, o.lookers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range o.lookers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, len(seq)/o.lookers+1)
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(len(seq)) {
					break
				}
				t := time.Now()
				err := lookup(context.Background(), names[seq[i]])
				mine = append(mine, time.Since(t))
				if err != nil {
					failed.Add(1)
				}
			}
			lat[w] = mine
		}()
	}
	wg.Wait()
	r := &result{name: name, elapsed: time.Since(start), failed: failed.Load(), queries: srv.queries.Load() - q0}
	for _, l := range lat {
		r.latencies = append(r.latencies, l...)
	}
	r.lookups = len(r.latencies)
	r.bounded = r.lookups < len(seq)
	slices.Sort(r.latencies)
	return r
}

// zipfSequence draws n name indices in [0, names) with P(k) ∝ 1/(k+1)^s,
// by inverting the cumulative distribution.
func zipfSequence(n, names int, s float64, seed uint64) []uint16 {
	cdf := make([]float64, names)
	sum := 0.0
	for k := range names {
		sum += 1 / math.Pow(float64(k+1), s)
		cdf[k] = sum
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	seq := make([]uint16, n)
	for i := range seq {
		seq[i] = uint16(sort.SearchFloat64s(cdf, rng.Float64()*sum))
	}
	return seq
}

// server answers A queries for hNNNNN.bench.test after the delay.
type server struct {
	addr    string
	queries atomic.Int64
	srvs    []*dns.Server
}

func startServer(o options) (*server, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &server{addr: pc.LocalAddr().String()}
	var seed atomic.Uint64
	h := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		s.queries.Add(1)
		rng := rand.New(rand.NewPCG(o.seed, seed.Add(1)))
		d := o.delay
		if o.jitter > 0 {
			d += time.Duration(rng.Int64N(int64(2*o.jitter)+1)) - o.jitter
		}
		time.Sleep(d)
		m := new(dns.Msg)
		m.SetReply(req)
		if len(req.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			_ = w.WriteMsg(m)
			return
		}
		q := req.Question[0]
		label, _, _ := strings.Cut(strings.ToLower(q.Name), ".")
		n, err := strconv.Atoi(strings.TrimPrefix(label, "h"))
		switch {
		case !strings.HasSuffix(strings.ToLower(q.Name), ".bench.test.") || err != nil:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			a := netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300},
				A: a.AsSlice()})
		}
		_ = w.WriteMsg(m)
	})
	udp := &dns.Server{PacketConn: pc, Handler: h}
	started := make(chan struct{})
	udp.NotifyStartedFunc = func() { close(started) }
	go func() {
		if err := udp.ActivateAndServe(); err != nil {
			slog.Error("dns server", "err", err)
		}
	}()
	<-started
	s.srvs = append(s.srvs, udp)
	return s, nil
}

func (s *server) close() {
	for _, d := range s.srvs {
		_ = d.Shutdown()
	}
}

// table prints the results as markdown.
func table(out io.Writer, rs []*result) {
	var base *result
	for _, r := range rs {
		if r.name == "net.Resolver" {
			base = r
		}
	}
	fmt.Fprintln(out, "| contender | lookups | time | lookups/s | p50 | p99 | upstream queries | failed | vs net.Resolver |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		ratio := "-"
		if base != nil && base.rate() > 0 {
			ratio = fmt.Sprintf("%.1fx", r.rate()/base.rate())
		}
		lookups := strconv.Itoa(r.lookups)
		if r.bounded {
			lookups += " (time-bound)"
		}
		fmt.Fprintf(out, "| %s | %s | %v | %.0f | %v | %v | %d | %d | %s |\n", r.name, lookups,
			r.elapsed.Round(time.Millisecond), r.rate(), fmtDur(r.percentile(0.5)),
			fmtDur(r.percentile(0.99)), r.queries, r.failed, ratio)
	}
	for _, r := range rs {
		if r.note != "" {
			fmt.Fprintf(out, "\n%s: %s", r.name, r.note)
		}
	}
	fmt.Fprintln(out)
}

// fmtDur rounds d to three significant digits or so.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return d.String()
	case d < time.Millisecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.Round(10 * time.Microsecond).String()
}
