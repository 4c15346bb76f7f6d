package jobs_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
)

// Example injects three seeds (one a duplicate, one malformed) into a new
// crawl and generates the first fetch list, on the local engine: the zero
// mapreduce.Engine runs the jobs in this process.
func Example() {
	dir, err := os.MkdirTemp("", "trawl-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	seeds := filepath.Join(dir, "seeds.txt")
	text := "https://example.com/\nhttps://example.com/\tscore=2\nnot a URL\nhttps://example.org/docs/\n"
	if err := os.WriteFile(seeds, []byte(text), 0o644); err != nil {
		panic(err)
	}
	env := jobs.Env{
		Engine: mapreduce.Engine{Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Crawl:  filepath.Join(dir, "crawl"),
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()

	inj, err := jobs.Inject(ctx, env, jobs.InjectOptions{Seeds: []string{seeds}, Now: now})
	if err != nil {
		panic(err)
	}
	fmt.Printf("inject: %d lines, %d bad, %d URLs in the CrawlDB\n", inj.Lines, inj.BadLines, inj.Total)

	gen, err := jobs.Generate(ctx, env, jobs.GenerateOptions{Now: now, MaxPerHost: 10})
	if err != nil {
		panic(err)
	}
	// gen.Segment is the new segment, named by the wall clock
	// (yyyyMMddHHmmss) as Nutch names it: fetch it next.
	fmt.Printf("generate: %d URLs of %d hosts in the fetch list\n", gen.Selected, gen.Hosts)
	// Output:
	// inject: 4 lines, 1 bad, 2 URLs in the CrawlDB
	// generate: 2 URLs of 2 hosts in the fetch list
}
