package main

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plots writes dns-throughput.png (lookups per second, log scale) and
// dns-latency.png (the CDF of lookup latency, log time axis).
func plots(dir string, rs []*result) error {
	tp := plot.New()
	tp.Title.Text = "DNS lookups per second (log scale)"
	tp.Y.Label.Text = "lookups/s"
	tp.Y.Scale = plot.LogScale{}
	tp.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	pts := make(plotter.XYs, len(rs))
	labels := make([]string, len(rs))
	for i, r := range rs {
		pts[i] = plotter.XY{X: float64(i), Y: math.Max(r.rate(), 1)}
		labels[i] = r.name
	}
	// Bars on a log scale: vertical lines from 1 to the rate.
	for i, p := range pts {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X, Y: 1}, {X: p.X, Y: p.Y}})
		if err != nil {
			return err
		}
		l.Width = vg.Points(28)
		l.Color = plotutil.Color(i)
		tp.Add(l)
	}
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: rateLabels(rs)})
	if err != nil {
		return err
	}
	tp.Add(lbl)
	top := 1.0
	for _, p := range pts {
		top = math.Max(top, p.Y)
	}
	tp.Y.Min, tp.Y.Max = 1, top*4 // room for the labels
	tp.NominalX(labels...)
	tp.X.Min, tp.X.Max = -0.6, float64(len(rs))-0.4
	tp.Add(plotter.NewGrid())
	if err := tp.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, "dns-throughput.png")); err != nil {
		return err
	}

	lp := plot.New()
	lp.Title.Text = "DNS lookup latency CDF"
	lp.X.Label.Text = "latency (ms, log scale)"
	lp.Y.Label.Text = "share of lookups"
	lp.X.Scale = plot.LogScale{}
	lp.X.Tick.Marker = plot.LogTicks{Prec: -1}
	for i, r := range rs {
		if len(r.latencies) == 0 {
			continue
		}
		const points = 400
		xys := make(plotter.XYs, 0, points+1)
		for j := 0; j <= points; j++ {
			q := float64(j) / points
			d := r.percentile(math.Max(q, 1e-9))
			xys = append(xys, plotter.XY{X: math.Max(float64(d)/float64(time.Millisecond), 1e-4), Y: q})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.5)
		l.Color = plotutil.Color(i)
		lp.Add(l)
		lp.Legend.Add(r.name, l)
	}
	lp.Legend.Top, lp.Legend.Left = false, false
	lp.Legend.YOffs = vg.Points(40)
	lp.Add(plotter.NewGrid())
	return lp.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, "dns-latency.png"))
}

func rateLabels(rs []*result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%.0f/s", r.rate())
	}
	return out
}
