package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// The live-arenas profile (export.BuildArenas) holds exact counts and
// bytes, not samples: its rows carry no interval.

// defaultOldAge is the age from which [Holdings] flags the arenas of a
// group as old: an arena held that long without Reset or Free is a
// possible leak.
const defaultOldAge = 10 * time.Minute

// HoldingsRow is one group of a live-arenas profile.
type HoldingsRow struct {
	Key     string `json:"key"`               // the group key, whole
	Display string `json:"display,omitempty"` // a shorter key for a table ("" means Key)
	// Arenas, Reserved and Used are the group's arenas, bytes of chunks
	// and large buffers held, and bytes handed out since the last Reset.
	Arenas   int64 `json:"arenas"`
	Reserved int64 `json:"reserved"`
	Used     int64 `json:"used"`
	// Old is the group's arenas at least the result's OldAge old.
	Old int64 `json:"old"`
	// Idle says the group is the idle arenas of a pool.
	Idle bool `json:"idle,omitempty"`
}

// HoldingsResult is the table of a live-arenas profile.
type HoldingsResult struct {
	By     GroupBy
	OldAge time.Duration
	Groups int           // groups in all; Rows may hold fewer
	Rows   []HoldingsRow // by reserved bytes, largest first
	Total  HoldingsRow
}

// HoldingsOptions configure [Holdings].
type HoldingsOptions struct {
	// By is the grouping: func (the zero value here), stack or label=KEY;
	// a live-arenas profile has no type or size.
	By GroupBy
	// N bounds the rows returned (0: all); the total covers every group.
	N int
	// OldAge is the age from which arenas count as old (0: ten minutes);
	// it must be a bucket boundary of the age label (1s, 10s, 1m, 10m or
	// 1h) to be exact, else the next boundary above is used.
	OldAge time.Duration
}

// Holdings groups a live-arenas profile: the arenas, reserved and used
// bytes of each group, largest reserved first, and how many of its arenas
// are old. The idle arenas of each pool are a group of their own whatever
// the grouping, keyed "(idle arenas of pool N)".
func Holdings(p *profile.Profile, o HoldingsOptions) (*HoldingsResult, error) {
	if p == nil || !pprofmt.IsHoldings(p) {
		return nil, errors.New("report: not a live-arenas profile (sample types arenas, reserved_space, used_space)")
	}
	if o.By == "" {
		o.By = GroupBy(groupByFunc)
	}
	if err := o.By.check(); err != nil {
		return nil, err
	}
	if k := o.By.kind(); k == groupByType || k == groupBySize {
		return nil, fmt.Errorf("report: a live-arenas profile has no %s; group by func, stack or label=KEY", k)
	}
	if o.OldAge <= 0 {
		o.OldAge = defaultOldAge
	}
	res := &HoldingsResult{By: o.By, OldAge: o.OldAge}
	rows := map[string]*HoldingsRow{}
	for _, s := range p.Sample {
		if len(s.Value) != pprofmt.NumHoldingTypes {
			return nil, fmt.Errorf("report: a sample has %d values for %d sample types", len(s.Value), pprofmt.NumHoldingTypes)
		}
		key, display := o.By.key(s)
		idle := firstLabel(s, pprofmt.LabelPoolIdle) == "true"
		if idle {
			key, display = "(idle arenas of pool "+firstLabel(s, pprofmt.LabelPool)+")", ""
		}
		r := rows[key]
		if r == nil {
			r = &HoldingsRow{Key: key, Display: display, Idle: idle}
			rows[key] = r
		}
		n := s.Value[pprofmt.IndexArenas]
		r.Arenas += n
		r.Reserved += s.Value[pprofmt.IndexReserved]
		r.Used += s.Value[pprofmt.IndexUsed]
		if age := firstLabel(s, pprofmt.LabelAge); !idle && pprofmt.AgeAtLeast(age, o.OldAge) {
			r.Old += n
		}
	}
	for _, r := range rows {
		res.Rows = append(res.Rows, *r)
		res.Total.Arenas += r.Arenas
		res.Total.Reserved += r.Reserved
		res.Total.Used += r.Used
		res.Total.Old += r.Old
	}
	res.Total.Key = "total"
	slices.SortFunc(res.Rows, func(a, b HoldingsRow) int {
		return cmp.Or(cmp.Compare(b.Reserved, a.Reserved), cmp.Compare(a.Key, b.Key))
	})
	res.Groups = len(res.Rows)
	if o.N > 0 && len(res.Rows) > o.N {
		res.Rows = res.Rows[:o.N]
	}
	return res, nil
}

// FormatHoldings writes r as a table: reserved and used bytes, arenas,
// old arenas, and the key; rows with old arenas are marked. The heading
// says the figures are exact counts, not estimates.
func FormatHoldings(w io.Writer, r *HoldingsResult, opts FormatOptions) error {
	width := opts.Width
	if width <= 0 {
		width = 80
	}
	var b strings.Builder
	fmt.Fprintf(&b, "live arenas by %s: exact counts and bytes, not sampled (no intervals)\n", r.By)
	if len(r.Rows) < r.Groups {
		fmt.Fprintf(&b, "showing %d of %d groups; the total covers all of them\n", len(r.Rows), r.Groups)
	} else {
		fmt.Fprintf(&b, "%d %s\n", r.Groups, map[bool]string{true: "group", false: "groups"}[r.Groups == 1])
	}
	if r.Total.Old > 0 {
		fmt.Fprintf(&b, "! marks groups with arenas held %s or more (never Reset, Put or Freed since): possible leaks\n", shortDuration(r.OldAge))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	keyHead := map[groupKind]string{groupByFunc: "FUNCTION", groupByStack: "STACK (LEAF FIRST)"}[r.By.kind()]
	if r.By.kind() == groupByLabel {
		keyHead = "LABEL " + r.By.label()
	}
	fmt.Fprintf(tw, "RESERVED\tSHARE\tUSED\tARENAS\tOLD\t\n")
	line := func(row HoldingsRow) {
		share := "-"
		if r.Total.Reserved > 0 {
			share = strconv.FormatFloat(100*float64(row.Reserved)/float64(r.Total.Reserved), 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t\n", HumanBytes(float64(row.Reserved)), share, HumanBytes(float64(row.Used)), row.Arenas, row.Old)
	}
	for _, row := range r.Rows {
		line(row)
	}
	line(r.Total)
	tw.Flush()
	// The key column is left-aligned after the numbers: append it.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	keys := []string{"  " + keyHead}
	for _, row := range append(r.Rows, r.Total) {
		k := row.Key
		if row.Display != "" && !opts.FullKeys {
			k = row.Display
		}
		mark := "  "
		if row.Old > 0 {
			mark = "! "
		}
		keys = append(keys, mark+printable(k))
	}
	first := len(lines) - len(keys)
	for i, k := range keys {
		l := strings.TrimRight(lines[first+i], " ")
		room := width - len(l) - 2
		if !opts.FullKeys && room >= 12 {
			k = truncate(k, room, false)
		}
		lines[first+i] = l + "  " + k
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// shortDuration prints d without zero units: 10m, 1h, 90s.
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.Replace(s, "m0s", "m", 1)
	s = strings.Replace(s, "h0m", "h", 1)
	return s
}

// HoldingsDiffRow is one group of two live-arenas profiles: its arenas and
// reserved and used bytes in the base (older) and the new profile.
type HoldingsDiffRow struct {
	Key          string `json:"key"`               // the group key, whole
	Display      string `json:"display,omitempty"` // a shorter key for a table ("" means Key)
	BaseArenas   int64  `json:"base_arenas"`
	NewArenas    int64  `json:"new_arenas"`
	BaseReserved int64  `json:"base_reserved"`
	NewReserved  int64  `json:"new_reserved"`
	BaseUsed     int64  `json:"base_used"`
	NewUsed      int64  `json:"new_used"`
	// Growing says the group holds more reserved bytes in the newer
	// profile.
	Growing bool `json:"growing"`
}

// DiffHoldings compares two live-arenas profiles group by group (see
// [Holdings]): rows by growth of reserved bytes, largest first. The
// figures are exact: a row grows or it does not.
func DiffHoldings(base, next *profile.Profile, by GroupBy) ([]HoldingsDiffRow, HoldingsDiffRow, error) {
	var total HoldingsDiffRow
	b, err := Holdings(base, HoldingsOptions{By: by})
	if err != nil {
		return nil, total, err
	}
	n, err := Holdings(next, HoldingsOptions{By: by})
	if err != nil {
		return nil, total, err
	}
	rows := map[string]*HoldingsDiffRow{}
	get := func(r HoldingsRow) *HoldingsDiffRow {
		d := rows[r.Key]
		if d == nil {
			d = &HoldingsDiffRow{Key: r.Key, Display: r.Display}
			rows[r.Key] = d
		}
		return d
	}
	for _, r := range b.Rows {
		d := get(r)
		d.BaseArenas, d.BaseReserved, d.BaseUsed = r.Arenas, r.Reserved, r.Used
	}
	for _, r := range n.Rows {
		d := get(r)
		d.NewArenas, d.NewReserved, d.NewUsed = r.Arenas, r.Reserved, r.Used
	}
	out := make([]HoldingsDiffRow, 0, len(rows))
	for _, d := range rows {
		d.Growing = d.NewReserved > d.BaseReserved
		out = append(out, *d)
	}
	slices.SortFunc(out, func(x, y HoldingsDiffRow) int {
		return cmp.Or(cmp.Compare(y.NewReserved-y.BaseReserved, x.NewReserved-x.BaseReserved), cmp.Compare(x.Key, y.Key))
	})
	total = HoldingsDiffRow{Key: "total",
		BaseArenas: b.Total.Arenas, NewArenas: n.Total.Arenas,
		BaseReserved: b.Total.Reserved, NewReserved: n.Total.Reserved,
		BaseUsed: b.Total.Used, NewUsed: n.Total.Used}
	total.Growing = total.NewReserved > total.BaseReserved
	return out, total, nil
}

// FormatHoldingsDiff writes the rows of [DiffHoldings] as a table; growing
// rows are marked.
func FormatHoldingsDiff(w io.Writer, by GroupBy, rows []HoldingsDiffRow, total HoldingsDiffRow, opts FormatOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "live arenas by %s, BASE -> NEW: exact counts and bytes, not sampled (no intervals)\n", by)
	b.WriteString("+ marks groups whose reserved bytes grew: arenas kept longer, or more of them\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "BASE RESERVED\tNEW RESERVED\tDIFF\tBASE ARENAS\tNEW ARENAS\t \tKEY\n")
	for _, r := range append(rows, total) {
		mark := " "
		if r.Growing {
			mark = "+"
		}
		k := r.Key
		if r.Display != "" && !opts.FullKeys {
			k = r.Display
		}
		diff := "0B"
		switch d := r.NewReserved - r.BaseReserved; {
		case d > 0:
			diff = "+" + HumanBytes(float64(d))
		case d < 0:
			diff = "-" + HumanBytes(float64(-d))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", HumanBytes(float64(r.BaseReserved)), HumanBytes(float64(r.NewReserved)), diff, r.BaseArenas, r.NewArenas, mark, printable(k))
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}
