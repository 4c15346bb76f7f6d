package main

import (
	"strings"
	"testing"
)

// TestTaskEntry checks the hidden Hadoop Streaming entry's wiring: it is
// reachable, checks its phase, and reports a missing or unknown job as one
// clean error line.
func TestTaskEntry(t *testing.T) {
	r := newRunner(t)
	if res := r.ok("--help"); strings.Contains(res.stdout, "task") && strings.Contains(res.stdout, "Hadoop") {
		t.Errorf("the task entry is listed in --help:\n%s", res.stdout)
	}
	res := r.fails(exitUsage, "task", "--phase", "shuffle")
	assertCleanError(t, res, "--phase must be map or reduce")
	res = r.fails(exitUsage, "task")
	assertCleanError(t, res, "phase")

	res = r.fails(exitFailure, "task", "--phase", "map")
	assertCleanError(t, res, "trawl_job_name")
	r.env = []string{"trawl_job_name=no-such-job", "trawl_job_conf="}
	res = r.fails(exitFailure, "task", "--phase", "reduce")
	assertCleanError(t, res, "no-such-job")
}
