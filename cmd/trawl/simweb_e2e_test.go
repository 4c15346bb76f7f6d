package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/simweb"
	"github.com/trawl/trawl/storage"
)

// TestSimwebServeAndTruth runs `trawl simweb serve` as a process, reads
// what it prints, fetches a seed through its listener, writes the truth
// with the same flags and the server's port, and stops the server with
// SIGINT. The server runs without the engine's memory limit: its access
// log outgrows it over many crawls, and a soft limit below its heap would
// have the collector run without pause.
func TestSimwebServeAndTruth(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	seeds := filepath.Join(r.dir, "seeds.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, "simweb", "serve", "--seed", "3", "--hosts", "12", "--pages", "200",
		"--latency", "0", "--hazards", "none", "--seeds-out", seeds, "--log-level", "debug")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Read the banner up to "serving until interrupted".
	fields := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "serving until") {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	go io.Copy(io.Discard, stdout)
	httpAddr := fields["http"]
	if httpAddr == "" || fields["dns"] == "" {
		t.Fatalf("banner lacks addresses: %q; stderr %s", fields, stderr.String())
	}
	if !strings.Contains(fields["crawl"], "--seeds "+seeds) || !strings.Contains(fields["crawl"], "--dns-server ") {
		t.Errorf("crawl command line %q", fields["crawl"])
	}

	data, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	urls := strings.Fields(string(data))
	if len(urls) != 12 {
		t.Fatalf("%d seeds, want 12", len(urls))
	}
	// The first seed, through the listener with its Host header.
	req, err := http.NewRequest("GET", "http://"+httpAddr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.SplitN(urls[0], "/", 4)[2] // h0001.sim.test:PORT
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("GET %s via %s: %d %.80q", urls[0], httpAddr, resp.StatusCode, body)
	}

	// The truth with the server's port names the same URLs.
	truth := filepath.Join(r.dir, "truth.parquet")
	r.ok("simweb", "truth", "--seed", "3", "--hosts", "12", "--pages", "200", "--hazards", "none",
		"--http", httpAddr, "--out", truth, "--hosts-out", filepath.Join(r.dir, "hosts.parquet"))
	rows, err := parquetio.ReadAll[simweb.TruthPage](storage.NewLocal(), truth)
	if err != nil {
		t.Fatal(err)
	}
	homes := map[string]bool{}
	for _, p := range rows {
		if p.Kind == "home" {
			homes[p.URL] = true
		}
	}
	for _, u := range urls {
		if !homes[u] {
			t.Errorf("seed %s is not a home page of the truth", u)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("simweb serve after SIGINT: %v; stderr %s", err, stderr.String())
	}
	lifted := `msg="memory limit lifted"`
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		lifted += ` bytes=9223372036854775807 gc_percent=100` // Go's own settings
	}
	if !strings.Contains(stderr.String(), lifted) {
		t.Errorf("simweb serve kept the engine's memory limit:\n%s", stderr.String())
	}
	if _, err := os.Stat(seeds); err != nil {
		t.Errorf("--seeds-out file removed: %v", err)
	}

	// Bad flags are usage errors.
	assertCleanError(t, r.fails(exitUsage, "simweb", "serve", "--http", "10.0.0.1:80"), "loopback")
	assertCleanError(t, r.fails(exitUsage, "simweb", "truth"), "--out")
	assertCleanError(t, r.fails(exitUsage, "simweb", "truth", "--out", truth, "--hazards", "lava"), "lava")
	assertCleanError(t, r.fails(exitUsage, "simweb", "truth", "--out", truth, "--change", "lava"), "lava")

	// --change selects the change model: the truth's rates are its web's.
	r.ok("simweb", "truth", "--seed", "3", "--hosts", "12", "--pages", "200", "--hazards", "none",
		"--change", "strong", "--out", truth)
	rows, err = parquetio.ReadAll[simweb.TruthPage](storage.NewLocal(), truth)
	if err != nil {
		t.Fatal(err)
	}
	w, err := simweb.New(simweb.Config{Seed: 3, Hosts: 12, Pages: 200, Change: simweb.ChangeStrong})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rows {
		if want := w.Page(int(p.ID)).Rate; p.ChangeRate != want {
			t.Fatalf("--change strong: page %d has rate %v in the truth, %v in the web", p.ID, p.ChangeRate, want)
		}
	}
}

// TestSimwebTopics runs `trawl simweb topic` (the list of topics and the
// samples of one) and `trawl simweb serve --topics --topic`, whose seed
// file holds the focused crawl's seeds, against the same web generated in
// process.
func TestSimwebTopics(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	flags := []string{"--seed", "3", "--hosts", "30", "--pages", "900", "--hazards", "none", "--topics", "3", "--log-level", "warn"}
	w, err := simweb.New(simweb.Config{Seed: 3, Hosts: 30, Pages: 900, Topics: 3})
	if err != nil {
		t.Fatal(err)
	}

	list := strings.Split(strings.TrimSpace(r.ok(append([]string{"simweb", "topic"}, flags...)...).stdout), "\n")
	if len(list) != 4 || !strings.HasPrefix(list[0], "topic") {
		t.Fatalf("topic list:\n%s", strings.Join(list, "\n"))
	}
	for k := range 3 {
		f := strings.Fields(list[k+1])
		if len(f) != 5 || f[1] != w.TopicName(k) || f[3] != strconv.Itoa(w.TopicPages(k)) {
			t.Errorf("topic list line %q, want topic %d %s with %d pages", list[k+1], k, w.TopicName(k), w.TopicPages(k))
		}
	}
	samples := r.ok(append([]string{"simweb", "topic", "--topic", "1", "--samples", "4"}, flags...)...).stdout
	if want := strings.Join(w.TopicSample(1, 4), "\n") + "\n"; samples != want {
		t.Errorf("samples:\n%s\nwant\n%s", samples, want)
	}

	seeds := filepath.Join(r.dir, "seeds.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, append([]string{"simweb", "serve", "--latency", "0", "--dns", "", "--topic", "0", "--topic-seeds", "5",
		"--seeds-out", seeds}, flags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fields := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "serving until") {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	go io.Copy(io.Discard, stdout)
	_, port, err := net.SplitHostPort(fields["http"])
	if err != nil {
		t.Fatalf("banner %q: %v", fields, err)
	}
	if !strings.HasPrefix(fields["focus"], "topic 0, "+w.TopicName(0)) || !strings.HasPrefix(fields["topics"], "3 ") {
		t.Errorf("banner %q", fields)
	}
	data, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	if got, want := strings.Fields(string(data)), w.TopicSeeds(0, 5, simweb.Addressing{Port: p}); !slices.Equal(got, want) {
		t.Errorf("seed file %q, want %q", got, want)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("simweb serve after SIGINT: %v", err)
	}

	assertCleanError(t, r.fails(exitUsage, "simweb", "topic"), "--topics")
	assertCleanError(t, r.fails(exitUsage, "simweb", "topic", "--topics", "1"), "--topics")
	assertCleanError(t, r.fails(exitUsage, "simweb", "topic", "--topics", "3", "--topic", "3"), "--topic")
	assertCleanError(t, r.fails(exitUsage, "simweb", "serve", "--topic", "0"), "--topics")
	assertCleanError(t, r.fails(exitUsage, "simweb", "truth", "--out", "x.parquet", "--topics", "99"), "--topics")
}
