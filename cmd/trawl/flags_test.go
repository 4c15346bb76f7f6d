package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// BenchmarkStartVersion runs `trawl version` in-process: building the
// command line (every command's flags, each looked up among the settings)
// is what each trawl process, a Hadoop Streaming task's included, does
// before its work.
func BenchmarkStartVersion(b *testing.B) {
	env := []string{"HOME=" + b.TempDir()}
	var stdout, stderr bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		stdout.Reset()
		if code := run(context.Background(), []string{"trawl", "version"}, strings.NewReader(""), &stdout, &stderr, env); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
}
