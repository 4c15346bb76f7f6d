package simweb

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Domain is the DNS zone of the synthetic web.
const Domain = "sim.test"

// Kind is what a URL of the web is.
type Kind uint8

// The kinds. Home, directory, leaf and document pages are content: they
// answer 200 with a body that changes over time. The others are URLs that
// links point at and that answer something else.
const (
	KindHome         Kind = iota // a host's home page, /
	KindDirectory                // a directory-like index page, /a/b/
	KindLeaf                     // a leaf HTML page, /a/b/c-12.html
	KindDocument                 // a PDF document
	KindRedirect                 // answers 301 or 302 to Target (possibly via a chain)
	KindLoop                     // part of a redirect loop (302 to each other)
	KindMissing                  // answers 404
	KindTrap                     // entry of a calendar spider trap (infinite URL space below it)
	KindHuge                     // a 5 MiB HTML page
	KindBomb                     // a gzip bomb
	KindHostile                  // home of a hostile host (blackhole, trickle, ...)
	KindUnresolvable             // on a host whose name does not resolve (NXDOMAIN)
	numKinds
)

var kindNames = [numKinds]string{"home", "directory", "leaf", "document", "redirect", "redirect_loop", "missing", "trap", "huge", "gzip_bomb", "hostile", "unresolvable"}

// String is the kind's name as written in the truth file.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsContent reports whether pages of kind k have content that changes.
func (k Kind) IsContent() bool { return k <= KindDocument }

// Genre is the kind of site a host is; it sets how fast its pages change
// (see the package documentation).
type Genre uint8

// The genres, after the top-level domains of the web-change studies.
const (
	GenreNews     Genre = iota // news-like: front pages change hourly
	GenreCommerce              // .com-like
	GenreOrg                   // .org / personal / blog-like
	GenreEduGov                // .edu / .gov-like: mostly static
	numGenres
)

var genreNames = [numGenres]string{"news", "commerce", "org", "edu_gov"}

// String is the genre's name as written in the truth file.
func (g Genre) String() string {
	if g < numGenres {
		return genreNames[g]
	}
	return "genre(" + strconv.Itoa(int(g)) + ")"
}

// ChangeClass is the component of the change-rate mixture a page's rate was
// drawn from.
type ChangeClass uint8

// The change classes, fastest first.
const (
	ClassHourly  ChangeClass = iota // median 12 changes a day
	ClassDaily                      // median 1.5 a day
	ClassWeekly                     // median one per 6.7 days
	ClassMonthly                    // median one per 30 days
	ClassYearly                     // median one per 365 days
	ClassStatic                     // never changes
	numClasses
)

var classNames = [numClasses]string{"hourly", "daily", "weekly", "monthly", "yearly", "static"}

// String is the class's name as written in the truth file.
func (c ChangeClass) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Role is a host's special server behaviour.
type Role uint8

// The host roles.
const (
	RoleNormal       Role = iota // answers normally (after its latency)
	RoleHTTP10                   // HTTP/1.0 style: "HTTP/1.0" status line, closes after every response
	RoleSlow                     // seconds before the first byte, then 16 KiB/s
	RoleDown                     // 503 to every request, robots.txt included
	RoleFlaky                    // outage on some simulated days (503), resets some requests
	RoleBroken                   // some pages always answer 500
	RoleBlackhole                // accepts, reads the request, never answers
	RoleTrickle                  // sends headers, then the body at 1 byte/s
	RoleSlowHeaders              // sends the whole response, status line included, at 1 byte/s
	RoleReset                    // resets every connection (RST) after reading the request
	RoleUnresolvable             // not in DNS (NXDOMAIN); no server
	numRoles
)

var roleNames = [numRoles]string{"normal", "http10", "slow", "down", "flaky", "broken", "blackhole", "trickle", "slowheaders", "reset", "unresolvable"}

// String is the role's name as written in the truth file.
func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// Validators says which cache validators a host sends.
type Validators uint8

// The validator modes.
const (
	ValidatorsBoth    Validators = iota // ETag and Last-Modified, conditional GET answered with 304
	ValidatorsLastMod                   // Last-Modified only
	ValidatorsETag                      // ETag only
	ValidatorsNone                      // neither
	ValidatorsIgnored                   // both sent, but conditional requests always get 200
	numValidators
)

var validatorNames = [numValidators]string{"both", "last_modified", "etag", "none", "ignored"}

// String is the mode's name as written in the truth file.
func (v Validators) String() string {
	if v < numValidators {
		return validatorNames[v]
	}
	return "validators(" + strconv.Itoa(int(v)) + ")"
}

// Addressing is how URLs name hosts: by name (h0001.sim.test) or, with
// IPPerHost, by each host's own loopback address (127.0.x.y), and with
// which port. Port 0 or 80 leaves the port out.
type Addressing struct {
	Port      int
	IPPerHost bool
}

// Authority returns host[:port] for the host at index h.
func (w *Web) authority(h int32, a Addressing) string {
	host := &w.hosts[h]
	name := host.name
	if a.IPPerHost && host.role != RoleUnresolvable {
		name = host.ip.String()
	}
	if a.Port == 0 || a.Port == 80 {
		return name
	}
	return name + ":" + strconv.Itoa(a.Port)
}

// hostIP is the loopback address of host index i: 127.0.x.y with x >= 1,
// so that 127.0.0.0/24 stays free for the main listener and DNS.
func hostIP(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, 0, byte(1 + i/254), byte(1 + i%254)})
}

// host is the generated state of one host.
type host struct {
	name       string
	ip         netip.Addr
	role       Role
	genre      Genre
	latency    time.Duration // median added latency before answering
	keepAlive  int           // requests per connection; 0 = unlimited
	validators Validators
	weakETag   bool
	locale     uint8  // 0 English/UTF-8, 1 Latin/windows-1252, 2 Japanese/Shift_JIS
	images     int32  // size of the image pool /img/0.png ...
	style      string // the site's inline stylesheet (boilerplate in <head>)
	robots     robotsFile
	paths      map[string]int32 // path -> page id
	home       int32
	content    int32   // number of content pages
	rank       []int32 // content pages by popularity (home first)
	topic      uint8   // in a topical web, 1 + the host's topic; 0: none
	tunnel     bool    // a tunnel host (see Web.BehindTunnel)
}

// page is the generated state of one URL.
type page struct {
	host     int32
	kind     Kind
	class    ChangeClass
	enc      uint8 // encEnc* below
	topic    uint8 // in a topical web, 1 + the content page's topic; 0: none
	flags    uint16
	status   int16
	path     string
	target   int32 // redirect target, or -1
	parent   int32 // directory page linking to this one, or -1
	words    int32 // paragraph words (before headings, nav and anchors)
	images   int32
	linkBeg  int32 // outlinks are links[linkBeg:linkEnd]
	linkEnd  int32
	inlinks  int32
	rate     float64 // changes per day
	created  int64   // Unix seconds of version 0
	pagerank float64
}

// Page flags.
const (
	flagNoindex uint16 = 1 << iota
	flagNofollow
	flagBase        // has <base href>
	flagBaseParent  // base href is the parent directory rather than the page's own
	flagRelative    // same-host links mostly relative (../x)
	flagRootRel     // same-host links mostly root-relative (/x)
	flagCharsetHead // charset in the Content-Type header
	flagCharsetMeta // charset in a <meta> element
	flagMetaEquiv   // the meta is http-equiv rather than <meta charset>
	flagBroken      // always answers 500 (role broken)
	flagTemp        // redirect is 302 rather than 301
	flagRelLocation // redirect Location is a relative reference
)

// Page encodings.
const (
	encUTF8 uint8 = iota
	encWindows1252
	encShiftJIS
)

// Web is a generated synthetic web. It is immutable after New and safe for
// concurrent use.
type Web struct {
	cfg      Config
	hosts    []host
	pages    []page
	links    []int32
	byName   map[string]int32 // host name -> host index (resolvable hosts)
	regular  int              // hosts[:regular] are h0001...
	vocab    vocabulary
	zipf     zipfTable
	epochSec int64
	special  specialPages
	topics   topicModel
	drift    []rateSwitch // per page under ChangeDrift, else nil
}

// rateSwitch is where a page's rate changes under ChangeDrift: at sec
// seconds after the epoch (whole seconds) it becomes rate, of class class.
// A page whose rate does not change has sec 0.
type rateSwitch struct {
	sec   float64
	rate  float64
	class ChangeClass
}

// specialPages locates the hazard pages (-1 when absent).
type specialPages struct {
	trap, loop, chain, huge, bomb int32
	hostile                       [4]int32 // blackhole, trickle, slowheaders, reset homes
}

// Config returns the configuration the web was generated from, with
// defaults filled in.
func (w *Web) Config() Config { return w.cfg }

// NumHosts is the number of hosts: the regular ones first, then the hostile
// hosts, then the unresolvable ones.
func (w *Web) NumHosts() int { return len(w.hosts) }

// NumPages is the number of URLs the web knows (content pages, redirects,
// 404 targets, traps, ...): page ids are 0..NumPages()-1.
func (w *Web) NumPages() int { return len(w.pages) }

// HostInfo describes a host.
type HostInfo struct {
	Index int
	Name  string     // e.g. h0001.sim.test
	IP    netip.Addr // its own loopback address (used with IPPerHost)
	Role  Role
	Genre Genre
	// Latency is the median delay before a response (scaled by
	// ServeOptions.Latency; slow hosts add their own).
	Latency time.Duration
	// KeepAlive is the number of requests served per connection before the
	// server closes it (0: unlimited; HTTP/1.0 hosts close after every one).
	KeepAlive  int
	Validators Validators
	// Robots describes robots.txt.
	Robots RobotsInfo
	// Home is the page id of the home page; Pages the number of content
	// pages.
	Home  int
	Pages int
	// Topic is the host's topic in a topical web (-1: none), Tunnel
	// whether it is a tunnel host (see Web.BehindTunnel).
	Topic  int
	Tunnel bool
}

// RobotsInfo describes a host's robots.txt.
type RobotsInfo struct {
	// Status is the status of GET /robots.txt (200, 404, 301, 503...; 0 if
	// the host never answers).
	Status int
	// Body is the robots.txt text (after the redirect, if Status is 301).
	Body string
	// CrawlDelay is the Crawl-delay for all agents (0 if none).
	CrawlDelay time.Duration
	// Disallows lists the Disallow prefixes of the group for all agents.
	Disallows []string
}

// Host returns host i (0 <= i < NumHosts()).
func (w *Web) Host(i int) HostInfo {
	h := &w.hosts[i]
	return HostInfo{
		Index: i, Name: h.name, IP: h.ip, Role: h.role, Genre: h.genre,
		Latency: h.latency, KeepAlive: h.keepAlive, Validators: h.validators,
		Robots: RobotsInfo{Status: h.robots.status, Body: h.robots.body, CrawlDelay: h.robots.delay,
			Disallows: append([]string(nil), h.robots.disallows...)},
		Home: int(h.home), Pages: int(h.content),
		Topic: int(h.topic) - 1, Tunnel: h.tunnel,
	}
}

// HostByName returns the index of the host with the given name (case
// insensitive, port and trailing dot ignored).
func (w *Web) HostByName(name string) (int, bool) {
	i, ok := w.byName[canonicalHost(name)]
	return int(i), ok
}

func canonicalHost(name string) string {
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name[i:], "]") {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, ".")
	return strings.ToLower(name)
}

// PageInfo describes one URL of the web.
type PageInfo struct {
	ID   int
	Host int
	Path string
	Kind Kind
	// Status is what a GET answers on a healthy day (0: no answer; 503 on
	// hosts that are always down).
	Status int
	// Target is the redirect target's page id, or -1.
	Target int
	// Rate is the true change rate in changes per day (0: never changes),
	// from the epoch on (under ChangeDrift: until RateSwitch).
	Rate        float64
	ChangeClass ChangeClass
	// RateSwitch is when the rate becomes RateAfter, of class ClassAfter
	// (ChangeDrift only). It is the zero time when the rate never changes;
	// RateAfter and ClassAfter are then Rate and ChangeClass.
	RateSwitch time.Time
	RateAfter  float64
	ClassAfter ChangeClass
	// Created is the time of version 0 (before the epoch).
	Created  time.Time
	PageRank float64
	Features Features
	// RobotsAllowed says whether the host's robots.txt lets any crawler
	// other than "badbot" fetch the URL.
	RobotsAllowed bool
	Noindex       bool
	Nofollow      bool
	// Topic is the page's topic (Web.PageTopic: -1 for none);
	// BehindTunnel says whether it lies behind a tunnel (Web.BehindTunnel).
	Topic        int
	BehindTunnel bool
}

// Features are the page features, named as in crawldb.Features. Words
// counts the whitespace-separated words of the text inside <body> (title
// excluded, anchor texts included; for a PDF, the words of its text);
// Outlinks the distinct link targets (a redirect has one, its target);
// Inlinks the distinct pages of the web linking here; Images the <img>
// elements; Depth the non-empty path segments; Bytes the size of the body
// of version 0 as served (later versions differ by a few percent).
type Features struct {
	Words    int32 `parquet:"words"`
	Outlinks int32 `parquet:"outlinks"`
	Inlinks  int32 `parquet:"inlinks"`
	Images   int32 `parquet:"images"`
	Depth    int32 `parquet:"depth"`
	Bytes    int64 `parquet:"bytes"`
}

// Page returns page id (0 <= id < NumPages()). Features.Bytes and Words are
// computed by rendering version 0 with canonical addressing.
func (w *Web) Page(id int) PageInfo {
	p := &w.pages[id]
	info := w.pageInfo(int32(id))
	if p.kind.IsContent() && p.flags&flagBroken == 0 {
		r := w.newRenderer()
		body, words := r.body(int32(id), 0, Addressing{})
		info.Features.Bytes = int64(len(body))
		info.Features.Words = int32(words)
	}
	return info
}

// Body returns the body of content page id at version v as a server with
// addressing a serves it (encoded in the page's charset), for tests that
// need pages without a server.
func (w *Web) Body(id, version int, a Addressing) ([]byte, error) {
	if id < 0 || id >= len(w.pages) {
		return nil, fmt.Errorf("simweb: no page %d", id)
	}
	p := &w.pages[id]
	if !p.kind.IsContent() || p.flags&flagBroken != 0 || version < 0 {
		return nil, fmt.Errorf("simweb: page %d (%s %s) has no version %d", id, p.kind, p.path, version)
	}
	body, _ := w.newRenderer().body(int32(id), version, a)
	return body, nil
}

// pageInfo is Page without the rendered features.
func (w *Web) pageInfo(id int32) PageInfo {
	p := &w.pages[id]
	status := int(p.status)
	if w.hosts[p.host].role == RoleDown {
		status = 503 // never a healthy day
	}
	info := PageInfo{
		ID: int(id), Host: int(p.host), Path: p.path, Kind: p.kind, Status: status,
		Target: int(p.target), Rate: p.rate, ChangeClass: p.class, RateAfter: p.rate, ClassAfter: p.class,
		Created:  time.Unix(p.created, 0).UTC(),
		PageRank: p.pagerank,
		Features: Features{
			Outlinks: p.linkEnd - p.linkBeg, Inlinks: p.inlinks, Images: p.images,
			Depth: int32(pathDepth(p.path)),
		},
		RobotsAllowed: w.robotsAllowed(id),
		Noindex:       p.flags&flagNoindex != 0,
		Nofollow:      p.flags&flagNofollow != 0,
		Topic:         w.PageTopic(int(id)),
		BehindTunnel:  w.BehindTunnel(int(id)),
	}
	if sw, ok := w.rateSwitch(id); ok {
		info.RateSwitch = w.cfg.Epoch.Add(secondsDuration(sw.sec))
		info.RateAfter, info.ClassAfter = sw.rate, sw.class
	}
	return info
}

// Outlinks returns the page ids page id links to, in document order.
func (w *Web) Outlinks(id int) []int {
	p := &w.pages[id]
	out := make([]int, 0, p.linkEnd-p.linkBeg)
	for _, t := range w.links[p.linkBeg:p.linkEnd] {
		out = append(out, int(t))
	}
	return out
}

// Lookup returns the page id of host index h and path (path only, no
// query). Trap pages below the trap entry are not pages of the web and are
// not found.
func (w *Web) Lookup(h int, path string) (int, bool) {
	id, ok := w.hosts[h].paths[path]
	return int(id), ok
}

// URL is page id's absolute URL under the addressing a.
func (w *Web) URL(id int, a Addressing) string {
	p := &w.pages[id]
	return "http://" + w.authority(p.host, a) + p.path
}

// Seeds returns the home page URLs of the regular hosts under a.
func (w *Web) Seeds(a Addressing) []string {
	out := make([]string, 0, w.regular)
	for i := range w.regular {
		out = append(out, w.URL(int(w.hosts[i].home), a))
	}
	return out
}

// pathDepth counts non-empty path segments ("/" is 0, "/a/" 1, "/a/b.html" 2).
func pathDepth(p string) int {
	n := 0
	in := false
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// hostName is the name of regular host i (0-based): h0001.sim.test.
func hostName(i, total int) string {
	width := max(4, len(strconv.Itoa(total)))
	return fmt.Sprintf("h%0*d.%s", width, i+1, Domain)
}
