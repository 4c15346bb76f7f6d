package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/storage"
)

// mergedSegmentsFile, inside a CrawlDB version, lists the segments updatedb
// merged to make it. It is written before the version is installed, so the
// install records atomically which segments the CrawlDB contains.
const mergedSegmentsFile = "_merged_segments.json"

// mergedSegments is the content of mergedSegmentsFile.
type mergedSegments struct {
	Time     time.Time `json:"time"`
	CrawlDB  string    `json:"crawldb"`
	Segments []string  `json:"segments"` // URIs
}

// recoverDB repairs what a crash can leave behind; callers hold the CrawlDB
// lock. It undoes a half-done install (crawldb.Recover), then rolls forward
// the segment markers of the installed version: if updatedb died after
// installing a CrawlDB but before marking every merged segment, the marks
// are written now, so that the segment's generate lock ends and it is never
// merged (and its link cash counted) twice.
func recoverDB(env Env, cp crawlPaths, log *slog.Logger) error {
	if _, err := crawldb.Recover(cp.fs, cp.dbPath); err != nil {
		return err
	}
	data, err := storage.ReadFile(cp.fs, path.Join(cp.dbPath, crawldb.CurrentName, mergedSegmentsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the CrawlDB's merged-segment list: %w", err)
	}
	var m mergedSegments
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("parse %s: %w", path.Join(cp.dbPath, crawldb.CurrentName, mergedSegmentsFile), err)
	}
	for _, s := range m.Segments {
		fsys, p, err := env.resolver().Resolve(s)
		if err != nil {
			return fmt.Errorf("segment %s: %w", s, err)
		}
		done, err := storage.Exists(fsys, path.Join(p, UpdatedMarker))
		if err != nil {
			return fmt.Errorf("segment %s: %w", s, err)
		}
		if done {
			continue
		}
		if ok, err := storage.Exists(fsys, p); err != nil || !ok {
			continue // the segment was removed since: nothing to mark
		}
		log.Warn("marking a segment merged by an interrupted updatedb", "segment", s)
		if err := markMerged(fsys, p, m); err != nil {
			return fmt.Errorf("segment %s: %w", s, err)
		}
	}
	return nil
}

// markMerged writes UpdatedMarker into the segment at p.
func markMerged(fsys storage.FS, p string, m mergedSegments) error {
	marker, err := json.Marshal(struct {
		Time    time.Time `json:"time"`
		CrawlDB string    `json:"crawldb"`
	}{m.Time, m.CrawlDB})
	if err != nil {
		return err
	}
	return storage.WriteFileAtomic(fsys, path.Join(p, UpdatedMarker), append(marker, '\n'))
}
