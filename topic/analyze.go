package topic

import (
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

const (
	// maxTokenRunes is the longest word Terms keeps, in runes: longer runs
	// of letters are identifiers, encoded data or text without spaces, not
	// words of a topic.
	maxTokenRunes = 64
	// maxStemCache bounds an Analyzer's memory of stems; when it is full
	// the memory is forgotten and filled again.
	maxStemCache = 1 << 16
	// latinEnd is the first rune after the Latin blocks (Basic Latin to
	// Latin Extended-B). Words with a rune at or past it are not English
	// and are not stemmed.
	latinEnd = 0x250
)

// Terms returns the index terms of text, in order, repeats kept: the words
// of text lower-cased, without English stop words, one-letter words and
// numbers, each stemmed by the Snowball English (Porter2) stemmer. See the
// package documentation for the exact rules. Terms is safe for concurrent
// use; a caller that analyses many texts in one goroutine saves work with
// an Analyzer.
func Terms(text string) []string {
	var a Analyzer
	return a.AppendTerms(nil, text)
}

// An Analyzer turns texts into index terms exactly as Terms does, and
// remembers the stems it has computed, so that the words repeated within
// and across a goroutine's texts are stemmed once. Its zero value is ready
// to use. An Analyzer is not safe for concurrent use: give each goroutine
// its own.
type Analyzer struct {
	stems map[string]string // surface word → stem
	word  []byte            // the word being read, lower-cased
}

// Terms returns the index terms of text, as the package's Terms does.
func (a *Analyzer) Terms(text string) []string {
	return a.AppendTerms(nil, text)
}

// AppendTerms appends the index terms of text to dst and returns the
// extended slice. The terms are shared with the Analyzer's memory of
// stems (strings are immutable, so this is safe).
func (a *Analyzer) AppendTerms(dst []string, text string) []string {
	a.each(text, nil, func(t string) { dst = append(dst, t) })
	return dst
}

// each calls emit with every index term of text, in order. Words in
// extraStop (surface forms, lower-case) are dropped as well as the stop
// words.
//
// It is one loop over the runes with the word's state in locals, on
// purpose: it runs over the text of every page a focused crawl parses, and
// the state that flush and the loop share reads best in one place.
func (a *Analyzer) each(text string, extraStop map[string]struct{}, emit func(string)) {
	var (
		runes     int  // runes in a.word
		digits    bool // a.word so far is all digits
		latin     bool // a.word so far is all Latin script
		apos      bool // an apostrophe follows a.word, kept if a letter comes next
		lastDigit bool // a.word's last rune is a digit
	)
	flush := func() {
		if runes > 0 {
			a.term(runes, digits, latin, extraStop, emit)
		}
		a.word, runes, apos = a.word[:0], 0, false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			// ASCII, the common case, without the unicode tables.
			i++
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
				if apos {
					a.word = append(a.word, '\'')
					runes++
					apos = false
				}
				if runes == 0 {
					digits, latin = false, true
				}
				digits, lastDigit = false, false
				a.word = append(a.word, c|0x20)
				runes++
			case '0' <= c && c <= '9':
				if apos {
					flush()
				}
				if runes == 0 {
					digits, latin = true, true
				}
				lastDigit = true
				a.word = append(a.word, c)
				runes++
			case c == '\'':
				if runes > 0 && !apos && !lastDigit {
					apos = true
				} else {
					flush()
				}
			default:
				flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case unicode.IsLetter(r), runes > 0 && !apos && unicode.IsMark(r):
			if apos {
				a.word = append(a.word, '\'')
				runes++
				apos = false
			}
			if runes == 0 {
				digits, latin = false, true
			}
			digits, lastDigit = false, false
			r = unicode.ToLower(r)
			if r >= latinEnd && !unicode.IsMark(r) {
				latin = false
			}
			a.word = utf8.AppendRune(a.word, r)
			runes++
		case unicode.IsDigit(r):
			if apos {
				flush()
			}
			if runes == 0 {
				digits, latin = true, true
			}
			lastDigit = true
			a.word = utf8.AppendRune(a.word, r)
			runes++
		case r == '’' || r == 'ʼ':
			if runes > 0 && !apos && !lastDigit {
				apos = true
			} else {
				flush()
			}
		default:
			flush()
		}
	}
	flush()
}

// term emits the term of the word in a.word, if it makes one: runes is its
// length in runes, digits whether it is all digits, latin whether it is
// all Latin script.
func (a *Analyzer) term(runes int, digits, latin bool, extraStop map[string]struct{}, emit func(string)) {
	if runes < 2 || runes > maxTokenRunes || digits {
		return
	}
	// Map look-ups keyed by string(a.word) do not allocate.
	if _, stop := stopWords[string(a.word)]; stop {
		return
	}
	if _, stop := extraStop[string(a.word)]; stop {
		return
	}
	if s, ok := a.stems[string(a.word)]; ok {
		emit(s)
		return
	}
	w := string(a.word)
	s := w
	if latin {
		// Stem keeps words of up to two letters as they are and never
		// returns an empty stem for a longer word; the check keeps the
		// promise that terms are not empty all the same.
		if s = english.Stem(w, true); s == "" {
			s = w
		}
	}
	if a.stems == nil || len(a.stems) >= maxStemCache {
		a.stems = make(map[string]string, 256)
	}
	a.stems[w] = s
	emit(s)
}
