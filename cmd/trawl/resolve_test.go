package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/trawl/trawl/simweb"
)

// runApp runs trawl in-process.
func runApp(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env = append([]string{"HOME=" + t.TempDir()}, env...)
	code = run(context.Background(), append([]string{"trawl"}, args...), strings.NewReader(""), &out, &errb, env)
	return code, out.String(), errb.String()
}

// TestResolve runs `trawl resolve` against a synthetic web's DNS server.
func TestResolve(t *testing.T) {
	c := simweb.DefaultConfig()
	c.Hosts, c.Pages, c.Hazards = 6, 30, 0
	w, err := simweb.New(c)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := w.Serve(context.Background(), simweb.ServeOptions{DNSAddr: "127.0.0.1:0", IPPerHost: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h0, h1 := w.Host(0), w.Host(1)

	code, out, errs := runApp(t, nil, "resolve", "--dns-server", srv.DNSAddr(), h0.Name, strings.ToUpper(h1.Name), "192.0.2.1", "--stats")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{h0.Name + " " + h0.IP.String(), strings.ToUpper(h1.Name) + " " + h1.IP.String(), "192.0.2.1 192.0.2.1"}
	for i, l := range want {
		if i >= len(lines) || lines[i] != l {
			t.Fatalf("stdout:\n%s\nwant first lines %q", out, want)
		}
	}
	for _, s := range []string{";; servers " + srv.DNSAddr(), ";; lookups 2", ";; queries 2", ";; literals 1", ";; p99 "} {
		if !strings.Contains(out, s+"\n") && !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}

	// A failing name: reported on stderr, exit 3, the others still printed.
	code, out, errs = runApp(t, []string{"TRAWL_FETCHER_DNS_TIMEOUT=100ms", "TRAWL_FETCHER_DNS_RETRIES=0"},
		"resolve", "--dns-server", srv.DNSAddr(), "nosuch."+simweb.Domain, simweb.DNSTimeoutName, h0.Name)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, exitFailure, out, errs)
	}
	if strings.TrimSpace(out) != h0.Name+" "+h0.IP.String() {
		t.Errorf("stdout %q", out)
	}
	for _, s := range []string{"nosuch." + simweb.Domain + ": dns", "no such host", simweb.DNSTimeoutName + ": dns", "timed out", "2 of 3 names failed"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}

	// Usage errors.
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"resolve"}, "at least one NAME"},
		{nil, []string{"resolve", "--dns-server", "dns.example.com", "x.test"}, "not an IP address"},
		{[]string{"TRAWL_FETCHER_DNS_CACHE_SIZE=0"}, []string{"resolve", "--dns-server", srv.DNSAddr(), "x.test"}, "fetcher.dns.cacheSize"},
		{[]string{"TRAWL_FETCHER_DNS_TIMEOUT=0s"}, []string{"resolve", "--dns-server", srv.DNSAddr(), "x.test"}, "fetcher.dns.timeout"},
	} {
		code, _, errs := runApp(t, tc.env, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want exit %d and %q", tc.env, tc.args, code, errs, exitUsage, tc.want)
		}
	}
}
