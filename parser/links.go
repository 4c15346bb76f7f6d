package parser

import (
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// linkChecker applies the outlink checks of one page.
type linkChecker struct {
	p        *Parser
	page     string // the page's normalized URL
	host     string
	domain   string
	byDomain bool
}

func (p *Parser) newChecker(page string) linkChecker {
	c := linkChecker{p: p, page: page, host: urlutil.Host(page), byDomain: p.o.Scope == urlutil.ScopeDomain}
	if c.byDomain {
		c.domain = urlutil.DomainOfHost(c.host)
	}
	return c
}

// check returns "" if the normalized link u is kept, else the reason it is
// dropped.
func (c *linkChecker) check(u string) string {
	if u == c.page {
		return "self"
	}
	o := &c.p.o
	if o.IgnoreExternalLinks || o.IgnoreInternalLinks {
		h := urlutil.Host(u)
		same := h != "" && h == c.host
		if !same && c.byDomain && h != "" {
			same = urlutil.DomainOfHost(h) == c.domain
		}
		if o.IgnoreExternalLinks && !same {
			return "external"
		}
		if o.IgnoreInternalLinks && same {
			return "internal"
		}
	}
	if ok, reason := o.Scope.Check(c.page, u); !ok {
		return reason
	}
	if o.Filter != nil {
		if ok, reason := o.Filter.Filter(u); !ok {
			return "filter-" + reason
		}
	}
	return ""
}

// resolveLinks resolves, checks, deduplicates and caps the page's links,
// and resolves <base>, the canonical URL and the refresh target.
func (p *Parser) resolveLinks(res *Result, st *htmlState, page string) {
	// res.BaseURL is normalized, so this cannot fail; if it did, every
	// link would be invalid, as ResolveReference would make it.
	base, baseErr := p.norm.Base(res.BaseURL)
	if st.hasBase && baseErr == nil {
		if b, err := base.Resolve(st.baseHref); err == nil {
			res.BaseURL = b
			base, baseErr = p.norm.Base(b)
		}
	}
	resolve := func(href string) (string, error) {
		if baseErr != nil {
			return "", baseErr
		}
		return base.Resolve(href)
	}
	if st.canonical != "" {
		if u, err := resolve(st.canonical); err == nil {
			res.Canonical = u
		}
	}
	stats := &res.Links
	stats.Found = len(st.links) + st.overflow + st.nofollowLinks
	stats.drop("limit", st.overflow)
	stats.drop("nofollow", st.nofollowLinks)
	c := p.newChecker(page)
	n := len(st.links)
	if p.maxOut >= 0 {
		n = min(n+1, p.maxOut)
	}
	out := make([]segment.Outlink, 0, n)
	if st.seen == nil {
		st.seen = make(map[string]int, len(st.links)+1)
	}
	seen := st.seen // URL -> index in out, or -1 if dropped; cleared by reset

	trace := p.o.Trace
	if st.hasRefresh {
		stats.Found++
		if u, err := resolve(st.refresh); err != nil {
			stats.drop("invalid", 1)
			if trace != nil {
				trace(LinkTrace{Href: st.refresh, Refresh: true, Err: err, Dropped: "invalid"})
			}
		} else {
			res.RefreshURL, res.RefreshDelay = u, st.refreshDelay
			reason := c.check(u)
			if reason != "" {
				seen[u] = -1
				stats.drop(reason, 1)
			} else {
				res.Redirect = u
				seen[u] = 0
				out = append(out, segment.Outlink{URL: u})
			}
			if trace != nil {
				trace(LinkTrace{Href: st.refresh, Refresh: true, URL: u, Dropped: reason})
			}
		}
	}
	for i := range st.links {
		l := &st.links[i]
		u, err := resolve(l.href)
		reason := ""
		switch j, dup := seen[u]; {
		case err != nil:
			reason = "invalid"
		case dup:
			reason = "duplicate"
			if j >= 0 && out[j].Anchor == "" && l.anchor != "" {
				out[j].Anchor = l.anchor
			}
		case p.maxOut >= 0 && len(out) >= p.maxOut:
			reason = "cap"
		default:
			if reason = c.check(u); reason != "" {
				seen[u] = -1
			} else {
				seen[u] = len(out)
				out = append(out, segment.Outlink{URL: u, Anchor: l.anchor})
			}
		}
		if reason != "" {
			stats.drop(reason, 1)
		}
		if trace != nil {
			trace(LinkTrace{Href: l.href, Anchor: l.anchor, URL: u, Err: err, Dropped: reason})
		}
	}
	res.Outlinks = out
	stats.Kept = len(out)
}
