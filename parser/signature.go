package parser

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// The signature kinds a crawl can use for change detection.
const (
	// SignatureMD5 is MD5Signature (the default).
	SignatureMD5 = "md5"
	// SignatureTextProfile is TextProfileSignature.
	SignatureTextProfile = "text-profile"
)

// ParseSignatureKind checks a signature kind name; "" means SignatureMD5.
func ParseSignatureKind(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", SignatureMD5:
		return SignatureMD5, nil
	case SignatureTextProfile, "textprofile", "text_profile":
		return SignatureTextProfile, nil
	}
	return "", fmt.Errorf("parser: unknown signature %q (want %s or %s)", s, SignatureMD5, SignatureTextProfile)
}

// MD5Signature returns the MD5 digest of text, or of body when text is
// empty (Nutch's MD5Signature digests the raw content; see the package doc
// for why the text is digested here).
func MD5Signature(text string, body []byte) []byte {
	if text == "" {
		s := md5.Sum(body)
		return s[:]
	}
	s := md5.Sum(bytesOf(text))
	return s[:]
}

// titledMD5 is MD5Signature(title+" "+text, body) (just title or text
// when the other is empty) without building that string.
func titledMD5(title, text string, body []byte) []byte {
	switch {
	case title == "":
		return MD5Signature(text, body)
	case text == "":
		return MD5Signature(title, body)
	}
	h := md5.New()
	h.Write(bytesOf(title))
	h.Write(space)
	h.Write(bytesOf(text))
	return h.Sum(make([]byte, 0, md5.Size))
}

var space = []byte{' '}

// bytesOf returns the bytes of s without copying them, for reading only
// (hashing): they must not be modified.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// TextProfile is Nutch's TextProfileSignature with its two settings.
type TextProfile struct {
	// MinTokenLen: tokens of at most this many runes are ignored
	// (db.signature.text_profile.min_token_len, 2).
	MinTokenLen int
	// QuantRate: counts are quantized to multiples of
	// round(QuantRate * highest count) (db.signature.text_profile.quant_rate,
	// 0.01).
	QuantRate float32
}

// DefaultTextProfile returns Nutch's default settings.
func DefaultTextProfile() TextProfile { return TextProfile{MinTokenLen: 2, QuantRate: 0.01} }

// TextProfileSignature is DefaultTextProfile().Sum(text, body).
func TextProfileSignature(text string, body []byte) []byte {
	return DefaultTextProfile().Sum(text, body)
}

// Sum returns the text-profile signature of text: the MD5 of the lines
// "token count" of the tokens whose quantized count reaches the quantum,
// by decreasing count then increasing token (Nutch's
// db.signature.text_profile.sec_sort_lex, on by default, which makes the
// order, and so the signature, independent of hash-map iteration). A token
// is a maximal run of letters and digits, lower-cased. When text is empty
// the signature is MD5Signature("", body), as in Nutch.
func (p TextProfile) Sum(text string, body []byte) []byte {
	var pr profiler
	return pr.sum(p, text, body)
}

// profiler computes text profiles with reusable buffers. Tokens are
// counted in a hash table keyed by a 64-bit FNV-1a hash of the token,
// their bytes kept in one arena; a hash hit is checked against the arena,
// and the rare token whose hash collides with another's is counted in a
// map by string, so the counts are exact.
type profiler struct {
	idx   hashIndex
	extra map[string]int32
	arena []byte
	toks  []profileToken
	tok   []byte
	line  []byte
}

type profileToken struct {
	off, end int
	n        int
}

// asciiAlnum marks ASCII letters and digits.
var asciiAlnum = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

func (pr *profiler) reset() {
	pr.idx.reset()
	pr.extra = nil
	pr.arena, pr.toks, pr.tok = pr.arena[:0], pr.toks[:0], pr.tok[:0]
}

// add counts the token in pr.tok and returns its new count.
func (pr *profiler) add() int {
	h := uint64(14695981039346656037)
	for _, c := range pr.tok {
		h ^= uint64(c)
		h *= 1099511628211
	}
	slot, i, ok := pr.idx.find(h)
	if ok && string(pr.arena[pr.toks[i].off:pr.toks[i].end]) != string(pr.tok) {
		// A hash collision: count this token by its string.
		if pr.extra == nil {
			pr.extra = make(map[string]int32)
		}
		i, ok = pr.extra[string(pr.tok)]
		if !ok {
			i = pr.newToken()
			pr.extra[string(pr.tok)] = i
		}
	} else if !ok {
		i = pr.newToken()
		pr.idx.insert(slot, h, i)
	}
	pr.toks[i].n++
	return pr.toks[i].n
}

func (pr *profiler) newToken() int32 {
	off := len(pr.arena)
	pr.arena = append(pr.arena, pr.tok...)
	pr.toks = append(pr.toks, profileToken{off: off, end: len(pr.arena)})
	return int32(len(pr.toks) - 1)
}

func (pr *profiler) sum(p TextProfile, text string, body []byte) []byte {
	if text == "" {
		return MD5Signature("", body)
	}
	pr.reset()
	maxFreq := 0
	runes := 0
	flush := func() {
		if runes > p.MinTokenLen {
			if n := pr.add(); n > maxFreq {
				maxFreq = n
			}
		}
		pr.tok, runes = pr.tok[:0], 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if asciiAlnum[c] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				pr.tok = append(pr.tok, c)
				runes++
			} else if runes > 0 {
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			pr.tok = utf8.AppendRune(pr.tok, unicode.ToLower(r))
			runes++
		} else if runes > 0 {
			flush()
		}
	}
	flush()
	// Java's Math.round(float) rounds half up.
	quant := int(math.Floor(float64(float32(maxFreq)*p.QuantRate) + 0.5))
	if quant < 2 {
		if maxFreq > 1 {
			quant = 2
		} else {
			quant = 1
		}
	}
	kept := pr.toks[:0]
	for _, t := range pr.toks {
		t.n = t.n / quant * quant
		if t.n >= quant {
			kept = append(kept, t)
		}
	}
	arena := pr.arena
	slices.SortFunc(kept, func(a, b profileToken) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return bytes.Compare(arena[a.off:a.end], arena[b.off:b.end])
	})
	h := md5.New()
	for i, t := range kept {
		pr.line = pr.line[:0]
		if i > 0 {
			pr.line = append(pr.line, '\n')
		}
		pr.line = append(pr.line, arena[t.off:t.end]...)
		pr.line = append(pr.line, ' ')
		pr.line = strconv.AppendInt(pr.line, int64(t.n), 10)
		h.Write(pr.line)
	}
	return h.Sum(nil)
}

// hashIndex maps 64-bit hashes to token indexes: an open-addressing table
// whose entries belong to the current generation only, so that emptying
// it between pages costs nothing.
type hashIndex struct {
	slots []hashSlot // a power of two long
	gen   uint32     // the current generation; slots of others are free
	n     int        // entries of the current generation
}

type hashSlot struct {
	h   uint64
	gen uint32
	i   int32
}

// reset empties the index.
func (x *hashIndex) reset() {
	if x.slots == nil {
		x.slots = make([]hashSlot, 1024)
	}
	x.gen++
	if x.gen == 0 { // wrapped: old generations could look current
		clear(x.slots)
		x.gen = 1
	}
	x.n = 0
}

// find returns the index stored for h (ok), or else the slot to insert
// it at.
func (x *hashIndex) find(h uint64) (slot int, i int32, ok bool) {
	mask := len(x.slots) - 1
	for j := int(h) & mask; ; j = (j + 1) & mask {
		s := &x.slots[j]
		if s.gen != x.gen {
			return j, 0, false
		}
		if s.h == h {
			return j, s.i, true
		}
	}
}

// insert stores i for h at slot, as find gave it, growing the table when
// half full.
func (x *hashIndex) insert(slot int, h uint64, i int32) {
	x.slots[slot] = hashSlot{h: h, gen: x.gen, i: i}
	x.n++
	if 2*x.n <= len(x.slots) {
		return
	}
	old := x.slots
	x.slots = make([]hashSlot, 2*len(old))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.gen != x.gen {
			continue
		}
		j := int(s.h) & mask
		for x.slots[j].gen == x.gen {
			j = (j + 1) & mask
		}
		x.slots[j] = s
	}
}
