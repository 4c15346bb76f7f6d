package segment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/storage"
)

// NameLayout is the time layout of segment names (Nutch's
// yyyyMMddHHmmss): a segment is named by when it was generated.
const NameLayout = "20060102150405"

// MergedMarker is the file updatedb writes into a segment once the segment
// is merged into the CrawlDB (a MergeRecord as JSON). A segment holding it
// is never merged again, and generate no longer treats its fetch list as
// pending.
const MergedMarker = "_updated"

// LockFile is the segment's lock, held by the job working on it (fetch,
// parse, updatedb): a crawldb lock file (see crawldb.LockWith) in the
// segment directory.
const LockFile = crawldb.LockFile

// SuccessFile marks a published job output directory.
const SuccessFile = "_SUCCESS"

// tempDir is the engine's staging directory in a segment.
const tempDir = "_temporary"

// FetchOutputs are the outputs of the fetch stage, in the order fetch
// publishes them: a published crawl_fetch means content is published too.
func FetchOutputs() []string { return []string{DirContent, DirFetch} }

// ParseOutputs are the outputs of the parse stage, in the order parse
// publishes them (crawl_parse last).
func ParseOutputs() []string { return []string{DirParseData, DirParseText, DirCrawlParse} }

// State is where a segment is in its life: generated, fetched, parsed,
// merged. A stage in progress (fetching, parsing, merging) is a state plus
// the segment's lock, held by the job running the stage.
type State int

// The segment states, in order.
const (
	// StateIncomplete: no published fetch list (a generate that died).
	StateIncomplete State = iota
	// StateGenerated: the fetch list is published; not fetched.
	StateGenerated
	// StateFetched: crawl_fetch is published (and content with it, unless
	// removed since); not parsed.
	StateFetched
	// StateParsed: crawl_parse is published (parse publishes it last,
	// after parse_data and parse_text).
	StateParsed
	// StateMerged: updatedb merged it into the CrawlDB (MergedMarker).
	StateMerged
)

var stateNames = [...]string{"incomplete", "generated", "fetched", "parsed", "merged"}

// String names the state.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Status is a segment's state as its files show it.
type Status struct {
	// State is the segment's state. A merged segment is StateMerged
	// whatever else it holds (a segment merged before it was parsed).
	State State
	// Published lists the stage outputs published (with _SUCCESS).
	Published []string
	// Partial lists the stage outputs present without _SUCCESS, or
	// published by a stage that is not done (its last output is not
	// published): what an interrupted run left, removed when the stage
	// runs again.
	Partial []string
}

// Has reports whether the stage output dir is published.
func (s Status) Has(dir string) bool {
	for _, d := range s.Published {
		if d == dir {
			return true
		}
	}
	return false
}

// Inspect reads the state of the segment at dir from its files. Decide
// what to do with a segment only while holding its lock (Lock), and, for
// the merged state, the CrawlDB's lock after the CrawlDB's recovery (which
// writes the MergedMarker an interrupted updatedb did not).
func Inspect(fsys storage.FS, dir string) (Status, error) {
	var st Status
	infos, err := fsys.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("segment %s: %w", dir, err)
	}
	present := make(map[string]bool, len(infos))
	for _, fi := range infos {
		present[fi.Name()] = true
	}
	outputs := append(append([]string{DirGenerate}, FetchOutputs()...), ParseOutputs()...)
	outputs = append(outputs, DirWARC) // optional: a fetch with fetcher.warc
	published := make(map[string]bool, len(outputs))
	for _, d := range outputs {
		if !present[d] {
			continue
		}
		ok, err := storage.Exists(fsys, path.Join(dir, d, SuccessFile))
		if err != nil {
			return st, fmt.Errorf("segment %s: %w", dir, err)
		}
		published[d] = ok
	}
	// A stage publishes its outputs in a fixed order, so its last output
	// says whether it is done: fetch publishes content first, then
	// crawl_fetch (content may have been removed since, as Nutch users do
	// to save space: updatedb needs only crawl_fetch); parse publishes
	// crawl_parse last. What a stage that is not done published is
	// partial, as is anything present without _SUCCESS.
	generated := published[DirGenerate]
	fetched := published[DirFetch]
	parsed := fetched && published[DirCrawlParse]
	done := map[string]bool{DirGenerate: generated}
	for _, d := range append(FetchOutputs(), DirWARC) {
		done[d] = fetched
	}
	for _, d := range ParseOutputs() {
		done[d] = parsed
	}
	for _, d := range outputs {
		switch {
		case published[d] && done[d]:
			st.Published = append(st.Published, d)
		case present[d]:
			st.Partial = append(st.Partial, d)
		}
	}
	switch {
	case present[MergedMarker]:
		st.State = StateMerged
	case generated && parsed:
		st.State = StateParsed
	case generated && fetched:
		st.State = StateFetched
	case generated:
		st.State = StateGenerated
	default:
		st.State = StateIncomplete
	}
	return st, nil
}

// LockOptions configures Lock.
type LockOptions struct {
	// Force breaks a stale lock on a file system without OS locks (HDFS);
	// see crawldb.LockWith.
	Force bool
	// MaxAge is the age past which such a lock is stale (0: the
	// default, crawldb.DefaultLockMaxAge); NoMaxAge turns the age test
	// off (crawldb.LockOptions).
	MaxAge   time.Duration
	NoMaxAge bool
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Lock takes the segment's lock for the job holder ("fetch", "parse",
// "updatedb"). It fails at once with an error matching crawldb.ErrLocked,
// naming the holder, if another job has it. On the local disk the lock is
// an OS lock that a killed holder cannot keep.
func Lock(fsys storage.FS, dir, holder string, o LockOptions) (*crawldb.LockHandle, error) {
	if ok, err := storage.Exists(fsys, dir); err != nil {
		return nil, fmt.Errorf("segment %s: %w", dir, err)
	} else if !ok {
		return nil, fmt.Errorf("segment %s does not exist", dir)
	}
	return crawldb.LockWith(fsys, dir, holder, o.Force, crawldb.LockOptions{MaxAge: o.MaxAge, NoMaxAge: o.NoMaxAge, Logger: o.Logger, What: "segment"})
}

// MergeRecord is the content of MergedMarker.
type MergeRecord struct {
	// Time is when updatedb installed the CrawlDB with the segment.
	Time time.Time `json:"time"`
	// CrawlDB is the CrawlDB directory (URI) the segment was merged into.
	CrawlDB string `json:"crawldb"`
}

// IsMerged reports whether the segment at dir holds MergedMarker.
func IsMerged(fsys storage.FS, dir string) (bool, error) {
	ok, err := storage.Exists(fsys, path.Join(dir, MergedMarker))
	if err != nil {
		return false, fmt.Errorf("segment %s: %w", dir, err)
	}
	return ok, nil
}

// MarkMerged writes MergedMarker into the segment at dir (atomically: a
// reader sees no marker or the whole one).
func MarkMerged(fsys storage.FS, dir string, rec MergeRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("segment %s: %w", dir, err)
	}
	if err := storage.WriteFileAtomic(fsys, path.Join(dir, MergedMarker), append(data, '\n')); err != nil {
		return fmt.Errorf("segment %s: mark merged: %w", dir, err)
	}
	return nil
}

// Clean removes what killed jobs left in the segment at dir: the
// engine's staging directory (_temporary) and the temporary files of
// atomic writes (NAME.tmp-XXXXXXXX). Callers hold the segment's lock, so
// no live job is writing them. It returns what it removed.
func Clean(fsys storage.FS, dir string, log *slog.Logger) ([]string, error) {
	if log == nil {
		log = slog.Default()
	}
	infos, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", dir, err)
	}
	var removed []string
	for _, fi := range infos {
		name := fi.Name()
		if name != tempDir && !strings.Contains(name, ".tmp-") {
			continue
		}
		p := path.Join(dir, name)
		log.Info("removing what an interrupted job left in a segment", "segment", dir, "path", name)
		if err := fsys.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("segment %s: remove %s: %w", dir, name, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// RemoveOutputs removes stage outputs of the segment at dir (published or
// not; Status.Partial lists what an interrupted stage left), so that the
// stage can run again. Callers hold the segment's lock.
func RemoveOutputs(fsys storage.FS, dir string, outputs []string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	for _, d := range outputs {
		log.Info("removing the output of an interrupted stage", "segment", dir, "output", d)
		if err := fsys.RemoveAll(path.Join(dir, d)); err != nil {
			return fmt.Errorf("segment %s: remove %s: %w", dir, d, err)
		}
	}
	return nil
}

// InvertedMarker is the file invertlinks writes into a segment once the
// segment's links are in the LinkDB, so that a crawl that keeps the LinkDB
// current adds each segment once, including a segment a crash left out.
// Inverting a segment again is harmless (a link is one LinkDB row), so
// the marker only saves work.
const InvertedMarker = "_inverted"

// IsInverted reports whether the segment at dir holds InvertedMarker.
func IsInverted(fsys storage.FS, dir string) (bool, error) {
	ok, err := storage.Exists(fsys, path.Join(dir, InvertedMarker))
	if err != nil {
		return false, fmt.Errorf("segment %s: %w", dir, err)
	}
	return ok, nil
}

// MarkInverted writes InvertedMarker into the segment at dir, naming the
// LinkDB (URI) the segment's links went into.
func MarkInverted(fsys storage.FS, dir, linkDB string, t time.Time) error {
	data, err := json.Marshal(struct {
		Time   time.Time `json:"time"`
		LinkDB string    `json:"linkdb"`
	}{t, linkDB})
	if err != nil {
		return fmt.Errorf("segment %s: %w", dir, err)
	}
	if err := storage.WriteFileAtomic(fsys, path.Join(dir, InvertedMarker), append(data, '\n')); err != nil {
		return fmt.Errorf("segment %s: mark inverted: %w", dir, err)
	}
	return nil
}
