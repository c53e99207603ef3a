package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TableColumn is an extra column of [FormatTable], after the standard ones.
type TableColumn struct {
	// Head is the column's heading.
	Head string
	// Cell returns the cell of a row; total is true for the total row.
	Cell func(row *TableRow, total bool) string
}

// FormatOptions configure [FormatTable].
type FormatOptions struct {
	// Width is the terminal width the table is laid out for; 0 means 80.
	// The key column shrinks (to no less than 12 columns) to fit.
	Width int
	// FullKeys prints group keys (stacks, long type names) whole, however
	// wide the table gets, instead of shortening them to fit Width.
	FullKeys bool
	// HideObjects and HideShare leave out the OBJECTS and SHARE columns.
	HideObjects, HideShare bool
	// Extra columns follow the standard ones, right-aligned.
	Extra []TableColumn
}

// FormatTable writes r as a human-readable table: a heading that says
// what is shown, then one line per row (key, sample events, estimated
// bytes, interval, estimated objects, share) and the total. Keys too long
// for the width are shortened with an ellipsis, keeping the end of type
// names and the start of everything else; characters that would break the
// layout become '?'. Lines have no trailing spaces.
func FormatTable(w io.Writer, r *TableResult, opts FormatOptions) error {
	if r == nil {
		return errors.New("report: nil table")
	}
	width := opts.Width
	if width <= 0 {
		width = 80
	}
	what := "allocated bytes"
	if r.InUse {
		what = "in-use bytes"
	}
	confPct := strconv.FormatFloat(r.Confidence*100, 'g', 6, 64) + "%"
	var b strings.Builder
	switch {
	case r.GoHeap:
		fmt.Fprintf(&b, "%s by %s, %s intervals, Go heap profile (MemProfileRate %d)\n", what, r.By, confPct, r.HeapRate)
	case r.HeapRate > 0:
		fmt.Fprintf(&b, "%s by %s, %s intervals, window %s, Go heap samples at MemProfileRate %d\n", what, r.By, confPct, r.Window, r.HeapRate)
	default:
		fmt.Fprintf(&b, "%s by %s, %s intervals, window %s\n", what, r.By, confPct, r.Window)
	}
	if len(r.Rows) < r.Groups {
		fmt.Fprintf(&b, "showing %d of %d groups; the total covers all of them\n", len(r.Rows), r.Groups)
	} else {
		fmt.Fprintf(&b, "%d %s\n", r.Groups, map[bool]string{true: "group", false: "groups"}[r.Groups == 1])
	}
	if r.InUse {
		b.WriteString("in-use intervals are conservative: they allow for any tail of the events\n")
	}
	b.WriteString("\n")

	keyHead := map[groupKind]string{groupByType: "TYPE", groupByFunc: "FUNCTION", groupByStack: "STACK (LEAF FIRST)", groupBySize: "OBJECT SIZE", "": "TYPE"}[r.By.kind()]
	if r.By.kind() == groupByLabel {
		keyHead = "LABEL " + r.By.label()
	}
	const intervalCol = 3
	head := []string{keyHead, "SAMPLES", "BYTES", confPct + " INTERVAL"}
	if !opts.HideObjects {
		head = append(head, "OBJECTS")
	}
	if !opts.HideShare {
		head = append(head, "SHARE")
	}
	for _, c := range opts.Extra {
		head = append(head, c.Head)
	}
	rows := append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total)
	cells := make([][]string, 0, len(rows))
	for i := range rows {
		g := &rows[i]
		key := g.Display
		if key == "" {
			key = g.Key
		}
		row := []string{
			printable(key),
			strconv.FormatInt(g.Samples, 10),
			HumanBytes(float64(g.Bytes)),
			"[" + HumanBytes(g.Lo) + ", " + HumanBytes(g.Hi) + "]",
		}
		if !opts.HideObjects {
			row = append(row, HumanCount(float64(g.Objects)))
		}
		if !opts.HideShare {
			row = append(row, strconv.FormatFloat(100*g.Share, 'f', 1, 64)+"%")
		}
		for _, c := range opts.Extra {
			cell := ""
			if c.Cell != nil {
				cell = printable(c.Cell(g, i == len(rows)-1))
			}
			row = append(row, cell)
		}
		cells = append(cells, row)
	}
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	const gap = 2
	rest := 0
	for _, wd := range widths[1:] {
		rest += gap + wd
	}
	if !opts.FullKeys {
		widths[0] = min(widths[0], max(width-rest, 12))
	}
	fromLeft := r.By.kind() == groupByType || r.By.kind() == "" // type names end in the informative part
	writeRow := func(row []string, key string) {
		b.WriteString(padRight(key, widths[0]))
		for i := 1; i < len(row); i++ {
			b.WriteString(strings.Repeat(" ", gap))
			if i == intervalCol {
				b.WriteString(padRight(row[i], widths[i]))
			} else {
				b.WriteString(padLeft(row[i], widths[i]))
			}
		}
		b.WriteString("\n")
	}
	writeRow(head, truncate(head[0], widths[0], false))
	for _, row := range cells {
		writeRow(row, truncate(row[0], widths[0], fromLeft))
	}
	// Trailing spaces from padding the interval column are not wanted.
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// printable replaces characters that would break the table layout.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// truncate shortens s to width runes with an ellipsis, keeping its end
// when fromLeft and its start otherwise (stacks begin at the leaf).
func truncate(s string, width int, fromLeft bool) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	if fromLeft {
		return "…" + string(r[len(r)-(width-1):])
	}
	return string(r[:width-1]) + "…"
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s
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

// HumanBytes formats a byte count with binary units and three significant
// digits: 512B, 1.23KiB, 45.6MiB, 789GiB. Negative, infinite or NaN is "?".
func HumanBytes(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64) + "B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for i, u := range units {
		x /= 1024
		if x < 999.5 || i == len(units)-1 {
			return threeDigits(x) + u
		}
	}
	panic("unreachable")
}

// HumanCount formats an object count with SI suffixes: 999, 1.23k, 45.6M.
// A negative, infinite or NaN count is "?".
func HumanCount(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return "?"
	}
	if x < 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	units := []string{"k", "M", "G", "T", "P", "E"}
	for i, u := range units {
		x /= 1000
		if x < 999.5 || i == len(units)-1 {
			return threeDigits(x) + u
		}
	}
	panic("unreachable")
}
