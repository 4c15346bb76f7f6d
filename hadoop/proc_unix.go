//go:build unix

package hadoop

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts cmd in a process group of its own, so that
// terminate reaches whatever it started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends SIGTERM to p's process group, and SIGKILL after grace
// if p is still running.
func terminate(p *os.Process, grace time.Duration) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(p.Pid, 0); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
