// Package tabfmt lays out the tables arenaprof prints: one text/tabwriter
// layout for every table (numbers right-aligned, the group's key last and
// whole unless cut to a width), and the units of its cells.
package tabfmt

import (
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// Table writes rows of cells: every cell but the last is right-aligned in
// its column, two spaces apart; the last cell, the key, follows unaligned,
// so a long key never moves the other columns. Lines have no trailing
// spaces.
type Table struct {
	tw *tabwriter.Writer
}

// ConservativeLegend explains the mark "~" of a diff row whose ratio
// interval is wider than the sampling needs (report.DiffRow.Conservative):
// the diff table and the HTML diff page print it when a row has it.
const ConservativeLegend = "~ marks an interval wider than the sampling needs: it rests on samples of mixed object sizes without their variance sums (Pyroscope uploads made before arenaprof sent them, or a profile's overflow samples); see docs/fleet-diff.md"

// New returns a table writing to w. Call Flush when the rows are written.
func New(w io.Writer) *Table {
	return &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)}
}

// Row adds one row: the right-aligned cells, then the key. Characters
// that would break the layout (tabs, newlines, other control characters,
// invalid UTF-8) become '?'.
func (t *Table) Row(cells []string, key string) {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(Printable(c))
		b.WriteByte('\t')
	}
	b.WriteString("  ")
	b.WriteString(Printable(key))
	b.WriteByte('\n')
	_, _ = io.WriteString(t.tw, b.String()) // an error is reported by Flush
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

// Printable replaces the characters that would break a table's layout
// with '?'.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// Cut shortens key to width runes by cutting out its middle, marked by
// "…", and keeps the end whole: tail runes of it when tail > 0 (the
// package's last element and the function of a function name; when fewer
// than four runes of the start would be left, the start is dropped), half
// of the width otherwise. Width 0 or less, or a key that fits, leaves key
// whole.
func Cut(key string, width, tail int) string {
	r := []rune(key)
	if width <= 0 || len(r) <= width {
		return key
	}
	if width < 3 {
		width = 3
	}
	switch {
	case tail <= 0:
		tail = (width - 1) / 2
	case tail > width-5:
		tail = width - 1 // too little room for a useful start: keep the end
	}
	head := width - 1 - tail
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// threeDigits formats x (>= 0, < 1000) with three significant digits.
func threeDigits(x float64) string {
	switch {
	case x < 9.995:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 99.95:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
}

// Bytes formats a byte count with binary units and three significant
// digits: 512B, 1.23KiB, 45.6MiB, 789GiB. Negative, infinite or NaN is "?".
func Bytes(x float64) string {
	return human(x, 1024, []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}, "B")
}

// Count formats an object count with SI suffixes: 999, 1.23k, 45.6M. A
// negative, infinite or NaN count is "?".
func Count(x float64) string {
	return human(x, 1000, []string{"k", "M", "G", "T", "P", "E"}, "")
}

func human(x, base float64, units []string, one string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64) + one
	}
	for i, u := range units {
		x /= base
		if x < 999.5 || i == len(units)-1 {
			return threeDigits(x) + u
		}
	}
	panic("unreachable")
}

// SignedBytes formats a difference of byte counts: +1.05MiB, -35.8KiB, 0B.
func SignedBytes(d float64) string {
	switch {
	case d > 0:
		return "+" + Bytes(d)
	case d < 0:
		return "-" + Bytes(-d)
	}
	return Bytes(d)
}

// KeyHeading is the heading of the key column of a table grouped by kind
// ("type", "func", "stack", "site", "size" or "label", the last with the
// label's key).
func KeyHeading(kind, label string) string {
	switch kind {
	case "func":
		return "FUNCTION"
	case "stack":
		return "STACK (LEAF FIRST)"
	case "site":
		return "YOUR FRAME" + SiteVia + "LEAF"
	case "size":
		return "OBJECT SIZE"
	case "label":
		return "LABEL " + label
	}
	return "TYPE"
}

// SiteVia joins the two functions of a key grouped by site: the first
// frame of the stack outside the standard library, then the leaf
// function that allocated ("main.handle via reflect.growslice").
const SiteVia = " via "

// StdOnly ends the key grouped by site of a stack with no frame outside
// the standard library: the leaf function, then StdOnly.
const StdOnly = " (standard library only)"

// CutKey cuts a key of a table grouped by kind to width runes: a function
// name keeps its last package element and the function whole when they
// fit ([Cut]); a stack drops its frames' import paths, keeps its leaf
// function whole and cuts the root side; a site keeps its frame whole and then its leaf; other keys
// (types, labels) keep their start and their end. Width 0 or less leaves
// the key whole.
func CutKey(key, kind string, width int) string {
	if width <= 0 || utf8.RuneCountInString(key) <= width {
		return key
	}
	switch kind {
	case "func":
		return Cut(key, width, utf8.RuneCountInString(ShortFuncName(key)))
	case "stack":
		// Frames by their short names, then the root side cut.
		frames := strings.Split(key, " < ")
		for i, f := range frames {
			frames[i] = ShortFuncName(f)
		}
		if short := strings.Join(frames, " < "); utf8.RuneCountInString(short) <= width {
			return short
		}
		if utf8.RuneCountInString(frames[0]) >= width {
			return CutKey(frames[0], "func", width)
		}
		r := []rune(strings.Join(frames, " < "))
		return string(r[:width-1]) + "…"
	case "site":
		frame, leaf, ok := strings.Cut(key, SiteVia)
		if !ok {
			frame, leaf = strings.TrimSuffix(key, StdOnly), ""
			if frame == key {
				return CutKey(key, "func", width)
			}
		}
		// The frame whole, else its short name; the leaf in what is left.
		if utf8.RuneCountInString(frame) > width-len(SiteVia)-12 {
			frame = ShortFuncName(frame)
		}
		if leaf == "" {
			for _, mark := range []string{StdOnly, " (std)"} {
				if utf8.RuneCountInString(frame)+len(mark) <= width {
					return frame + mark
				}
			}
			return CutKey(frame, "func", width)
		}
		room := width - utf8.RuneCountInString(frame) - len(SiteVia)
		if room < 8 {
			return CutKey(frame, "func", width)
		}
		if utf8.RuneCountInString(leaf) > room {
			leaf = ShortFuncName(leaf)
		}
		return frame + SiteVia + CutKey(leaf, "func", room)
	}
	return Cut(key, width, 0)
}

// ShortFuncName drops the import path of a function name, keeping the last
// package name: "github.com/a/b/pkg.(*T).M" -> "pkg.(*T).M".
func ShortFuncName(name string) string {
	// The import path ends at the last slash before the first '.' that
	// follows it; generic brackets may hold slashes, so look before '['.
	head := name
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	if i := strings.LastIndexByte(head, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Width is the width the aligned cells of rows take on a line, with the
// gaps and the space before the key: what is left of a line of width w
// for the key is w - Width(rows).
func Width(rows [][]string) int {
	var cols []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(cols) {
				cols = append(cols, 0)
			}
			cols[i] = max(cols[i], utf8.RuneCountInString(c))
		}
	}
	w := 2
	for _, c := range cols {
		w += c + 2
	}
	return w
}

// NewList returns a writer for lines of a name and a value separated by a
// tab: the values line up, two spaces after the longest name.
func NewList(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// DiffColumns are the heads of a diff's byte columns (BASE, NEW, DIFF)
// under the normalisation per of report.DiffResult: "BASE/s" per second,
// "BASE/req" per request, "BASE" without.
func DiffColumns(per string) [3]string {
	unit := map[string]string{"second": "/s", "request": "/req"}[per]
	return [3]string{"BASE" + unit, "NEW" + unit, "DIFF" + unit}
}
