// Package trawl is a Nutch-style batch web crawler.
//
// A crawl is a sequence of rounds; each round is four MapReduce jobs over
// Parquet files: generate, fetch, parse and updatedb, after an initial inject.
// The jobs run embedded (package mapreduce's local runner) or as Hadoop
// Streaming jobs of the same binary (package hadoop). See the README for the
// commands and deploy/README.md for running it from cron; the packages are:
//
//   - storage: the file-system interface, the local disk and its OS locks;
//     storage/hdfs: HDFS; storage/faultfs: fault injection for the tests
//   - mapreduce: the job engine (local runner, Hadoop Streaming task entry)
//   - hadoop: submits engine jobs to Hadoop Streaming; hadoop/streamemu: an
//     emulation of hadoop jar hadoop-streaming.jar for the tests
//   - crawldb: the CrawlDatum record, statuses, fetch schedules, locks, readers
//   - segment: a segment's layout, record types, states, marker and lock
//   - fetcher, resolver: the two-level (server, URL) fetcher and its DNS resolver
//   - parser, urlutil: HTML parsing; URL normalization, filters, host keys
//   - jobs: inject, generate, fetch, parse, updatedb, cluster and crawl
//   - dbscan, poisson, revisit: clustering, change-rate estimation and the
//     revisit evaluation
//   - flock, scratch: OS file locks; scratch directories swept after a crash
//   - simweb: the synthetic web (HTTP and DNS on loopback) tests crawl
//   - cmd/trawl: the command-line interface
package trawl
