package topic

import (
	"slices"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"only stop words", "The and of it is not what they were", nil},
		{"stop words go, the rest stems", "The stars of the Milky Way", []string{"star", "milki", "way"}},
		{"plural and singular merge", "telescopes telescope Telescope TELESCOPES", []string{"telescop", "telescop", "telescop", "telescop"}},
		{"possessive merges", "the telescope's mirror, the telescopes' mirrors", []string{"telescop", "mirror", "telescop", "mirror"}},
		{"inflections merge", "observe observed observing observer observation", []string{"observ", "observ", "observ", "observ", "observ"}},
		{"numbers and one-letter words go", "In 1668 a 6 x 4.5 m mirror; 3.14 and 1,000", []string{"mirror"}},
		{"words with digits stay", "an mp3 player and a 3d map", []string{"mp3", "player", "3d", "map"}},
		{"punctuation splits", "star-hopping/astro_photography(guide)", []string{"star", "hop", "astro", "photographi", "guid"}},
		{"contractions are stop words", "don't can’t it's won't you’re", nil},
		{"curly apostrophe as straight", "Saturn’s rings", []string{"saturn", "ring"}},
		{"edge apostrophes split", "'quoted' rings' 90's", []string{"quot", "ring"}},
		{"unicode letters lower-cased", "Café NAÏVE École", []string{"café", "naïv", "école"}},
		{"combining marks stay in the word", "e\u0301cole", []string{"e\u0301col"}},
		{"other scripts are not stemmed", "Москва ΕΛΛΗΝΙΚΆ", []string{"москва", "ελληνικά"}},
		{"long runs go", strings.Repeat("ab", 33) + " star", []string{"star"}},
		{"64 letters stay", strings.Repeat("b", 64), []string{strings.Repeat("b", 64)}},
		{"invalid UTF-8 splits", "star\xffgalaxy", []string{"star", "galaxi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Terms(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestAnalyzer checks that one Analyzer, used for text after text, gives
// what Terms gives, and that its memory of stems is bounded.
func TestAnalyzer(t *testing.T) {
	_, page := astronomyPage(t)
	texts := append([]string{page, cookingText, page, ""}, astronomySamples...)
	var a Analyzer
	for i, text := range texts {
		if got, want := a.Terms(text), Terms(text); !slices.Equal(got, want) {
			t.Fatalf("text %d: Analyzer.Terms differs from Terms:\n%q\n%q", i, got, want)
		}
	}
	dst := a.AppendTerms([]string{"kept"}, "Jupiter's moons")
	if want := []string{"kept", "jupit", "moon"}; !slices.Equal(dst, want) {
		t.Errorf("AppendTerms = %q, want %q", dst, want)
	}

	// A full memory is forgotten before the next new word is stemmed.
	a.stems = make(map[string]string, maxStemCache)
	for i := range maxStemCache {
		a.stems[string(rune('a'+i%26))+strings.Repeat("z", i/26)] = "x"
	}
	if got := a.Terms("nebulae"); !slices.Equal(got, []string{"nebula"}) {
		t.Errorf("Terms after a full memory = %q", got)
	}
	if len(a.stems) != 1 {
		t.Errorf("memory of stems has %d entries after being full, want 1", len(a.stems))
	}
}

func TestStopWords(t *testing.T) {
	if n := len(englishStopWords); n < 150 || n > 300 {
		t.Errorf("%d stop words, want about 150 to 300", n)
	}
	if len(stopWords) != len(englishStopWords) {
		t.Errorf("the stop-word list has duplicates: %d words, %d distinct", len(englishStopWords), len(stopWords))
	}
	for _, w := range englishStopWords {
		if w != strings.ToLower(w) {
			t.Errorf("stop word %q is not lower-case", w)
		}
		// Each entry must be one word as Terms reads it, or it could
		// never match.
		if got := Terms(w); got != nil {
			t.Errorf("stop word %q gives terms %q", w, got)
		}
		if got := Terms(strings.ToUpper(w[:1]) + w[1:]); got != nil {
			t.Errorf("capitalised stop word %q gives terms %q", w, got)
		}
	}
	for w := range urlStopWords {
		if got := Terms(w); len(got) > 1 {
			t.Errorf("URL stop word %q is %d words", w, len(got))
		}
	}
}
