package main

import (
	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

// warcOptions returns the WARC options of the warc.* settings.
func (s *session) warcOptions() (jobs.WARCOptions, error) {
	o := jobs.WARCOptions{MaxFileSize: s.cfg.Size(config.WARCMaxFileSize), Prefix: s.cfg.String(config.WARCPrefix)}
	if o.MaxFileSize < 1 {
		return o, usageErrorf("%s must be at least 1 byte", config.WARCMaxFileSize)
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("warc.* settings: %w", err)
	}
	return o, nil
}
