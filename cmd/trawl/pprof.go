package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

// profileFlags are hidden global flags (given before the command name) that
// profile one run of trawl with runtime/pprof:
//
//	trawl --cpuprofile cpu.pprof --memprofile heap.pprof updatedb SEG
//
// The heap profile is the one taken when the live heap was at its largest
// during the run (it is rewritten each time the live heap grows by a tenth),
// so `go tool pprof -sample_index=inuse_space` shows what held the peak.
// The allocation profile is written when the run ends, so its
// alloc_space counts every allocation of the run:
//
//	trawl --allocprofile allocs.pprof crawl ...
//	go tool pprof -sample_index=alloc_space allocs.pprof
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile to `FILE`"},
		&cli.StringFlag{Name: "memprofile", Hidden: true, Usage: "write a heap profile taken at the live heap's peak to `FILE`"},
		&cli.StringFlag{Name: "allocprofile", Hidden: true, Usage: "write a profile of all the run's allocations to `FILE` when it ends"},
	}
}

// startProfiling starts the profiles the flags of c ask for. The returned
// function stops them and writes the files; it is never nil.
func startProfiling(c *cli.Context) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		return errors.Join(errs...)
	}
	if name := c.String("cpuprofile"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			return stop, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return stop, fmt.Errorf("--cpuprofile %s: %w", name, err)
		}
		stops = append(stops, func() error {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				return fmt.Errorf("--cpuprofile %s: %w", name, err)
			}
			return nil
		})
	}
	if name := c.String("memprofile"); name != "" {
		hp := &peakHeapProfile{name: name, done: make(chan struct{})}
		if err := hp.write(); err != nil { // fail early on an unwritable path
			return stop, err
		}
		hp.wg.Add(1)
		go hp.watch()
		stops = append(stops, hp.stop)
	}
	if name := c.String("allocprofile"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			return stop, fmt.Errorf("--allocprofile: %w", err)
		}
		stops = append(stops, func() error {
			runtime.GC() // the profile counts allocations up to the last collection
			err := pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("--allocprofile %s: %w", name, err)
			}
			return nil
		})
	}
	return stop, nil
}

// peakHeapProfile rewrites a heap profile whenever the live heap (as of the
// last GC) reaches a new high by more than a tenth.
type peakHeapProfile struct {
	name string
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
	err  error
}

func (p *peakHeapProfile) watch() {
	defer p.wg.Done()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			continue
		}
		if live := sample[0].Value.Uint64(); live > p.peak+p.peak/10 {
			p.peak = live
			if err := p.write(); err != nil && p.err == nil {
				p.err = err
			}
		}
	}
}

func (p *peakHeapProfile) write() error {
	f, err := os.Create(p.name)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	err = pprof.Lookup("heap").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--memprofile %s: %w", p.name, err)
	}
	return nil
}

func (p *peakHeapProfile) stop() error {
	close(p.done)
	p.wg.Wait()
	if p.peak == 0 {
		runtime.GC()
		return p.write()
	}
	return p.err
}
