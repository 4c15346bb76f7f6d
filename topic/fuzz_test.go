package topic

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTerms checks that Terms never panics and gives non-empty, valid,
// lower-case terms; that an Analyzer that has seen other texts gives the
// same terms; and that a model's scores of the input as a page and as a
// link stay in [0, 1].
func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"",
		"The Telescopes of 1668 and Saturn’s rings",
		"don't can't 'quoted' rock'n'roll 90's O'Neil",
		"Café NAÏVE École e\u0301cole Москва ΕΛΛΗΝΙΚΆ 天文望远镜 İstanbul ǅ",
		"mp3 3d 1,000 3.14 x y z",
		"star\xffgalaxy\xc3",
		"http://www.example.org/astronomy/telescopes-guide.html?q=nebula%20",
		strings.Repeat("ab", 40),
	} {
		f.Add(s)
	}
	m, err := Learn(astronomySamples, Options{})
	if err != nil {
		f.Fatal(err)
	}
	var a Analyzer
	a.Terms(strings.Join(astronomySamples, " "))
	f.Fuzz(func(t *testing.T, in string) {
		terms := Terms(in)
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) || term != strings.ToLower(term) {
				t.Fatalf("Terms(%q) has term %q: empty, invalid or not lower-case", in, term)
			}
		}
		if again := a.Terms(in); !slices.Equal(again, terms) {
			t.Fatalf("Terms(%q) = %q, but a used Analyzer gives %q", in, terms, again)
		}
		for _, s := range []float64{
			m.PageRelevance(in, in),
			m.LinkRelevance(in, in, in),
		} {
			if !(s >= 0 && s <= 1) {
				t.Fatalf("score %v of %q is not in [0, 1]", s, in)
			}
		}
	})
}
