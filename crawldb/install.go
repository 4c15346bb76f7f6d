package crawldb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/storage"
)

// The directories inside a CrawlDB directory.
const (
	// CurrentName holds the CrawlDB's part files.
	CurrentName = "current"
	// OldName holds the previous version while a new one is installed,
	// and afterwards if it is kept as a backup (Nutch's db.preserve.backup).
	OldName = "old"
	// TempPrefix starts the names of directories that jobs write a new
	// CrawlDB version into (see NewTempDir); Recover removes them.
	TempPrefix = "tmp-"
	// stagingName is the mapreduce engine's staging directory for outputs
	// written into the CrawlDB directory.
	stagingName = "_temporary"
)

// Current returns the directory of the CrawlDB's current part files.
func Current(crawldbDir string) string { return path.Join(crawldbDir, CurrentName) }

// Old returns the directory of the CrawlDB's previous version.
func Old(crawldbDir string) string { return path.Join(crawldbDir, OldName) }

// NewTempDir returns a fresh path (not created) inside crawldbDir for a
// job to write the next CrawlDB version into before Install.
func NewTempDir(crawldbDir string) string {
	return path.Join(crawldbDir, fmt.Sprintf("%s%016x", TempPrefix, rand.Uint64()))
}

// Install makes newDir the CrawlDB's current version, as Nutch's
// CrawlDb.install does: any previous old version is removed, current is
// renamed to old, newDir is renamed to current, and old is removed unless
// keepOld. Each step is one atomic rename or removal; a crash between the
// two renames leaves no current but an intact old, which Recover puts
// back. The caller holds the CrawlDB lock.
func Install(fsys storage.FS, crawldbDir, newDir string, keepOld bool) error {
	cur, old := Current(crawldbDir), Old(crawldbDir)
	if path.Clean(newDir) == cur || path.Clean(newDir) == old {
		return fmt.Errorf("crawldb: install %s: the new version cannot be %s itself", crawldbDir, newDir)
	}
	st, err := fsys.Stat(newDir)
	if err != nil {
		return fmt.Errorf("crawldb: install %s: new version: %w", crawldbDir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("crawldb: install %s: new version %s is not a directory", crawldbDir, newDir)
	}
	if err := fsys.MkdirAll(crawldbDir); err != nil {
		return fmt.Errorf("crawldb: install %s: %w", crawldbDir, err)
	}
	hadCurrent, err := storage.Exists(fsys, cur)
	if err != nil {
		return fmt.Errorf("crawldb: install %s: %w", crawldbDir, err)
	}
	if hadCurrent {
		if err := fsys.RemoveAll(old); err != nil {
			return fmt.Errorf("crawldb: install %s: remove previous %s: %w", crawldbDir, old, err)
		}
		if err := fsys.Rename(cur, old); err != nil {
			return fmt.Errorf("crawldb: install %s: move current aside: %w", crawldbDir, err)
		}
		killpoint.Reached("install", "current-moved")
	}
	if err := fsys.Rename(newDir, cur); err != nil {
		err = fmt.Errorf("crawldb: install %s: move %s to current: %w", crawldbDir, newDir, err)
		if hadCurrent {
			if rerr := fsys.Rename(old, cur); rerr != nil {
				return fmt.Errorf("%w; restoring the old version also failed (run recovery): %v", err, rerr)
			}
		}
		return err
	}
	killpoint.Reached("install", "new-current")
	if !keepOld {
		if err := fsys.RemoveAll(old); err != nil {
			return fmt.Errorf("crawldb: install %s: new version installed, but removing %s failed: %w", crawldbDir, old, err)
		}
	}
	return nil
}

// Recovery says what Recover did.
type Recovery struct {
	// Restored is true when old was moved back to current.
	Restored bool
	// Removed lists the stale temporary directories removed.
	Removed []string
}

// Recover repairs a CrawlDB directory after a crash: if current is missing
// and old exists (a crash between Install's two renames), old is moved back
// to current; directories left by jobs that did not finish (TempPrefix
// names, the engine's _temporary) are removed. An old version beside a
// current one is a backup if keepOld (Install's keepOld) and left alone;
// otherwise it is what an install whose last step (removing it) failed
// left, and it is removed. The caller holds the CrawlDB lock, so no job
// is writing. A missing crawldbDir is not an error.
func Recover(fsys storage.FS, crawldbDir string, keepOld bool) (Recovery, error) {
	var r Recovery
	entries, err := fsys.ReadDir(crawldbDir)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("crawldb: recover %s: %w", crawldbDir, err)
	}
	hasCur, hasOld := false, false
	for _, e := range entries {
		switch e.Name() {
		case CurrentName:
			hasCur = true
		case OldName:
			hasOld = true
		}
	}
	if !hasCur && hasOld {
		if err := fsys.Rename(Old(crawldbDir), Current(crawldbDir)); err != nil {
			return r, fmt.Errorf("crawldb: recover %s: move old back to current: %w", crawldbDir, err)
		}
		r.Restored = true
		slog.Warn("crawldb: restored the previous version after an interrupted install", "crawldb", crawldbDir)
	}
	if hasCur && hasOld && !keepOld {
		if err := fsys.RemoveAll(Old(crawldbDir)); err != nil {
			return r, fmt.Errorf("crawldb: recover %s: remove the previous version: %w", crawldbDir, err)
		}
		r.Removed = append(r.Removed, Old(crawldbDir))
		slog.Info("crawldb: removed the previous version an interrupted install left", "path", Old(crawldbDir))
	}
	for _, e := range entries {
		if !e.IsDir() || !(strings.HasPrefix(e.Name(), TempPrefix) || e.Name() == stagingName) {
			continue
		}
		p := path.Join(crawldbDir, e.Name())
		if err := fsys.RemoveAll(p); err != nil {
			return r, fmt.Errorf("crawldb: recover %s: remove %s: %w", crawldbDir, p, err)
		}
		r.Removed = append(r.Removed, p)
		slog.Info("crawldb: removed a stale temporary directory", "path", p)
	}
	return r, nil
}
