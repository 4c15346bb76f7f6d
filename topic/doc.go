// Package topic is the text side of a focused (topic) crawler: it learns a
// topic from sample texts, rates a page by how well its text fits the
// topic, and rates a link before its target is fetched by the words of its
// anchor text, its URL and the text around it.
//
// The design follows the focused crawler of the Institute of Computing
// Technology, Chinese Academy of Sciences: Li Sheng-tao, Zhao Zhang-jie and
// Yu Zhi-hua, "Design and Realization of Focused Web Crawler" (基于主题的
// Web信息采集系统的设计与实现), which describes the SkyReach (天达) crawler.
// There a topic is described by sample texts, a page's relevance is the
// similarity of its text to the topic, and a link is rated, before it is
// fetched, by how relevant the words of its anchor text are to the topic;
// the crawler then orders its frontier by combining that link relevance
// with a link-structure score, IPageRank. This package computes the text
// scores; ordering the frontier is the crawler's business.
//
// # Terms
//
// Every text, sample or page, is reduced to index terms by Terms (or an
// Analyzer, which does the same faster when it analyses many texts):
//
//   - A word is a maximal run of letters, digits and combining marks
//     (Unicode's, so "naïve", "Москва" and "ελληνικά" are words). An
//     apostrophe (' or ’) between two letters belongs to the word, so that
//     "don't" is one word and "telescope's" stems like "telescope".
//     Everything else separates words.
//   - Words are lower-cased, and dropped if they are English stop words
//     (about 250 of them, with their contractions), one letter long, all
//     digits (3, 1999, but not mp3) or longer than 64 characters.
//   - Words of Latin script are stemmed by the Snowball English (Porter2)
//     stemmer, so "telescope", "telescopes" and "telescope's" all give the
//     term "telescop". Words of other scripts are kept as they are.
//
// Scripts written without spaces between words (Chinese, Japanese, Thai)
// are not segmented: a run of them is one word, and a run longer than 64
// characters is dropped. The topic and the pages must then be in a language
// written with spaces.
//
// # The topic vector
//
// Learn turns the samples into the topic vector w, one weight per term,
// by tf-idf, term frequency times inverse document frequency (Salton and
// Buckley, "Term-weighting approaches in automatic text retrieval", 1988).
// The samples are one description of one topic, so a term's
// frequency tf(t) is its number of occurrences in all of them together,
// scaled sublinearly so that a word repeated in one sample does not
// outweigh the rest:
//
//	w'(t) = (1 + ln tf(t)) · idf(t)
//
// The inverse document frequency needs documents off the topic: computed
// over a few samples alone it would collapse (with one sample every term
// has the same), or worse, favour the words that only some samples use
// over the words that all of them use. So idf(t) = 1 unless
// Options.Background gives texts off the topic, and then
//
//	idf(t) = ln((1 + N) / (1 + df(t))) + 1
//
// over the N samples and background texts (those with a term), df(t)
// being the number of them in which t occurs: a word that many background
// pages use weighs less than one only the samples use. Only the samples'
// terms are in the vector. The Options.MaxTerms (default 200) heaviest
// terms are kept, ties broken by the term, and scaled to unit length:
//
//	w(t) = w'(t) / sqrt(Σ_u w'(u)²)      (u over the kept terms)
//
// # Page relevance
//
// A page's term vector counts each of its terms once per occurrence in
// its text and Options.TitleBoost times (default 3) per occurrence in its
// title, and its relevance is the cosine between that vector and the
// topic's, in [0, 1]:
//
//	p(t) = tf_text(t) + TitleBoost · tf_title(t)
//	PageRelevance = Σ_t p(t)·w(t) / sqrt(Σ_t p(t)²)
//
// # Link relevance
//
// A link's relevance RW, in [0, 1], is judged from three kinds of
// evidence, each as relevant as its most relevant term, a term's relevance
// being its weight relative to the topic's heaviest term:
//
//	rel(t) = w(t) / max_u w(u)          (0 for a term not in the topic)
//	RW = max(1.0 · max_{t ∈ anchor text}  rel(t),
//	         0.7 · max_{t ∈ URL}          rel(t),
//	         0.5 · max_{t ∈ context}      rel(t))
//
// The anchor text's terms are the paper's evidence. The URL's words and
// the context, the text around the link on its page, are weaker evidence;
// the three weights are AnchorEvidence, URLEvidence and ContextEvidence.
// The URL's words are those of its host, path and query, with escapes
// undone, analysed like any text and without the words every URL has
// (http, www, com, html, index...): so
// http://www.example.org/astronomy/telescopes-guide.html gives the terms
// exampl, astronomi, telescop and guid. A link with no term of the topic
// in any of them scores 0.
//
// # Carrying a topic to the tasks
//
// A Model encodes itself as JSON (MarshalJSON) and decodes itself
// (UnmarshalJSON), so that a job's specification can carry it to the tasks
// that score pages; a decoded model scores every page and link exactly as
// the model that was encoded.
package topic
