//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/hadoop/streamemu"
	"github.com/trawl/trawl/simweb"
)

// emulator is the Hadoop Streaming emulator, built once per test binary
// (into the directory of the trawl binaries) by emulatorBinary.
var emulator struct {
	once sync.Once
	path string
	err  error
}

// emulatorBinary builds the emulator on its first call and returns its
// path.
func emulatorBinary() (string, error) {
	emulator.once.Do(func() {
		emulator.path = filepath.Join(filepath.Dir(binPath), "hadoop")
		cmd := exec.Command("go", "build", "-o", emulator.path, "github.com/trawl/trawl/hadoop/streamemu/cmd/hadoop")
		if out, err := cmd.CombinedOutput(); err != nil {
			emulator.err = fmt.Errorf("building the emulator: %v\n%s", err, out)
		}
	})
	return emulator.path, emulator.err
}

// fakeHadoopHome puts the Hadoop Streaming emulator (package streamemu)
// at HOME/bin/hadoop and bin/mapred, with an empty streaming jar where a
// Hadoop distribution keeps it, and returns HOME.
func fakeHadoopHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "hadoop")
	built, err := emulatorBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// A hard link, not a symbolic one: the emulator finds HOME from its
	// own path.
	if err := os.Link(built, bin); err != nil {
		data, rerr := os.ReadFile(built)
		if rerr != nil {
			t.Fatal(rerr)
		}
		writeTestFile(t, bin, string(data))
		if err := os.Chmod(bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("hadoop", filepath.Join(home, "bin", "mapred")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(home, "share", "hadoop", "tools", "lib", "hadoop-streaming-3.3.6.jar"), "")
	return home
}

// invocations reads the emulator's log of `hadoop jar` runs.
func invocations(t *testing.T, path string) []streamemu.Invocation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []streamemu.Invocation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inv streamemu.Invocation
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatal(err)
		}
		out = append(out, inv)
	}
	return out
}

// roundSummary is what crawl's round summaries say the rounds did, without
// what depends on time (rates, durations, segment names).
func roundSummary(stdout string) []string {
	keep := regexp.MustCompile(`^\s+(injected|generated|fetched|parsed|new URLs|clustered)\s`)
	clusterName := regexp.MustCompile(`: [0-9]{14}$`)
	timing := regexp.MustCompile(`, in [0-9.]+[a-zµ]+$`)
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if keep.MatchString(l) {
			l = timing.ReplaceAllString(strings.Join(strings.Fields(l), " "), "")
			out = append(out, clusterName.ReplaceAllString(l, ""))
		}
	}
	return out
}

// TestCrawlHadoopEngine crawls three rounds of a synthetic web with the
// local engine, then with --engine hadoop through the emulated `hadoop jar`
// (package streamemu: the real trawl binary as separate map and reduce
// processes), once plainly and once with the first attempt of every task
// killed midway and parse jobs instead of parsing fetches: the CrawlDBs and the rounds' summaries must be the
// local engine's, every engine job must have gone through `hadoop jar`,
// and nothing may be left in the crawl directory. It logs the time each
// engine took, and the emulated submission's overhead per job.
func TestCrawlHadoopEngine(t *testing.T) {
	t.Parallel()
	home := fakeHadoopHome(t)
	r := newRunner(t)
	r.bin = plainBinPath // many task processes: data races are the unit tests' business
	srv, seeds := serveWeb(t, r.dir, simweb.Config{Seed: 9, Hosts: 25, Pages: 600, Hazards: simweb.HazardTraps})
	t0 := "2026-01-05T00:00:00Z"

	crawl := func(name string, extra []string, env ...string) (result, time.Duration) {
		t.Helper()
		rr := *r
		rr.env = append(append([]string(nil), r.env...), env...)
		start := time.Now()
		// Three fetch lists cut at a topN and partitioned by IP: every
		// round runs both generate jobs and the IP partitioning's task
		// hooks, and fetches in several tasks; the last round clusters
		// the young pages (the DBSCAN jobs).
		args := append([]string{"--seeds", seeds, "--rounds", "3", "--now", t0,
			"--topN", "280", "--num-fetchers", "3", "--partition-mode", "ip",
			"--cluster-every", "3", "--cluster-eps", "1.5"}, extra...)
		res := rr.ok(crawlArgs(srv, filepath.Join(r.dir, name), args...)...)
		return res, time.Since(start)
	}
	local, localDur := crawl("local", nil)
	want := dumpRows(t, r, filepath.Join(r.dir, "local"))
	wantSummary := roundSummary(local.stdout)
	if len(want) < 100 || len(wantSummary) < 10 {
		t.Fatalf("the local crawl did little: %d URLs\n%s", len(want), local.stdout)
	}
	t.Logf("local: %d URLs in the CrawlDB; rounds:\n%s", len(want), strings.Join(wantSummary, "\n"))

	for _, tc := range []struct {
		name  string
		flaky bool
	}{{"hadoop", false}, {"flaky", true}} {
		t.Run(tc.name, func(t *testing.T) {
			invLog := filepath.Join(r.dir, tc.name+"-invocations.jsonl")
			env := []string{"HADOOP_HOME=" + home, "STREAMEMU_STATE=" + filepath.Join(r.dir, tc.name+"-emu"),
				"STREAMEMU_LOG=" + invLog}
			args := []string{"--engine", "hadoop"}
			if tc.flaky {
				// The flaky crawl parses in parse jobs, the others in
				// their fetch jobs: the same CrawlDB either way.
				env = append(env, "STREAMEMU_FAIL_FIRST_ATTEMPTS=1")
				args = append(args, "--parse-job")
			}
			res, dur := crawl(tc.name, args, env...)
			dir := filepath.Join(r.dir, tc.name)

			got := dumpRows(t, r, dir)
			if len(got) != len(want) {
				t.Errorf("CrawlDB sizes: local %d, %s %d", len(want), tc.name, len(got))
			}
			diffs := 0
			for u, rw := range want {
				rg, ok := got[u]
				if !ok {
					if diffs++; diffs <= 20 {
						t.Errorf("%s only in the local crawl", u)
					}
					continue
				}
				for _, k := range sortedKeys(rw) {
					if msg := compareField(k, rw[k], rg[k]); msg != "" {
						if diffs++; diffs <= 20 {
							t.Errorf("%s: %s: %s", u, k, msg)
						}
					}
				}
			}
			for u := range got {
				if _, ok := want[u]; !ok {
					t.Errorf("%s only in the %s crawl", u, tc.name)
				}
			}
			if s := roundSummary(res.stdout); !slices.Equal(s, wantSummary) {
				t.Errorf("round summaries differ:\nlocal:\n%s\n%s:\n%s", strings.Join(wantSummary, "\n"), tc.name, strings.Join(s, "\n"))
			}

			// Every engine job went through hadoop jar, and succeeded.
			invs := invocations(t, invLog)
			count := map[string]int{}
			for _, inv := range invs {
				count[inv.TrawlJob]++
				if inv.Exit != 0 {
					t.Errorf("hadoop jar of %s (%s) exited %d", inv.TrawlJob, inv.JobID, inv.Exit)
				}
				if tc.flaky && inv.FailedAttempts == 0 {
					t.Errorf("%s (%s): no task attempt failed", inv.TrawlJob, inv.JobID)
				}
				if !tc.flaky && inv.FailedAttempts != 0 {
					t.Errorf("%s (%s): %d task attempts failed", inv.TrawlJob, inv.JobID, inv.FailedAttempts)
				}
				if !slices.Contains(inv.Args, "./trawl task --phase map") || !slices.ContainsFunc(inv.Args, func(a string) bool {
					return strings.HasSuffix(a, "#trawl") && strings.HasPrefix(a, "file:///")
				}) {
					t.Errorf("%s: the binary is not shipped and run as ./trawl: %q", inv.TrawlJob, inv.Args)
				}
			}
			rounds := strings.Count(res.stdout, "\nround ") + boolInt(strings.HasPrefix(res.stdout, "round "))
			wantJobs := map[string]int{"inject": 1, "generate-select": rounds, "generate-topn": rounds, "fetch": rounds,
				"updatedb":      rounds,
				dbscan.JobStats: 1, dbscan.JobLocal: 1, dbscan.JobJoin: 1, dbscan.JobLabel: 1, dbscan.JobCentres: 1}
			if tc.flaky {
				wantJobs["parse"] = rounds
			}
			for j, n := range wantJobs {
				if count[j] != n {
					t.Errorf("hadoop jar ran %s %d times, want %d (all: %v)", j, count[j], n, count)
				}
			}
			if len(count) != len(wantJobs) {
				t.Errorf("jobs run: %v", count)
			}

			// Nothing left behind: no staging, no stage, no running job.
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && (d.Name() == "_temporary" || strings.HasPrefix(d.Name(), "streaming-")) {
					t.Errorf("left in the crawl: %s", p)
				}
				return nil
			})
			if pids, _ := filepath.Glob(filepath.Join(r.dir, tc.name+"-emu", "jobs", "*.pid")); len(pids) > 0 {
				t.Errorf("jobs still registered: %v", pids)
			}

			jobs := len(invs)
			t.Logf("%s: %d jobs in %v; the local engine took %v: %v more per job (emulated hadoop jar, no JVM, %d CPUs)",
				tc.name, jobs, dur.Round(time.Millisecond), localDur.Round(time.Millisecond),
				((dur - localDur) / time.Duration(max(jobs, 1))).Round(time.Millisecond), countCPUs())
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countCPUs() int { return defaultParallelism() }

// TestHadoopEngineCommandLine checks --engine hadoop's command line:
// --dry-run prints the first job's shell-quoted command (with a relative
// crawl directory made absolute) and runs nothing, and says when later
// jobs depend on it; --dry-run needs the Hadoop engine; a missing hadoop
// command or streaming jar is a usage error naming where trawl looked;
// $TRAWL_ENGINE selects the engine.
func TestHadoopEngineCommandLine(t *testing.T) {
	t.Parallel()
	home := fakeHadoopHome(t)
	r := newRunner(t)
	invLog := filepath.Join(r.dir, "invocations.jsonl")
	writeTestFile(t, filepath.Join(r.dir, "seeds.txt"), "http://a.example/\nhttp://b.example/\n")
	r.env = []string{"HADOOP_HOME=" + home, "STREAMEMU_LOG=" + invLog}

	res := r.ok("--engine", "hadoop", "--dry-run", "--crawl", "crawl", "inject", "seeds.txt")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	jar := filepath.Join(home, "share", "hadoop", "tools", "lib", "hadoop-streaming-3.3.6.jar")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], filepath.Join(home, "bin", "hadoop")+" jar "+jar+" -D 'mapreduce.job.name=trawl inject' ") {
		t.Fatalf("dry run of inject printed:\n%s", res.stdout)
	}
	for _, w := range []string{" -D trawl.job.name=inject ", " -D trawl.job.conf=", " -files 'file://" + binPath + "#trawl' ",
		" -input file://" + filepath.Join(r.dir, "crawl", "crawldb", "_temporary", "streaming-"),
		" -mapper './trawl task --phase map' -reducer './trawl task --phase reduce' -partitioner org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner"} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("the command lacks %q:\n%s", w, lines[0])
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "crawl")); !os.IsNotExist(err) {
		t.Errorf("the dry run left the crawl directory: %v", err)
	}
	if _, err := os.Stat(invLog); !os.IsNotExist(err) {
		t.Errorf("the dry run ran hadoop: %v", err)
	}

	// A crawl's later jobs depend on its first.
	res = r.ok("--crawl", "crawl", "crawl", "--engine", "hadoop", "--dry-run", "--seeds", "seeds.txt", "--agent", "x")
	lines = strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "trawl.job.name=inject") || !strings.HasPrefix(lines[1], "# dry run: the crawl's next jobs") {
		t.Errorf("dry run of crawl printed:\n%s", res.stdout)
	}

	res = r.fails(exitUsage, "--dry-run", "--crawl", "crawl", "inject", "seeds.txt")
	assertCleanError(t, res, "--dry-run", "--engine hadoop")

	// No hadoop command; then no streaming jar.
	r.env = nil
	res = r.fails(exitUsage, "--engine", "hadoop", "--crawl", "crawl", "inject", "seeds.txt")
	assertCleanError(t, res, "HADOOP_HOME is not set", "no hadoop command on the PATH")
	bare := t.TempDir()
	writeTestFile(t, filepath.Join(bare, "bin", "hadoop"), "#!/bin/sh\nexit 1\n")
	if err := os.Chmod(filepath.Join(bare, "bin", "hadoop"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.env = []string{"HADOOP_HOME=" + bare}
	res = r.fails(exitUsage, "--engine", "hadoop", "--crawl", "crawl", "inject", "seeds.txt")
	assertCleanError(t, res, "no hadoop-streaming jar", "engine.hadoop.streamingJar", "$HADOOP_STREAMING_JAR",
		"$HADOOP_HOME/share/hadoop/tools/lib/hadoop-streaming-*.jar")

	r.env = []string{"TRAWL_ENGINE=hadoop"}
	res = r.ok("config", "engine.name")
	if !strings.Contains(res.stdout, "hadoop") || strings.Contains(res.stderr, "matches no setting") {
		t.Errorf("$TRAWL_ENGINE: %s", res)
	}
}
