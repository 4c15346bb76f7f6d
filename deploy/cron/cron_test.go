package cron_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests build the real trawl binary, serve the synthetic web with
// `trawl simweb serve` on loopback, and run the real crawl-round and
// trawl-env scripts against it, as cron would.

// runTimeout bounds every script run: the longest one fetches for a few
// seconds.
const runTimeout = 2 * time.Minute

// kit is what every test needs: the binary, the scripts, the web.
type kit struct {
	bin, binDir string // the trawl binary and its directory
	crawlRound  string // deploy/cron/crawl-round
	trawlEnv    string // deploy/cron/trawl-env
	seeds       string // the synthetic web's home pages, one URL a line
	dns         string // its DNS server
}

func setup(t *testing.T) *kit {
	t.Helper()
	for _, tool := range []string{"bash", "flock", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("crawl-round needs %s (bash; flock and setsid from util-linux), not found: %v", tool, err)
		}
	}
	k := &kit{binDir: t.TempDir()}
	k.bin = filepath.Join(k.binDir, "trawl")
	build := exec.Command("go", "build", "-o", k.bin, "github.com/trawl/trawl/cmd/trawl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var err error
	if k.crawlRound, err = filepath.Abs("crawl-round"); err != nil {
		t.Fatal(err)
	}
	if k.trawlEnv, err = filepath.Abs("trawl-env"); err != nil {
		t.Fatal(err)
	}
	k.serveSimweb(t)
	return k
}

// serveSimweb starts `trawl simweb serve` (4 hosts, no latency, no hostile
// hosts) and reads its addresses from the banner it prints; it is stopped
// with SIGINT when the test ends.
func (k *kit) serveSimweb(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	k.seeds = filepath.Join(dir, "seeds.txt")
	cmd := exec.Command(k.bin, "simweb", "serve", "--hosts", "4", "--pages", "200",
		"--latency", "0", "--hazards", "none", "--seeds-out", k.seeds, "--log-level", "warn")
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	banner := make(chan map[string]string, 1)
	go func() {
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
		banner <- fields
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	select {
	case f := <-banner:
		k.dns, _, _ = strings.Cut(f["dns"], " ")
	case <-time.After(time.Minute):
		t.Fatalf("simweb serve printed no banner in a minute; stderr:\n%s", stderr.String())
	}
	if k.dns == "" {
		t.Fatalf("simweb serve's banner lacks its DNS address; stderr:\n%s", stderr.String())
	}
}

// cleanEnv is this process's environment without TRAWL_* variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRAWL_") {
			env = append(env, kv)
		}
	}
	return env
}

// scriptEnv is the environment of a script run: no TRAWL_* variables of
// the caller, an env file that does not exist (not the machine's
// /etc/trawl/trawl.env), the binary's directory first on PATH, TMPDIR (for
// trawl's spill files) under dir, then extra.
func (k *kit) scriptEnv(t *testing.T, dir string, extra ...string) []string {
	t.Helper()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"TMPDIR=" + tmp}
	for _, kv := range cleanEnv() {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + k.binDir + string(os.PathListSeparator) + p
		}
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TRAWL_ENV_FILE="+filepath.Join(dir, "no-such.env"))
	return append(env, extra...)
}

// crawlFlags are the flags a crawl of the synthetic web needs.
func (k *kit) crawlFlags(crawl string, delay string) []string {
	return []string{"--crawl", crawl, "--agent", "cronbot", "--allow-private",
		"--dns-server", k.dns, "--server-delay", delay}
}

// run is one script process.
type run struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	code   int
	logDir string
	bin    string // the trawl binary the script runs
}

// start starts script with args in dir, its logs in logDir.
func (k *kit) start(t *testing.T, env []string, dir, logDir, script string, args ...string) *run {
	t.Helper()
	return k.startWith(t, nil, env, dir, logDir, script, args...)
}

// startGroup is start with the script in a process group of its own.
func (k *kit) startGroup(t *testing.T, env []string, dir, logDir, script string, args ...string) *run {
	t.Helper()
	return k.startWith(t, &syscall.SysProcAttr{Setpgid: true}, env, dir, logDir, script, args...)
}

func (k *kit) startWith(t *testing.T, attr *syscall.SysProcAttr, env []string, dir, logDir, script string, args ...string) *run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	r := &run{t: t, done: make(chan struct{}), logDir: logDir, bin: k.bin}
	r.cmd = exec.CommandContext(ctx, script, args...)
	r.cmd.Dir = dir
	r.cmd.Env = env
	r.cmd.SysProcAttr = attr
	r.cmd.Stdout = &r.stderr // the scripts print nothing on stdout; keep it to show it
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		err := r.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.code = 128 + int(ws.Signal())
			}
		default:
			r.code = -1
		}
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		r.killTrawl()
		cancel()
	})
	return r
}

// wait waits for the script to end and returns its exit status.
func (r *run) wait() int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(runTimeout + 10*time.Second):
		r.t.Fatalf("%s did not end", r.cmd.Path)
	}
	return r.code
}

// logPath is the run's log file: crawl-round names it after its pid.
func (r *run) logPath() string {
	r.t.Helper()
	m, err := filepath.Glob(filepath.Join(r.logDir, fmt.Sprintf("crawl-round-*-%d.log", r.cmd.Process.Pid)))
	if err != nil || len(m) != 1 {
		r.t.Fatalf("log files of pid %d in %s: %v %v", r.cmd.Process.Pid, r.logDir, m, err)
	}
	return m[0]
}

func (r *run) log() string {
	r.t.Helper()
	data, err := os.ReadFile(r.logPath())
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

// waitLog waits until the log contains s.
func (r *run) waitLog(s string) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(r.logDir, fmt.Sprintf("crawl-round-*-%d.log", r.cmd.Process.Pid)))
		if len(m) == 1 {
			if data, err := os.ReadFile(m[0]); err == nil && strings.Contains(string(data), s) {
				return
			}
		}
		select {
		case <-r.done:
			r.t.Fatalf("the run ended (exit %d) before its log said %q; stderr:\n%s", r.code, s, r.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	r.t.Fatalf("the log never said %q", s)
}

var trawlPID = regexp.MustCompile(`(?m)^crawl-round: trawl pid (\d+)$`)

// killTrawl kills the trawl the run started if it outlived the script and
// the test (it runs in a session of its own): the process the log names,
// if it still runs the test's binary.
func (r *run) killTrawl() {
	m, _ := filepath.Glob(filepath.Join(r.logDir, fmt.Sprintf("crawl-round-*-%d.log", r.cmd.Process.Pid)))
	if len(m) != 1 {
		return
	}
	data, _ := os.ReadFile(m[0])
	if sm := trawlPID.FindSubmatch(data); sm != nil {
		pid, err := strconv.Atoi(string(sm[1]))
		if err != nil {
			return
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		bin, err2 := filepath.EvalSymlinks(r.bin)
		if err == nil && err2 == nil && exe == bin {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

var (
	header = regexp.MustCompile(`^=== crawl-round start \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ host \S+ pid (\d+) command: (.*)$`)
	footer = regexp.MustCompile(`^=== crawl-round end \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ exit (\d+) \((.*)\) after \d+s$`)
)

// checkFrame checks the log's first and last lines: a header naming the
// script's pid and a command containing command, a footer with the exit
// status; it returns the footer's description.
func (r *run) checkFrame(command string, code int) string {
	r.t.Helper()
	log := r.log()
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	h := header.FindStringSubmatch(lines[0])
	if h == nil {
		r.t.Fatalf("first log line is not a header: %q", lines[0])
	}
	if h[1] != strconv.Itoa(r.cmd.Process.Pid) {
		r.t.Errorf("header names pid %s, the script is %d", h[1], r.cmd.Process.Pid)
	}
	if !strings.Contains(h[2], command) {
		r.t.Errorf("header command %q lacks %q", h[2], command)
	}
	f := footer.FindStringSubmatch(lines[len(lines)-1])
	if f == nil {
		r.t.Fatalf("last log line is not a footer: %q\nlog:\n%s", lines[len(lines)-1], log)
	}
	if f[1] != strconv.Itoa(code) {
		r.t.Errorf("footer says exit %s, want %d", f[1], code)
	}
	return f[2]
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "crawl-round-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCrawlRound(t *testing.T) {
	k := setup(t)
	t.Run("EnvExample", k.testEnvExample)
	t.Run("EnvFile", k.testEnvFile)
	t.Run("Overlap", k.testOverlap)
	t.Run("ExitStatus", k.testExitStatus)
	t.Run("Stop", k.testStop)
	t.Run("SIGTERM", k.testSIGTERM)
	t.Run("Killed", k.testKilled)
}

// scriptVars are the example env file's variables that the scripts read
// and trawl does not.
var scriptVars = map[string]bool{"TRAWL_BIN": true, "TRAWL_LOG_DIR": true, "TRAWL_QUIET_EXIT": true}

// testEnvExample: every variable of trawl.env.example, its commented lines
// included, is a setting trawl knows (or one of the scripts' own), and the
// file sources cleanly.
func (k *kit) testEnvExample(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("trawl.env.example")
	if err != nil {
		t.Fatal(err)
	}
	assign := regexp.MustCompile(`^#?(TRAWL_[A-Z0-9_]+)=`)
	var lines []string
	settings := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := assign.FindStringSubmatch(line)
		switch {
		case m == nil:
		case m[1] == "TRAWL_BIN":
			line = "TRAWL_BIN=" + k.bin
		case m[1] == "TRAWL_LOG_DIR":
			line = "TRAWL_LOG_DIR=" + filepath.Join(dir, "logs")
		default:
			line = strings.TrimPrefix(line, "#")
			if !scriptVars[m[1]] {
				settings++
			}
		}
		lines = append(lines, line)
	}
	envFile := filepath.Join(dir, "all.env")
	if err := os.WriteFile(envFile, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(k.trawlEnv, "config")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	cmd.Env = append(k.scriptEnv(t, dir), "TRAWL_ENV_FILE="+envFile)
	if err := cmd.Run(); err != nil {
		t.Fatalf("trawl-env config with every variable of the example: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "matches no setting") {
		t.Errorf("the example names variables trawl does not know:\n%s", out.String())
	}
	if n := strings.Count(out.String(), " env TRAWL_"); n != settings || settings < 10 {
		t.Errorf("%d settings come from the example's %d setting variables:\n%s", n, settings, out.String())
	}
}

// testEnvFile: the env file sets the crawl directory, the agent, the binary
// and the log directory; a run with no flag but --seeds crawls one round
// quietly into that crawl directory, and trawl-env runs other commands with
// the same settings.
func (k *kit) testEnvFile(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "data", "crawl")
	logDir := filepath.Join(dir, "logs") // created by the script
	envFile := filepath.Join(dir, "trawl.env")
	content := strings.Join([]string{
		"# the test's settings",
		"TRAWL_BIN=" + k.bin,
		"TRAWL_LOG_DIR=" + logDir,
		"TRAWL_CRAWL=" + crawl,
		"TRAWL_AGENT=envbot",
		"TRAWL_FETCHER_ALLOW_PRIVATE=true",
		"TRAWL_FETCHER_DNS_SERVERS=" + k.dns,
		"TRAWL_FETCHER_SERVER_DELAY=100ms",
		"",
	}, "\n")
	if err := os.WriteFile(envFile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	// trawl is not on PATH: TRAWL_BIN must be what runs.
	var env []string
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "TRAWL_ENV_FILE="+envFile)

	r := k.start(t, env, dir, logDir, k.crawlRound, "--seeds", k.seeds)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nlog:\n%s", code, r.stderr.String(), r.log())
	}
	if r.stderr.Len() != 0 {
		t.Errorf("a successful run printed %q; cron would mail it", r.stderr.String())
	}
	r.checkFrame(k.bin+" crawl --rounds 1 --seeds "+k.seeds, 0)
	log := r.log()
	for _, want := range []string{"env file: " + envFile, "agent=envbot", "round 1 (run 1)", "CrawlDB: " + crawl} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "matches no setting") {
		t.Errorf("trawl saw a TRAWL_* variable that is no setting (the script's own leaked):\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(crawl, "crawldb", "current")); err != nil {
		t.Errorf("no CrawlDB in the env file's crawl directory: %v", err)
	}
	if n := len(logFiles(t, logDir)); n != 1 {
		t.Errorf("%d log files, want 1", n)
	}

	// trawl-env runs any command with the same settings.
	var out bytes.Buffer
	cmd := exec.Command(k.trawlEnv, "config", "crawl", "fetcher.agent")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("trawl-env config: %v\n%s", err, out.String())
	}
	for _, want := range []string{"env TRAWL_CRAWL", "envbot", "env TRAWL_AGENT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("trawl-env config lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "matches no setting") {
		t.Errorf("trawl-env passed its own variables to trawl:\n%s", out.String())
	}
	out.Reset()
	cmd = exec.Command(k.trawlEnv, "--lock-wait", "30", "readdb", "stats")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("trawl-env readdb stats: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "status 2 (db_fetched):\t4") {
		t.Errorf("readdb stats after one round of 4 home pages:\n%s", out.String())
	}
}

// testOverlap: of two runs started at once on one crawl, one crawls and the
// other exits 4 at once, while the first still runs, and its log says why.
// A third run with another log directory (so not the script's lock) meets
// trawl's own crawl lock: exit 4 too.
func (k *kit) testOverlap(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	env := k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+logDir)
	// A 5s server delay: each host's page waits 5s after its robots.txt,
	// so the winner fetches for about 5s.
	args := append(k.crawlFlags(filepath.Join(dir, "crawl"), "5s"), "--seeds", k.seeds)
	a := k.start(t, env, dir, logDir, k.crawlRound, args...)
	b := k.start(t, env, dir, logDir, k.crawlRound, args...)

	var winner, loser *run
	select {
	case <-a.done:
		winner, loser = b, a
	case <-b.done:
		winner, loser = a, b
	case <-time.After(runTimeout):
		t.Fatal("neither run ended")
	}
	select {
	case <-winner.done:
		t.Fatalf("both runs ended together (exits %d, %d): no overlap to refuse", a.code, b.code)
	default:
	}
	if loser.code != 4 {
		t.Fatalf("first run to end exited %d, want 4; stderr:\n%s", loser.code, loser.stderr.String())
	}
	desc := loser.checkFrame("crawl --rounds 1 --crawl", 4)
	if !strings.Contains(desc, "locked") {
		t.Errorf("footer of the refused run says %q", desc)
	}
	lockFile := filepath.Join(logDir, "crawl-round.lock")
	why := fmt.Sprintf("another crawl-round holds %s (pid %d on ", lockFile, winner.cmd.Process.Pid)
	if log := loser.log(); !strings.Contains(log, why) {
		t.Errorf("the refused run's log does not say %q:\n%s", why, log)
	}
	if !strings.Contains(loser.stderr.String(), "exit 4 (locked") || !strings.Contains(loser.stderr.String(), why) {
		t.Errorf("the refused run's stderr (cron's mail) does not explain it:\n%s", loser.stderr.String())
	}
	if strings.Contains(loser.log(), "crawl-round: trawl pid") {
		t.Errorf("the refused run started trawl:\n%s", loser.log())
	}

	// Behind the script's lock, trawl's own: a run logging elsewhere.
	winner.waitLog("msg=fetching")
	otherLogs := filepath.Join(dir, "other-logs")
	c := k.start(t, k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+otherLogs), dir, otherLogs, k.crawlRound, args...)
	if code := c.wait(); code != 4 {
		t.Errorf("a run with its own log directory exited %d, want 4 (trawl's crawl lock); log:\n%s", code, c.log())
	} else if log := c.log(); !strings.Contains(log, "is locked by \"crawl\"") {
		t.Errorf("its log does not name trawl's lock holder:\n%s", log)
	}

	// trawl-env --lock-wait queues behind the round: with no time to wait,
	// it gives up at once with exit 4, naming the holder.
	var out bytes.Buffer
	cmd := exec.Command(k.trawlEnv, "--lock-wait", "0", "readdb", "stats")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("trawl-env --lock-wait 0 during a round: %v, want exit 4\n%s", err, out.String())
	} else if want := fmt.Sprintf("(pid %d on ", winner.cmd.Process.Pid); !strings.Contains(out.String(), want) {
		t.Errorf("trawl-env does not name the round holding the lock (%q):\n%s", want, out.String())
	}

	if code := winner.wait(); code != 0 {
		t.Fatalf("the crawling run exited %d, want 0; stderr:\n%s\nlog:\n%s", code, winner.stderr.String(), winner.log())
	}
	if winner.stderr.Len() != 0 {
		t.Errorf("the crawling run printed %q", winner.stderr.String())
	}
	winner.checkFrame("crawl --rounds 1 --crawl", 0)
	if !strings.Contains(winner.log(), "4 ok") {
		t.Errorf("the crawling run did not fetch the 4 home pages:\n%s", winner.log())
	}
	if n := len(logFiles(t, logDir)); n != 2 {
		t.Errorf("%d log files for 2 runs", n)
	}
}

// testExitStatus: trawl's exit status comes through, with a log of one
// header and one footer per run and the end of the log on stderr.
func (k *kit) testExitStatus(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	env := k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+logDir)
	crawl := filepath.Join(dir, "crawl")
	cases := []struct {
		args    []string
		command string // in the header
		code    int
		desc    string // in the footer
		why     string // trawl's words, in the log and on stderr
	}{
		{[]string{"--crawl", crawl, "--rounds", "0"}, "crawl --crawl " + crawl + " --rounds 0", 2, "usage error", "--rounds must be positive"},
		{[]string{"--crawl", crawl, "--no-such-flag"}, "crawl --rounds 1 --crawl", 2, "usage error", "no-such-flag"},
		// An empty crawl has nothing due: trawl crawl says so and exits 0.
		{[]string{"--crawl", crawl, "--agent", "cronbot"}, "crawl --rounds 1 --crawl", 0, "ok; nothing more is due", ""},
	}
	for i, c := range cases {
		r := k.start(t, env, dir, logDir, k.crawlRound, c.args...)
		if code := r.wait(); code != c.code {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", c.args, code, c.code, r.stderr.String())
			continue
		}
		if desc := r.checkFrame(c.command, c.code); desc != c.desc {
			t.Errorf("%v: footer says %q, want %q", c.args, desc, c.desc)
		}
		if c.code == 0 {
			if r.stderr.Len() != 0 {
				t.Errorf("%v: printed %q on success", c.args, r.stderr.String())
			}
		} else {
			stderr := r.stderr.String()
			for _, want := range []string{fmt.Sprintf("exit %d (%s); the end of %s", c.code, c.desc, r.logPath()), c.why, "=== crawl-round end"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("%v: stderr lacks %q:\n%s", c.args, want, stderr)
				}
			}
		}
		if log := r.log(); strings.Count(log, "=== crawl-round start") != 1 || strings.Count(log, "=== crawl-round end") != 1 {
			t.Errorf("%v: log has not one header and one footer:\n%s", c.args, log)
		}
		if n := len(logFiles(t, logDir)); n != i+1 {
			t.Errorf("%d log files after %d runs", n, i+1)
		}
	}
}

// testStop: with crawl/.STOP present the crawl stops before its first
// stage (the inject of --seeds) and exits 0; trawl removes the file, the
// log says the crawl stopped, and the next run crawls.
func (k *kit) testStop(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	env := k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+logDir)
	crawl := filepath.Join(dir, "crawl")
	args := append(k.crawlFlags(crawl, "100ms"), "--seeds", k.seeds)
	if err := os.MkdirAll(crawl, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := filepath.Join(crawl, ".STOP")
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := k.start(t, env, dir, logDir, k.crawlRound, args...)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, r.stderr.String())
	}
	if r.stderr.Len() != 0 {
		t.Errorf("a stopped run printed %q", r.stderr.String())
	}
	desc := r.checkFrame("crawl --rounds 1", 0)
	if !strings.Contains(desc, "stopped at .STOP") {
		t.Errorf("footer says %q, want it to say the crawl stopped at .STOP", desc)
	}
	log := r.log()
	if !strings.Contains(log, "crawl-round: the crawl stopped at the .STOP file") ||
		!strings.Contains(log, "trawl: crawl stopped at .STOP") {
		t.Errorf("log does not say the crawl stopped:\n%s", log)
	}
	if strings.Contains(log, "inject done") || strings.Contains(log, "msg=fetching") {
		t.Errorf("the crawl went on despite .STOP:\n%s", log)
	}
	if _, err := os.Stat(stop); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".STOP is still there after trawl stopped at it: %v", err)
	}

	r = k.start(t, env, dir, logDir, k.crawlRound, args...)
	if code := r.wait(); code != 0 {
		t.Fatalf("the run after the stop: exit %d; stderr:\n%s", code, r.stderr.String())
	}
	if log := r.log(); !strings.Contains(log, "round 1 (run 1)") || !strings.Contains(log, "4 ok") {
		t.Errorf("the run after the stop did not crawl:\n%s", log)
	}
}

// testSIGTERM: SIGTERM to the script during a fetch reaches trawl once:
// the fetch stops and publishes what it fetched, trawl exits 130 and so
// does the script; the next run parses and merges those pages.
func (k *kit) testSIGTERM(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	env := k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+logDir)
	crawl := filepath.Join(dir, "crawl")

	// Seeds for a long fetch: each home page and 25 more URLs per host,
	// 250ms apart on each host (about 7s in all; the pages that do not
	// exist are fetched as 404s all the same).
	data, err := os.ReadFile(k.seeds)
	if err != nil {
		t.Fatal(err)
	}
	var seeds strings.Builder
	for _, home := range strings.Fields(string(data)) {
		fmt.Fprintln(&seeds, home)
		for i := range 25 {
			fmt.Fprintf(&seeds, "%sp/%d.html\n", home, i)
		}
	}
	seedFile := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seedFile, []byte(seeds.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	r := k.start(t, env, dir, logDir, k.crawlRound, append(k.crawlFlags(crawl, "250ms"), "--seeds", seedFile)...)
	r.waitLog("msg=fetching")
	time.Sleep(time.Second) // let it fetch a few pages
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(); code != 130 {
		t.Fatalf("exit %d after SIGTERM, want 130; stderr:\n%s\nlog:\n%s", code, r.stderr.String(), r.log())
	}
	if desc := r.checkFrame("crawl --rounds 1", 130); desc != "interrupted" {
		t.Errorf("footer says %q", desc)
	}
	log := r.log()
	for _, want := range []string{
		"crawl-round: received SIGTERM; sending SIGTERM to trawl (pid ",
		"fetch stopped: ending the run", // trawl's graceful stop: one signal, not two
		"trawl: interrupted: crawl: round 1: fetch: interrupted: kept ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(r.stderr.String(), "exit 130 (interrupted)") {
		t.Errorf("stderr (cron's mail) does not report the interrupt:\n%s", r.stderr.String())
	}
	fetched, _ := filepath.Glob(filepath.Join(crawl, "segments", "*", "crawl_fetch", "_SUCCESS"))
	if len(fetched) != 1 {
		t.Errorf("the interrupted fetch published %d crawl_fetch outputs, want 1", len(fetched))
	}

	// The next run finishes that round: parse and updatedb, no new fetch.
	r = k.start(t, env, dir, logDir, k.crawlRound, k.crawlFlags(crawl, "250ms")...)
	if code := r.wait(); code != 0 {
		t.Fatalf("the run after the interrupt: exit %d; stderr:\n%s", code, r.stderr.String())
	}
	if log := r.log(); !strings.Contains(log, "(resumed)") {
		t.Errorf("the run after the interrupt did not resume the round:\n%s", log)
	}
	merged, _ := filepath.Glob(filepath.Join(crawl, "segments", "*", "_updated"))
	if len(merged) != 1 {
		t.Errorf("%d segments merged after the resumed round, want 1", len(merged))
	}

	// SIGINT to the script's whole process group, as Ctrl-C at a terminal
	// sends it: trawl runs in a session of its own, so it gets the signal
	// once, from the script, and still stops gracefully.
	r = k.startGroup(t, env, dir, logDir, k.crawlRound, k.crawlFlags(crawl, "250ms")...)
	r.waitLog("msg=fetching")
	time.Sleep(time.Second)
	if err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(); code != 130 {
		t.Fatalf("exit %d after SIGINT to the process group, want 130; log:\n%s", code, r.log())
	}
	log = r.log()
	if strings.Count(log, "crawl-round: received SIGINT") != 1 || !strings.Contains(log, "fetch stopped: ending the run") {
		t.Errorf("the fetch did not stop gracefully on one SIGINT:\n%s", log)
	}
	fetched, _ = filepath.Glob(filepath.Join(crawl, "segments", "*", "crawl_fetch", "_SUCCESS"))
	if len(fetched) != 2 {
		t.Errorf("%d crawl_fetch outputs after the second interrupted fetch, want 2", len(fetched))
	}
}

// testKilled: crawl-round killed with SIGKILL leaves no lock of its own
// behind (flock's lock dies with the file descriptor). The trawl it started
// keeps running and holds the crawl: the next run gets past the script's
// lock and meets trawl's, exit 4.
func (k *kit) testKilled(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	env := k.scriptEnv(t, dir, "TRAWL_LOG_DIR="+logDir)
	// A 30s server delay: the orphaned trawl fetches until the test kills it.
	args := append(k.crawlFlags(filepath.Join(dir, "crawl"), "30s"), "--seeds", k.seeds)
	a := k.start(t, env, dir, logDir, k.crawlRound, args...)
	a.waitLog("msg=fetching")
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if code := a.wait(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d after SIGKILL", code)
	}
	b := k.start(t, env, dir, logDir, k.crawlRound, args...)
	if code := b.wait(); code != 4 {
		t.Fatalf("run after a killed one: exit %d, want 4 (the orphaned trawl holds the crawl); log:\n%s", code, b.log())
	}
	log := b.log()
	if strings.Contains(log, "another crawl-round holds") {
		t.Errorf("the killed script's lock outlived it:\n%s", log)
	}
	if !strings.Contains(log, "crawl-round: trawl pid") || !strings.Contains(log, "is locked by \"crawl\"") {
		t.Errorf("the run did not start trawl, or trawl did not name its lock:\n%s", log)
	}
	a.killTrawl()
}
