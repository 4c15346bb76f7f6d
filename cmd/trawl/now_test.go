package main

import (
	"testing"
	"time"
)

func TestParseNow(t *testing.T) {
	wall := time.Date(2026, 11, 21, 10, 30, 0, 0, time.FixedZone("X", 3600))
	utc := wall.UTC()
	for in, want := range map[string]time.Time{
		"":                          utc,
		"now":                       utc,
		"+7d":                       utc.Add(7 * 24 * time.Hour),
		"+12h":                      utc.Add(12 * time.Hour),
		"-1d12h":                    utc.Add(-36 * time.Hour),
		"2026-12-01":                time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-01T08:00:00+02:00": time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC),
		"2026-12-01T08:00:00Z":      time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
		"2026-12-01 08:00":          time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
	} {
		got, err := parseNow(in, wall)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("parseNow(%q) = %v, %v; want %v UTC", in, got, err, want)
		}
	}
	for _, in := range []string{"tomorrow", "+7", "+", "2026-13-01", "7d"} {
		if _, err := parseNow(in, wall); err == nil {
			t.Errorf("parseNow(%q): no error", in)
		}
	}
}
