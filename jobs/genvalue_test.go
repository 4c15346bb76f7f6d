package jobs

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
)

// genOrder is the order generate's reducer must see a host's values in.
func genOrder(a, b genValue) int {
	if a.Pending != b.Pending {
		if a.Pending {
			return -1
		}
		return 1
	}
	if a.Pending {
		return cmp.Compare(a.URL, b.URL)
	}
	sa, sb := a.Datum.Score, b.Datum.Score
	an, bn := sa != sa, sb != sb
	switch {
	case an && bn:
	case an:
		return 1
	case bn:
		return -1
	case sa > sb:
		return -1
	case sa < sb:
		return 1
	}
	return cmp.Compare(a.URL, b.URL)
}

func TestGenValueOrderAndRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	scores := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 1e-30, -1e-30, 3e38, -3e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 2.5}
	urls := []string{"http://a/", "http://a/b", "http://a/b/", "http://a/a", "http://ab/", "http://a/\u00e9"}
	var vals []genValue
	for i := 0; i < 2000; i++ {
		u := urls[rng.IntN(len(urls))]
		if rng.IntN(2) == 0 {
			u += string(rune('a' + rng.IntN(26)))
		}
		if rng.IntN(5) == 0 {
			vals = append(vals, genValue{Pending: true, URL: u})
			continue
		}
		s := scores[rng.IntN(len(scores))]
		if rng.IntN(3) == 0 {
			s = rng.Float32()*10 - 5
		}
		vals = append(vals, genValue{URL: u, Datum: crawldb.Datum{URL: u, Score: s, Status: crawldb.StatusDBFetched,
			FetchTime: time.UnixMilli(rng.Int64N(1 << 41)).UTC(), Metadata: map[string]string{"k": u}}})
	}
	enc := make([][]byte, len(vals))
	for i, v := range vals {
		enc[i] = v.AppendShuffle(nil)
		var back genValue
		if err := back.UnmarshalShuffle(enc[i]); err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		if back.Pending != v.Pending || back.URL != v.URL || (!v.Pending && !sameDatum(back.Datum, v.Datum)) {
			t.Fatalf("round trip %d:\n got %+v\nwant %+v", i, back, v)
		}
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(enc[a], enc[b]) })
	for k := 1; k < len(idx); k++ {
		a, b := vals[idx[k-1]], vals[idx[k]]
		if genOrder(a, b) > 0 {
			t.Fatalf("byte order puts %+v before %+v", a, b)
		}
	}
	for _, bad := range [][]byte{nil, {2}, {1, 0, 0}, {1, 0, 0, 0, 0, 'h'}} {
		var v genValue
		if err := v.UnmarshalShuffle(bad); err == nil {
			t.Errorf("UnmarshalShuffle(%v) accepted bad input", bad)
		}
	}
}

// sameDatum compares datums, treating NaN scores as equal.
func sameDatum(a, b crawldb.Datum) bool {
	if a.Score != a.Score && b.Score != b.Score {
		a.Score, b.Score = 0, 0
	}
	return reflect.DeepEqual(a, b)
}
