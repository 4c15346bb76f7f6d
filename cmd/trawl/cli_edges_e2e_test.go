package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
)

// TestGlobalFlagsAtAnyLevel checks that the global options work before the
// command, after a command group's name and after its sub-command's, and
// that the last one given wins.
func TestGlobalFlagsAtAnyLevel(t *testing.T) {
	r := newRunner(t)
	seeds := filepath.Join(r.dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://a.example/\nhttp://b.example/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.ok("inject", "--crawl", "c1", seeds)
	want := r.ok("--crawl", "c1", "readdb", "stats").stdout
	if !strings.Contains(want, "2") {
		t.Fatalf("readdb stats of two URLs:\n%s", want)
	}
	for _, args := range [][]string{
		{"readdb", "--crawl", "c1", "stats"},
		{"readdb", "stats", "--crawl", "c1"},
		{"readdb", "-c", "c1", "--log-level", "warn", "stats"},
		{"--crawl", "nowhere", "readdb", "--crawl", "c1", "stats"},
		{"readdb", "--crawl", "nowhere", "stats", "--crawl", "c1"},
		{"readdb", "--log-format", "json", "--config", "", "stats", "--crawl=c1"},
	} {
		if got := r.ok(args...).stdout; got != want {
			t.Errorf("trawl %s:\n%s\nwant (as trawl --crawl c1 readdb stats):\n%s", strings.Join(args, " "), got, want)
		}
	}
	// The group level's --log-level reaches the sub-command's logger.
	if res := r.ok("readdb", "--log-level", "debug", "--crawl", "c1", "stats"); !strings.Contains(res.stderr, "level=DEBUG") {
		t.Errorf("readdb --log-level debug stats logged no debug line:\n%s", res.stderr)
	}
	res := r.fails(exitUsage, "readdb", "--no-such-flag", "stats")
	assertCleanError(t, res, "no-such-flag")
	// Every command group's help lists the global options.
	for _, group := range []string{"readdb", "readseg", "readlinkdb", "simweb", "eval"} {
		if out := r.ok(group, "--help").stdout; !strings.Contains(out, "--crawl DIR") {
			t.Errorf("trawl %s --help lacks the global options:\n%s", group, out)
		}
	}
}

// notModifiedSite serves three linked pages with an ETag, and answers 304
// to a request that has it.
func notModifiedSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conditional atomic.Int64
	pages := map[string]string{
		"/":   `<html><title>home</title><a href="/p1">one</a> <a href="/p2">two</a></html>`,
		"/p1": `<html><title>one</title><a href="/">home</a></html>`,
		"/p2": `<html><title>two</title><a href="/p1">one</a></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"v1-%d"`, len(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &conditional
}

// TestCrawlSummaryNotModified crawls a site twice, 40 simulated days apart:
// the second round's pages come back 304, and the round's and the crawl's
// summaries count them. The binary is run through a relative path, which
// the summary's next: hint repeats.
func TestCrawlSummaryNotModified(t *testing.T) {
	srv, conditional := notModifiedSite(t)
	r := newRunner(t)
	if err := os.MkdirAll(filepath.Join(r.dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "bin", "trawl"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	r.bin = filepath.Join("bin", "trawl") // relative to r.dir, where it runs
	seeds := filepath.Join(r.dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(srv.URL+"/\n"+srv.URL+"/p1\n"+srv.URL+"/p2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.ok("--crawl", "crawl", "crawl", "--seeds", seeds, "--rounds", "2", "--now", "2026-01-01",
		"--days-per-round", "40", "--agent", "testbot", "--allow-private", "--server-delay", "0")
	if conditional.Load() != 3 {
		t.Fatalf("%d conditional requests answered 304, want 3:\n%s", conditional.Load(), res)
	}
	for _, w := range []string{
		"3 ok, 0 failed (0 gone, 0 to retry), 0 robots denied, 0 not modified,",
		"0 ok, 0 failed (0 gone, 0 to retry), 0 robots denied, 3 not modified,",
		"the CrawlDB has 3 URLs, 3 fetched\n",
		"the CrawlDB has 3 URLs, 0 fetched, 3 not modified\n",
		"crawl: 2 rounds in ",
		": 3 pages fetched, 3 not modified, 0 failed, 0 new URLs\n",
		"next:    bin/trawl --crawl crawl readdb stats\n",
	} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("crawl summary lacks %q:\n%s", w, res.stdout)
		}
	}
}

// helpDefault returns the default that --help prints on the line of flag
// name in help, and whether the line has one; found is false without a
// line for the flag.
func helpDefault(help, name string) (def string, has, found bool) {
	_, opts, ok := strings.Cut(help, "\nOPTIONS:\n")
	if !ok {
		return "", false, false
	}
	for _, l := range strings.Split(opts, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "--"+name {
			continue
		}
		i := strings.LastIndex(l, " (default: ")
		if i < 0 || !strings.HasSuffix(l, ")") {
			return "", false, true
		}
		return l[i+len(" (default: ") : len(l)-1], true, true
	}
	return "", false, false
}

// isSettingFlag reports whether f is the setting flag of m (made by
// settingFlag), not a command's own flag of the same name.
func isSettingFlag(f cli.Flag, m flagMapping) bool {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return false
	}
	u := df.GetUsage()
	return strings.Contains(u, "setting "+m.setting+", $") || strings.Contains(u, "(sets "+m.setting+"=")
}

// explicitDefaultText returns the DefaultText a flag sets ("" if none).
func explicitDefaultText(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.IntFlag:
		return f.DefaultText
	case *cli.Int64Flag:
		return f.DefaultText
	case *cli.Uint64Flag:
		return f.DefaultText
	case *cli.Float64Flag:
		return f.DefaultText
	case *cli.StringFlag:
		return f.DefaultText
	case *cli.DurationFlag:
		return f.DefaultText
	}
	return ""
}

// TestHelpDefaults walks the command tree and checks, for every command,
// that the defaults its --help prints (the binary's) are the values the
// command uses: a setting flag's is the setting's default; a flag that
// falls back to a setting shows that setting's default; any other flag's
// is its own value, and a flag whose text describes its default shows that
// description rather than a zero value.
func TestHelpDefaults(t *testing.T) {
	app := newApp(&stdio{stdout: io.Discard, stderr: io.Discard})
	r := newRunner(t)
	var walk func(path []string, cmds []*cli.Command)
	checked := 0
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			help := r.ok(append(p, "--help")...).stdout
			fallbacks := fallbackSettings(c.Name)
			if len(path) > 0 {
				fallbacks = nil // fallbackSettings is by top-level command
			}
			for _, f := range c.Flags {
				name := f.Names()[0]
				got, has, found := helpDefault(help, name)
				if !found {
					t.Errorf("trawl %s --help: no line for --%s", strings.Join(p, " "), name)
					continue
				}
				var want string
				m, isSetting := lookupFlag(name)
				switch setting, fallback := fallbacks[name]; {
				case fallback:
					s, _ := config.Lookup(setting)
					want = s.Default
				case isSetting && isSettingFlag(f, m):
					s, _ := config.Lookup(m.setting)
					if s.Kind != config.Bool && s.Kind != config.List {
						want = s.Default
					}
				default:
					df := f.(cli.DocGenerationFlag)
					if bf, ok := f.(*cli.BoolFlag); !ok || !bf.DisableDefaultText {
						want = df.GetDefaultText()
					}
					if u := df.GetUsage(); want == "" && strings.HasSuffix(u, ")") && strings.Contains(u, " (default: ") {
						// The flag's text describes its default in words.
						want = u[strings.LastIndex(u, " (default: ")+len(" (default: ") : len(u)-1]
					}
					_, isBool := f.(*cli.BoolFlag)
					if !isBool && has && explicitDefaultText(f) == "" && strings.Contains(df.GetUsage(), "default ") {
						t.Errorf("trawl %s --%s: its text describes its default, but help prints %q", strings.Join(p, " "), name, got)
					}
				}
				if got != want || has != (want != "") {
					t.Errorf("trawl %s --help: --%s shows default %q (shown %v), the command uses %q", strings.Join(p, " "), name, got, has, want)
				}
				checked++
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	if checked < 300 {
		t.Fatalf("checked only %d flags", checked)
	}
}
