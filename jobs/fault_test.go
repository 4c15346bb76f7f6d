package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/faultfs"
)

// faultEnv is env with its file system wrapped in a faultfs.FS.
func faultEnv(env Env, rules ...faultfs.Rule) (Env, *faultfs.FS) {
	ffs := faultfs.New(storage.NewLocal(), rules...)
	env.Storage = storage.NewResolverWith(ffs)
	r := *localRunner(env)
	r.Storage = env.Storage
	env.Runner = &r
	return env, ffs
}

// leftovers lists what a finished job must not leave in the CrawlDB
// directory and the segments: locks, staging directories, temporary
// files, CrawlDB versions other than current.
func leftovers(t *testing.T, env Env) []string {
	t.Helper()
	var out []string
	root := env.Crawl
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		name := fi.Name()
		switch {
		case name == crawldb.LockFile, name == "_temporary", strings.Contains(name, ".tmp-"):
			out = append(out, rel)
		case filepath.Dir(rel) == "crawldb" && fi.IsDir() && name != crawldb.CurrentName:
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestUpdateDBMarkerWriteFails is the double-merge case: updatedb installs
// the new CrawlDB, then writing a segment's merged marker fails (EIO on its
// rename). A plain retry and a --force retry are no-ops that report the
// segments as already merged; the CrawlDB stays what one clean updatedb
// gives, never a second merge.
func TestUpdateDBMarkerWriteFails(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	ref := testEnv(t)
	refSegs := writeManySegments(t, ref, now)
	if _, err := UpdateDB(context.Background(), ref, UpdateOptions{Segments: refSegs, Now: now, Schedule: defaultSched}); err != nil {
		t.Fatal(err)
	}
	want := readDB(t, ref)

	env := testEnv(t)
	segs := writeManySegments(t, env, now)
	before := readDB(t, env)
	fenv, ffs := faultEnv(env, faultfs.Rule{Op: faultfs.Rename, Pattern: UpdatedMarker})
	o := UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched}
	_, err := UpdateDB(context.Background(), fenv, o)
	if err == nil || !strings.Contains(err.Error(), "marking segment") {
		t.Fatalf("updatedb with the marker's rename failing: %v", err)
	}
	if len(ffs.Failed()) == 0 {
		t.Fatal("no fault was injected")
	}
	if got := readDB(t, env); !reflect.DeepEqual(got, want) {
		t.Fatal("the failed updatedb did not install the merge it had made")
	}

	// A retry while the disk still fails: recovery cannot write the
	// markers, so the retry fails, and changes nothing.
	if _, err := UpdateDB(context.Background(), fenv, o); err == nil || errors.Is(err, ErrAlreadyMerged) {
		t.Fatalf("retry on the failing disk: %v, want a failure", err)
	}
	if got := readDB(t, env); !reflect.DeepEqual(got, want) {
		t.Fatal("a retry on the failing disk changed the CrawlDB")
	}

	// Plain retry, then a --force retry: already merged, nothing changes.
	ffs.SetRules()
	for _, force := range []bool{false, true} {
		e := fenv
		e.ForceLock = force
		res, err := UpdateDB(context.Background(), e, o)
		if !errors.Is(err, ErrAlreadyMerged) {
			t.Fatalf("retry (force %v): %v, %+v; want ErrAlreadyMerged", force, err, res)
		}
		if got := readDB(t, env); !reflect.DeepEqual(got, want) {
			t.Fatalf("retry (force %v) changed the CrawlDB: a second merge", force)
		}
	}
	for _, s := range segs {
		if !dirExists(filepath.Join(s, UpdatedMarker)) {
			t.Errorf("%s not marked merged after the retries", s)
		}
	}
	if l := leftovers(t, env); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
	if reflect.DeepEqual(before, want) {
		t.Fatal("the update changes nothing: the test proves nothing")
	}

	// --remerge merges again, on purpose.
	if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched, Remerge: true}); err != nil {
		t.Fatal(err)
	}
	if got := readDB(t, env); reflect.DeepEqual(got, want) {
		t.Error("--remerge changed nothing")
	}
}

// faultJob is a job the fault suite runs: setup writes its starting state
// into a fresh crawl, run runs it (errAllowed tells a retry's expected
// "nothing to do" from a failure), check looks at what it leaves beside
// the CrawlDB.
type faultJob struct {
	setup      func(t *testing.T, env Env) []string
	run        func(env Env, segs []string) error
	errAllowed func(error) bool
	check      func(t *testing.T, env Env, segs []string)
}

// TestFaultSuite fails, one at a time, every create, write, close, rename,
// remove and mkdir a clean run of each job makes (or an even sample of
// them), on a file system that injects the fault (EIO). Whatever fails,
// the CrawlDB afterwards is what it was or what one clean run gives, never
// anything else; and a plain retry on a healthy disk ends exactly where
// one clean run does, leaving nothing behind.
func TestFaultSuite(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	jobs := map[string]faultJob{
		"updatedb": {
			setup: func(t *testing.T, env Env) []string { return writeManySegments(t, env, now) },
			run: func(env Env, segs []string) error {
				_, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: segs, Now: now, Schedule: defaultSched})
				return err
			},
			errAllowed: func(err error) bool { return errors.Is(err, ErrAlreadyMerged) },
			check: func(t *testing.T, env Env, segs []string) {
				for _, s := range segs {
					if !dirExists(filepath.Join(s, UpdatedMarker)) {
						t.Errorf("%s not marked merged", s)
					}
				}
			},
		},
		"inject": {
			setup: func(t *testing.T, env Env) []string {
				writeDB(t, env, []crawldb.Datum{mkDatum("http://s.example/1", 1, now, crawldb.StatusDBFetched)}, 2)
				seeds := filepath.Join(filepath.Dir(env.Crawl), "seeds.txt")
				writeFile(t, seeds, "http://s.example/1\tscore=3\nhttp://s.example/2\nhttp://t.example/\n")
				return []string{seeds}
			},
			run: func(env Env, seeds []string) error {
				_, err := Inject(context.Background(), env, InjectOptions{Seeds: seeds, Now: now, Overwrite: true})
				return err
			},
			errAllowed: func(error) bool { return false },
			check:      func(*testing.T, Env, []string) {},
		},
	}
	ops := []faultfs.Op{faultfs.Create, faultfs.Write, faultfs.Close, faultfs.Rename, faultfs.Remove, faultfs.Mkdir}
	perOp := 5
	if testing.Short() {
		perOp = 3
	}
	for name, job := range jobs {
		t.Run(name, func(t *testing.T) {
			// The reference run, counting the calls of each kind.
			var counting []faultfs.Rule
			for _, op := range ops {
				counting = append(counting, faultfs.Rule{Op: op, Nth: -1})
			}
			ref := testEnv(t)
			refIn := job.setup(t, ref)
			before := readDB(t, ref)
			fref, ffs := faultEnv(ref, counting...)
			if err := job.run(fref, refIn); err != nil {
				t.Fatal(err)
			}
			want := readDB(t, ref)
			if reflect.DeepEqual(before, want) {
				t.Fatal("a clean run changes nothing: the suite would prove nothing")
			}
			calls := ffs.Matched()
			failures := 0
			for i, op := range ops {
				n := calls[i]
				for _, nth := range sample(n, perOp) {
					t.Run(fmt.Sprintf("%s-%d-of-%d", op, nth, n), func(t *testing.T) {
						env := testEnv(t)
						in := job.setup(t, env)
						fenv, ffs := faultEnv(env, faultfs.Rule{Op: op, Nth: nth})
						err := job.run(fenv, in)
						got := readDB(t, env)
						if err != nil {
							failures++
							if !reflect.DeepEqual(got, before) && !reflect.DeepEqual(got, want) {
								t.Fatalf("after %v (%v): the CrawlDB is neither the old nor the new one", ffs.Failed(), err)
							}
						} else if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s succeeded despite %v, with a wrong CrawlDB", name, ffs.Failed())
						}
						// A plain retry on a healthy disk: if the run
						// failed after its install, a retry of inject
						// injects the same seeds again, which changes
						// nothing; updatedb finds its segments merged.
						ffs.SetRules()
						if err := job.run(fenv, in); err != nil && !job.errAllowed(err) {
							t.Fatalf("retry after %v: %v", ffs.Failed(), err)
						}
						if got := readDB(t, env); !reflect.DeepEqual(got, want) {
							t.Fatalf("retry after %v: the CrawlDB differs from one clean run", ffs.Failed())
						}
						job.check(t, env, in)
						if l := leftovers(t, env); len(l) > 0 {
							t.Errorf("retry after %v left %v", ffs.Failed(), l)
						}
					})
				}
			}
			if failures == 0 {
				t.Errorf("no injected fault made %s fail: the suite proves nothing", name)
			}
		})
	}
}

// sample returns up to k call numbers spread evenly over 1..n (all of them
// when n <= k), always with the first and the last.
func sample(n, k int) []int {
	if n <= k {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	var out []int
	for i := 0; i < k; i++ {
		v := 1 + i*(n-1)/(k-1)
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}
