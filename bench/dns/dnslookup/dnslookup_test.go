package dnslookup

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/trawl/trawl/simweb"
)

// serveDNS serves a small synthetic web's DNS (and HTTP) on loopback.
func serveDNS(t *testing.T, ipPerHost bool) (*simweb.Web, *simweb.Server) {
	t.Helper()
	c := simweb.DefaultConfig()
	c.Hosts, c.Pages, c.Hazards = 5, 50, 0
	w, err := simweb.New(c)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0", IPPerHost: ipPerHost,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return w, srv
}

func TestLookup(t *testing.T) {
	w, srv := serveDNS(t, true)
	c, err := New([]string{srv.DNSAddr()}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for h := range 3 {
		info := w.Host(h)
		addrs, err := c.LookupNetIP(ctx, info.Name)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if len(addrs) != 1 || addrs[0] != info.IP {
			t.Errorf("%s: %v, want %v", info.Name, addrs, info.IP)
		}
		// Case and a trailing dot do not matter.
		if addrs, err := c.LookupNetIP(ctx, "H"+info.Name[1:]+"."); err != nil || len(addrs) != 1 || addrs[0] != info.IP {
			t.Errorf("%s in capitals with a dot: %v %v", info.Name, addrs, err)
		}
	}
	var e *Error
	_, err = c.LookupNetIP(ctx, "nosuch.sim.test")
	if !errors.As(err, &e) || !e.NotFound {
		t.Errorf("unknown name: %v, want a not-found *Error", err)
	}
	_, err = c.LookupNetIP(ctx, simweb.DNSServfailName)
	if !errors.As(err, &e) || e.NotFound {
		t.Errorf("SERVFAIL: %v, want an *Error that is not not-found", err)
	}
	_, err = c.LookupNetIP(ctx, "bad name!")
	if !errors.As(err, &e) || !e.NotFound {
		t.Errorf("a bad name: %v", err)
	}
}

// TestTimeoutAndFallback: a server that does not answer costs the timeout,
// then the next server answers.
func TestTimeoutAndFallback(t *testing.T) {
	w, srv := serveDNS(t, false)
	c, err := New([]string{srv.DNSAddr()}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LookupNetIP(context.Background(), simweb.DNSTimeoutName); err == nil {
		t.Error("a query that is never answered succeeded")
	}
	// 127.0.0.1:9 (discard) has no DNS server: its query fails, the
	// second server answers.
	c2, err := New([]string{"127.0.0.1:9", srv.DNSAddr()}, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := c2.LookupNetIP(context.Background(), w.Host(0).Name)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("fallback: %v %v", addrs, err)
	}
	// A cancelled context stops the lookup.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c2.LookupNetIP(ctx, w.Host(0).Name); err == nil {
		t.Error("lookup with a cancelled context succeeded")
	}
}

func TestNew(t *testing.T) {
	c, err := New([]string{"127.0.0.1", "::1", "[::1]:5353", "10.0.0.1:53"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:53", "[::1]:53", "[::1]:5353", "10.0.0.1:53"}
	got := c.servers
	if len(got) != len(want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server %d: %s, want %s", i, got[i], want[i])
		}
	}
	for _, bad := range [][]string{nil, {""}, {"dns.example.com"}, {"dns.example.com:53"}} {
		if _, err := New(bad, 0); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
}
