package jobs

import (
	"testing"

	"github.com/trawl/trawl/config"
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
	} {
		if c.lib != c.want {
			t.Errorf("%s: the library's default is %v, the setting's %v", c.setting, c.lib, c.want)
		}
	}
}
