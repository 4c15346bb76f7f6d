package parser_test

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trawl/trawl/parser"
)

func md5of(s string) []byte { h := md5.Sum([]byte(s)); return h[:] }

// TestTextProfileVectors checks the algorithm against profiles worked out
// by hand from Nutch's description.
func TestTextProfileVectors(t *testing.T) {
	for _, tc := range []struct{ text, profile string }{
		// the 3, cat 2, dog 1; maxFreq 3 -> QUANT 2: the 2, cat 2; "a"
		// and "is" are too short. Ties sort by token.
		{"The cat, the CAT; the dog. A cat is", "cat 2\nthe 2"},
		// No token repeats: QUANT 1, every token kept, by token.
		{"zeta alpha Beta", "alpha 1\nbeta 1\nzeta 1"},
		// maxFreq 250 -> QUANT round(2.5) = 3 (Java rounds half up):
		// 250 -> 249, 5 -> 3, 2 -> dropped.
		{strings.Repeat("word ", 250) + strings.Repeat("five ", 5) + "two two", "word 249\nfive 3"},
		// Letters and digits of any script; everything else separates.
		{"Grüße GRÜSSE grüße 123 123 x-y-z", "123 2\ngrüße 2"},
		// Only short tokens: the profile is empty.
		{"a b c d", ""},
	} {
		got := parser.TextProfileSignature(tc.text, []byte("body"))
		if !bytes.Equal(got, md5of(tc.profile)) {
			t.Errorf("%q: signature is not the MD5 of the profile %q", tc.text, tc.profile)
		}
	}
	// No text: the MD5 of the body (Nutch's fallback).
	if got := parser.TextProfileSignature("", []byte("raw body")); !bytes.Equal(got, md5of("raw body")) {
		t.Errorf("empty text: not the body's MD5")
	}
	if got := parser.MD5Signature("", []byte("raw body")); !bytes.Equal(got, md5of("raw body")) {
		t.Errorf("MD5Signature of no text: not the body's MD5")
	}
	if got := parser.MD5Signature("text", []byte("raw body")); !bytes.Equal(got, md5of("text")) {
		t.Errorf("MD5Signature: not the text's MD5")
	}
	// Settings.
	p := parser.TextProfile{MinTokenLen: 0, QuantRate: 0.5}
	// a 4, bb 2, c 1: QUANT round(2) = 2 -> a 4, bb 2.
	if got := p.Sum("a a a a bb bb c", nil); !bytes.Equal(got, md5of("a 4\nbb 2")) {
		t.Errorf("custom settings: wrong profile")
	}
	if k, err := parser.ParseSignatureKind(""); err != nil || k != parser.SignatureMD5 {
		t.Errorf("default kind %q %v", k, err)
	}
	if k, err := parser.ParseSignatureKind("Text-Profile"); err != nil || k != parser.SignatureTextProfile {
		t.Errorf("text-profile kind %q %v", k, err)
	}
	if _, err := parser.ParseSignatureKind("sha1"); err == nil {
		t.Errorf("unknown kind accepted")
	}
}

// article writes a page of n paragraphs of words drawn from a Zipf law,
// as real text has, so that frequent words make the profile.
func article(seed uint64, paras, words int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	z := rand.NewZipf(r, 1.2, 2, 400)
	out := make([]string, paras)
	for i := range out {
		var b strings.Builder
		for j := range words {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%03d", z.Uint64())
		}
		out[i] = b.String()
	}
	return out
}

func page(title string, paras []string) string {
	var b strings.Builder
	b.WriteString("<html><head><title>" + title + "</title></head><body>\n")
	for _, p := range paras {
		b.WriteString("<p>" + p + "</p>\n")
	}
	b.WriteString("</body></html>")
	return b.String()
}

// TestTextProfileStability: trivial edits keep the text-profile signature
// (while the MD5 sees them), real edits change both.
func TestTextProfileStability(t *testing.T) {
	changedMD5, changedFuzzy := 0, 0
	const pages = 50
	for seed := range uint64(pages) {
		paras := article(seed, 8, 60)
		orig := mustParse(t, htmlPage("http://h.example/", page("Title", paras)), parser.Options{})

		trivial := []string{
			// Markup and whitespace only: both signatures keep.
			strings.ReplaceAll(page("Title", paras), "<p>", "<div class=\"x\">\n  "),
			// Punctuation and case.
			page("TITLE!", append([]string{strings.ToUpper(paras[0]) + "."}, paras[1:]...)),
			// One word replaced by a new one (count 1: below the quantum).
			page("Title", append(append([]string{}, paras[:3]...), append([]string{strings.Replace(paras[3], " ", " brandnewword ", 1)}, paras[4:]...)...)),
		}
		for i, body := range trivial {
			r := mustParse(t, htmlPage("http://h.example/", body), parser.Options{})
			if !bytes.Equal(r.TextProfile, orig.TextProfile) {
				t.Errorf("seed %d: trivial edit %d changed the text-profile signature", seed, i)
			}
			if i == 0 && !bytes.Equal(r.MD5, orig.MD5) {
				t.Errorf("seed %d: markup-only edit changed the MD5 of the text", seed)
			}
			if i > 0 && bytes.Equal(r.MD5, orig.MD5) {
				t.Errorf("seed %d: edit %d did not change the MD5", seed, i)
			}
		}

		// A real edit: half the paragraphs rewritten.
		fresh := article(seed+1000, 4, 60)
		edited := append(append([]string{}, fresh...), paras[4:]...)
		r := mustParse(t, htmlPage("http://h.example/", page("Title", edited)), parser.Options{})
		if !bytes.Equal(r.MD5, orig.MD5) {
			changedMD5++
		}
		if !bytes.Equal(r.TextProfile, orig.TextProfile) {
			changedFuzzy++
		}
	}
	if changedMD5 != pages || changedFuzzy != pages {
		t.Errorf("real edits changed the MD5 of %d and the text profile of %d of %d pages", changedMD5, changedFuzzy, pages)
	}
}
