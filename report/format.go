package report

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
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
	// Width, when above 0, is the width of the terminal the table is
	// printed on: a key too long for the line is cut in the middle (see
	// [FormatTable]). 0 prints every key whole.
	Width int
	// HideObjects and HideShare leave out the OBJECTS and SHARE columns.
	HideObjects, HideShare bool
	// Extra columns follow the standard ones, right-aligned.
	Extra []TableColumn
}

// FormatTable writes r as a human-readable table: its heading
// (r.Heading, which says what is shown), then one line per row (sample
// events, estimated bytes, interval, estimated objects, share, then the
// group's key) and the total. Numbers are right-aligned; the key comes
// last, whole: function names keep their import path
// (github.com/x/y.(*T).M). With a Width, a key too long for the line is
// cut in the middle, marked by "…", keeping the end whole: the last
// package element and the function of a function name, the root half of
// a stack. Characters that would break the layout become '?'. Lines have
// no trailing spaces.
func FormatTable(w io.Writer, r *TableResult, opts FormatOptions) error {
	if r == nil {
		return errors.New("report: nil table")
	}
	confPct := strconv.FormatFloat(r.Confidence*100, 'g', 6, 64) + "%"
	var b strings.Builder
	for _, line := range r.Heading {
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	head := []string{"SAMPLES", "BYTES", confPct + " INTERVAL"}
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
		row := []string{
			strconv.FormatInt(g.Samples, 10),
			tabfmt.Bytes(float64(g.Bytes)),
			"[" + tabfmt.Bytes(g.Lo) + ", " + tabfmt.Bytes(g.Hi) + "]",
		}
		if !opts.HideObjects {
			row = append(row, tabfmt.Count(float64(g.Objects)))
		}
		if !opts.HideShare {
			row = append(row, strconv.FormatFloat(100*g.Share, 'f', 1, 64)+"%")
		}
		for _, c := range opts.Extra {
			cell := ""
			if c.Cell != nil {
				cell = c.Cell(g, i == len(rows)-1)
			}
			row = append(row, cell)
		}
		cells = append(cells, row)
	}
	return writeKeyed(w, groupBy(r.By), head, cells, func(i int) string { return rows[i].Key }, opts.Width)
}

// tableHeading returns the lines of r's heading (see
// [TableResult.Heading]).
func tableHeading(r *TableResult) []string {
	what := "allocated bytes"
	if r.InUse {
		what = "in-use bytes"
	}
	confPct := strconv.FormatFloat(r.Confidence*100, 'g', 6, 64) + "%"
	var lines []string
	switch {
	case r.GoHeap:
		lines = append(lines, fmt.Sprintf("%s by %s, %s intervals, Go heap profile (MemProfileRate %d)", what, r.By, confPct, r.HeapRate))
	case r.HeapRate > 0:
		lines = append(lines, fmt.Sprintf("%s by %s, %s intervals, window %s, Go heap samples at MemProfileRate %d", what, r.By, confPct, r.Window, r.HeapRate))
	default:
		lines = append(lines, fmt.Sprintf("%s by %s, %s intervals, window %s", what, r.By, confPct, r.Window))
	}
	if len(r.Rows) < r.Groups {
		lines = append(lines, fmt.Sprintf("showing %d of %d groups; the total covers all of them", len(r.Rows), r.Groups))
	} else {
		lines = append(lines, fmt.Sprintf("%d %s", r.Groups, map[bool]string{true: "group", false: "groups"}[r.Groups == 1]))
	}
	if r.InUse {
		lines = append(lines, "in-use intervals are conservative: they allow for any tail of the events")
	}
	if r.HeapSampler != "" {
		lines = append(lines, heapSamplerLine(r.HeapSampler, r.HeapGoVersion, r.AnyOrder))
	}
	return lines
}

// heapSamplerLine says which Go heap sampler's rule the estimates assume
// (see TableResult.HeapSampler).
func heapSamplerLine(rule, version string, anyOrder bool) string {
	from := "assumed: the profile names no Go release; pass -go-version if it ran Go 1.23 or older"
	if version != "" {
		from = version
	}
	what := "exact weights"
	if rule == "go1.24" {
		what = "weighted for the byte it skips after each sample"
		if anyOrder {
			what += "; intervals hold for any allocation order"
		} else {
			what += "; the total holds for any allocation order"
		}
	}
	return fmt.Sprintf("Go heap sampler: %s rule (%s), %s", rule, from, what)
}

// writeKeyed writes a table of cells under head with the key of row i,
// key(i), as its last column: whole or, with a width, cut to fit it (at
// least 12 columns of key), as tabfmt.CutKey cuts keys of the grouping by.
func writeKeyed(w io.Writer, by groupBy, head []string, cells [][]string, key func(i int) string, width int) error {
	room := 0
	if width > 0 {
		room = max(width-tabfmt.Width(append(cells, head)), 12)
	}
	t := tabfmt.New(w)
	t.Row(head, tabfmt.Cut(tabfmt.KeyHeading(string(by.kind()), by.label()), room, 0))
	for i, row := range cells {
		t.Row(row, tabfmt.CutKey(key(i), string(by.kind()), room))
	}
	return t.Flush()
}
