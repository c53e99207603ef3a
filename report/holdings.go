package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
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
	By     string // the grouping, "" spelled "func"
	OldAge time.Duration
	Groups int           // groups in all; Rows may hold fewer
	Rows   []HoldingsRow // by reserved bytes, largest first
	Total  HoldingsRow
}

// HoldingsOptions configure [Holdings].
type HoldingsOptions struct {
	// By is the grouping: func (the zero value here), stack or label=KEY;
	// a live-arenas profile has no type or size. The spellings are those
	// of [TableOptions.By].
	By string
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
		o.By = string(groupByFunc)
	}
	by := groupBy(o.By)
	if err := by.check(); err != nil {
		return nil, err
	}
	if k := by.kind(); k == groupByType || k == groupBySize {
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
		key := by.key(s)
		display := by.display(key)
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

// HoldingsDiffRow is one group of two live-arenas profiles.
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
func DiffHoldings(base, next *profile.Profile, by string) ([]HoldingsDiffRow, HoldingsDiffRow, error) {
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
