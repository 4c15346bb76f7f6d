package simweb

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// DNS behaviour: every host of the web that has a server answers an A
// record (its own 127.0.x.y with IPPerHost, else the main listener's
// address); other names get NXDOMAIN. Two names misbehave on purpose, for
// resolver tests: DNSTimeoutName is never answered and DNSServfailName
// gets SERVFAIL.
const (
	DNSTimeoutName  = "timeout." + Domain
	DNSServfailName = "servfail." + Domain
	dnsTTL          = 300
	dnsNegTTL       = 60
)

// DNSQuery is one query the DNS server saw.
type DNSQuery struct {
	Time   time.Time `json:"time"`
	Name   string    `json:"name"`
	Type   string    `json:"type"`
	Rcode  string    `json:"rcode"` // "NOERROR", "NXDOMAIN", "SERVFAIL", "" if not answered
	Net    string    `json:"net"`   // "udp" or "tcp"
	Remote string    `json:"remote"`
}

// dnsLog keeps the most recent DNS queries.
type dnsLog struct {
	mu    sync.Mutex
	limit int
	ring  []DNSQuery
	head  int
}

func newDNSLog(limit int) *dnsLog {
	if limit <= 0 {
		limit = DefaultAccessLogLimit
	}
	return &dnsLog{limit: limit}
}

func (l *dnsLog) add(q DNSQuery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) < l.limit {
		l.ring = append(l.ring, q)
		return
	}
	l.ring[l.head] = q
	l.head = (l.head + 1) % l.limit
}

func (l *dnsLog) entries() []DNSQuery {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]DNSQuery, 0, len(l.ring))
	out = append(out, l.ring[l.head:]...)
	return append(out, l.ring[:l.head]...)
}

// DNSLog returns the DNS queries seen (the most recent AccessLogLimit), in
// order.
func (s *Server) DNSLog() []DNSQuery { return s.dnsLog.entries() }

// startDNS binds UDP and TCP on the same port and serves DNS on both.
// dnsReadBuffer is the receive buffer asked for the DNS server's UDP
// socket.
const dnsReadBuffer = 4 << 20

func (s *Server) startDNS(addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("simweb: dns address %q: %w", addr, err)
	}
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return fmt.Errorf("simweb: dns listen udp %s: %w", addr, err)
		}
		if uc, ok := pc.(*net.UDPConn); ok {
			// A crawler's resolver sends hundreds of queries at once;
			// the default receive buffer (about 200 KiB, some 270
			// queries) would drop the rest. Best effort: the kernel caps
			// it at net.core.rmem_max.
			_ = uc.SetReadBuffer(dnsReadBuffer)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			pc.Close()
			if portStr == "0" && attempt < 8 && errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			return fmt.Errorf("simweb: dns listen tcp on port %d: %w", port, err)
		}
		s.dnsAddr = pc.LocalAddr().String()
		handler := dns.HandlerFunc(s.serveDNS)
		udp := &dns.Server{PacketConn: pc, Handler: handler}
		tcp := &dns.Server{Listener: l, Handler: handler}
		for _, d := range []*dns.Server{udp, tcp} {
			started := make(chan struct{})
			d.NotifyStartedFunc = func() { close(started) }
			errc := make(chan error, 1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				errc <- d.ActivateAndServe()
			}()
			select {
			case <-started:
				s.dnsSrvs = append(s.dnsSrvs, d)
			case err := <-errc:
				return fmt.Errorf("simweb: dns server: %w", err)
			}
		}
		return nil
	}
}

// answerAddr is the address DNS gives for host hi.
func (s *Server) answerAddr(hi int32) netip.Addr {
	if s.addr.IPPerHost {
		return s.web.hosts[hi].ip
	}
	ap, err := netip.ParseAddrPort(s.mainAddr)
	if err != nil {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return ap.Addr()
}

func (s *Server) serveDNS(rw dns.ResponseWriter, req *dns.Msg) {
	// Queries are logged before the reply is sent, so that a client that
	// has its answer finds the query in the log.
	q := DNSQuery{Time: time.Now(), Net: rw.RemoteAddr().Network(), Remote: rw.RemoteAddr().String()}
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		q.Rcode = dns.RcodeToString[m.Rcode]
		s.dnsLog.add(q)
		_ = rw.WriteMsg(m)
		return
	}
	qq := req.Question[0]
	q.Name, q.Type = qq.Name, dns.TypeToString[qq.Qtype]
	name := strings.ToLower(strings.TrimSuffix(qq.Name, "."))
	soa := &dns.SOA{
		Hdr: dns.RR_Header{Name: Domain + ".", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: dnsNegTTL},
		Ns:  "ns." + Domain + ".", Mbox: "hostmaster." + Domain + ".",
		Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: dnsNegTTL,
	}
	hi, known := s.web.byName[name]
	switch {
	case name == DNSTimeoutName:
		s.dnsLog.add(q)
		return // never answered
	case name == DNSServfailName:
		m.Rcode = dns.RcodeServerFailure
	case !known && name != Domain:
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, soa)
	case !known: // the zone apex
		m.Ns = append(m.Ns, soa)
	default:
		ip := s.answerAddr(hi)
		hdr := dns.RR_Header{Name: qq.Name, Class: dns.ClassINET, Ttl: dnsTTL}
		switch {
		case ip.Is4() && (qq.Qtype == dns.TypeA || qq.Qtype == dns.TypeANY):
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: ip.AsSlice()})
		case ip.Is6() && (qq.Qtype == dns.TypeAAAA || qq.Qtype == dns.TypeANY):
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()})
		default:
			m.Ns = append(m.Ns, soa) // NODATA
		}
	}
	q.Rcode = dns.RcodeToString[m.Rcode]
	s.dnsLog.add(q)
	if err := rw.WriteMsg(m); err != nil {
		s.log.Debug("simweb: dns write", "err", err)
	}
}
