package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTableIsValid(t *testing.T) {
	seen := map[string]bool{}
	envs := map[string]string{}
	names := map[string]bool{}
	for _, s := range Settings() {
		if seen[s.Name] {
			t.Errorf("setting %s listed twice", s.Name)
		}
		seen[s.Name] = true
		names[s.Name] = true
		if s.Doc == "" || strings.Contains(s.Doc, "\n") {
			t.Errorf("%s: doc must be one non-empty line", s.Name)
		}
		if _, err := parse(s, s.Default); err != nil {
			t.Errorf("%s: default %q does not parse: %v", s.Name, s.Default, err)
		}
		e := s.EnvVar()
		if other, dup := envs[e]; dup {
			t.Errorf("%s and %s share the environment variable %s", s.Name, other, e)
		}
		envs[e] = s.Name
		if e == EnvConfigFile {
			t.Errorf("%s collides with %s", s.Name, EnvConfigFile)
		}
	}
	// No name may be a dotted prefix of another: trawl.yaml could not nest both.
	for n := range names {
		for m := range names {
			if strings.HasPrefix(m, n+".") {
				t.Errorf("setting %s is a prefix of %s", n, m)
			}
		}
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{
		"crawl":                     "TRAWL_CRAWL",
		"generate.topN":             "TRAWL_GENERATE_TOP_N",
		"engine.maxAttempts":        "TRAWL_ENGINE_MAX_ATTEMPTS",
		"schedule.adaptive.incRate": "TRAWL_SCHEDULE_ADAPTIVE_INC_RATE",
		"log.level":                 "TRAWL_LOG_LEVEL",
	} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrecedence checks default < file < env < flag for one setting at a
// time, and that each value reports its source.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "trawl.yaml", `
generate:
  topN: 10       # from the file
  maxPerHost: 5
engine.memory: 64MiB
log:
  level: debug
`)
	c, err := Load(LoadOptions{
		Dir: dir,
		Env: []string{"TRAWL_GENERATE_TOP_N=20", "TRAWL_LOG_LEVEL=warn", "HOME=/x"},
		Flags: []Override{
			{Name: GenerateTopN, Value: "30", Flag: "--topN"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.File() != file {
		t.Errorf("File() = %q, want %q", c.File(), file)
	}
	check := func(name string, want any, src string) {
		t.Helper()
		v, _ := c.Get(name)
		var got any
		switch v.Kind {
		case Int:
			got = c.Int(name)
		case String:
			got = c.String(name)
		case Size:
			got = c.Size(name)
		case Duration:
			got = c.Duration(name)
		}
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
		if v.Source.String() != src {
			t.Errorf("%s source = %q, want %q", name, v.Source, src)
		}
	}
	check(GenerateTopN, 30, "flag --topN")
	check(LogLevel, "warn", "env TRAWL_LOG_LEVEL")
	check(GenerateMaxPerHost, 5, "file "+file+":4")
	check(EngineMemory, int64(64<<20), "file "+file+":5")
	check(EngineProgressInterval, 10*time.Second, "default")
	check(CrawlDir, "./crawl", "default")
}

func TestConfigFileSelection(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trawl.yaml", "generate.topN: 1\n")
	envFile := writeFile(t, dir, "env.yaml", "generate.topN: 2\n")
	flagFile := writeFile(t, dir, "flag.yaml", "generate.topN: 3\n")

	for _, tc := range []struct {
		name string
		o    LoadOptions
		want int
		file string
	}{
		{"working dir", LoadOptions{Dir: dir}, 1, filepath.Join(dir, "trawl.yaml")},
		{"TRAWL_CONFIG", LoadOptions{Dir: dir, Env: []string{"TRAWL_CONFIG=" + envFile}}, 2, envFile},
		{"--config wins", LoadOptions{Dir: dir, File: flagFile, Env: []string{"TRAWL_CONFIG=" + envFile}}, 3, flagFile},
		{"none", LoadOptions{Dir: t.TempDir()}, 0, ""},
	} {
		c, err := Load(tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Int(GenerateTopN); got != tc.want {
			t.Errorf("%s: topN = %d, want %d", tc.name, got, tc.want)
		}
		if c.File() != tc.file {
			t.Errorf("%s: file = %q, want %q", tc.name, c.File(), tc.file)
		}
	}

	// A named file that is missing is an error; a missing ./trawl.yaml is not.
	if _, err := Load(LoadOptions{File: filepath.Join(dir, "nope.yaml")}); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing --config file: err = %v", err)
	}
	if _, err := Load(LoadOptions{Env: []string{"TRAWL_CONFIG=" + filepath.Join(dir, "gone.yaml")}}); err == nil || !strings.Contains(err.Error(), "gone.yaml") {
		t.Errorf("missing TRAWL_CONFIG file: err = %v", err)
	}
}

func TestFileErrors(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"generate:\n  topn: 5\n", []string{"bad.yaml:2", `unknown setting "generate.topn"`, `did you mean "generate.topN"`}},
		{"indexer:\n  threads: 5\n", []string{"bad.yaml:1", `unknown setting "indexer"`}},
		{"fetcher:\n  threads: 5\n", []string{"bad.yaml:2", `unknown setting "fetcher.threads"`}},
		{"generate.topN: lots\n", []string{"bad.yaml:1", "generate.topN", `"lots" is not an integer`}},
		{"log.level: loud\n", []string{"bad.yaml:1", "not one of debug, info, warn, error"}},
		{"engine.memory: 12 parsecs\n", []string{"bad.yaml:1", "unknown unit"}},
		{"schedule.defaultInterval: soon\n", []string{"bad.yaml:1", "not a duration"}},
		{"generate: 5\n", []string{"bad.yaml:1", `unknown setting "generate"`}},
		{"generate.topN: [1, 2]\n", []string{"bad.yaml:1", "not a list"}},
		{"generate.topN:\n", []string{"bad.yaml:1", "has no value"}},
		{"- a\n- b\n", []string{"bad.yaml:1", "expected a mapping"}},
		{"generate: {topN: 1\n", []string{"bad.yaml"}},
	} {
		dir := t.TempDir()
		p := writeFile(t, dir, "bad.yaml", tc.body)
		_, err := Load(LoadOptions{File: p})
		if err == nil {
			t.Errorf("%q: no error", tc.body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.body, err, w)
			}
		}
	}
}

func TestEnvAndFlagErrors(t *testing.T) {
	_, err := Load(LoadOptions{Dir: t.TempDir(), Env: []string{"TRAWL_ENGINE_PARALLELISM=many"}})
	if err == nil || !strings.Contains(err.Error(), "TRAWL_ENGINE_PARALLELISM") {
		t.Errorf("bad env value: err = %v", err)
	}
	_, err = Load(LoadOptions{Dir: t.TempDir(), Flags: []Override{{Name: GenerateCountMode, Value: "planet", Flag: "--count-mode"}}})
	if err == nil || !strings.Contains(err.Error(), "--count-mode") || !strings.Contains(err.Error(), "host, domain") {
		t.Errorf("bad flag value: err = %v", err)
	}
	c, err := Load(LoadOptions{Dir: t.TempDir(), Env: []string{"TRAWL_GENERATE_TOPN=5"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "TRAWL_GENERATE_TOPN") {
		t.Errorf("warnings = %q", w)
	}
}

func TestListsAndEmptyFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.yaml", "urlfilter:\n  regexFiles:\n    - /etc/a.txt\n    - /etc/b.txt\n")
	c, err := Load(LoadOptions{File: p})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.List(URLFilterRegexFiles); strings.Join(got, "|") != "/etc/a.txt|/etc/b.txt" {
		t.Errorf("list = %q", got)
	}
	c, err = Load(LoadOptions{Dir: dir, Env: []string{"TRAWL_URLFILTER_REGEX_FILES= x.txt, ,y.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.List(URLFilterRegexFiles); strings.Join(got, "|") != "x.txt|y.txt" {
		t.Errorf("env list = %q", got)
	}
	for _, body := range []string{"", "# only a comment\n"} {
		p := writeFile(t, dir, "empty.yaml", body)
		if _, err := Load(LoadOptions{File: p}); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestYAMLRoundTrip loads the rendered effective configuration back and
// expects the same values.
func TestYAMLRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(LoadOptions{Dir: dir,
		Env: []string{"TRAWL_URLFILTER_REGEX_FILES=a.txt,b c.txt", "TRAWL_ENGINE_TEMP_DIR=/tmp/x y"},
		Flags: []Override{
			{Name: GenerateTopN, Value: "77", Flag: "--topN"},
			{Name: CrawlDir, Value: `/data/cr"awl`, Flag: "--crawl"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, dir, "out.yaml", string(c.YAML()))
	d, err := Load(LoadOptions{File: p})
	if err != nil {
		t.Fatalf("%v\n%s", err, c.YAML())
	}
	for _, v := range c.Values() {
		w, _ := d.Get(v.Name)
		if w.Raw != v.Raw && !(v.Kind == List && strings.Join(c.List(v.Name), ",") == strings.Join(d.List(v.Name), ",")) {
			t.Errorf("%s: %q after round trip, want %q", v.Name, w.Raw, v.Raw)
		}
		if w.Source.Kind != FromFile {
			t.Errorf("%s: source %s, want the file", v.Name, w.Source)
		}
	}
}

func TestParseDurationAndSize(t *testing.T) {
	durs := map[string]time.Duration{
		"0": 0, "90s": 90 * time.Second, "30d": 30 * 24 * time.Hour, "1d12h": 36 * time.Hour,
		"1.5d": 36 * time.Hour, "1h30m": 90 * time.Minute, "365d": 365 * 24 * time.Hour,
	}
	for in, want := range durs {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "5", "-5s", "5x", "1e400d", "30 days"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q): no error", in)
		}
	}
	sizes := map[string]int64{
		"0": 0, "4096": 4096, "256MiB": 256 << 20, "1GiB": 1 << 30, "64k": 64 << 10,
		"2 MB": 2 << 20, "1.5G": 3 << 29, "10B": 10,
	}
	for in, want := range sizes {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "5 parsecs", "99999999TiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

func TestGetterMisuse(t *testing.T) {
	c := Default()
	for _, f := range []func(){
		func() { c.Int("no.such.setting") },
		func() { c.Int(LogLevel) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// TestAgentEnv checks that fetcher.agent is read from TRAWL_AGENT, its own
// variable, and that the derived name is then not a setting's.
func TestAgentEnv(t *testing.T) {
	c, err := Load(LoadOptions{Dir: t.TempDir(), Env: []string{"TRAWL_AGENT=mybot", "TRAWL_FETCHER_AGENT=other"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(FetcherAgent); got != "mybot" {
		t.Errorf("fetcher.agent = %q, want mybot", got)
	}
	if v, _ := c.Get(FetcherAgent); v.Source.String() != "env TRAWL_AGENT" {
		t.Errorf("source %s", v.Source)
	}
	w := c.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "TRAWL_FETCHER_AGENT") {
		t.Errorf("warnings %q, want one about TRAWL_FETCHER_AGENT", w)
	}
}
