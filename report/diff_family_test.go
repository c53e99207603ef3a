package report_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/report"
)

var familyRuns = flag.Int("familyruns", 0, "pairs of profiles per case of TestDiffFamilyWise (0: 100, or 40 with -short)")

// zipfHeap returns a Go heap workload of fns functions: function i
// allocates objects of one size (cycling through the compiler's common
// classes) in a number that gives about top/(i+1) samples at rate 4096,
// at least 1. With fns 800 and top 8000 it is shaped like the Go
// compiler's heap profile by function (806 groups, about 70,000 samples,
// a few functions holding most of them); with 20 and 240 like a small
// service such as the quickstart. Function "pkg.changed" (index changed,
// or none when negative) allocates factor times as much.
func zipfHeap(fns int, top float64, changed int, factor float64) []heapClass {
	sizes := []int64{16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096}
	var cs []heapClass
	for i := range fns {
		size := sizes[i%len(sizes)]
		samples := max(1, top/float64(i+1))
		n := samples * 4096 / float64(size) // small objects: p ~ size/4096
		if size >= 1024 {
			n = samples / (1 - math.Exp(-float64(size)/4096))
		}
		fn := fmt.Sprintf("pkg.f%03d", i)
		if i == changed {
			fn, n = "pkg.changed", n*factor
		}
		cs = append(cs, heapClass{fn: fn, size: size, n: int(n + 0.5)})
	}
	return cs
}

// TestDiffFamilyWise measures, on pairs of profiles with known truth, how
// often Diff flags any row (false alarms of the whole result) where
// nothing changed, and how often it flags the row that changed from about
// 12 to about 24 events (power), with Holm's adjustment (the default) and
// per row (DiffOptions.PerRow, the behaviour before), at C = 0.95; and how
// often the -fail-above 1.5 gate fails (default -min-share 0.005).
//
// Deterministic: fixed seeds. Checks: with Holm, the pairs flagging any
// row of an unchanged workload are at most 5% (Holm's guarantee, given
// marginal tests at or below their level, which TestDiffSim measures):
// each pair flags independently with probability at most 0.05, and the
// test fails when their number reaches the Chernoff 1e-7 quantile of
// Binomial(runs, 0.05), with at most 6 such checks: a false failure has
// probability below 1e-6. That a Holm flag is also a per-row flag is
// checked on every row (no randomness involved).
func TestDiffFamilyWise(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 40
	}
	if *familyRuns > 0 {
		runs = *familyRuns
	}
	byType, byFunc := "type", "func"
	arena := func(n16 int) func(*testing.T, *rand.Rand, uint64, bool) *profile.Profile {
		return func(t *testing.T, _ *rand.Rand, seed uint64, changed bool) *profile.Profile {
			n := n16
			if changed {
				n *= 2
			}
			mean := int64(1024)
			return diffProfile(t, mean, seed, n, 1500, 100)
		}
	}
	heap := func(fns int, top float64) func(*testing.T, *rand.Rand, uint64, bool) *profile.Profile {
		return func(t *testing.T, rng *rand.Rand, _ uint64, changed bool) *profile.Profile {
			factor := 1.0
			if changed {
				factor = 2
			}
			// The changed function: the one with about 12 samples.
			return roundTrip(t, simHeapProfile(rng, 4096, zipfHeap(fns, top, int(top/12)-1, factor)))
		}
	}
	cases := []struct {
		name string
		by   string
		key  string // the row that changes in the power case
		make func(t *testing.T, rng *rand.Rand, seed uint64, changed bool) *profile.Profile
	}{
		// [16]byte at mean 1024: 768 objects draw about 12 events; 1500 x
		// [256]byte and 100 x [4096]byte beside it, through real arenas.
		{"arena, 3 types (12 events of [16]byte)", byType, "[16]uint8", arena(768)},
		{"heap, quickstart-like: 20 functions", byFunc, "pkg.changed", heap(20, 240)},
		{"heap, compiler-like: 800 functions", byFunc, "pkg.changed", heap(800, 8000)},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%d pairs per case, C = 0.95\n%-42s %5s %18s %18s %18s %18s %14s\n", runs, "case", "rows",
		"any row, Holm", "any row, per row", "12->24, Holm", "12->24, per row", "gate 1.5 Holm/per row")
	for ci, c := range cases {
		var anyHolm, anyPer, powHolm, powPer, gateHolm, gatePer, rows int
		rng := rand.New(rand.NewPCG(uint64(ci), 36))
		for r := range runs {
			seed := uint64(100000*ci + 4*r)
			base := c.make(t, rng, seed+1, false)
			same := c.make(t, rng, seed+2, false)
			next := c.make(t, rng, seed+3, true)
			for _, perRow := range []bool{false, true} {
				opts := report.DiffOptions{By: c.by, Confidence: 0.95, PerRow: perRow}
				null, err := report.Diff(base, same, opts)
				if err != nil {
					t.Fatal(err)
				}
				alt, err := report.Diff(base, next, opts)
				if err != nil {
					t.Fatal(err)
				}
				flagged := null.Total.Significant
				for _, row := range null.Rows {
					flagged = flagged || row.Significant
				}
				var power bool
				for _, row := range alt.Rows {
					power = power || row.Key == c.key && row.Significant
				}
				failed := len(report.Gate{FailAbove: 1.5, MinShare: 0.005}.Failing(null)) > 0
				if perRow {
					anyPer, powPer, gatePer = anyPer+b2i(flagged), powPer+b2i(power), gatePer+b2i(failed)
				} else {
					anyHolm, powHolm, gateHolm = anyHolm+b2i(flagged), powHolm+b2i(power), gateHolm+b2i(failed)
					rows += len(null.Rows)
					for _, res := range []*report.DiffResult{null, alt} {
						for _, row := range append(res.Rows, res.Total) {
							if row.Significant && !(row.P < 0.05 && row.PAdjusted >= row.P) {
								t.Errorf("%s: %s flagged with p %v, adjusted %v", c.name, row.Key, row.P, row.PAdjusted)
							}
						}
					}
				}
			}
		}
		pct := func(k int) string { return fmt.Sprintf("%d (%.1f%%)", k, 100*float64(k)/float64(runs)) }
		fmt.Fprintf(&out, "%-42s %5.0f %18s %18s %18s %18s %7d/%d\n", c.name, float64(rows)/float64(runs),
			pct(anyHolm), pct(anyPer), pct(powHolm), pct(powPer), gateHolm, gatePer)
		if limit := chernoffMax(runs, 0.05, 1e-7); anyHolm >= limit {
			t.Errorf("%s: %d of %d unchanged pairs flag a row with Holm (limit %d)", c.name, anyHolm, runs, limit)
		}
		if limit := chernoffMax(runs, 0.025, 1e-7); gateHolm >= limit {
			t.Errorf("%s: the gate failed %d of %d unchanged pairs (limit %d)", c.name, gateHolm, runs, limit)
		}
	}
	t.Log(out.String())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
