// Package trawl is a Nutch-style batch web crawler. This page is its
// architecture: the round it runs, the shape every job has, and where each
// part lives.
//
// # A round
//
// A crawl is an inject, then rounds of four jobs. Every arrow is a set of
// zstd Parquet part files under the crawl directory; every box is one or
// two MapReduce jobs (package mapreduce) run embedded or as Hadoop Streaming
// jobs of the same binary (package hadoop):
//
//	seeds ──inject──▶ crawldb/current ◀───────────────────────────────┐
//	                       │                                          │
//	                   generate       (due, scored, ≤ N per host)     │
//	                       ▼                                          │
//	        segments/S/crawl_generate                                 │
//	                       │                                          │
//	                     fetch        (two-level server/URL queues,   │
//	                       ▼           politeness, cached async DNS)  │
//	        segments/S/crawl_fetch + content                          │
//	                       │                                          │
//	                     parse        (outlinks, text, signature,     │
//	                       ▼           OPIC link cash)                │
//	        segments/S/crawl_parse + parse_data + parse_text          │
//	                       │                                          │
//	                    updatedb ─────(statuses, schedules, scores)───┘
//	                                   and segments/S/_updated
//
// Beside the round: cluster (DBSCAN over the young pages' features, for the
// dynamic revisit schedule), dedup (pages with one signature: keep one, mark
// the rest db_duplicate), invertlinks (the LinkDB: every page's inlinks and
// anchors), linkrank (PageRank over the LinkDB into the CrawlDB's scores;
// IPageRank for a focused crawl), readdb, readseg and readlinkdb (dump and
// inspect).
//
// updatedb schedules every page's next fetch with one of four schedules
// (package crawldb): Nutch's default and adaptive ones, Hu and Wu's dynamic
// one (DBSCAN cluster periods for young pages, a Poisson estimate after 16
// changes), and the estimating one, which estimates every page's change
// rate from its own history and Last-Modified dates, shrunk toward similar
// pages', and allocates the fetch budget for the most freshness (updatedb
// fits its model to the CrawlDB it writes and records it there).
//
// # The shape of a job
//
// A driver (jobs.Generate, jobs.UpdateDB, dbscan.Run, ...) is a function of
// a jobs.Env (the mapreduce.Engine it runs on, plus the crawl directory) and
// an options struct with a Validate method. It takes the CrawlDB lock and
// the segment's lock, plans, and runs one or more engine jobs, each described
// by a spec: a struct whose exported fields are the job's whole
// configuration, with a method that builds the typed mapreduce.Job. The
// engine sends a spec to its tasks as JSON and the tasks rebuild the same
// job from it (mapreduce.Spec, mapreduce.Register), so a job runs the same
// in this process and on a cluster. Settings have one table (package
// config); the CLI's flags are derived from it and the library's defaults
// agree with it.
//
// # Packages
//
// The pipeline, the parts a Nutch user knows by name:
//
//   - cmd/trawl: the command-line interface: parses flags, builds options,
//     runs drivers, prints
//   - jobs: the drivers and their engine jobs: inject, generate, fetch,
//     parse, updatedb, dedup, invertlinks, linkrank, cluster and crawl
//     (Nutch's Injector, Generator, Fetcher, ParseSegment, CrawlDb,
//     DeduplicationJob, LinkDb, LinkRank, Crawl)
//   - crawldb: the CrawlDatum record, statuses, fetch schedules, the
//     CrawlDB's lock, install and readers
//   - segment: a segment's layout, record types, states, markers and lock
//   - linkdb: the LinkDB's record (to, from, anchor), layout and reader
//   - topic: a focused crawl's topic (tf-idf from sample texts), page and
//     link relevance
//   - dbscan, poisson: DBSCAN clustering of pages; Poisson change-rate
//     estimation (Cho and Garcia-Molina)
//   - deploy: cron and Hadoop/YARN recipes (not Go)
//
// The machinery the pipeline stands on:
//
//   - mapreduce: the job engine (specs, runners, the local runner, the
//     Hadoop Streaming task entry); hadoop: runs specs as Hadoop Streaming
//     jobs; hadoop/streamemu: an emulation of hadoop-streaming.jar for tests
//   - storage: the file-system interface and the local disk with its OS
//     locks; storage/hdfs: HDFS; storage/faultfs: fault injection for tests
//   - parquetio: Parquet part files; config: the settings table
//   - fetcher, resolver: the two-level (server, URL) fetcher and its cached
//     asynchronous DNS resolver
//   - parser, urlutil: HTML parsing; URL normalization, filters, host keys
//   - flock, scratch, internal/killpoint: OS file locks; spill directories
//     swept after a crash; kill points for the crash tests
//
// The tools apart from the product:
//
//   - simweb: the synthetic web (HTTP and DNS on loopback) that tests and
//     the demo crawl
//   - revisit: the simulation that evaluates revisit schedules
//   - linkeval: linkrank against OPIC, focused crawling strategies
//   - e2e: end-to-end tests over simweb; bench: harnesses against peers
//
// See the README for the commands and deploy/README.md for operating it.
package trawl
