package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/trawl/trawl/bench/internal/proc"
)

// measurement is one measured process.
type measurement struct {
	name   string
	wall   time.Duration
	maxRSS int64  // bytes
	stdout []byte // what the process wrote on stdout
}

// measure runs a command, waits for it and returns its wall time, peak RSS
// (proc.Run) and standard output. stderr goes to logTo.
func measure(ctx context.Context, name string, logTo io.Writer, bin string, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = logTo
	u, err := proc.Run(cmd)
	if err != nil {
		return measurement{}, fmt.Errorf("%s (%s %s): %w", name, bin, strings.Join(args, " "), err)
	}
	return measurement{name: name, wall: u.Wall, maxRSS: u.PeakRSS, stdout: out.Bytes()}, nil
}
