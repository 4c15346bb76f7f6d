// Command dbscan is the DBSCAN benchmark harness: it generates standardized
// 6-d page features of a synthetic web (package simweb: words, outlinks,
// inlinks, images, URL depth, bytes; dbscan.FeatureVector's log1p, then
// z-scores), writes them as CSV, and then, for each eps, measures in one
// run, each in its own process:
//
//   - trawl dbscan --input POINTS.csv --eps E --min-pts M --output LABELS.csv
//     (or, with -contender self or while the trawl binary has no dbscan
//     command, this binary's "cluster" mode: the same dbscan.ReadCSV,
//     dbscan.Cluster and dbscan.WriteLabelsCSV in a child process);
//   - scikit-learn's DBSCAN (eps, min_samples = M, n_jobs) under Debian's
//     /usr/bin/python3 on the same CSV;
//
// measuring wall time, CPU time (the child's user + system rusage) and
// peak RSS of each, and compares the labels: the adjusted Rand index over
// scikit-learn's core points and whether every label is identical. It
// prints a markdown table.
//
//	go run ./bench/dbscan -trawl bin/trawl                  # 1,000,000 points, eps 0.1, 0.2 and the knee
//	go run ./bench/dbscan -trawl bin/trawl -n 100000 -eps 0.25,0.5
package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trawl/trawl/bench/internal/proc"
	"github.com/trawl/trawl/dbscan"
)

//go:embed skdbscan.py
var sklearnScript []byte

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "gen":
			if err := genCmd(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "gen:", err)
				os.Exit(1)
			}
			return
		case "points", "partitioned", "compare":
			cmd := map[string]func([]string) error{"points": pointsCmd, "partitioned": partitionedCmd, "compare": compareCmd}[os.Args[1]]
			if err := cmd(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
				os.Exit(1)
			}
			return
		case "cluster":
			if err := clusterCmd(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "cluster:", err)
				os.Exit(1)
			}
			return
		}
	}
	var o options
	flag.StringVar(&o.trawl, "trawl", "bin/trawl", "the trawl binary to measure (its dbscan command)")
	flag.StringVar(&o.contender, "contender", "auto", "what runs trawl's DBSCAN: command (trawl dbscan), self (this harness's cluster mode: dbscan.Cluster in a child process) or auto (command if the binary has it)")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "trawl-bench-dbscan"), "work directory (wiped)")
	flag.IntVar(&o.n, "n", 1_000_000, "points (simweb content pages answering 200)")
	flag.IntVar(&o.hosts, "hosts", 5000, "simweb regular hosts")
	flag.Uint64Var(&o.seed, "seed", 1, "simweb seed")
	flag.StringVar(&o.eps, "eps", "0.1,0.2,knee", "comma-separated eps values; knee is dbscan.SuggestEps' k-distance knee for the data")
	flag.IntVar(&o.minPts, "min-pts", 12, "minPts (scikit-learn's min_samples; the point itself counts)")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "the Python with scikit-learn (Debian's python3-sklearn)")
	flag.IntVar(&o.jobs, "sklearn-jobs", -1, "scikit-learn's n_jobs (-1: every CPU)")
	flag.Float64Var(&o.maxGiB, "sklearn-max-gib", 6, "skip scikit-learn at an eps where its neighbourhood lists are estimated to need more than this many GiB")
	flag.IntVar(&o.runs, "runs", 1, "measure each contender this many times per eps, alternating; the table shows every run")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, log, o)
	if !o.keep {
		os.RemoveAll(o.dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/dbscan:", err)
		os.Exit(1)
	}
}

// options are the harness's flags.
type options struct {
	trawl, contender, dir, eps, python string
	n, hosts, minPts, jobs, runs       int
	seed                               uint64
	maxGiB                             float64
	keep                               bool
}

// usage is one measured child process.
type usage struct {
	wall, cpu time.Duration
	rss       int64 // bytes
}

// measure runs cmd (stderr to ours, stdout discarded) and returns its wall
// time, CPU time and peak RSS.
func measure(cmd *exec.Cmd) (usage, error) {
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	u, err := proc.Run(cmd)
	if err != nil {
		return usage{}, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	ps := cmd.ProcessState
	return usage{wall: u.Wall, cpu: ps.UserTime() + ps.SystemTime(), rss: u.PeakRSS}, nil
}

// row is one line of the table: one run of both contenders at one eps.
type row struct {
	eps                epsInfo
	clusters, noise    int
	trawl, sk          usage
	skSkipped          string
	skMeta             sklearnMeta
	ari                float64
	identical          bool
	differ, skClusters int
}

// sklearnMeta is what skdbscan.py reports of itself.
type sklearnMeta struct {
	Version   string  `json:"sklearn"`
	Algorithm string  `json:"algorithm"`
	Index     string  `json:"index"`
	Points    int     `json:"points"`
	LoadS     float64 `json:"load_s"`
	LoadCPUS  float64 `json:"load_cpu_s"`
	FitS      float64 `json:"fit_s"`
	FitCPUS   float64 `json:"fit_cpu_s"`
}

func run(ctx context.Context, log *slog.Logger, o options) error {
	if o.runs < 1 || o.n < 1 || o.minPts < 1 {
		return errors.New("-runs, -n and -min-pts must be positive")
	}
	if err := os.RemoveAll(o.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	contender, err := pickContender(ctx, o.trawl, o.contender)
	if err != nil {
		return err
	}
	log.Info("trawl's DBSCAN runs as", "contender", contender)
	script := filepath.Join(o.dir, "skdbscan.py")
	if err := os.WriteFile(script, sklearnScript, 0o644); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, o.python, "-c", "import sklearn").CombinedOutput(); err != nil {
		return fmt.Errorf("%s cannot import sklearn (apt-get install -y python3-sklearn): %w: %s", o.python, err, out)
	}

	// Generate the points in a child of their own, so the measured
	// processes do not start from a large parent.
	pts, metaPath := filepath.Join(o.dir, "points.csv"), filepath.Join(o.dir, "points.json")
	start := time.Now()
	gen := exec.CommandContext(ctx, self, "gen", pts, metaPath, strconv.Itoa(o.n), strconv.Itoa(o.hosts),
		strconv.FormatUint(o.seed, 10), o.eps, strconv.Itoa(o.minPts))
	gen.Stdout, gen.Stderr = os.Stderr, os.Stderr
	if err := gen.Run(); err != nil {
		return fmt.Errorf("generating the points: %w", err)
	}
	var meta genMeta
	if b, err := os.ReadFile(metaPath); err != nil {
		return err
	} else if err := json.Unmarshal(b, &meta); err != nil {
		return fmt.Errorf("%s: %w", metaPath, err)
	}
	log.Info("points written", "file", pts, "points", meta.Points, "simweb pages", meta.Pages, "knee", meta.Knee, "took", time.Since(start).Round(time.Millisecond))

	var rows []row
	for _, e := range meta.Eps {
		for r := range o.runs {
			if err := ctx.Err(); err != nil {
				return err
			}
			rw, err := runOnce(ctx, log, o, self, contender, script, pts, e, r)
			if err != nil {
				return err
			}
			log.Info("measured", "eps", e.Eps, "run", r+1, "clusters", rw.clusters, "noise", rw.noise,
				"trawl wall", rw.trawl.wall.Round(time.Millisecond), "trawl cpu", rw.trawl.cpu.Round(time.Millisecond), "trawl rss MiB", rw.trawl.rss>>20,
				"sklearn wall", rw.sk.wall.Round(time.Millisecond), "sklearn cpu", rw.sk.cpu.Round(time.Millisecond), "sklearn rss MiB", rw.sk.rss>>20,
				"ari", rw.ari, "differ", rw.differ, "sklearn", rw.skSkipped)
			rows = append(rows, rw)
		}
	}
	printTable(os.Stdout, o, meta, contender, rows)
	return nil
}

// pickContender resolves -contender: "command" if the trawl binary has a
// dbscan command (its --help exits 0), else "self".
func pickContender(ctx context.Context, trawl, want string) (string, error) {
	switch want {
	case "self":
		return "self", nil
	case "command", "auto":
		err := exec.CommandContext(ctx, trawl, "dbscan", "--help").Run()
		if err == nil {
			return "command", nil
		}
		if want == "command" {
			return "", fmt.Errorf("%s dbscan --help: %w (no dbscan command? try -contender self)", trawl, err)
		}
		return "self", nil
	}
	return "", fmt.Errorf("-contender %q: want command, self or auto", want)
}

// runOnce measures both contenders once at eps e and compares their
// labels.
func runOnce(ctx context.Context, log *slog.Logger, o options, self, contender, script, pts string, e epsInfo, r int) (row, error) {
	rw := row{eps: e}
	tag := fmt.Sprintf("%s-%d", strconv.FormatFloat(e.Eps, 'g', 6, 64), r)
	eps := strconv.FormatFloat(e.Eps, 'g', -1, 64)
	tLabels := filepath.Join(o.dir, "trawl-"+tag+".csv")
	var cmd *exec.Cmd
	if contender == "command" {
		cmd = exec.CommandContext(ctx, o.trawl, "dbscan", "--input", pts, "--eps", eps, "--min-pts", strconv.Itoa(o.minPts), "--output", tLabels)
	} else {
		cmd = exec.CommandContext(ctx, self, "cluster", pts, eps, strconv.Itoa(o.minPts), tLabels)
	}
	var err error
	log.Info("trawl dbscan", "eps", e.Eps, "run", r+1)
	if rw.trawl, err = measure(cmd); err != nil {
		return rw, err
	}
	tl, err := readLabels(tLabels)
	if err != nil {
		return rw, err
	}
	if len(tl) != o.n {
		return rw, fmt.Errorf("%s: %d labels for %d points", tLabels, len(tl), o.n)
	}
	rw.clusters, rw.noise = summarize(tl)

	// scikit-learn stores every neighbourhood as an int64 array (plus
	// about 100 bytes of object per point): skip it where that cannot fit.
	need := float64(o.n) * (e.Neighbours*8 + 100) / (1 << 30)
	if need > o.maxGiB {
		rw.skSkipped = fmt.Sprintf("not run: ~%.0f GiB of neighbourhoods (%.0f / point)", need, e.Neighbours)
		log.Info("scikit-learn skipped", "eps", e.Eps, "estimated GiB", need)
		os.Remove(tLabels)
		return rw, nil
	}
	sLabels := filepath.Join(o.dir, "sklearn-"+tag+".csv")
	sCore := filepath.Join(o.dir, "sklearn-core-"+tag+".txt")
	sMeta := filepath.Join(o.dir, "sklearn-"+tag+".json")
	log.Info("scikit-learn DBSCAN", "eps", e.Eps, "run", r+1)
	cmd = exec.CommandContext(ctx, o.python, script, pts, eps, strconv.Itoa(o.minPts), strconv.Itoa(o.jobs), sLabels, sCore, sMeta)
	if rw.sk, err = measure(cmd); err != nil {
		return rw, err
	}
	if b, err := os.ReadFile(sMeta); err != nil {
		return rw, err
	} else if err := json.Unmarshal(b, &rw.skMeta); err != nil {
		return rw, fmt.Errorf("%s: %w", sMeta, err)
	}
	sl, err := readLabels(sLabels)
	if err != nil {
		return rw, err
	}
	if len(sl) != o.n {
		return rw, fmt.Errorf("%s: %d labels for %d points", sLabels, len(sl), o.n)
	}
	core, err := readIndices(sCore, o.n)
	if err != nil {
		return rw, err
	}
	rw.skClusters, _ = summarize(sl)
	a, b := make([]int32, len(core)), make([]int32, len(core))
	for i, c := range core {
		a[i], b[i] = tl[c], sl[c]
	}
	if rw.ari, err = adjustedRand(a, b); err != nil {
		return rw, err
	}
	for i := range tl {
		if tl[i] != sl[i] {
			rw.differ++
		}
	}
	rw.identical = rw.differ == 0
	for _, f := range []string{tLabels, sLabels, sCore} {
		os.Remove(f)
	}
	return rw, nil
}

// summarize counts the clusters (the largest label + 1) and the noise.
func summarize(labels []int32) (clusters, noise int) {
	for _, l := range labels {
		if l == dbscan.Noise {
			noise++
		}
		clusters = max(clusters, int(l)+1)
	}
	return clusters, noise
}

// readLabels reads a labels CSV: the header "label", then one integer per
// line.
func readLabels(path string) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<16)
	var labels []int32
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if line == 1 {
			if t != "label" {
				return nil, fmt.Errorf("%s:1: header %q, want label", path, t)
			}
			continue
		}
		v, err := strconv.ParseInt(t, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		labels = append(labels, int32(v))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return labels, nil
}

// readIndices reads one point index per line, each below n.
func readIndices(path string, n int) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var idx []int
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		v, err := strconv.Atoi(t)
		if err != nil || v < 0 || v >= n {
			return nil, fmt.Errorf("%s:%d: %q is not a point index below %d", path, line, t, n)
		}
		idx = append(idx, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return idx, nil
}

// printTable prints the results as a markdown table.
func printTable(w io.Writer, o options, meta genMeta, contender string, rows []row) {
	who := "trawl dbscan"
	if contender == "self" {
		who = "dbscan.Cluster in the harness's cluster mode (-contender self, or the binary has no dbscan command)"
	}
	skv := ""
	for _, r := range rows {
		if r.skMeta.Version != "" {
			skv = fmt.Sprintf("scikit-learn %s (algorithm %s: %s, n_jobs %d)", r.skMeta.Version, r.skMeta.Algorithm, r.skMeta.Index, o.jobs)
		}
	}
	fmt.Fprintf(w, "\n%d standardized 6-d simweb feature rows (seed %d, %d hosts; SuggestEps knee %.3f), minPts %d, %d CPUs; trawl: %s; %s\n\n",
		meta.Points, meta.Seed, meta.Hosts, meta.Knee, o.minPts, runtime.NumCPU(), who, skv)
	fmt.Fprintln(w, "| points | eps | nbrs/pt | minPts | clusters | noise | trawl wall | trawl CPU | trawl RSS | sklearn wall | sklearn CPU | sklearn RSS | speedup wall | speedup CPU | ARI core | labels identical |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %.3f | %.1f | %d | %d | %d | %s | %s | %s |", meta.Points, r.eps.Eps, r.eps.Neighbours, o.minPts,
			r.clusters, r.noise, secs(r.trawl.wall), secs(r.trawl.cpu), mib(r.trawl.rss))
		if r.skSkipped != "" {
			fmt.Fprintf(w, " %s | | | | | | |\n", r.skSkipped)
			continue
		}
		same := "yes"
		if !r.identical {
			same = fmt.Sprintf("no (%d differ)", r.differ)
		}
		fmt.Fprintf(w, " %s | %s | %s | %.1fx | %.1fx | %.6f | %s |\n", secs(r.sk.wall), secs(r.sk.cpu), mib(r.sk.rss),
			r.sk.wall.Seconds()/r.trawl.wall.Seconds(), r.sk.cpu.Seconds()/r.trawl.cpu.Seconds(), r.ari, same)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		if r.skSkipped == "" {
			fmt.Fprintf(w, "eps %.3f: scikit-learn loaded the CSV in %.1f s (%.1f s CPU) and fit in %.1f s (%.1f s CPU); %d clusters\n",
				r.eps.Eps, r.skMeta.LoadS, r.skMeta.LoadCPUS, r.skMeta.FitS, r.skMeta.FitCPUS, r.skClusters)
		}
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func mib(b int64) string          { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// genCmd is the gen child: gen POINTS.csv META.json N HOSTS SEED EPS MINPTS.
func genCmd(args []string) error {
	if len(args) != 7 {
		return fmt.Errorf("usage: gen POINTS.csv META.json N HOSTS SEED EPS[,EPS...] MINPTS (got %d arguments)", len(args))
	}
	var o genOptions
	var err error
	o.out, o.meta = args[0], args[1]
	if o.n, err = strconv.Atoi(args[2]); err != nil {
		return fmt.Errorf("N: %w", err)
	}
	if o.hosts, err = strconv.Atoi(args[3]); err != nil {
		return fmt.Errorf("HOSTS: %w", err)
	}
	if o.seed, err = strconv.ParseUint(args[4], 10, 64); err != nil {
		return fmt.Errorf("SEED: %w", err)
	}
	o.eps = strings.Split(args[5], ",")
	if o.minPts, err = strconv.Atoi(args[6]); err != nil {
		return fmt.Errorf("MINPTS: %w", err)
	}
	o.sampleSize = 1000
	return genMain(context.Background(), o)
}

// clusterCmd is the stand-in for trawl dbscan while the command does not
// exist: cluster POINTS.csv EPS MINPTS LABELS.csv, with the package's own
// CSV reader, Cluster and label writer.
func clusterCmd(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: cluster POINTS.csv EPS MINPTS LABELS.csv (got %d arguments)", len(args))
	}
	eps, err := strconv.ParseFloat(args[1], 64)
	if err != nil {
		return fmt.Errorf("EPS: %w", err)
	}
	minPts, err := strconv.Atoi(args[2])
	if err != nil {
		return fmt.Errorf("MINPTS: %w", err)
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	pts, _, err := dbscan.ReadCSV(f, args[0])
	f.Close()
	if err != nil {
		return err
	}
	res, err := dbscan.Cluster(context.Background(), pts, dbscan.Params{Eps: eps, MinPts: minPts})
	if err != nil {
		return err
	}
	out, err := os.Create(args[3])
	if err != nil {
		return err
	}
	if err := dbscan.WriteLabelsCSV(out, res.Labels); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", args[3], err)
	}
	return nil
}
