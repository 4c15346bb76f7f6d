// Command trawl is the command-line interface of the trawl crawler: one
// sub-command per crawl job (inject, generate, fetch, parse, updatedb),
// `crawl` to run whole rounds of them (and `crawl --simweb`, the demo),
// readers of the CrawlDB and of segments (readdb, readseg), `simweb` to
// serve the synthetic test web, `config` to show the effective settings,
// and the hidden `task` entry that Hadoop Streaming runs.
//
// Logs go to stderr through log/slog; data (dumps, the generated segment's
// path, crawl's round summaries) goes to stdout. Exit status: 0 success, 1
// nothing to do (generate found nothing due; fetch or parse found no
// segment needing it; updatedb's segments are all merged already), 2 usage
// error, 3 failure, 4 the CrawlDB, a segment or the crawl directory is
// locked, 130 interrupted.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/trawl/trawl/jobs"
)

func main() {
	// The first SIGINT or SIGTERM ends a fetch as its time limit does (it
	// publishes what it fetched, then trawl exits 130) and cancels any
	// other job, which cleans up (its staged output, its locks) and exits
	// 130; a second one cancels whatever runs, and a third kills the
	// process at once.
	ctx, cancel := context.WithCancel(context.Background())
	intr := jobs.NewInterrupt(cancel)
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for n := 1; ; n++ {
			<-sigs
			intr.Signal()
			if n == 2 {
				signal.Reset(os.Interrupt, syscall.SIGTERM)
				return
			}
		}
	}()
	code := run(withInterrupt(ctx, intr), os.Args, os.Stdin, os.Stdout, os.Stderr, os.Environ())
	cancel()
	os.Exit(code)
}

// interruptKey is the context key of the process's *jobs.Interrupt.
type interruptKey struct{}

// withInterrupt returns ctx carrying the process's interrupt handler, for
// the jobs' Env.
func withInterrupt(ctx context.Context, i *jobs.Interrupt) context.Context {
	return context.WithValue(ctx, interruptKey{}, i)
}

// interruptFrom returns the interrupt handler ctx carries (nil: none, as
// in tests that call run directly).
func interruptFrom(ctx context.Context) *jobs.Interrupt {
	i, _ := ctx.Value(interruptKey{}).(*jobs.Interrupt)
	return i
}
