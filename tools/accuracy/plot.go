package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Relative errors below floorErr are drawn at floorErr (log axis).
const floorErr = 1e-4

var schemeLabels = map[string]string{
	schemeArenaprof: "arenaprof (per-byte random)",
	schemeStride:    "fixed stride 100 KB (AllocationTick)",
	schemeGo:        "Go heap profiler (exponential)",
	schemeAmount:    "fixed stride, tick = bytes since last tick",
}

var schemeColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

var schemeGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}}

// errBars is the median (point) and the span up to the 95th percentile
// (bar) of one scheme's per-type relative errors.
type errBars struct {
	plotter.XYs
	plotter.YErrors
}

// logTicks labels the relative-error axis in percent.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(100*v, 'g', -1, 64) + "%"})
		for i := 2; i < 10; i++ {
			ts = append(ts, plot.Tick{Value: float64(i) * v})
		}
	}
	return ts
}

// panel draws one workload: per type, per scheme, the median relative
// error as a glyph and a bar up to the 95th percentile, on a log axis.
func panel(ws workloadStats) (*plot.Plot, error) {
	p := plot.New()
	title := ws.w.Name
	if ws.coverageErr == nil {
		lo, hi := 1.0, 0.0
		for _, st := range ws.stats[0] {
			lo, hi = min(lo, *st.Coverage), max(hi, *st.Coverage)
		}
		title += fmt.Sprintf("\narenaprof 95%% interval coverage per type: %.1f%%..%.1f%%", 100*lo, 100*hi)
	}
	p.Title.Text = title
	// No Y label: gonum centres it in data space, which on a log axis
	// pushes the plot down; the caption names the quantity instead.
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = floorErr, 10
	p.Add(plotter.NewGrid())
	nt := len(ws.w.Types)
	names := make([]string, nt)
	for t, ty := range ws.w.Types {
		names[t] = ty.Name
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(nt)-0.4
	p.X.Tick.Label.Rotation = math.Pi / 12
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	for s := range schemeNames {
		var eb errBars
		for t := range nt {
			med := max(ws.stats[s][t].MedianRelErr, floorErr)
			p95 := max(ws.stats[s][t].P95RelErr, floorErr)
			eb.XYs = append(eb.XYs, plotter.XY{X: float64(t) + 0.18*(float64(s)-1.5), Y: med})
			eb.YErrors = append(eb.YErrors, struct{ Low, High float64 }{0, p95 - med})
		}
		bars, err := plotter.NewYErrorBars(eb)
		if err != nil {
			return nil, err
		}
		bars.LineStyle.Color = schemeColors[s]
		bars.LineStyle.Width = vg.Points(2)
		bars.CapWidth = vg.Points(8)
		pts, err := plotter.NewScatter(eb.XYs)
		if err != nil {
			return nil, err
		}
		pts.GlyphStyle = draw.GlyphStyle{Color: schemeColors[s], Radius: vg.Points(4), Shape: schemeGlyphs[s]}
		p.Add(bars, pts)
	}
	return p, nil
}

// writePlot draws one panel per workload side by side into a PNG.
func writePlot(path string, cfg config, res []workloadStats) error {
	if filepath.Ext(path) != ".png" {
		return fmt.Errorf("-plot: %q is not a .png file", path)
	}
	const panelW, h, head = 5.5 * vg.Inch, 5.5 * vg.Inch, 0.9 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(len(res))*panelW, h+head), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(res), PadX: vg.Millimeter * 4, PadTop: head,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	for i, ws := range res {
		p, err := panel(ws)
		if err != nil {
			return err
		}
		p.Draw(tiles.At(dc, i, 0))
	}
	// Header: caption, then one legend for all panels on a single line.
	sty := plot.New().Title.TextStyle
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	caption := fmt.Sprintf("Per-type relative error |estimate - truth| / truth over %d seeded runs (mean and stride %d bytes): marker = median, bar up to the 95th percentile; errors below 0.01%% drawn at 0.01%%",
		cfg.runs, cfg.mean)
	dc.FillText(sty, vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y - vg.Millimeter*2}, caption)
	sty.XAlign = draw.XLeft
	sty.YAlign = draw.YCenter
	var width vg.Length
	for _, name := range schemeNames {
		width += sty.Width(schemeLabels[name]) + 14*vg.Millimeter
	}
	x, y := (dc.Max.X-width)/2, dc.Max.Y-head/2-vg.Millimeter*2
	for s, name := range schemeNames {
		dc.DrawGlyph(draw.GlyphStyle{Color: schemeColors[s], Radius: vg.Points(5), Shape: schemeGlyphs[s]}, vg.Point{X: x + 3*vg.Millimeter, Y: y})
		dc.FillText(sty, vg.Point{X: x + 7*vg.Millimeter, Y: y}, schemeLabels[name])
		x += sty.Width(schemeLabels[name]) + 14*vg.Millimeter
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
