package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl/trawl/config"
)

// TestEverySettingIsUsed checks that every setting in config's table is
// read by the CLI: a setting nothing reads would silently do nothing.
func TestEverySettingIsUsed(t *testing.T) {
	t.Parallel()
	// Map each setting name to its constant in config/settings.go.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "..", "config", "settings.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	constOf := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						constOf[v] = n.Name
					}
				}
			}
		}
	}
	// Collect config.X references in the CLI's non-test sources.
	used := map[string]bool{}
	ref := regexp.MustCompile(`config\.([A-Z][A-Za-z0-9]*)`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllStringSubmatch(string(src), -1) {
			used[m[1]] = true
		}
	}
	for _, s := range config.Settings() {
		c, ok := constOf[s.Name]
		if !ok {
			t.Errorf("setting %s has no constant in config/settings.go", s.Name)
			continue
		}
		if !used[c] {
			t.Errorf("setting %s (config.%s) is not read by the CLI", s.Name, c)
		}
	}
}

// TestSettingsReachJobs checks, with the binary, that settings from each
// source change what the jobs do.
func TestSettingsReachJobs(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	var seeds strings.Builder
	for _, h := range []string{"a", "b", "c"} {
		for p := 0; p < 3; p++ {
			seeds.WriteString("http://" + h + ".test/" + strconv.Itoa(p) + "\n")
		}
	}
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), seeds.String())
	r.env = []string{"TRAWL_SCHEDULE_DEFAULT_INTERVAL=1d"}
	r.ok("--crawl", crawl, "inject", "seeds.txt")
	if d := datumJSON(t, r, crawl, "http://a.test/0"); d["fetch_interval"] != 86400.0 {
		t.Errorf("TRAWL_SCHEDULE_DEFAULT_INTERVAL=1d: fetch_interval %v", d["fetch_interval"])
	}

	writeTestFile(t, filepath.Join(r.dir, "trawl.yaml"), "generate:\n  maxPerHost: 1\n")
	for _, tc := range []struct {
		env  []string
		args []string
		want int
	}{
		{nil, nil, 3}, // file: one per host
		{[]string{"TRAWL_GENERATE_TOP_N=2"}, nil, 2},                     // env
		{[]string{"TRAWL_GENERATE_TOP_N=2"}, []string{"--topN", "1"}, 1}, // flag
		{nil, []string{"--max-per-host", "-1"}, 9},                       // flag over file
	} {
		if err := os.RemoveAll(filepath.Join(crawl, "segments")); err != nil {
			t.Fatal(err)
		}
		r.env = tc.env
		res := r.ok(append([]string{"--crawl", crawl, "generate"}, tc.args...)...)
		if n := len(readGenerate(t, strings.TrimSpace(res.stdout))); n != tc.want {
			t.Errorf("env %v flags %v: %d URLs generated, want %d", tc.env, tc.args, n, tc.want)
		}
	}
}
