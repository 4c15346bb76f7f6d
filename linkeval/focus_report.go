package linkeval

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Markdown writes the report as a table: a row per strategy and
// checkpoint, with harvest and recall as ratios to breadth-first's.
func (r *FocusReport) Markdown(w io.Writer) error {
	fmt.Fprintf(w, "Focused crawl of topic %q: %d of %d pages on the topic, %d pages a round\n\n", r.Topic, r.OnTopicPages, r.Pages, r.Batch)
	var base *StrategyResult
	for i := range r.Strategies {
		if r.Strategies[i].Name == StrategyBreadthFirst {
			base = &r.Strategies[i]
		}
	}
	fmt.Fprintln(w, "| strategy | pages | harvest | x breadth-first | recall | x breadth-first |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, s := range r.Strategies {
		for k, p := range s.At {
			hx, rx := "", ""
			if base != nil && k < len(base.At) && base.At[k].Harvest > 0 && base.At[k].Recall > 0 {
				hx = fmt.Sprintf("%.2f", p.Harvest/base.At[k].Harvest)
				rx = fmt.Sprintf("%.2f", p.Recall/base.At[k].Recall)
			}
			fmt.Fprintf(w, "| %s | %d | %.3f | %s | %.3f | %s |\n", s.Name, p.Pages, p.Harvest, hx, p.Recall, rx)
		}
	}
	_, err := fmt.Fprintf(w, "\n%.1f s\n", r.Seconds)
	return err
}

// JSON writes the report as one JSON object: {"topic", "pages",
// "on_topic_pages", "batch", "strategies": [{"name", "at": [{"pages",
// "harvest", "recall"}]}], "seconds"}.
func (r *FocusReport) JSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// SavePlot draws harvest and recall against pages fetched, one line per
// strategy, into file (PNG or SVG by its extension).
func (r *FocusReport) SavePlot(file string) error {
	ext := strings.ToLower(filepath.Ext(file))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("linkeval: plot %s: want a .png or .svg file", file)
	}
	colors := []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}}
	panel := func(title string, y func(Point) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "pages fetched"
		p.Y.Min, p.Y.Max = 0, 1
		p.Add(plotter.NewGrid())
		for k, s := range r.Strategies {
			xy := make(plotter.XYs, len(s.Curve))
			for i, pt := range s.Curve {
				xy[i].X, xy[i].Y = float64(pt.Pages), y(pt)
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, fmt.Errorf("linkeval: plot %s: %w", s.Name, err)
			}
			l.Color, l.Width = colors[k%len(colors)], vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(s.Name, l)
		}
		return p, nil
	}
	harvest, err := panel(fmt.Sprintf("Harvest rate, topic %q", r.Topic), func(p Point) float64 { return p.Harvest })
	if err != nil {
		return err
	}
	recall, err := panel("Recall (resource discovery)", func(p Point) float64 { return p.Recall })
	if err != nil {
		return err
	}
	harvest.Legend.Top, harvest.Legend.Left = false, false
	recall.Legend.Top, recall.Legend.Left = true, true
	width, height := 12*vg.Inch, 5*vg.Inch
	var c vg.CanvasWriterTo
	if ext == ".svg" {
		c, err = draw.NewFormattedCanvas(width, height, "svg")
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	if err != nil {
		return fmt.Errorf("linkeval: plot %s: %w", file, err)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(20), PadTop: vg.Points(5), PadBottom: vg.Points(5)}
	canvases := plot.Align([][]*plot.Plot{{harvest, recall}}, tiles, dc)
	harvest.Draw(canvases[0][0])
	recall.Draw(canvases[0][1])
	return writePlot(file, c)
}

func writePlot(file string, c vg.CanvasWriterTo) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("linkeval: plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("linkeval: plot %s: %w", file, err)
	}
	return f.Close()
}
