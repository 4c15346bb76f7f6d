// Package jobs holds trawl's CrawlDB jobs on the mapreduce engine: Inject,
// Generate and UpdateDB, with Apache Nutch's semantics (Injector, Generator,
// CrawlDb with CrawlDbReducer, and the OPICScoringFilter scores).
//
// Each exported function is a driver: it takes the CrawlDB lock
// (crawldb.Lock), repairs an interrupted install (crawldb.Recover), runs one
// or two engine jobs, and publishes the result: a new CrawlDB version
// installed with crawldb.Install, or a new segment's fetch list. A failure
// at any point leaves crawldb/current as it was. The engine jobs are built
// from a Conf of strings only, so Registry rebuilds each of them by name for
// the Hadoop Streaming task entry, and Env.Execute can run them elsewhere.
//
// The pure parts are usable on their own: ParseSeedLine (the seed-file
// line format) and OPICLinkCash (the score a parsed page passes along each
// outlink, which the parse job writes into crawl_parse).
//
// Where trawl differs from Nutch, the driver's doc comment says so; the
// largest difference is the generate lock (see Generate): trawl never
// rewrites the CrawlDB at generate time.
package jobs
