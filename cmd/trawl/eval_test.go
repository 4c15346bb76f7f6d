package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEvalRevisit runs `trawl eval revisit` in process on a small web and
// checks the table and the files it writes; bad flags are usage errors.
func TestEvalRevisit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "eval")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"trawl", "--log-level", "warn", "eval", "revisit", "--pages", "800", "--hosts", "8",
		"--days", "12", "--recluster", "4", "--policies", "adaptive,dynamic,oracle", "--out", out}, nil, &stdout, &stderr, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	table := stdout.String()
	for _, want := range []string{"| policy | interval_days | fetches | budget_used |", "| adaptive |", "| dynamic |", "| oracle |",
		"initial interval (interval_days) tuned to spend the budget", "pages by schedule source", "wall time"} {
		if !strings.Contains(table, want) {
			t.Errorf("output lacks %q:\n%s", want, table)
		}
	}
	for _, name := range []string{"table.md", "table.csv", "report.json", "freshness.png", "freshness.svg"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, string(md)) {
		t.Errorf("table.md differs from the printed table:\n%s", md)
	}
	for _, args := range [][]string{{"--policies", "lru"}, {"--days", "0"}, {"--budget", "-1"}, {"--sample-rate", "3"}, {"extra"},
		{"--budgets", "0%"}, {"--budgets", "150%"}, {"--budgets", "ten"}, {"--budgets", "5%,5%"}, {"--budgets", ","},
		{"--budget", "10", "--budgets", "5%"}} {
		stderr.Reset()
		code := run(context.Background(), append([]string{"trawl", "eval", "revisit", "--pages", "200", "--hosts", "2"}, args...), nil, &stdout, &stderr, nil)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
}

// TestEvalRevisitBudgets runs `trawl eval revisit --budgets` untuned and
// checks the table per budget and the files a sweep writes.
func TestEvalRevisitBudgets(t *testing.T) {
	out := filepath.Join(t.TempDir(), "eval")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"trawl", "--log-level", "warn", "eval", "revisit", "--pages", "800", "--hosts", "8",
		"--days", "12", "--policies", "default,oracle", "--budgets", "10%,0.2", "--no-tune", "--out", out}, nil, &stdout, &stderr, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	table := stdout.String()
	for _, want := range []string{"## budget 10% of the pages", "## budget 20% of the pages", "not tuned to the budget", "| default | 30.00 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("output lacks %q:\n%s", want, table)
		}
	}
	for _, name := range []string{"table.md", "table.csv", "report.json", "budgets.png", "budgets.svg",
		"freshness-10pct.png", "freshness-10pct.svg", "freshness-20pct.png", "freshness-20pct.svg"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEvalRevisitTraceModelAndChange runs `trawl eval revisit` on a
// generated bursty history, written as a trace and read back with
// --trace (the same table), and on a web whose rates drift.
func TestEvalRevisitTraceModelAndChange(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "bursty.csv")
	args := []string{"trawl", "--log-level", "warn", "eval", "revisit", "--days", "10", "--policies", "adaptive,oracle,estimate", "--no-tune"}
	table := func(extra ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append(slices.Clone(args), extra...), nil, &stdout, &stderr, nil); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr.String())
		}
		var rows []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(l, "| ") {
				rows = append(rows, l)
			}
		}
		return strings.Join(rows, "\n")
	}
	gen := table("--trace-model", "bursty", "--pages", "400", "--hosts", "4", "--write-trace", trace)
	if !strings.Contains(gen, "| estimate |") {
		t.Fatalf("no estimate row:\n%s", gen)
	}
	if back := table("--trace", trace, "--trace-start", "2026-01-01T00:00:00Z"); back != gen {
		t.Errorf("the trace read back gives another table:\n%s\nwant\n%s", back, gen)
	}
	if drift := table("--change", "drift", "--pages", "400", "--hosts", "4"); !strings.Contains(drift, "| oracle |") {
		t.Errorf("--change drift: no oracle row:\n%s", drift)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), append(slices.Clone(args), "--change", "sideways", "--pages", "100"), nil, io.Discard, &stderr, nil); code != exitUsage {
		t.Errorf("--change sideways: exit %d, want %d (%s)", code, exitUsage, stderr.String())
	}
}
