package parser

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// textBuf accumulates text with whitespace collapsed: runs of white space
// (and control characters) become one space between words, none at the
// ends. It counts the words it writes and can be capped at a number of
// runes. Invalid UTF-8 is written as U+FFFD, so the result is always valid
// UTF-8.
type textBuf struct {
	b     []byte
	space bool // a separator is pending
	words int
	runes int
	limit int // most runes kept; 0: no limit
	full  bool
}

func (t *textBuf) reset(limit int) {
	t.b = t.b[:0]
	t.space, t.full = false, false
	t.words, t.runes, t.limit = 0, 0, limit
}

// sep asks for a separator before the next word.
func (t *textBuf) sep() { t.space = true }

// startRune is called before writing a non-space rune.
func (t *textBuf) startRune() bool {
	if t.limit > 0 && t.runes >= t.limit {
		t.full = true
		return false
	}
	t.startWord()
	t.runes++
	return true
}

// startWord counts a word starting with the next rune written, after a
// space if a separator was asked for, when none is open.
func (t *textBuf) startWord() {
	if len(t.b) == 0 {
		t.words++
		t.space = false
	} else if t.space {
		t.b = append(t.b, ' ')
		t.words++
		t.space = false
	}
}

// isPrint reports printable ASCII (not space).
func isPrint(c byte) bool { return c > ' ' && c < 0x7f }

// word appends w, printable ASCII that starts a word, as startRune and an
// append per byte would, in one go. Without a limit w may hold more words
// separated by single spaces, which the caller counts.
func (t *textBuf) word(w []byte) {
	if t.limit > 0 {
		room := t.limit - t.runes
		if room <= 0 {
			t.full = true
			return
		}
		if len(w) > room {
			w = w[:room]
			t.full = true
		}
	}
	t.startWord()
	t.runes += len(w)
	t.b = append(t.b, w...)
}

// write appends text.
func (t *textBuf) write(s []byte) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f {
				t.space = true
				i++
				continue
			}
			if t.limit > 0 {
				j := i + 1
				for j < len(s) && isPrint(s[j]) {
					j++
				}
				t.word(s[i:j])
				i = j
				continue
			}
			// Unlimited: take the run of words already separated by
			// single spaces in one go.
			j, words := i+1, 1
			for {
				// Eight bytes at a time while they are printable or single
				// spaces and the last is not a space (s[j-1] is never one
				// here).
				for j+8 <= len(s) {
					x := binary.LittleEndian.Uint64(s[j:])
					if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 || // a byte < 0x20
						((x+0x0101010101010101)|x)&0x8080808080808080 != 0 { // a byte > 0x7e
						break
					}
					y := x ^ 0x2020202020202020 // spaces are zero bytes of y
					sp := ^(((y & 0x7f7f7f7f7f7f7f7f) + 0x7f7f7f7f7f7f7f7f) | y) & 0x8080808080808080
					if sp&(sp>>8) != 0 || sp>>63 != 0 {
						break // two spaces in a row, or a space at the end
					}
					words += bits.OnesCount64(sp)
					j += 8
				}
				for j < len(s) && isPrint(s[j]) {
					j++
				}
				if j+1 < len(s) && s[j] == ' ' && isPrint(s[j+1]) {
					j += 2
					words++
					continue
				}
				break
			}
			t.word(s[i:j])
			t.words += words - 1
			t.runes -= words - 1 // the spaces between them
			i = j
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		i += n
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\ufeff' {
			t.space = true
			continue
		}
		if !t.startRune() {
			continue
		}
		if r == utf8.RuneError {
			t.b = utf8.AppendRune(t.b, utf8.RuneError)
		} else {
			t.b = append(t.b, s[i-n:i]...)
		}
	}
}

// String returns the text.
func (t *textBuf) String() string { return string(t.b) }
