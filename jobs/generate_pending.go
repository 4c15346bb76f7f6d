package jobs

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// segmentNameLayout is segment.NameLayout, the time layout of segment
// names, for the code of this package that parses them.
const segmentNameLayout = segment.NameLayout

// urlHost is the projection of a fetch-list row that the pending input of
// generate-select (and the fetch's part check) reads.
type urlHost struct {
	URL  string `parquet:"url"`
	Host string `parquet:"host,dict"`
}

// newSegmentName is the UTC time t as a segment name, one second later
// while that name is taken.
func newSegmentName(cp crawlPaths, t time.Time) (string, error) {
	t = t.UTC().Truncate(time.Second)
	for range 3600 {
		name := t.Format(segment.NameLayout)
		_, err := cp.fs.Stat(path.Join(cp.segPath, name))
		if isNotExist(err) {
			return name, nil
		}
		if err != nil {
			return "", fmt.Errorf("segment name: %w", err)
		}
		t = t.Add(time.Second)
	}
	return "", errors.New("segment name: an hour of names from now is taken")
}

// pendingLog is the logger pendingSegments reports to.
type pendingLog interface {
	Info(string, ...any)
	Warn(string, ...any)
}

// pendingSegments lists the segments whose fetch lists still hold their
// URLs: a published crawl_generate, no UpdatedMarker, generated less than
// delay before now (the wall clock: segment names are wall-clock times).
// It also removes what a killed generate left behind: a segment directory
// holding only _-prefixed entries, and a stale _select or _ranks.
func pendingSegments(cp crawlPaths, now time.Time, delay time.Duration, log pendingLog) ([]string, error) {
	infos, err := listSegments(cp)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir() {
			continue
		}
		t, err := time.Parse(segment.NameLayout, fi.Name())
		if err != nil {
			continue // not a segment
		}
		held, err := segmentHolds(cp, fi.Name(), t, now, delay, log)
		if err != nil {
			return nil, err
		}
		if held {
			out = append(out, fi.Name())
		}
	}
	return out, nil
}

// segmentHolds tidies the segment name, generated at t, and reports
// whether its fetch list still holds its URLs back (see pendingSegments).
func segmentHolds(cp crawlPaths, name string, t, now time.Time, delay time.Duration, log pendingLog) (bool, error) {
	dir := path.Join(cp.segPath, name)
	entries, err := cp.fs.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("list segment %s: %w", name, err)
	}
	leftovers, updated := true, false
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "_") {
			leftovers = false
		}
		updated = updated || e.Name() == segment.MergedMarker
	}
	if leftovers {
		log.Warn("removing a segment left unfinished by a killed generate", "segment", name)
		if err := cp.fs.RemoveAll(dir); err != nil {
			return false, fmt.Errorf("remove unfinished segment %s: %w", name, err)
		}
		return false, nil
	}
	for _, stale := range []string{selectDir, ranksDir} {
		if ok, _ := storage.Exists(cp.fs, path.Join(dir, stale)); ok {
			if err := cp.fs.RemoveAll(path.Join(dir, stale)); err != nil {
				return false, fmt.Errorf("remove stale %s in segment %s: %w", stale, name, err)
			}
		}
	}
	if updated {
		return false, nil
	}
	published, err := storage.Exists(cp.fs, path.Join(dir, segment.DirGenerate, segment.SuccessFile))
	if err != nil || !published {
		return false, err
	}
	if !t.Add(delay).After(now) {
		log.Info("a segment not merged by updatedb no longer holds its URLs back", "segment", name, "delay", delay)
		return false, nil
	}
	return true, nil
}

// segmentFetchLists returns the fetch-list URIs of the named segments.
func segmentFetchLists(segURI string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, storage.Join(segURI, n, segment.DirGenerate))
	}
	return out
}
