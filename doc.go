// Package trawl is a Nutch-style batch web crawler.
//
// A crawl is a sequence of rounds; each round is four MapReduce jobs over
// Parquet files: generate, fetch, parse and updatedb, after an initial inject.
// The jobs run embedded (package mapreduce's local runner) or as Hadoop
// Streaming tasks of the same binary. See the README for the commands and
// DESIGN.md for the architecture; the packages are:
//
//   - storage: the file-system interface (local, HDFS)
//   - mapreduce: the job engine (local runner, Hadoop Streaming task entry)
//   - crawldb: the CrawlDatum record, statuses, fetch schedules, readers
//   - segment: segment layout and its record types
//   - urlutil: URL normalization, filters, host and domain keys
//   - jobs: inject, generate, updatedb and the other crawl jobs
//   - cmd/trawl: the command-line interface
package trawl
