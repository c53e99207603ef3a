package report_test

import (
	"math"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

type shown16 struct{ x [16]byte }
type shown24 struct{ x [24]byte }
type shown48 struct{ x [48]byte }
type shown64 struct{ x [64]byte }
type shown128 struct{ x [128]byte }
type shown256 struct{ x [256]byte }
type shown512 struct{ x [512]byte }
type shown2048 struct{ x [2048]byte }

// Each site allocates n objects of its own type and n/2 of the next one's,
// so rows by type, by function and by stack group different objects.
//
//go:noinline
func shownSite0(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown16](a)
		if i%2 == 0 {
			arena.New[shown24](a)
		}
	}
}

//go:noinline
func shownSite1(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown24](a)
		if i%2 == 0 {
			arena.New[shown48](a)
		}
	}
}

//go:noinline
func shownSite2(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown48](a)
		if i%2 == 0 {
			arena.New[shown64](a)
		}
	}
}

//go:noinline
func shownSite3(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown64](a)
		if i%2 == 0 {
			arena.New[shown128](a)
		}
	}
}

//go:noinline
func shownSite4(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown128](a)
		if i%2 == 0 {
			arena.New[shown256](a)
		}
	}
}

//go:noinline
func shownSite5(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown256](a)
		if i%2 == 0 {
			arena.New[shown512](a)
		}
	}
}

//go:noinline
func shownSite6(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown512](a)
		if i%2 == 0 {
			arena.New[shown2048](a)
		}
	}
}

//go:noinline
func shownSite7(a *arena.Arena, n int) {
	for i := range n {
		arena.New[shown2048](a)
		if i%2 == 0 {
			arena.New[shown16](a)
		}
	}
}

// shownWork calls every site with object counts such that, at mean 16384,
// most groups expect between a tenth of an event and a few: the rows a
// table shows are mostly rows of one or two events.
func shownWork(a *arena.Arena, scale int) {
	shownSite0(a, 40*scale)
	shownSite1(a, 60*scale)
	shownSite2(a, 40*scale)
	shownSite3(a, 30*scale)
	shownSite4(a, 30*scale)
	shownSite5(a, 10*scale)
	shownSite6(a, 6*scale)
	shownSite7(a, 3*scale)
}

//go:noinline
func shownCallerA(a *arena.Arena) { shownWork(a, 4) }

//go:noinline
func shownCallerB(a *arena.Arena) { shownWork(a, 1) }

// shownRun allocates the workload in one arena and returns its profile's
// tables by type, function and stack.
func shownRun(t *testing.T, seed uint64) [3]*report.TableResult {
	t.Helper()
	p, err := profiler.Start()
	if err != nil {
		t.Fatal(err)
	}
	a := arena.NewArena(arena.WithSeed(seed, 83))
	shownCallerA(a)
	shownCallerB(a)
	p.Stop()
	a.Free()
	prof, err := export.Build(p.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var out [3]*report.TableResult
	for i, by := range shownGroupings {
		tab, err := report.Table(prof, report.TableOptions{By: by, Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = tab
	}
	return out
}

var shownGroupings = [3]string{"type", "func", "stack"}

// TestCoverageRowsShown measures, through real arenas, the 95% coverage of
// the rows a table shows (rows with at least one event), by type, function
// and stack, for a workload whose groups mostly have zero, one or two
// events: the rows users see, not the groups (an absent group is not
// counted as covered). The truth of every key comes from a run at mean 1,
// where every byte is sampled.
//
// Within one grouping the rows of a run hold disjoint objects, whose trials
// are independent, and runs are independent: the covered count is a sum of
// independent Bernoulli variables, each of mean at least 0.95 for a sound
// interval, so its variance is at most n*0.95*0.05 over n rows shown. The
// test fails if the coverage is below 0.95 - 6 sigma: falsely with
// probability below 1e-9 per grouping. With the default run count each
// grouping shows more than 17,000 rows, and the bound is at least 0.94.
func TestCoverageRowsShown(t *testing.T) {
	setMeanBytes(t, 1)
	truth := map[string]float64{}
	for i, tab := range shownRun(t, 0) {
		for _, r := range tab.Rows {
			if r.Lo != r.Hi {
				t.Fatalf("mean 1: %s has interval [%g, %g], want exact", r.Key, r.Lo, r.Hi)
			}
			truth[string(shownGroupings[i])+"|"+r.Key] = float64(r.Bytes)
		}
	}
	setMeanBytes(t, 16384)
	runs := 6000
	if testing.Short() {
		runs = 600
	}
	var rows, covered, ones [3]int
	for seed := range runs {
		for i, tab := range shownRun(t, uint64(seed)+1) {
			for _, r := range tab.Rows {
				m, ok := truth[string(shownGroupings[i])+"|"+r.Key]
				if !ok {
					t.Fatalf("run %d: %s row %q has no truth", seed, shownGroupings[i], r.Key)
				}
				rows[i]++
				if r.Samples == 1 {
					ones[i]++
				}
				if r.Lo <= m && m <= r.Hi {
					covered[i]++
				}
			}
		}
	}
	for i, by := range shownGroupings {
		n := float64(rows[i])
		c := float64(covered[i]) / n
		bound := 0.95 - 6*math.Sqrt(0.95*0.05/n)
		t.Logf("by %s: %d rows shown in %d runs (%.0f%% with one event), coverage %.4f (bound %.4f)", by, rows[i], runs, 100*float64(ones[i])/n, c, bound)
		if c < bound {
			t.Errorf("by %s: coverage %.4f of %d rows shown, below %.4f", by, c, rows[i], bound)
		}
	}
}
