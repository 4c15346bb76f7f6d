// Package jobs holds trawl's crawl jobs on the mapreduce engine, with Apache
// Nutch's semantics:
//
//	Inject       Nutch's Injector: seed files into the CrawlDB
//	Generate     Generator: due URLs into a new segment's fetch list
//	Fetch        Fetcher: a segment's fetch list over HTTP
//	Parse        ParseSegment: outlinks, text, signatures, OPIC link cash
//	UpdateDB     CrawlDb with CrawlDbReducer: a segment into the CrawlDB
//	Dedup        DeduplicationJob: one page per signature, the rest db_duplicate
//	InvertLinks  LinkDb: segments' links inverted into the LinkDB
//	LinkRank     LinkRank: PageRank (or a focused crawl's IPageRank) over the LinkDB into the scores
//	Cluster      DBSCAN over the young pages, for the dynamic schedule
//	Crawl        Crawl: inject, then rounds of the four jobs above
//
// A round in code, on the local engine:
//
//	env := jobs.Env{Crawl: "./crawl"} // zero Engine: in this process
//	gen, err := jobs.Generate(ctx, env, jobs.GenerateOptions{TopN: 1000, Now: time.Now()})
//	// ... then Fetch, Parse and UpdateDB of gen.Segment
//
// Each exported function is a driver. It validates its options (each
// options type has a Validate method, which the CLI calls too), takes the
// CrawlDB lock (crawldb.LockWith) and the lock of the segment it works on,
// repairs what a killed run left (crawldb.Recover, segment.Clean), runs one
// or two engine jobs and publishes the result: a new CrawlDB version
// installed with crawldb.Install, or a segment's outputs. A failure at any
// point leaves crawldb/current as it was.
//
// Every engine job is described by a spec (mapreduce.Spec): an unexported
// struct whose exported fields are the job's whole configuration. The
// engine sends it to the tasks as JSON, and Registry rebuilds the job from
// it in a Hadoop Streaming task (`trawl task`), so a job runs the same on
// Env.Runner whatever runs it. Per-task state (a fetcher per split, a host
// count per partition) lives in mapreduce.Task.State, set up and finished
// by the job's MapSetup and MapCleanup.
//
// The pure parts are usable on their own: ParseSeedLine (the seed-file line
// format) and OPICLinkCash (the score a parsed page passes along each
// outlink).
//
// Where trawl differs from Nutch, the driver's doc comment says so; the
// largest difference is the generate lock (see Generate): trawl never
// rewrites the CrawlDB at generate time.
package jobs
