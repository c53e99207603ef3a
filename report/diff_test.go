package report_test

import (
	"bytes"
	"flag"
	"math"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

var diffRuns = flag.Int("diffruns", 0, "pairs of profiles for TestDiffNoFalseAlarms (0: 40, or 15 with -short)")

var (
	diffSink16   *[16]byte
	diffSink256  *[256]byte
	diffSink4096 *[4096]byte
)

// diffWorkload allocates n16, n256 and n4096 objects of three types.
//
//go:noinline
func diffWorkload(a *arena.Arena, n16, n256, n4096 int) {
	for range n16 {
		diffSink16 = arena.New[[16]byte](a)
	}
	for range n256 {
		diffSink256 = arena.New[[256]byte](a)
	}
	for range n4096 {
		diffSink4096 = arena.New[[4096]byte](a)
	}
}

// diffProfile profiles one run of diffWorkload through a real arena seeded
// with (seed, 7), at the given sampling mean.
func diffProfile(t *testing.T, mean int64, seed uint64, n16, n256, n4096 int) *profile.Profile {
	t.Helper()
	setMeanBytes(t, mean)
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithSeed(seed, 7))
	diffWorkload(a, n16, n256, n4096)
	a.Reset()
	prof, err := export.Build(p.Snapshot())
	p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return roundTrip(t, prof)
}

// chernoffMax returns the smallest k such that, for X ~ Binomial(n, p),
// the Chernoff bound on P(X >= k) is below alpha.
func chernoffMax(n int, p, alpha float64) int {
	for k := int(math.Ceil(float64(n) * p)); k <= n; k++ {
		q := float64(k) / float64(n)
		kl := q * math.Log(q/p)
		if q < 1 {
			kl += (1 - q) * math.Log((1-q)/(1-p))
		}
		if math.Exp(-float64(n)*kl) < alpha {
			return k
		}
	}
	return n + 1
}

// No false alarms: pairs of profiles of the same workload through real
// arenas with different seeds (and, in half the runs, different sampling
// means), compared at C = 0.9, 0.95 and 0.99, per row (DiffOptions.PerRow)
// and with Holm's adjustment (the default). Per row, each of the 3 groups
// and the total is flagged with probability at most 1 - C; disjoint byte
// ranges are sampled independently (the gaps are memoryless), so the
// number of flagged groups is dominated by Binomial(3*runs, 1-C) and the
// flagged totals by Binomial(runs, 1-C). With Holm, a pair flags any row
// with probability at most 1 - C, so the pairs flagging a row are
// dominated by Binomial(runs, 1-C). The test fails when a count reaches
// its Chernoff bound's 1e-6/9 quantile (three confidences, three counts),
// so a false failure has probability below 1e-6. The seeds are fixed, so
// the run is deterministic.
func TestDiffNoFalseAlarms(t *testing.T) {
	runs := 40
	if testing.Short() {
		runs = 15
	}
	if *diffRuns > 0 {
		runs = *diffRuns
	}
	const alpha = 1e-6 / 9
	for _, conf := range []float64{0.9, 0.95, 0.99} {
		var flagged, totalFlagged, anyRow [2]int // Holm, per row
		groups := 0
		for r := range runs {
			meanNew := int64(1024)
			if r%2 == 1 {
				meanNew = 3000 // different means in BASE and NEW
			}
			base := diffProfile(t, 1024, uint64(2*r+1), 20000, 1500, 100)
			next := diffProfile(t, meanNew, uint64(2*r+2), 20000, 1500, 100)
			for k, perRow := range []bool{false, true} {
				res, err := report.Diff(base, next, report.DiffOptions{Confidence: conf, PerRow: perRow})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, row := range res.Rows {
					if !row.HasRatio {
						t.Fatalf("run %d: %s present in one profile only", r, row.Key)
					}
					if k == 0 {
						groups++
					}
					if row.Significant {
						n++
					}
				}
				flagged[k] += n
				if res.Total.Significant {
					totalFlagged[k]++
				}
				if n > 0 || res.Total.Significant {
					anyRow[k]++
				}
			}
		}
		limit := chernoffMax(groups, 1-conf, alpha)
		t.Logf("false alarms at C=%v over %d pairs: per row %d of %d groups (%.2f%%), %d totals, %d pairs flag any row; Holm %d groups, %d totals, %d pairs flag any row (%.2f%%); limit %d groups",
			conf, runs, flagged[1], groups, 100*float64(flagged[1])/float64(groups), totalFlagged[1], anyRow[1],
			flagged[0], totalFlagged[0], anyRow[0], 100*float64(anyRow[0])/float64(runs), limit)
		if flagged[1] >= limit {
			t.Errorf("per row: %d of %d groups flagged at confidence %v (limit %d)", flagged[1], groups, conf, limit)
		}
		if totalFlagged[1] >= chernoffMax(runs, 1-conf, alpha) {
			t.Errorf("per row: %d of %d totals flagged", totalFlagged[1], runs)
		}
		if anyRow[0] >= chernoffMax(runs, 1-conf, alpha) {
			t.Errorf("Holm: %d of %d pairs flag a row at confidence %v", anyRow[0], runs, conf)
		}
	}
}

// Power: [16]byte doubles, [4096]byte halves, [256]byte stays. At
// confidence 1-1e-7 (and over 1000 events per side and group), the two
// changes are flagged, the unchanged group is not, and each true ratio lies
// in its interval. Each interval misses with probability at most 1e-7; at
// these counts a true 2x change escapes detection with probability far
// below 1e-7 (the interval half-widths are under 20%). So a false failure
// has probability below 1e-6.
func TestDiffPower(t *testing.T) {
	const conf = 1 - 1e-7
	base := diffProfile(t, 1024, 101, 100000, 8000, 800)
	next := diffProfile(t, 2048, 102, 200000, 8000, 400)
	res, err := report.Diff(base, next, report.DiffOptions{Confidence: conf})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"[16]uint8": 2, "[256]uint8": 1, "[4096]uint8": 0.5}
	if len(res.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(res.Rows), len(want), res.Rows)
	}
	for _, row := range res.Rows {
		truth, ok := want[row.Key]
		if !ok {
			t.Fatalf("unexpected group %q", row.Key)
		}
		if !row.HasRatio || !(row.RatioLo <= truth && truth <= row.RatioHi) {
			t.Errorf("%s: true ratio %v outside [%v, %v]", row.Key, truth, row.RatioLo, row.RatioHi)
		}
		if row.Significant != (truth != 1) {
			t.Errorf("%s: significant %v, true ratio %v, interval [%v, %v]", row.Key, row.Significant, truth, row.RatioLo, row.RatioHi)
		}
	}
	// Sorted by the size of the change: 1.6 MB more of [16]byte and 1.6 MB
	// less of [4096]byte (in either order, they are equal), then the
	// unchanged group.
	if res.Rows[2].Key != "[256]uint8" {
		t.Errorf("order %s, %s, %s", res.Rows[0].Key, res.Rows[1].Key, res.Rows[2].Key)
	}
}

// Groups present in one profile only get no ratio and are never flagged;
// their difference is the other side's estimate.
func TestDiffOneSided(t *testing.T) {
	base := diffProfile(t, 1024, 201, 20000, 0, 0)
	next := diffProfile(t, 1024, 202, 0, 0, 200)
	res, err := report.Diff(base, next, report.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Confidence != 0.95 || res.Groups != 2 {
		t.Fatalf("confidence %v, groups %d", res.Confidence, res.Groups)
	}
	for _, row := range res.Rows {
		if row.HasRatio || row.Significant {
			t.Errorf("%s: one-sided row has a ratio: %+v", row.Key, row)
		}
		if row.Delta != row.New.Bytes-row.Base.Bytes || row.Delta == 0 {
			t.Errorf("%s: delta %d, base %d, new %d", row.Key, row.Delta, row.Base.Bytes, row.New.Bytes)
		}
	}
	if _, err := report.Diff(base, next, report.DiffOptions{Confidence: 1}); err == nil {
		t.Error("confidence 1 accepted")
	}
	if _, err := report.Diff(nil, next, report.DiffOptions{}); err == nil {
		t.Error("nil profile accepted")
	}
}

// Power and coverage at C = 0.95 and moderate sample counts, over many
// pairs of real-arena profiles: BASE at mean 1024 has about 100 events of
// [16]byte and 400 of [256]byte; NEW, at mean 2048, doubles [16]byte and
// halves [256]byte, so NEW has about 100 events of each. The test logs the
// share of runs flagging each change (the power) and asserts coverage: each
// interval misses its true ratio with probability at most 0.05, so over
// 2*runs independent intervals the misses are dominated by
// Binomial(2*runs, 0.05) and reaching its Chernoff 1e-6 quantile has
// probability below 1e-6.
func TestDiffPowerModerate(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 30
	}
	const conf = 0.95
	flagged := map[string]int{}
	misses := 0
	for r := range runs {
		base := diffProfile(t, 1024, uint64(1000+2*r), 6400, 1600, 0)
		next := diffProfile(t, 2048, uint64(1001+2*r), 12800, 800, 0)
		res, err := report.Diff(base, next, report.DiffOptions{Confidence: conf})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			truth := map[string]float64{"[16]uint8": 2, "[256]uint8": 0.5}[row.Key]
			if truth == 0 || !row.HasRatio {
				t.Fatalf("run %d: row %+v", r, row)
			}
			if row.Significant {
				flagged[row.Key]++
			}
			if !(row.RatioLo <= truth && truth <= row.RatioHi) {
				misses++
			}
		}
	}
	t.Logf("power at C=%v over %d runs: 2x (about 100 events per side) flagged %d, 0.5x (400 -> 100 events) flagged %d; true ratio outside the interval %d of %d",
		conf, runs, flagged["[16]uint8"], flagged["[256]uint8"], misses, 2*runs)
	if misses >= chernoffMax(2*runs, 1-conf, 1e-6) {
		t.Errorf("true ratio outside the interval %d of %d times", misses, 2*runs)
	}
}

// roundTrip writes p and parses it back, as a reader of the file would.
func roundTrip(t testing.TB, p *profile.Profile) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
