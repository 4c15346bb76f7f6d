package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCTunerLimitFor(t *testing.T) {
	const mib = 1 << 20
	tu := &gcTuner{floor: 80 * mib, ceiling: 400 * mib}
	for _, c := range []struct{ live, other, want int64 }{
		{0, 0, 80 * mib},                  // nothing live: the floor
		{20 * mib, 8 * mib, 80 * mib},     // a small heap may fill the floor
		{60 * mib, 10 * mib, 115 * mib},   // a large one grows by gcPercent
		{300 * mib, 20 * mib, 400 * mib},  // never past the ceiling
		{1000 * mib, 20 * mib, 400 * mib}, // even when the live heap is
	} {
		if got := tu.limitFor(c.live, c.other); got != c.want {
			t.Errorf("limitFor(%d MiB live, %d MiB other) = %d MiB, want %d MiB", c.live/mib, c.other/mib, got/mib, c.want/mib)
		}
	}
}

// waitLimit collects garbage until the memory limit satisfies ok, and
// fails the test after a few seconds.
func waitLimit(t *testing.T, what string, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		l := debug.SetMemoryLimit(-1)
		if ok(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory limit %d MiB: want %s", l>>20, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGCTunerFollowsHeap runs a tuner in the test process and checks that
// the memory limit rises with a large live heap, falls back to the floor
// when the heap is freed, stays within the ceiling, and no longer moves
// once the tuner stops.
func TestGCTunerFollowsHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	const floor, ceiling = 64 << 20, 1 << 30
	tu := startGCTuner(floor, ceiling)
	defer tu.stop()

	hold := make([]byte, 128<<20)
	waitLimit(t, "at least the 128 MiB live heap plus gcPercent", func(l int64) bool {
		return l >= 128<<20*(100+gcPercent)/100 && l <= ceiling
	})
	runtime.KeepAlive(hold)
	hold = nil
	waitLimit(t, "back to the floor", func(l int64) bool { return l == floor })

	tu.setCeiling(32 << 20)
	if l := debug.SetMemoryLimit(-1); l != 32<<20 {
		t.Errorf("memory limit %d MiB after setCeiling(32 MiB)", l>>20)
	}
	tu.setCeiling(ceiling)

	tu.stop()
	debug.SetMemoryLimit(3 << 30)
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if l := debug.SetMemoryLimit(-1); l != 3<<30 {
		t.Errorf("memory limit %d MiB after the tuner stopped: it moved", l>>20)
	}
}
