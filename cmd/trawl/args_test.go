package main

import (
	"strings"
	"testing"
)

func TestReorderArgs(t *testing.T) {
	app := newApp(&stdio{})
	for in, want := range map[string]string{
		"trawl readseg dump SEG --dir crawl_fetch --limit 3": "trawl readseg dump --dir crawl_fetch --limit 3 SEG",
		"trawl --crawl c readseg dump SEG -o f":              "trawl --crawl c readseg dump -o f SEG",
		"trawl inject seeds.txt --overwrite more.txt":        "trawl inject --overwrite seeds.txt more.txt",
		"trawl --crawl inject inject seeds.txt":              "trawl --crawl inject inject seeds.txt",
		"trawl updatedb SEG --no-additions -- --weird-name":  "trawl updatedb --no-additions SEG -- --weird-name",
		"trawl readdb url http://x/ --crawl=c":               "trawl readdb url --crawl=c http://x/",
		"trawl generate --topN 5 --now +1d":                  "trawl generate --topN 5 --now +1d",
		"trawl readdb top 5 --help":                          "trawl readdb top --help 5",
		"trawl nosuch --crawl c":                             "trawl --crawl c nosuch",
	} {
		got := strings.Join(reorderArgs(app, strings.Fields(in)), " ")
		if got != want {
			t.Errorf("reorder(%q) = %q, want %q", in, got, want)
		}
	}
}
