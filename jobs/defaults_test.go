package jobs

import (
	"testing"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/parser"
)

// TestDefaultsAreTheSettings checks that what a zero option means in this
// package is the default of the matching setting in the settings table
// (config.Settings), so that a library caller and the CLI get the same
// crawl (the fetch options have their own field-by-field test).
func TestDefaultsAreTheSettings(t *testing.T) {
	cfg := config.Default()
	for _, c := range []struct {
		setting   string
		lib, want any
	}{
		{config.GenerateDelay, DefaultGenerateDelay, cfg.Duration(config.GenerateDelay)},
		{config.InjectScore, float64(DefaultInjectScore), cfg.Float(config.InjectScore)},
		{config.UpdateRetryMax, DefaultRetryMax, cfg.Int(config.UpdateRetryMax)},
		{config.UpdateMaxInlinks, DefaultMaxInlinks, cfg.Int(config.UpdateMaxInlinks)},
		{config.ParserMaxOutlinks, parser.DefaultMaxOutlinks, cfg.Int(config.ParserMaxOutlinks)},
		{config.FetcherPolicy, DefaultFetchPolicy, cfg.String(config.FetcherPolicy)},
		{config.LinkDBMaxInlinks, DefaultLinkDBLimit, cfg.Int(config.LinkDBMaxInlinks)},
		{config.LinkDBMaxAnchorLength, linkdb.MaxAnchorLength, cfg.Int(config.LinkDBMaxAnchorLength)},
		{config.LinkRankDamping, DefaultLinkRankDamping, cfg.Float(config.LinkRankDamping)},
		{config.LinkRankMaxIterations, DefaultLinkRankIterations, cfg.Int(config.LinkRankMaxIterations)},
		{config.LinkRankTolerance, DefaultLinkRankTolerance, cfg.Float(config.LinkRankTolerance)},
		{config.TopicLinkThreshold, DefaultLinkThreshold, cfg.Float(config.TopicLinkThreshold)},
		{config.TopicPageThreshold, DefaultPageThreshold, cfg.Float(config.TopicPageThreshold)},
		{config.ScoringName, ScoringOPIC, cfg.String(config.ScoringName)},
	} {
		if c.lib != c.want {
			t.Errorf("%s: the library's default is %v, the setting's %v", c.setting, c.lib, c.want)
		}
	}
}
