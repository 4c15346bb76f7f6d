// Package config holds every trawl setting in one table (name, type,
// default, one-line doc, as Nutch's nutch-default.xml does) and resolves
// each setting's effective value from its sources, lowest to highest:
//
//  1. the default in the table;
//  2. the config file trawl.yaml: the file named by --config, else by the
//     environment variable TRAWL_CONFIG, else ./trawl.yaml if it exists;
//  3. the environment: TRAWL_ followed by the name in upper snake case
//     ("generate.topN" is TRAWL_GENERATE_TOP_N, "crawl" is TRAWL_CRAWL),
//     unless the setting names its own variable (Setting.Env:
//     fetcher.agent is TRAWL_AGENT);
//  4. command-line flags.
//
// The config file may nest names ("generate:" then "topN: 1000" indented)
// or write them dotted ("generate.topN: 1000"); an unknown key is an error
// naming the key, the file and the line. Every value is checked against its
// setting's kind when loading, so a Config that loaded is valid and its
// typed getters cannot fail.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// EnvConfigFile is the environment variable naming the config file when no
// --config flag is given.
const EnvConfigFile = "TRAWL_CONFIG"

// DefaultFile is the config file read from the working directory when
// neither --config nor TRAWL_CONFIG names one.
const DefaultFile = "trawl.yaml"

// SourceKind says where an effective value came from.
type SourceKind int

// The sources, lowest precedence first.
const (
	FromDefault SourceKind = iota
	FromFile
	FromEnv
	FromFlag
)

// Source is where an effective value came from: its kind and, for a file,
// the file and line; for the environment, the variable; for a flag, the flag.
type Source struct {
	Kind  SourceKind
	Where string
}

// String describes the source as `trawl config` prints it: "default",
// "file trawl.yaml:3", "env TRAWL_GENERATE_TOP_N", "flag --topN".
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		return "file " + s.Where
	case FromEnv:
		return "env " + s.Where
	case FromFlag:
		return "flag " + s.Where
	}
	return "default"
}

// Value is the effective value of one setting.
type Value struct {
	Setting
	// Raw is the value as written in its source.
	Raw string
	// Source is where Raw came from.
	Source Source

	parsed any
}

// Override is a value given on the command line.
type Override struct {
	// Name is the setting's name.
	Name string
	// Value is the value as given.
	Value string
	// Flag is how it was given, for messages and `trawl config` ("--topN").
	Flag string
}

// LoadOptions are the sources Load reads.
type LoadOptions struct {
	// File is the config file named on the command line (--config). Empty
	// means TRAWL_CONFIG from Env, else DefaultFile in Dir if it exists.
	// A file that is named but missing is an error.
	File string
	// Dir is where DefaultFile is looked for; empty means the working
	// directory.
	Dir string
	// Env is the environment as os.Environ returns it ("KEY=value").
	Env []string
	// Flags are the command-line values, highest precedence.
	Flags []Override
}

// Config is the effective value of every setting. It is immutable once
// loaded and safe for concurrent use.
type Config struct {
	file     string
	values   map[string]*Value
	order    []string
	warnings []string
}

// Load resolves every setting from its sources (see the package doc).
func Load(o LoadOptions) (*Config, error) {
	c, err := defaults()
	if err != nil {
		return nil, err
	}
	env := envMap(o.Env)
	file, required := o.File, true
	if file == "" {
		file = env[EnvConfigFile]
	}
	if file == "" {
		file, required = filepath.Join(o.Dir, DefaultFile), false
	}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		c.file = file
		if err := c.loadYAML(file, data); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && !required:
	default:
		return nil, fmt.Errorf("config: read config file: %w", err)
	}

	for _, name := range c.order {
		key := c.values[name].EnvVar()
		raw, ok := env[key]
		if !ok {
			continue
		}
		if err := c.set(name, raw, Source{FromEnv, key}); err != nil {
			return nil, fmt.Errorf("config: environment %s: %w", key, err)
		}
	}
	known := make(map[string]bool, len(c.order)+1)
	known[EnvConfigFile] = true
	for _, name := range c.order {
		known[c.values[name].EnvVar()] = true
	}
	var unknown []string
	for k := range env {
		if strings.HasPrefix(k, "TRAWL_") && !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		c.warnings = append(c.warnings, fmt.Sprintf("environment variable %s matches no setting; ignored", k))
	}

	for _, f := range o.Flags {
		if _, ok := c.values[f.Name]; !ok {
			return nil, fmt.Errorf("config: flag %s: unknown setting %q", f.Flag, f.Name)
		}
		if err := c.set(f.Name, f.Value, Source{FromFlag, f.Flag}); err != nil {
			return nil, fmt.Errorf("config: flag %s: %w", f.Flag, err)
		}
	}
	return c, nil
}

// Default returns the configuration with every setting at its default.
func Default() *Config {
	c, err := defaults()
	if err != nil {
		// The table's defaults are checked by the package tests.
		panic(err.Error())
	}
	return c
}

func defaults() (*Config, error) {
	table := Settings()
	c := &Config{values: make(map[string]*Value, len(table))}
	for _, s := range table {
		v := &Value{Setting: s, Raw: s.Default}
		p, err := parse(s, s.Default)
		if err != nil {
			return nil, fmt.Errorf("config: invalid default of %s: %w", s.Name, err)
		}
		v.parsed = p
		c.values[s.Name] = v
		c.order = append(c.order, s.Name)
	}
	return c, nil
}

func (c *Config) set(name, raw string, src Source) error {
	v := c.values[name]
	p, err := parse(v.Setting, raw)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	v.Raw, v.Source, v.parsed = raw, src, p
	return nil
}

// loadYAML applies a trawl.yaml document.
func (c *Config) loadYAML(file string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config: %s: %w", file, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // only comments
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("config: %s:%d: expected a mapping of setting names to values", file, root.Line)
	}
	return c.walkYAML(file, "", root)
}

func (c *Config) walkYAML(file, prefix string, m *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("config: %s:%d: a setting name must be a plain string", file, k.Line)
		}
		name := prefix + k.Value
		where := fmt.Sprintf("%s:%d", file, k.Line)
		val, known := c.values[name]
		if !known {
			if v.Kind == yaml.MappingNode && c.hasPrefix(name+".") {
				if err := c.walkYAML(file, name+".", v); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("config: %s: unknown setting %q%s", where, name, c.suggest(name))
		}
		var raw string
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				if val.Kind != String && val.Kind != List {
					return fmt.Errorf("config: %s: %s has no value", where, name)
				}
				raw = ""
			} else {
				raw = v.Value
			}
		case yaml.SequenceNode:
			if val.Kind != List {
				return fmt.Errorf("config: %s: %s is a %s, not a list", where, name, val.Kind)
			}
			items := make([]string, 0, len(v.Content))
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode {
					return fmt.Errorf("config: %s:%d: %s: list items must be plain strings", file, it.Line, name)
				}
				if strings.Contains(it.Value, ",") {
					return fmt.Errorf("config: %s:%d: %s: list items cannot contain a comma", file, it.Line, name)
				}
				items = append(items, it.Value)
			}
			raw = strings.Join(items, ",")
		default:
			return fmt.Errorf("config: %s: %s is a %s, not a mapping", where, name, val.Kind)
		}
		if err := c.set(name, raw, Source{FromFile, where}); err != nil {
			return fmt.Errorf("config: %s: %w", where, err)
		}
	}
	return nil
}

func (c *Config) hasPrefix(p string) bool {
	for _, n := range c.order {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// suggest returns ` (did you mean "x"?)` for the closest setting name, or "".
func (c *Config) suggest(name string) string {
	best, bestD := "", 4
	for _, n := range c.order {
		if strings.EqualFold(n, name) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
		if d := editDistance(strings.ToLower(n), strings.ToLower(name)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// EnvName returns the environment variable of a setting name: TRAWL_ and the
// name in upper snake case, dots and camel-case humps becoming underscores
// ("generate.topN" → TRAWL_GENERATE_TOP_N).
func EnvName(name string) string {
	var b strings.Builder
	b.WriteString("TRAWL_")
	prevLower := false
	for _, r := range name {
		switch {
		case r == '.' || r == '-':
			b.WriteByte('_')
			prevLower = false
		case unicode.IsUpper(r):
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			prevLower = false
		default:
			b.WriteRune(unicode.ToUpper(r))
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		}
	}
	return b.String()
}

// Lookup returns the setting called name.
func Lookup(name string) (Setting, bool) {
	s, ok := settingsByName()[name]
	s.Choices = slices.Clone(s.Choices) // the caller's to change
	return s, ok
}

// settingsByName indexes Settings by name. It is built once, on the first
// Lookup: the settings are a fixed table, and the command line looks up
// several hundred of them to build its flags, which with a new Settings
// for each lookup allocated about 7 MB and cost every trawl process (a
// Hadoop Streaming task is one) garbage collections as it started.
var settingsByName = sync.OnceValue(func() map[string]Setting {
	all := Settings()
	m := make(map[string]Setting, len(all))
	for _, s := range all {
		m[s.Name] = s
	}
	return m
})

// File returns the config file that was read, or "" if none.
func (c *Config) File() string { return c.file }

// Warnings returns problems that did not stop loading (an environment
// variable starting with TRAWL_ that names no setting).
func (c *Config) Warnings() []string { return append([]string(nil), c.warnings...) }

// Values returns the effective value of every setting, in table order.
func (c *Config) Values() []Value {
	out := make([]Value, 0, len(c.order))
	for _, n := range c.order {
		out = append(out, *c.values[n])
	}
	return out
}

// Get returns the effective value of the setting called name.
func (c *Config) Get(name string) (Value, bool) {
	v, ok := c.values[name]
	if !ok {
		return Value{}, false
	}
	return *v, true
}

// get returns the parsed value of name, which must be a setting of kind k.
// Asking for a setting that does not exist, or with the wrong kind, is a
// programming error and panics with the setting's name.
func (c *Config) get(name string, k Kind) any {
	v, ok := c.values[name]
	if !ok {
		panic(fmt.Sprintf("config: no setting %q", name))
	}
	if v.Kind != k {
		panic(fmt.Sprintf("config: setting %q is a %s, not a %s", name, v.Kind, k))
	}
	return v.parsed
}

// String returns the value of a String setting.
func (c *Config) String(name string) string { return c.get(name, String).(string) }

// Int returns the value of an Int setting.
func (c *Config) Int(name string) int { return c.get(name, Int).(int) }

// Float returns the value of a Float setting.
func (c *Config) Float(name string) float64 { return c.get(name, Float).(float64) }

// Bool returns the value of a Bool setting.
func (c *Config) Bool(name string) bool { return c.get(name, Bool).(bool) }

// Duration returns the value of a Duration setting.
func (c *Config) Duration(name string) time.Duration {
	return c.get(name, Duration).(time.Duration)
}

// Size returns the value of a Size setting, in bytes.
func (c *Config) Size(name string) int64 { return c.get(name, Size).(int64) }

// List returns the value of a List setting (a new slice; empty items are
// dropped).
func (c *Config) List(name string) []string {
	return append([]string(nil), c.get(name, List).([]string)...)
}

// YAML renders the effective configuration as a trawl.yaml document, nested
// by name, each setting preceded by its doc and where its value came from.
// Loading the document gives the same values.
func (c *Config) YAML() []byte {
	var b bytes.Buffer
	b.WriteString("# trawl configuration (effective values; see `trawl config`)\n")
	var open []string // the nesting currently open
	for _, n := range c.order {
		v := c.values[n]
		parts := strings.Split(n, ".")
		common := 0
		for common < len(open) && common < len(parts)-1 && open[common] == parts[common] {
			common++
		}
		open = open[:common]
		for i := common; i < len(parts)-1; i++ {
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), parts[i])
			open = append(open, parts[i])
		}
		ind := strings.Repeat("  ", len(parts)-1)
		fmt.Fprintf(&b, "%s# %s (%s", ind, v.Doc, v.Kind)
		if len(v.Choices) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(v.Choices, "|"))
		}
		fmt.Fprintf(&b, "; default %q; from %s)\n", v.Default, v.Source)
		fmt.Fprintf(&b, "%s%s: %s\n", ind, parts[len(parts)-1], yamlScalar(v))
	}
	return b.Bytes()
}

func yamlScalar(v *Value) string {
	if v.Kind == List {
		items := v.parsed.([]string)
		q := make([]string, len(items))
		for i, it := range items {
			q[i] = strconv.Quote(it)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return strconv.Quote(v.Raw)
}
