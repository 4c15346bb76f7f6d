package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/config"
)

// TestUpdateDBAndClusterOptionErrors: options UpdateOptions.Validate and
// ClusterOptions.Validate reject, and settings of 0 that the options would
// take for their defaults, are usage errors naming what is wrong, before
// anything runs.
func TestUpdateDBAndClusterOptionErrors(t *testing.T) {
	crawl := filepath.Join(t.TempDir(), "crawl")
	seg := filepath.Join(crawl, "segments", "20260101000000")
	if err := os.MkdirAll(seg, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{config.EnvName(config.UpdateRetryMax) + "=0"}, []string{"updatedb", seg}, config.UpdateRetryMax},
		{[]string{config.EnvName(config.UpdateRetryMax) + "=-2"}, []string{"updatedb", seg}, "RetryMax"},
		{[]string{config.EnvName(config.UpdateMaxInlinks) + "=0"}, []string{"updatedb", seg}, config.UpdateMaxInlinks},
		{[]string{config.EnvName(config.UpdateMaxInlinks) + "=-2"}, []string{"updatedb", seg}, "MaxInlinks"},
		{nil, []string{"updatedb", seg, seg + "/"}, "given twice"},
		{nil, []string{"cluster", "--eps", "1", "--max-changes", "0"}, "--max-changes"},
		{nil, []string{"cluster", "--eps", "1", "--max-changes", "-2"}, "max changes"},
		{nil, []string{"cluster", "--eps", "1", "--min-pts", "0"}, "--min-pts or " + config.ClusterMinPts},
		{nil, []string{"cluster", "--eps", "1", "--sample-rate", "2"}, "sample rate"},
		{nil, []string{"cluster", "--suggest-eps", "--min-pts", "1"}, "--min-pts of at least 2"},
	}
	for _, c := range cases {
		_, stderr, code := runInProcess(t, c.env, append([]string{"--crawl", crawl}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, want %d and %q:\n%s", c.env, c.args, code, exitUsage, c.want, stderr)
		}
	}
}
