// Package jobs holds trawl's crawl jobs on the mapreduce engine: Inject,
// Generate and UpdateDB, with Apache Nutch's semantics (Injector, Generator,
// CrawlDb + CrawlDbReducer, OPICScoringFilter). Each exported function is a
// driver: it takes the CrawlDB lock, runs one or more engine jobs and
// publishes the result; Registry rebuilds every engine job from its Conf for
// the Hadoop Streaming task entry.
//
// Where trawl differs from Nutch, the function's doc comment says so.
package jobs
