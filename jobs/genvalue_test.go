package jobs

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/mapreduce"
)

type selEntry struct {
	host    string
	pending bool
	score   float32
	url     string
}

// selOrder is the order generate's reducer must see values in.
func selOrder(a, b selEntry) int {
	if c := cmp.Compare(a.host, b.host); c != 0 {
		return c
	}
	if a.pending != b.pending {
		if a.pending {
			return -1
		}
		return 1
	}
	if !a.pending {
		sa, sb := a.score, b.score
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
	}
	return cmp.Compare(a.url, b.url)
}

func TestSelectKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	scores := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 1e-30, -1e-30, 3e38, -3e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 2.5}
	hosts := []string{"a.example", "a.example.org", "b", "a"}
	urls := []string{"http://a/", "http://a/b", "http://a/b/", "http://a/a", "http://ab/"}
	var es []selEntry
	var keys []string
	for i := 0; i < 3000; i++ {
		e := selEntry{host: hosts[rng.IntN(len(hosts))], url: urls[rng.IntN(len(urls))] + string(rune('a'+rng.IntN(26))), pending: rng.IntN(5) == 0}
		if !e.pending {
			e.score = scores[rng.IntN(len(scores))]
			if rng.IntN(3) == 0 {
				e.score = rng.Float32()*10 - 5
			}
		}
		es = append(es, e)
		var k string
		if e.pending {
			k = pendingKey(e.host, e.url)
		} else {
			k = candidateKey(e.host, e.score, e.url)
		}
		keys = append(keys, k)
		h, kind, rank, u, err := parseSelectKey(k)
		if err != nil || h != e.host || u != e.url || (kind == selPending) != e.pending || (!e.pending && rank != scoreKey(e.score)) {
			t.Fatalf("parseSelectKey(%q) = %q %d %d %q %v; want %+v", k, h, kind, rank, u, err, e)
		}
		if p := selectPartitioner(mapreduce.HashPartitioner)(k, 7); p != mapreduce.HashPartitioner(e.host, 7) {
			t.Fatalf("key of host %s in partition %d, the host's is %d", e.host, p, mapreduce.HashPartitioner(e.host, 7))
		}
	}
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	for k := 1; k < len(idx); k++ {
		a, b := es[idx[k-1]], es[idx[k]]
		if selOrder(a, b) > 0 {
			t.Fatalf("key order puts %+v before %+v", a, b)
		}
	}
	for _, bad := range []string{"", "host", "host\x00", "host\x00\x01ab", "host\x00\x07x"} {
		if _, _, _, _, err := parseSelectKey(bad); err == nil {
			t.Errorf("parseSelectKey(%q) accepted a bad key", bad)
		}
	}
}
