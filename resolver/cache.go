package resolver

import (
	"net/netip"
	"time"
)

// entry is a cached answer: addresses, or the failure err. It is on the
// cache's map and LRU list.
type entry struct {
	key   string
	addrs []netip.Addr
	err   *Error
	// expires is when the entry stops being fresh: a positive entry is
	// then refreshed on its next hit, a negative one is dropped.
	expires time.Time
	// refreshing is set while a background refresh of the entry runs.
	refreshing bool
	prev, next *entry
}

// cache is a fixed-capacity LRU map of entries. The list is circular
// through the sentinel root: root.next is the most recently used entry,
// root.prev the least. It is not safe for concurrent use (the Resolver
// holds its lock around it).
type cache struct {
	capacity  int
	m         map[string]*entry
	root      entry
	evictions int64
}

func newCache(capacity int) *cache {
	c := &cache{capacity: capacity, m: make(map[string]*entry)}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

// len returns the number of entries.
func (c *cache) len() int { return len(c.m) }

// get returns the entry of key, moved to the front, or nil.
func (c *cache) get(key string) *entry {
	e := c.m[key]
	if e != nil && c.root.next != e {
		c.unlink(e)
		c.pushFront(e)
	}
	return e
}

// peek returns the entry of key without touching the LRU order.
func (c *cache) peek(key string) *entry { return c.m[key] }

// put stores an answer under key at the front, reusing the least recently
// used entry when the cache is full, and returns the entry.
func (c *cache) put(key string, addrs []netip.Addr, err *Error, expires time.Time) *entry {
	if c.capacity <= 0 {
		return nil
	}
	e := c.m[key]
	switch {
	case e != nil:
		c.unlink(e)
	case len(c.m) >= c.capacity:
		e = c.root.prev // reuse the LRU tail, as the paper does
		c.unlink(e)
		delete(c.m, e.key)
		c.evictions++
		*e = entry{}
	default:
		e = &entry{}
	}
	e.key, e.addrs, e.err, e.expires, e.refreshing = key, addrs, err, expires, false
	c.m[key] = e
	c.pushFront(e)
	return e
}

// remove drops key's entry.
func (c *cache) remove(key string) {
	if e := c.m[key]; e != nil {
		c.unlink(e)
		delete(c.m, key)
	}
}

func (c *cache) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *cache) pushFront(e *entry) {
	e.prev, e.next = &c.root, c.root.next
	c.root.next.prev = e
	c.root.next = e
}
