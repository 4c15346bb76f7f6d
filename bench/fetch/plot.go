package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotPolicies draws the policy experiment's two plots for quality model
// q into dir: pages fetched over time (policies-pages-Q.png) and the share
// of the total quality fetched over the share of the crawl time
// (policies-quality-Q.png).
func plotPolicies(dir, q string, runs []policyRun) error {
	pages := plot.New()
	pages.Title.Text = fmt.Sprintf("Pages fetched over time (quality: %s)", q)
	pages.X.Label.Text = "seconds since the first request"
	pages.Y.Label.Text = "pages fetched (200)"
	share := plot.New()
	share.Title.Text = fmt.Sprintf("Share of total quality fetched (quality: %s)", q)
	share.X.Label.Text = "share of the crawl time"
	share.Y.Label.Text = "share of the total quality"
	share.X.Min, share.X.Max, share.Y.Min, share.Y.Max = 0, 1, 0, 1
	for i, r := range runs {
		c := thin(r.curve, 1000)
		pxy := make(plotter.XYs, len(c))
		sxy := make(plotter.XYs, len(c))
		for j, p := range c {
			pxy[j] = plotter.XY{X: p.t.Seconds(), Y: float64(p.pages)}
			sxy[j] = plotter.XY{X: p.t.Seconds() / r.crawl.Seconds(), Y: p.share}
		}
		for _, pl := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{pages, pxy}, {share, sxy}} {
			l, err := plotter.NewLine(pl.xys)
			if err != nil {
				return fmt.Errorf("plotting %s: %w", r.label(), err)
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			if !r.keepAlive {
				l.Dashes = plotutil.Dashes(2)
			}
			pl.p.Add(l)
			pl.p.Legend.Add(r.label(), l)
		}
	}
	pages.Legend.Top, pages.Legend.Left = true, true
	share.Legend.Top, share.Legend.Left = false, false
	pages.Add(plotter.NewGrid())
	share.Add(plotter.NewGrid())
	for name, p := range map[string]*plot.Plot{"policies-pages-" + q + ".png": pages, "policies-quality-" + q + ".png": share} {
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("saving %s: %w", name, err)
		}
	}
	return nil
}
