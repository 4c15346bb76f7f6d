package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/trawl/trawl/internal/killpoint"
	"github.com/trawl/trawl/storage"
)

// stage is the staging directory of one output: OUT is published from
// DIR/_temporary/ATTEMPT/NAME.
type stage struct {
	spec outSpec
	fs   storage.FS
	out  string // OUT within fs
	dir  string // DIR
	root string // DIR/_temporary/ATTEMPT
	path string // DIR/_temporary/ATTEMPT/NAME
}

func newAttemptID() string {
	return fmt.Sprintf("attempt_%s_%d", time.Now().UTC().Format("20060102T150405.000000000"), os.Getpid())
}

// prepareStages checks that no output exists, removes stale stages of the
// same outputs left by killed runs, and creates the stage directories.
func prepareStages(ctx context.Context, res Resolver, specs []outSpec, attempt string, log interface {
	Info(string, ...any)
}) ([]*stage, error) {
	var stages []*stage
	for _, sp := range specs {
		fsys, p, err := res.Resolve(sp.uri)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", sp.uri, err)
		}
		if _, err := fsys.Stat(p); err == nil {
			return nil, fmt.Errorf("output %s already exists; remove it or choose another output", sp.uri)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("output %s: %w", sp.uri, err)
		}
		dir, name := path.Dir(p), path.Base(p)
		st := &stage{spec: sp, fs: fsys, out: p, dir: dir, root: path.Join(dir, "_temporary", attempt)}
		st.path = path.Join(st.root, name)
		if err := removeStale(fsys, dir, name, log); err != nil {
			return nil, err
		}
		stages = append(stages, st)
	}
	for _, st := range stages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := st.fs.MkdirAll(st.path); err != nil {
			return nil, fmt.Errorf("output %s: create stage: %w", st.spec.uri, err)
		}
	}
	return stages, nil
}

// removeStale removes DIR/_temporary/*/NAME (stages of NAME by earlier,
// killed runs) and attempt directories left empty.
func removeStale(fsys storage.FS, dir, name string, log interface{ Info(string, ...any) }) error {
	tmp := path.Join(dir, "_temporary")
	ents, err := fsys.ReadDir(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", tmp, err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		att := path.Join(tmp, e.Name())
		stale := path.Join(att, name)
		if _, err := fsys.Stat(stale); err == nil {
			log.Info("removing stale stage of a killed run", "path", stale)
			if err := fsys.RemoveAll(stale); err != nil {
				return fmt.Errorf("remove stale stage %s: %w", stale, err)
			}
		}
		removeIfEmpty(fsys, att)
	}
	removeIfEmpty(fsys, tmp)
	return nil
}

func removeIfEmpty(fsys storage.FS, dir string) {
	if ents, err := fsys.ReadDir(dir); err == nil && len(ents) == 0 {
		_ = fsys.RemoveAll(dir)
	}
}

// taskDir is where a task attempt writes its files for this output.
func (s *stage) taskDir(taskAttempt string) string {
	return path.Join(s.path, "_temporary", taskAttempt)
}

// create creates a file of a task attempt.
func (s *stage) create(taskAttempt, file string) (io.WriteCloser, error) {
	w, err := s.fs.Create(path.Join(s.taskDir(taskAttempt), file))
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", s.spec.uri, err)
	}
	return w, nil
}

// commitTask moves a successful task attempt's files into the stage.
func (s *stage) commitTask(taskAttempt string) error {
	return s.moveFiles(s.taskDir(taskAttempt))
}

// moveFiles moves every file of src into the stage; a name already in the
// stage is an error.
func (s *stage) moveFiles(src string) error {
	ents, err := s.fs.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the task wrote nothing for this output
	}
	if err != nil {
		return fmt.Errorf("output %s: list %s: %w", s.spec.uri, src, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		dst := path.Join(s.path, e.Name())
		if _, err := s.fs.Stat(dst); err == nil {
			return fmt.Errorf("output %s: two tasks wrote %s", s.spec.uri, e.Name())
		}
		if err := s.fs.Rename(path.Join(src, e.Name()), dst); err != nil {
			return fmt.Errorf("output %s: commit %s: %w", s.spec.uri, e.Name(), err)
		}
	}
	return s.fs.RemoveAll(src)
}

// abortTask removes a failed task attempt's files.
func (s *stage) abortTask(taskAttempt string) {
	_ = s.fs.RemoveAll(s.taskDir(taskAttempt))
}

// countersFile is the JSON written as _counters.json.
type countersFile struct {
	Job        string                      `json:"job"`
	Attempt    string                      `json:"attempt"`
	DurationMS int64                       `json:"duration_ms"`
	Counters   map[string]map[string]int64 `json:"counters"`
}

// publish writes _SUCCESS and _counters.json into every stage and renames
// each stage to its output, then removes the emptied _temporary dirs.
func publish(stages []*stage, cf countersFile) error {
	data, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode counters: %w", err)
	}
	for _, s := range stages {
		if err := s.fs.RemoveAll(path.Join(s.path, "_temporary")); err != nil {
			return fmt.Errorf("output %s: %w", s.spec.uri, err)
		}
		if err := writeSmall(s.fs, path.Join(s.path, "_counters.json"), data); err != nil {
			return fmt.Errorf("output %s: %w", s.spec.uri, err)
		}
		if err := writeSmall(s.fs, path.Join(s.path, "_SUCCESS"), nil); err != nil {
			return fmt.Errorf("output %s: %w", s.spec.uri, err)
		}
	}
	killpoint.Reached(cf.Job, "publish-ready")
	for i, s := range stages {
		if err := s.fs.Rename(s.path, s.out); err != nil {
			return fmt.Errorf("publish %s: %w", s.spec.uri, err)
		}
		killpoint.Reached(cf.Job, fmt.Sprintf("published-%d", i+1))
	}
	for _, s := range stages {
		removeIfEmpty(s.fs, s.root)
		removeIfEmpty(s.fs, path.Dir(s.root))
	}
	return nil
}

// abortStages removes the stages (the job failed).
func abortStages(stages []*stage) {
	for _, s := range stages {
		_ = s.fs.RemoveAll(s.path)
		removeIfEmpty(s.fs, s.root)
		removeIfEmpty(s.fs, path.Dir(s.root))
	}
}

func writeSmall(fsys storage.FS, p string, data []byte) error {
	w, err := fsys.Create(p)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func partName(kind byte, part int) string {
	return fmt.Sprintf("part-%c-%05d.parquet", kind, part)
}
