package mapreduce

import (
	"net"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// fnv1a is 32-bit FNV-1a over s. It is part of the on-disk contract: the
// partition of a key must not change between processes or versions, or the
// parts of an output written by different trawl builds would disagree.
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// HashPartitioner assigns key to partition FNV-1a-32(key) mod n. It is
// stable across processes, machines and trawl versions (unlike Go's map
// hash), so both engines and every task agree.
func HashPartitioner(key string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(fnv1a(key) % uint32(n))
}

// HostPartitioner assigns a URL key by the hash of its host, so all URLs of
// a host land in one partition (fetch lists: one host, one fetcher queue).
// A key that is not an absolute URL with a host hashes whole. The host is
// taken as written (no normalization: keys are normalized URLs already),
// without user info or port.
func HostPartitioner(key string, n int) int {
	if h, ok := hostOf(key); ok {
		return HashPartitioner(h, n)
	}
	return HashPartitioner(key, n)
}

// DomainPartitioner assigns a URL key by the hash of its host's registered
// domain (eTLD+1 by the public suffix list, golang.org/x/net/publicsuffix),
// so all hosts of a site land in one partition. IP addresses and hosts with
// no registered domain hash as the host; non-URLs hash whole.
func DomainPartitioner(key string, n int) int {
	h, ok := hostOf(key)
	if !ok {
		return HashPartitioner(key, n)
	}
	if net.ParseIP(strings.Trim(h, "[]")) == nil {
		if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
			h = d
		}
	}
	return HashPartitioner(h, n)
}

// hostOf extracts the host of an absolute URL "scheme://[userinfo@]host[:port]/...".
func hostOf(u string) (string, bool) {
	i := strings.Index(u, "://")
	if i <= 0 {
		return "", false
	}
	rest := u[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			rest = rest[:j+1]
		}
	} else if j := strings.LastIndexByte(rest, ':'); j >= 0 {
		rest = rest[:j]
	}
	if rest == "" {
		return "", false
	}
	return rest, true
}
