package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// formatHoldings writes r as a table: reserved and used bytes, arenas,
// old arenas, and the key; rows with old arenas are marked with !. The
// heading says the figures are exact counts, not estimates. Keys are cut
// to width as [report.FormatTable] cuts them; width 0 prints them whole.
func formatHoldings(w io.Writer, r *report.HoldingsResult, width int) error {
	if _, err := io.WriteString(w, strings.Join(holdingsHeading(r), "\n")+"\n\n"); err != nil {
		return err
	}
	head := []string{"RESERVED", "SHARE", "USED", "ARENAS", "OLD", ""}
	rows := append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total)
	cells := [][]string{head}
	for _, row := range rows {
		share := "-"
		if r.Total.Reserved > 0 {
			share = strconv.FormatFloat(100*float64(row.Reserved)/float64(r.Total.Reserved), 'f', 1, 64) + "%"
		}
		mark := ""
		if row.Old > 0 {
			mark = "!"
		}
		cells = append(cells, []string{tabfmt.Bytes(float64(row.Reserved)), share, tabfmt.Bytes(float64(row.Used)),
			strconv.FormatInt(row.Arenas, 10), strconv.FormatInt(row.Old, 10), mark})
	}
	room := keyRoom(width, cells)
	t := tabfmt.New(w)
	t.Row(head, tabfmt.Cut(tabfmt.KeyHeading(groupKind(r.By)), room, 0))
	for i, row := range rows {
		t.Row(cells[i+1], tabfmt.CutKey(row.Key, groupKindOnly(r.By), room))
	}
	return t.Flush()
}

// holdingsHeading is the heading of the table of r: the figures are exact
// counts, how many groups it shows, and what "!" marks.
func holdingsHeading(r *report.HoldingsResult) []string {
	lines := []string{fmt.Sprintf("live arenas by %s: exact counts and bytes, not sampled (no intervals)", r.By)}
	if len(r.Rows) < r.Groups {
		lines = append(lines, fmt.Sprintf("showing %d of %d groups; the total covers all of them", len(r.Rows), r.Groups))
	} else {
		lines = append(lines, fmt.Sprintf("%d %s", r.Groups, map[bool]string{true: "group", false: "groups"}[r.Groups == 1]))
	}
	if r.Total.Old > 0 {
		lines = append(lines, fmt.Sprintf("! marks groups with arenas held %s or more (never Reset, Put or Freed since): possible leaks", shortDuration(r.OldAge)))
	}
	return lines
}

// holdingsDiffHeading is the heading of the comparison of two
// live-arenas profiles: what is compared, that the figures are exact, the
// filters, and what "+" marks.
func holdingsDiffHeading(opts diffOptions, by string) []string {
	lines := []string{fmt.Sprintf("live arenas by %s: BASE %s -> NEW %s", by, redactText(opts.base), redactText(opts.next)),
		"exact counts and bytes, not sampled (no intervals)"}
	if f := opts.filter.describe(); f != "" {
		lines = append(lines, f)
	}
	return append(lines, "+ marks groups whose reserved bytes grew: arenas kept longer, or more of them")
}

// formatHoldingsDiff writes the rows of [report.DiffHoldings] as a table
// under heading; growing rows are marked with +.
func formatHoldingsDiff(w io.Writer, heading []string, by string, rows []report.HoldingsDiffRow, total report.HoldingsDiffRow, width int) error {
	if _, err := io.WriteString(w, strings.Join(heading, "\n")+"\n\n"); err != nil {
		return err
	}
	head := []string{"BASE RESERVED", "NEW RESERVED", "DIFF", "BASE ARENAS", "NEW ARENAS", ""}
	all := append(rows[:len(rows):len(rows)], total)
	cells := [][]string{head}
	for _, r := range all {
		mark := ""
		if r.Growing {
			mark = "+"
		}
		cells = append(cells, []string{tabfmt.Bytes(float64(r.BaseReserved)), tabfmt.Bytes(float64(r.NewReserved)),
			tabfmt.SignedBytes(float64(r.NewReserved - r.BaseReserved)),
			strconv.FormatInt(r.BaseArenas, 10), strconv.FormatInt(r.NewArenas, 10), mark})
	}
	room := keyRoom(width, cells)
	t := tabfmt.New(w)
	t.Row(head, tabfmt.Cut(tabfmt.KeyHeading(groupKind(by)), room, 0))
	for i, r := range all {
		t.Row(cells[i+1], tabfmt.CutKey(r.Key, groupKindOnly(by), room))
	}
	return t.Flush()
}

// keyRoom is the width left for the key on a line of width w after the
// aligned cells, at least 12; 0 (keys whole) when w is 0.
func keyRoom(w int, cells [][]string) int {
	if w <= 0 {
		return 0
	}
	return max(w-tabfmt.Width(cells), 12)
}

// shortDuration prints d without zero units: 10m, 1h, 90s.
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.Replace(s, "m0s", "m", 1)
	s = strings.Replace(s, "h0m", "h", 1)
	return s
}
