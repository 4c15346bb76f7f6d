package revisit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// tableColumns are the columns of the CSV table; the markdown table has
// all but the last (sources), which it gives as a second table.
var tableColumns = []string{"policy", "interval_days", "fetches", "budget_used", "changes_detected", "unchanged", "mu_hours",
	"hit_rate", "eta", "freshness", "steady_freshness", "age_hours", "sources"}

// row is one policy's table row.
func (m Metrics) row() []string {
	f := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	var src []string
	for _, k := range sortedKeys(m.Sources) {
		src = append(src, fmt.Sprintf("%s %d", k, m.Sources[k]))
	}
	interval := math.NaN()
	if m.IntervalSeconds > 0 {
		interval = float64(m.IntervalSeconds) / daySeconds
	}
	return []string{m.Policy, f(interval, 2), strconv.FormatInt(m.Fetches, 10), f(m.BudgetUsed, 3),
		strconv.FormatInt(m.Changed, 10), strconv.FormatInt(m.Unchanged, 10), f(m.OffsetHours, 1),
		f(m.HitRate, 4), f(m.Efficiency, 3), f(m.Freshness, 4), f(m.SteadyFreshness, 4), f(m.AgeHours, 1),
		strings.Join(src, "; ")}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Markdown writes the report as two markdown tables under a line giving
// the simulation's size and how the baselines' intervals were chosen: the
// metrics, one row per policy, and the pages by schedule source after
// the last round (which rule set each page's interval), one row per
// policy.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pages, %d days from %s, budget %d fetches/day, %d change events; dynamic: recluster every %d days, eps %s, minPts %d, samples max(%d, %g·size); fetch lag %s\n\n",
		r.Pages, r.Days, r.Start.Format("2006-01-02"), r.Budget, r.Events, r.Recluster, epsText(r.Eps), r.MinPts, r.MinSamples, r.SampleRate, r.FetchLag)
	if r.Tuned {
		fmt.Fprintf(&b, "default and adaptive: initial interval (interval_days) tuned to spend the budget: the longest in [%v, %v] whose shortfall is within %g of the least\n\n",
			durationText(TuneMinInterval), durationText(TuneMaxInterval), r.TuneTolerance)
	} else {
		b.WriteString("default and adaptive: initial interval (interval_days) as configured, not tuned to the budget\n\n")
	}
	cols := tableColumns[:len(tableColumns)-1]
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, m := range r.Policies {
		b.WriteString("| " + strings.Join(m.row()[:len(cols)], " | ") + " |\n")
	}
	all := map[string]bool{}
	for _, m := range r.Policies {
		for k := range m.Sources {
			all[k] = true
		}
	}
	srcs := sortedKeys(all)
	b.WriteString("\npages by schedule source after the last round (which rule set the interval):\n\n")
	b.WriteString("| policy | " + strings.Join(srcs, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(srcs)+1) + "\n")
	for _, m := range r.Policies {
		row := []string{m.Policy}
		for _, k := range srcs {
			row = append(row, strconv.FormatInt(m.Sources[k], 10))
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("revisit: write table: %w", err)
	}
	return nil
}

// durationText writes whole days as "90d", whole hours as "1h", else as
// time.Duration does.
func durationText(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

func epsText(eps float64) string {
	if eps < 0 {
		return "knee"
	}
	return strconv.FormatFloat(eps, 'g', -1, 64)
}

// WriteCSV writes the table as CSV with a header row.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(tableColumns); err != nil {
		return fmt.Errorf("revisit: write csv: %w", err)
	}
	for _, m := range r.Policies {
		if err := cw.Write(m.row()); err != nil {
			return fmt.Errorf("revisit: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("revisit: write csv: %w", err)
	}
	return nil
}

// WriteJSON writes the whole report, daily series included, as indented
// JSON (NaN metrics as null).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.jsonValue()); err != nil {
		return fmt.Errorf("revisit: write json: %w", err)
	}
	return nil
}

// jsonMetrics is Metrics with its NaN-able values as pointers.
type jsonMetrics struct {
	Metrics
	OffsetHours *float64 `json:"offset_hours"`
	HitRate     *float64 `json:"hit_rate"`
	Efficiency  *float64 `json:"efficiency"`
}

// jsonReport is Report as WriteJSON writes it.
type jsonReport struct {
	*Report
	Policies []jsonMetrics `json:"policies"`
}

// jsonValue is the report with its NaN metrics as null.
func (r *Report) jsonValue() jsonReport {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := jsonReport{Report: r}
	for _, m := range r.Policies {
		out.Policies = append(out.Policies, jsonMetrics{Metrics: m, OffsetHours: num(m.OffsetHours), HitRate: num(m.HitRate), Efficiency: num(m.Efficiency)})
	}
	return out
}

// Plot draws each policy's daily mean freshness over the days.
func (r *Report) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Freshness per day: %d pages, budget %d fetches/day", r.Pages, r.Budget)
	p.X.Label.Text = "day"
	p.Y.Label.Text = "mean freshness"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = false
	for k, m := range r.Policies {
		xy := make(plotter.XYs, len(m.DailyFreshness))
		for d, v := range m.DailyFreshness {
			xy[d].X, xy[d].Y = float64(d), v
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("revisit: plot %s: %w", m.Policy, err)
		}
		l.LineStyle = lineStyle(k)
		p.Add(l)
		p.Legend.Add(m.Policy, l)
	}
	return p, nil
}

// lineStyle is the k-th policy's line: a colour of the palette, dashed
// once the palette is used up.
func lineStyle(k int) draw.LineStyle {
	colors := []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}}
	s := draw.LineStyle{Color: colors[k%len(colors)], Width: vg.Points(1.5)}
	if k >= len(colors) {
		s.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return s
}

// SavePlot writes Plot to file, as PNG or SVG by its extension.
func (r *Report) SavePlot(file string) error {
	return savePlot(file, r.Plot)
}

// savePlot writes the plot mk makes to file, as PNG or SVG by its
// extension.
func savePlot(file string, mk func() (*plot.Plot, error)) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png", ".svg":
	default:
		return fmt.Errorf("revisit: plot %s: want a .png or .svg file", file)
	}
	p, err := mk()
	if err != nil {
		return err
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, file); err != nil {
		return fmt.Errorf("revisit: plot %s: %w", file, err)
	}
	return nil
}
