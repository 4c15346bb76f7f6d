//go:build !unix

package parser_test

import "time"

// processCPU is not available here: benchmarks report no CPU time.
func processCPU() (time.Duration, bool) { return 0, false }
