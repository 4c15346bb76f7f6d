// Package proc measures a child process for the benchmark harnesses: its
// wall time and its peak resident set size.
package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Usage is what Run measured of one process.
type Usage struct {
	// Wall is the time from start to exit.
	Wall time.Duration
	// PeakRSS is the largest VmHWM read from /proc/PID/status while the
	// process ran (sampled every 10 ms), in bytes; or the kernel's
	// ru_maxrss if no sample was read. ru_maxrss is the fallback only:
	// across Go's vfork-style spawn and exec it carries the parent's
	// high-water mark, which is wrong for a large harness process.
	PeakRSS int64
	// CPU is the process's user plus system CPU time (from its rusage);
	// CPU / Wall is how many cores it kept busy on average.
	CPU time.Duration
}

// Run starts cmd (its Stdout and Stderr as the caller set them), waits for
// it and returns its usage. The error is cmd.Wait's, so a non-zero exit
// status is an *exec.ExitError the caller can inspect; the usage is valid
// whenever the process ran.
func Run(cmd *exec.Cmd) (Usage, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Usage{}, err
	}
	var hwm atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > hwm.Load() {
				hwm.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	u := Usage{Wall: time.Since(start)}
	close(done)
	<-sampled
	u.PeakRSS = hwm.Load()
	if cmd.ProcessState != nil {
		u.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && u.PeakRSS == 0 {
		u.PeakRSS = ru.Maxrss * 1024 // Linux reports KiB
	}
	return u, err
}

// vmHWM returns a process's peak resident set size in bytes from
// /proc/PID/status, or 0 if it cannot be read (the process has exited).
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
