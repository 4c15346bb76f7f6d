package hostdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Reader reads an installed HostDb: the Host rows of the part files in
// hostdb/current. Files are opened per iteration, so a Reader holds no
// resources and is safe for concurrent use.
type Reader struct {
	fsys    storage.FS
	parts   []string
	version string
}

// Open lists the part files of the HostDb at hostdbDir. A missing HostDb
// is an error satisfying errors.Is(err, fs.ErrNotExist) that says how to
// make one.
func Open(fsys storage.FS, hostdbDir string) (*Reader, error) {
	dir := Current(hostdbDir)
	parts, err := parquetio.PartFiles(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notExistError(fmt.Sprintf("hostdb: %s is not a HostDb: %s does not exist (run updatehostdb first)", hostdbDir, dir))
	}
	if err != nil {
		return nil, fmt.Errorf("hostdb: open %s: %w", hostdbDir, err)
	}
	v, err := ReadVersion(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &Reader{fsys: fsys, parts: parts, version: v}, nil
}

// notExistError says a HostDb is missing; it satisfies
// errors.Is(err, fs.ErrNotExist).
type notExistError string

func (e notExistError) Error() string { return string(e) }
func (e notExistError) Unwrap() error { return fs.ErrNotExist }

// Parts returns the part files' paths, sorted by name.
func (r *Reader) Parts() []string { return slices.Clone(r.parts) }

// Version returns the version name of the HostDb read (see VersionFile),
// "" if it has none.
func (r *Reader) Version() string { return r.version }

// All iterates over every host, part by part; within a part hosts come in
// name order. Iteration stops at the first error, which names the file.
func (r *Reader) All(ctx context.Context) iter.Seq2[Host, error] {
	return func(yield func(Host, error) bool) {
		for h, err := range parquetio.ReadParts[Host](ctx, r.fsys, r.parts, parquetio.AllowMissingColumns()) {
			if err != nil {
				yield(Host{}, fmt.Errorf("hostdb: %w", err))
				return
			}
			if !yield(h, nil) {
				return
			}
		}
	}
}

// Get returns the row of host, and false if the HostDb has none.
func (r *Reader) Get(ctx context.Context, host string) (Host, bool, error) {
	for h, err := range r.All(ctx) {
		if err != nil {
			return Host{}, false, err
		}
		if h.Host == host {
			return h, true, nil
		}
	}
	return Host{}, false, nil
}

// Stats are a HostDb's totals (readhostdb stats).
type Stats struct {
	// Hosts counts the rows; URLs the CrawlDB URLs they count, and
	// Status those URLs by status, in StatusColumns' order.
	Hosts, URLs int64
	Status      []int64
	// Successes, Failures, RobotsDenied, RobotsFailures and DNSFailures
	// are the sums of the hosts' fields.
	Successes, Failures, RobotsDenied, RobotsFailures, DNSFailures int64
	// Failing counts the hosts with a failure streak (at least one failed
	// fetch since their last success), MaxStreak the longest streak;
	// RobotsFailed and DNSFailed the hosts whose last fetch attempt failed
	// on robots.txt and on DNS.
	Failing, MaxStreak, RobotsFailed, DNSFailed int64
	// Version is the HostDb version read.
	Version string
}

// Stats reads the whole HostDb once and sums it.
func (r *Reader) Stats(ctx context.Context) (*Stats, error) {
	s := &Stats{Status: make([]int64, len(StatusColumns)), Version: r.version}
	for h, err := range r.All(ctx) {
		if err != nil {
			return nil, err
		}
		s.Hosts++
		s.URLs += h.URLs()
		for i, n := range h.StatusCounts() {
			s.Status[i] += n
		}
		s.Successes += h.Successes
		s.Failures += h.Failures
		s.RobotsDenied += h.RobotsDenied
		s.RobotsFailures += h.RobotsFailures
		s.DNSFailures += h.DNSFailures
		if h.FailureStreak > 0 {
			s.Failing++
		}
		s.MaxStreak = max(s.MaxStreak, h.FailureStreak)
		if h.RobotsFailed {
			s.RobotsFailed++
		}
		if h.DNSFailed() {
			s.DNSFailed++
		}
	}
	return s, nil
}
