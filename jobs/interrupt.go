package jobs

import (
	"context"
	"errors"
	"sync"
)

// ErrInterrupted is matched by the error of a job that an interrupt ended
// gracefully after keeping its work: Fetch publishes what it fetched
// before it returns it, and Crawl stops after such a fetch (the next Crawl
// parses and merges the kept pages before it generates anything new).
var ErrInterrupted = errors.New("interrupted")

// Interrupt turns a process's interrupt signals (SIGINT, SIGTERM) into
// what each job can do with them. A job that can end early and keep its
// work (Fetch: like its time limit, it stops sending requests and
// publishes what it fetched) ends gracefully at the first interrupt; any
// other job is cancelled, which leaves the CrawlDB as it was. A second
// interrupt cancels whatever runs, at once.
//
// The zero value is not usable: use NewInterrupt. It is safe for
// concurrent use.
type Interrupt struct {
	cancel context.CancelFunc

	mu       sync.Mutex
	stop     chan struct{}
	signals  int
	graceful int // graceful jobs running
}

// NewInterrupt returns an Interrupt that cancels with cancel (the context
// the jobs run under) when a graceful stop is not possible.
func NewInterrupt(cancel context.CancelFunc) *Interrupt {
	return &Interrupt{cancel: cancel, stop: make(chan struct{})}
}

// Signal handles one interrupt and reports whether it asked the running
// job to stop gracefully (false: it cancelled the context).
func (i *Interrupt) Signal() (graceful bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.signals++
	if i.signals == 1 {
		close(i.stop)
		if i.graceful > 0 {
			return true
		}
	}
	i.cancel()
	return false
}

// Stopping is closed at the first interrupt.
func (i *Interrupt) Stopping() <-chan struct{} { return i.stop }

// Interrupted reports whether an interrupt came.
func (i *Interrupt) Interrupted() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.signals > 0
}

// begin registers a job that stops gracefully on Stopping until release
// is called.
func (i *Interrupt) begin() (stop <-chan struct{}, release func()) {
	if i == nil {
		return nil, func() {}
	}
	i.mu.Lock()
	i.graceful++
	i.mu.Unlock()
	var once sync.Once
	return i.stop, func() {
		once.Do(func() {
			i.mu.Lock()
			i.graceful--
			i.mu.Unlock()
		})
	}
}
