package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkDBCommands crawls two rounds of a small synthetic web with
// --linkdb, then reads the LinkDB back with readlinkdb (stats, url, dump
// as CSV and JSON) and runs invertlinks by hand: --new finds nothing left,
// --dir with --ignore-internal-host adds nothing new.
func TestLinkDBCommands(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	crawl := filepath.Join(r.dir, "crawl")
	res := r.ok("--log-level", "warn", "--crawl", crawl, "crawl", "--simweb", "--hosts", "5", "--pages", "80", "--latency", "0",
		"--server-delay", "10ms", "--time-limit", "5s", "--rounds", "2", "--linkdb")
	if !strings.Contains(res.stdout, "round 2") {
		t.Fatalf("crawl output:\n%s", res.stdout)
	}
	stats := r.ok("--crawl", crawl, "readlinkdb", "stats", "--top", "1").stdout
	lines := strings.Split(strings.TrimSpace(stats), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "inlinks:\t") || lines[2] != "most inlinks:" {
		t.Fatalf("readlinkdb stats:\n%s", stats)
	}
	top := strings.Split(strings.TrimSpace(lines[3]), "\t")[1]

	// readlinkdb url lists as many inlinks as the dump has rows to it.
	out := r.ok("--crawl", crawl, "readlinkdb", "url", top).stdout
	dump := r.ok("--crawl", crawl, "readlinkdb", "dump", "--format", "csv").stdout
	rows, err := csv.NewReader(strings.NewReader(dump)).ReadAll()
	if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != "to,from,anchor" {
		t.Fatalf("readlinkdb dump csv: %v\n%.500s", err, dump)
	}
	n := 0
	for _, row := range rows[1:] {
		if row[0] == top {
			n++
			if !strings.Contains(out, "fromUrl: "+row[1]+" ") {
				t.Errorf("readlinkdb url lacks %s", row[1])
			}
		}
	}
	if n == 0 || !strings.HasPrefix(out, top+"\t") || !strings.Contains(out, "top anchors:") {
		t.Errorf("readlinkdb url %s (%d rows in the dump):\n%s", top, n, out)
	}
	if js := r.ok("--crawl", crawl, "readlinkdb", "dump", "--format", "json", "--limit", "3").stdout; strings.Count(js, "\n") != 3 || !strings.Contains(js, `"from":`) {
		t.Errorf("readlinkdb dump json:\n%s", js)
	}
	r.fails(exitNothingToDo, "--crawl", crawl, "readlinkdb", "url", "http://nowhere.example/")

	// Every segment is inverted already; inverting them again changes
	// nothing.
	r.fails(exitNothingToDo, "--crawl", crawl, "invertlinks", "--new")
	r.fails(exitUsage, "--crawl", crawl, "invertlinks")
	again := r.ok("--log-level", "warn", "--crawl", crawl, "invertlinks", "--dir", "--ignore-internal-host").stdout
	if !strings.Contains(again, "LinkDB inlinks:\t"+strings.TrimPrefix(lines[0], "inlinks:\t")+"\n") {
		t.Errorf("invertlinks --dir changed the LinkDB (had %s):\n%s", lines[0], again)
	}

	// linkrank scores every CrawlDB URL; the scores average 1.
	rep := statsJSON(t, r, crawl)
	lr := r.ok("--log-level", "warn", "--crawl", crawl, "linkrank", "--iterations", "100", "--tolerance", "1e-9").stdout
	if !strings.Contains(lr, fmt.Sprintf("URLs ranked:\t%d\n", rep.Total)) || !strings.Contains(lr, ", converged") {
		t.Errorf("linkrank (%d CrawlDB rows):\n%s", rep.Total, lr)
	}
	sum := 0.0
	for _, row := range dumpRows(t, r, crawl) {
		f, ok := row["score"].(float64)
		if !ok {
			t.Fatalf("score %v", row["score"])
		}
		sum += f
	}
	if math.Abs(sum/float64(rep.Total)-1) > 1e-3 {
		t.Errorf("linkrank scores average %v, want 1", sum/float64(rep.Total))
	}
	r.fails(exitUsage, "--crawl", crawl, "linkrank", "--damping", "1.5")
}
