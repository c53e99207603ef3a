package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

// diffGates are the gates the diff study tries: -fail-above 1.2 and 1.5,
// with arenaprof diff's default materiality (-min-share 0.005, -min-bytes
// 0) and with none (-min-share 0).
var diffGates = []report.Gate{{FailAbove: 1.2, MinShare: 0.005}, {FailAbove: 1.5, MinShare: 0.005}, {FailAbove: 1.2}, {FailAbove: 1.5}}

// diffStudy measures report.Diff (arenaprof diff) on real compiler
// profiles at one rate: the false alarms of unchanged pairs (two compiles
// of the same package: runs 2i and 2i+1) and the power on pairs whose
// work really doubles (run 2i against the merge of runs 2i+1 and 2i+2,
// modulo the number of runs: twice the compiles, each row's true bytes
// about twice the base's up to the compiler's own run-to-run variation).
// Within a pair the profiles are independent runs; the doubled pairs
// reuse runs of the neighbouring pair, so they are not independent of
// each other.
func diffStudy(w io.Writer, paths []string, rate int64, by string, conf float64) error {
	ps := make([]*profile.Profile, len(paths))
	for i, pb := range paths {
		p, err := load(pb, rate)
		if err != nil {
			return err
		}
		ps[i] = p
	}
	pairs := len(ps) / 2
	var null, alt diffCounts
	for i := range pairs {
		base := ps[2*i]
		if err := null.add(base, ps[2*i+1], by, conf); err != nil {
			return err
		}
		next, err := report.Merge(ps[2*i+1].Copy(), ps[(2*i+2)%len(ps)].Copy())
		if err != nil {
			return err
		}
		if err := alt.add(base, next, by, conf); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "rate %d, by %s: %d unchanged pairs, %d doubled pairs; groups per pair: median %d (%d with a ratio); %.0f%% confidence\n",
		rate, by, pairs, pairs, quantileInt(null.groups, 0.5), quantileInt(null.ratioRows, 0.5), 100*conf)
	fmt.Fprintf(w, "  unchanged: pairs flagging any row: Holm %d, per row %d (rows flagged per row: median %d, max %d); total row flagged: Holm %d, per row %d\n",
		null.anyRow[0], null.anyRow[1], quantileInt(null.flagged[1], 0.5), slices.Max(null.flagged[1]), null.total[0], null.total[1])
	for gi, g := range diffGates {
		fmt.Fprintf(w, "  unchanged: gate -fail-above %g -min-share %g fails: Holm %d, per row %d\n", g.FailAbove, g.MinShare, null.gate[gi][0], null.gate[gi][1])
	}
	fmt.Fprintf(w, "  doubled: total row flagged: Holm %d, per row %d; rows with a ratio flagged: Holm %s, per row %s\n",
		alt.total[0], alt.total[1], frac(alt.rowsFlagged[0], alt.rows), frac(alt.rowsFlagged[1], alt.rows))
	fmt.Fprintf(w, "  doubled: rows with 10-14 base samples (about 12 -> 24) flagged: Holm %s, per row %s\n",
		frac(alt.twelveFlagged[0], alt.twelve), frac(alt.twelveFlagged[1], alt.twelve))
	for gi, g := range diffGates {
		fmt.Fprintf(w, "  doubled: gate -fail-above %g -min-share %g fails: Holm %d, per row %d\n", g.FailAbove, g.MinShare, alt.gate[gi][0], alt.gate[gi][1])
	}
	if verbose {
		keys := slices.Sorted(maps.Keys(null.holmKeys))
		for _, k := range keys {
			fmt.Fprintf(w, "    unchanged pairs flag with Holm: %s\n", null.holmKeys[k])
		}
	}
	fmt.Fprintln(w)
	return nil
}

// diffCounts accumulate the outcomes of report.Diff over pairs; index 0
// is with Holm's adjustment, 1 per row.
type diffCounts struct {
	groups, ratioRows []int
	anyRow, total     [2]int
	flagged           [2][]int // rows flagged in each pair
	gate              [][2]int // by diffGates
	rows, twelve      int      // rows with a ratio, of which with 10-14 base samples
	rowsFlagged       [2]int
	twelveFlagged     [2]int
	holmKeys          map[string]string // rows Holm flags, with their figures
}

func (c *diffCounts) add(base, next *profile.Profile, by string, conf float64) error {
	if c.gate == nil {
		c.gate = make([][2]int, len(diffGates))
	}
	for k, perRow := range []bool{false, true} {
		res, err := report.Diff(base, next, report.DiffOptions{By: by, Confidence: conf, PerRow: perRow})
		if err != nil {
			return err
		}
		n, withRatio := 0, 0
		for _, r := range res.Rows {
			if !r.HasRatio {
				continue
			}
			withRatio++
			if k == 0 {
				c.rows++
				if r.Base.Samples >= 10 && r.Base.Samples <= 14 {
					c.twelve++
				}
			}
			if r.Significant {
				n++
				c.rowsFlagged[k]++
				if r.Base.Samples >= 10 && r.Base.Samples <= 14 {
					c.twelveFlagged[k]++
				}
				if k == 0 {
					if c.holmKeys == nil {
						c.holmKeys = map[string]string{}
					}
					key := r.Key
					if len(key) > 160 {
						key = key[:160] + "…"
					}
					c.holmKeys[r.Key] = fmt.Sprintf("%s: %d vs %d samples, ratio %.3g [%.3g, %.3g], p %.2g, adjusted %.2g",
						key, r.Base.Samples, r.New.Samples, r.Ratio, r.RatioLo, r.RatioHi, r.P, r.PAdjusted)
				}
			}
		}
		if k == 0 {
			c.groups = append(c.groups, res.Groups)
			c.ratioRows = append(c.ratioRows, withRatio)
		}
		c.flagged[k] = append(c.flagged[k], n)
		if n > 0 {
			c.anyRow[k]++
		}
		if res.Total.Significant {
			c.total[k]++
		}
		for gi, g := range diffGates {
			if len(g.Failing(res)) > 0 {
				c.gate[gi][k]++
			}
		}
	}
	return nil
}

func quantileInt(x []int, q float64) int {
	if len(x) == 0 {
		return 0
	}
	x = slices.Clone(x)
	slices.Sort(x)
	return x[min(len(x)-1, int(q*float64(len(x))))]
}

func frac(k, n int) string {
	if n == 0 {
		return "0 of 0"
	}
	return fmt.Sprintf("%d of %d (%.1f%%)", k, n, 100*float64(k)/float64(n))
}

// diffStudies runs diffStudy at every rate, by function and by stack.
func (c *config) diffStudies(w io.Writer) error {
	if c.runs < 4 {
		return fmt.Errorf("-diff needs -runs of at least 4, not %d", c.runs)
	}
	fmt.Fprintf(w, "%s compiling %s; %d sampled runs per rate\n\n", c.compile, c.pkg, c.runs)
	for _, r := range c.rates {
		paths, err := c.profiles(r, c.runs)
		if err != nil {
			return err
		}
		for _, by := range []string{"func", "stack"} {
			if err := diffStudy(w, paths, r, by, c.conf); err != nil {
				return err
			}
		}
	}
	return nil
}
