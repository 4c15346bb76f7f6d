package resolver

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Defaults of Config's zero fields.
const (
	DefaultResolvConf       = "/etc/resolv.conf"
	DefaultCacheSize        = 50000
	DefaultRefreshPeriod    = 1800 * time.Second
	DefaultNegativeTTL      = 60 * time.Second
	DefaultTimeout          = 2 * time.Second
	DefaultRetries          = 2
	DefaultQueueSize        = 1024
	DefaultSocketsPerServer = 2
	DefaultMaxCNAME         = 8
	DefaultPrefetchBacklog  = 65536
	// DefaultPrefetchConcurrency bounds a prefetch burst: hundreds of
	// queries sent at once can overflow an upstream's UDP receive buffer
	// (with 512 in flight against a server with Linux's default buffer,
	// about 14% of them were lost and waited out the time-out; with 128,
	// none), while 128 at 20-50 ms an answer still resolve thousands of
	// names a second, ahead of any fetcher's connections.
	DefaultPrefetchConcurrency = 128
)

// Config configures a Resolver. Every zero field takes its default;
// "none" is a No... field of its own (NoNegativeCache, NoRetries), not a
// negative value.
type Config struct {
	// Servers are the upstream name servers: IP addresses, with a port
	// ("127.0.0.1:5353", "[::1]:53") or without (port 53). Empty means
	// the nameserver lines of ResolvConf.
	Servers []string `json:",omitempty"`
	// ResolvConf is the file read when Servers is empty (default
	// /etc/resolv.conf). Without name servers in it (or without the
	// file), 127.0.0.1:53 and [::1]:53 are asked, as Go's resolver does.
	ResolvConf string `json:",omitempty"`
	// CacheSize is the most names cached (default 50,000); negative
	// turns the cache off (concurrent lookups are still coalesced).
	CacheSize int `json:",omitempty"`
	// RefreshPeriod is how long an answer is kept whatever its TTL
	// (default 30 minutes); the first hit after it serves the old answer
	// and refreshes it in the background.
	RefreshPeriod time.Duration `json:",omitempty"`
	// NegativeTTL is how long a failed lookup is cached; 0 means
	// DefaultNegativeTTL (see NoNegativeCache). It must not be negative.
	NegativeTTL time.Duration `json:",omitempty"`
	// NoNegativeCache caches no failed lookup: every lookup of a name
	// that failed asks again. NegativeTTL must then be 0.
	NoNegativeCache bool `json:",omitempty"`
	// Timeout bounds one query to one server (default 2 s).
	Timeout time.Duration `json:",omitempty"`
	// Retries is the number of further attempts after a time-out or a
	// server failure, each to another server when there is one; 0 means
	// DefaultRetries (see NoRetries). It must not be negative.
	Retries int `json:",omitempty"`
	// NoRetries sends each query once. Retries must then be 0.
	NoRetries bool `json:",omitempty"`
	// QueueSize is the capacity of the send queue (default 1,024).
	QueueSize int `json:",omitempty"`
	// SocketsPerServer is the number of UDP sockets to each server
	// (default 2).
	SocketsPerServer int `json:",omitempty"`
	// IPv6 asks for AAAA records too (in parallel with A).
	IPv6 bool `json:",omitempty"`
	// MaxCNAME bounds the CNAME links followed (default 8).
	MaxCNAME int `json:",omitempty"`
	// PrefetchBacklog is the most names Prefetch holds before they are
	// resolved (default 65,536); more are dropped.
	PrefetchBacklog int `json:",omitempty"`
	// PrefetchConcurrency is the most prefetch resolutions at once
	// (default DefaultPrefetchConcurrency, at most QueueSize/2).
	PrefetchConcurrency int `json:",omitempty"`
	// Now is the cache's clock (default time.Now); time-outs use the
	// real clock.
	Now func() time.Time `json:"-"`
	// Log gets debug lines about failing servers (default: none).
	Log *slog.Logger `json:"-"`
}

// Validate checks c as New would, without opening sockets: the servers
// must be IP addresses (or come from a readable resolv.conf), no duration
// or size may be negative where that has no meaning, and a No... field
// goes with a zero value of what it turns off.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns c with its zero fields set and its servers parsed.
func (c Config) withDefaults() (Config, error) {
	if err := c.checkNoFields(); err != nil {
		return c, err
	}
	c.setDefaults()
	if err := c.checkNegative(); err != nil {
		return c, err
	}
	servers, err := c.parseServers()
	if err != nil {
		return c, err
	}
	c.Servers = servers
	return c, nil
}

// checkNoFields checks NegativeTTL and Retries, which must not be
// negative, and must be zero with the No... field that turns them off.
func (c *Config) checkNoFields() error {
	switch {
	case c.NegativeTTL < 0:
		return fmt.Errorf("resolver: negative negative-answer TTL %v (NoNegativeCache caches no failure)", c.NegativeTTL)
	case c.NoNegativeCache && c.NegativeTTL != 0:
		return fmt.Errorf("resolver: a negative-answer TTL of %v and NoNegativeCache at once", c.NegativeTTL)
	case c.Retries < 0:
		return fmt.Errorf("resolver: negative retries %d (NoRetries sends each query once)", c.Retries)
	case c.NoRetries && c.Retries != 0:
		return fmt.Errorf("resolver: %d retries and NoRetries at once", c.Retries)
	}
	return nil
}

// setDefaults sets c's zero fields (but Servers) to their defaults.
func (c *Config) setDefaults() {
	if c.ResolvConf == "" {
		c.ResolvConf = DefaultResolvConf
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.RefreshPeriod == 0 {
		c.RefreshPeriod = DefaultRefreshPeriod
	}
	if c.NegativeTTL == 0 && !c.NoNegativeCache {
		c.NegativeTTL = DefaultNegativeTTL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Retries == 0 && !c.NoRetries {
		c.Retries = DefaultRetries
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.SocketsPerServer == 0 {
		c.SocketsPerServer = DefaultSocketsPerServer
	}
	if c.MaxCNAME == 0 {
		c.MaxCNAME = DefaultMaxCNAME
	}
	if c.PrefetchBacklog == 0 {
		c.PrefetchBacklog = DefaultPrefetchBacklog
	}
	if c.PrefetchConcurrency == 0 {
		c.PrefetchConcurrency = max(1, min(DefaultPrefetchConcurrency, c.QueueSize/2))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// checkNegative checks that no duration or size is negative where that
// has no meaning.
func (c *Config) checkNegative() error {
	switch {
	case c.RefreshPeriod < 0:
		return fmt.Errorf("resolver: negative refresh period %v", c.RefreshPeriod)
	case c.Timeout < 0:
		return fmt.Errorf("resolver: negative timeout %v", c.Timeout)
	case c.QueueSize < 0 || c.SocketsPerServer < 0 || c.MaxCNAME < 0 || c.PrefetchBacklog < 0 || c.PrefetchConcurrency < 0:
		return errors.New("resolver: negative queue size, sockets per server, CNAME depth or prefetch limit")
	}
	return nil
}

// parseServers returns the name servers, Servers or else those of
// ResolvConf, as host:port; blank entries are left out, and there must be
// at least one.
func (c *Config) parseServers() ([]string, error) {
	servers := c.Servers
	if len(servers) == 0 {
		var err error
		if servers, err = resolvConfServers(c.ResolvConf); err != nil {
			return nil, err
		}
	}
	parsed := make([]string, 0, len(servers))
	for _, s := range servers {
		if strings.TrimSpace(s) == "" {
			continue
		}
		p, err := ParseServer(s)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, p)
	}
	if len(parsed) == 0 {
		return nil, errors.New("resolver: no name servers")
	}
	return parsed, nil
}

// resolvConfServers returns the name servers of a resolv.conf file, or
// the loopback ones when it has none or does not exist.
func resolvConfServers(path string) ([]string, error) {
	cc, err := dns.ClientConfigFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return []string{"127.0.0.1:53", "[::1]:53"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resolver: read name servers from %s: %w", path, err)
	}
	if len(cc.Servers) == 0 {
		return []string{"127.0.0.1:53", "[::1]:53"}, nil
	}
	port := cc.Port
	if port == "" {
		port = "53"
	}
	out := make([]string, 0, len(cc.Servers))
	for _, s := range cc.Servers {
		out = append(out, net.JoinHostPort(s, port))
	}
	return out, nil
}

// ParseServer checks a name server's address, an IP address with or
// without a port ("10.0.0.1", "10.0.0.1:5353", "::1", "[::1]:53"), and
// returns it as host:port.
func ParseServer(s string) (string, error) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return "", fmt.Errorf("resolver: name server %q: port 0", s)
		}
		return ap.String(), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, 53).String(), nil
	}
	return "", fmt.Errorf("resolver: name server %q is not an IP address with an optional port", s)
}
