package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// savingLimits states where [AdviseResult.GCSaving] stops predicting the
// GC cycles saved: Advise sets [AdviseResult.Limits] to it.
const savingLimits = "GC cycles follow bytes allocated under GOGC pacing: the saving does not hold while GOMEMLIMIT sets the pace, when the live heap changes (arena chunks kept by a pool add to it), or for objects that outlive the request whose arena they move to"

// FormatAdvise writes r as a human-readable table: a heading with the
// window, the rule for candidates and the predicted GC saving with its
// interval and limits (r.Limits), then one line per row (candidates first: the
// verdict, bytes allocated in the window, bytes in use at its end, the
// mean lifetime, each with its interval, the object sizes allocated, then
// the group's key) and the total. opts.Width cuts keys as in
// [FormatTable]; the other options do not apply.
func FormatAdvise(w io.Writer, r *AdviseResult, opts FormatOptions) error {
	if r == nil {
		return errors.New("report: nil advice")
	}
	confPct := strconv.FormatFloat(r.Confidence*100, 'g', 6, 64) + "%"
	var b strings.Builder
	fmt.Fprintf(&b, "Go heap by %s over a window of %s, MemProfileRate %d, %s intervals\n", r.By, lifetimeString(r.Window), r.HeapRate, confPct)
	if r.HeapSampler != "" {
		b.WriteString(heapSamplerLine(r.HeapSampler, r.HeapGoVersion, r.AnyOrder) + "\n")
	}
	if groupBy(r.By).kind() == groupBySite {
		b.WriteString("sites: the first frame outside the standard library and the runtime (yours: main's or a module's), then via the leaf that allocated\n")
	}
	fmt.Fprintf(&b, "candidates: groups whose mean lifetime is at most %s at the interval's upper end (Little's law: bytes in use at the end over bytes allocated per second)\n", lifetimeString(r.Lifetime))
	if len(r.Rows) < r.Groups {
		fmt.Fprintf(&b, "showing %d of %d groups (%d %s); the total and the saving cover all of them\n", len(r.Rows), r.Groups, r.Candidates, plural(r.Candidates, "candidate"))
	} else {
		fmt.Fprintf(&b, "%d %s, %d %s\n", r.Groups, plural(r.Groups, "group"), r.Candidates, plural(r.Candidates, "candidate"))
	}
	if r.Undecided > 0 {
		b.WriteString(undecidedLine(r) + "\n")
	}
	fmt.Fprintf(&b, "predicted GC saving: %s of GC cycles, %s interval [%s, %s], if the candidates allocate in arenas\n",
		percent(r.GCSaving), confPct, percent(r.GCSavingLo), percent(r.GCSavingHi))
	if r.Limits != "" {
		b.WriteString("(" + r.Limits + ")\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, wrapLines(b.String(), opts.Width)); err != nil {
		return err
	}
	head := []string{"ARENA", "ALLOC", "INTERVAL", "LIVE", "INTERVAL", "LIFETIME", "INTERVAL", "SIZES"}
	rows := append(r.Rows[:len(r.Rows):len(r.Rows)], r.Total)
	cells := make([][]string, 0, len(rows))
	for i := range rows {
		g := &rows[i]
		verdict := "no"
		switch {
		case i == len(rows)-1:
			verdict = ""
		case g.Candidate:
			verdict = "yes"
		case g.Undecided:
			verdict = "?"
		}
		cells = append(cells, []string{
			verdict,
			tabfmt.Bytes(g.Alloc), "[" + tabfmt.Bytes(g.AllocLo) + ", " + tabfmt.Bytes(g.AllocHi) + "]",
			tabfmt.Bytes(g.Live), "[" + tabfmt.Bytes(g.LiveLo) + ", " + tabfmt.Bytes(g.LiveHi) + "]",
			lifetimeString(g.Lifetime), "[" + lifetimeString(g.LifetimeLo) + ", " + lifetimeString(g.LifetimeHi) + "]",
			sizesCell(g.Sizes, i == len(rows)-1),
		})
	}
	key := func(i int) string { return rows[i].Key }
	if opts.Width <= 0 || tabfmt.Width(append(cells, head))+minKeyRoom <= opts.Width {
		return writeKeyed(w, groupBy(r.By), head, cells, key, opts.Width)
	}
	return writeAdviseNarrow(w, groupBy(r.By), head, cells, key, opts.Width)
}

// minKeyRoom is the least room for keys on the line of a wide advise
// table; with less, writeAdviseNarrow puts the keys on lines of their own.
const minKeyRoom = 40

// keyIndent indents the key lines of a narrow advise table: they start
// under ALLOC, right of the verdicts.
const keyIndent = "         "

// writeAdviseNarrow writes the advise table for a terminal too narrow
// for its keys beside its numbers: each group's numbers on one line
// (LIVE's interval dropped: -json and -full keep it), its key cut to the
// width on the next, and its sizes on a third unless they fit the first.
func writeAdviseNarrow(w io.Writer, by groupBy, head []string, cells [][]string, key func(i int) string, width int) error {
	const liveInterval, sizes = 4, 7
	drop := func(row []string, sizesToo bool) []string {
		out := slices.Concat(row[:liveInterval], row[liveInterval+1:sizes])
		if !sizesToo {
			out = append(out, row[sizes])
		}
		return out
	}
	short := make([][]string, 0, len(cells)+1)
	for _, row := range append([][]string{head}, cells...) {
		short = append(short, drop(row, false))
	}
	sizesApart := tabfmt.Width(short) > width
	var nums bytes.Buffer
	t := tabfmt.New(&nums)
	for _, row := range append([][]string{head}, cells...) {
		t.Row(drop(row, sizesApart), "")
	}
	if err := t.Flush(); err != nil {
		return err
	}
	room := max(width-len(keyIndent), 12)
	var b strings.Builder
	lines := strings.Split(strings.TrimSuffix(nums.String(), "\n"), "\n")
	for i, line := range lines {
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		if i == 0 {
			b.WriteString(keyIndent + tabfmt.Cut(tabfmt.KeyHeading(string(by.kind()), by.label()), room, 0) + "\n")
			continue
		}
		b.WriteString(keyIndent + tabfmt.Printable(tabfmt.CutKey(key(i-1), string(by.kind()), room)) + "\n")
		if sz := cells[i-1][sizes]; sizesApart && sz != "-" {
			b.WriteString(keyIndent + tabfmt.Printable(tabfmt.Cut("sizes "+sz, room, 0)) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapLines wraps the lines of s at spaces to width runes when width is
// above 0; a word longer than the width stays whole on its line.
func wrapLines(s string, width int) string {
	if width <= 0 {
		return s
	}
	var b strings.Builder
	for line := range strings.SplitAfterSeq(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		n := 0
		for i, word := range strings.Fields(line) {
			wl := utf8.RuneCountInString(word)
			switch {
			case i == 0:
			case n+1+wl > width:
				b.WriteString("\n")
				n = 0
			default:
				b.WriteByte(' ')
				n++
			}
			b.WriteString(word)
			n += wl
		}
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// advisedRate is the MemProfileRate undecidedLine proposes: 4096 needs
// 180 KB/s of a site at 100ms, and costs a service a few percent of CPU.
const advisedRate = 4096

// undecidedLine says why groups that may die young are no candidates
// (with no candidate at all, why advise has none): the profiles'
// MemProfileRate is too coarse to bound their lifetimes, or their window
// too short.
func undecidedLine(r *AdviseResult) string {
	lead := "no candidate, but "
	if r.Candidates > 0 {
		lead = "beyond the candidates, "
	}
	why := fmt.Sprintf("%s%d %s may live under %s, undecided: at MemProfileRate %d a site never seen in use must allocate at least %s/s to be advised",
		lead, r.Undecided, plural(r.Undecided, "group"), lifetimeString(r.Lifetime), r.HeapRate, tabfmt.Bytes(r.MinAllocRate))
	if r.HeapRate > advisedRate {
		return why + fmt.Sprintf("; lower the rate while you measure: GODEBUG=memprofilerate=%d in the process's environment, or runtime.MemProfileRate = %d first in main (see docs/advise.md)", advisedRate, advisedRate)
	}
	return why + "; take the profiles further apart under load, or accept a longer -lifetime"
}

// lifetimeString formats a lifetime with three significant digits ("1.95ms",
// "12.3s", "2.5h"); the largest duration, which [AdviseRow] gives a group
// that allocated nothing sampled, is "inf".
func lifetimeString(d time.Duration) string {
	if d == time.Duration(math.MaxInt64) {
		return "inf"
	}
	if d <= 0 {
		return "0s"
	}
	x := float64(d)
	for _, u := range []struct {
		name string
		ns   float64
	}{{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"µs", 1e3}} {
		if x >= u.ns {
			return strconv.FormatFloat(x/u.ns, 'g', 3, 64) + u.name
		}
	}
	return strconv.FormatFloat(x, 'g', 3, 64) + "ns"
}

// percent formats a share as a percentage with one decimal.
func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// sizesCell lists the two object sizes of most bytes, "4096 B x 55.0k",
// and how many more there are; the total row lists none.
func sizesCell(sizes []SizeCount, total bool) string {
	if total || len(sizes) == 0 {
		return "-"
	}
	var parts []string
	for _, s := range sizes[:min(2, len(sizes))] {
		parts = append(parts, strconv.FormatInt(s.Size, 10)+" B x "+tabfmt.Count(math.Round(s.Objects)))
	}
	if n := len(sizes) - 2; n > 0 {
		parts = append(parts, fmt.Sprintf("+%d sizes", n))
	}
	return strings.Join(parts, ", ")
}

// plural is noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
