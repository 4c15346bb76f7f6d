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
// segment needing it), 2 usage error, 3 failure, 4 the CrawlDB or crawl
// directory is locked, 130 interrupted.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The first SIGINT or SIGTERM cancels the running job, which cleans up
	// (its staged output, the CrawlDB lock) and exits with status 130; a
	// second one kills the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}
