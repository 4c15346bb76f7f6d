package jobs

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/resolver"
	"github.com/trawl/trawl/simweb"
)

// startHostileDNS serves DNS on loopback in front of simweb's server
// (upstream): every UDP answer for a real name is truncated (TC, no
// records) so that only TCP gets it; garbage.<domain> gets junk bytes and
// a reply with a wrong id; silent.<domain> gets nothing.
func startHostileDNS(t *testing.T, upstream string) string {
	t.Helper()
	var pc net.PacketConn
	var l net.Listener
	var err error
	for range 20 { // the TCP port of a free UDP port may be taken
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		if len(req.Question) != 1 {
			return
		}
		name := strings.ToLower(req.Question[0].Name)
		udp := w.RemoteAddr().Network() == "udp"
		switch {
		case name == "silent."+simweb.Domain+".":
			return
		case name == "garbage."+simweb.Domain+".":
			b, _ := req.Pack()
			_, _ = w.Write(append(b[:2:2], []byte("\x85\x00junk junk junk junk junk")...))
			m := new(dns.Msg)
			m.SetReply(req)
			m.Id++
			_ = w.WriteMsg(m)
			return
		}
		in, err := dns.Exchange(req, upstream)
		if err != nil {
			return
		}
		if udp {
			m := new(dns.Msg)
			m.SetReply(req)
			m.Truncated = true
			_ = w.WriteMsg(m)
			return
		}
		in.Id = req.Id
		_ = w.WriteMsg(in)
	})
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: l, Handler: h}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return pc.LocalAddr().String()
}

// TestFetchBadDNS fetches a synthetic web through a DNS server that
// truncates every UDP answer, answers garbage for one host and never
// answers for another: the real hosts' pages are fetched as usual (the
// resolver asks again over TCP: no URL of theirs has a DNS error), the
// bad hosts' URLs are fetch_retry with the DNS error, in bounded time,
// and the dns_* counters record it.
func TestFetchBadDNS(t *testing.T) {
	c := simweb.DefaultConfig()
	c.Seed, c.Hosts, c.Pages, c.Hazards = 5, 4, 40, 0
	w, err := simweb.New(c)
	if err != nil {
		t.Fatal(err)
	}
	now := c.Epoch.AddDate(0, 0, 1)
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0", Start: now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hostile := startHostileDNS(t, srv.DNSAddr())

	var good []string // pages of hosts that answer normally
	for id := range w.NumPages() {
		if w.Host(w.Page(id).Host).Role == simweb.RoleNormal {
			good = append(good, srv.URL(id))
		}
	}
	u, err := url.Parse(good[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{"http://garbage." + simweb.Domain + ":" + u.Port() + "/",
		"http://silent." + simweb.Domain + ":" + u.Port() + "/a", "http://silent." + simweb.Domain + ":" + u.Port() + "/b"}
	env := testEnv(t)
	gen := generateAll(t, env, append(append([]string(nil), good...), bad...), now, 1)
	res, err := Fetch(context.Background(), env, FetchOptions{Segment: gen.Segment, Agent: "trawl-test", NoServerDelay: true,
		AllowPrivate: true, DNSServers: []string{hostile}, DNS: resolver.Config{Timeout: 200 * time.Millisecond, Retries: 1},
		ConnectTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, MaxConnections: 8, NoExceptionLimit: true,
		Now: now, NoProgressLog: true})
	if err != nil {
		t.Fatal(err)
	}
	fetched, _ := readFetch(t, gen.Segment)
	success := 0
	for _, g := range good {
		f, ok := fetched[g]
		if !ok || strings.Contains(f.Message, "dns") || strings.Contains(f.Message, "resolve") {
			t.Errorf("%s: %v %q, want no DNS error", g, f.Status, f.Message)
		}
		if f.Status == crawldb.StatusFetchSuccess {
			success++
		}
	}
	for _, b := range bad {
		f, ok := fetched[b]
		if !ok || f.Status != crawldb.StatusFetchRetry || !strings.Contains(f.Message, "dns") {
			t.Errorf("%s: %v %q, want fetch_retry with the DNS error", b, f.Status, f.Message)
		}
	}
	if msg := fetched[bad[1]].Message; !strings.Contains(msg, "timed out") {
		t.Errorf("the silent server's error does not say it timed out: %q", msg)
	}
	if msg := fetched[bad[0]].Message; !strings.Contains(msg, "malformed or mismatched replies ignored") {
		t.Errorf("the garbage server's error does not say replies were ignored: %q", msg)
	}
	g := func(name string) int64 { return res.Counters.Get(JobFetch, name) }
	// Every name is asked upstream at least once (by the fetcher's prefetch
	// at run start, so the lookups themselves may all be hits).
	if g("dns_tcp") < int64(c.Hosts) || g("dns_ignored") < 2 || g("dns_timeouts") < 2 || g("dns_queries") < int64(c.Hosts)+2 {
		t.Errorf("dns counters: tcp %d, ignored %d, timeouts %d, queries %d", g("dns_tcp"), g("dns_ignored"), g("dns_timeouts"), g("dns_queries"))
	}
	if success < len(good)/2 || res.Fetched != int64(success) {
		t.Errorf("%d of %d normal pages fetched (result: %d)", success, len(good), res.Fetched)
	}
}
