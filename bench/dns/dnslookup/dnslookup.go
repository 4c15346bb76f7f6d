// Package dnslookup resolves host names with plain DNS queries to given
// name servers (github.com/miekg/dns): an A query, then AAAA if there is
// no A record, over UDP with a TCP retry when the answer is truncated,
// following CNAME chains. It has no cache and blocks for each lookup. The
// fetch job resolves with package resolver (cached and asynchronous); this
// client is the plain blocking baseline of the DNS benchmark (bench/dns).
package dnslookup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// DefaultTimeout bounds one query to one server.
const DefaultTimeout = 5 * time.Second

// maxCNAME bounds the CNAME chain followed.
const maxCNAME = 8

// Client resolves names with the name servers it was made with. It is
// safe for concurrent use.
type Client struct {
	servers []string
	timeout time.Duration
	udp     *dns.Client
	tcp     *dns.Client
}

// New returns a Client asking servers ("host:port", or "host" for port
// 53) in order, each query within timeout (0 means DefaultTimeout).
func New(servers []string, timeout time.Duration) (*Client, error) {
	if len(servers) == 0 {
		return nil, errors.New("dnslookup: no name servers")
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{timeout: timeout,
		udp: &dns.Client{Net: "udp", Timeout: timeout},
		tcp: &dns.Client{Net: "tcp", Timeout: timeout}}
	for _, s := range servers {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
				s = "[" + s + "]"
			}
			s = net.JoinHostPort(strings.Trim(s, "[]"), "53")
		}
		host, _, _ := net.SplitHostPort(s)
		if _, err := netip.ParseAddr(host); err != nil {
			return nil, fmt.Errorf("dnslookup: name server %q is not an IP address (with an optional port)", s)
		}
		c.servers = append(c.servers, s)
	}
	if len(c.servers) == 0 {
		return nil, errors.New("dnslookup: no name servers")
	}
	return c, nil
}

// Error is a failed lookup.
type Error struct {
	Host string
	// NotFound is true when a server said the name does not exist
	// (NXDOMAIN) or has no address (NODATA).
	NotFound bool
	Err      error
}

func (e *Error) Error() string {
	if e.NotFound {
		return fmt.Sprintf("dns: %s: no such host (%v)", e.Host, e.Err)
	}
	return fmt.Sprintf("dns: %s: %v", e.Host, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// LookupNetIP returns host's addresses: its A records, or its AAAA
// records if it has no A record. The servers are asked in turn until one
// answers; NXDOMAIN from a server is final.
func (c *Client) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	name := dns.Fqdn(strings.ToLower(strings.TrimSuffix(host, ".")))
	if _, ok := dns.IsDomainName(name); !ok {
		return nil, &Error{Host: host, NotFound: true, Err: errors.New("not a domain name")}
	}
	addrs, err := c.lookupType(ctx, host, name, dns.TypeA)
	if err == nil && len(addrs) > 0 {
		return addrs, nil
	}
	var e *Error
	if err != nil && !(errors.As(err, &e) && e.NotFound && e.Err == errNoData) {
		return nil, err
	}
	addrs, err = c.lookupType(ctx, host, name, dns.TypeAAAA)
	if err != nil {
		return nil, err
	}
	return addrs, nil
}

var errNoData = errors.New("no address records")

// lookupType resolves one record type, following CNAMEs.
func (c *Client) lookupType(ctx context.Context, host, name string, qtype uint16) ([]netip.Addr, error) {
	for range maxCNAME {
		in, err := c.exchange(ctx, name, qtype)
		if err != nil {
			return nil, &Error{Host: host, Err: err}
		}
		switch in.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			return nil, &Error{Host: host, NotFound: true, Err: errors.New("NXDOMAIN")}
		default:
			return nil, &Error{Host: host, Err: fmt.Errorf("server answered %s", dns.RcodeToString[in.Rcode])}
		}
		var addrs []netip.Addr
		cname := ""
		for _, rr := range in.Answer {
			switch v := rr.(type) {
			case *dns.A:
				if a, ok := netip.AddrFromSlice(v.A.To4()); ok && qtype == dns.TypeA {
					addrs = append(addrs, a)
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok && qtype == dns.TypeAAAA {
					addrs = append(addrs, a.Unmap())
				}
			case *dns.CNAME:
				if strings.EqualFold(v.Hdr.Name, name) {
					cname = v.Target
				}
			}
		}
		if len(addrs) > 0 {
			return addrs, nil
		}
		if cname == "" {
			return nil, &Error{Host: host, NotFound: true, Err: errNoData}
		}
		name = cname
	}
	return nil, &Error{Host: host, Err: fmt.Errorf("CNAME chain longer than %d", maxCNAME)}
}

// exchange asks the servers in turn until one answers.
func (c *Client) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	var errs []error
	for _, srv := range c.servers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in, _, err := c.udp.ExchangeContext(ctx, m, srv)
		if err == nil && in.Truncated {
			in, _, err = c.tcp.ExchangeContext(ctx, m, srv)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", srv, err))
			continue
		}
		if in.Rcode == dns.RcodeServerFailure || in.Rcode == dns.RcodeRefused {
			errs = append(errs, fmt.Errorf("%s: %s", srv, dns.RcodeToString[in.Rcode]))
			continue
		}
		return in, nil
	}
	return nil, errors.Join(errs...)
}
