package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/revisit"
	"github.com/trawl/trawl/simweb"
)

// evalCommand is trawl eval and its subcommands. It is one literal on
// purpose, as every command definition is: help text, flags and actions,
// read top to bottom as the command's reference.
func evalCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "evaluate trawl's policies against the synthetic web's ground truth",
		Description: `Evaluations against the synthetic web's ground truth: revisit and focus simulate
crawls with trawl's real schedule, clustering, estimation, topic and parsing
code; linkrank crawls for real. See each subcommand's --help.

Examples:
   trawl eval revisit --pages 10000 --days 30 --out eval-small
   trawl eval revisit --pages 100000 --hosts 1000 --days 90 --out eval
   trawl eval linkrank --pages 5000 --rounds 5 --topN 500
   trawl eval focus --plot focus.png`,
		Subcommands: []*cli.Command{evalLinkRankCommand(sio), evalFocusCommand(sio), {
			Name:  "revisit",
			Usage: "simulate revisit policies over the synthetic web's ground truth and compare them",
			Description: `Simulates daily crawl rounds over a synthetic web (trawl simweb, generated without
hazards) whose true change events are known, for each policy, with the real
schedule code, the real DBSCAN and the real estimators, at the same fetch budget:

  default      Nutch's DefaultFetchSchedule, its fixed interval tuned to the
               budget (with --no-tune: schedule.defaultInterval, 30 days)
  adaptive     Nutch's AdaptiveFetchSchedule with the schedule.adaptive.*
               settings, its initial interval tuned to the budget (with
               --no-tune: schedule.defaultInterval)
  dynamic      Hu and Wu's dynamic strategy (DBSCAN clusters of young pages,
               cluster periods from samples, Poisson after 16 changes)
  dynamic-opt  dynamic with the freshness-optimal allocation for old pages
  oracle       the true rates and the freshness-optimal allocation
  estimate     trawl's estimating schedule (schedule.name estimate, the code
               generate and updatedb run): every page's rate from its own
               fetch history (censoring handled, Last-Modified dates where
               the server sends them), shrunk toward a prior fitted to
               similar pages, and the freshness-optimal allocation over the
               estimates

(Run only when listed: dynamic-alloc, an experiment, dynamic-opt with the
allocation for young pages too; estimate-prior, a bound, estimate with each
group's true rate distribution as its prior.) The schedules take the
schedule.* settings (schedule.defaultInterval, schedule.adaptive.*,
schedule.dynamic.*, schedule.estimate.*; see trawl config), so e.g.
TRAWL_SCHEDULE_DEFAULT_INTERVAL=7d with --no-tune runs default and adaptive
from a 7-day interval.

Every round at most --budget of the due pages are fetched, ranked as trawl
generate ranks them under the dynamic schedule (score times the estimated
probability of a change since the last fetch; schedule.dynamic.rank), else
most overdue first; unused budget is lost.

Equal budgets: a schedule that keeps fewer pages due than the budget spends
fewer fetches (with Nutch's 30-day interval the default and adaptive schedules
use about a third of a 10% budget), and comparing it with one that spends the
whole budget compares costs, not schedules. So by default the default and
adaptive policies are first tuned: their initial interval
(schedule.defaultInterval, which is also where the adaptive schedule's
intervals start) is searched by bisection of its logarithm between 1 hour and
90 days, each trial a full simulation (12 per policy), for the longest interval
whose budget shortfall is within 0.001 of the shortest interval's; the table's
interval_days column gives the chosen interval and budget_used the fetches over
budget times days. --no-tune runs them with schedule.defaultInterval as
configured (Nutch's 30 days). --budgets 5%,10%,20% runs the whole comparison
(tuning included) at each budget, as shares of the simulated pages.

Prints a markdown table (interval, fetches, budget used, changes detected,
prediction offset mu, hit rate lambda, efficiency eta, mean freshness and age;
see the revisit package documentation for the exact definitions) and a second
table of the pages by schedule source after the last round (which rule set
each page's interval: default, adaptive, cluster, poisson, oracle), and writes
to --out: table.md, table.csv, report.json (with the daily series, the daily
counts by schedule source and the tuning trials) and freshness.png and
freshness.svg (freshness per day and policy). With --budgets, table.md and
table.csv hold every budget's table, report.json every budget's report,
freshness-<share>.png/.svg is the daily plot at each budget and
budgets.png/.svg plots each policy's mean freshness against its fetches per
day.

--trace FILE runs the policies on a recorded change history instead of the
synthetic web: a CSV file (header url,words,outlinks,inlinks,images,depth,
bytes,changes[,rate][,last_modified]; changes are RFC 3339 times separated by
spaces; last_modified true says the page's server sends Last-Modified, the
time of its last change) or a Parquet file of the same fields (changes a list
of timestamps). The period
starts at --trace-start (default midnight UTC of the earliest change) and
lasts --days; the oracle takes each page's rate column, else the rate the
trace shows. Any history is allowed: timetables, bursts, quiet spells.
--write-trace FILE writes the synthetic web's history in that CSV form.
--change MODEL draws the synthetic web's rates with another change model
(strong, weak, none or drift; see trawl simweb serve --help).

--trace-model MODEL runs the policies on a generated history of --pages pages
on --hosts hosts over --days from --trace-start (default 2026-01-01T00:00:00Z),
selected by --seed, whose pages do not all change as Poisson processes:
poisson (Poisson rates from a realistic mixture), timetable (changes at fixed
times of day on a weekly timetable, jittered, some slots skipped), bursty
(quiet spells of days to weeks broken by bursts of changes within hours), quiet
(pages that stop changing, or start, part-way) or mixed (all of them, by page
kind); features predict a page's pattern only loosely, and the oracle knows
each page's mean rate over the period, not its pattern (see revisit.TraceModel
for the parameters). --write-trace FILE writes it as a CSV trace too. Not with
--trace.

Examples:
   trawl eval revisit --pages 10000 --days 30 --out eval-small
   trawl eval revisit --pages 20000 --days 60 --budgets 5%,10%,20% --out eval-budgets
   trawl eval revisit --pages 100000 --hosts 1000 --days 90 --no-tune --out eval-nutch
   trawl eval revisit --trace revisit/testdata/example-trace.csv --days 14
   trawl eval revisit --pages 2000 --days 14 --write-trace history.csv
   trawl eval revisit --trace-model mixed --pages 20000 --days 60 --write-trace mixed.csv
   trawl eval revisit --policies adaptive,dynamic --eps 0.3 --recluster 7`,
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "pages", Value: 100000, Usage: "content pages of the web (`N`)"},
				&cli.IntFlag{Name: "hosts", Usage: "regular hosts (`N`)", DefaultText: "pages/100, at least 1"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` selecting the web"},
				&cli.StringFlag{Name: "change", Value: "default", Usage: "change `MODEL` of the web: default, strong, weak, none or drift (trawl simweb serve --help)"},
				&cli.IntFlag{Name: "days", Value: revisit.DefaultDays, Usage: "simulated days, one round a day (`D`)"},
				&cli.IntFlag{Name: "budget", Usage: "fetches per round (`B`)", DefaultText: "10% of the simulated pages"},
				&cli.StringFlag{Name: "budgets", Usage: "run the comparison at each budget of the comma-separated `LIST` of shares of the pages (5% or 0.05; not with --budget)"},
				&cli.BoolFlag{Name: "no-tune", Usage: "do not tune the default and adaptive policies' initial interval to the budget (use schedule.defaultInterval)"},
				&cli.IntFlag{Name: "recluster", Value: revisit.DefaultRecluster, Usage: "dynamic: days between DBSCAN runs (`K`)"},
				&cli.Float64Flag{Name: "eps", Value: revisit.DefaultEps, Usage: "dynamic: DBSCAN eps (`E`; negative: the k-distance knee of each run)"},
				&cli.IntFlag{Name: "min-pts", Value: revisit.DefaultMinPts, Usage: "dynamic: DBSCAN minPts (`M`, the point itself included)"},
				&cli.IntFlag{Name: "min-samples", Value: revisit.DefaultMinSamples, Usage: "dynamic: samples per cluster at least (`K`)"},
				&cli.Float64Flag{Name: "sample-rate", Value: revisit.DefaultSampleRate, Usage: "dynamic: samples as a share of a cluster's size (`R`)"},
				&cli.DurationFlag{Name: "fetch-lag", Value: revisit.DefaultFetchLag, Usage: "time from a round's start to its fetches (`DURATION`)"},
				&cli.StringFlag{Name: "policies", Value: strings.Join(revisit.PolicyNames(), ","), Usage: "comma-separated `LIST` of policies"},
				&cli.StringFlag{Name: "out", Usage: "write the table, report and plots to `DIR` (created)"},
				&cli.StringFlag{Name: "trace", Usage: "simulate a recorded change history `FILE` (CSV or Parquet) instead of the synthetic web"},
				&cli.StringFlag{Name: "trace-start", Usage: "start `TIME` of the --trace period (RFC 3339; default midnight of the earliest change)"},
				&cli.StringFlag{Name: "write-trace", Usage: "write the synthetic web's change history to `FILE` (CSV), the --trace form"},
				&cli.StringFlag{Name: "trace-model", Usage: "simulate a generated change history of `MODEL` (" + strings.Join(revisit.TraceModelNames(), ", ") + ") instead of the synthetic web"},
			},
			Action: action(sio, func(s *session, c *cli.Context) error {
				if c.Args().Present() {
					return usageErrorf("eval revisit takes no arguments, got %q", c.Args().First())
				}
				return s.evalRevisit(c)
			}),
		}},
	}
}

func (s *session) evalRevisit(c *cli.Context) error {
	start := time.Now()
	cfg, err := s.evalRevisitConfig(c)
	if err != nil {
		return err
	}
	out := c.String("out")
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("eval revisit: %w", err)
		}
	}
	t0 := time.Now()
	tr, err := s.evalRevisitTruth(c, time.Duration(cfg.Days)*24*time.Hour)
	if err != nil {
		return err
	}
	truthTime := time.Since(t0)
	s.log.Info("eval revisit: truth read", "pages", len(tr.Pages), "events", tr.Events.Total(), "seconds", time.Since(t0).Seconds())
	if len(cfg.Budgets) > 0 {
		sw, err := revisit.Sweep(c.Context, tr, cfg)
		if err != nil {
			return fmt.Errorf("eval revisit: %w", err)
		}
		if err := sw.Markdown(s.io.stdout); err != nil {
			return err
		}
		if len(sw.Reports) > 0 {
			printFeatureCorrelations(s.io.stdout, sw.Reports[0].Features)
		}
		fmt.Fprintf(s.io.stdout, "\nwall time %.1f s (history %.1f s, simulation %.1f s)\n",
			time.Since(start).Seconds(), truthTime.Seconds(), sw.Seconds)
		if out == "" {
			return nil
		}
		return s.writeEvalRevisitSweep(out, sw)
	}
	rep, err := revisit.Run(c.Context, tr, cfg)
	if err != nil {
		return fmt.Errorf("eval revisit: %w", err)
	}
	if err := rep.Markdown(s.io.stdout); err != nil {
		return err
	}
	printFeatureCorrelations(s.io.stdout, rep.Features)
	fmt.Fprintf(s.io.stdout, "\nwall time %.1f s (history %.1f s, simulation %.1f s)\n",
		time.Since(start).Seconds(), truthTime.Seconds(), rep.Seconds)
	if out == "" {
		return nil
	}
	return s.writeEvalRevisit(out, rep)
}

// evalRevisitTruth reads the recorded history of --trace, or generates
// the synthetic web and reads its truth (writing it to --write-trace).
func (s *session) evalRevisitTruth(c *cli.Context, horizon time.Duration) (*revisit.Truth, error) {
	if model := c.String("trace-model"); model != "" {
		if c.IsSet("trace") {
			return nil, usageErrorf("eval revisit: --trace and --trace-model exclude each other")
		}
		start := simweb.DefaultEpoch()
		if v := c.String("trace-start"); v != "" {
			var err error
			if start, err = time.Parse(time.RFC3339, v); err != nil {
				return nil, usageErrorf("eval revisit: --trace-start: %w", err)
			}
		}
		pages, err := revisit.GenerateTrace(revisit.TraceGenConfig{Model: revisit.TraceModel(model), Pages: c.Int("pages"),
			Hosts: c.Int("hosts"), Start: start, Days: int(horizon / (24 * time.Hour)), Seed: c.Uint64("seed")})
		if err != nil {
			return nil, usageErrorf("eval revisit: %w", err)
		}
		if file := c.String("write-trace"); file != "" {
			if err := writeFileAtomic(file, func(f *os.File) error { return revisit.WriteTraceCSV(f, pages) }); err != nil {
				return nil, fmt.Errorf("eval revisit: %w", err)
			}
		}
		tr, err := revisit.NewTraceTruth(pages, start, horizon)
		if err != nil {
			return nil, fmt.Errorf("eval revisit: %w", err)
		}
		return tr, nil
	}
	if file := c.String("trace"); file != "" {
		if c.IsSet("write-trace") {
			return nil, usageErrorf("eval revisit: --trace and --write-trace exclude each other")
		}
		var start time.Time
		if v := c.String("trace-start"); v != "" {
			var err error
			if start, err = time.Parse(time.RFC3339, v); err != nil {
				return nil, usageErrorf("eval revisit: --trace-start: %w", err)
			}
		}
		pages, err := revisit.ReadTrace(file)
		if err != nil {
			return nil, usageErrorf("eval revisit: %w", err)
		}
		tr, err := revisit.NewTraceTruth(pages, start, horizon)
		if err != nil {
			return nil, usageErrorf("eval revisit: %w", err)
		}
		return tr, nil
	}
	pages := c.Int("pages")
	hosts := c.Int("hosts")
	if hosts == 0 {
		hosts = max(1, pages/100)
	}
	web, err := simweb.New(simweb.Config{Seed: c.Uint64("seed"), Hosts: hosts, Pages: pages, Hazards: simweb.HazardsNone, Change: simweb.ChangeModel(c.String("change"))})
	if err != nil {
		return nil, usageErrorf("eval revisit: %w", err)
	}
	tr, err := revisit.NewTruth(c.Context, web, horizon)
	if err != nil {
		return nil, fmt.Errorf("eval revisit: %w", err)
	}
	if file := c.String("write-trace"); file != "" {
		err := writeFileAtomic(file, func(f *os.File) error { return revisit.WriteTraceCSV(f, revisit.TraceOf(tr)) })
		if err != nil {
			return nil, fmt.Errorf("eval revisit: %w", err)
		}
	}
	return tr, nil
}

// parseBudgetShares parses --budgets: comma-separated shares of the
// pages, each a percentage ("5%") or a fraction ("0.05").
func parseBudgetShares(list string) ([]float64, error) {
	var shares []float64
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		num, scale := f, 1.0
		if strings.HasSuffix(f, "%") {
			num, scale = strings.TrimSpace(strings.TrimSuffix(f, "%")), 100
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return nil, usageErrorf("--budgets: %q: want a percentage (5%%) or a fraction (0.05)", f)
		}
		v /= scale
		if !(v > 0 && v <= 1) {
			return nil, usageErrorf("--budgets: %q: want a share of the pages in (0, 100%%]", f)
		}
		if slices.Contains(shares, v) {
			return nil, usageErrorf("--budgets: %q given twice", f)
		}
		shares = append(shares, v)
	}
	if len(shares) == 0 {
		return nil, usageErrorf("--budgets %q: no budget", list)
	}
	return shares, nil
}

// evalRevisitConfig builds the simulation's configuration from the flags
// and the schedule.* settings, and checks it.
func (s *session) evalRevisitConfig(c *cli.Context) (revisit.Config, error) {
	sched, err := s.schedule()
	if err != nil {
		return revisit.Config{}, err
	}
	var policies []string
	for _, p := range strings.Split(c.String("policies"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			policies = append(policies, p)
		}
	}
	days := c.Int("days")
	if days < 1 {
		return revisit.Config{}, usageErrorf("--days %d: want at least 1", days)
	}
	cfg := revisit.Config{
		Days: days, Budget: c.Int("budget"), Policies: policies, Schedule: &sched.Config,
		Recluster: c.Int("recluster"), Eps: c.Float64("eps"), MinPts: c.Int("min-pts"),
		MinSamples: c.Int("min-samples"), SampleRate: c.Float64("sample-rate"),
		FetchLag: c.Duration("fetch-lag"), NoTune: c.Bool("no-tune"), Log: s.log,
	}
	if c.IsSet("budget") && cfg.Budget < 1 {
		return cfg, usageErrorf("--budget %d: want at least 1", cfg.Budget)
	}
	if c.IsSet("budgets") {
		if c.IsSet("budget") {
			return cfg, usageErrorf("--budget and --budgets: give one")
		}
		if cfg.Budgets, err = parseBudgetShares(c.String("budgets")); err != nil {
			return cfg, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("eval revisit: %w", err)
	}
	return cfg, nil
}

// writeEvalRevisit writes the report's tables, JSON and plots to dir.
func (s *session) writeEvalRevisit(dir string, rep *revisit.Report) error {
	for _, f := range []struct {
		name  string
		write func(*os.File) error
	}{
		{"table.md", func(f *os.File) error { return rep.Markdown(f) }},
		{"table.csv", func(f *os.File) error { return rep.WriteCSV(f) }},
		{"report.json", func(f *os.File) error { return rep.WriteJSON(f) }},
	} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	for _, name := range []string{"freshness.png", "freshness.svg"} {
		if err := rep.SavePlot(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("eval revisit: %w", err)
		}
	}
	fmt.Fprintf(s.io.stdout, "wrote %s/{table.md,table.csv,report.json,freshness.png,freshness.svg}\n", dir)
	return nil
}

// writeEvalRevisitSweep writes the sweep's tables, JSON and plots to dir:
// the daily plot of each budget and the plot of freshness against fetches.
func (s *session) writeEvalRevisitSweep(dir string, sw *revisit.SweepReport) error {
	for _, f := range []struct {
		name  string
		write func(*os.File) error
	}{
		{"table.md", func(f *os.File) error { return sw.Markdown(f) }},
		{"table.csv", func(f *os.File) error { return sw.WriteCSV(f) }},
		{"report.json", func(f *os.File) error { return sw.WriteJSON(f) }},
	} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	var names []string
	for _, rep := range sw.Reports {
		base := "freshness-" + strings.TrimSuffix(revisit.ShareText(rep.BudgetShare), "%") + "pct"
		for _, ext := range []string{".png", ".svg"} {
			if err := rep.SavePlot(filepath.Join(dir, base+ext)); err != nil {
				return fmt.Errorf("eval revisit: %w", err)
			}
		}
		names = append(names, base+".png", base+".svg")
	}
	for _, name := range []string{"budgets.png", "budgets.svg"} {
		if err := sw.SavePlot(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("eval revisit: %w", err)
		}
	}
	fmt.Fprintf(s.io.stdout, "wrote %s/{table.md,table.csv,report.json,budgets.png,budgets.svg,%s}\n", dir, strings.Join(names, ","))
	return nil
}

// writeFileAtomic writes a file through a temporary file in the same
// directory, renamed into place when complete.
func writeFileAtomic(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("eval revisit: %w", err)
	}
	tmp := f.Name()
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("eval revisit: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("eval revisit: %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("eval revisit: %w", err)
	}
	return nil
}

// printFeatureCorrelations prints which features predict the pages' true
// change rates (revisit.FeatureCorrelations).
func printFeatureCorrelations(w io.Writer, fc []revisit.FeatureCorrelation) {
	parts := make([]string, len(fc))
	for i, f := range fc {
		parts[i] = fmt.Sprintf("%s %+.3f", f.Feature, f.Spearman)
	}
	fmt.Fprintf(w, "\nfeatures against the true change rate (Spearman's rho): %s\n", strings.Join(parts, ", "))
}
