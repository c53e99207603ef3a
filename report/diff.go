package report

import (
	"errors"
	"math"
	"sort"

	"github.com/google/pprof/profile"
)

// DiffOptions configure [Diff].
type DiffOptions struct {
	// By is the grouping; the zero value groups by type.
	By GroupBy
	// InUse compares the bytes of objects still in use instead of the bytes
	// allocated.
	InUse bool
	// N keeps the N largest changes in DiffResult.Rows; 0 keeps all. The
	// total always covers every group.
	N int
	// Confidence of the ratio intervals, strictly between 0 and 1; 0 means
	// 0.95.
	Confidence float64
}

// DiffRow compares one group (or the total) of two profiles.
type DiffRow struct {
	// Key and Display are as in [TableRow].
	Key, Display string
	// Base and New are the two tables' rows for the group; a side where the
	// group is absent has the zero row (no samples, zero bytes).
	Base, New TableRow
	// HasRatio is false when a side has no samples: the ratio fields are
	// then meaningless and Significant is false.
	HasRatio bool
	// Ratio is New.Bytes / Base.Bytes; RatioLo and RatioHi bound the true
	// ratio with probability at least the result's confidence. RatioHi is
	// +Inf when the base interval reaches 0.
	Ratio, RatioLo, RatioHi float64
	// Significant reports that [RatioLo, RatioHi] excludes 1.
	Significant bool
	// Delta is New.Bytes - Base.Bytes, the estimated absolute change.
	Delta int64
}

// DiffResult is the outcome of [Diff].
type DiffResult struct {
	By         GroupBy
	InUse      bool
	Confidence float64
	// Groups is the number of groups in either profile; Rows the largest
	// changes (at most DiffOptions.N), sorted by |Delta|, largest first,
	// ties by key.
	Groups int
	Rows   []DiffRow
	// Total compares the whole profiles; its Key is "total".
	Total DiffRow
}

// Diff compares two arenaprof profiles group by group: for each group it
// gives both estimates, their ratio New/Base and an interval on the ratio
// that holds with probability at least opts.Confidence.
//
// Method: each profile's per-group interval is the exact (or, for in-use
// bytes and windows, conservative) interval of [Table], taken at
// confidence sqrt(C). The two profiles are independent samples, so both
// intervals hold together with probability at least sqrt(C)^2 = C, and
// whenever they both hold the true ratio lies in
// [NewLo/BaseHi, NewHi/BaseLo]. The ratio interval is therefore never
// anti-conservative, whatever the sampling means of either profile (mixed
// means included), the window marking and the sample type. It assumes
// only that the two profiles come from independent sampling streams (two
// runs, or two disjoint windows of one process).
func Diff(base, next *profile.Profile, opts DiffOptions) (*DiffResult, error) {
	if base == nil || next == nil {
		return nil, errors.New("report: Diff of a nil profile")
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0 && conf < 1) {
		return nil, errors.New("report: Diff confidence must be strictly between 0 and 1")
	}
	if opts.N < 0 {
		return nil, errors.New("report: Diff N must not be negative")
	}
	each := math.Sqrt(conf)
	if each >= 1 { // conf within 1 ulp of 1: sqrt rounds up
		each = math.Nextafter(1, 0)
	}
	if kb, kn := isGoHeap(base), isGoHeap(next); kb != kn {
		return nil, errors.New("report: cannot compare a Go heap profile with an arenaprof profile: they count different memory")
	}
	topts := TableOptions{By: opts.By, InUse: opts.InUse, Confidence: each}
	bt, err := Table(base, topts)
	if err != nil {
		return nil, err
	}
	nt, err := Table(next, topts)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*DiffRow{}
	var keys []string
	row := func(r TableRow) *DiffRow {
		d := byKey[r.Key]
		if d == nil {
			d = &DiffRow{Key: r.Key, Display: r.Display}
			byKey[r.Key] = d
			keys = append(keys, r.Key)
		}
		return d
	}
	for _, r := range bt.Rows {
		row(r).Base = r
	}
	for _, r := range nt.Rows {
		row(r).New = r
	}
	res := &DiffResult{By: bt.By, InUse: opts.InUse, Confidence: conf, Groups: len(keys)}
	for _, k := range keys {
		d := byKey[k]
		diffFill(d)
		res.Rows = append(res.Rows, *d)
	}
	res.Total = DiffRow{Key: "total", Display: "total", Base: bt.Total, New: nt.Total}
	diffFill(&res.Total)
	sort.Slice(res.Rows, func(i, j int) bool {
		a, b := diffAbs(res.Rows[i].Delta), diffAbs(res.Rows[j].Delta)
		if a != b {
			return a > b
		}
		return res.Rows[i].Key < res.Rows[j].Key
	})
	if opts.N > 0 && len(res.Rows) > opts.N {
		res.Rows = res.Rows[:opts.N]
	}
	return res, nil
}

func diffAbs(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// diffFill computes the ratio, its interval and the difference of a row
// whose Base and New hold intervals at confidence sqrt(C) each.
func diffFill(d *DiffRow) {
	d.Delta = diffSub(d.New.Bytes, d.Base.Bytes)
	if d.Base.Samples == 0 || d.New.Samples == 0 || d.Base.Bytes <= 0 || d.New.Bytes <= 0 {
		return
	}
	d.HasRatio = true
	d.Ratio = float64(d.New.Bytes) / float64(d.Base.Bytes)
	d.RatioLo = 0
	if d.Base.Hi > 0 && !math.IsInf(d.Base.Hi, 1) {
		d.RatioLo = d.New.Lo / d.Base.Hi
	}
	d.RatioHi = math.Inf(1)
	if d.Base.Lo > 0 {
		d.RatioHi = d.New.Hi / d.Base.Lo
	}
	d.Significant = d.RatioLo > 1 || d.RatioHi < 1
}

// diffSub is a - b, saturating instead of overflowing.
func diffSub(a, b int64) int64 {
	r := a - b
	if (b < 0 && r < a) || (b > 0 && r > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return r
}
