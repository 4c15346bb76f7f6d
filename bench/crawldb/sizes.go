package main

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// printSizes prints each job's wall time at each CrawlDB size, against the
// copy limit at that size and against the job's own time at the size
// nearest 2,000,000 URLs (the reference of bench/README.md), with the
// cores it kept busy and its peak RSS.
func printSizes(sizes []sizeRun, memory string) {
	ref := 0
	for i, s := range sizes {
		if abs(s.urls-2_000_000) < abs(sizes[ref].urls-2_000_000) {
			ref = i
		}
	}
	fmt.Printf("\nEvery size, memory budget %s, %d cores; \"x %d\" is the job's time over its time at %d URLs\n\n",
		memory, numCPU(), sizes[ref].urls, sizes[ref].urls)
	fmt.Println("| URLs | job | wall | x copy limit | x ref size | URLs x ref size | cores busy | peak RSS |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, s := range sizes {
		for j, m := range s.ms {
			fmt.Printf("| %d | %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f MiB |\n", s.urls, m.name, m.wall.Round(100*time.Millisecond),
				m.wall.Seconds()/s.ms[0].wall.Seconds(), m.wall.Seconds()/sizes[ref].ms[j].wall.Seconds(),
				float64(s.urls)/float64(sizes[ref].urls), m.cpu.Seconds()/m.wall.Seconds(), float64(m.maxRSS)/(1<<20))
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// plotSizes plots each job's wall time against the CrawlDB size, with the
// line through the origin and the copy limit's largest-size point (linear
// scaling) for reference.
func plotSizes(file string, sizes []sizeRun) error {
	p := plot.New()
	p.Title.Text = "CrawlDB jobs: wall time against CrawlDB size"
	p.X.Label.Text = "CrawlDB URLs (millions)"
	p.Y.Label.Text = "wall time (s)"
	colors := []color.Color{color.RGBA{0x33, 0x33, 0x33, 0xff}, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}}
	for j := range sizes[0].ms {
		xys := make(plotter.XYs, len(sizes))
		for i, s := range sizes {
			xys[i] = plotter.XY{X: float64(s.urls) / 1e6, Y: s.ms[j].wall.Seconds()}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := colors[j%len(colors)]
		l.Color, pts.Color = c, c
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		p.Legend.Add(sizes[0].ms[j].name, l, pts)
	}
	last := sizes[len(sizes)-1]
	slope := last.ms[0].wall.Seconds() / (float64(last.urls) / 1e6)
	lin := plotter.NewFunction(func(x float64) float64 { return slope * x })
	lin.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	lin.Color = color.Gray{0x99}
	p.Add(lin)
	p.Legend.Add("copy limit, linear", lin)
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Min, p.Y.Min = 0, 0
	p.Add(plotter.NewGrid())
	if err := p.Save(6*vg.Inch, 4*vg.Inch, file); err != nil {
		return fmt.Errorf("writing the plot: %w", err)
	}
	return nil
}
