//go:build unix

// Command hadoop is trawl's emulation of `hadoop jar hadoop-streaming.jar`
// for tests (see package streamemu): built as $HADOOP_HOME/bin/hadoop (and
// bin/mapred) of a fake Hadoop home, it runs streaming jobs as local
// processes. It is not Hadoop.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/trawl/trawl/hadoop/streamemu"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := streamemu.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
