package simweb

import (
	"fmt"
	"strings"
	"time"
)

// Config says what web New generates. The same Config always generates
// the same web. Zero numeric fields take their defaults (see DefaultConfig);
// a zero Hazards means no hazards at all.
type Config struct {
	// Seed selects the web.
	Seed uint64
	// Hosts is the number of regular hosts, h0001.sim.test ... (default 100).
	Hosts int
	// Pages is the number of content pages (HTML and PDF) on the regular
	// hosts, spread over them with a heavy tail (default 5000, at least
	// Hosts). Redirects, 404 targets and other special URLs come on top
	// (a few percent more).
	Pages int
	// Epoch is simulated time zero: change processes start here, and a
	// page's first version was created some time before it
	// (default 2026-01-01T00:00:00Z).
	Epoch time.Time
	// SameHostLinks is the probability that a link which is not part of the
	// site's navigation stays on its host (default 0.85).
	SameHostLinks float64
	// Hazards selects the hostile parts of the web (traps, bombs, slow and
	// failing hosts, crawl delays, links to hostile hosts).
	Hazards Hazard
	// Topics, if 2 or more (at most MaxTopics), makes a topical web for
	// evaluating focused crawlers: every host and content page has one of
	// Topics topics, pages are written in their topic's words, links
	// mostly stay within a topic, and some hosts of every topic are
	// reachable only through pages of other topics (see the package
	// documentation, "# Topics"). 0 leaves the web without topics, exactly
	// as it is generated without this field.
	Topics int
	// Change selects how the pages' change rates are drawn (see
	// ChangeModel and the package documentation, "# Change models"). ""
	// and ChangeDefault give exactly the web generated without this field.
	Change ChangeModel
}

// Defaults for Config's zero fields.
const (
	DefaultHosts         = 100
	DefaultPages         = 5000
	DefaultSameHostLinks = 0.85
)

// DefaultEpoch is the default Config.Epoch.
func DefaultEpoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// DefaultConfig is the configuration `trawl simweb serve` starts from:
// default sizes and HazardsDefault.
func DefaultConfig() Config {
	return Config{
		Seed:          1,
		Hosts:         DefaultHosts,
		Pages:         DefaultPages,
		Epoch:         DefaultEpoch(),
		SameHostLinks: DefaultSameHostLinks,
		Hazards:       HazardsDefault,
	}
}

// MaxHosts bounds Config.Hosts (host names have at least four digits and
// each host needs its own 127.0.x.y address).
const MaxHosts = 60000

// MaxPages bounds Config.Pages.
const MaxPages = 20_000_000

// withDefaults fills zero fields and checks the result.
func (c Config) withDefaults() (Config, error) {
	if c.Hosts == 0 {
		c.Hosts = DefaultHosts
	}
	if c.Pages == 0 {
		c.Pages = max(DefaultPages, c.Hosts)
	}
	if c.Epoch.IsZero() {
		c.Epoch = DefaultEpoch()
	}
	c.Epoch = c.Epoch.UTC()
	if c.SameHostLinks == 0 {
		c.SameHostLinks = DefaultSameHostLinks
	}
	switch {
	case c.Hosts < 1 || c.Hosts > MaxHosts:
		return c, fmt.Errorf("simweb: Hosts = %d, want 1..%d", c.Hosts, MaxHosts)
	case c.Pages < c.Hosts:
		return c, fmt.Errorf("simweb: Pages = %d is less than Hosts = %d (every host has a home page)", c.Pages, c.Hosts)
	case c.Pages > MaxPages:
		return c, fmt.Errorf("simweb: Pages = %d, want at most %d", c.Pages, MaxPages)
	case c.SameHostLinks < 0 || c.SameHostLinks > 1:
		return c, fmt.Errorf("simweb: SameHostLinks = %v, want 0..1", c.SameHostLinks)
	case c.Topics < 0 || c.Topics == 1 || c.Topics > MaxTopics:
		return c, fmt.Errorf("simweb: Topics = %d, want 0 (no topics) or 2..%d", c.Topics, MaxTopics)
	case !c.Change.valid():
		return c, fmt.Errorf("simweb: Change = %q, want one of %s", string(c.Change), changeModelList)
	case c.Hazards&^HazardsAll != 0:
		return c, fmt.Errorf("simweb: unknown hazard bits %#x", uint32(c.Hazards&^HazardsAll))
	}
	return c, nil
}

// Hazard is a set of hostile features of the web.
type Hazard uint32

// The hazards.
const (
	// HazardSlowHosts makes about 3% of hosts slow: seconds before the
	// first byte, then 16 KiB/s.
	HazardSlowHosts Hazard = 1 << iota
	// HazardFailingHosts adds hosts that are down (503 to everything),
	// flaky hosts (outage days with 503, and connection resets), and hosts
	// where some pages always answer 500.
	HazardFailingHosts
	// HazardTraps adds a calendar spider trap (infinite next/previous month
	// links), a redirect loop and a redirect chain longer than common
	// redirect limits.
	HazardTraps
	// HazardBombs adds a 5 MiB page and a gzip bomb (a few MiB on the wire
	// that inflate to 3 GiB).
	HazardBombs
	// HazardCrawlDelay puts Crawl-delay (1 or 2 s) in the robots.txt of
	// about 10% of the small hosts.
	HazardCrawlDelay
	// HazardHostileLinks makes regular pages link to the hostile hosts
	// (blackhole, trickle, slowheaders, reset). The hostile hosts exist and
	// answer either way.
	HazardHostileLinks
)

// Hazard sets.
const (
	HazardsNone    Hazard = 0
	HazardsDefault        = HazardSlowHosts | HazardFailingHosts | HazardTraps | HazardBombs | HazardCrawlDelay
	HazardsAll            = HazardsDefault | HazardHostileLinks
)

var hazardNames = []struct {
	h    Hazard
	name string
}{
	{HazardSlowHosts, "slow"},
	{HazardFailingHosts, "failing"},
	{HazardTraps, "traps"},
	{HazardBombs, "bombs"},
	{HazardCrawlDelay, "crawl-delay"},
	{HazardHostileLinks, "hostile-links"},
}

// String lists the hazards by name, comma-separated ("none" if empty).
func (h Hazard) String() string {
	if h == 0 {
		return "none"
	}
	var parts []string
	for _, n := range hazardNames {
		if h&n.h != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, ",")
}

// ParseHazards parses a comma-separated list of hazard names (slow,
// failing, traps, bombs, crawl-delay, hostile-links) or one of "none",
// "default", "all". A name prefixed with "-" removes it:
// "default,-crawl-delay".
func ParseHazards(s string) (Hazard, error) {
	var h Hazard
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		remove := strings.HasPrefix(f, "-")
		f = strings.TrimPrefix(f, "-")
		var bits Hazard
		switch f {
		case "":
			continue
		case "none":
		case "default":
			bits = HazardsDefault
		case "all":
			bits = HazardsAll
		default:
			found := false
			for _, n := range hazardNames {
				if n.name == f {
					bits, found = n.h, true
				}
			}
			if !found {
				return 0, fmt.Errorf("simweb: unknown hazard %q (want slow, failing, traps, bombs, crawl-delay, hostile-links, none, default or all)", f)
			}
		}
		if remove {
			h &^= bits
		} else {
			h |= bits
		}
	}
	return h, nil
}
