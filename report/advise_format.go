package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

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
	fmt.Fprintf(&b, "candidates: groups whose mean lifetime is at most %s at the interval's upper end (Little's law: bytes in use at the end over bytes allocated per second)\n", lifetimeString(r.Lifetime))
	if len(r.Rows) < r.Groups {
		fmt.Fprintf(&b, "showing %d of %d groups (%d %s); the total and the saving cover all of them\n", len(r.Rows), r.Groups, r.Candidates, plural(r.Candidates, "candidate"))
	} else {
		fmt.Fprintf(&b, "%d %s, %d %s\n", r.Groups, plural(r.Groups, "group"), r.Candidates, plural(r.Candidates, "candidate"))
	}
	fmt.Fprintf(&b, "predicted GC saving: %s of GC cycles, %s interval [%s, %s], if the candidates allocate in arenas\n",
		percent(r.GCSaving), confPct, percent(r.GCSavingLo), percent(r.GCSavingHi))
	if r.Limits != "" {
		b.WriteString("(" + r.Limits + ")\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
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
		}
		cells = append(cells, []string{
			verdict,
			tabfmt.Bytes(g.Alloc), "[" + tabfmt.Bytes(g.AllocLo) + ", " + tabfmt.Bytes(g.AllocHi) + "]",
			tabfmt.Bytes(g.Live), "[" + tabfmt.Bytes(g.LiveLo) + ", " + tabfmt.Bytes(g.LiveHi) + "]",
			lifetimeString(g.Lifetime), "[" + lifetimeString(g.LifetimeLo) + ", " + lifetimeString(g.LifetimeHi) + "]",
			sizesCell(g.Sizes, i == len(rows)-1),
		})
	}
	return writeKeyed(w, groupBy(r.By), head, cells, func(i int) string { return rows[i].Key }, opts.Width)
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
