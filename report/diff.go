package report

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// DiffOptions configure [Diff].
type DiffOptions struct {
	// By is the grouping, as in [TableOptions.By]; the zero value groups
	// by type.
	By string
	// InUse compares the bytes of objects still in use instead of the bytes
	// allocated.
	InUse bool
	// N keeps the N largest changes in DiffResult.Rows; 0 keeps all. The
	// total always covers every group.
	N int
	// Confidence of the ratio intervals, strictly between 0 and 1; 0 means
	// 0.95.
	Confidence float64
	// GoVersion and AnyOrder are as in [TableOptions], for both profiles.
	GoVersion string
	AnyOrder  bool
	// PerRow tests each row alone at the confidence (the behaviour before
	// family-wise control): with many rows, some are then flagged by
	// chance. By default Significant and [Gate] control the family-wise
	// error over all rows with Holm's step-down method.
	PerRow bool
	// Per normalises each profile before comparing: "second" divides its
	// bytes by its window's length in seconds, "request" by the arenas
	// arena.Pool.Get handed out in its window (the count an arenaprof
	// profile records); "" or "none" compares the bytes as captured. The
	// divisors are exact, so a normalised ratio and its interval are the
	// captured ones times BASE's divisor over NEW's, and the test is of
	// equal normalised bytes. A profile without its divisor (a Go heap
	// profile or an older arenaprof profile per request, a cumulative Go
	// heap profile per second) is refused, and so are in-use bytes (what is
	// live at the window's end, not what the window allocated).
	Per string
}

// DiffRow compares one group (or the total) of two profiles.
type DiffRow struct {
	// Key and Display are as in [TableRow].
	Key, Display string
	// Base and New are the two tables' rows for the group, their intervals
	// at the result's confidence; a side where the group is absent has the
	// zero row (no samples, zero bytes).
	Base, New TableRow
	// BaseNorm and NewNorm are Base.Bytes and New.Bytes divided by the
	// result's Divisors (the bytes themselves without normalisation).
	BaseNorm, NewNorm float64
	// HasRatio is false when a side has no samples: the ratio fields are
	// then meaningless and Significant is false.
	HasRatio bool
	// Ratio is NewNorm / BaseNorm; RatioLo and RatioHi bound the ratio
	// of the true (normalised) bytes with probability at least the
	// result's confidence, each missing with probability at most half the
	// rest.
	Ratio, RatioLo, RatioHi float64
	// P is the two-sided p-value of "the group's true bytes are equal in
	// both profiles" that the interval inverts: [RatioLo, RatioHi]
	// excludes 1 exactly when P < 1-Confidence. It is 1 without a ratio.
	// PAdjusted is P adjusted for the number of rows by Holm's step-down
	// method (see [Diff]); it equals P with DiffOptions.PerRow.
	P, PAdjusted float64
	// Significant reports that PAdjusted < 1-Confidence (and so that
	// [RatioLo, RatioHi] excludes 1): the group's true bytes differ
	// between the profiles, with a probability of flagging any unchanged
	// row at most 1-Confidence over the whole result (per row with
	// DiffOptions.PerRow). The interval itself stays marginal: it covers
	// this row's ratio with probability Confidence.
	Significant bool
	// Delta is New.Bytes - Base.Bytes, the estimated absolute change of
	// the bytes as captured (NewNorm - BaseNorm is the normalised one,
	// which orders the rows).
	Delta int64
	// Conservative reports that the interval rests, on either side, on
	// samples of mixed object sizes without their variance sums (an
	// overflow sample of a file, or a Pyroscope read of uploads made
	// before the sums existed): their variance is taken at the worst
	// their bytes and events allow, so the interval is wider than the
	// sampling needs.
	Conservative bool

	sums *diffSums // the test's sums, for Gate; nil without a ratio
}

// diffSums are the ratio sums of both sides of a row (see ratioInterval)
// and scale, the normalised ratio over the captured one.
type diffSums struct {
	baseLo, baseHi, newLo, newHi ratioSums
	scale                        float64
}

// DiffResult is the outcome of [Diff].
type DiffResult struct {
	By         string // the grouping, "" spelled "type"
	InUse      bool
	Confidence float64
	// PerRow is DiffOptions.PerRow. Family is the number of hypotheses
	// Holm's method adjusts for: the rows with a ratio, and the total
	// when there is more than one group (with one, the total is the same
	// test as its row).
	PerRow bool
	Family int
	// Groups is the number of groups in either profile; Rows the largest
	// changes (at most DiffOptions.N), sorted by |Delta|, largest first,
	// ties by key.
	Groups int
	Rows   []DiffRow
	// Total compares the whole profiles; its Key is "total".
	Total DiffRow
	// HeapSampler and HeapGoVersion are those of [TableResult] for the
	// base and the new profile.
	HeapSampler, HeapGoVersion [2]string
	// Per is the normalisation in force ("none", "second" or "request",
	// see DiffOptions.Per) and Divisors the base's and the new profile's
	// divisors: window seconds or arenas handed out (1 and 1 with none).
	Per      string
	Divisors [2]float64
}

// Diff compares two profiles (arenaprof profiles, combined memory profiles
// or Go heap profiles, both of the same kind) group by group: for each
// group it gives both estimates, their ratio New/Base and an interval on
// the ratio of the true bytes that holds with probability at least
// opts.Confidence.
//
// Method: the exact conditional test for two counts, generalized to
// weighted sums: each sampled object is drawn independently
// of every other, with a probability fixed by its size and the sampling
// mean (or MemProfileRate) it was drawn under, so the events of a group are
// a weighted sum of binomial counts. With one weight per side (one mean,
// objects small against it) the interval is the inverted conditional
// binomial test; groups that mix sizes or means use the gamma extension of
// Tiwari, Clegg and Zou, measured to keep false alarms at or below
// 1-Confidence. The hypothesis a row tests is that the group's true bytes
// are equal in both profiles; its p-value P is the one its interval
// inverts (the interval excludes 1 exactly when P < 1-Confidence).
//
// Family-wise error: a profile has many rows, and testing each at
// 1-Confidence would flag some of an unchanged pair by chance. So a row
// is Significant when its Holm-adjusted p-value is below 1-Confidence:
// Holm's step-down method over the rows with a ratio and the total keeps
// the probability of flagging any unchanged row at most 1-Confidence
// (for any dependence between rows), and flags everything Bonferroni
// would and often more. The intervals stay marginal, each at Confidence,
// so a row whose interval just excludes 1 may not be flagged.
// DiffOptions.PerRow restores the test of each row alone.
//
// The two profiles must come from independent sampling streams
// (two runs, or two disjoint windows of one process); the test measures
// sampling error only, not differences between the runs of a program.
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
	// table returns their errors where it checks the means.
	fb, _ := pprofmt.Describe(base)
	fn, _ := pprofmt.Describe(next)
	if (fb.Kind == pprofmt.KindGoHeap) != (fn.Kind == pprofmt.KindGoHeap) {
		return nil, errors.New("report: cannot compare a Go heap profile with an arenaprof profile: they count different memory")
	}
	if opts.InUse && opts.Per != "" && opts.Per != "none" {
		return nil, fmt.Errorf("report: cannot normalise in-use bytes per %s: they are what is live at the window's end, not what the window allocated; normalise allocated bytes", opts.Per)
	}
	per, div, err := diffDivisors(opts.Per, [2]*pprofmt.Facts{fb, fn})
	if err != nil {
		return nil, err
	}
	topts := TableOptions{By: opts.By, InUse: opts.InUse, Confidence: conf, GoVersion: opts.GoVersion, AnyOrder: opts.AnyOrder}
	bg, err := table(base, fb, topts)
	if err != nil {
		return nil, err
	}
	ng, err := table(next, fn, topts)
	if err != nil {
		return nil, err
	}
	bt, nt := bg.res, ng.res
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
	res := &DiffResult{By: bt.By, InUse: opts.InUse, Confidence: conf, PerRow: opts.PerRow, Groups: len(keys),
		HeapSampler: [2]string{bt.HeapSampler, nt.HeapSampler}, HeapGoVersion: [2]string{bt.HeapGoVersion, nt.HeapGoVersion},
		Per: per, Divisors: div}
	for _, k := range keys {
		d := byKey[k]
		if err := diffFill(d, bg.groups[k], ng.groups[k], conf, div); err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, *d)
	}
	res.Total = DiffRow{Key: "total", Display: "total", Base: bt.Total, New: nt.Total}
	if err := diffFill(&res.Total, bg.total, ng.total, conf, div); err != nil {
		return nil, err
	}
	res.Family = diffAdjust(res, 1-conf)
	sort.Slice(res.Rows, func(i, j int) bool {
		a, b := math.Abs(res.Rows[i].NewNorm-res.Rows[i].BaseNorm), math.Abs(res.Rows[j].NewNorm-res.Rows[j].BaseNorm)
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

// diffDivisors checks the normalisation per and returns its name and the
// divisors of the two profiles ps, whose facts are fs.
func diffDivisors(per string, fs [2]*pprofmt.Facts) (string, [2]float64, error) {
	var div [2]float64
	side := [2]string{"base", "new"}
	switch per {
	case "", "none":
		return "none", [2]float64{1, 1}, nil
	case "second":
		for i, f := range fs {
			ns := f.PoolGetsNanos
			switch {
			case f.PoolGetsErr != nil:
				return "", div, fmt.Errorf("report: cannot normalise per second: the %s profile's %v", side[i], f.PoolGetsErr)
			case ns >= 0:
			case f.Kind == pprofmt.KindArena && f.HeapSamples:
				return "", div, fmt.Errorf("report: cannot normalise per second: the %s profile combines arena and Go heap samples without recording its window's length (its DurationNanos sums both parts'); write it again with this release, or use per request", side[i])
			default:
				ns = f.DurationNanos
			}
			if ns <= 0 {
				return "", div, fmt.Errorf("report: cannot normalise per second: the %s profile records no window length (DurationNanos %d): a Go heap profile taken without ?seconds=N counts since the process started; take a delta (?seconds=N), or compare arenaprof profiles", side[i], ns)
			}
			div[i] = float64(ns) / 1e9
		}
	case "request":
		for i, f := range fs {
			switch {
			case f.PoolGetsErr != nil:
				return "", div, fmt.Errorf("report: cannot normalise per request: the %s profile's %v", side[i], f.PoolGetsErr)
			case f.PoolGets < 0:
				return "", div, fmt.Errorf("report: cannot normalise per request: the %s profile records no count of arenas handed out by arena.Pool.Get (a Go heap profile, an arenaprof profile written before the count was recorded, or a merge with such a part); use per second or none", side[i])
			case f.PoolGets == 0:
				return "", div, fmt.Errorf("report: cannot normalise per request: the %s profile records 0 arenas handed out by arena.Pool.Get in its window (the service takes no arenas from a Pool, or none while profiling was on); use per second or none", side[i])
			}
			div[i] = float64(f.PoolGets)
		}
	default:
		return "", div, fmt.Errorf("report: unknown normalisation %q: use second, request or none", per)
	}
	return per, div, nil
}

// diffFill computes the ratio, its interval and the difference of a row
// from the two sides' weighted sums (see ratio.go). A group with arena
// samples may have allocated bytes under a mean in force without drawing
// an event: the extra event of the test's upper side is taken at a weight
// of at least that mean. div are the two sides' divisors: the normalised
// ratio is the captured one times scale = div[0]/div[1], exactly, for
// the divisors are known exactly; its interval is the captured one's
// times scale, and its test is of a captured ratio of 1/scale.
func diffFill(d *DiffRow, base, next *group, conf float64, div [2]float64) error {
	d.Delta = diffSub(d.New.Bytes, d.Base.Bytes)
	d.BaseNorm, d.NewNorm = float64(d.Base.Bytes)/div[0], float64(d.New.Bytes)/div[1]
	scale := div[0] / div[1]
	if d.Base.Samples == 0 || d.New.Samples == 0 || d.Base.Bytes <= 0 || d.New.Bytes <= 0 || base == nil || next == nil {
		return nil
	}
	side := func(g *group) (lo, hi ratioSums) {
		lo, hi = g.ratio.lo, g.ratio.hi
		if a := g.sums.ratioAllowance(); a > 0 {
			lo.wmax, hi.wmax = max(lo.wmax, a), max(hi.wmax, a)
		}
		return lo, hi
	}
	blo, bhi := side(base)
	nlo, nhi := side(next)
	lo, hi, err := ratioInterval(blo, bhi, nlo, nhi, conf)
	if err != nil {
		return fmt.Errorf("%w for group %q", err, d.Key)
	}
	d.HasRatio = true
	raw := float64(d.New.Bytes) / float64(d.Base.Bytes)
	// The bounds come from the model's weighted sums, the ratio from the
	// profile's rounded values: keep the ratio inside its interval.
	lo, hi = min(lo, raw), max(hi, raw)
	d.Ratio, d.RatioLo, d.RatioHi = raw*scale, lo*scale, hi*scale
	d.sums = &diffSums{blo, bhi, nlo, nhi, scale}
	d.Conservative = blo.conservative || bhi.conservative || nlo.conservative || nhi.conservative
	d.P = ratioP(blo, bhi, nlo, nhi, 1/scale)
	d.PAdjusted = d.P
	return nil
}

// diffAdjust sets PAdjusted (Holm's adjustment over the family, unless
// r.PerRow) and Significant of r's rows and total, at level alpha, and
// returns the size of the family. Rows without a ratio keep P and
// PAdjusted 1 and are not flagged.
func diffAdjust(r *DiffResult, alpha float64) int {
	var fam []*DiffRow
	for i := range r.Rows {
		if r.Rows[i].HasRatio {
			fam = append(fam, &r.Rows[i])
		}
	}
	if r.Total.HasRatio && r.Groups > 1 {
		fam = append(fam, &r.Total)
	}
	if !r.PerRow {
		p := make([]float64, len(fam))
		for i, d := range fam {
			p[i] = d.P
		}
		for i, a := range holm(p) {
			fam[i].PAdjusted = a
		}
		if r.Total.HasRatio && r.Groups == 1 && len(r.Rows) == 1 {
			r.Total.PAdjusted = r.Rows[0].PAdjusted
		}
	}
	flag := func(d *DiffRow) {
		if !d.HasRatio {
			d.P, d.PAdjusted = 1, 1
			return
		}
		d.Significant = d.PAdjusted < alpha && (d.RatioLo > 1 || d.RatioHi < 1)
	}
	for i := range r.Rows {
		flag(&r.Rows[i])
	}
	flag(&r.Total)
	return len(fam)
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

// Gate is the check of arenaprof diff -fail-above: it fails when a
// material group grew by more than FailAbove with the result's confidence.
// Unless the result is PerRow, the confidence holds over all material
// groups together: each group's one-sided p-value of "its ratio is at
// most FailAbove" (the one its RatioLo inverts) is adjusted by Holm's
// step-down method over the material groups with a ratio, so an
// unchanged workload fails the gate with probability at most
// (1-Confidence)/2, the level of RatioLo alone.
type Gate struct {
	// FailAbove is the ratio a group's RatioLo must exceed to fail the
	// gate (above 0).
	FailAbove float64
	// A group is material when its new bytes are at least MinShare times
	// the new total and at least MinBytes.
	MinShare float64
	MinBytes int64
}

// Failing returns the material rows of r whose RatioLo exceeds
// g.FailAbove and, unless r.PerRow, whose Holm-adjusted p-value is below
// (1-r.Confidence)/2, in r's order. Groups present in one profile only
// have no ratio and never fail. It reads r.Rows: compute r with
// DiffOptions.N 0 for a gate over every group. Rows not computed by
// [Diff] (without its sums) are judged by RatioLo alone.
func (g Gate) Failing(r *DiffResult) []DiffRow {
	floor := max(float64(g.MinBytes), g.MinShare*float64(r.Total.New.Bytes))
	var fam []DiffRow
	for _, row := range r.Rows {
		if row.HasRatio && float64(row.New.Bytes) >= floor {
			fam = append(fam, row)
		}
	}
	adj := make([]float64, len(fam))
	if !r.PerRow {
		for i, row := range fam {
			adj[i] = row.gateP(g.FailAbove)
		}
		adj = holm(adj)
	}
	conf := r.Confidence
	if conf == 0 {
		conf = 0.95
	}
	var bad []DiffRow
	for i, row := range fam {
		if row.RatioLo > g.FailAbove && (r.PerRow || row.sums == nil || adj[i] < (1-conf)/2) {
			bad = append(bad, row)
		}
	}
	return bad
}

// gateP returns the one-sided p-value of "the ratio is at most c" that
// RatioLo inverts (RatioLo exceeds c at confidence C exactly when it is
// below (1-C)/2); 0 for a row without sums, which the gate judges by
// RatioLo alone.
func (d DiffRow) gateP(c float64) float64 {
	if d.sums == nil {
		return 0
	}
	return ratioLowerP(d.sums.baseHi.plusOne(), d.sums.newLo, c/d.sums.scale)
}
