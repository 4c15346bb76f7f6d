package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// measurement is one measured process.
type measurement struct {
	name   string
	wall   time.Duration
	maxRSS int64  // bytes
	stdout []byte // what the process wrote on stdout
}

// measure runs a command, waits for it and returns its wall time, peak RSS
// and standard output. The peak is the largest VmHWM read from /proc while
// it runs (sampled every 10 ms), or the kernel's ru_maxrss if no sample
// was read. stderr goes to logTo.
func measure(ctx context.Context, name string, logTo io.Writer, bin string, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = logTo
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measurement{}, fmt.Errorf("%s: %w", name, err)
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
	wall := time.Since(start)
	close(done)
	<-sampled
	if err != nil {
		return measurement{}, fmt.Errorf("%s (%s %s): %w", name, bin, strings.Join(args, " "), err)
	}
	rss := hwm.Load()
	// ru_maxrss only when no sample was read: across Go's vfork-style
	// spawn and exec it carries this (large, simweb-serving) parent's
	// high-water mark.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && rss == 0 {
		rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	return measurement{name: name, wall: wall, maxRSS: rss, stdout: out.Bytes()}, nil
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
