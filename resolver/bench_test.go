package resolver

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// answerAll answers A for any name with 10.0.0.1.
func answerAll(_ *server, w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	q := req.Question[0]
	m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
		A: net.IPv4(10, 0, 0, 1)})
	_ = w.WriteMsg(m)
}

// BenchmarkLookupHit: lookups of 3,000 cached names from parallel
// goroutines.
func BenchmarkLookupHit(b *testing.B) {
	s := startServer(b, answerAll)
	r := newResolver(b, Config{Servers: []string{s.addr}})
	names := make([]string, 3000)
	for i := range names {
		names[i] = fmt.Sprintf("host%d.bench.test", i)
		if _, err := r.LookupNetIP(context.Background(), names[i]); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := next.Add(1)
			if _, err := r.LookupNetIP(ctx, names[i%int64(len(names))]); err != nil {
				b.Fatal(err)
			}
		}
	})
	if st := r.Stats(); st.Misses != int64(len(names)) {
		b.Fatalf("%d misses during the benchmark", st.Misses-int64(len(names)))
	}
}

// BenchmarkLookupMiss: every lookup is a query to a local miekg/dns
// server (cache off), from parallel goroutines: the cost of the
// asynchronous client and the loopback server together.
func BenchmarkLookupMiss(b *testing.B) {
	s := startServer(b, answerAll)
	r := newResolver(b, Config{Servers: []string{s.addr}, CacheSize: -1})
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := next.Add(1)
			if _, err := r.LookupNetIP(ctx, fmt.Sprintf("host%d.bench.test", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
