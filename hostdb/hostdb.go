// Package hostdb is trawl's HostDb, Nutch's per-host database: for every
// host of the crawl, how many of its URLs the CrawlDB holds in each
// status, and what its fetches went through (the failure streak, robots.txt
// and DNS failures, the last fetch). The updatehostdb job (package jobs,
// Nutch's UpdateHostDb) builds it from the CrawlDB and segments'
// crawl_fetch, merged with its previous version; readhostdb reads it
// (Nutch's ReadHostDb); generate can skip the URLs of failing hosts
// (Nutch's generate.hostdb).
//
// # Layout
//
// A HostDb is a directory (crawl/hostdb) laid out as a CrawlDB and a
// LinkDB are: current/ holds zstd Parquet part files of Host rows,
// hash-partitioned by host name and sorted by it within each part, and a
// VersionFile naming the version; a new version is written beside it and
// installed with one rename, so a failed job leaves the HostDb as it was.
package hostdb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/storage"
)

// Host is the HostDb record of one host (Nutch's HostDatum). Times are UTC
// at millisecond precision; the zero time means "never" and is stored as
// null.
type Host struct {
	// Host is the host name (lower case, no port), the record's key.
	Host string `parquet:"host"`
	// Homepage is the host's root URL (path "/", no query) if the CrawlDB
	// knows it, the https one when it knows both (Nutch's homepage).
	Homepage string `parquet:"homepage"`

	// The CrawlDB's URLs of the host by status (Nutch's per-status
	// counts), as of the CrawlDB the HostDb was last built from.
	Unfetched   int64 `parquet:"unfetched"`
	Fetched     int64 `parquet:"fetched"`
	Gone        int64 `parquet:"gone"`
	RedirTemp   int64 `parquet:"redir_temp"`
	RedirPerm   int64 `parquet:"redir_perm"`
	NotModified int64 `parquet:"not_modified"`
	Duplicate   int64 `parquet:"duplicate"`
	Orphan      int64 `parquet:"orphan"`

	// The fetches of the host recorded in the segments' crawl_fetch that
	// updatehostdb has read, over all its runs. Successes counts the
	// fetches the server answered (a page, not modified, a redirect, gone);
	// Failures those that failed (fetch_retry: a network error, a time-out,
	// a DNS failure, a 5xx, 403 or 429; and a URL skipped because
	// robots.txt was unavailable).
	Successes int64 `parquet:"successes"`
	Failures  int64 `parquet:"failures"`
	// FailureStreak counts the host's failed fetches since its last
	// success, in fetch time order (a success resets it). generate can
	// skip hosts whose streak is at least generate.hostdb.maxFailureStreak.
	FailureStreak int64 `parquet:"failure_streak"`
	// RobotsDenied counts the URLs robots.txt disallowed
	// (fetch_robots_denied); RobotsFailures the fetches that failed
	// because robots.txt itself could not be fetched (unreachable, or a
	// 5xx that defers the host); RobotsFailed says the host's last fetch
	// attempt was such a failure.
	RobotsDenied   int64 `parquet:"robots_denied"`
	RobotsFailures int64 `parquet:"robots_failures"`
	RobotsFailed   bool  `parquet:"robots_failed"`
	// DNSFailures counts the fetches that failed because the host name
	// did not resolve, and LastDNSFailure is the latest of them.
	DNSFailures    int64     `parquet:"dns_failures"`
	LastDNSFailure time.Time `parquet:"last_dns_failure,optional,timestamp(millisecond)"`
	// LastFetch is the host's latest fetch attempt (success or failure);
	// LastSuccess its latest success.
	LastFetch   time.Time `parquet:"last_fetch,optional,timestamp(millisecond)"`
	LastSuccess time.Time `parquet:"last_success,optional,timestamp(millisecond)"`
}

// URLs returns the number of the host's URLs in the CrawlDB.
func (h Host) URLs() int64 {
	return h.Unfetched + h.Fetched + h.Gone + h.RedirTemp + h.RedirPerm + h.NotModified + h.Duplicate + h.Orphan
}

// DNSFailed reports whether the host's last fetch attempt failed to
// resolve its name.
func (h Host) DNSFailed() bool {
	return !h.LastDNSFailure.IsZero() && !h.LastDNSFailure.Before(h.LastFetch)
}

// StatusColumns are the names of the per-status count columns, in the
// order of Host's fields, as readhostdb prints them: the CrawlDB status
// names (crawldb.Status.String) they count.
var StatusColumns = []string{"db_unfetched", "db_fetched", "db_gone", "db_redir_temp", "db_redir_perm",
	"db_notmodified", "db_duplicate", "db_orphan"}

// StatusCounts returns the host's per-status counts in StatusColumns'
// order.
func (h Host) StatusCounts() []int64 {
	return []int64{h.Unfetched, h.Fetched, h.Gone, h.RedirTemp, h.RedirPerm, h.NotModified, h.Duplicate, h.Orphan}
}

// The directories and files inside a HostDb directory.
const (
	// CurrentName holds the HostDb's part files.
	CurrentName = "current"
	// OldName holds the previous version while a new one is installed.
	OldName = "old"
	// VersionFile, inside current/, holds the version's name: the UTC
	// time updatehostdb built it, as yyyyMMddHHmmss.SSS.
	VersionFile = "_version"
	// VersionLayout is the time layout of a version name.
	VersionLayout = "20060102150405.000"
)

// Current returns the directory of the HostDb's current part files.
func Current(hostdbDir string) string { return path.Join(hostdbDir, CurrentName) }

// WriteVersion writes the version file of the HostDb version in dir.
func WriteVersion(fsys storage.FS, dir string, t time.Time) error {
	f, err := fsys.Create(path.Join(dir, VersionFile))
	if err != nil {
		return fmt.Errorf("hostdb: write version: %w", err)
	}
	if _, err := io.WriteString(f, t.UTC().Format(VersionLayout)+"\n"); err != nil {
		f.Close()
		return fmt.Errorf("hostdb: write version: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("hostdb: write version: %w", err)
	}
	return nil
}

// ReadVersion returns the version name of the HostDb version in dir (a
// current/ directory); "" if it has no version file.
func ReadVersion(fsys storage.FS, dir string) (string, error) {
	f, err := fsys.Open(path.Join(dir, VersionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("hostdb: read version: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return "", fmt.Errorf("hostdb: read version: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
