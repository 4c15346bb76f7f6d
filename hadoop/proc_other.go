//go:build !unix

package hadoop

import (
	"os"
	"os/exec"
	"time"
)

// setProcessGroup does nothing where there are no process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// terminate kills p.
func terminate(p *os.Process, grace time.Duration) {
	if p != nil {
		_ = p.Kill()
	}
}
