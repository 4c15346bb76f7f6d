package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcTuner moves the Go runtime's soft memory limit after every garbage
// collection, from the heap that collection found live, so that a small
// heap is collected rarely and a large one as often as GOGC gcPercent
// would: the limit is the live heap plus gcPercent of it plus the
// runtime's memory beside the heap (stacks, metadata), but at least floor
// and at most ceiling (the limit the memory budget implies, see
// mapreduce.MemoryLimit). The process runs under GOGC gcMaxPercent, so
// below the floor a heap may triple between collections.
//
// A fixed GOGC gives every heap the same ratio. In a 5-round crawl of a
// 20,000-page synthetic web (scripts/crawlcpu.sh) the live heap is 10-30
// MiB in the generate and updatedb jobs and 35-45 MiB at the fetch's
// peak: GOGC 75 collected about 90 times, and GOGC 100 cost less CPU but
// took the peak RSS to 117-129 MiB. The tuner collected about 55 times,
// for 5-7% less CPU than GOGC 75 in three rounds of alternated runs (507
// against 535 µs a page, the means of 6 runs each, in the last) and a peak
// RSS of 102-110 MiB against 107-113.
type gcTuner struct {
	floor int64

	mu      sync.Mutex
	ceiling int64
	stopped bool
	limit   int64 // the limit last set
	sample  []metrics.Sample
}

// gcFloor is the tuner's floor: the runtime's memory (as the memory limit
// counts it) that the heap may fill before a collection whatever its live
// size. About 20 MiB of the binary's code and data comes on top in the
// resident set.
const gcFloor = 80 << 20

// gcMaxPercent is the GOGC the tuner runs under; the floor and the live
// heap's gcPercent bound it from below.
const gcMaxPercent = 200

// The runtime metrics the tuner reads: the heap the last collection found
// live, then the runtime's total memory and the heap's classes of it.
var tunerMetrics = [...]string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// startGCTuner sets the memory limit for the current live heap and keeps
// it up to date until stop.
func startGCTuner(floor, ceiling int64) *gcTuner {
	t := &gcTuner{floor: floor, ceiling: ceiling}
	for _, name := range tunerMetrics {
		t.sample = append(t.sample, metrics.Sample{Name: name})
	}
	t.tune()
	return t
}

// limitFor is the memory limit for a live heap and the runtime's memory
// beside the heap.
func (t *gcTuner) limitFor(live, other int64) int64 {
	return min(max(t.floor, live+live*gcPercent/100+other), t.ceiling)
}

// tune sets the limit and arms itself to run again after the next
// collection, until the tuner stops.
func (t *gcTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.apply()
	// The sentinel is garbage at once; the runtime runs its cleanup after
	// the collection that finds it so. It is larger than the tiny
	// allocator's blocks, whose objects may stay alive with their block.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(t *gcTuner) { t.tune() }, t)
}

// setCeiling changes the ceiling (a task takes its job's memory budget)
// and sets the limit for it.
func (t *gcTuner) setCeiling(ceiling int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ceiling = ceiling
	if !t.stopped {
		t.apply()
	}
}

// apply reads the heap's metrics and sets the limit; t.mu is held.
func (t *gcTuner) apply() {
	metrics.Read(t.sample)
	var v [len(tunerMetrics)]int64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s.Value.Uint64())
		}
	}
	other := max(v[1]-v[2]-v[3]-v[4]-v[5], 0)
	if l := t.limitFor(v[0], other); l != t.limit {
		debug.SetMemoryLimit(l)
		t.limit = l
	}
}

// stop ends the tuning; the limit stays where it was last set.
func (t *gcTuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
}
