package htmlreport

import (
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/internal/treepage"
)

func init() { treepage.Write = treePage }

// maxDepth bounds the indentation classes of a tree page's rows (t0 to
// t5 in the style sheet).
const maxDepth = 5

// treePage writes the page of a tree of byte counts (arenaprof html of a
// resident-memory profile): its heading, and the rows in tree order,
// indented, each with its bytes, share of the total and interval, and a
// bar on a shared axis (an exact figure's tick alone). There is no
// sorting or filter: the order is the tree's. Every row element carries
// data-key, data-est, data-lo and data-hi, and data-class on a class and
// the sites below it (arenaprof rss -json's class, key, bytes, lo, hi).
func treePage(w io.Writer, p *treepage.Page) error {
	if p == nil {
		return errors.New("htmlreport: nil tree page")
	}
	d := newPage(Options{Title: p.Title, Heading: p.Heading}, "arenaprof")
	d.Tree, d.KeyHead = true, text(p.KeyHead)
	d.Cols = []string{"BYTES", "SHARE", confText(p.Confidence) + " INTERVAL"}
	axis := float64(p.Total.Hi)
	for _, r := range p.Rows {
		axis = math.Max(axis, float64(r.Hi))
	}
	d.AxisHead = "bytes, and the estimates' intervals; shared axis 0 … " + tabfmt.Bytes(axis)
	total := float64(p.Total.Bytes)
	row := func(r treepage.Row, withBar bool, cls string) topRow {
		share := "-"
		if total > 0 {
			share = strconv.FormatFloat(100*float64(r.Bytes)/total, 'f', 1, 64) + "%"
		}
		iv := "exact"
		if r.Estimated {
			iv = "[" + tabfmt.Bytes(float64(r.Lo)) + ", " + tabfmt.Bytes(float64(r.Hi)) + "]"
		}
		if cls == "" {
			cls = "t" + strconv.Itoa(min(max(r.Depth, 0), maxDepth))
			if r.Class == "" {
				cls += " group"
			} else if r.Key != r.Class {
				cls += " site"
			}
		}
		tr := topRow{
			Key: r.Key, Text: keyText(r.Key), Class: rowClass(cls, keyText(r.Key)), Of: r.Class,
			Est: strconv.FormatInt(r.Bytes, 10), Lo: strconv.FormatInt(r.Lo, 10), Hi: strconv.FormatInt(r.Hi, 10),
			Cells: []string{tabfmt.Bytes(float64(r.Bytes)), share, iv},
		}
		if withBar {
			tr.Bar = bar(linear(float64(r.Lo), axis), linear(float64(r.Bytes), axis), linear(float64(r.Hi), axis), "")
		}
		return tr
	}
	d.setTopRows(mapRows(p.Rows, p.Total, row), len(p.Rows))
	return execute(w, d)
}
