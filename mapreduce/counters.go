package mapreduce

import (
	"sort"
	"sync"
)

// Counters are named int64 counters in groups, safe for concurrent use.
// The engine keeps its own in the "trawl" group (records and bytes in and
// out, spills); jobs add theirs through Task.Count.
type Counters struct {
	mu sync.Mutex
	m  map[string]map[string]int64
}

// Add adds n to counter name of group.
func (c *Counters) Add(group, name string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]map[string]int64)
	}
	g := c.m[group]
	if g == nil {
		g = make(map[string]int64)
		c.m[group] = g
	}
	g[name] += n
}

// Get returns the value of counter name of group (0 if unset).
func (c *Counters) Get(group, name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[group][name]
}

// Merge adds every counter of o to c.
func (c *Counters) Merge(o *Counters) {
	for g, names := range o.Snapshot() {
		for n, v := range names {
			c.Add(g, n, v)
		}
	}
}

// Snapshot returns a copy of all counters, by group and name.
func (c *Counters) Snapshot() map[string]map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]map[string]int64, len(c.m))
	for g, names := range c.m {
		cp := make(map[string]int64, len(names))
		for n, v := range names {
			cp[n] = v
		}
		out[g] = cp
	}
	return out
}

// Groups returns the group names in sorted order.
func (c *Counters) Groups() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	gs := make([]string, 0, len(c.m))
	for g := range c.m {
		gs = append(gs, g)
	}
	sort.Strings(gs)
	return gs
}
