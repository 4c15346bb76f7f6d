package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// binPath is the trawl binary built once by TestMain (with -race when the
// tests run with -race); the end-to-end tests run it as a user would.
// plainBinPath is built without -race, for the tests that time their kills
// against large jobs (crash safety, not data races, is what they test).
var binPath, plainBinPath string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "trawl-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "trawl")
	plainBinPath = binPath
	if err := goBuild(binPath, raceEnabled); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if raceEnabled {
		// A binary built with -race sleeps a second before it exits
		// (the race runtime's atexit_sleep_ms, for other threads'
		// reports): a second of every one of the hundreds of runs here
		// and of every task the Hadoop emulation starts. Races are still
		// reported as they happen.
		if os.Getenv("GORACE") == "" {
			os.Setenv("GORACE", "atexit_sleep_ms=0")
		}
		plainBinPath = filepath.Join(dir, "trawl-norace")
		if err := goBuild(plainBinPath, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

func goBuild(out string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building trawl (race %v): %w", race, err)
	}
	return nil
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// runner runs the binary in a working directory with a clean environment
// (no TRAWL_* variables from the caller) plus env.
type runner struct {
	t   *testing.T
	dir string
	env []string
	bin string // the binary; binPath if empty
}

func newRunner(t *testing.T) *runner {
	return &runner{t: t, dir: t.TempDir()}
}

func (r *runner) cmd(ctx context.Context, args ...string) *exec.Cmd {
	bin := r.bin
	if bin == "" {
		bin = binPath
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRAWL_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, r.env...)
	return cmd
}

// run runs trawl with args and returns what it printed and its exit status.
func (r *runner) run(args ...string) result {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := r.cmd(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		r.t.Fatalf("trawl %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// ok runs trawl and fails the test unless it exits 0.
func (r *runner) ok(args ...string) result {
	r.t.Helper()
	res := r.run(args...)
	if res.code != 0 {
		r.t.Fatalf("trawl %s: %s", strings.Join(args, " "), res)
	}
	return res
}

// fails runs trawl and fails the test unless it exits with code.
func (r *runner) fails(code int, args ...string) result {
	r.t.Helper()
	res := r.run(args...)
	if res.code != code {
		r.t.Fatalf("trawl %s: want exit %d, got %s", strings.Join(args, " "), code, res)
	}
	return res
}

// assertStderrOneLine checks an error run printed one "trawl: " line and no
// Go stack trace.
func assertCleanError(t *testing.T, res result, want ...string) {
	t.Helper()
	if strings.Contains(res.stderr, "goroutine ") || strings.Contains(res.stderr, "panic") {
		t.Errorf("stack trace on stderr:\n%s", res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "trawl: ") {
		t.Errorf("last stderr line %q does not start with \"trawl: \"", last)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error line %q lacks %q", last, w)
		}
	}
}

func commandPaths(prefix []string, cmds []*cli.Command) [][]string {
	var out [][]string
	for _, c := range cmds {
		p := append(append([]string(nil), prefix...), c.Name)
		out = append(out, p)
		out = append(out, commandPaths(p, c.Subcommands)...)
	}
	return out
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	app := newApp(&stdio{})
	paths := append([][]string{{}}, commandPaths(nil, app.Commands)...)
	if len(paths) < 15 {
		t.Fatalf("only %d commands", len(paths))
	}
	for _, p := range paths {
		res := r.ok(append(p, "--help")...)
		if !strings.Contains(res.stdout, "Examples:") {
			t.Errorf("trawl %s --help has no Examples:\n%s", strings.Join(p, " "), res.stdout)
		}
		if res.stderr != "" {
			t.Errorf("trawl %s --help wrote to stderr: %s", strings.Join(p, " "), res.stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"nosuch"}, []string{`unknown command "nosuch"`}},
		{[]string{"--bogus"}, []string{"-bogus"}},
		{[]string{"generate", "--topN", "many"}, []string{"--topN", `"many" is not an integer`}},
		{[]string{"generate", "--count-mode", "planet"}, []string{"--count-mode", "host, domain"}},
		{[]string{"generate", "extra"}, []string{"no arguments"}},
		{[]string{"generate", "--now", "soonish"}, []string{"--now"}},
		{[]string{"inject"}, []string{"no seed file"}},
		{[]string{"readdb", "nosuch"}, []string{`unknown readdb command "nosuch"`}},
		{[]string{"readdb", "dump", "--format", "xml"}, []string{"--format"}},
		{[]string{"config", "no.such"}, []string{`unknown setting "no.such"`}},
		{[]string{"--log-level", "loud", "config"}, []string{"--log-level"}},
	} {
		res := r.fails(exitUsage, tc.args...)
		assertCleanError(t, res, tc.want...)
		if res.stdout != "" {
			t.Errorf("trawl %v: usage error wrote to stdout:\n%s", tc.args, res.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	res := r.ok("version")
	if !strings.HasPrefix(res.stdout, "trawl ") || !strings.Contains(res.stdout, "go1.") {
		t.Errorf("version: %q", res.stdout)
	}
}

// TestConfigPrecedence runs `trawl config` with a setting given by each
// source and checks the value and source it reports.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	writeTestFile(t, filepath.Join(r.dir, "trawl.yaml"), "generate:\n  topN: 10\n  maxPerHost: 7\nengine.memory: 64MiB\nlog.level: warn\n")
	other := filepath.Join(r.dir, "other.yaml")
	writeTestFile(t, other, "generate.numFetchers: 9\n")

	value := func(res result, name string) (string, string) {
		t.Helper()
		for _, line := range strings.Split(res.stdout, "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == name {
				return f[1], strings.Join(f[2:], " ")
			}
		}
		t.Fatalf("no %s in:\n%s", name, res.stdout)
		return "", ""
	}
	check := func(res result, name, wantVal, wantSrc string) {
		t.Helper()
		v, src := value(res, name)
		if v != wantVal || src != wantSrc {
			t.Errorf("%s = %s (%s), want %s (%s)", name, v, src, wantVal, wantSrc)
		}
	}

	r.env = []string{"TRAWL_GENERATE_TOP_N=20", "TRAWL_CRAWL=/env/crawl"}
	res := r.ok("--memory", "32MiB", "config", "--topN", "30", "--log-level", "debug")
	check(res, "generate.topN", "30", "flag --topN")
	check(res, "generate.maxPerHost", "7", "file trawl.yaml:3")
	check(res, "engine.memory", "32MiB", "flag --memory")
	check(res, "log.level", "debug", "flag --log-level")
	check(res, "crawl", "/env/crawl", "env TRAWL_CRAWL")
	check(res, "generate.countMode", "host", "default")
	check(res, "generate.numFetchers", "1", "default")

	// A flag after the command wins over the same flag before it.
	res = r.ok("--crawl", "/a", "config", "--crawl", "/b")
	check(res, "crawl", "/b", "flag --crawl")

	// TRAWL_CONFIG replaces ./trawl.yaml; --config replaces both.
	r.env = []string{"TRAWL_CONFIG=" + other}
	res = r.ok("config")
	check(res, "generate.numFetchers", "9", "file "+other+":1")
	check(res, "generate.topN", "0", "default")
	r.env = nil
	res = r.ok("config", "--config", other, "generate.numFetchers", "generate.topN")
	check(res, "generate.numFetchers", "9", "file "+other+":1")
	check(res, "generate.topN", "0", "default")

	// Unknown keys in the file are an error naming the key and the file.
	writeTestFile(t, filepath.Join(r.dir, "trawl.yaml"), "generate:\n  topn: 10\n")
	res = r.fails(exitUsage, "config")
	assertCleanError(t, res, "trawl.yaml:2", `"generate.topn"`)

	// The YAML output loads back to the same values.
	os.Remove(filepath.Join(r.dir, "trawl.yaml"))
	r.env = []string{"TRAWL_GENERATE_TOP_N=44"}
	y := r.ok("config", "--format", "yaml", "--max-per-host", "3").stdout
	writeTestFile(t, filepath.Join(r.dir, "round.yaml"), y)
	r.env = nil
	res = r.ok("config", "--config", "round.yaml")
	lineOf := func(key string) int {
		for i, l := range strings.Split(y, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), key+":") {
				return i + 1
			}
		}
		t.Fatalf("no %s in\n%s", key, y)
		return 0
	}
	check(res, "generate.topN", "44", fmt.Sprintf("file round.yaml:%d", lineOf("topN")))
	check(res, "generate.maxPerHost", "3", fmt.Sprintf("file round.yaml:%d", lineOf("maxPerHost")))
}

func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
