package jobs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/resolver"
)

// TestDefaultFetchOptionsAreTheSettings: DefaultFetchOptions is, field by
// field, the defaults of the settings table (config.Settings), so that
// the library and the CLI fetch alike. Every field of FetchOptions and of
// its DNS configuration that a setting sets is compared; a new field
// must be added here.
func TestDefaultFetchOptionsAreTheSettings(t *testing.T) {
	cfg := config.Default()
	d := DefaultFetchOptions()
	checks := map[string]struct{ got, want any }{
		"Agent":                {d.Agent, cfg.String(config.FetcherAgent)},
		"ServerDelay":          {d.ServerDelay, cfg.Duration(config.FetcherServerDelay)},
		"NoServerDelay":        {d.NoServerDelay, cfg.Duration(config.FetcherServerDelay) == 0},
		"MaxCrawlDelay":        {d.MaxCrawlDelay, cfg.Duration(config.FetcherMaxCrawlDelay)},
		"NoCrawlDelayCap":      {d.NoCrawlDelayCap, cfg.Duration(config.FetcherMaxCrawlDelay) < 0},
		"MaxRetryAfter":        {d.MaxRetryAfter, cfg.Duration(config.FetcherMaxRetryAfter)},
		"NoRetryAfterCap":      {d.NoRetryAfterCap, cfg.Duration(config.FetcherMaxRetryAfter) < 0},
		"MaxConnections":       {d.MaxConnections, cfg.Int(config.FetcherMaxConnections)},
		"ConnectTimeout":       {d.ConnectTimeout, cfg.Duration(config.FetcherConnectTimeout)},
		"ReadTimeout":          {d.ReadTimeout, cfg.Duration(config.FetcherReadTimeout)},
		"ContentLimit":         {d.ContentLimit, cfg.Size(config.FetcherContentLimit)},
		"ContentTypes":         {d.ContentTypes, cfg.List(config.FetcherContentTypes)},
		"FollowRedirects":      {d.FollowRedirects, cfg.Int(config.FetcherFollowRedirects)},
		"TimeLimit":            {d.TimeLimit, cfg.Duration(config.FetcherTimeLimit)},
		"AllowPrivate":         {d.AllowPrivate, cfg.Bool(config.FetcherAllowPrivate)},
		"DNSServers":           {len(d.DNSServers), len(cfg.List(config.FetcherDNSServers))},
		"MaxExceptionsPerHost": {d.MaxExceptionsPerHost, cfg.Int(config.FetcherMaxExceptionsPerHost)},
		"NoExceptionLimit":     {d.NoExceptionLimit, cfg.Int(config.FetcherMaxExceptionsPerHost) == -1},
		"Policy":               {d.Policy, cfg.String(config.FetcherPolicy)},
		"QueueMode":            {d.QueueMode, cfg.String(config.FetcherQueueMode)},
		"Politeness":           {d.Politeness, cfg.String(config.FetcherPoliteness)},
		"DisableKeepAlive":     {d.DisableKeepAlive, !cfg.Bool(config.FetcherKeepAlive)},
		"ThroughputThreshold":  {d.ThroughputThreshold, cfg.Float(config.FetcherThroughputThreshold)},
		"ThroughputCheckAfter": {d.ThroughputCheckAfter, cfg.Duration(config.FetcherThroughputCheckAfter)},
		"ThroughputRetries":    {d.ThroughputRetries, cfg.Int(config.FetcherThroughputRetries)},
		"StallTimeout":         {d.StallTimeout, cfg.Duration(config.FetcherStallTimeout)},
		"ProgressInterval":     {d.ProgressInterval, cfg.Duration(config.EngineProgressInterval)},
		"NoProgressLog":        {d.NoProgressLog, cfg.Duration(config.EngineProgressInterval) <= 0},
		"ContentCompression":   {d.ContentCompression, cfg.String(config.FetcherContentCompression)},
		"Parse":                {d.Parse != nil, cfg.Bool(config.FetcherParse)},
		"WARC":                 {d.WARC != nil, cfg.Bool(config.FetcherWARC)},
		"DNS.CacheSize":        {d.DNS.CacheSize, cfg.Int(config.FetcherDNSCacheSize)},
		"DNS.RefreshPeriod":    {d.DNS.RefreshPeriod, cfg.Duration(config.FetcherDNSRefreshPeriod)},
		"DNS.NegativeTTL":      {d.DNS.NegativeTTL, cfg.Duration(config.FetcherDNSNegativeTTL)},
		"DNS.NoNegativeCache":  {d.DNS.NoNegativeCache, cfg.Duration(config.FetcherDNSNegativeTTL) == 0},
		"DNS.Timeout":          {d.DNS.Timeout, cfg.Duration(config.FetcherDNSTimeout)},
		"DNS.Retries":          {d.DNS.Retries, cfg.Int(config.FetcherDNSRetries)},
		"DNS.NoRetries":        {d.DNS.NoRetries, cfg.Int(config.FetcherDNSRetries) == 0},
		"DNS.IPv6":             {d.DNS.IPv6, cfg.Bool(config.FetcherDNSIPv6)},
	}
	// Fields no setting sets: the segment and the simulated start come
	// from the command line, DNS.Servers is DNSServers.
	unset := map[string]bool{"Segment": true, "Now": true, "DNS": true, "DNS.Servers": true}
	for name, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("DefaultFetchOptions().%s = %v, the settings' default is %v", name, c.got, c.want)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(FetchOptions{})) {
		if _, ok := checks[f.Name]; !ok && !unset[f.Name] {
			t.Errorf("FetchOptions.%s is not compared with its setting", f.Name)
		}
	}
	// The resolver's fields without a setting are left at their zero
	// values (the resolver's defaults).
	for _, f := range reflect.VisibleFields(reflect.TypeOf(resolver.Config{})) {
		v := reflect.ValueOf(d.DNS).FieldByIndex(f.Index)
		if _, ok := checks["DNS."+f.Name]; !ok && !v.IsZero() {
			t.Errorf("DefaultFetchOptions().DNS.%s = %v, which no setting gives", f.Name, v)
		}
	}
}

// TestFetchOptionsZeroIsDefault: a zero field means what
// DefaultFetchOptions spells out: both give the same fetcher.
func TestFetchOptionsZeroIsDefault(t *testing.T) {
	effective := func(o FetchOptions) fetcher.Options {
		t.Helper()
		fo, err := o.fetcherOptions()
		if err != nil {
			t.Fatal(err)
		}
		f, err := fetcher.New(fo)
		if err != nil {
			t.Fatal(err)
		}
		eff := f.Options()
		eff.Clock, eff.Log, eff.Count, eff.Resolver = nil, nil, nil, nil
		return eff
	}
	d := DefaultFetchOptions()
	d.Agent = "trawl-test"
	zero := FetchOptions{Agent: "trawl-test"}
	if got, want := effective(zero), effective(d); !reflect.DeepEqual(got, want) {
		t.Errorf("zero options give fetcher options\n%+v\nthe defaults\n%+v", got, want)
	}
	if p, _ := zero.fetcherOptions(); p.Policy != (fetcher.Capacity{}) {
		t.Errorf("the zero Policy is %T, want the capacity policy (fetcher.policy's default)", p.Policy)
	}
}

// TestFetchOptionsValidate: the checks the CLI, Fetch and the fetch job
// share.
func TestFetchOptionsValidate(t *testing.T) {
	ok := FetchOptions{Agent: "trawl-test", DNSServers: []string{"127.0.0.1:53"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	if err := DefaultFetchOptions().Validate(); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("options without an agent: %v", err)
	}
	for name, change := range map[string]func(o *FetchOptions){
		"blank agent":              func(o *FetchOptions) { o.Agent = " " },
		"negative server delay":    func(o *FetchOptions) { o.ServerDelay = -time.Second },
		"delay and none":           func(o *FetchOptions) { o.ServerDelay, o.NoServerDelay = time.Second, true },
		"negative crawl-delay cap": func(o *FetchOptions) { o.MaxCrawlDelay = -1 },
		"cap and no cap":           func(o *FetchOptions) { o.MaxCrawlDelay, o.NoCrawlDelayCap = time.Second, true },
		"negative exceptions":      func(o *FetchOptions) { o.MaxExceptionsPerHost = -1 },
		"limit and no limit":       func(o *FetchOptions) { o.MaxExceptionsPerHost, o.NoExceptionLimit = 3, true },
		"negative connections":     func(o *FetchOptions) { o.MaxConnections = -1 },
		"negative timeout":         func(o *FetchOptions) { o.ReadTimeout = -time.Second },
		"negative content limit":   func(o *FetchOptions) { o.ContentLimit = -1 },
		"negative redirects":       func(o *FetchOptions) { o.FollowRedirects = -1 },
		"negative time limit":      func(o *FetchOptions) { o.TimeLimit = -time.Second },
		"negative threshold":       func(o *FetchOptions) { o.ThroughputThreshold = -1 },
		"negative retries":         func(o *FetchOptions) { o.ThroughputRetries = -1 },
		"negative stall timeout":   func(o *FetchOptions) { o.StallTimeout = -time.Second },
		"negative progress":        func(o *FetchOptions) { o.ProgressInterval = -time.Second },
		"progress and none":        func(o *FetchOptions) { o.ProgressInterval, o.NoProgressLog = time.Second, true },
		"unknown policy":           func(o *FetchOptions) { o.Policy = "fastest" },
		"unknown queue mode":       func(o *FetchOptions) { o.QueueMode = "domain" },
		"unknown politeness":       func(o *FetchOptions) { o.Politeness = "session" },
		"DNS server name":          func(o *FetchOptions) { o.DNSServers = []string{"dns.example.com"} },
		"negative DNS TTL":         func(o *FetchOptions) { o.DNS.NegativeTTL = -time.Second },
		"DNS TTL and none":         func(o *FetchOptions) { o.DNS.NegativeTTL, o.DNS.NoNegativeCache = time.Second, true },
		"negative DNS retries":     func(o *FetchOptions) { o.DNS.Retries = -1 },
	} {
		o := ok
		change(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, o)
		}
		// The job checks its options too, as a task rebuilding it does.
		o.Segment = "/nonexistent/segment"
		if _, err := (fetchSpec{Options: o}).Job(); err == nil {
			t.Errorf("%s: the fetch job accepted %+v", name, o)
		}
	}
}

// TestFetchSpecRoundTrip: the fetch job's spec travels to tasks as JSON
// whole, but for its interrupt channel.
func TestFetchSpecRoundTrip(t *testing.T) {
	o := DefaultFetchOptions()
	o.Segment, o.Agent, o.NoServerDelay, o.ServerDelay = "hdfs://nn/crawl/segments/20260101000000", "trawl-test", true, 0
	o.DNSServers, o.DNS.NoRetries, o.DNS.Retries = []string{"127.0.0.1:5353"}, true, 0
	o.Now = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	stop := make(chan struct{})
	s := fetchSpec{Options: o, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Stop: stop}
	conf, err := mapreduce.SpecConf(s)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(conf[mapreduce.ConfSpec]), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["Stop"]; ok {
		t.Errorf("the spec's JSON carries the stop channel: %s", conf[mapreduce.ConfSpec])
	}
	s.Stop = nil // not in the JSON: a task elsewhere has no interrupt channel
	checkRoundTrip(t, s)
}
