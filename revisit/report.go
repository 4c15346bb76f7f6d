package revisit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// tableColumns are the columns of the markdown and CSV tables.
var tableColumns = []string{"policy", "fetches", "budget_used", "changes_detected", "unchanged", "mu_hours",
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
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m.Sources {
			if !yield(k) {
				return
			}
		}
	}) {
		src = append(src, fmt.Sprintf("%s %d", k, m.Sources[k]))
	}
	return []string{m.Policy, strconv.FormatInt(m.Fetches, 10), f(m.BudgetUsed, 3),
		strconv.FormatInt(m.Changed, 10), strconv.FormatInt(m.Unchanged, 10), f(m.OffsetHours, 1),
		f(m.HitRate, 4), f(m.Efficiency, 3), f(m.Freshness, 4), f(m.SteadyFreshness, 4), f(m.AgeHours, 1),
		strings.Join(src, "; ")}
}

// Markdown writes the report as a markdown table, one row per policy,
// under a line giving the simulation's size.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pages, %d days from %s, budget %d fetches/day, %d change events; dynamic: recluster every %d days, eps %s, minPts %d, samples max(%d, %g·size); fetch lag %s\n\n",
		r.Pages, r.Days, r.Start.Format("2006-01-02"), r.Budget, r.Events, r.Recluster, epsText(r.Eps), r.MinPts, r.MinSamples, r.SampleRate, r.FetchLag)
	b.WriteString("| " + strings.Join(tableColumns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(tableColumns)) + "\n")
	for _, m := range r.Policies {
		b.WriteString("| " + strings.Join(m.row(), " | ") + " |\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("revisit: write table: %w", err)
	}
	return nil
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
	type jm struct {
		Metrics
		OffsetHours *float64 `json:"offset_hours"`
		HitRate     *float64 `json:"hit_rate"`
		Efficiency  *float64 `json:"efficiency"`
	}
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := struct {
		*Report
		Policies []jm `json:"policies"`
	}{Report: r}
	for _, m := range r.Policies {
		out.Policies = append(out.Policies, jm{Metrics: m, OffsetHours: num(m.OffsetHours), HitRate: num(m.HitRate), Efficiency: num(m.Efficiency)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("revisit: write json: %w", err)
	}
	return nil
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
	colors := []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}}
	for k, m := range r.Policies {
		xy := make(plotter.XYs, len(m.DailyFreshness))
		for d, v := range m.DailyFreshness {
			xy[d].X, xy[d].Y = float64(d), v
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("revisit: plot %s: %w", m.Policy, err)
		}
		l.Color = colors[k%len(colors)]
		l.Width = vg.Points(1.5)
		if k >= len(colors) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(m.Policy, l)
	}
	return p, nil
}

// SavePlot writes Plot to file, as PNG or SVG by its extension.
func (r *Report) SavePlot(file string) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png", ".svg":
	default:
		return fmt.Errorf("revisit: plot %s: want a .png or .svg file", file)
	}
	p, err := r.Plot()
	if err != nil {
		return err
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, file); err != nil {
		return fmt.Errorf("revisit: plot %s: %w", file, err)
	}
	return nil
}
