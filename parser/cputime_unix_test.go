//go:build unix

package parser_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used
// so far, and true; benchmarks report it per operation, which on a busy
// machine says more than the elapsed time does.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
