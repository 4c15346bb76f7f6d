package simweb

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sizes and probabilities of the generated web.
const (
	hostSizeSigma   = 1.4  // lognormal spread of pages per host
	hostMaxShare    = 0.15 // no host holds more of the pages
	dirFracMin      = 0.05 // directories per content page, at least ...
	dirFracSpan     = 0.06 // ... plus up to this much
	docFrac         = 0.03 // leaves that are PDF documents
	maxChildren     = 150  // links a directory lists at most
	pageZipfS       = 1.0  // Zipf exponent of link targets within a host
	hostZipfS       = 1.0  // Zipf exponent of the target host of a cross-host link
	pMissingLink    = 0.015
	pRedirectLink   = 0.02
	pDeadHostLink   = 0.003
	pHostileLink    = 0.002
	crossHomeShare  = 0.4 // cross-host links that point at the home page
	chainLength     = 12  // hops of the redirect chain (more than Go's 10)
	maxRandomLinks  = 250
	maxWords        = 20000
	hostileHosts    = 4
	latencyMedian   = 15 * time.Millisecond
	latencyCap      = 250 * time.Millisecond
	slowLatencyMin  = 1500 * time.Millisecond
	slowLatencySpan = 1500 * time.Millisecond
)

// Fractions of regular hosts per role (each at least one host once there
// are 8 hosts, when the role's hazard is on).
var roleShares = []struct {
	role   Role
	share  float64
	hazard Hazard // 0: always
}{
	{RoleHTTP10, 0.05, 0},
	{RoleSlow, 0.03, HazardSlowHosts},
	{RoleDown, 0.02, HazardFailingHosts},
	{RoleFlaky, 0.03, HazardFailingHosts},
	{RoleBroken, 0.02, HazardFailingHosts},
}

// hostileNames are the hostile hosts, in the order of specialPages.hostile.
var hostileNames = [hostileHosts]struct {
	name   string
	role   Role
	status int16
}{
	{"blackhole", RoleBlackhole, 0},
	{"trickle", RoleTrickle, 200},
	{"slowheaders", RoleSlowHeaders, 200},
	{"reset", RoleReset, 0},
}

// generator holds the scratch state of New.
type generator struct {
	w        *Web
	zw, zo   []float32  // feature draws of content pages (standard normal)
	children [][]int32  // per page: directory children, in order
	extra    [][]int32  // per host: extra links of the home page (hazards)
	missing  [][]int32  // per host: 404 targets
	aliases  [][]int32  // per host: redirects
	hostPop  []int32    // regular hosts by popularity
	topDirs  [][]string // per host: top-level directories
	leafPath [][]string // per host: some leaf paths
	protect  [][]string // per host: hazard paths robots must allow
	dead     []int32    // home pages of unresolvable hosts
	hostile  []int32    // home pages of hostile hosts

	// Topical webs only.
	topicHosts    [][]int32         // per topic: its hosts that are not tunnel hosts, by popularity
	topicHostsAll [][]int32         // per topic: all its hosts, by popularity
	topicRank     [][][]int32       // per regular host, per topic: its pages of the topic, by popularity
	drifted       [][]int32         // per topic: its pages on hosts of other topics
	entrance      map[int32][]int32 // page -> tunnel home pages it links to
}

// New generates the web cfg describes. It is deterministic: the same
// Config gives the same web, byte for byte, on any machine.
func New(cfg Config) (*Web, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Web{cfg: cfg, epochSec: cfg.Epoch.Unix(), byName: make(map[string]int32)}
	w.vocab = newVocabulary(cfg.Seed)
	g := &generator{w: w}
	estimate := cfg.Pages + cfg.Pages/16 + 64
	w.pages = make([]page, 0, estimate)
	g.zw, g.zo = make([]float32, 0, estimate), make([]float32, 0, estimate)
	g.children = make([][]int32, 0, estimate)
	g.makeHosts()
	if cfg.Topics > 0 {
		w.topics = newTopicModel(cfg.Seed, cfg.Topics)
		g.makeHostTopics()
	}
	g.makeContent()
	if cfg.Topics > 0 {
		g.makePageTopics()
		g.chooseEntrances()
	}
	g.makeSpecials()
	g.makeLinks()
	g.makeRates()
	w.pageRank()
	g.makeRobots()
	return w, nil
}

// hostSizes spreads pages over hosts: lognormal weights, capped, each host
// at least one page, apportioned by largest remainder.
func hostSizes(seed uint64, hosts, pages int) []int {
	wts := make([]float64, hosts)
	sum := 0.0
	for i := range wts {
		r := newRNG(seed, sHostSize, uint64(i), 0)
		wts[i] = math.Exp(hostSizeSigma * r.normal())
		sum += wts[i]
	}
	for i := range wts {
		wts[i] = min(wts[i], hostMaxShare*sum)
	}
	sum = 0
	for _, x := range wts {
		sum += x
	}
	extra := pages - hosts
	sizes := make([]int, hosts)
	type rem struct {
		i int
		f float64
	}
	rems := make([]rem, hosts)
	given := 0
	for i, x := range wts {
		q := float64(extra) * x / sum
		sizes[i] = 1 + int(q)
		given += int(q)
		rems[i] = rem{i, q - math.Floor(q)}
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.f > b.f:
			return -1
		case a.f < b.f:
			return 1
		}
		return a.i - b.i
	})
	for k := 0; given < extra; k++ {
		sizes[rems[k%hosts].i]++
		given++
	}
	return sizes
}

// permutation returns 0..n-1 ordered by hash(seed, stream, i).
func permutation(seed, stream uint64, n int) []int32 {
	p := make([]int32, n)
	keys := make([]uint64, n)
	for i := range p {
		p[i] = int32(i)
		keys[i] = hash3(seed, stream, uint64(i), 0)
	}
	slices.SortFunc(p, func(a, b int32) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	return p
}

// makeHosts lays out the hosts: the regular hosts' sizes, genres, roles
// and serving profiles, then the hostile and unresolvable hosts, the
// addresses and path tables of all, and the popularity order of the
// regular hosts.
func (g *generator) makeHosts() {
	w := g.w
	cfg := w.cfg
	sizes := hostSizes(cfg.Seed, cfg.Hosts, cfg.Pages)
	w.regular = cfg.Hosts
	ndead := max(1, cfg.Hosts/50)
	w.hosts = make([]host, cfg.Hosts+hostileHosts+ndead)
	g.assignGenres(sizes)
	g.assignRoles()
	for i := range cfg.Hosts {
		g.hostProfile(i, sizes[i])
	}
	g.addHostileHosts()
	g.addDeadHosts(ndead)
	g.registerHosts()
	g.rankHosts(sizes)
	w.zipf = newZipf(max(slices.Max(sizes), cfg.Hosts), pageZipfS)
	g.allocHostScratch()
}

// assignGenres gives every regular host a genre: hosts in random order
// take the genre furthest below its page share, so that page-weighted
// shares track genreShare.
func (g *generator) assignGenres(sizes []int) {
	w := g.w
	var assigned [numGenres]float64
	total := 0.0
	for _, hi := range permutation(w.cfg.Seed, sGenre, w.cfg.Hosts) {
		n := float64(sizes[hi])
		best, bestDef := GenreCommerce, math.Inf(-1)
		for gi := range numGenres {
			def := genreShare[gi]*(total+n) - assigned[gi]
			if def > bestDef {
				best, bestDef = gi, def
			}
		}
		w.hosts[hi].genre = best
		assigned[best] += n
		total += n
	}
}

// assignRoles gives regular hosts their roles (roleShares), from disjoint
// segments of a random order; the rest stay RoleNormal.
func (g *generator) assignRoles() {
	w := g.w
	cfg := w.cfg
	order := permutation(cfg.Seed, sHostRole, cfg.Hosts)
	next := 0
	for _, rs := range roleShares {
		if rs.hazard != 0 && cfg.Hazards&rs.hazard == 0 {
			continue
		}
		n := int(math.Round(rs.share * float64(cfg.Hosts)))
		if n == 0 && cfg.Hosts >= 8 {
			n = 1
		}
		for ; n > 0 && next < len(order); n-- {
			w.hosts[order[next]].role = rs.role
			next++
		}
	}
}

// hostProfile names regular host i, of size content pages, and draws how
// it serves: latency, keep-alive, validators, locale and stylesheet (in
// that order, from the host's own random sequence).
func (g *generator) hostProfile(i, size int) {
	w := g.w
	h := &w.hosts[i]
	h.name = hostName(i, w.cfg.Hosts)
	h.content = int32(size)
	r := newRNG(w.cfg.Seed, sHostProfile, uint64(i), 0)
	h.latency = drawLatency(&r, h.role)
	h.keepAlive = drawKeepAlive(&r)
	if h.role == RoleHTTP10 {
		h.keepAlive = 1
	}
	h.validators = drawValidators(&r)
	h.weakETag = r.chance(0.2)
	h.locale = drawLocale(&r)
	h.images = 10 + h.content/4
	h.style = siteStyle(&r)
}

// drawLatency draws a host's median latency: lognormal around
// latencyMedian, capped, whole milliseconds; slow hosts draw again from
// slowLatencyMin plus up to slowLatencySpan.
func drawLatency(r *rng, role Role) time.Duration {
	d := min(time.Duration(float64(latencyMedian)*math.Exp(0.6*r.normal())), latencyCap)
	d = max(d, time.Millisecond).Round(time.Millisecond)
	if role == RoleSlow {
		d = slowLatencyMin + time.Duration(r.float()*float64(slowLatencySpan))
		d = d.Round(time.Millisecond)
	}
	return d
}

// drawKeepAlive draws the requests a host serves per connection (0:
// unlimited).
func drawKeepAlive(r *rng) int {
	switch u := r.float(); {
	case u < 0.45:
		return 100
	case u < 0.70:
		return r.between(10, 50)
	case u < 0.90:
		return r.between(2, 5)
	}
	return 0
}

// drawValidators draws which validators a host sends and honours.
func drawValidators(r *rng) Validators {
	switch u := r.float(); {
	case u < 0.70:
		return ValidatorsBoth
	case u < 0.80:
		return ValidatorsLastMod
	case u < 0.85:
		return ValidatorsETag
	case u < 0.95:
		return ValidatorsNone
	}
	return ValidatorsIgnored
}

// drawLocale draws a host's locale (see host.locale).
func drawLocale(r *rng) uint8 {
	switch u := r.float(); {
	case u < 0.85:
		return 0
	case u < 0.93:
		return 1
	}
	return 2
}

// addHostileHosts sets up the hostile hosts after the regular ones.
func (g *generator) addHostileHosts() {
	w := g.w
	for k, hn := range hostileNames {
		h := &w.hosts[w.cfg.Hosts+k]
		h.name = hn.name + "." + Domain
		h.role = hn.role
		h.keepAlive = 0
		h.validators = ValidatorsNone
	}
}

// addDeadHosts sets up the ndead unresolvable hosts, last of all.
func (g *generator) addDeadHosts(ndead int) {
	w := g.w
	for k := range ndead {
		h := &w.hosts[w.cfg.Hosts+hostileHosts+k]
		h.name = fmt.Sprintf("gone-%03d.%s", k+1, Domain)
		h.role = RoleUnresolvable
	}
}

// registerHosts gives every host its address and path table, and the
// resolvable ones their entry in byName.
func (g *generator) registerHosts() {
	w := g.w
	for i := range w.hosts {
		h := &w.hosts[i]
		h.ip = hostIP(i)
		h.paths = make(map[string]int32)
		if h.role != RoleUnresolvable {
			w.byName[h.name] = int32(i)
		}
	}
}

// rankHosts orders the regular hosts by popularity for cross-host links
// (g.hostPop): bigger hosts tend to be more popular.
func (g *generator) rankHosts(sizes []int) {
	cfg := g.w.cfg
	g.hostPop = make([]int32, cfg.Hosts)
	keys := make([]float64, cfg.Hosts)
	for i := range cfg.Hosts {
		g.hostPop[i] = int32(i)
		r := newRNG(cfg.Seed, sPopularity, uint64(i), 1)
		keys[i] = math.Log(float64(sizes[i])) + r.normal()
	}
	slices.SortStableFunc(g.hostPop, func(a, b int32) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return 0
	})
}

// allocHostScratch makes the generator's per-host lists.
func (g *generator) allocHostScratch() {
	n := len(g.w.hosts)
	g.extra = make([][]int32, n)
	g.missing = make([][]int32, n)
	g.aliases = make([][]int32, n)
	g.topDirs = make([][]string, n)
	g.leafPath = make([][]string, n)
	g.protect = make([][]string, n)
}

// addPage appends a page and registers its path on its host.
func (g *generator) addPage(p page) int32 {
	w := g.w
	id := int32(len(w.pages))
	p.target, p.linkBeg, p.linkEnd = -1, 0, 0
	w.pages = append(w.pages, p)
	w.hosts[p.host].paths[p.path] = id
	g.zw = append(g.zw, 0)
	g.zo = append(g.zo, 0)
	g.children = append(g.children, nil)
	return id
}

// slug returns 1..n pseudo-words joined by '-'.
func (g *generator) slug(r *rng, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(g.w.vocab.word(r.next(), 0))
	}
	return b.String()
}

func (g *generator) makeContent() {
	w := g.w
	for hi := range w.regular {
		g.makeHost(int32(hi))
	}
	for k := range hostileHosts {
		hi := int32(w.regular + k)
		id := g.addPage(page{host: hi, kind: KindHostile, path: "/", status: hostileNames[k].status,
			created: w.epochSec - 86400, parent: -1})
		w.hosts[hi].home = id
		g.hostile = append(g.hostile, id)
	}
	for hi := w.regular + hostileHosts; hi < len(w.hosts); hi++ {
		id := g.addPage(page{host: int32(hi), kind: KindUnresolvable, path: "/", created: w.epochSec - 86400, parent: -1})
		w.hosts[hi].home = id
		g.dead = append(g.dead, id)
	}
}

// leaf median words and random outlinks per genre.
var (
	leafWords = [numGenres]float64{GenreNews: 500, GenreCommerce: 300, GenreOrg: 450, GenreEduGov: 350}
	leafLinks = [numGenres]float64{GenreNews: 14, GenreCommerce: 18, GenreOrg: 10, GenreEduGov: 8}
)

// makeHost generates the content pages of regular host hi: a home page, a
// random recursive tree of directories and leaves hung under them with
// preferential attachment.
func (g *generator) makeHost(hi int32) {
	w := g.w
	h := &w.hosts[hi]
	n := int(h.content)
	r := newRNG(w.cfg.Seed, sTree, uint64(hi), 0)
	first := int32(len(w.pages))
	home := g.addPage(page{host: hi, kind: KindHome, path: "/", parent: -1})
	h.home = home
	nd := 0
	if n >= 4 {
		nd = max(1, int(math.Round(float64(n)*(dirFracMin+dirFracSpan*r.float()))))
		nd = min(nd, n-2)
	}
	containers := []int32{home}
	for i := range nd {
		parent := home
		if i > 0 && !r.chance(0.3) {
			parent = containers[r.intn(len(containers))]
		}
		base := w.pages[parent].path
		path := base + g.slug(&r, 1) + "/"
		if _, dup := h.paths[path]; dup {
			path = base + g.slug(&r, 1) + "-" + strconv.Itoa(i) + "/"
		}
		id := g.addPage(page{host: hi, kind: KindDirectory, path: path, parent: parent})
		g.children[parent] = append(g.children[parent], id)
		containers = append(containers, id)
		if parent == home {
			g.topDirs[hi] = append(g.topDirs[hi], path)
		}
	}
	// Leaves: a container is chosen with probability proportional to
	// 1 + its leaves so far (a Yule process), skipping full ones.
	urn := append([]int32(nil), containers...)
	for i := 0; i < n-1-nd; i++ {
		c := urn[r.intn(len(urn))]
		for tries := 0; len(g.children[c]) >= maxChildren && tries < 8; tries++ {
			c = containers[r.intn(len(containers))]
		}
		urn = append(urn, c)
		kind, ext := KindLeaf, ".html"
		if r.chance(docFrac) {
			kind, ext = KindDocument, ".pdf"
		}
		path := w.pages[c].path + g.slug(&r, 1+r.intn(3)) + "-" + strconv.Itoa(i) + ext
		id := g.addPage(page{host: hi, kind: kind, path: path, parent: c})
		g.children[c] = append(g.children[c], id)
		if kind == KindLeaf && len(g.leafPath[hi]) < 16 {
			g.leafPath[hi] = append(g.leafPath[hi], path)
		}
	}
	// Popularity order within the host: home first, the rest shuffled.
	last := int32(len(w.pages))
	h.rank = make([]int32, 0, last-first)
	h.rank = append(h.rank, home)
	for _, k := range permutation(hash3(w.cfg.Seed, sPopularity, uint64(hi), 0), sPopularity, int(last-first-1)) {
		h.rank = append(h.rank, first+1+k)
	}
	for id := first; id < last; id++ {
		g.pageTraits(id)
	}
}

// pageTraits draws a content page's size (words and images), creation
// time, flags and encoding, in that order from the page's own random
// sequence (the order of the draws fixes the web).
func (g *generator) pageTraits(id int32) {
	w := g.w
	p := &w.pages[id]
	h := &w.hosts[p.host]
	r := newRNG(w.cfg.Seed, sPage, uint64(id), 0)
	zw, zo := r.normal(), r.normal()
	g.zw[id], g.zo[id] = float32(zw), float32(zo)
	drawSize(&r, p, h.genre, zw)
	p.status = 200
	ageDays := 1 + r.exp()*300
	if p.kind == KindHome {
		ageDays += 365
	}
	p.created = w.epochSec - int64(ageDays*86400)
	if p.kind == KindDocument {
		return
	}
	if h.role == RoleBroken && p.kind == KindLeaf && r.chance(0.1) {
		p.flags |= flagBroken
		p.status = 500
	}
	p.flags |= drawMarkupFlags(&r, p.path)
	p.enc = drawEncoding(&r, h.locale)
	p.flags |= drawCharsetFlags(&r, p.enc)
}

// drawSize draws page p's images and sets its words from zw (its standard
// normal size draw), by kind and, for leaves, the host's genre.
func drawSize(r *rng, p *page, genre Genre, zw float64) {
	var median, sigma float64
	switch p.kind {
	case KindHome:
		median, sigma = 200, 0.5
		p.images = int32(r.poisson(5))
	case KindDirectory:
		median, sigma = 80, 0.6
		p.images = int32(r.poisson(1))
	case KindDocument:
		median, sigma = 1200, 0.8
	default:
		median, sigma = leafWords[genre], 0.7
		p.images = int32(r.poisson(1.5 * math.Exp(0.3*zw)))
	}
	p.words = int32(min(max(median*math.Exp(sigma*zw), 10), maxWords))
}

// drawMarkupFlags draws an HTML page's robots meta, <base> and link-style
// flags; path is the page's path (the root has no parent for <base>).
func drawMarkupFlags(r *rng, path string) uint16 {
	var f uint16
	switch u := r.float(); {
	case u < 0.02:
		f |= flagNoindex
	case u < 0.04:
		f |= flagNofollow
	case u < 0.045:
		f |= flagNoindex | flagNofollow
	}
	if r.chance(0.04) {
		f |= flagBase
		if r.chance(0.5) && path != "/" {
			f |= flagBaseParent
		}
	}
	switch u := r.float(); {
	case u < 0.35:
		f |= flagRelative
	case u < 0.70:
		f |= flagRootRel
	}
	return f
}

// drawEncoding draws an HTML page's encoding for its host's locale: most
// pages of a Latin or Japanese host use its legacy charset, the rest UTF-8.
func drawEncoding(r *rng, locale uint8) uint8 {
	switch locale {
	case 1:
		if r.chance(0.7) {
			return encWindows1252
		}
	case 2:
		if r.chance(0.6) {
			return encShiftJIS
		}
	}
	return encUTF8
}

// drawCharsetFlags draws where an HTML page in encoding enc declares its
// charset (header, meta or both; a UTF-8 page may declare none) and the
// form of the meta.
func drawCharsetFlags(r *rng, enc uint8) uint16 {
	var f uint16
	u := r.float()
	if enc != encUTF8 {
		switch {
		case u < 0.4:
			f |= flagCharsetHead
		case u < 0.7:
			f |= flagCharsetMeta
		default:
			f |= flagCharsetHead | flagCharsetMeta
		}
	} else {
		switch {
		case u < 0.6:
			f |= flagCharsetHead
		case u < 0.8:
			f |= flagCharsetMeta
		case u < 0.9:
			f |= flagCharsetHead | flagCharsetMeta
		}
	}
	if r.chance(0.5) {
		f |= flagMetaEquiv
	}
	return f
}

// randomPage draws a popular page of host hi (Zipf over its popularity
// order).
func (g *generator) randomPage(r *rng, hi int32) int32 {
	h := &g.w.hosts[hi]
	return h.rank[g.w.zipf.sample(len(h.rank), r.float())]
}

// makeSpecials adds the URLs that are not content: 404 targets, redirects,
// and the hazard pages.
func (g *generator) makeSpecials() {
	w := g.w
	for hi := range int32(w.regular) {
		r := newRNG(w.cfg.Seed, sSpecial, uint64(hi), 0)
		g.makeMissing(&r, hi)
		g.makeAliases(&r, hi)
	}
	w.special = specialPages{trap: -1, loop: -1, chain: -1, huge: -1, bomb: -1}
	for k, id := range g.hostile {
		w.special.hostile[k] = id
	}
	cand := g.hazardHosts()
	if len(cand) == 0 {
		return
	}
	pickHost := func(k int) int32 { return cand[k%len(cand)] }
	if w.cfg.Hazards&HazardTraps != 0 {
		w.special.trap = g.hazardPage(pickHost(0), KindTrap, "/calendar/", 200)
		w.special.loop = g.makeLoop(pickHost(1))
		w.special.chain = g.makeChain(pickHost(2))
	}
	if w.cfg.Hazards&HazardBombs != 0 {
		w.special.huge = g.hazardPage(pickHost(3), KindHuge, "/huge.html", 200)
		w.special.bomb = g.hazardPage(pickHost(4), KindBomb, "/bomb.html", 200)
	}
	g.linkUnreachableHosts()
}

// makeMissing adds the 404 targets of regular host hi: about one per
// hundred pages, "old-" pages in the directories of existing ones.
func (g *generator) makeMissing(r *rng, hi int32) {
	w := g.w
	h := &w.hosts[hi]
	for k := range 1 + h.content/100 {
		dir := dirOf(w.pages[h.rank[r.intn(len(h.rank))]].path)
		path := dir + "old-" + g.slug(r, 1) + "-" + strconv.Itoa(int(k)) + ".html"
		if _, dup := h.paths[path]; dup {
			continue
		}
		g.missing[hi] = append(g.missing[hi], g.addPage(page{host: hi, kind: KindMissing, path: path, status: 404,
			created: w.epochSec, parent: -1}))
	}
}

// makeAliases adds the redirects of regular host hi: about one per fifty
// pages (at least one on a host of ten), mostly to a page of the same
// host, some temporary (302), some with a relative Location.
func (g *generator) makeAliases(r *rng, hi int32) {
	w := g.w
	h := &w.hosts[hi]
	na := int(h.content / 50)
	if h.content >= 10 {
		na = max(na, 1)
	}
	for k := range na {
		p := page{host: hi, kind: KindRedirect, status: 301, created: w.epochSec, parent: -1}
		var target int32
		if r.chance(0.1) && w.regular > 1 {
			oh := int32(r.intn(w.regular - 1))
			if oh >= hi {
				oh++
			}
			if w.hosts[oh].tunnel {
				oh = hi // no redirect leads into a tunnel host from outside
			}
			target = g.randomPage(r, oh)
		} else {
			target = g.randomPage(r, hi)
			if r.chance(0.25) {
				p.flags |= flagRelLocation
			}
		}
		if r.chance(0.2) {
			p.status, p.flags = 302, p.flags|flagTemp
			p.path = "/go/" + strconv.Itoa(k)
		} else {
			p.path = "/old/" + g.slug(r, 2) + "-" + strconv.Itoa(k) + ".html"
		}
		id := g.addPage(p)
		w.pages[id].target = target
		g.aliases[hi] = append(g.aliases[hi], id)
	}
}

// hazardHosts returns the hosts that may carry hazard pages: healthy
// regular hosts with a few pages, in random order.
func (g *generator) hazardHosts() []int32 {
	w := g.w
	var cand []int32
	for _, hi := range permutation(w.cfg.Seed, sSpecial, w.regular) {
		if h := &w.hosts[hi]; h.role == RoleNormal && h.content >= 5 {
			cand = append(cand, hi)
		}
	}
	return cand
}

// hazardPage adds a hazard page at path on host hi, linked from the home
// page and allowed by robots.txt, and returns its id.
func (g *generator) hazardPage(hi int32, kind Kind, path string, status int16) int32 {
	w := g.w
	id := g.addPage(page{host: hi, kind: kind, path: path, status: status, created: w.epochSec - 86400, parent: -1})
	g.extra[hi] = append(g.extra[hi], id)
	g.protect[hi] = append(g.protect[hi], path)
	return id
}

// makeLoop adds a pair of temporary redirects on host hi that point at
// each other, and returns the first (the one linked).
func (g *generator) makeLoop(hi int32) int32 {
	w := g.w
	a := g.hazardPage(hi, KindLoop, "/loop/a", 302)
	b := g.addPage(page{host: hi, kind: KindLoop, path: "/loop/b", status: 302, created: w.epochSec, parent: -1})
	w.pages[a].target, w.pages[b].target = b, a
	w.pages[a].flags |= flagTemp
	w.pages[b].flags |= flagTemp
	return a
}

// makeChain adds a chain of chainLength temporary redirects on host hi
// ending at a popular page of the host, and returns its first hop (the
// one linked).
func (g *generator) makeChain(hi int32) int32 {
	w := g.w
	r := newRNG(w.cfg.Seed, sSpecial, uint64(hi), 1)
	final := g.randomPage(&r, hi)
	first, prev := int32(-1), int32(-1)
	for k := 1; k <= chainLength; k++ {
		path := "/chain/" + strconv.Itoa(k)
		var id int32
		if k == 1 {
			id = g.hazardPage(hi, KindRedirect, path, 302)
			first = id
		} else {
			id = g.addPage(page{host: hi, kind: KindRedirect, path: path, status: 302, created: w.epochSec, parent: -1})
			w.pages[prev].target = id
		}
		w.pages[id].flags |= flagTemp
		prev = id
	}
	w.pages[prev].target = final
	return first
}

// linkUnreachableHosts gives every hostile (when their links are on) and
// unresolvable host an inlink from the home page of a regular host.
func (g *generator) linkUnreachableHosts() {
	w := g.w
	var targets []int32
	if w.cfg.Hazards&HazardHostileLinks != 0 {
		targets = append(targets, g.hostile...)
	}
	targets = append(targets, g.dead...)
	for k, id := range targets {
		hi := int32(hash3(w.cfg.Seed, sSpecial, uint64(k), 7) % uint64(w.regular))
		g.extra[hi] = append(g.extra[hi], id)
	}
}

// makeLinks builds every page's outlinks: navigation (home, parent),
// directory listings, hazard links from home pages, then random links:
// mostly same-host, with Zipf-distributed targets so that in-degree is
// heavy-tailed, and a few to 404s, redirects, dead and hostile hosts.
func (g *generator) makeLinks() {
	w := g.w
	stamp := make([]int32, len(w.pages))
	for i := range stamp {
		stamp[i] = -1
	}
	links := make([]int32, 0, len(w.pages)*16)
	for id := range int32(len(w.pages)) {
		p := &w.pages[id]
		p.linkBeg = int32(len(links))
		add := func(t int32) {
			if t != id && t >= 0 && stamp[t] != id {
				stamp[t] = id
				links = append(links, t)
			}
		}
		switch {
		case p.kind == KindRedirect || p.kind == KindLoop:
			add(p.target)
		case p.kind == KindHome || p.kind == KindDirectory || p.kind == KindLeaf:
			if p.flags&flagBroken != 0 {
				break
			}
			h := &w.hosts[p.host]
			if p.kind != KindHome {
				add(h.home)
				add(p.parent)
			}
			for _, c := range g.children[id] {
				add(c)
			}
			if p.kind == KindHome {
				for _, x := range g.extra[p.host] {
					add(x)
				}
			}
			r := newRNG(w.cfg.Seed, sLinks, uint64(id), 0)
			var k int
			switch p.kind {
			case KindHome:
				k = r.between(5, 25)
			case KindDirectory:
				k = int(3 * math.Exp(0.6*r.normal()))
			default:
				k = int(leafLinks[h.genre] * math.Exp(0.8*float64(g.zo[id])))
			}
			for range min(k, maxRandomLinks) {
				if g.topicRank != nil {
					add(g.topicalTarget(&r, id))
				} else {
					add(g.randomTarget(&r, p.host))
				}
			}
			for _, x := range g.entrance[id] {
				add(x)
			}
		}
		p.linkEnd = int32(len(links))
	}
	w.links = slices.Clip(links)
}

// specialTarget draws whether a random link from a page of host hi goes
// to a 404, a redirect, an unresolvable or a hostile host, and which.
func (g *generator) specialTarget(r *rng, hi int32) (int32, bool) {
	u := r.float()
	switch {
	case u < pMissingLink:
		if m := g.missing[hi]; len(m) > 0 {
			return m[r.intn(len(m))], true
		}
	case u < pMissingLink+pRedirectLink:
		if a := g.aliases[hi]; len(a) > 0 {
			return a[r.intn(len(a))], true
		}
	case u < pMissingLink+pRedirectLink+pDeadHostLink:
		return g.dead[r.intn(len(g.dead))], true
	case u < pMissingLink+pRedirectLink+pDeadHostLink+pHostileLink:
		if g.w.cfg.Hazards&HazardHostileLinks != 0 {
			return g.hostile[r.intn(len(g.hostile))], true
		}
	}
	return 0, false
}

// randomTarget draws the target of one random link from a page of host hi.
func (g *generator) randomTarget(r *rng, hi int32) int32 {
	w := g.w
	if t, ok := g.specialTarget(r, hi); ok {
		return t
	}
	if w.regular == 1 || (w.hosts[hi].content > 1 && r.chance(w.cfg.SameHostLinks)) {
		return g.randomPage(r, hi)
	}
	oh := g.hostPop[w.zipf.sample(w.regular, r.float())]
	if oh == hi {
		oh = g.hostPop[w.zipf.sample(w.regular, r.float())]
	}
	if r.chance(crossHomeShare) {
		return w.hosts[oh].home
	}
	return g.randomPage(r, oh)
}

// makeRates draws the change class and rate of every content page, as
// the web's change model says (and under ChangeDrift, its second rate and
// when it takes over).
func (g *generator) makeRates() {
	w := g.w
	params := rateParamsOf(w.cfg.Change)
	var pooled [numClasses]float64
	if w.cfg.Change == ChangeNone {
		pooled = g.pooledMix()
	}
	if w.cfg.Change == ChangeDrift {
		w.drift = make([]rateSwitch, len(w.pages))
	}
	for id := range w.pages {
		p := &w.pages[id]
		p.class = ClassStatic
		if !p.kind.IsContent() || p.flags&flagBroken != 0 {
			continue
		}
		s := g.featureScore(int32(id))
		mix := &classMix[w.hosts[p.host].genre][kindRow(p.kind)]
		if w.cfg.Change == ChangeNone {
			mix = &pooled
		}
		hr := newRNG(w.cfg.Seed, sRate, uint64(p.host), 1<<40)
		r := newRNG(w.cfg.Seed, sRate, uint64(id), 0)
		p.class, p.rate = drawRate(&r, mix, s, hr.normal(), params)
		if w.drift != nil {
			w.drift[id] = g.drawSwitch(int32(id), mix, s, p.rate)
		}
	}
}

// featureScore is the standardized feature score s of content page id
// that the change models correlate rates with: its words draw, and for
// leaves its outlinks draw too.
func (g *generator) featureScore(id int32) float64 {
	s := float64(g.zw[id])
	if g.w.pages[id].kind == KindLeaf {
		s = 0.8*float64(g.zw[id]) + 0.6*float64(g.zo[id])
	}
	return s
}

// pooledMix is the page-weighted average of the class mixes of the web's
// content pages (classMix by genre and kind): the one mix every page draws
// from under ChangeNone, so that the web's overall class shares stay those
// of the default model.
func (g *generator) pooledMix() [numClasses]float64 {
	w := g.w
	var sum [numClasses]float64
	n := 0
	for id := range w.pages {
		p := &w.pages[id]
		if !p.kind.IsContent() || p.flags&flagBroken != 0 {
			continue
		}
		for c, q := range classMix[w.hosts[p.host].genre][kindRow(p.kind)] {
			sum[c] += q
		}
		n++
	}
	if n > 0 {
		for c := range sum {
			sum[c] /= float64(n)
		}
	}
	return sum
}

// drawSwitch draws the rate switch of content page id under ChangeDrift:
// a time uniform in the drift window (whole seconds, never the epoch
// itself) and a second class and rate drawn with the default weights from
// the page's own mix, with the same feature score, fresh noise and a fresh
// host effect. A page static before and after has no switch.
func (g *generator) drawSwitch(id int32, mix *[numClasses]float64, s, rate float64) rateSwitch {
	w := g.w
	hr := newRNG(w.cfg.Seed, sDrift, uint64(w.pages[id].host), 1<<40)
	r := newRNG(w.cfg.Seed, sDrift, uint64(id), 0)
	window := DriftWindow.Seconds()
	sec := 1 + math.Floor(r.float()*(window-1))
	class, after := drawRate(&r, mix, s, hr.normal(), &defaultRates)
	if rate == 0 && after == 0 {
		return rateSwitch{class: class}
	}
	return rateSwitch{sec: sec, rate: after, class: class}
}

func (g *generator) makeRobots() {
	w := g.w
	for hi := range w.regular {
		w.hosts[hi].robots = w.makeRobots(hi, g.topDirs[hi], g.leafPath[hi], g.protect[hi])
	}
}

// siteStyle writes a site's stylesheet: 10 to 40 rules of boilerplate that
// every page of the site carries in its <head> (as real sites do; it adds
// bytes, not words).
func siteStyle(r *rng) string {
	selectors := strings.Fields("body h1 h2 p a a:hover ul li img .nav .nav li .content .footer table td th code pre blockquote")
	props := []string{"color:#%06x", "background:#%06x", "margin:%dpx", "padding:%dpx", "font-size:%dpx", "line-height:1.%d", "border:1px solid #%06x", "max-width:%dpx"}
	var b strings.Builder
	for range r.between(10, 40) {
		b.WriteString(selectors[r.intn(len(selectors))])
		b.WriteString("{")
		for k := range r.between(1, 4) {
			if k > 0 {
				b.WriteByte(';')
			}
			p := props[r.intn(len(props))]
			if strings.Contains(p, "%06x") {
				fmt.Fprintf(&b, p, r.next()&0xffffff)
			} else {
				fmt.Fprintf(&b, p, r.between(1, 40))
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}
