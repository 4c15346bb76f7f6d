// Package killpoint lets the crash tests kill a trawl process at a named
// point of a job: between its phases, in the middle of publishing its
// outputs, between the two renames of a CrawlDB install. A test sets
// TRAWL_KILL_AT to "JOB:POINT" (for example "updatedb:installed" or
// "install:current-moved") and runs the real binary; when the process
// reaches that point it sends itself SIGKILL, as the kernel's OOM killer,
// a lost node or an operator's kill -9 would. Then the test checks that
// the CrawlDB is what it was or what one clean run gives, and that a plain
// rerun finishes the work.
//
// Without TRAWL_KILL_AT, Reached costs one environment lookup.
package killpoint

import "os"

// EnvVar names the environment variable holding the point to die at.
const EnvVar = "TRAWL_KILL_AT"

// Reached kills the process with SIGKILL if $TRAWL_KILL_AT is
// "job:point". It returns only when it does not.
func Reached(job, point string) {
	at := os.Getenv(EnvVar)
	if at == "" || at != job+":"+point {
		return
	}
	os.Stderr.WriteString("trawl: killed at " + at + " (" + EnvVar + ")\n")
	kill()
}
