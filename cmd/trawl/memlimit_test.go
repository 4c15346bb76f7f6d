package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/trawl/trawl/mapreduce"
)

// TestMemoryLimit runs a command in-process and checks that it ran under
// the memory limit its engine settings imply, that the limit is restored
// afterwards, and that GOMEMLIMIT in the environment wins.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	gcBefore := currentGCPercent()
	args := []string{"trawl", "--memory", "64MiB", "--parallelism", "3", "--log-level", "debug", "config"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, []string{"HOME=" + t.TempDir()}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := fmt.Sprintf(`msg="memory limit" bytes=%d`, mapreduce.MemoryLimit(64<<20, 3))
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("memory limit %d after the command, %d before", after, before)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("gc_percent=%d tuned=true", gcMaxPercent)) {
		t.Errorf("stderr lacks gc_percent=%d tuned=true:\n%s", gcMaxPercent, stderr.String())
	}
	if after := currentGCPercent(); after != gcBefore {
		t.Errorf("GOGC %d after the command, %d before", after, gcBefore)
	}

	// GOGC in the environment paces the collector: no tuner.
	stderr.Reset()
	env := []string{"HOME=" + t.TempDir(), "GOGC=90"}
	if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, env); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tuned=false") {
		t.Errorf("GOGC set, yet trawl tuned the collector:\n%s", stderr.String())
	}

	stderr.Reset()
	env = []string{"HOME=" + t.TempDir(), "GOMEMLIMIT=1GiB"}
	if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, env); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "memory limit") {
		t.Errorf("GOMEMLIMIT set, yet trawl set its own limit:\n%s", stderr.String())
	}
}
