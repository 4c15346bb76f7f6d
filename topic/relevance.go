package topic

import (
	"math"
	"net/url"
	"strings"
)

// The weights of the three kinds of evidence about a link's target in
// LinkRelevance.
const (
	// AnchorEvidence weighs the terms of a link's anchor text, the best
	// evidence: the words its page's author chose to describe the target.
	AnchorEvidence = 1.0
	// URLEvidence weighs the words of a link's URL, weaker evidence: they
	// are often abbreviated, or the names of a site's sections.
	URLEvidence = 0.7
	// ContextEvidence weighs the terms of the text around a link, the
	// weakest evidence: that text may be about another link.
	ContextEvidence = 0.5
)

// PageRelevance returns how well a page fits the topic: the cosine, in
// [0, 1], between the page's term vector and the topic vector. A term of
// the page counts once for each time it occurs in text, its body, and
// TitleBoost times for each time it occurs in title:
//
//	p(t) = tf_text(t) + TitleBoost · tf_title(t)
//	PageRelevance = Σ_t p(t)·w(t) / ‖p‖      (‖w‖ = 1)
//
// A page without a term, or without a term of the topic, scores 0.
func (m *Model) PageRelevance(title, text string) float64 {
	if len(m.terms) == 0 {
		return 0
	}
	sc := m.scorer()
	defer m.release(sc)
	add := func(by float64) func(string) {
		return func(t string) {
			if i, ok := sc.index[t]; ok {
				sc.counts[i] += by
				return
			}
			sc.index[t] = len(sc.counts)
			if w, ok := m.weight[t]; ok {
				sc.topical = append(sc.topical, termRef{len(sc.counts), w})
			}
			sc.counts = append(sc.counts, by)
		}
	}
	sc.a.each(title, nil, add(m.titleBoost))
	sc.a.each(text, nil, add(1))
	if len(sc.topical) == 0 {
		return 0
	}
	var dot, norm float64
	for _, c := range sc.counts {
		norm += c * c
	}
	for _, r := range sc.topical {
		dot += sc.counts[r.i] * r.w
	}
	return clamp01(dot / math.Sqrt(norm))
}

// LinkRelevance returns the relevance RW, in [0, 1], of a link's target to
// the topic, judged before the target is fetched from three kinds of
// evidence: the link's anchor text, its URL, and context, the text around
// the link on its page (any of them may be empty). A term's relevance is
// its weight relative to the topic's heaviest term, rel(t) = w(t)/max_u
// w(u), and each kind of evidence is as relevant as its most relevant
// term:
//
//	RW = max(AnchorEvidence·max_{t∈anchor} rel(t),
//	         URLEvidence·max_{t∈url} rel(t),
//	         ContextEvidence·max_{t∈context} rel(t))
//
// The URL's words are those of its host, its path and its query (with
// their escapes undone), analysed like any text, so that every character
// that is not a letter or digit splits them
// (http://www.example.org/astronomy/telescopes-guide.html gives example,
// astronomy, telescopes and guide), and without the words that every URL
// has (http, www, com, org, html, php, index and the like). A link without
// a term of the topic in any of them scores 0.
func (m *Model) LinkRelevance(anchor, rawURL, context string) float64 {
	if m.maxWeight <= 0 {
		return 0
	}
	sc := m.scorer()
	defer m.release(sc)
	rel := func(text string, extraStop map[string]struct{}) float64 {
		var best float64
		sc.a.each(text, extraStop, func(t string) {
			best = max(best, m.weight[t])
		})
		return best / m.maxWeight
	}
	rw := AnchorEvidence * rel(anchor, nil)
	if rw >= 1 {
		return 1
	}
	rw = max(rw, URLEvidence*rel(urlText(rawURL), urlStopWords))
	rw = max(rw, ContextEvidence*rel(context, nil))
	return clamp01(rw)
}

// urlText returns the text of a URL's host, path and query, with the
// escapes of its path and query undone; or raw itself if it does not parse.
func urlText(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	q, err := url.QueryUnescape(u.RawQuery)
	if err != nil {
		q = u.RawQuery
	}
	if u.Opaque != "" {
		// mailto:…, javascript:…: no host or path, only the opaque part.
		return u.Opaque + " " + q
	}
	return u.Hostname() + " " + u.Path + " " + q
}

// scorer is the scratch space of PageRelevance and LinkRelevance, kept
// in a Model's pool between calls: an Analyzer, whose memory of stems
// spares most of the stemming of the next page, and the term vector of a
// page.
type scorer struct {
	a Analyzer
	// The page's distinct terms, each mapped to its index in counts: the
	// terms in the order they first occur, and their counts. Summing in
	// that order makes a page's score the same on every call, to the last
	// bit.
	index  map[string]int
	counts []float64
	// The page's terms that are in the topic.
	topical []termRef
}

// maxScorerTerms is the most distinct terms of a page whose scratch space
// goes back into the pool: the space of a larger page is left to the
// garbage collector.
const maxScorerTerms = 1 << 14

// scorer takes scratch space from the model's pool, or makes it.
func (m *Model) scorer() *scorer {
	if m.pool != nil {
		if sc, ok := m.pool.Get().(*scorer); ok {
			return sc
		}
	}
	return &scorer{index: make(map[string]int, 512), counts: make([]float64, 0, 512)}
}

// release empties sc and returns it to the model's pool.
func (m *Model) release(sc *scorer) {
	if m.pool == nil || len(sc.counts) > maxScorerTerms {
		return
	}
	clear(sc.index)
	sc.counts, sc.topical = sc.counts[:0], sc.topical[:0]
	m.pool.Put(sc)
}

// termRef is a term of a page that is in the topic: its index in the
// page's counts and its weight in the topic vector.
type termRef struct {
	i int
	w float64
}

// clamp01 keeps a score computed in floating point within [0, 1].
func clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x > 0:
		return x
	default:
		return 0
	}
}
