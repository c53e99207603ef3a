package htmlreport

import (
	"errors"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/leakspage"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

func init() { leakspage.Write = leaksPage }

// leaksData is what the page of a leaks read shows: its table and a plot
// per flagged group.
type leaksData struct {
	Rows  []leakRow
	Plots []leakPlot
	// None says why there is no plot; "" when there are plots.
	None string
}

// leakRow is one row of a leaks table: the data attributes carry
// arenaprof leaks -json's numbers, formatted as encoding/json formats
// them.
type leakRow struct {
	Key, Text, Class, Kind string
	Rate, Lo, Hi           string
	Flagged                bool
	First, Last            string
	Cells                  []string
	Mark                   string
}

// leakPlot is one flagged group's plot.
type leakPlot struct {
	Key, Kind, Caption string
	Rate, Lo, Hi       string
	SVG                template.HTML
}

// The plot's drawing area, in the SVG's user units: plotW by plotH,
// the axes' labels in the margins.
const (
	plotW, plotH                             = 800.0, 220.0
	plotLeft, plotRight, plotTop, plotBottom = 76.0, 12.0, 10.0, 24.0
)

// leaksPage writes the page of a leaks read: its heading, the groups'
// table (every row element carrying data-key, data-kind, data-rate,
// data-lo, data-hi, data-flagged, data-inuse-first and data-inuse-last:
// arenaprof leaks -json's key, kind, rate, lo, hi, flagged, inuse_first
// and inuse_last), and for each flagged group a plot of its estimated
// in-use bytes at every snapshot (a line through the points), the part
// of the series the rate is fitted over (shaded), the fitted rate (a
// line) and its interval (the wedge between the lines of slopes lo and
// hi through the same point).
func leaksPage(w io.Writer, p *leakspage.Page) error {
	if p == nil {
		return errors.New("htmlreport: nil leaks page")
	}
	if len(p.Times) < 2 || p.From < 0 || p.From >= len(p.Times) {
		return errors.New("htmlreport: a leaks page needs at least 2 snapshots and its fit's start among them")
	}
	d := newPage(Options{Title: p.Title, Heading: p.Heading}, "arenaprof leaks")
	d.KeyHead = text(p.KeyHead)
	d.Cols = textLines(p.Cols)
	l := &leaksData{}
	for _, r := range p.Rows {
		kt := keyText(r.Key)
		cls := ""
		if r.Flagged {
			cls = "sig"
		}
		l.Rows = append(l.Rows, leakRow{
			Key: r.Key, Text: kt, Class: rowClass(cls, kt), Kind: r.Kind,
			Rate: jsonNumber(r.Rate), Lo: jsonNumber(r.Lo), Hi: jsonNumber(r.Hi), Flagged: r.Flagged,
			First: strconv.FormatInt(r.InUseFirst, 10), Last: strconv.FormatInt(r.InUseLast, 10),
			Cells: textLines(r.Cells), Mark: text(r.Mark),
		})
		if r.Series == nil {
			continue
		}
		if len(r.Series) != len(p.Times) {
			return errors.New("htmlreport: a leaks page's series is not as long as its times")
		}
		l.Plots = append(l.Plots, leakPlot{
			Key: r.Key, Kind: r.Kind, Caption: text(r.Kind + " " + r.Key),
			Rate: jsonNumber(r.Rate), Lo: jsonNumber(r.Lo), Hi: jsonNumber(r.Hi),
			SVG: leakSVG(p, r),
		})
	}
	if len(l.Plots) == 0 {
		l.None = "No group is flagged: nothing to plot."
	}
	d.Leaks = l
	return execute(w, d)
}

// leakSVG draws one group's plot (see leaksPage).
func leakSVG(p *leakspage.Page, r leakspage.Row) template.HTML {
	t := p.Times
	t0, t1, tf := t[0], t[len(t)-1], t[p.From]
	line := func(slope, at float64) float64 { return r.Y0 + slope*(at-r.T0) }
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range r.Series {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	for _, s := range []float64{r.Lo, r.Hi} {
		for _, at := range []float64{tf, t1} {
			lo, hi = math.Min(lo, line(s, at)), math.Max(hi, line(s, at))
		}
	}
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.05
	lo, hi = lo-pad, hi+pad
	x := func(at float64) float64 {
		return plotLeft + (plotW-plotLeft-plotRight)*(at-t0)/(t1-t0)
	}
	y := func(b float64) float64 {
		return plotTop + (plotH-plotTop-plotBottom)*(hi-b)/(hi-lo)
	}
	f := func(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }
	pt := func(at, b float64) string { return f(x(at)) + "," + f(y(b)) }
	var s strings.Builder
	s.WriteString(`<svg class="leak" viewBox="0 0 ` + f(plotW) + ` ` + f(plotH) + `" role="img" aria-label="in-use bytes over time with the fitted rate">`)
	// The fit's window.
	s.WriteString(`<rect class="win" x="` + f(x(tf)) + `" y="` + f(plotTop) + `" width="` + f(x(t1)-x(tf)) + `" height="` + f(plotH-plotTop-plotBottom) + `"/>`)
	// The axes and their labels.
	s.WriteString(`<path class="axis" d="M` + f(plotLeft) + `,` + f(plotTop) + `V` + f(plotH-plotBottom) + `H` + f(plotW-plotRight) + `"/>`)
	for _, b := range []float64{lo + pad, (lo + hi) / 2, hi - pad} {
		s.WriteString(`<text class="yl" x="` + f(plotLeft-4) + `" y="` + f(y(b)+4) + `">` + template.HTMLEscapeString(tabfmt.Bytes(b)) + `</text>`)
	}
	span := time.Duration((t1 - t0) * float64(time.Second))
	s.WriteString(`<text class="xl" x="` + f(plotLeft) + `" y="` + f(plotH-6) + `">0</text>`)
	s.WriteString(`<text class="xl mid" x="` + f(x(tf)) + `" y="` + f(plotH-6) + `">` + template.HTMLEscapeString(durText(time.Duration((tf-t0)*float64(time.Second)))) + `: fit from here</text>`)
	s.WriteString(`<text class="xl end" x="` + f(plotW-plotRight) + `" y="` + f(plotH-6) + `">` + template.HTMLEscapeString(durText(span)) + `</text>`)
	// The interval's wedge, the fitted line, the series.
	s.WriteString(`<polygon class="band" points="` + pt(tf, line(r.Lo, tf)) + ` ` + pt(t1, line(r.Lo, t1)) + ` ` + pt(t1, line(r.Hi, t1)) + ` ` + pt(tf, line(r.Hi, tf)) + `"/>`)
	s.WriteString(`<line class="fit" x1="` + f(x(tf)) + `" y1="` + f(y(line(r.Rate, tf))) + `" x2="` + f(x(t1)) + `" y2="` + f(y(line(r.Rate, t1))) + `"/>`)
	s.WriteString(`<polyline class="inuse" points="`)
	for i, b := range r.Series {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(pt(t[i], b))
	}
	s.WriteString(`"/></svg>`)
	return template.HTML(s.String())
}

// durText formats a duration to the second (to the millisecond below a
// minute), as arenaprof leaks's heading does.
func durText(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}
