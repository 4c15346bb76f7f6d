package main

import (
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/mapreduce"
)

// memoryControl holds the Go runtime's memory settings of one command:
// the soft memory limit its memory budget implies and the collector's
// pacing below it, and what to restore when the command ends.
type memoryControl struct {
	tuner     *gcTuner // nil unless trawl paces the collector
	setLimit  bool     // trawl sets the limit (no GOMEMLIMIT)
	prevGC    int
	prevLimit int64
}

// applyMemoryLimit sets the Go runtime's memory settings for a command
// from the engine settings. The soft memory limit is mapreduce.MemoryLimit
// of engine.memory and engine.parallelism (for the default 256 MiB budget
// on 2 cores, 400 MiB): without one, Go's default GOGC lets the heap reach
// twice its live size, which for an engine job is mostly its full sort
// buffers, about twice the budget.
//
// Below that limit a gcTuner paces the collector: the heap may grow to
// fill gcFloor, or by gcPercent of its live size when that is more. With
// GOGC in the environment the collector paces as it says, under the
// limit; with GOMEMLIMIT in the environment that limit wins, and GOGC is
// gcPercent unless set too.
func applyMemoryLimit(s *session) *memoryControl {
	gogc, memlimit := false, false
	for _, kv := range s.io.env {
		gogc = gogc || strings.HasPrefix(kv, "GOGC=")
		memlimit = memlimit || strings.HasPrefix(kv, "GOMEMLIMIT=")
	}
	m := &memoryControl{setLimit: !memlimit, prevGC: currentGCPercent(), prevLimit: debug.SetMemoryLimit(-1)}
	if memlimit {
		if !gogc {
			debug.SetGCPercent(gcPercent)
		}
		return m
	}
	limit := mapreduce.MemoryLimit(s.cfg.Size(config.EngineMemory), s.cfg.Int(config.EngineParallelism))
	debug.SetMemoryLimit(limit)
	if !gogc {
		debug.SetGCPercent(gcMaxPercent)
		m.tuner = startGCTuner(gcFloor, limit)
	}
	s.log.Debug("memory limit", "bytes", limit, "gc_percent", currentGCPercent(), "tuned", m.tuner != nil)
	return m
}

// setCeiling makes limit the command's memory limit (a task takes it from
// its job's memory budget), unless GOMEMLIMIT is in the environment.
func (m *memoryControl) setCeiling(limit int64) {
	switch {
	case m.tuner != nil:
		m.tuner.setCeiling(limit)
	case m.setLimit:
		debug.SetMemoryLimit(limit)
	}
}

// lift takes the memory settings off a command that runs no engine job
// and keeps what it serves in memory for as long as it runs (simweb
// serve, whose access log alone holds up to a million entries): a soft
// limit below such a heap has the collector run back to back, on every
// idle core. The settings in effect before the command (Go's own, or
// GOGC and GOMEMLIMIT from the environment) apply instead.
func (m *memoryControl) lift(log *slog.Logger) {
	if m.tuner != nil {
		m.tuner.stop()
		m.tuner = nil
	}
	m.setLimit = false
	debug.SetGCPercent(m.prevGC)
	debug.SetMemoryLimit(m.prevLimit)
	log.Debug("memory limit lifted", "bytes", m.prevLimit, "gc_percent", m.prevGC)
}

// restore stops the tuner and puts back GOGC and the memory limit in
// effect before the command.
func (m *memoryControl) restore() {
	if m.tuner != nil {
		m.tuner.stop()
	}
	debug.SetGCPercent(m.prevGC)
	debug.SetMemoryLimit(m.prevLimit)
}

// gcPercent is the ratio by which trawl lets a heap above gcFloor grow
// between collections (the GOGC of a command run under GOMEMLIMIT). In a
// 5-round crawl of a 20,000-page synthetic web (scripts/crawlcpu.sh), a
// fixed GOGC of 75 rather than Go's 100 took the peak RSS from 134-135
// MiB to 125-127 MiB, for more frequent collections (about a third more GC
// work, a few percent of the crawl's CPU).
const gcPercent = 75

// currentGCPercent returns the GOGC in effect.
func currentGCPercent() int {
	v := debug.SetGCPercent(-1)
	debug.SetGCPercent(v)
	return v
}
