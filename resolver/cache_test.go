package resolver

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// order returns the cache's keys from the most to the least recently used.
func (c *cache) order() []string {
	var out []string
	for e := c.root.next; e != &c.root; e = e.next {
		out = append(out, e.key)
	}
	return out
}

func TestCacheLRU(t *testing.T) {
	c := newCache(3)
	exp := time.Unix(100, 0)
	a := []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, a, nil, exp)
	}
	if got := fmt.Sprint(c.order()); got != "[c b a]" {
		t.Fatalf("order %s", got)
	}
	if c.get("a") == nil || c.get("nope") != nil {
		t.Fatal("get")
	}
	if got := fmt.Sprint(c.order()); got != "[a c b]" {
		t.Fatalf("order after get(a) %s", got)
	}
	c.put("d", a, nil, exp) // evicts b, the least recently used
	if got := fmt.Sprint(c.order()); got != "[d a c]" || c.peek("b") != nil || c.evictions != 1 || c.len() != 3 {
		t.Fatalf("after put(d): order %s, evictions %d", got, c.evictions)
	}
	c.put("c", nil, &Error{Host: "c", Err: ErrNotFound}, exp) // replaces in place
	if got := fmt.Sprint(c.order()); got != "[c d a]" || c.peek("c").err == nil || c.len() != 3 {
		t.Fatalf("after replacing c: %s", got)
	}
	c.peek("a") // no move
	if got := fmt.Sprint(c.order()); got != "[c d a]" {
		t.Fatalf("peek moved: %s", got)
	}
	c.remove("d")
	c.remove("zz")
	if got := fmt.Sprint(c.order()); got != "[c a]" || c.len() != 2 {
		t.Fatalf("after remove: %s", got)
	}
	off := newCache(0)
	if off.put("a", a, nil, exp) != nil || off.get("a") != nil || off.len() != 0 {
		t.Fatal("a zero-capacity cache stored something")
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	if p := h.percentiles(0.5); p[0] != 0 {
		t.Fatalf("empty: %v", p)
	}
	for i := 1; i <= 100; i++ {
		h.observe(time.Duration(i) * time.Millisecond)
	}
	p := h.percentiles(0.5, 0.9, 0.99, 1)
	for i, want := range []time.Duration{50, 90, 99, 100} {
		want *= time.Millisecond
		if p[i] < want || float64(p[i]) > float64(want)*1.091 {
			t.Errorf("percentile %d: %v, want %v within 9%%", i, p[i], want)
		}
	}
	h.observe(0)
	h.observe(time.Hour) // the last bucket
	if histBucket(0) != 0 || histBucket(time.Hour) != histBuckets-1 {
		t.Error("bucket bounds")
	}
}

func BenchmarkCacheGet(b *testing.B) {
	c := newCache(50000)
	a := []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	keys := make([]string, 50000)
	for i := range keys {
		keys[i] = fmt.Sprintf("host%d.example.com", i)
		c.put(keys[i], a, nil, time.Time{})
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if c.get(keys[i%len(keys)]) == nil {
			b.Fatal("miss")
		}
	}
}
