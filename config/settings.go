package config

// Kind is the type of a setting's value.
type Kind int

// The setting kinds. Every value is written as a string (in trawl.yaml, the
// environment or a flag) and parsed by its kind.
const (
	// String is free text, or one of Setting.Choices when they are given.
	String Kind = iota
	// Int is a decimal integer.
	Int
	// Float is a decimal floating-point number.
	Float
	// Bool is true or false (also 1/0, yes/no, on/off).
	Bool
	// Duration is a Go duration ("90s", "1h30m") that also accepts days
	// ("30d", "1d12h").
	Duration
	// Size is a byte count with an optional unit: "256MiB", "1GiB", "64KB",
	// "4096". KiB/MiB/GiB and K/M/G (also KB/MB/GB) are powers of 1024.
	Size
	// List is a comma-separated list of strings (a YAML sequence in
	// trawl.yaml).
	List
)

// String returns the kind's name as `trawl config` prints it.
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Int:
		return "int"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	case Size:
		return "size"
	case List:
		return "list"
	}
	return "unknown"
}

// Setting describes one setting: its dotted name, kind, default (as a
// string, parsed like any other value) and a one-line description, as
// nutch-default.xml does for Nutch.
type Setting struct {
	// Name is the dotted name, as in trawl.yaml ("generate.topN").
	Name string
	// Kind is the value's type.
	Kind Kind
	// Default is the value when no source sets it.
	Default string
	// Choices, when not empty, are the only values a String accepts.
	Choices []string
	// Doc is a one-line description.
	Doc string
	// Env, when set, is the setting's environment variable instead of
	// EnvName(Name) (fetcher.agent is TRAWL_AGENT, the name crawler operators expect).
	Env string
}

// EnvVar returns the environment variable that sets s.
func (s Setting) EnvVar() string {
	if s.Env != "" {
		return s.Env
	}
	return EnvName(s.Name)
}

// The names of every setting, for use with the typed getters of Config.
const (
	CrawlDir = "crawl"

	LogLevel  = "log.level"
	LogFormat = "log.format"

	EngineMemory           = "engine.memory"
	EngineParallelism      = "engine.parallelism"
	EngineMaxAttempts      = "engine.maxAttempts"
	EngineTempDir          = "engine.tempDir"
	EngineProgressInterval = "engine.progressInterval"
	EngineMergeFactor      = "engine.mergeFactor"

	// The engine that runs the jobs, and the Hadoop engine's settings.
	EngineName               = "engine.name"
	EngineHadoopStreamingJar = "engine.hadoop.streamingJar"
	EngineHadoopReducers     = "engine.hadoop.reducers"
	EngineHadoopQueue        = "engine.hadoop.queue"
	EngineHadoopJobName      = "engine.hadoop.jobName"
	EngineHadoopMapMemory    = "engine.hadoop.mapMemory"
	EngineHadoopReduceMemory = "engine.hadoop.reduceMemory"
	EngineHadoopTaskTimeout  = "engine.hadoop.taskTimeout"
	EngineHadoopSpeculative  = "engine.hadoop.speculative"
	EngineHadoopTaskTempDir  = "engine.hadoop.taskTempDir"
	EngineHadoopProperties   = "engine.hadoop.properties"

	CrawlDBParts   = "crawldb.parts"
	CrawlDBKeepOld = "crawldb.keepOld"
	LockMaxAge     = "lock.maxAge"

	ScheduleName            = "schedule.name"
	ScheduleDefaultInterval = "schedule.defaultInterval"
	ScheduleMaxInterval     = "schedule.maxInterval"
	AdaptiveIncRate         = "schedule.adaptive.incRate"
	AdaptiveDecRate         = "schedule.adaptive.decRate"
	AdaptiveMinInterval     = "schedule.adaptive.minInterval"
	AdaptiveMaxInterval     = "schedule.adaptive.maxInterval"
	AdaptiveSyncDelta       = "schedule.adaptive.syncDelta"
	AdaptiveSyncDeltaRate   = "schedule.adaptive.syncDeltaRate"

	// The dynamic schedule (crawldb.DynamicConfig) and trawl cluster.
	DynamicMaxChanges       = "schedule.dynamic.maxChanges"
	DynamicHomeInitial      = "schedule.dynamic.home.initial"
	DynamicHomeMin          = "schedule.dynamic.home.min"
	DynamicHomeMax          = "schedule.dynamic.home.max"
	DynamicDirectoryInitial = "schedule.dynamic.directory.initial"
	DynamicDirectoryMin     = "schedule.dynamic.directory.min"
	DynamicDirectoryMax     = "schedule.dynamic.directory.max"
	DynamicOtherInitial     = "schedule.dynamic.other.initial"
	DynamicOtherMin         = "schedule.dynamic.other.min"
	DynamicOtherMax         = "schedule.dynamic.other.max"
	DynamicPoissonScale     = "schedule.dynamic.poissonScale"
	DynamicOptimalMu        = "schedule.dynamic.optimalMu"
	DynamicUnchangedFactor  = "schedule.dynamic.unchangedFactor"
	DynamicRank             = "schedule.dynamic.rank"
	EstimateFetchesPerDay   = "schedule.estimate.fetchesPerDay"
	EstimateBudgetShare     = "schedule.estimate.budgetShare"
	EstimatePlanDays        = "schedule.estimate.planDays"
	EstimateExploreFetches  = "schedule.estimate.exploreFetches"
	EstimateExploreInterval = "schedule.estimate.exploreInterval"
	EstimateFill            = "schedule.estimate.fill"
	EstimateSlack           = "schedule.estimate.slack"
	EstimateSampleSize      = "schedule.estimate.sampleSize"
	ClusterEps              = "cluster.eps"
	ClusterMinPts           = "cluster.minPts"
	ClusterSampleRate       = "cluster.sampleRate"
	ClusterMinSamples       = "cluster.minSamples"
	ClusterMaxChanges       = "cluster.maxChanges"
	ClusterPartitions       = "cluster.partitions"

	URLFilterSchemes           = "urlfilter.schemes"
	URLFilterMaxLength         = "urlfilter.maxLength"
	URLFilterSuffix            = "urlfilter.suffix"
	URLFilterMaxSegmentRepeats = "urlfilter.maxSegmentRepeats"
	URLFilterMaxSegments       = "urlfilter.maxSegments"
	URLFilterRegexFiles        = "urlfilter.regexFiles"

	InjectOverwrite        = "inject.overwrite"
	InjectUpdate           = "inject.update"
	InjectScore            = "inject.score"
	InjectMaxReportedLines = "inject.maxReportedLines"

	// Sitemaps (trawl sitemap, crawl --sitemaps).
	SitemapURLs       = "sitemap.urls"
	SitemapLastMod    = "sitemap.lastmod"
	SitemapChangeFreq = "sitemap.changefreq"
	SitemapPriority   = "sitemap.priority"
	SitemapStrict     = "sitemap.strict"
	SitemapOverwrite  = "sitemap.overwriteExisting"
	SitemapMaxDepth   = "sitemap.maxDepth"
	SitemapThreads    = "sitemap.threads"
	SitemapInCrawl    = "sitemap.inCrawl"

	GenerateTopN          = "generate.topN"
	GenerateMaxPerHost    = "generate.maxPerHost"
	GenerateCountMode     = "generate.countMode"
	GeneratePartitionMode = "generate.partitionMode"
	GenerateNumFetchers   = "generate.numFetchers"
	GenerateMaxPartURLs   = "generate.maxPartURLs"
	GenerateDelay         = "generate.delay"
	GenerateFilter        = "generate.filter"

	// The HostDb (trawl updatehostdb, readhostdb) and generate's use of it.
	HostDbUpdate                   = "hostdb.update"
	GenerateHostDbMaxFailureStreak = "generate.hostdb.maxFailureStreak"
	GenerateHostDbSkipDNSFailed    = "generate.hostdb.skipDNSFailed"

	UpdateAdditions  = "updatedb.additions"
	UpdateRetryMax   = "updatedb.retryMax"
	UpdateMaxInlinks = "updatedb.maxInlinks"
	UpdatePurgeGone  = "updatedb.purgeGone"

	FetcherAgent                = "fetcher.agent"
	FetcherServerDelay          = "fetcher.serverDelay"
	FetcherMaxCrawlDelay        = "fetcher.maxCrawlDelay"
	FetcherMaxRetryAfter        = "fetcher.maxRetryAfter"
	FetcherMaxConnections       = "fetcher.maxConnections"
	FetcherConnectTimeout       = "fetcher.connectTimeout"
	FetcherReadTimeout          = "fetcher.readTimeout"
	FetcherContentLimit         = "fetcher.contentLimit"
	FetcherContentTypes         = "fetcher.contentTypes"
	FetcherFollowRedirects      = "fetcher.followRedirects"
	FetcherTimeLimit            = "fetcher.timeLimit"
	FetcherAllowPrivate         = "fetcher.allowPrivate"
	FetcherDNSServers           = "fetcher.dnsServers"
	FetcherDNSCacheSize         = "fetcher.dns.cacheSize"
	FetcherDNSRefreshPeriod     = "fetcher.dns.refreshPeriod"
	FetcherDNSNegativeTTL       = "fetcher.dns.negativeTTL"
	FetcherDNSTimeout           = "fetcher.dns.timeout"
	FetcherDNSRetries           = "fetcher.dns.retries"
	FetcherDNSIPv6              = "fetcher.dns.ipv6"
	FetcherMaxExceptionsPerHost = "fetcher.maxExceptionsPerHost"
	FetcherPolicy               = "fetcher.policy"
	FetcherQueueMode            = "fetcher.queueMode"
	FetcherPoliteness           = "fetcher.politeness"
	FetcherKeepAlive            = "fetcher.keepAlive"
	FetcherThroughputThreshold  = "fetcher.throughputThreshold"
	FetcherThroughputCheckAfter = "fetcher.throughputCheckAfter"
	FetcherThroughputRetries    = "fetcher.throughputRetries"
	FetcherStallTimeout         = "fetcher.stallTimeout"
	FetcherContentCompression   = "fetcher.contentCompression"
	FetcherParse                = "fetcher.parse"
	FetcherParseInCrawl         = "fetcher.parseInCrawl"
	FetcherWARC                 = "fetcher.warc"
	WARCMaxFileSize             = "warc.maxFileSize"
	WARCPrefix                  = "warc.prefix"

	ParserMaxOutlinks         = "parser.maxOutlinks"
	ParserSignature           = "parser.signature"
	ParserIgnoreInternalLinks = "parser.ignoreInternalLinks"
	ParserEmbeddedLinks       = "parser.embeddedLinks"
	ParserTypes               = "parser.types"
	ParserIgnoreExternalLinks = "parser.ignoreExternalLinks"

	// The LinkDB (trawl invertlinks, readlinkdb) and link analysis.
	LinkDBUpdate               = "linkdb.update"
	LinkDBIgnoreInternalHost   = "linkdb.ignoreInternalHost"
	LinkDBIgnoreInternalDomain = "linkdb.ignoreInternalDomain"
	LinkDBMaxInlinks           = "linkdb.maxInlinks"
	LinkDBMaxAnchorLength      = "linkdb.maxAnchorLength"
	ScoringName                = "scoring.name"
	TopicFiles                 = "topic.files"
	TopicLinkThreshold         = "topic.linkThreshold"
	TopicPageThreshold         = "topic.pageThreshold"
	TopicMaxOffTopicHops       = "topic.maxOffTopicHops"
	LinkRankDamping            = "linkrank.damping"
	LinkRankMaxIterations      = "linkrank.maxIterations"
	LinkRankTolerance          = "linkrank.tolerance"
	ParserSkipTruncated        = "parser.skipTruncated"
	URLFilterScope             = "urlfilter.scope"
)

// EnvAgent is the environment variable of fetcher.agent.
const EnvAgent = "TRAWL_AGENT"

// Settings returns the table of every setting, grouped by topic. The slice
// is new on every call; callers may keep or change it.
//
// It is one long literal on purpose: like Nutch's nutch-default.xml, the
// table is read top to bottom as the reference of every setting (name,
// default, unit and description side by side), and `trawl config` prints
// it in this order.
func Settings() []Setting {
	return []Setting{
		{Name: CrawlDir, Kind: String, Default: "./crawl",
			Doc: "crawl directory (path or URI) holding crawldb/ and segments/"},

		{Name: LogLevel, Kind: String, Default: "info", Choices: []string{"debug", "info", "warn", "error"},
			Doc: "lowest level of log messages written to stderr"},
		{Name: LogFormat, Kind: String, Default: "text", Choices: []string{"text", "json"},
			Doc: "log line format on stderr: text (key=value) or json (one object per line)"},

		{Name: EngineMemory, Kind: Size, Default: "256MiB",
			Doc: "memory budget of a job's map output buffers before they spill to disk"},
		{Name: EngineParallelism, Kind: Int, Default: "0",
			Doc: "map and reduce tasks run at once; 0 means the number of CPUs"},
		{Name: EngineMaxAttempts, Kind: Int, Default: "3",
			Doc: "attempts of a failing task before its job fails"},
		{Name: EngineTempDir, Kind: String, Default: "",
			Doc: "directory for spill files; empty means the system temp directory"},
		{Name: EngineProgressInterval, Kind: Duration, Default: "10s",
			Doc: "interval of progress log lines when stderr is not a terminal"},

		{Name: EngineMergeFactor, Kind: Int, Default: "64",
			Doc: "most sorted spill runs merged at once; more runs are merged in passes"},

		{Name: EngineName, Kind: String, Default: "local", Choices: []string{"local", "hadoop"},
			Doc: "what runs the jobs: local (in this process) or hadoop (as streaming jobs of this binary, submitted with the hadoop command; see engine.hadoop.*)"},
		{Name: EngineHadoopStreamingJar, Kind: String, Default: "",
			Doc: "the hadoop-streaming jar; empty means $HADOOP_STREAMING_JAR, else $HADOOP_HOME/share/hadoop/tools/lib/hadoop-streaming-*.jar"},
		{Name: EngineHadoopReducers, Kind: Int, Default: "0",
			Doc: "most reduce tasks of a Hadoop job (mapreduce.job.reduces); 0 means one per reduce partition of the job"},
		{Name: EngineHadoopQueue, Kind: String, Default: "",
			Doc: "scheduler queue of the Hadoop jobs (mapreduce.job.queuename); empty means the cluster's default"},
		{Name: EngineHadoopJobName, Kind: String, Default: "trawl",
			Doc: "start of the Hadoop jobs' names (mapreduce.job.name), followed by the job's name"},
		{Name: EngineHadoopMapMemory, Kind: Size, Default: "0",
			Doc: "memory of a map task's container (mapreduce.map.memory.mb); 0 means the cluster's default"},
		{Name: EngineHadoopReduceMemory, Kind: Size, Default: "0",
			Doc: "memory of a reduce task's container (mapreduce.reduce.memory.mb); 0 means the cluster's default"},
		{Name: EngineHadoopTaskTimeout, Kind: Duration, Default: "0s",
			Doc: "a Hadoop task silent for this long is killed (mapreduce.task.timeout); 0 means the cluster's default"},
		{Name: EngineHadoopSpeculative, Kind: Bool, Default: "false",
			Doc: "allow speculative task attempts on Hadoop, except for fetch (which has side effects)"},
		{Name: EngineHadoopTaskTempDir, Kind: String, Default: "",
			Doc: "spill directory of the Hadoop tasks on the nodes; empty means the task's temporary directory"},
		{Name: EngineHadoopProperties, Kind: List, Default: "",
			Doc: "extra Hadoop job properties, KEY=VALUE each (passed as -D KEY=VALUE)"},

		{Name: CrawlDBParts, Kind: Int, Default: "0",
			Doc: "part files of a rewritten CrawlDB; 0 keeps the current number (a new CrawlDB: CPUs, at most 16)"},
		{Name: CrawlDBKeepOld, Kind: Bool, Default: "false",
			Doc: "keep the previous CrawlDB as crawldb/old after inject or updatedb (db.preserve.backup)"},
		{Name: LockMaxAge, Kind: Duration, Default: "24h",
			Doc: "on file systems without OS locks (HDFS), a CrawlDB, segment or crawl lock older than this is stale (--force breaks it); 0 means only a dead holder makes it stale. Local-disk locks are OS locks, freed when their holder dies"},

		{Name: ScheduleName, Kind: String, Default: "adaptive", Choices: []string{"default", "adaptive", "dynamic", "estimate"},
			Doc: "fetch schedule: default (fixed interval), adaptive (Nutch's AdaptiveFetchSchedule), dynamic (cluster periods for young pages, Poisson estimates for old ones; see trawl cluster) or estimate (every page's change rate from its own history and Last-Modified dates, shrunk toward similar pages', and the freshness-optimal allocation of schedule.estimate.fetchesPerDay)"},
		{Name: ScheduleDefaultInterval, Kind: Duration, Default: "30d",
			Doc: "revisit interval of a new page (Nutch's db.fetch.interval.default)"},
		{Name: ScheduleMaxInterval, Kind: Duration, Default: "90d",
			Doc: "a page not fetched for this long is due whatever its interval (db.fetch.interval.max)"},
		{Name: AdaptiveIncRate, Kind: Float, Default: "0.4",
			Doc: "interval growth factor after an unchanged fetch (db.fetch.schedule.adaptive.inc_rate)"},
		{Name: AdaptiveDecRate, Kind: Float, Default: "0.2",
			Doc: "interval shrink factor after a changed fetch (db.fetch.schedule.adaptive.dec_rate)"},
		{Name: AdaptiveMinInterval, Kind: Duration, Default: "60s",
			Doc: "smallest adaptive interval (db.fetch.schedule.adaptive.min_interval)"},
		{Name: AdaptiveMaxInterval, Kind: Duration, Default: "365d",
			Doc: "largest adaptive interval (db.fetch.schedule.adaptive.max_interval)"},
		{Name: AdaptiveSyncDelta, Kind: Bool, Default: "true",
			Doc: "move the next fetch towards the observed modification time (db.fetch.schedule.adaptive.sync_delta)"},
		{Name: AdaptiveSyncDeltaRate, Kind: Float, Default: "0.3",
			Doc: "weight of the observed modification time (db.fetch.schedule.adaptive.sync_delta_rate)"},

		{Name: DynamicMaxChanges, Kind: Int, Default: "16",
			Doc: "dynamic schedule: a page with more observed changes is revisited by its own Poisson estimate (Hu and Wu's 16)"},
		{Name: DynamicHomeInitial, Kind: Duration, Default: "1d",
			Doc: "dynamic schedule: first interval of a site's home page (path / or empty)"},
		{Name: DynamicHomeMin, Kind: Duration, Default: "1h",
			Doc: "dynamic schedule: shortest interval of a home page"},
		{Name: DynamicHomeMax, Kind: Duration, Default: "7d",
			Doc: "dynamic schedule: longest interval of a home page"},
		{Name: DynamicDirectoryInitial, Kind: Duration, Default: "3d",
			Doc: "dynamic schedule: first interval of a directory page (path ending in /)"},
		{Name: DynamicDirectoryMin, Kind: Duration, Default: "6h",
			Doc: "dynamic schedule: shortest interval of a directory page"},
		{Name: DynamicDirectoryMax, Kind: Duration, Default: "30d",
			Doc: "dynamic schedule: longest interval of a directory page"},
		{Name: DynamicOtherInitial, Kind: Duration, Default: "7d",
			Doc: "dynamic schedule: first interval of any other page"},
		{Name: DynamicOtherMin, Kind: Duration, Default: "1d",
			Doc: "dynamic schedule: shortest interval of any other page"},
		{Name: DynamicOtherMax, Kind: Duration, Default: "90d",
			Doc: "dynamic schedule: longest interval of any other page (at most schedule.maxInterval)"},
		{Name: DynamicPoissonScale, Kind: Float, Default: "1",
			Doc: "dynamic schedule: an old page's interval is this times its estimated mean change period"},
		{Name: DynamicOptimalMu, Kind: Float, Default: "0",
			Doc: "dynamic schedule: multiplier of the freshness-optimal allocation (rates per day) for old pages; 0 means off (Hu and Wu's rule)"},
		{Name: DynamicUnchangedFactor, Kind: Float, Default: "3",
			Doc: "dynamic schedule: a young page never seen to change waits at least this times the span of its history (capped by its kind's max); 0 means off"},
		{Name: DynamicRank, Kind: String, Default: "auto", Choices: []string{"auto", "change", "score"},
			Doc: "dynamic schedule: generate's order of due pages: change (score times the estimated probability the page changed since its last fetch), score (Nutch's), auto (change, or score when optimalMu is set)"},
		{Name: EstimateFetchesPerDay, Kind: Float, Default: "0",
			Doc: "estimate schedule: fetches a day the intervals are allocated over; 0 means schedule.estimate.budgetShare of the CrawlDB's URLs (trawl crawl sets it from --topN and --days-per-round when it is 0)"},
		{Name: EstimateBudgetShare, Kind: Float, Default: "0.1",
			Doc: "estimate schedule: the daily budget as a share of the URLs when fetchesPerDay is 0"},
		{Name: EstimatePlanDays, Kind: Float, Default: "3",
			Doc: "estimate schedule: a page is planned at the rate whose freshness at this many days is its posterior's expected freshness"},
		{Name: EstimateExploreFetches, Kind: Int, Default: "2",
			Doc: "estimate schedule: a page with fewer observed intervals is fetched at least every exploreInterval"},
		{Name: EstimateExploreInterval, Kind: Duration, Default: "14d",
			Doc: "estimate schedule: longest interval of a page still being explored"},
		{Name: EstimateFill, Kind: Duration, Default: "3d",
			Doc: "estimate schedule: a round with budget left fetches pages due within this time, most overdue first"},
		{Name: EstimateSlack, Kind: Duration, Default: "1h",
			Doc: "estimate schedule: a page is due this long before one interval after its last fetch, so a page fetched during a round is due at the round one interval later"},
		{Name: EstimateSampleSize, Kind: Int, Default: "200000",
			Doc: "estimate schedule: most pages (a uniform sample) the group priors are fitted to"},
		{Name: ClusterEps, Kind: Float, Default: "0",
			Doc: "trawl cluster: DBSCAN radius on the standardized features; required (trawl cluster --suggest-eps proposes one)"},
		{Name: ClusterMinPts, Kind: Int, Default: "8",
			Doc: "trawl cluster: points within eps (the point itself included) that make a core point"},
		{Name: ClusterSampleRate, Kind: Float, Default: "0.05",
			Doc: "trawl cluster: share R of a cluster's members taken as samples (the nearest its centre)"},
		{Name: ClusterMinSamples, Kind: Int, Default: "3",
			Doc: "trawl cluster: least samples K per cluster (all members if fewer)"},
		{Name: ClusterMaxChanges, Kind: Int, Default: "16",
			Doc: "trawl cluster: pages with at most this many observed changes (at least 1) are clustered; -1 means all"},
		{Name: ClusterPartitions, Kind: Int, Default: "0",
			Doc: "trawl cluster: boxes the feature space is cut into for the partitioned DBSCAN; 0 means enough for each box to fit in a task's share of engine.memory, at least engine.parallelism"},

		{Name: URLFilterSchemes, Kind: List, Default: "http,https",
			Doc: "URL schemes accepted; empty accepts any"},
		{Name: URLFilterMaxLength, Kind: Int, Default: "2083",
			Doc: "longest URL accepted, in bytes; 0 means no limit"},
		{Name: URLFilterSuffix, Kind: Bool, Default: "true",
			Doc: "reject URLs whose path ends in a binary suffix (Nutch's suffix-urlfilter list: images, archives, media...)"},
		{Name: URLFilterMaxSegmentRepeats, Kind: Int, Default: "3",
			Doc: "reject URLs whose path repeats one segment this many times (a crawler trap); 0 turns it off"},
		{Name: URLFilterMaxSegments, Kind: Int, Default: "32",
			Doc: "reject URLs with more path segments than this; 0 means no limit"},
		{Name: URLFilterRegexFiles, Kind: List, Default: "",
			Doc: "regex URL filter files in Nutch's regex-urlfilter.txt syntax (+REGEX / -REGEX, first match wins)"},
		{Name: URLFilterScope, Kind: String, Default: "any", Choices: []string{"any", "host", "domain"},
			Doc: "outlinks parse keeps, relative to their page: any, same host, or same registered domain"},

		{Name: InjectOverwrite, Kind: Bool, Default: "false",
			Doc: "inject replaces an existing URL's datum with the injected one (db.injector.overwrite)"},
		{Name: InjectUpdate, Kind: Bool, Default: "false",
			Doc: "inject updates an existing URL's score, interval and metadata from the seed (db.injector.update)"},
		{Name: InjectScore, Kind: Float, Default: "1.0",
			Doc: "score of an injected URL without a score= field (db.score.injected); must be > 0"},
		{Name: InjectMaxReportedLines, Kind: Int, Default: "20",
			Doc: "bad seed lines logged with file:line and reason; the rest are only counted"},

		{Name: SitemapURLs, Kind: List, Default: "",
			Doc: "files of sitemap URLs, one a line, for trawl sitemap and crawl --sitemaps (Nutch's -sitemapUrls)"},
		{Name: SitemapLastMod, Kind: Bool, Default: "true",
			Doc: "a sitemap's <lastmod> becomes the modified time of the URLs it adds"},
		{Name: SitemapChangeFreq, Kind: Bool, Default: "true",
			Doc: "a sitemap's <changefreq> becomes the fetch interval of the URLs it adds (always 1s, hourly, daily, weekly, monthly 30d, yearly 365d, never)"},
		{Name: SitemapPriority, Kind: Bool, Default: "true",
			Doc: "a sitemap's <priority> (0.5 when absent) becomes the score of the URLs it adds; false gives them inject.score"},
		{Name: SitemapStrict, Kind: Bool, Default: "true",
			Doc: "refuse sitemap URLs outside the sitemap's scope: its host and directory, or its whole host for a sitemap named in robots.txt (Nutch's sitemap strict parsing)"},
		{Name: SitemapOverwrite, Kind: Bool, Default: "false",
			Doc: "a sitemap sets the modified time, interval and score of URLs already in the CrawlDB too (sitemap.url.overwrite.existing)"},
		{Name: SitemapMaxDepth, Kind: Int, Default: "2",
			Doc: "sitemap nesting followed: 1 reads the named sitemaps only, 2 also the sitemaps of a named index"},
		{Name: SitemapThreads, Kind: Int, Default: "8",
			Doc: "hosts whose sitemaps one task reads at once (each host one request at a time, with fetcher.serverDelay between)"},
		{Name: SitemapInCrawl, Kind: Bool, Default: "false",
			Doc: "crawl reads the sitemaps of the seed hosts' robots.txt (and sitemap.urls) after the first inject, as Nutch's crawl script does with -sm"},

		{Name: GenerateTopN, Kind: Int, Default: "0",
			Doc: "most URLs in one fetch list, best scores first; 0 means no limit"},
		{Name: GenerateMaxPerHost, Kind: Int, Default: "-1",
			Doc: "most URLs per host (or domain) in one fetch list; -1 or 0 means no limit (generate.max.count)"},
		{Name: GenerateCountMode, Kind: String, Default: "host", Choices: []string{"host", "domain"},
			Doc: "what generate.maxPerHost counts (generate.count.mode)"},
		{Name: GeneratePartitionMode, Kind: String, Default: "host", Choices: []string{"host", "domain", "ip"},
			Doc: "what fetch lists are partitioned by: host, registered domain, or IP address (the hosts of one address in one fetch task, for fetcher.queueMode ip; looked up with fetcher.dnsServers and fetcher.dns.*) (partition.url.mode)"},
		{Name: GenerateNumFetchers, Kind: Int, Default: "1",
			Doc: "number of fetch-list parts, one per fetcher task"},
		{Name: GenerateMaxPartURLs, Kind: Int, Default: "40000",
			Doc: "most URLs of a fetch-list part on average: a larger selection gets more parts than generate.numFetchers (a host's URLs stay in one part). A fetch task holds its part while it runs, about 1.7 KiB of live memory a URL: the default's 66 MiB leaves one task's 128 MiB share of the default 256 MiB budget on 2 cores room for the collector; 0 means no bound"},
		{Name: GenerateDelay, Kind: Duration, Default: "7d",
			Doc: "a segment not merged by updatedb for this long no longer holds its URLs back (crawl.gen.delay)"},
		{Name: GenerateFilter, Kind: Bool, Default: "true",
			Doc: "apply the urlfilter.* filters to CrawlDB URLs when generating (generate.filter)"},
		{Name: GenerateHostDbMaxFailureStreak, Kind: Int, Default: "0",
			Doc: "skip every URL of a host whose failure streak in the HostDb (failed fetches since its last success) is at least this; 0 means off (Nutch's generate.hostdb with a failures expression)"},
		{Name: GenerateHostDbSkipDNSFailed, Kind: Bool, Default: "false",
			Doc: "skip every URL of a host whose last fetch in the HostDb failed to resolve its name"},
		{Name: HostDbUpdate, Kind: Bool, Default: "false",
			Doc: "crawl keeps the HostDb current: after each round's updatedb it runs updatehostdb with the round's segment, so the next round's generate can skip failing hosts"},

		{Name: UpdateAdditions, Kind: Bool, Default: "true",
			Doc: "updatedb adds newly discovered URLs to the CrawlDB (db.update.additions.allowed)"},
		{Name: UpdateRetryMax, Kind: Int, Default: "3",
			Doc: "transient fetch failures before a page becomes db_gone (db.fetch.retry.max)"},
		{Name: UpdateMaxInlinks, Kind: Int, Default: "10000",
			Doc: "incoming links counted per URL and update, the highest-cash ones (db.update.max.inlinks); -1 means no limit"},
		{Name: UpdatePurgeGone, Kind: Bool, Default: "false",
			Doc: "drop db_gone pages from the CrawlDB (db.update.purge.404)"},

		{Name: FetcherAgent, Kind: String, Default: "", Env: EnvAgent,
			Doc: "the crawler's name in the User-Agent header and for robots.txt (http.agent.name); fetch requires it"},
		{Name: FetcherServerDelay, Kind: Duration, Default: "5s",
			Doc: "politeness delay between two requests to one host; 0 means none (fetcher.server.delay)"},
		{Name: FetcherMaxCrawlDelay, Kind: Duration, Default: "30s",
			Doc: "robots.txt Crawl-delay honoured up to this; a host asking more is skipped for the round; -1s means no cap (fetcher.max.crawl.delay)"},
		{Name: FetcherMaxRetryAfter, Kind: Duration, Default: "60s",
			Doc: "the Retry-After of a 429 or 503 answer is honoured up to this (the host's next request waits); a host asking more is skipped for the round; -1s means no cap"},
		{Name: FetcherMaxConnections, Kind: Int, Default: "64",
			Doc: "concurrent connections of one fetch task, at most one per host (fetcher.threads.fetch)"},
		{Name: FetcherConnectTimeout, Kind: Duration, Default: "10s",
			Doc: "time allowed to connect to a server"},
		{Name: FetcherReadTimeout, Kind: Duration, Default: "30s",
			Doc: "time allowed for a response, from the request to the last byte (http.timeout)"},
		{Name: FetcherContentLimit, Kind: Size, Default: "1MiB",
			Doc: "bytes of a body kept, after decoding; longer bodies are truncated and marked so (http.content.limit)"},
		{Name: FetcherContentTypes, Kind: List, Default: "text/html,application/xhtml+xml,application/vnd.wap.xhtml+xml,text/plain,application/pdf",
			Doc: "media types whose pages are stored (type/subtype, type/* or */*); a page of another type is recorded fetched, its body neither downloaded nor stored; the default is what the parser parses"},
		{Name: FetcherFollowRedirects, Kind: Int, Default: "0",
			Doc: "redirects followed within the fetch; 0 records them for a later round, as Nutch does (http.redirect.max)"},
		{Name: FetcherTimeLimit, Kind: Duration, Default: "0s",
			Doc: "a fetch task stops after this and leaves the rest for the next round; 0 means no limit (fetcher.timelimit.mins)"},
		{Name: FetcherAllowPrivate, Kind: Bool, Default: "false",
			Doc: "allow fetching from private, loopback and link-local addresses (refused by default)"},
		{Name: FetcherDNSServers, Kind: List, Default: "",
			Doc: "DNS servers (host:port, or host for port 53) for name lookups; empty means the system's (/etc/resolv.conf)"},
		{Name: FetcherDNSCacheSize, Kind: Int, Default: "50000",
			Doc: "host names the resolver caches (least recently used dropped first); -1 turns the cache off"},
		{Name: FetcherDNSRefreshPeriod, Kind: Duration, Default: "30m",
			Doc: "a cached address is kept this long whatever its DNS TTL; the first use after it refreshes it in the background"},
		{Name: FetcherDNSNegativeTTL, Kind: Duration, Default: "60s",
			Doc: "a failed lookup (no such host, server failure, time-out) is cached this long; 0 caches no failure"},
		{Name: FetcherDNSTimeout, Kind: Duration, Default: "2s",
			Doc: "time allowed for one DNS query to one server before it is retried on the next"},
		{Name: FetcherDNSRetries, Kind: Int, Default: "2",
			Doc: "DNS queries sent again after a time-out or server failure, each to another server when there is one"},
		{Name: FetcherDNSIPv6, Kind: Bool, Default: "false",
			Doc: "also look up IPv6 addresses (AAAA records); IPv4 addresses are tried first"},
		{Name: FetcherMaxExceptionsPerHost, Kind: Int, Default: "10",
			Doc: "exceptions (network errors, timeouts, 5xx, 403) on one host before its URLs are left for the next round; -1 means never (fetcher.max.exceptions.per.queue)"},
		{Name: FetcherPolicy, Kind: String, Default: "capacity", Choices: []string{"breadth-first", "performance", "quality", "capacity"},
			Doc: "crawl scheduling policy: capacity (servers by score per second, URLs by score; the fastest in bench/fetch), breadth-first (list order, Nutch's), performance (servers by pages per second), quality (URLs by score)"},
		{Name: FetcherQueueMode, Kind: String, Default: "host", Choices: []string{"host", "ip"},
			Doc: "what politeness applies to: each host, or each IP address (hosts on one address share a connection and a delay) (fetcher.queue.mode)"},
		{Name: FetcherPoliteness, Kind: String, Default: "request", Choices: []string{"request", "connection"},
			Doc: "what the server delay separates: every two requests to a server (Nutch's), or every two connections (a connection's requests go back to back over keep-alive); a robots.txt Crawl-delay always separates requests"},
		{Name: FetcherKeepAlive, Kind: Bool, Default: "true",
			Doc: "reuse a connection for several requests to a server (HTTP/1.1 keep-alive); false means one request per connection"},
		{Name: FetcherThroughputThreshold, Kind: Float, Default: "0",
			Doc: "least pages per second a fetch task must keep, or it ends and leaves the rest for the next round; 0 means no minimum (fetcher.throughput.threshold.pages)"},
		{Name: FetcherThroughputCheckAfter, Kind: Duration, Default: "1m",
			Doc: "time a fetch task runs before its throughput is checked (fetcher.throughput.threshold.check.after)"},
		{Name: FetcherThroughputRetries, Kind: Int, Default: "5",
			Doc: "checks in a row (one a second) that find the throughput low before a fetch task ends (fetcher.throughput.threshold.retries)"},
		{Name: FetcherStallTimeout, Kind: Duration, Default: "0s",
			Doc: "a fetch task in which no request finished for this long abandons the requests in flight, skips the rest and publishes what it fetched (Nutch's hung-threads timeout); 0 means none on the local engine and half of mapreduce.task.timeout (engine.hadoop.taskTimeout, else 10m) with --engine hadoop"},
		{Name: FetcherContentCompression, Kind: String, Default: "zstd-fastest", Choices: []string{"zstd-fastest", "zstd-default", "snappy", "none"},
			Doc: "page compression of the segments' content files: zstd-fastest, zstd-default, snappy or none (standard Parquet codecs DuckDB and Arrow read). Measured on the content of a 5-round crawl of a 20,000-page synthetic web (4,539 body bytes a page; go run ./bench/contentcodec): write CPU per page and bytes per page zstd-fastest 25.5 µs 1,619; zstd-default 36.4 µs 1,550; snappy 19.9 µs 2,105; none 4.0 µs 4,805. zstd-fastest is the default: 30% less CPU than zstd-default for 4.5% more disk, where snappy would take 30% more disk than that"},

		{Name: FetcherParse, Kind: Bool, Default: "false",
			Doc: "fetch parses each page as it fetches it, with the parser.* settings, and writes the segment's parse_data, parse_text and crawl_parse itself (Nutch's fetcher.parse): the segment is parsed when the fetch is published, with no parse job to run"},
		{Name: FetcherParseInCrawl, Kind: Bool, Default: "true",
			Doc: "crawl parses each page in the fetch job as it is fetched (fetcher.parse) rather than in a parse job after the fetch (false, as Nutch's crawl script does); the rows written are the same, the parse job's reading and shuffling of every page's content is saved"},
		{Name: FetcherWARC, Kind: Bool, Default: "false",
			Doc: "fetch (and crawl) also archive every response and its request as WARC/1.1 records (ISO 28500:2017) in the segment's warc directory, each fetch task its own .warc.gz files with a CDXJ index beside each, as pywb and OpenWayback read them"},
		{Name: WARCMaxFileSize, Kind: Size, Default: "1000000000",
			Doc: "size at which a task starts a new WARC file (Heritrix's 1 GB)"},
		{Name: WARCPrefix, Kind: String, Default: "trawl",
			Doc: "first part of WARC file names, {prefix}-{timestamp}-{serial}-{host}.warc.gz as Heritrix names them"},

		{Name: ParserMaxOutlinks, Kind: Int, Default: "100",
			Doc: "most outlinks kept per page, at least 1; -1 means no limit (db.max.outlinks.per.page)"},
		{Name: ParserSignature, Kind: String, Default: "md5", Choices: []string{"md5", "text-profile"},
			Doc: "signature for change detection: md5 (of the text) or text-profile (ignores trivial edits) (db.signature.class)"},
		{Name: ParserEmbeddedLinks, Kind: Bool, Default: "false",
			Doc: "also take the resources a page embeds (img, script, source, video, audio, embed src; link to a style sheet, icon, preload or manifest) as outlinks, as wget --page-requisites; the default suffix filter still refuses images, style sheets and scripts (set urlfilter.suffix=false and fetcher.contentTypes=*/* to fetch and store them)"},
		{Name: ParserTypes, Kind: List, Default: "text/html,application/xhtml+xml,application/vnd.wap.xhtml+xml,text/plain,application/pdf",
			Doc: "media types the parser parses, of its own (the default: HTML, plain text and PDF); a stored page of a type left out keeps its content but gets no text or outlinks, and the MD5 of its body as its signature, as in Nutch without that type's parse plugin (plugin.includes); leaving PDF out stores PDFs without the CPU of reading their text"},
		{Name: ParserIgnoreInternalLinks, Kind: Bool, Default: "false",
			Doc: "drop outlinks to the page's own host (db.ignore.internal.links)"},
		{Name: ParserIgnoreExternalLinks, Kind: Bool, Default: "false",
			Doc: "drop outlinks to other hosts (db.ignore.external.links)"},
		{Name: ParserSkipTruncated, Kind: Bool, Default: "true",
			Doc: "do not parse pages cut at fetcher.contentLimit: their text and links are partial (parser.skip.truncated)"},

		{Name: LinkDBUpdate, Kind: Bool, Default: "false",
			Doc: "crawl keeps the LinkDB current: after each round's updatedb it inverts the links of every parsed segment not yet in the LinkDB"},
		{Name: LinkDBIgnoreInternalHost, Kind: Bool, Default: "false",
			Doc: "leave links between pages of one host out of the LinkDB (Nutch's linkdb.ignore.internal.links, whose default is true; off here because linkrank's PageRank needs every link)"},
		{Name: LinkDBIgnoreInternalDomain, Kind: Bool, Default: "false",
			Doc: "leave links within one registered domain out of the LinkDB"},
		{Name: LinkDBMaxInlinks, Kind: Int, Default: "10000",
			Doc: "most inlinks kept per URL in the LinkDB, the first by linking URL (linkdb.max.inlinks)"},
		{Name: LinkDBMaxAnchorLength, Kind: Int, Default: "100",
			Doc: "longest anchor text kept per link, in bytes (linkdb.max.anchor.length)"},
		{Name: ScoringName, Kind: String, Default: "opic", Choices: []string{"opic", "linkrank"},
			Doc: "how pages are scored for generate's top-N: opic (updatedb adds each link's OPIC cash, Nutch's scoring-opic) or linkrank (crawl keeps the LinkDB and runs linkrank's PageRank after every round; updatedb adds no cash)"},
		{Name: TopicFiles, Kind: List, Default: "",
			Doc: "sample-text files describing the topic of a focused crawl (each split into samples at blank lines); empty: no topic"},
		{Name: TopicLinkThreshold, Kind: Float, Default: "0.1",
			Doc: "focused crawl: links whose relevance RW (anchor text, URL words) is under this are not followed (the topic crawler's c)"},
		{Name: TopicPageThreshold, Kind: Float, Default: "0.15",
			Doc: "focused crawl: pages whose relevance (cosine with the topic) is under this are marked off topic (the topic crawler's d)"},
		{Name: TopicMaxOffTopicHops, Kind: Int, Default: "0",
			Doc: "focused crawl: links of off-topic pages are followed while the off-topic pages in a row stay within this (tunnelling; 0: none)"},
		{Name: LinkRankDamping, Kind: Float, Default: "0.85",
			Doc: "linkrank: probability that the random surfer follows a link, in (0, 1)"},
		{Name: LinkRankMaxIterations, Kind: Int, Default: "50",
			Doc: "linkrank: most power iterations (Nutch's link.analyze.num.iterations is 10)"},
		{Name: LinkRankTolerance, Kind: Float, Default: "1e-4",
			Doc: "linkrank: iterations end once the L1 change of the rank vector is below this"},
	}
}
