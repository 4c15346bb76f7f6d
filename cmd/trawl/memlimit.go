package main

import (
	"runtime/debug"
	"strings"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/mapreduce"
)

// applyMemoryLimit sets the Go runtime's soft memory limit for a command
// from the engine settings: mapreduce.MemoryLimit of engine.memory and
// engine.parallelism (for the default 256 MiB budget on 2 cores, 400 MiB).
// Without it the default GOGC lets the heap reach twice its live size,
// which for an engine job is mostly its full sort buffers: about twice the
// budget. GOGC keeps its default; a GOMEMLIMIT in the environment wins. It
// returns a function that restores the previous limit.
func applyMemoryLimit(s *session) (restore func()) {
	for _, kv := range s.io.env {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return func() {}
		}
	}
	limit := mapreduce.MemoryLimit(s.cfg.Size(config.EngineMemory), s.cfg.Int(config.EngineParallelism))
	prev := debug.SetMemoryLimit(limit)
	s.log.Debug("memory limit", "bytes", limit)
	return func() { debug.SetMemoryLimit(prev) }
}
