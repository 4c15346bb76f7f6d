package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/trawl/trawl/config"
)

// parseNow parses the --now flag: empty or "now" for the wall clock; an
// offset from the wall clock, "+7d", "+12h", "-1d12h"; an RFC 3339 time
// ("2026-11-21T10:30:00Z"); a local-less date-time taken as UTC
// ("2026-11-21T10:30:00", "2026-11-21 10:30"); or a date, taken as UTC
// midnight ("2026-11-21"). The result is in UTC.
func parseNow(s string, wall time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	wall = wall.UTC()
	if s == "" || s == "now" {
		return wall, nil
	}
	if s[0] == '+' || s[0] == '-' {
		d, err := config.ParseDuration(s[1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("--now %s: %w", s, err)
		}
		if s[0] == '-' {
			d = -d
		}
		return wall.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--now %q: want an RFC 3339 time (2026-11-21T10:30:00Z), a date (2026-11-21) or an offset from now (+7d, +12h)", s)
}
