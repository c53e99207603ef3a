package report_test

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/export"
	"github.com/arenaprof/arenaprof/hooks"
	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/testkit/hookstest"
	"github.com/arenaprof/arenaprof/profiler"
	"github.com/arenaprof/arenaprof/report"
)

type prodBig struct{ x [48]byte }
type prodSmall struct{ x [24]byte }
type prodBefore struct{ x [40]byte }
type prodAfter struct{ x [56]byte }

// prodRunsFlag is the number of seeded runs of each production coverage
// test (400 by default; ACCURACY.md quotes 4000).
var prodRunsFlag = flag.Int("prodruns", 400, "seeded runs of each production coverage test")

// prodFloor is the smallest number of covering runs out of runs that a
// sound 95% interval allows: the count is Binomial(runs, c) with
// c >= 0.95, and 0.95 - 6*sqrt(0.95*0.05/runs) (0.885 for 400 runs) is
// undershot with probability below 1e-9 per checked type (below 1e-8 for
// all the checks of this file).
func prodFloor(runs int) float64 {
	return (0.95 - 6*math.Sqrt(0.95*0.05/float64(runs))) * float64(runs)
}

// prodCoverage counts, per type, the runs whose interval holds the truth.
type prodCoverage struct {
	runs    int
	truth   map[string]float64 // true bytes per type key
	covered map[string]int
	rows    map[string]int // runs in which the type had a row
}

func newProdCoverage(truth map[string]float64) *prodCoverage {
	return &prodCoverage{runs: *prodRunsFlag, truth: truth, covered: map[string]int{}, rows: map[string]int{}}
}

// add checks one run's table: a type without a row has no sample, and its
// interval is [0, UnseenHi].
func (c *prodCoverage) add(t *testing.T, tab *report.TableResult) {
	t.Helper()
	for key, truth := range c.truth {
		lo, hi := 0.0, tab.UnseenHi
		for _, row := range tab.Rows {
			if row.Key == key {
				lo, hi = row.Lo, row.Hi
				c.rows[key]++
			}
		}
		if lo <= truth && truth <= hi {
			c.covered[key]++
		}
	}
}

func (c *prodCoverage) check(t *testing.T, what string) {
	t.Helper()
	for _, key := range slices.Sorted(maps.Keys(c.truth)) {
		t.Logf("%s: %s: covered in %d of %d runs (%.1f%%), a row in %d", what, key, c.covered[key], c.runs, 100*float64(c.covered[key])/float64(c.runs), c.rows[key])
		if float64(c.covered[key]) < prodFloor(c.runs) {
			t.Errorf("%s: %s covered in %d of %d runs, below %.0f", what, key, c.covered[key], c.runs, prodFloor(c.runs))
		}
	}
}

func prodTable(t *testing.T, s *profiler.Snapshot, inuse bool) *report.TableResult {
	t.Helper()
	prof, err := export.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.Table(prof, report.TableOptions{Confidence: 0.95, InUse: inuse})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestCoverageMeanChange measures, through real arenas, the coverage of the
// 95% intervals of types allocated around a mean change mid-workload (4096
// bytes, then 256): a type with events under both means, a rare type that
// often has events under one mean only or none at all (then it has no row,
// and the table's UnseenHi bounds it), and types allocated only before or
// only after the change (no events under the other mean).
func TestCoverageMeanChange(t *testing.T) {
	cov := newProdCoverage(map[string]float64{
		"report_test.prodBig":    2200 * 48,
		"report_test.prodSmall":  24 * 24,
		"report_test.prodBefore": 300 * 40,
		"report_test.prodAfter":  30 * 56,
	})
	old := newProdCoverage(cov.truth)
	for r := range cov.runs {
		setMeanBytes(t, 4096)
		p, err := profiler.Start()
		if err != nil {
			t.Fatal(err)
		}
		a := arena.NewArena(arena.WithSeed(uint64(r), 77))
		prodPhase[prodBefore](a, 2000, 100, 20)
		setMeanBytes(t, 256)
		prodPhase[prodAfter](a, 200, 50, 20)
		p.Stop()
		a.Free()
		s := p.Snapshot()
		if fmt.Sprint(s.Means) != "[256 4096]" {
			t.Fatalf("snapshot means %v, want [256 4096]", s.Means)
		}
		cov.add(t, prodTable(t, s, false))
		// The same profile without the means comments: no allowances.
		prof, err := export.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		prof.Comments = slices.DeleteFunc(prof.Comments, func(c string) bool { return strings.Contains(c, "means=") })
		tab, err := report.Table(prof, report.TableOptions{Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		tab.UnseenHi = 0
		old.add(t, tab)
	}
	cov.check(t, "mean change")
	for _, key := range slices.Sorted(maps.Keys(old.truth)) {
		t.Logf("without the means recorded (no allowance, absent rows unbounded): %s covered in %d of %d runs", key, old.covered[key], old.runs)
	}
}

// prodPhase allocates n prodBig objects, a prodSmall every smallEvery of
// them and three T every tEvery.
func prodPhase[T any](a *arena.Arena, n, smallEvery, tEvery int) {
	for i := range n {
		arena.New[prodBig](a)
		if i%smallEvery == 0 {
			arena.New[prodSmall](a)
		}
		if i%tEvery == 0 {
			arena.New[T](a)
			arena.New[T](a)
			arena.New[T](a)
		}
	}
}

// TestCoverageDeltaAcrossChange measures the coverage of the intervals of a
// delta (window "both") whose window spans a mean change: the delta records
// both means, and types with events under one of them only are covered.
func TestCoverageDeltaAcrossChange(t *testing.T) {
	cov := newProdCoverage(map[string]float64{
		"report_test.prodBig":    1100 * 48,
		"report_test.prodSmall":  8 * 24,
		"report_test.prodBefore": 150 * 40,
		"report_test.prodAfter":  30 * 56,
	})
	for r := range cov.runs {
		setMeanBytes(t, 4096)
		p, err := profiler.Start()
		if err != nil {
			t.Fatal(err)
		}
		a := arena.NewArena(arena.WithSeed(uint64(r), 78))
		for range 3000 { // before the window
			arena.New[prodBig](a)
			arena.New[prodSmall](a)
		}
		prev := p.Snapshot()
		prodPhase[prodBefore](a, 1000, 250, 20)
		setMeanBytes(t, 256)
		prodPhase[prodAfter](a, 100, 25, 10)
		cur := p.Snapshot()
		p.Stop()
		a.Free()
		d, err := profiler.Delta(prev, cur)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(d.Means) != "[256 4096]" {
			t.Fatalf("delta means %v, want [256 4096]", d.Means)
		}
		cov.add(t, prodTable(t, d, false))
	}
	cov.check(t, "delta across a change")
}

// TestCoveragePool measures the coverage of the intervals of a workload
// spread over the eight arenas of a seeded Pool, all doing the same work:
// arenas sharing a seed draw distinct streams, so the total of the type is
// covered as for independent arenas.
func TestCoveragePool(t *testing.T) {
	setMeanBytes(t, 4096)
	cov := newProdCoverage(map[string]float64{
		"report_test.prodBig":   8 * 300 * 48,
		"report_test.prodSmall": 8 * 5 * 24,
	})
	for r := range cov.runs {
		p, err := profiler.Start()
		if err != nil {
			t.Fatal(err)
		}
		pool := arena.NewPool(arena.WithSeed(uint64(r), 79))
		as := make([]*arena.Arena, 8)
		for i := range as {
			as[i] = pool.Get(nil)
		}
		for _, a := range as {
			for i := range 300 {
				arena.New[prodBig](a)
				if i%60 == 0 {
					arena.New[prodSmall](a)
				}
			}
		}
		p.Stop()
		for _, a := range as {
			pool.Put(a)
		}
		cov.add(t, prodTable(t, p.Snapshot(), false))
	}
	cov.check(t, "seeded pool")
}

// TestPoolStreamsUncorrelated checks, through events, that the arenas of a
// seeded Pool doing identical work sample different objects. Each of two
// sibling arenas allocates n objects of 48 bytes at mean 4096; an object is
// sampled with probability p = 1-(1-1/4096)^48 in each, so with independent
// streams the number of objects sampled in both is Binomial(n, p^2), of
// mean 2.7 for n = 20000: it exceeds 16 with probability below 1e-7
// (Poisson tail). Identical streams would sample the same 234 objects.
func TestPoolStreamsUncorrelated(t *testing.T) {
	setMeanBytes(t, 4096)
	const n = 20000
	pool := arena.NewPool(arena.WithSeed(5, 6))
	a, b := pool.Get(nil), pool.Get(nil)
	defer pool.Put(a)
	defer pool.Put(b)
	obj := 0
	sampled := map[uint64]map[int]bool{}
	unregister := hooks.Register(hookstest.Func(func(e *hooks.Event) {
		if sampled[e.Arena] == nil {
			sampled[e.Arena] = map[int]bool{}
		}
		sampled[e.Arena][obj] = true
	}))
	defer unregister()
	var ids []uint64
	for _, x := range []*arena.Arena{a, b} {
		before := len(sampled)
		for obj = range n {
			arena.New[prodBig](x)
		}
		if len(sampled) != before+1 {
			t.Fatalf("%d arenas with events, want %d", len(sampled), before+1)
		}
	}
	for id := range sampled {
		ids = append(ids, id)
	}
	sa, sb := sampled[ids[0]], sampled[ids[1]]
	both := 0
	for i := range sa {
		if sb[i] {
			both++
		}
	}
	p := 1 - math.Pow(1-1.0/4096, 48)
	t.Logf("sampled objects: %d and %d; in both: %d (independent streams: %.1f expected)", len(sa), len(sb), both, n*p*p)
	if both > 16 {
		t.Errorf("%d objects sampled in both sibling arenas, %d and %d in each: the streams are correlated", both, len(sa), len(sb))
	}
}

// TestCoverageInuseAtBound measures the coverage of in-use intervals past
// the bucket bound: a profiler bounded to 160 buckets, all taken by filler
// events of other types before the workload, so that every event of the
// workload goes to an overflow bucket (mixed sizes, no size label; the
// bound leaves room for one per type, mean and shard), and two arenas of
// which one is freed: the in-use bytes of each type are those of the live
// arena.
func TestCoverageInuseAtBound(t *testing.T) {
	setMeanBytes(t, 4096)
	cov := newProdCoverage(map[string]float64{
		"report_test.prodBig":    1000 * 48,
		"report_test.prodSmall":  40 * 24,
		"report_test.prodBefore": 500 * 40,
		"report_test.prodAfter":  200 * 56,
	})
	overflowed := 0
	fillerTypes := make([]string, 160)
	for i := range fillerTypes {
		fillerTypes[i] = fmt.Sprintf("filler%d", i)
	}
	for r := range cov.runs {
		p, err := profiler.Start(profiler.WithMaxBuckets(160))
		if err != nil {
			t.Fatal(err)
		}
		filler := hooks.NewArenaID()
		for i := range 160 {
			hooks.Emit(&hooks.Event{TypeName: fillerTypes[i], Size: 8, MeanBytes: 4096, Arena: filler})
		}
		hooks.Release(filler)
		live := arena.NewArena(arena.WithSeed(uint64(r), 80))
		gone := arena.NewArena(arena.WithSeed(uint64(r), 81))
		for _, a := range []*arena.Arena{gone, live} {
			for i := range 1000 {
				arena.New[prodBig](a)
				if i%25 == 0 {
					arena.New[prodSmall](a)
				}
				if i%2 == 0 {
					arena.New[prodBefore](a)
				}
				if i%5 == 0 {
					arena.New[prodAfter](a)
				}
			}
		}
		gone.Free()
		s := p.Snapshot()
		p.Stop()
		if s.Stats.Buckets == 160 && s.Stats.OverflowEvents > 0 && s.Stats.TypelessEvents == 0 {
			overflowed++
		}
		cov.add(t, prodTable(t, s, true))
		live.Free()
	}
	if overflowed < cov.runs {
		t.Errorf("only %d of %d runs had the workload in overflow buckets (and none in a typeless bucket)", overflowed, cov.runs)
	}
	cov.check(t, "in-use at the bucket bound")
}

// TestMeanChangeUnbiased checks, through a real arena, that a mean change
// keeps the estimate unbiased: the slow path that picks the change up may
// have been entered because the object holds the old stream's next
// success, which must still be sampled. An arena allocates 300 objects of
// 48 bytes at mean 4096, then 3000 at mean 1 (every object sampled from
// the switch on); the weighted estimate of the total must average the
// truth within 6 standard errors over 2000 runs (false failure about
// 2e-9). Discarding that success biased it by about -4096 bytes, 20 SE.
func TestMeanChangeUnbiased(t *testing.T) {
	const runs = 2000
	var est, sum, sum2 float64
	unregister := hooks.Register(hookstest.Func(func(e *hooks.Event) {
		w, _ := estimate.WeightedBytes(e.Size, e.MeanBytes)
		est += w
	}))
	defer unregister()
	const truth = (300 + 3000) * 48
	for r := range runs {
		setMeanBytes(t, 4096)
		a := arena.NewArena(arena.WithSeed(uint64(r), 82))
		est = 0
		for range 300 {
			arena.New[prodBig](a)
		}
		setMeanBytes(t, 1)
		for range 3000 {
			arena.New[prodBig](a)
		}
		a.Free()
		sum += est
		sum2 += est * est
	}
	avg := sum / runs
	se := math.Sqrt((sum2/runs - avg*avg) / (runs - 1))
	t.Logf("average estimate %.0f, truth %d (%.1f SE)", avg, truth, (avg-truth)/se)
	if math.Abs(avg-truth) > 6*se {
		t.Errorf("average estimate %.0f, truth %d: %.1f standard errors off", avg, truth, (avg-truth)/se)
	}
}
