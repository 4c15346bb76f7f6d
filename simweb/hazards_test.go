package simweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"
)

func TestCRCAffinePower(t *testing.T) {
	data := []byte("a chunk of data that is not all spaces\x00\xff")
	m := crcAfter(data)
	for _, e := range []int{0, 1, 2, 7, 37, 100} {
		want := crc32.ChecksumIEEE([]byte("seed"))
		for range e {
			want = crc32.Update(want, crc32.IEEETable, data)
		}
		if got := m.power(e).apply(crc32.ChecksumIEEE([]byte("seed"))); got != want {
			t.Errorf("power %d: %08x, want %08x", e, got, want)
		}
	}
}

// TestGzipBombValid inflates small bombs completely: the stream is valid
// gzip (size and CRC-32 checked by the reader) and holds what it should.
func TestGzipBombValid(t *testing.T) {
	if _, err := newGzipBomb(3); err == nil {
		t.Error("a 3-chunk bomb was built")
	}
	for _, chunks := range []int{4, 5, 48} {
		b, err := newGzipBomb(chunks)
		if err != nil {
			t.Fatal(err)
		}
		var wire bytes.Buffer
		if err := b.writeTo(context.Background(), &wire); err != nil {
			t.Fatal(err)
		}
		if int64(wire.Len()) != b.size() {
			t.Fatalf("%d chunks: wrote %d bytes, size() says %d", chunks, wire.Len(), b.size())
		}
		zr, err := gzip.NewReader(&wire)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, len(bombPrefix)+10)
		if _, err := io.ReadFull(zr, head); err != nil || string(head) != bombPrefix+"          " {
			t.Fatalf("%d chunks: starts %q (%v)", chunks, head, err)
		}
		n, err := io.Copy(io.Discard, zr)
		if err != nil {
			t.Fatalf("%d chunks: inflate: %v", chunks, err)
		}
		if n+int64(len(head)) != b.inflated || b.inflated != int64(len(bombPrefix))+int64(chunks)*bombChunk {
			t.Fatalf("%d chunks: inflated %d bytes, want %d", chunks, n+int64(len(head)), b.inflated)
		}
		t.Logf("%d chunks: %d bytes inflate to %d (ratio %.0f)", chunks, b.size(), b.inflated, float64(b.inflated)/float64(b.size()))
	}
}

// TestGzipBombServed reads the served bomb with a limit, through Go's
// transparent decompression and raw: the client stays bounded.
func TestGzipBombServed(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	u := s.URL(int(w.special.bomb))
	c := client(s)
	c.Transport.(*http.Transport).DisableCompression = false
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Uncompressed {
		t.Fatal("transport did not decompress")
	}
	const limit = 10 << 20
	got, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	resp.Body.Close()
	if err != nil || len(got) != limit || !bytes.HasPrefix(got, []byte(bombPrefix)) || bytes.Count(got, []byte{' '}) < limit-len(bombPrefix) {
		t.Fatalf("limited read: %d bytes, %v", len(got), err)
	}
	// Raw: a few MiB announced, 3 GiB when inflated.
	raw := client(s)
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := s.bomb()
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.ContentLength != b.size() || b.size() > 4<<20 || b.inflated < 3<<30 {
		t.Fatalf("raw bomb: %v, length %d (size %d, inflates to %d)", resp.Header, resp.ContentLength, b.size(), b.inflated)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, 64<<10); err != nil {
		t.Fatal(err)
	}
}

func TestHugePage(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	resp, body := get(t, client(s), s.URL(int(w.special.huge)))
	if resp.StatusCode != 200 || resp.ContentLength != HugeSize || len(body) != HugeSize {
		t.Fatalf("huge page: %d, length %d, %d bytes", resp.StatusCode, resp.ContentLength, len(body))
	}
	if _, err := html.Parse(bytes.NewReader(body)); err != nil || !bytes.HasSuffix(body, []byte("</html>\n")) {
		t.Fatalf("huge page does not parse: %v", err)
	}
	var again bytes.Buffer
	if err := w.writeHuge(context.Background(), &again, w.special.huge); err != nil || !bytes.Equal(again.Bytes(), body) {
		t.Fatalf("huge page not deterministic (%v)", err)
	}
}

// TestCalendarTrap follows the trap's "next month" links: every step is a
// new URL that answers 200, without end.
func TestCalendarTrap(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	c := client(s)
	u := s.URL(int(w.special.trap))
	seen := map[string]bool{}
	for range 40 {
		resp, body := get(t, c, u)
		if resp.StatusCode != 200 || seen[u] {
			t.Fatalf("%s: status %d, seen before %v", u, resp.StatusCode, seen[u])
		}
		seen[u] = true
		pp := parseHTML(t, body, u)
		if len(pp.links) != 3 {
			t.Fatalf("%s: links %v", u, pp.links)
		}
		u = pp.links[1] // next month
	}
	if !strings.Contains(u, "/calendar/2029/") {
		t.Errorf("40 months after the epoch: %s", u)
	}
	base := "http://" + w.authority(w.pages[w.special.trap].host, s.Addressing())
	for _, p := range []string{"/calendar/10000/01/", "/calendar/2026/13/", "/calendar/2026/1/", "/calendar/x/"} {
		if resp, _ := get(t, c, base+p); resp.StatusCode != 404 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	if resp, body := get(t, c, base+"/calendar/9999/12/"); resp.StatusCode != 200 || bytes.Contains(body, []byte("Next month")) {
		t.Errorf("the last month links on: %d", resp.StatusCode)
	}
}

// TestHostileHosts checks the hostile hosts and slow hosts against clients
// with timeouts. The bounds are the server's own sleeps (at least a second
// per byte, at least 1.05 s before a slow host answers), so they hold on
// any machine.
func TestHostileHosts(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s := serve(t, w, ServeOptions{})
	hostURL := func(name string) string {
		hi, ok := w.HostByName(name + "." + Domain)
		if !ok {
			t.Fatalf("no host %s", name)
		}
		return s.URL(int(w.hosts[hi].home))
	}
	t.Run("blackhole", func(t *testing.T) {
		t.Parallel()
		c := client(s)
		c.Timeout = 500 * time.Millisecond
		_, err := c.Get(hostURL("blackhole"))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("blackhole: err = %v, want a timeout", err)
		}
	})
	t.Run("trickle", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hostURL("trickle"), nil)
		start := time.Now()
		resp, err := client(s).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.ContentLength != int64(len(trickleBody("trickle.sim.test"))) {
			t.Fatalf("trickle: %d, length %d", resp.StatusCode, resp.ContentLength)
		}
		time.AfterFunc(2500*time.Millisecond, cancel)
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if limit := int64(time.Since(start) / time.Second); n > limit || n < 1 {
			t.Fatalf("trickle: %d bytes in %v", n, time.Since(start))
		}
	})
	t.Run("slowheaders", func(t *testing.T) {
		t.Parallel()
		c := client(s)
		c.Transport.(*http.Transport).ResponseHeaderTimeout = 1500 * time.Millisecond
		_, err := c.Get(hostURL("slowheaders"))
		if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
			t.Fatalf("slowheaders: err = %v", err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		_, err := client(s).Get(hostURL("reset"))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("reset: err = %v, want ECONNRESET", err)
		}
	})
	t.Run("slow", func(t *testing.T) {
		t.Parallel()
		hi := findHost(t, w, func(h *host) bool { return h.role == RoleSlow })
		u := s.URL(int(w.hosts[hi].home))
		c := client(s)
		c.Timeout = time.Second
		if _, err := c.Get(u); err == nil {
			t.Fatalf("slow host %s answered within a second", w.hosts[hi].name)
		}
		resp, body := get(t, client(s), u)
		want, _ := w.newRenderer().body(w.hosts[hi].home, 0, s.Addressing())
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("slow host: %d, %d bytes", resp.StatusCode, len(body))
		}
	})
}

// TestCloseEndsHangingRequests closes a server while clients hang on the
// blackhole, trickle and slowheaders hosts.
func TestCloseEndsHangingRequests(t *testing.T) {
	w := newWeb(t, smallConfig(5))
	s, err := w.Serve(context.Background(), ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for _, name := range []string{"blackhole", "trickle", "slowheaders"} {
		hi, _ := w.HostByName(name + "." + Domain)
		u := s.URL(int(w.hosts[hi].home))
		go func() {
			resp, err := client(s).Get(u)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	// Wait until the three requests are in the handlers' hands.
	for deadline := time.Now().Add(30 * time.Second); s.inflight.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests in flight after 30 s", s.inflight.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err == nil {
			t.Error("a hanging request completed normally")
		}
	}
	outcomes := map[string]bool{}
	for _, e := range s.AccessLog().Entries() {
		outcomes[e.Outcome] = true
	}
	if !outcomes["blackhole"] || !(outcomes["aborted"] || outcomes["trickle"]) {
		t.Errorf("outcomes logged: %v", outcomes)
	}
}
