package main

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// trapsLogRecord is one JSON log line.
type trapsLogRecord struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// trapsStdLogPrefix matches the log package's default date and time prefix.
var trapsStdLogPrefix = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} `)

// trapsJSONLogLines checks that every line of stderr that is a log line is
// JSON, and returns them. Lines that are no log line are skipped: the
// engine's counter table and trawl's final "trawl: " error line.
func trapsJSONLogLines(t *testing.T, stderr string) []trapsLogRecord {
	t.Helper()
	var recs []trapsLogRecord
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.TrimSpace(line) == "", strings.HasPrefix(line, "trawl: "):
			continue
		case strings.HasPrefix(line, "{"):
			var r trapsLogRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil || r.Msg == "" || r.Level == "" {
				t.Errorf("log line is not a JSON record (%v): %s", err, line)
				continue
			}
			recs = append(recs, r)
		case strings.Contains(line, "level=") || strings.Contains(line, "msg=") || trapsStdLogPrefix.MatchString(line):
			t.Errorf("log line is not JSON: %s", line)
		}
	}
	return recs
}

func trapsFindRecord(recs []trapsLogRecord, level, msg string) bool {
	for _, r := range recs {
		if r.Level == level && strings.Contains(r.Msg, msg) {
			return true
		}
	}
	return false
}

// trapsSimulateCrash leaves the CrawlDB of crawl as a crash during an install
// and during a job would: no current version but the old one, and a stale
// stage of an engine job.
func trapsSimulateCrash(t *testing.T, crawl string) {
	t.Helper()
	db := filepath.Join(crawl, "crawldb")
	if err := os.Rename(filepath.Join(db, "current"), filepath.Join(db, "old")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(db, "_temporary", "attempt_x", "crawldb-new", "part-r-00000.parquet"), "half written")
}

// TestLogFormatJSONRecovery runs the app with --log-format json through a
// CrawlDB recovery, whose warnings the crawldb package logs through
// slog.Default(): they must come out as JSON on the command's stderr like
// every other log line.
func TestLogFormatJSONRecovery(t *testing.T) {
	dir := t.TempDir()
	crawl := filepath.Join(dir, "crawl")
	seeds := filepath.Join(dir, "seeds.txt")
	writeTestFile(t, seeds, "http://a.example/\n")
	if code, _, stderr := trapsRun(t, "--log-format", "json", "--crawl", crawl, "inject", seeds); code != exitOK {
		t.Fatalf("inject: exit %d\n%s", code, stderr)
	}

	// Warnings only: every stderr line is a JSON record.
	trapsSimulateCrash(t, crawl)
	code, _, stderr := trapsRun(t, "--log-format", "json", "--log-level", "warn", "--crawl", crawl, "inject", seeds)
	if code != exitOK {
		t.Fatalf("inject after a crash: exit %d\n%s", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %s", line)
		}
	}
	recs := trapsJSONLogLines(t, stderr)
	if !trapsFindRecord(recs, "WARN", "restored the previous version") {
		t.Errorf("no JSON warning about the restored CrawlDB version on stderr:\n%s", stderr)
	}

	// Info too: the recovery's info lines are JSON as well.
	trapsSimulateCrash(t, crawl)
	code, _, stderr = trapsRun(t, "--log-format", "json", "--crawl", crawl, "inject", seeds)
	if code != exitOK {
		t.Fatalf("inject after a crash: exit %d\n%s", code, stderr)
	}
	recs = trapsJSONLogLines(t, stderr)
	if !trapsFindRecord(recs, "WARN", "restored the previous version") || !trapsFindRecord(recs, "INFO", "removed a stale temporary directory") {
		t.Errorf("no JSON records of the recovery on stderr:\n%s", stderr)
	}
	if !trapsFindRecord(recs, "INFO", "inject done") {
		t.Errorf("no JSON record of the inject on stderr:\n%s", stderr)
	}

	// The same run with text logs: text, and the process's default
	// logger is back afterwards.
	prev := slog.Default()
	trapsSimulateCrash(t, crawl)
	code, _, stderr = trapsRun(t, "--crawl", crawl, "inject", seeds)
	if code != exitOK {
		t.Fatalf("inject after a crash: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `level=WARN msg="crawldb: restored the previous version`) {
		t.Errorf("no text warning about the restored CrawlDB version on stderr:\n%s", stderr)
	}
	if slog.Default() != prev {
		t.Error("the command left its logger as the default one")
	}
}

// TestUseLogger checks that useLogger routes slog.Default() and the log
// package to the command's handler, and puts everything back.
func TestUseLogger(t *testing.T) {
	prev := slog.Default()
	prevW, prevFlags, prevPrefix := log.Writer(), log.Flags(), log.Prefix()
	var buf bytes.Buffer
	restore := useLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	slog.Warn("through slog", "k", 1)
	log.Printf("through the log package")
	restore()
	recs := trapsJSONLogLines(t, buf.String())
	if !trapsFindRecord(recs, "WARN", "through slog") || !trapsFindRecord(recs, "INFO", "through the log package") {
		t.Errorf("records %+v, from:\n%s", recs, buf.String())
	}
	if slog.Default() != prev || log.Writer() != prevW || log.Flags() != prevFlags || log.Prefix() != prevPrefix {
		t.Error("useLogger's restore did not put back the default logger and the log package's settings")
	}

	// Nested, as two commands run one inside the other would be.
	var outer, inner bytes.Buffer
	restoreOuter := useLogger(slog.New(slog.NewJSONHandler(&outer, nil)))
	restoreInner := useLogger(slog.New(slog.NewTextHandler(&inner, nil)))
	log.Print("inner")
	restoreInner()
	log.Print("outer")
	restoreOuter()
	if !strings.Contains(inner.String(), "msg=inner") || strings.Contains(inner.String(), "outer") {
		t.Errorf("inner logger got:\n%s", inner.String())
	}
	if recs := trapsJSONLogLines(t, outer.String()); len(recs) != 1 || recs[0].Msg != "outer" {
		t.Errorf("outer logger got:\n%s", outer.String())
	}
	if slog.Default() != prev || log.Writer() != prevW || log.Flags() != prevFlags {
		t.Error("nested restores did not put everything back")
	}
}
