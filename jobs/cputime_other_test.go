//go:build !unix

package jobs

import "time"

// cpuTime is the CPU time the process has used: unknown here (0).
func cpuTime() time.Duration { return 0 }
