package jobs

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseSeedLine(t *testing.T) {
	tests := []struct {
		line string
		want Seed
		ok   bool
		err  string // substring of the error, "" for none
	}{
		{line: "", ok: false},
		{line: "   \t  ", ok: false},
		{line: "# a comment\twith=tab", ok: false},
		{line: "  #indented comment", ok: false},
		{line: "http://a.example/", want: Seed{URL: "http://a.example/"}, ok: true},
		{line: "  http://a.example/  \r\n", want: Seed{URL: "http://a.example/"}, ok: true},
		{line: "http://a.example/\tscore=2.5", want: Seed{URL: "http://a.example/", Score: 2.5, HasScore: true}, ok: true},
		{line: "http://a.example/\tscore=-0.25\t", want: Seed{URL: "http://a.example/", Score: -0.25, HasScore: true}, ok: true},
		{line: "http://a.example/\tfetchInterval=3600",
			want: Seed{URL: "http://a.example/", FetchInterval: 3600, HasInterval: true}, ok: true},
		{line: "http://a.example/\tfixedInterval=86400\tlang=de\tscore=1e-3",
			want: Seed{URL: "http://a.example/", FetchInterval: 86400, HasInterval: true, FixedInterval: true,
				Score: 0.001, HasScore: true, Metadata: map[string]string{"lang": "de"}}, ok: true},
		{line: "http://a.example/\tnutch.score=3\tnutch.fetchInterval.fixed=60",
			want: Seed{URL: "http://a.example/", Score: 3, HasScore: true, FetchInterval: 60, HasInterval: true, FixedInterval: true}, ok: true},
		{line: "http://a.example/\tcategory=a=b", want: Seed{URL: "http://a.example/", Metadata: map[string]string{"category": "a=b"}}, ok: true},
		{line: "http://a.example/\tcategory=", want: Seed{URL: "http://a.example/", Metadata: map[string]string{"category": ""}}, ok: true},
		// Errors.
		{line: "\tscore=1", err: "empty URL"},
		{line: "http://a.example/\tscore", err: "not key=value"},
		{line: "http://a.example/\t=1", err: "empty key"},
		{line: "http://a.example/\tscore=high", err: "not a finite number"},
		{line: "http://a.example/\tscore=NaN", err: "not a finite number"},
		{line: "http://a.example/\tscore=+Inf", err: "not a finite number"},
		{line: "http://a.example/\tscore=1e40", err: "not a finite number"},
		{line: "http://a.example/\tfetchInterval=-5", err: "whole number"},
		{line: "http://a.example/\tfetchInterval=1.5", err: "whole number"},
		{line: "http://a.example/\tfetchInterval=99999999999", err: "whole number"},
		{line: "http://a.example/\tscore=1\tnutch.score=2", err: "given twice"},
		{line: "http://a.example/\tfetchInterval=1\tfixedInterval=2", err: "both fetchInterval and fixedInterval"},
	}
	for _, tc := range tests {
		got, ok, err := ParseSeedLine(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSeedLine(%q): error %v, want one containing %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSeedLine(%q): unexpected error %v", tc.line, err)
			continue
		}
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSeedLine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestOPICLinkCash(t *testing.T) {
	if got := OPICLinkCash(1, 4); got != 0.25 {
		t.Errorf("OPICLinkCash(1, 4) = %v, want 0.25", got)
	}
	if got := OPICLinkCash(3, 0); got != 0 {
		t.Errorf("OPICLinkCash(3, 0) = %v, want 0", got)
	}
	if got := OPICLinkCash(2, 3); got != float32(2.0/3.0) {
		t.Errorf("OPICLinkCash(2, 3) = %v, want %v", got, float32(2.0/3.0))
	}
}

func TestInlinkHeapKeepsMostValuable(t *testing.T) {
	var h inlinkHeap
	h.reset(3)
	cash := []float32{0.5, 0.1, 0.9, 0.5, 0.3, 0.9, 0.2}
	for i, c := range cash {
		h.add(pageID(i+1), c) // a page per letter, a = 1
	}
	got := h.sorted()
	var froms []string
	for _, l := range got {
		froms = append(froms, string(rune('a'+l.from-1)))
	}
	// 0.9 (c), 0.9 (f), then of the two 0.5s the smaller page ID (a).
	if want := []string{"c", "f", "a"}; !reflect.DeepEqual(froms, want) {
		t.Fatalf("kept %v, want %v", froms, want)
	}
	if s := sumCash(got); s != float64(float32(0.9))*2+float64(float32(0.5)) {
		t.Errorf("sumCash = %v", s)
	}
	h.reset(0) // unbounded
	for i := 0; i < 100; i++ {
		h.add(pageIDOf("x"), 1)
	}
	if n := len(h.sorted()); n != 100 {
		t.Errorf("unbounded heap kept %d, want 100", n)
	}
	if d := distinctFrom(h.sorted()); d != 1 {
		t.Errorf("distinctFrom = %d, want 1", d)
	}
	// Few links are counted by pairs, many through a map: both the same.
	for _, n := range []int{2, 5, 32, 33, 200} {
		h.reset(0)
		for i := range n {
			h.add(pageIDOf(string(rune('a'+i%7))), float32(i%3))
		}
		if d, want := distinctFrom(h.sorted()), min(n, 7); d != want {
			t.Errorf("%d links from %d pages: distinctFrom = %d", n, want, d)
		}
	}
	// A random heap keeps the max most valuable, sorted.
	h.reset(10)
	var all []inlink
	for i := range 500 {
		l := inlink{from: pageIDOf(fmt.Sprint(i * 7919 % 500)), cash: float32(i*31%17) / 4}
		all = append(all, l)
		h.add(l.from, l.cash)
	}
	slices.SortFunc(all, moreValuableFirst)
	if got := h.sorted(); !reflect.DeepEqual(got, all[:10]) {
		t.Errorf("kept %v, want %v", got, all[:10])
	}
}

// ParseSeedLine's errors quote the line's text without URL userinfo.
func TestParseSeedLineErrorsRedacted(t *testing.T) {
	for _, line := range []string{
		"http://a.example/\thttp://user:pass@b.example/",
		"http://a.example/\t=http://user:pass@b.example/",
		"http://a.example/\tscore=http://user:pass@b.example/",
		"http://a.example/\tfetchInterval=user:pass@b.example",
		"http://a.example/\tk=1\tk=2\thttp://user:pass@b.example/",
	} {
		_, _, err := ParseSeedLine(line)
		if err == nil {
			t.Errorf("ParseSeedLine(%q) succeeded", line)
			continue
		}
		if strings.Contains(err.Error(), "pass") || strings.Contains(err.Error(), "user") {
			t.Errorf("ParseSeedLine(%q): error repeats the userinfo: %v", line, err)
		}
	}
}

// pageIDOf is 64-bit FNV-1a, as hash/fnv computes it.
func TestPageIDOf(t *testing.T) {
	for _, u := range []string{"", "a", "http://h0001.sim.test/a/b.html", "http://例え.jp/ü"} {
		h := fnv.New64a()
		h.Write([]byte(u))
		if got, want := pageIDOf(u), pageID(h.Sum64()); got != want {
			t.Errorf("pageIDOf(%q) = %#x, want %#x", u, got, want)
		}
	}
}
