package proc

import (
	"errors"
	"os/exec"
	"testing"
)

// TestRun measures a real child process: a shell that allocates a few MiB
// of memory reports at least that much peak RSS, and a failing command's
// exit status comes back as an *exec.ExitError.
func TestRun(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// Hold a 16 MiB string in the shell's memory for a moment.
	u, err := Run(exec.Command(sh, "-c", `x=$(head -c 16777216 /dev/zero | tr '\0' a); sleep 0.1; echo ${#x} >/dev/null`))
	if err != nil {
		t.Fatal(err)
	}
	if u.Wall <= 0 {
		t.Errorf("wall time %v", u.Wall)
	}
	if u.PeakRSS < 16<<20 {
		t.Errorf("peak RSS %d bytes, want at least 16 MiB", u.PeakRSS)
	}
	_, err = Run(exec.Command(sh, "-c", "exit 3"))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("exit status: %v", err)
	}
}
