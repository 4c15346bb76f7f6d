package jobs

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seedKeys are the keys ParseSeedLine gives a meaning, which never reach
// Metadata.
var seedKeys = []string{
	seedKeyScore, seedKeyInterval, seedKeyFixedInterval,
	nutchKeyScore, nutchKeyInterval, nutchKeyFixedInterval,
}

// formatSeedLine writes s back as a seed-file line.
func formatSeedLine(s Seed) string {
	var b strings.Builder
	b.WriteString(s.URL)
	if s.HasScore {
		b.WriteString("\t" + seedKeyScore + "=" + strconv.FormatFloat(float64(s.Score), 'g', -1, 32))
	}
	if s.HasInterval {
		k := seedKeyInterval
		if s.FixedInterval {
			k = seedKeyFixedInterval
		}
		b.WriteString("\t" + k + "=" + strconv.FormatInt(int64(s.FetchInterval), 10))
	}
	keys := make([]string, 0, len(s.Metadata))
	for k := range s.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("\t" + k + "=" + s.Metadata[k])
	}
	return b.String()
}

// sameSeed compares seeds, scores by their bits.
func sameSeed(a, b Seed) bool {
	if math.Float32bits(a.Score) != math.Float32bits(b.Score) {
		return false
	}
	a.Score, b.Score = 0, 0
	return reflect.DeepEqual(a, b)
}

// FuzzParseSeedLine parses arbitrary lines: a line is a seed, a blank or
// comment line (ok false, no error), or an error (no seed), as the doc
// says; a seed has a trimmed non-empty URL, finite score, non-negative
// interval and metadata without the reserved keys, and written back as a
// line it parses to itself.
func FuzzParseSeedLine(f *testing.F) {
	for _, s := range []string{
		"http://example.test/",
		"  http://example.test/a?b=c  \r\n",
		"http://example.test/\tscore=2.5\tfetchInterval=86400\tlang=en",
		"http://example.test/\tnutch.score=1e-3\tnutch.fetchInterval.fixed=60\tk=v=w",
		"http://example.test/\t\t\tfixedInterval=0\t",
		"",
		"   \t ",
		"# a comment\tscore=1",
		"\t#x",
		"\tscore=1",                              // no URL
		"http://example.test/\tscore",            // no '='
		"http://example.test/\t=v",               // empty key
		"http://example.test/\tscore=NaN",        // not finite
		"http://example.test/\tscore=1e39",       // over float32
		"http://example.test/\tfetchInterval=-1", // negative
		"http://example.test/\tfetchInterval=2147483648", // over int32
		"http://example.test/\tscore=1\tnutch.score=2",   // repeated
		"http://example.test/\tfetchInterval=1\tfixedInterval=2",
		"http://ex\u00e4mple.test/\u00a0\tk=\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		seed, ok, err := ParseSeedLine(line)
		again, ok2, err2 := ParseSeedLine(line)
		if ok != ok2 || (err == nil) != (err2 == nil) || !sameSeed(seed, again) {
			t.Fatalf("%q: not deterministic", line)
		}
		trimmed := strings.TrimSpace(strings.TrimRight(line, "\r\n"))
		skip := trimmed == "" || strings.HasPrefix(trimmed, "#")
		if err != nil {
			if ok || !sameSeed(seed, Seed{}) {
				t.Fatalf("%q: error %v with ok %v, seed %+v", line, err, ok, seed)
			}
			if skip {
				t.Fatalf("%q: blank or comment line gave error %v", line, err)
			}
			return
		}
		if !ok {
			if !skip || !sameSeed(seed, Seed{}) {
				t.Fatalf("%q: ok false, no error, seed %+v: not a blank or comment line", line, seed)
			}
			return
		}
		if skip {
			t.Fatalf("%q: blank or comment line gave seed %+v", line, seed)
		}
		if seed.URL == "" || seed.URL != strings.TrimSpace(seed.URL) || strings.ContainsRune(seed.URL, '\t') || strings.HasPrefix(seed.URL, "#") {
			t.Fatalf("%q: bad URL %q", line, seed.URL)
		}
		if seed.HasScore {
			if math.IsNaN(float64(seed.Score)) || math.IsInf(float64(seed.Score), 0) {
				t.Fatalf("%q: score %v", line, seed.Score)
			}
		} else if seed.Score != 0 {
			t.Fatalf("%q: score %v without HasScore", line, seed.Score)
		}
		if seed.HasInterval {
			if seed.FetchInterval < 0 {
				t.Fatalf("%q: interval %d", line, seed.FetchInterval)
			}
		} else if seed.FetchInterval != 0 || seed.FixedInterval {
			t.Fatalf("%q: interval %d, fixed %v without HasInterval", line, seed.FetchInterval, seed.FixedInterval)
		}
		if seed.Metadata != nil && len(seed.Metadata) == 0 {
			t.Fatalf("%q: empty non-nil metadata", line)
		}
		for k, v := range seed.Metadata {
			if k == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) ||
				strings.ContainsAny(k, "\t=") || strings.ContainsRune(v, '\t') || slices.Contains(seedKeys, k) {
				t.Fatalf("%q: bad metadata %q=%q", line, k, v)
			}
		}
		// Written back, the seed reads the same.
		back := formatSeedLine(seed)
		got, ok, err := ParseSeedLine(back)
		if err != nil || !ok || !sameSeed(got, seed) {
			t.Fatalf("%q written back as %q: %+v, %v, %v; want %+v", line, back, got, ok, err, seed)
		}
		// Line ends do not matter.
		for _, end := range []string{"\n", "\r\n"} {
			got, ok, err := ParseSeedLine(line + end)
			if err != nil || !ok || !sameSeed(got, seed) {
				t.Fatalf("%q + %q: %+v, %v, %v; want %+v", line, end, got, ok, err, seed)
			}
		}
	})
}
