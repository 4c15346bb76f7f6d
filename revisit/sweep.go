package revisit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SweepReport is the result of Sweep: the whole comparison at each budget.
type SweepReport struct {
	// Shares are the budget shares, in Config.Budgets order; Reports the
	// comparison at each (Report.BudgetShare and Report.Budget give it).
	Shares  []float64 `json:"budget_shares"`
	Reports []*Report `json:"reports"`
	// Seconds is the wall time of Sweep (the truth excluded).
	Seconds float64 `json:"seconds"`
}

// BudgetOfShare is the daily budget of a share of n pages: share · n
// rounded up, at least 1.
func BudgetOfShare(share float64, n int) int {
	// The small margin keeps a product such as 0.1 · 20000 that floating
	// point puts a hair above a whole number at that number.
	return max(1, int(math.Ceil(share*float64(n)-1e-9)))
}

// Sweep runs the comparison (Run, with the baselines tuned to each budget
// unless cfg.NoTune) once per budget share in cfg.Budgets, the budget
// being BudgetOfShare of the truth's pages. cfg.Budget must be 0.
func Sweep(ctx context.Context, tr *Truth, cfg Config) (*SweepReport, error) {
	start := time.Now()
	if len(cfg.Budgets) == 0 {
		return nil, fmt.Errorf("revisit: sweep: no budget shares")
	}
	if _, err := cfg.resolved(len(tr.Pages)); err != nil {
		return nil, err
	}
	sw := &SweepReport{Shares: append([]float64(nil), cfg.Budgets...)}
	for _, share := range cfg.Budgets {
		c := cfg
		c.Budgets = nil
		c.Budget = BudgetOfShare(share, len(tr.Pages))
		rep, err := Run(ctx, tr, c)
		if err != nil {
			return nil, fmt.Errorf("revisit: sweep: budget share %g: %w", share, err)
		}
		rep.BudgetShare = share
		sw.Reports = append(sw.Reports, rep)
	}
	sw.Seconds = time.Since(start).Seconds()
	return sw, nil
}

// ShareText writes a budget share as a percentage ("5%", "12.5%").
func ShareText(share float64) string {
	return strconv.FormatFloat(share*100, 'g', 6, 64) + "%"
}

// Markdown writes each budget's report (Report.Markdown) under a heading
// naming the budget.
func (s *SweepReport) Markdown(w io.Writer) error {
	for k, r := range s.Reports {
		if k > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return fmt.Errorf("revisit: write table: %w", err)
			}
		}
		if _, err := fmt.Fprintf(w, "## budget %s of the pages: %d fetches/day\n\n", ShareText(r.BudgetShare), r.Budget); err != nil {
			return fmt.Errorf("revisit: write table: %w", err)
		}
		if err := r.Markdown(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes every budget's table as one CSV: a header row, then one
// row per budget and policy, each starting with the budget share and the
// budget (fetches a day).
func (s *SweepReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"budget_share", "budget"}, tableColumns...)); err != nil {
		return fmt.Errorf("revisit: write csv: %w", err)
	}
	for _, r := range s.Reports {
		for _, m := range r.Policies {
			row := append([]string{strconv.FormatFloat(r.BudgetShare, 'g', -1, 64), strconv.Itoa(r.Budget)}, m.row()...)
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("revisit: write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("revisit: write csv: %w", err)
	}
	return nil
}

// WriteJSON writes the sweep, every report whole, as indented JSON (NaN
// metrics as null).
func (s *SweepReport) WriteJSON(w io.Writer) error {
	out := struct {
		*SweepReport
		Reports []jsonReport `json:"reports"`
	}{SweepReport: s}
	for _, r := range s.Reports {
		out.Reports = append(out.Reports, r.jsonValue())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("revisit: write json: %w", err)
	}
	return nil
}

// Plot draws each policy's mean freshness against its fetches per day
// (its fetches over the days), one point per budget, one line per policy;
// the freshness axis spans the values, not 0..1, to tell the lines apart.
func (s *SweepReport) Plot() (*plot.Plot, error) {
	p := plot.New()
	var shares []string
	for _, r := range s.Reports {
		shares = append(shares, ShareText(r.BudgetShare))
	}
	title := "Freshness against fetches"
	if len(s.Reports) > 0 {
		title = fmt.Sprintf("Freshness against fetches: %d pages, %d days, budgets %s", s.Reports[0].Pages, s.Reports[0].Days, strings.Join(shares, ", "))
	}
	p.Title.Text = title
	p.X.Label.Text = "fetches per day"
	p.Y.Label.Text = "mean freshness"
	p.Add(plotter.NewGrid())
	// Freshness rises with the fetches: the top left corner is free.
	p.Legend.Top = true
	p.Legend.Left = true
	var order []string
	points := map[string]plotter.XYs{}
	for _, r := range s.Reports {
		for _, m := range r.Policies {
			if _, ok := points[m.Policy]; !ok {
				order = append(order, m.Policy)
			}
			points[m.Policy] = append(points[m.Policy], plotter.XY{X: float64(m.Fetches) / float64(r.Days), Y: m.Freshness})
		}
	}
	for k, name := range order {
		l, pts, err := plotter.NewLinePoints(points[name])
		if err != nil {
			return nil, fmt.Errorf("revisit: plot %s: %w", name, err)
		}
		l.LineStyle = lineStyle(k)
		pts.Color = l.Color
		pts.Radius = vg.Points(2.5)
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
	}
	return p, nil
}

// SavePlot writes Plot to file, as PNG or SVG by its extension.
func (s *SweepReport) SavePlot(file string) error {
	return savePlot(file, s.Plot)
}
