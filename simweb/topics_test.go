package simweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// topicalConfig is the web the package documentation's topic figures are
// measured on: 100 hosts, 5,000 pages, 6 topics, the default hazards.
func topicalConfig(seed uint64) Config {
	c := DefaultConfig()
	c.Seed = seed
	c.Topics = 6
	return c
}

// topicFingerprint hashes what fingerprint does plus every topic fact:
// page and host topics, tunnels, samples and focused seed sets.
func topicFingerprint(t *testing.T, w *Web) string {
	t.Helper()
	h := sha256.New()
	h.Write([]byte(fingerprint(t, w)))
	for id := range w.NumPages() {
		fmt.Fprintln(h, w.PageTopic(id), w.BehindTunnel(id))
	}
	for i := range w.NumHosts() {
		fmt.Fprintln(h, w.Host(i).Topic, w.Host(i).Tunnel)
	}
	for k := range w.NumTopics() {
		fmt.Fprintln(h, w.TopicPages(k), w.TopicSample(k, 3), w.TopicSeeds(k, 10, Addressing{Port: 8080}))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestTopicConfig(t *testing.T) {
	for _, k := range []int{-1, 1, MaxTopics + 1} {
		c := topicalConfig(1)
		c.Topics = k
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), "Topics") {
			t.Errorf("New with Topics = %d: err = %v, want a Topics error", k, err)
		}
	}
	// A web without topics has none anywhere.
	w := newWeb(t, Config{Seed: 3, Hosts: 20, Pages: 500})
	if w.NumTopics() != 0 || w.TopicName(0) != "" || w.TopicWords(0) != nil || w.TopicPages(0) != 0 ||
		w.TopicSeeds(0, 5, Addressing{}) != nil || w.TopicSample(0, 2) != nil {
		t.Error("a web without topics answers topic questions")
	}
	for id := range w.NumPages() {
		if w.PageTopic(id) != -1 || w.BehindTunnel(id) || w.Page(id).Topic != -1 {
			t.Fatalf("page %d of a web without topics has topic %d", id, w.PageTopic(id))
		}
	}
	for i := range w.NumHosts() {
		if h := w.Host(i); h.Topic != -1 || h.Tunnel {
			t.Fatalf("host %s of a web without topics: topic %d, tunnel %v", h.Name, h.Topic, h.Tunnel)
		}
	}
}

// TestTopicalDeterminism: the same configuration gives the same topical
// web; another number of topics or none gives another.
func TestTopicalDeterminism(t *testing.T) {
	cfg := topicalConfig(5)
	cfg.Hosts, cfg.Pages = 40, 1500
	w := newWeb(t, cfg)
	if a, b := topicFingerprint(t, w), topicFingerprint(t, newWeb(t, cfg)); a != b {
		t.Fatal("same configuration, different topical webs")
	}
	// Home page titles tell webs apart cheaply.
	titles := func(w *Web) string {
		var b strings.Builder
		for i := range w.NumHosts() {
			b.WriteString(strings.Join(w.titleWords(nil, int32(w.Host(i).Home), false), " "))
		}
		return b.String()
	}
	plain := cfg
	plain.Topics = 0
	other := cfg
	other.Topics = 5
	if a := titles(w); a == titles(newWeb(t, plain)) || a == titles(newWeb(t, other)) {
		t.Fatal("another number of topics gives the same web")
	}
}

// TestTopicalGenerationTime: a 5,000-page topical web generates in well
// under a second (a loose bound, for a loaded machine).
func TestTopicalGenerationTime(t *testing.T) {
	start := time.Now()
	newWeb(t, topicalConfig(1))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a 5,000-page topical web took %v to generate", d)
	}
}

// TestTopicShares checks who has which topic: every regular host one, the
// topics' page shares near topicShares, the drift share, and pages
// without a body without a topic.
func TestTopicShares(t *testing.T) {
	want := topicShares(6)
	if want[0] != topic0Share || want[1] <= want[2] {
		t.Fatalf("topicShares(6) = %v", want)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		w := newWeb(t, topicalConfig(seed))
		counts := make([]int, w.NumTopics())
		hosts := make([]int, w.NumTopics())
		drifted, driftable, total := 0, 0, 0
		for id := range w.NumPages() {
			p := &w.pages[id]
			tp := w.PageTopic(id)
			hasBody := p.kind.IsContent() && p.flags&flagBroken == 0 && int(p.host) < w.regular
			if (tp >= 0) != hasBody {
				t.Fatalf("page %d (%s, status %d) has topic %d", id, p.kind, p.status, tp)
			}
			if tp < 0 {
				continue
			}
			counts[tp]++
			total++
			h := w.Host(int(p.host))
			switch {
			case p.kind == KindHome || p.kind == KindDirectory || h.Tunnel:
				if tp != h.Topic {
					t.Fatalf("page %d (%s on %s) has topic %d, its host %d", id, p.kind, h.Name, tp, h.Topic)
				}
			default:
				driftable++
				if tp != h.Topic {
					drifted++
				}
			}
		}
		for i := range w.NumHosts() {
			h := w.Host(i)
			if (h.Topic >= 0) != (i < w.regular) || h.Topic >= w.NumTopics() {
				t.Fatalf("host %s has topic %d", h.Name, h.Topic)
			}
			if h.Topic >= 0 {
				hosts[h.Topic]++
			}
		}
		var shares []string
		for k, n := range counts {
			if n != w.TopicPages(k) {
				t.Fatalf("TopicPages(%d) = %d, counted %d", k, w.TopicPages(k), n)
			}
			s := float64(n) / float64(total)
			shares = append(shares, fmt.Sprintf("%s %.3f (%d hosts)", w.TopicName(k), s, hosts[k]))
			if s < want[k]-0.025 || s > want[k]+0.025 {
				t.Errorf("seed %d: topic %d has %.3f of the pages, want %.3f±0.025", seed, k, s, want[k])
			}
		}
		drift := float64(drifted) / float64(driftable)
		t.Logf("seed %d: %d pages with a topic: %s; %.3f of leaves and documents drifted", seed, total, strings.Join(shares, ", "), drift)
		if drift < driftShare-0.025 || drift > driftShare+0.025 {
			t.Errorf("seed %d: %.3f of leaves and documents drifted, want %.2f", seed, drift, driftShare)
		}
	}
}

// isNavigation reports whether the link from page src to page dst is
// navigation (its home, its parent, a directory's child) rather than a
// random link.
func (w *Web) isNavigation(src, dst int32) bool {
	p, q := &w.pages[src], &w.pages[dst]
	return dst == w.hosts[p.host].home || dst == p.parent || q.parent == src
}

// TestTopicLinks measures the share of links between pages with topics
// that stay within a topic, over all links and over random links.
func TestTopicLinks(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := newWeb(t, topicalConfig(seed))
		var all, within, random, randomWithin int
		for id := range int32(w.NumPages()) {
			st := w.PageTopic(int(id))
			if st < 0 {
				continue
			}
			p := &w.pages[id]
			for _, x := range w.links[p.linkBeg:p.linkEnd] {
				tt := w.PageTopic(int(x))
				if tt < 0 {
					continue
				}
				all++
				if tt == st {
					within++
				}
				if !w.isNavigation(id, x) {
					random++
					if tt == st {
						randomWithin++
					}
				}
			}
		}
		fa, fr := float64(within)/float64(all), float64(randomWithin)/float64(random)
		t.Logf("seed %d: within-topic links: %.3f of %d links between pages with topics, %.3f of %d random ones", seed, fa, all, fr, random)
		if fa < 0.80 || fa > 0.90 || fr < 0.80 || fr > 0.90 {
			t.Errorf("seed %d: within-topic links %.3f (all), %.3f (random), want 0.80..0.90", seed, fa, fr)
		}
		checkPageRank(t, w)
	}
}

// pageText is the text of an HTML page as rendered here (no '<' or '>'
// in text), lower case, split into words: tags and the stylesheet become
// spaces.
func pageText(body []byte) []string {
	var b strings.Builder
	for len(body) > 0 {
		i := bytes.IndexByte(body, '<')
		if i < 0 {
			b.Write(body)
			break
		}
		b.Write(body[:i])
		b.WriteByte(' ')
		body = body[i:]
		if bytes.HasPrefix(body, []byte("<style>")) {
			if j := bytes.Index(body, []byte("</style>")); j >= 0 {
				body = body[j:]
			}
		}
		j := bytes.IndexByte(body, '>')
		if j < 0 {
			break
		}
		body = body[j+1:]
	}
	return strings.Fields(strings.ToLower(b.String()))
}

// TestTopicWords checks, without a similarity measure, that pages are
// written in their topic's words: for every topic, the share of the words
// of an HTML page that belong to that topic alone is far higher on the
// topic's pages than on the others, yet the two overlap a little (short
// pages, sparse pages, drifted pages that keep their host's words).
func TestTopicWords(t *testing.T) {
	w := newWeb(t, topicalConfig(1))
	only := map[string]int{} // word -> its topic, if only one
	for k := range w.NumTopics() {
		for _, x := range w.TopicWords(k) {
			if _, dup := only[x]; dup {
				only[x] = -1
			} else {
				only[x] = k
			}
		}
	}
	shares := make([][2][]float64, w.NumTopics()) // per topic: on, off
	r := w.newRenderer()
	for id := range int32(w.NumPages()) {
		tp := w.PageTopic(int(id))
		if tp < 0 || w.pages[id].kind == KindDocument {
			continue
		}
		b, _ := r.body(id, 0, Addressing{})
		words := pageText(decodeBody(t, w, id, bytes.Clone(b)))
		count := make([]int, w.NumTopics())
		for _, x := range words {
			if k, ok := only[x]; ok && k >= 0 {
				count[k]++
			}
		}
		for k, c := range count {
			side := 1
			if k == tp {
				side = 0
			}
			shares[k][side] = append(shares[k][side], float64(c)/float64(len(words)))
		}
	}
	for k, s := range shares {
		on, off := s[0], s[1]
		sort.Float64s(on)
		sort.Float64s(off)
		p95 := off[len(off)*95/100]
		above := len(on) - sort.SearchFloat64s(on, p95+1e-12)
		t.Logf("topic %d (%s): its words are %.3f of an on-topic page (median; 10th percentile %.3f), %.4f of an off-topic one (median; 95th percentile %.3f, max %.3f); %.3f of on-topic pages above that 95th percentile",
			k, w.TopicName(k), on[len(on)/2], on[len(on)/10], off[len(off)/2], p95, off[len(off)-1], float64(above)/float64(len(on)))
		if on[len(on)/2] < 0.25 || off[len(off)/2] > 0.02 || float64(above) < 0.9*float64(len(on)) {
			t.Errorf("topic %d: on-topic pages not clearly richer in its words", k)
		}
		if off[len(off)-1] <= on[0] {
			t.Errorf("topic %d: on- and off-topic pages separate perfectly (max off %.3f, min on %.3f)", k, off[len(off)-1], on[0])
		}
	}
}

// anchorClass says what an anchor says about a topic: the topic whose
// words it has most of, -1 if it has no topic word, -2 on a tie.
func anchorClass(words []string, owners map[string][]int, k int) int {
	votes := make([]int, k)
	anyTopic := false
	for _, x := range words {
		for _, tp := range owners[strings.ToLower(x)] {
			votes[tp]++
			anyTopic = true
		}
	}
	if !anyTopic {
		return -1
	}
	best := 0
	for tp, v := range votes {
		if v > votes[best] {
			best = tp
		}
	}
	for tp, v := range votes {
		if tp != best && v == votes[best] {
			return -2
		}
	}
	return best
}

// TestAnchorTopics measures how often a link's anchor text names its
// target's topic (links to the page's own home page, "Home", aside), and
// checks that pages carry the anchors anchorText gives.
func TestAnchorTopics(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := newWeb(t, topicalConfig(seed))
		owners := map[string][]int{}
		for k := range w.NumTopics() {
			for _, x := range w.TopicWords(k) {
				owners[x] = append(owners[x], k)
			}
		}
		var n, home, right, none, wrong int
		for id := range int32(w.NumPages()) {
			p := &w.pages[id]
			if w.PageTopic(int(id)) < 0 || p.kind == KindDocument {
				continue
			}
			loc := w.hosts[p.host].locale
			for i, x := range w.links[p.linkBeg:p.linkEnd] {
				tt := w.PageTopic(int(x))
				if tt < 0 {
					continue
				}
				n++
				if x == w.hosts[p.host].home {
					home++
					continue
				}
				switch c := anchorClass(w.anchorText(nil, id, i, x, loc), owners, w.NumTopics()); c {
				case tt:
					right++
				case -1:
					none++
				default:
					wrong++
				}
			}
		}
		m := float64(n - home)
		fr, fn, fw := float64(right)/m, float64(none)/m, float64(wrong)/m
		t.Logf("seed %d: %d links between pages with topics, %.3f to the page's home (\"Home\"); of the others the anchor names the target's topic %.3f, no topic %.3f, another topic or a tie %.3f",
			seed, n, float64(home)/float64(n), fr, fn, fw)
		if fr < 0.75 || fr > 0.88 || fn < genericAnchorShare || fn > 0.2 || fw > 0.1 {
			t.Errorf("seed %d: anchors name the target's topic %.3f, none %.3f, another %.3f", seed, fr, fn, fw)
		}
	}
	// The rendered pages carry these anchors.
	w := newWeb(t, topicalConfig(1))
	r := w.newRenderer()
	checked := 0
	for id := int32(0); id < int32(w.NumPages()) && checked < 200; id += 7 {
		p := &w.pages[id]
		if w.PageTopic(int(id)) < 0 || p.kind == KindDocument || p.enc != encUTF8 {
			continue
		}
		checked++
		b, _ := r.body(id, 0, Addressing{})
		for i, x := range w.links[p.linkBeg:p.linkEnd] {
			a := strings.Join(w.anchorText(nil, id, i, x, w.hosts[p.host].locale), " ")
			if !bytes.Contains(b, []byte("\">"+a+"</a>")) {
				t.Fatalf("page %d: no anchor %q for its link %d", id, a, i)
			}
		}
	}
}

// pageOf returns the page id of an absolute URL of the web.
func pageOf(t *testing.T, w *Web, u string) int32 {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	hi, ok := w.HostByName(pu.Host)
	if !ok {
		t.Fatalf("%s: no such host", u)
	}
	id, ok := w.Lookup(hi, pu.Path)
	if !ok {
		t.Fatalf("%s: no such page", u)
	}
	return int32(id)
}

// crawlGraph visits the link graph breadth first from seeds. Pages that
// expand returns true for have their outlinks followed (every visited page
// is "fetched"; the others' links are not followed). It returns the
// visited set.
func crawlGraph(w *Web, seeds []int32, expand func(id int32) bool) []bool {
	seen := make([]bool, w.NumPages())
	queue := slices.Clone(seeds)
	for _, s := range seeds {
		seen[s] = true
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if !expand(id) {
			continue
		}
		p := &w.pages[id]
		for _, x := range w.links[p.linkBeg:p.linkEnd] {
			if !seen[x] {
				seen[x] = true
				queue = append(queue, x)
			}
		}
	}
	return seen
}

// TestTunnels checks that pages behind tunnels are reachable, but only
// through pages of other topics: no link from a page of the tunnel's
// topic elsewhere (nor any redirect) leads into a tunnel host; a crawl from
// TopicSeeds that follows only the links of on-topic pages (and redirects)
// never reaches one, while a crawl following every link reaches them all.
func TestTunnels(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := newWeb(t, topicalConfig(seed))
		k := w.NumTopics()
		entrances := map[int32]map[int32]bool{} // tunnel host -> pages elsewhere linking in
		for id := range int32(w.NumPages()) {
			p := &w.pages[id]
			for _, x := range w.links[p.linkBeg:p.linkEnd] {
				xh := w.pages[x].host
				if !w.hosts[xh].tunnel || xh == p.host {
					continue
				}
				if !p.kind.IsContent() || p.topic == w.hosts[xh].topic {
					t.Fatalf("seed %d: %s (%s, topic %d) links into tunnel host %s of topic %d", seed,
						w.URL(int(id), Addressing{}), p.kind, w.PageTopic(int(id)), w.hosts[xh].name, w.hosts[xh].topic-1)
				}
				if entrances[xh] == nil {
					entrances[xh] = map[int32]bool{}
				}
				entrances[xh][id] = true
			}
		}
		var report []string
		for tp := range k {
			var tunnelHosts []string
			behind, minEntrances := 0, -1
			for hi := range int32(w.regular) {
				h := &w.hosts[hi]
				if !h.tunnel || int(h.topic)-1 != tp {
					continue
				}
				tunnelHosts = append(tunnelHosts, h.name)
				if n := len(entrances[hi]); minEntrances < 0 || n < minEntrances {
					minEntrances = n
				}
				if n := len(entrances[hi]); n < tunnelEntrances {
					t.Errorf("seed %d: tunnel host %s has %d entrances", seed, h.name, n)
				}
			}
			for id := range w.NumPages() {
				if w.PageTopic(id) == tp && w.BehindTunnel(id) {
					behind++
				}
			}
			share := float64(behind) / float64(w.TopicPages(tp))
			if len(tunnelHosts) == 0 || share > tunnelShareMax+0.02 {
				t.Errorf("seed %d: topic %d: tunnel hosts %v hold %.3f of its pages", seed, tp, tunnelHosts, share)
			}

			seedURLs := w.TopicSeeds(tp, 20, Addressing{})
			var seeds []int32
			for _, u := range seedURLs {
				seeds = append(seeds, pageOf(t, w, u))
			}
			focused := crawlGraph(w, seeds, func(id int32) bool {
				return w.PageTopic(int(id)) == tp || w.pages[id].kind == KindRedirect
			})
			everything := crawlGraph(w, seeds, func(int32) bool { return true })
			reachedOn, reachedAll := 0, 0
			for id := range w.NumPages() {
				if w.PageTopic(id) != tp {
					continue
				}
				if w.BehindTunnel(id) {
					if focused[id] {
						t.Fatalf("seed %d: a crawl that follows only topic %d's links reaches %s behind a tunnel", seed, tp, w.URL(id, Addressing{}))
					}
					if !everything[id] {
						t.Fatalf("seed %d: %s behind a tunnel is not reachable at all", seed, w.URL(id, Addressing{}))
					}
				}
				if focused[id] {
					reachedOn++
				}
				if everything[id] {
					reachedAll++
				}
			}
			report = append(report, fmt.Sprintf("%s: %d tunnel hosts, %d pages behind them (%.3f), at least %d entrances each; from 20 seeds %.3f of its pages reachable following only its links, %.3f following all",
				w.TopicName(tp), len(tunnelHosts), behind, share, minEntrances,
				float64(reachedOn)/float64(w.TopicPages(tp)), float64(reachedAll)/float64(w.TopicPages(tp))))
		}
		t.Logf("seed %d:\n%s", seed, strings.Join(report, "\n"))
	}
}

// TestTopicSeeds checks the seed sets of focused crawls: home pages of
// healthy hosts that are not tunnel hosts, about half on topic.
func TestTopicSeeds(t *testing.T) {
	w := newWeb(t, topicalConfig(2))
	a := Addressing{Port: 8080}
	for tp := range w.NumTopics() {
		for _, n := range []int{1, 7, 20} {
			urls := w.TopicSeeds(tp, n, a)
			if len(urls) != n {
				t.Fatalf("TopicSeeds(%d, %d) gave %d URLs", tp, n, len(urls))
			}
			eligible := 0
			for hi := range w.regular {
				h := &w.hosts[hi]
				if int(h.topic)-1 == tp && !h.tunnel && h.role != RoleDown && h.role != RoleBroken && h.robots.allowed("/") {
					eligible++
				}
			}
			on := 0
			for _, u := range urls {
				h := w.Host(int(w.pages[pageOf(t, w, strings.Replace(u, ":8080", "", 1))].host))
				if u != w.URL(h.Home, a) || h.Tunnel || h.Role == RoleDown || h.Role == RoleBroken {
					t.Fatalf("TopicSeeds(%d, %d): %s (host %+v)", tp, n, u, h)
				}
				if h.Topic == tp {
					on++
				}
			}
			if on != min((n+1)/2, eligible) {
				t.Errorf("TopicSeeds(%d, %d): %d on topic, want %d (%d hosts eligible)", tp, n, on, min((n+1)/2, eligible), eligible)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(urls)))) != n {
				t.Errorf("TopicSeeds(%d, %d) repeats URLs: %v", tp, n, urls)
			}
		}
		all := w.TopicSeeds(tp, 1000, a)
		if len(all) < w.regular/2 || len(all) > w.regular {
			t.Errorf("TopicSeeds(%d, 1000) gave %d URLs of %d hosts", tp, len(all), w.regular)
		}
	}
	if w.TopicSeeds(-1, 5, a) != nil || w.TopicSeeds(w.NumTopics(), 5, a) != nil || w.TopicSeeds(0, 0, a) != nil {
		t.Error("TopicSeeds of no topic or no seeds is not nil")
	}
}

// TestTopicSample checks the topic descriptions: two to four sentences of
// the topic's words and function words, mostly topic words, all different.
func TestTopicSample(t *testing.T) {
	w := newWeb(t, topicalConfig(1))
	glue := map[string]bool{}
	for _, g := range sampleGlue {
		glue[g] = true
	}
	for tp := range w.NumTopics() {
		vocab := map[string]bool{}
		for _, x := range w.TopicWords(tp) {
			vocab[x] = true
		}
		samples := w.TopicSample(tp, 5)
		if len(samples) != 5 || len(slices.Compact(slices.Sorted(slices.Values(samples)))) != 5 {
			t.Fatalf("topic %d: samples %q", tp, samples)
		}
		for _, s := range samples {
			if n := strings.Count(s, "."); n < 2 || n > 4 || !strings.HasSuffix(s, ".") {
				t.Errorf("topic %d: sample with %d sentences: %q", tp, n, s)
			}
			topical, words := 0, 0
			for _, x := range strings.Fields(strings.ToLower(strings.ReplaceAll(s, ".", ""))) {
				words++
				switch {
				case vocab[x]:
					topical++
				case !glue[x]:
					t.Errorf("topic %d: sample word %q is neither a topic word nor a function word", tp, x)
				}
			}
			if topical < words*6/10 {
				t.Errorf("topic %d: %d of %d sample words from the topic: %q", tp, topical, words, s)
			}
		}
		if again := newWeb(t, topicalConfig(1)).TopicSample(tp, 5); !slices.Equal(again, samples) {
			t.Errorf("topic %d: samples differ between two webs of one configuration", tp)
		}
		if !slices.Equal(w.TopicSample(tp, 2), samples[:2]) {
			t.Errorf("topic %d: the first samples depend on how many are asked for", tp)
		}
	}
	t.Logf("a sample of %s: %s", w.TopicName(0), w.TopicSample(0, 1)[0])
	if w.TopicSample(-1, 3) != nil || w.TopicSample(w.NumTopics(), 3) != nil {
		t.Error("samples of a topic that does not exist")
	}
}

// TestTopicTruth checks the topic columns of the truth files.
func TestTopicTruth(t *testing.T) {
	cfg := topicalConfig(4)
	cfg.Hosts, cfg.Pages = 30, 1200
	for _, topics := range []int{0, 4} {
		cfg.Topics = topics
		w := newWeb(t, cfg)
		a := Addressing{Port: 8080}
		dir := t.TempDir()
		fsys := storage.NewLocal()
		path := filepath.Join(dir, "truth.parquet")
		if err := storage.WriteFileAtomic(fsys, path, truthBytes(t, w, a)); err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[TruthPage](fsys, path)
		if err != nil {
			t.Fatal(err)
		}
		withTopic, behind := 0, 0
		for i, r := range rows {
			if int(r.Topic) != w.PageTopic(i) || r.BehindTunnel != w.BehindTunnel(i) {
				t.Fatalf("topics %d: row %d has topic %d, behind tunnel %v; page %d, %v", topics, i, r.Topic, r.BehindTunnel, w.PageTopic(i), w.BehindTunnel(i))
			}
			if r.Topic >= 0 {
				withTopic++
			}
			if r.BehindTunnel {
				behind++
			}
		}
		var buf bytes.Buffer
		if err := w.WriteHostTruth(&buf, a); err != nil {
			t.Fatal(err)
		}
		hpath := filepath.Join(dir, "hosts.parquet")
		if err := storage.WriteFileAtomic(fsys, hpath, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		hosts, err := parquetio.ReadAll[TruthHost](fsys, hpath)
		if err != nil {
			t.Fatal(err)
		}
		tunnels := 0
		for i, h := range hosts {
			if int(h.Topic) != w.Host(i).Topic || h.Tunnel != w.Host(i).Tunnel {
				t.Fatalf("topics %d: host row %d has topic %d, tunnel %v", topics, i, h.Topic, h.Tunnel)
			}
			if h.Tunnel {
				tunnels++
			}
		}
		if topics == 0 && (withTopic != 0 || behind != 0 || tunnels != 0) || topics > 0 && (withTopic < cfg.Pages*9/10 || behind == 0 || tunnels == 0) {
			t.Errorf("topics %d: %d rows with a topic, %d behind tunnels, %d tunnel hosts", topics, withTopic, behind, tunnels)
		}
	}
}
