package mapreduce

import "testing"

func TestPartitioners(t *testing.T) {
	// FNV-1a-32 reference values: the partition contract must not drift.
	if h := fnv1a(""); h != 0x811c9dc5 {
		t.Fatalf("fnv1a(\"\") = %#x", h)
	}
	if h := fnv1a("a"); h != 0xe40c292c {
		t.Fatalf("fnv1a(a) = %#x", h)
	}
	if h := fnv1a("foobar"); h != 0xbf9cf968 {
		t.Fatalf("fnv1a(foobar) = %#x", h)
	}
	for _, c := range []struct{ a, b string }{
		{"http://h1.sim.test/a", "https://user@h1.sim.test:8080/b?x#y"},
		{"http://[::1]:80/a", "http://[::1]/b"},
	} {
		for n := 1; n < 50; n++ {
			if HostPartitioner(c.a, n) != HostPartitioner(c.b, n) {
				t.Fatalf("host partition of %q and %q differ for n=%d", c.a, c.b, n)
			}
		}
	}
	if HostPartitioner("not a url", 7) != HashPartitioner("not a url", 7) {
		t.Fatal("non-URL key should hash whole")
	}
	if DomainPartitioner("http://a.example.co.uk/x", 97) != DomainPartitioner("http://b.c.example.co.uk/y", 97) {
		t.Fatal("same registered domain, different partitions")
	}
	if DomainPartitioner("http://a.example.co.uk/x", 97) != HashPartitioner("example.co.uk", 97) {
		t.Fatal("domain partition is not the hash of eTLD+1")
	}
	if DomainPartitioner("http://10.0.0.1/x", 97) != HashPartitioner("10.0.0.1", 97) {
		t.Fatal("IP host")
	}
	seen := map[int]bool{}
	for i := 0; i < 1000; i++ {
		p := HashPartitioner(string(rune('a'+i%26))+string(rune(i)), 8)
		if p < 0 || p >= 8 {
			t.Fatalf("partition %d out of range", p)
		}
		seen[p] = true
	}
	if len(seen) != 8 {
		t.Fatalf("only %d of 8 partitions used", len(seen))
	}
}
