package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	for _, want := range []string{"| policy | interval_days | fetches | budget_used |", "| adaptive |", "| dynamic |", "| oracle |", "wall time"} {
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
	for _, args := range [][]string{{"--policies", "lru"}, {"--days", "0"}, {"--budget", "-1"}, {"--sample-rate", "3"}, {"extra"}} {
		stderr.Reset()
		code := run(context.Background(), append([]string{"trawl", "eval", "revisit", "--pages", "200", "--hosts", "2"}, args...), nil, &stdout, &stderr, nil)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
}
