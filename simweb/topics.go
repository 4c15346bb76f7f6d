package simweb

import (
	"math"
	"slices"
	"strings"
)

// Topical webs (Config.Topics = K >= 2): every regular host has a topic,
// every content page one too (mostly its host's), pages are written largely
// in their topic's words, random links mostly stay within a topic, and some
// hosts of every topic are reachable only through pages of other topics
// (tunnels). See the package documentation, "# Topics".

// Topic parameters.
const (
	topic0Share        = 0.12 // share of the content pages on topic 0
	topicShareDecay    = 0.8  // share of topic k+1 / share of topic k, for k >= 1
	driftShare         = 0.10 // leaves and documents whose topic is not their host's
	driftHostWords     = 0.4  // a drifted page's words of its host's topic, relative to its own topic's
	noiseWords         = 0.02 // words from a random other topic, on every page
	densityMedian      = 0.35 // median share of a page's body words drawn from its topic
	densitySigma       = 0.5  // lognormal spread of that share over pages
	densityMin         = 0.05
	densityMax         = 0.75
	titleBonus         = 0.3  // added to the share for titles and headings ...
	titleMax           = 0.85 // ... up to this
	topicZipfS         = 0.7  // the i-th word of a topic (from 0) has weight 1/(i+topicZipfQ)^topicZipfS
	topicZipfQ         = 2
	withinTopicLinks   = 0.88 // random links that look for a page of the source page's topic
	driftedTargets     = 0.10 // of those that leave the host: to a drifted page of the topic elsewhere
	genericAnchorShare = 0.08 // links whose anchor is generic ("read more")
	tunnelShareMin     = 0.08 // tunnel hosts of a topic hold at least this share of its hosts' pages ...
	tunnelShareMax     = 0.20 // ... and at most this
	maxTunnelHosts     = 3    // per topic
	tunnelEntrances    = 2    // extra links from pages of other topics into every tunnel host
	minTunnelHost      = 5    // a tunnel host has at least this many pages
)

// topicModel is the topic state of a web (zero when it has no topics).
type topicModel struct {
	k       int
	shares  []float64    // page share of each topic
	words   [][]string   // per topic, most frequent first (the order depends on the seed)
	alias   []aliasTable // Zipf over each topic's words
	generic [][]string   // generic anchors, split into words
	pages   []int        // content pages per topic (those with a body)
}

// newTopicModel sets up k topics for a seed: shares and vocabularies.
func newTopicModel(seed uint64, k int) topicModel {
	m := topicModel{k: k, shares: topicShares(k)}
	for t := range k {
		list := strings.Fields(topicLists[t])
		words := make([]string, len(list))
		for i, j := range permutation(seed, sTopicText, len(list)) {
			words[i] = list[j]
		}
		weights := make([]float64, len(words))
		for i := range weights {
			weights[i] = math.Pow(float64(i+topicZipfQ), -topicZipfS)
		}
		m.words = append(m.words, words)
		m.alias = append(m.alias, newAlias(weights))
	}
	for _, a := range genericAnchors {
		m.generic = append(m.generic, strings.Fields(a))
	}
	m.pages = make([]int, k)
	return m
}

// topicShares is the page share of each of k topics: topic0Share for
// topic 0, the rest decaying geometrically from topic 1 on.
func topicShares(k int) []float64 {
	s := make([]float64, k)
	s[0] = topic0Share
	sum := 0.0
	for t := 1; t < k; t++ {
		s[t] = math.Pow(topicShareDecay, float64(t-1))
		sum += s[t]
	}
	for t := 1; t < k; t++ {
		s[t] *= (1 - topic0Share) / sum
	}
	return s
}

// other draws a topic other than t, with probabilities proportional to
// the shares, from a uniform u.
func (m *topicModel) other(t int, u float64) int {
	x := u * (1 - m.shares[t])
	last := -1
	for o, s := range m.shares {
		if o == t {
			continue
		}
		if x < s {
			return o
		}
		x -= s
		last = o
	}
	return last
}

// word draws a word of topic t from a 64-bit random value.
func (m *topicModel) word(t int, h uint64) string {
	return m.words[t][m.alias[t].sample(h)]
}

// topical reports whether the web has topics.
func (w *Web) topical() bool { return w.topics.k > 0 }

// wordMix says how the words of one page (its body, or its title and
// headings) are drawn: a share dens from its topic, sec from a second
// topic (its host's, for a page that drifted), noise from random other
// topics, the rest from the general word stock.
type wordMix struct {
	topic, second    int // -1: none
	dens, sec, noise float64
}

// pageMix is the word mix of page id's body, or with title of its title
// and headings. Pages without a topic draw from the general stock only.
func (w *Web) pageMix(id int32, title bool) wordMix {
	p := &w.pages[id]
	if p.topic == 0 {
		return wordMix{topic: -1, second: -1}
	}
	r := newRNG(w.cfg.Seed, sTopic, uint64(id), 4)
	d := min(max(densityMedian*math.Exp(densitySigma*r.normal()), densityMin), densityMax)
	if title {
		d = min(d+titleBonus, titleMax)
	}
	m := wordMix{topic: int(p.topic) - 1, second: -1, dens: d, noise: noiseWords}
	if ht := w.hosts[p.host].topic; ht != p.topic {
		m.second, m.sec = int(ht)-1, driftHostWords*d
	}
	return m
}

// mixWord draws one word under mix m for a page of locale loc from a
// 64-bit random value. Without a topic it is exactly vocab.word.
func (w *Web) mixWord(m *wordMix, h uint64, loc uint8) string {
	if m.topic < 0 {
		return w.vocab.word(h, loc)
	}
	x := unit(mix64(h ^ 0x2545f4914f6cdd1d))
	t := m.topic
	switch {
	case x < m.dens:
	case x < m.dens+m.sec:
		t = m.second
	case x < m.dens+m.sec+m.noise:
		t = (t + 1 + int(mix64(h^0x9fb21c651e98df25)%uint64(w.topics.k-1))) % w.topics.k
	default:
		return w.vocab.word(h, loc)
	}
	return w.topics.word(t, mix64(h^0xc2b2ae3d27d4eb4f))
}

// genericAnchor returns the generic anchor of the i-th link of page src,
// or nil if the link's anchor comes from its target.
func (w *Web) genericAnchor(src int32, i int) []string {
	h := hash3(w.cfg.Seed, sTopicLink, uint64(src), uint64(i))
	if unit(h) >= genericAnchorShare {
		return nil
	}
	return w.topics.generic[mix64(h)%uint64(len(w.topics.generic))]
}

// makeHostTopics gives every regular host a topic, so that the topics'
// page shares track topicShares (biggest hosts first, each to the topic
// furthest below its share), and chooses the tunnel hosts.
func (g *generator) makeHostTopics() {
	w := g.w
	m := &w.topics
	order := make([]int32, w.regular)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return int(w.hosts[b].content - w.hosts[a].content) })
	assigned := make([]float64, m.k)
	total := 0.0
	for _, hi := range order {
		n := float64(w.hosts[hi].content)
		best, bestDef := 0, math.Inf(-1)
		for t := range m.k {
			if def := m.shares[t]*(total+n) - assigned[t]; def > bestDef {
				best, bestDef = t, def
			}
		}
		w.hosts[hi].topic = uint8(best + 1)
		assigned[best] += n
		total += n
	}
	g.chooseTunnels()
	g.topicHosts = make([][]int32, m.k)
	g.topicHostsAll = make([][]int32, m.k)
	for _, hi := range g.hostPop {
		h := &w.hosts[hi]
		t := int(h.topic) - 1
		g.topicHostsAll[t] = append(g.topicHostsAll[t], hi)
		if !h.tunnel {
			g.topicHosts[t] = append(g.topicHosts[t], hi)
		}
	}
}

// chooseTunnels makes some hosts of every topic tunnel hosts: healthy
// hosts of at least minTunnelHost pages, never a topic's biggest host, in
// random order, at most maxTunnelHosts per topic, together holding
// tunnelShareMin..tunnelShareMax of the topic's host pages where sizes
// allow. No page of a tunnel host's topic outside it will link to it, and
// robots.txt always allows its home page.
func (g *generator) chooseTunnels() {
	w := g.w
	k := w.topics.k
	total := make([]int, k)
	biggest := make([]int32, k)
	for t := range biggest {
		biggest[t] = -1
	}
	for hi := range int32(w.regular) {
		h := &w.hosts[hi]
		t := int(h.topic) - 1
		total[t] += int(h.content)
		if biggest[t] < 0 || h.content > w.hosts[biggest[t]].content {
			biggest[t] = hi
		}
	}
	acc := make([]int, k)
	count := make([]int, k)
	for _, hi := range permutation(w.cfg.Seed, sTopic, w.regular) {
		h := &w.hosts[hi]
		t := int(h.topic) - 1
		if hi == biggest[t] || h.role != RoleNormal || h.content < minTunnelHost || count[t] == maxTunnelHosts ||
			float64(acc[t]) >= tunnelShareMin*float64(total[t]) ||
			float64(acc[t]+int(h.content)) > tunnelShareMax*float64(total[t]) {
			continue
		}
		h.tunnel = true
		acc[t] += int(h.content)
		count[t]++
		g.protect[hi] = append(g.protect[hi], "/")
	}
}

// makePageTopics gives every content page of the regular hosts its topic:
// its host's, but for a share driftShare of the leaves and documents of
// hosts that are not tunnel hosts, which take another topic (drawn by
// share). It then counts the pages per topic and lists every host's pages
// per topic in popularity order.
func (g *generator) makePageTopics() {
	w := g.w
	m := &w.topics
	g.topicRank = make([][][]int32, w.regular)
	g.drifted = make([][]int32, m.k)
	for hi := range w.regular {
		h := &w.hosts[hi]
		g.topicRank[hi] = make([][]int32, m.k)
		for _, id := range h.rank {
			p := &w.pages[id]
			p.topic = h.topic
			if !h.tunnel && (p.kind == KindLeaf || p.kind == KindDocument) &&
				unit(hash3(w.cfg.Seed, sTopic, uint64(id), 1)) < driftShare {
				p.topic = uint8(m.other(int(h.topic)-1, unit(hash3(w.cfg.Seed, sTopic, uint64(id), 2))) + 1)
			}
			t := int(p.topic) - 1
			g.topicRank[hi][t] = append(g.topicRank[hi][t], id)
			if p.topic != h.topic {
				g.drifted[t] = append(g.drifted[t], id)
			}
			if p.flags&flagBroken == 0 {
				m.pages[t]++
			}
		}
	}
}

// chooseEntrances picks, for every tunnel host, tunnelEntrances pages of
// other topics on healthy hosts that are not tunnel hosts (HTML, followed,
// not broken) that will link to its home page, so that every tunnel is
// reachable; random links across topics add more entrances.
func (g *generator) chooseEntrances() {
	w := g.w
	content := 0
	for hi := range w.regular {
		content += int(w.hosts[hi].content)
	}
	g.entrance = make(map[int32][]int32)
	for hi := range w.regular {
		h := &w.hosts[hi]
		if !h.tunnel {
			continue
		}
		r := newRNG(w.cfg.Seed, sTopic, uint64(hi), 3)
		for found, tries := 0, 0; found < tunnelEntrances && tries < 10000; tries++ {
			id := int32(r.intn(content))
			p := &w.pages[id]
			sh := &w.hosts[p.host]
			if p.topic == h.topic || sh.tunnel || sh.role != RoleNormal || p.kind == KindDocument ||
				p.flags&(flagNofollow|flagBroken) != 0 || slices.Contains(g.entrance[id], h.home) {
				continue
			}
			g.entrance[id] = append(g.entrance[id], h.home)
			found++
		}
	}
}

// topicalTarget draws the target of one random link from page id in a
// topical web: the special targets as randomTarget has them, then a page
// of the source page's topic (withinTopicLinks) or of another topic drawn
// by share; on the same host when it has pages of that topic (with
// probability SameHostLinks), else a drifted page of the topic on another
// host (driftedTargets) or a page on a host of that topic drawn by
// popularity (Zipf): its home page or a Zipf-drawn page of the topic. A
// link within a topic never leads to another host's tunnel.
func (g *generator) topicalTarget(r *rng, id int32) int32 {
	w := g.w
	p := &w.pages[id]
	hi := p.host
	if t, ok := g.specialTarget(r, hi); ok {
		return t
	}
	src := int(p.topic) - 1
	want := src
	if !r.chance(withinTopicLinks) {
		want = w.topics.other(src, r.float())
	}
	if lst := g.topicRank[hi][want]; (len(lst) > 1 || len(lst) == 1 && lst[0] != id) && r.chance(w.cfg.SameHostLinks) {
		return lst[w.zipf.sample(len(lst), r.float())]
	}
	if d := g.drifted[want]; len(d) > 0 && r.chance(driftedTargets) {
		return d[r.intn(len(d))] // never on a tunnel host
	}
	hosts := g.topicHostsAll[want]
	if want == src {
		hosts = g.topicHosts[want]
	}
	if len(hosts) == 0 {
		return g.randomPage(r, hi) // a topic without hosts (webs with fewer hosts than topics)
	}
	oh := hosts[w.zipf.sample(len(hosts), r.float())]
	if oh == hi && len(hosts) > 1 {
		oh = hosts[w.zipf.sample(len(hosts), r.float())]
	}
	if r.chance(crossHomeShare) {
		return w.hosts[oh].home
	}
	lst := g.topicRank[oh][want]
	return lst[w.zipf.sample(len(lst), r.float())]
}

// NumTopics is the number of topics (Config.Topics; 0 if the web has
// none).
func (w *Web) NumTopics() int { return w.topics.k }

// TopicName is the name of topic t ("astronomy", "cooking", ...), or ""
// if the web has no such topic.
func (w *Web) TopicName(t int) string {
	if t < 0 || t >= w.topics.k {
		return ""
	}
	return topicNames[t]
}

// TopicWords returns the vocabulary of topic t, most frequent first (nil
// if the web has no such topic).
func (w *Web) TopicWords(t int) []string {
	if t < 0 || t >= w.topics.k {
		return nil
	}
	return slices.Clone(w.topics.words[t])
}

// PageTopic is the topic of page id: -1 in a web without topics and for
// URLs without a body of their own (redirects, 404s, hazards, hostile and
// unresolvable hosts, pages that always answer 500). Pages of hosts that
// are down keep their topic.
func (w *Web) PageTopic(id int) int {
	p := &w.pages[id]
	if p.topic == 0 || p.flags&flagBroken != 0 {
		return -1
	}
	return int(p.topic) - 1
}

// TopicPages is the number of pages whose PageTopic is t.
func (w *Web) TopicPages(t int) int {
	if t < 0 || t >= w.topics.k {
		return 0
	}
	return w.topics.pages[t]
}

// BehindTunnel reports whether page id has a topic and lies on a tunnel
// host: no page of that topic outside the host links into it, so that a
// crawler following only links out of on-topic pages never finds it
// (unless it starts there; TopicSeeds never does).
func (w *Web) BehindTunnel(id int) bool {
	return w.PageTopic(id) >= 0 && w.hosts[w.pages[id].host].tunnel
}

// TopicSeeds returns up to n home page URLs under a for a crawl focused
// on topic t: half (rounded up) of hosts of topic t, the rest of hosts of
// other topics, alternating, in an order fixed by the seed and the topic.
// None is a tunnel host, a host that is down or broken, or a host whose
// robots.txt forbids its home page. When one kind runs out the other fills
// in. It returns nil if the web has no topic t.
func (w *Web) TopicSeeds(t, n int, a Addressing) []string {
	if t < 0 || t >= w.topics.k || n <= 0 {
		return nil
	}
	var on, off []int32
	for _, hi := range permutation(hash3(w.cfg.Seed, sTopic, uint64(t), 5), sTopic, w.regular) {
		h := &w.hosts[hi]
		if h.tunnel || h.role == RoleDown || h.role == RoleBroken || !h.robots.allowed("/") {
			continue
		}
		if int(h.topic)-1 == t {
			on = append(on, hi)
		} else {
			off = append(off, hi)
		}
	}
	nOn := min(len(on), (n+1)/2)
	nOff := min(len(off), n-nOn)
	nOn = min(len(on), n-nOff)
	out := make([]string, 0, nOn+nOff)
	for i := 0; i < max(nOn, nOff); i++ {
		if i < nOn {
			out = append(out, w.URL(int(w.hosts[on[i]].home), a))
		}
		if i < nOff {
			out = append(out, w.URL(int(w.hosts[off[i]].home), a))
		}
	}
	return out
}

// TopicSample returns n sample texts of topic t, as a user would describe
// the topic to a focused crawler: two to four sentences each, of the
// topic's words joined by common English function words ("the", "of",
// "and"). It returns nil if the web has no topic t.
func (w *Web) TopicSample(t, n int) []string {
	if t < 0 || t >= w.topics.k || n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	var b strings.Builder
	for i := range n {
		b.Reset()
		r := newRNG(w.cfg.Seed, sTopicText, uint64(t), uint64(i)+1)
		for s := range r.between(2, 4) {
			if s > 0 {
				b.WriteByte(' ')
			}
			// Sentences start and end with a topic word, and no two
			// function words follow each other.
			nw := r.between(7, 13)
			glue := true
			for j := range nw {
				var word string
				if glue || j == nw-1 || !r.chance(0.35) {
					word, glue = w.topics.word(t, r.next()), false
				} else {
					word, glue = sampleGlue[r.intn(len(sampleGlue))], true
				}
				if j == 0 {
					word = capitalize(word)
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(word)
			}
			b.WriteByte('.')
		}
		out = append(out, b.String())
	}
	return out
}
