// Package resolvertest serves DNS for tests, as net/http/httptest serves
// HTTP: a real miekg/dns server on loopback answering from a fixed map of
// names to IPv4 addresses, so that code which resolves through package
// resolver (generate's partition by IP, the fetcher) can be tested against
// a real DNS exchange without simweb.
package resolvertest

import (
	"maps"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Zone is a DNS server on 127.0.0.1 (UDP) started by Serve.
type Zone struct {
	// Addr is the server's address (host:port), for a resolver's
	// servers.
	Addr string

	mu    sync.Mutex
	asked map[string]int
}

// Serve starts a zone: a name of addrs (lower case, without the final
// dot) gets its A records in the order given, any other name NXDOMAIN;
// other query types of a known name get an empty answer. The server stops
// when the test ends.
func Serve(t testing.TB, addrs map[string][]string) *Zone {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z := &Zone{Addr: pc.LocalAddr().String(), asked: map[string]int{}}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		if len(req.Question) != 1 {
			return
		}
		q := req.Question[0]
		name := strings.TrimSuffix(strings.ToLower(q.Name), ".")
		z.mu.Lock()
		z.asked[name]++
		z.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(req)
		ips, ok := addrs[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		if q.Qtype == dns.TypeA {
			for _, ip := range ips {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300},
					A: net.ParseIP(ip).To4()})
			}
		}
		_ = w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: h}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z
}

// Queries returns how many queries each name got so far.
func (z *Zone) Queries() map[string]int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return maps.Clone(z.asked)
}
