package topic

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

const (
	// DefaultMaxTerms is the number of terms a Model keeps when
	// Options.MaxTerms is 0.
	DefaultMaxTerms = 200
	// DefaultTitleBoost is how many times a word of a page's title counts
	// when Options.TitleBoost is 0.
	DefaultTitleBoost = 3
	// modelVersion is the version of the JSON form of a Model, and of the
	// analysis its terms came from: a Model's terms only match the terms
	// of pages analysed the same way.
	modelVersion = 1
)

// Options tunes Learn. The zero value is valid and gives the defaults.
type Options struct {
	// MaxTerms is how many of the heaviest terms the topic vector keeps
	// (DefaultMaxTerms when 0). Must not be negative.
	MaxTerms int
	// TitleBoost is how many times each word of a page's title counts in
	// the page's term vector, against once for a word of its body
	// (DefaultTitleBoost when 0; 1 counts the title like the body). Must
	// not be negative.
	TitleBoost float64
	// Background are texts off the topic, such as pages of a general
	// crawl, used only for document frequencies: with them a term's
	// weight is multiplied by its inverse document frequency over the
	// samples and the background, so that words common on any page weigh
	// less than the topic's own words. Without them the weights are the
	// samples' sublinear term frequencies alone. Background texts without
	// a term are ignored.
	Background []string
}

// TermWeight is one term of a topic vector and its weight.
type TermWeight struct {
	// Term is an index term, as Terms returns it (a stem).
	Term string `json:"term"`
	// Weight is the term's component of the unit-length topic vector,
	// greater than 0.
	Weight float64 `json:"weight"`
}

// A Model is a topic learnt from sample texts: its topic vector, a
// unit-length vector of term weights, and the title boost used to build
// the term vectors of pages. Its topic never changes after it is made. A
// Model is safe for concurrent use; it keeps a pool of scratch space for
// scoring, with memories of stems, so that a goroutine that scores page
// after page stems each word once. Its JSON form (MarshalJSON) carries the
// whole topic, so that a job's specification can take it to the tasks that
// score pages. A Model's zero value has no terms and scores everything 0.
type Model struct {
	terms      []TermWeight       // heaviest first, ties by term
	weight     map[string]float64 // term → weight
	maxWeight  float64            // terms[0].Weight
	titleBoost float64
	// pool holds scratch space for scoring (*scorer), so that a goroutine
	// that scores page after page reuses its memory of stems.
	pool *sync.Pool
}

// Learn learns a topic from sample texts about it: whole pages, paragraphs
// or just a few sentences. Each term t of the samples weighs
//
//	w(t) = (1 + ln tf(t)) · idf(t)
//
// where tf(t) is the number of times t occurs in all the samples together,
// and idf(t) = ln((1+N)/(1+df(t))) + 1 when o.Background is given, N being
// the number of samples and background texts (those with a term) and
// df(t) the number of them in which t occurs, or 1 without a background.
// The o.MaxTerms heaviest terms are kept (ties broken by the term, so the
// model is the same on every run), and the vector is scaled to unit
// length. Learn fails if there are no samples, if any sample has no term,
// or if an option is out of range.
func Learn(samples []string, o Options) (*Model, error) {
	if err := o.fill(); err != nil {
		return nil, fmt.Errorf("topic: learn: %w", err)
	}
	if len(samples) == 0 {
		return nil, errors.New("topic: learn: no sample texts")
	}
	var (
		a  Analyzer
		tf = make(map[string]int)
		df = make(map[string]int)
		n  int // documents with a term, for idf
	)
	// seen holds the terms of the current document, for df.
	seen := make(map[string]struct{})
	count := func(text string, intoTF bool) int {
		clear(seen)
		terms := 0
		a.each(text, nil, func(t string) {
			terms++
			if intoTF {
				tf[t]++
			} else if _, ok := tf[t]; !ok {
				// Only the samples' terms need a df: the rest of a
				// background's vocabulary would only take memory.
				return
			}
			if _, ok := seen[t]; !ok {
				seen[t] = struct{}{}
				df[t]++
			}
		})
		if terms > 0 {
			n++
		}
		return terms
	}
	for i, s := range samples {
		if count(s, true) == 0 {
			return nil, fmt.Errorf("topic: learn: sample %d of %d has no terms (it is empty, or all stop words, numbers and punctuation)", i+1, len(samples))
		}
	}
	for _, s := range o.Background {
		count(s, false)
	}
	withIDF := len(o.Background) > 0

	terms := make([]TermWeight, 0, len(tf))
	for t, f := range tf {
		w := 1 + math.Log(float64(f))
		if withIDF {
			w *= math.Log(float64(1+n)/float64(1+df[t])) + 1
		}
		terms = append(terms, TermWeight{Term: t, Weight: w})
	}
	m, err := newModel(terms, o.MaxTerms, o.TitleBoost)
	if err != nil {
		return nil, fmt.Errorf("topic: learn: %w", err)
	}
	return m, nil
}

// fill checks o and puts the defaults in its zero fields.
func (o *Options) fill() error {
	switch {
	case o.MaxTerms < 0:
		return fmt.Errorf("MaxTerms is %d, want 0 (the default, %d) or more", o.MaxTerms, DefaultMaxTerms)
	case o.MaxTerms == 0:
		o.MaxTerms = DefaultMaxTerms
	}
	switch {
	case o.TitleBoost < 0 || math.IsNaN(o.TitleBoost) || math.IsInf(o.TitleBoost, 0):
		return fmt.Errorf("TitleBoost is %v, want 0 (the default, %d) or a finite positive number", o.TitleBoost, DefaultTitleBoost)
	case o.TitleBoost == 0:
		o.TitleBoost = DefaultTitleBoost
	}
	return nil
}

// newModel makes a Model of the maxTerms heaviest of terms, scaled to unit
// length. The terms must be distinct; terms is reordered.
func newModel(terms []TermWeight, maxTerms int, titleBoost float64) (*Model, error) {
	for _, t := range terms {
		if t.Term == "" {
			return nil, errors.New("a term is empty")
		}
		if !(t.Weight > 0) || math.IsInf(t.Weight, 0) {
			return nil, fmt.Errorf("term %q weighs %v, want a finite positive number", t.Term, t.Weight)
		}
	}
	if len(terms) == 0 {
		return nil, errors.New("no terms")
	}
	slices.SortFunc(terms, func(x, y TermWeight) int {
		if c := cmp.Compare(y.Weight, x.Weight); c != 0 {
			return c
		}
		return cmp.Compare(x.Term, y.Term)
	})
	if len(terms) > maxTerms {
		terms = terms[:maxTerms]
	}
	terms = slices.Clip(terms)
	// The length is computed, and the weights scaled, relative to the
	// heaviest weight, against overflow and underflow.
	heaviest := terms[0].Weight
	var sum float64
	for _, t := range terms {
		r := t.Weight / heaviest
		sum += r * r
	}
	root := math.Sqrt(sum)
	// A vector already of unit length (a decoded model) is kept as it is:
	// scaling it again would change the last bits of the weights, and so
	// the scores.
	unit := math.Abs(heaviest*root-1) < 1e-12
	m := &Model{
		terms:      terms,
		weight:     make(map[string]float64, len(terms)),
		titleBoost: titleBoost,
		pool:       new(sync.Pool),
	}
	for i := range terms {
		if !unit {
			terms[i].Weight = terms[i].Weight / heaviest / root
		}
		if _, ok := m.weight[terms[i].Term]; ok {
			return nil, fmt.Errorf("term %q is repeated", terms[i].Term)
		}
		m.weight[terms[i].Term] = terms[i].Weight
	}
	m.maxWeight = terms[0].Weight
	return m, nil
}

// Vector returns the topic vector: its terms with their weights, heaviest
// first. The slice is a copy.
func (m *Model) Vector() []TermWeight {
	return slices.Clone(m.terms)
}

// Weight returns the weight of term (a stem, as Terms returns it) in the
// topic vector, or 0 if the vector does not have it.
func (m *Model) Weight(term string) float64 {
	return m.weight[term]
}

// TitleBoost returns how many times a word of a page's title counts in
// PageRelevance, against once for a word of its body.
func (m *Model) TitleBoost() float64 {
	return m.titleBoost
}

// modelJSON is the JSON form of a Model.
type modelJSON struct {
	Version    int          `json:"version"`
	TitleBoost float64      `json:"title_boost"`
	Terms      []TermWeight `json:"terms"`
}

// MarshalJSON encodes the model as an object with its format's version,
// its title boost and its terms with their weights, heaviest first:
//
//	{"version":1,"title_boost":3,"terms":[{"term":"telescop","weight":0.42},…]}
func (m *Model) MarshalJSON() ([]byte, error) {
	return json.Marshal(modelJSON{Version: modelVersion, TitleBoost: m.titleBoost, Terms: m.terms})
}

// UnmarshalJSON decodes a model that MarshalJSON encoded. It checks the
// version, the title boost and the terms (distinct, not empty, with finite
// positive weights), and scales the weights to unit length again, so that
// a hand-edited model scores in [0, 1] too.
func (m *Model) UnmarshalJSON(data []byte) error {
	var j modelJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("topic: decode model: %w", err)
	}
	if j.Version != modelVersion {
		return fmt.Errorf("topic: decode model: version %d, want %d", j.Version, modelVersion)
	}
	if !(j.TitleBoost > 0) || math.IsInf(j.TitleBoost, 0) {
		return fmt.Errorf("topic: decode model: title_boost is %v, want a finite positive number", j.TitleBoost)
	}
	d, err := newModel(j.Terms, len(j.Terms), j.TitleBoost)
	if err != nil {
		return fmt.Errorf("topic: decode model: %w", err)
	}
	*m = *d
	return nil
}
