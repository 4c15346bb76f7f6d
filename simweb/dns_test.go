package simweb

import (
	"bytes"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func portString(p int) string { return strconv.Itoa(p) }

func query(t *testing.T, c *dns.Client, server, name string, qtype uint16) (*dns.Msg, error) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := c.Exchange(m, server)
	return r, err
}

func TestDNS(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{DNSAddr: "127.0.0.1:0"})
	if s.DNSAddr() == "" {
		t.Fatal("no DNS address")
	}
	udp := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	tcp := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	for _, c := range []*dns.Client{udp, tcp} {
		for _, name := range []string{"h0001.sim.test", "H0060.SIM.TEST", "blackhole.sim.test", "reset.sim.test"} {
			r, err := query(t, c, s.DNSAddr(), name, dns.TypeA)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Net, name, err)
			}
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) != 1 {
				t.Fatalf("%s %s: %v", c.Net, name, r)
			}
			a, ok := r.Answer[0].(*dns.A)
			if !ok || !a.A.Equal([]byte{127, 0, 0, 1}) || a.Hdr.Ttl != dnsTTL {
				t.Fatalf("%s %s: answer %v", c.Net, name, r.Answer[0])
			}
		}
	}
	for _, name := range []string{"gone-001.sim.test", "h0061.sim.test", "nosuch.sim.test", "example.com", "h0001.sim.test.example.com"} {
		r, err := query(t, udp, s.DNSAddr(), name, dns.TypeA)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 || len(r.Ns) != 1 {
			t.Errorf("%s: %v, want NXDOMAIN with an SOA", name, r)
		}
	}
	// A known name without that record type: NODATA.
	r, err := query(t, udp, s.DNSAddr(), "h0002.sim.test", dns.TypeAAAA)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Errorf("AAAA: %v %v", r, err)
	}
	r, err = query(t, udp, s.DNSAddr(), DNSServfailName, dns.TypeA)
	if err != nil || r.Rcode != dns.RcodeServerFailure {
		t.Errorf("%s: %v %v", DNSServfailName, r, err)
	}
	quick := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
	if r, err := query(t, quick, s.DNSAddr(), DNSTimeoutName, dns.TypeA); err == nil {
		t.Errorf("%s answered: %v", DNSTimeoutName, r)
	}
	log := s.DNSLog()
	if len(log) < 16 {
		t.Fatalf("DNS log has %d entries", len(log))
	}
	last := log[len(log)-1]
	if last.Name != DNSTimeoutName+"." || last.Rcode != "" || last.Type != "A" || last.Net != "udp" {
		t.Errorf("last DNS log entry: %+v", last)
	}
	if first := log[0]; first.Name != "h0001.sim.test." || first.Rcode != "NOERROR" {
		t.Errorf("first DNS log entry: %+v", first)
	}
}

// TestIPPerHost serves each host on its own address: a client with no DNS
// or dial hook crawls by address, and DNS answers with the addresses.
func TestIPPerHost(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{IPPerHost: true, DNSAddr: "127.0.0.1:0"})
	a := s.Addressing()
	if !a.IPPerHost || a.Port == 0 {
		t.Fatalf("addressing %+v", a)
	}
	plain := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, hi := range []int{0, 1, 2, w.regular - 1} {
		h := &w.hosts[hi]
		if h.role != RoleNormal && h.role != RoleHTTP10 {
			continue
		}
		u := s.URL(int(h.home))
		want := "http://" + h.ip.String() + ":" + portString(a.Port) + "/"
		if u != want || s.HostAddr(hi) != h.ip.String()+":"+portString(a.Port) {
			t.Fatalf("host %d URL %q, want %q", hi, u, want)
		}
		resp, body := get(t, plain, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		wantBody, _ := w.newRenderer().body(h.home, 0, a)
		if !bytes.Equal(body, wantBody) {
			t.Fatalf("%s: body differs", u)
		}
		// Cross-host links name hosts by address too.
		if bytes.Contains(body, []byte(".sim.test")) && !bytes.Contains(body, []byte("gone-")) {
			t.Errorf("%s: page names hosts by name: %s", u, body)
		}
		r, err := query(t, &dns.Client{Timeout: 5 * time.Second}, s.DNSAddr(), h.name, dns.TypeA)
		if err != nil || len(r.Answer) != 1 || !r.Answer[0].(*dns.A).A.Equal(h.ip.AsSlice()) {
			t.Fatalf("DNS %s: %v %v", h.name, r, err)
		}
	}
	idle(t, s)
	for _, e := range s.AccessLog().Entries() {
		hi, _ := w.HostByName(e.Host)
		if ap, err := netip.ParseAddrPort(e.Local); err != nil || ap.Addr() != w.hosts[hi].ip {
			t.Errorf("request for %s came in on %s", e.Host, e.Local)
		}
	}
	// The main listener still routes by Host header, names or addresses.
	c := client(s)
	for _, hostHdr := range []string{w.hosts[1].name, w.hosts[1].ip.String() + ":" + portString(a.Port)} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.HTTPAddr()+"/robots.txt", nil)
		req.Host = hostHdr
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != w.hosts[1].robots.status {
			t.Errorf("Host %s on the main listener: %d", hostHdr, resp.StatusCode)
		}
	}
	// A second server with IPPerHost on a free port picks another one.
	s2 := serve(t, w, ServeOptions{IPPerHost: true})
	if s2.Addressing().Port == a.Port {
		t.Errorf("two servers on port %d", a.Port)
	}
	if !strings.HasPrefix(s2.HTTPAddr(), "127.0.0.1:") {
		t.Errorf("main listener %s", s2.HTTPAddr())
	}
}
