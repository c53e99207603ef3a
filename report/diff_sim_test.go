package report_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"github.com/arenaprof/arenaprof/report"
)

var diffSimRuns = flag.Int("diffsim", 0, "pairs of profiles per case of TestDiffSim (0: 400, or 100 with -short)")

// chernoffMin returns the largest k such that, for X ~ Binomial(n, p), the
// Chernoff bound on P(X <= k) is below alpha (-1 if there is none).
func chernoffMin(n int, p, alpha float64) int {
	for k := int(math.Floor(float64(n) * p)); k >= 0; k-- {
		q := float64(k) / float64(n)
		kl := (1 - q) * math.Log((1-q)/(1-p))
		if q > 0 {
			kl += q * math.Log(q/p)
		}
		if math.Exp(-float64(n)*kl) < alpha {
			return k
		}
	}
	return -1
}

// heapClass is one object size of a simulated Go heap function: n objects
// of size bytes.
type heapClass struct {
	fn   string
	size int64
	n    int
}

// simHeapProfile returns a Go heap profile as runtime/pprof writes it for
// the given allocations at MemProfileRate rate: each object is sampled
// with probability 1-exp(-size/rate), one record per (function, size),
// values scaled by 1/(1-exp(-size/rate)) and truncated (scaleHeapSample).
// That is the sampler of Go 1.23, which the profile names.
func simHeapProfile(rng *rand.Rand, rate int64, classes []heapClass) *profile.Profile {
	p := &profile.Profile{
		Comments: []string{pprofmt.GoVersionComment("go1.23")},
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     rate,
	}
	locs := map[string]*profile.Location{}
	for _, c := range classes {
		prob := -math.Expm1(-float64(c.size) / float64(rate))
		k := 0 // Binomial(c.n, prob), drawn by geometric gaps between successes
		if prob >= 1 {
			k = c.n
		} else {
			for i := 0; ; k++ {
				i += 1 + int(math.Floor(math.Log(1-rng.Float64())/math.Log1p(-prob)))
				if i > c.n {
					break
				}
			}
		}
		if k == 0 {
			continue
		}
		loc := locs[c.fn]
		if loc == nil {
			f := &profile.Function{ID: uint64(len(locs) + 1), Name: c.fn}
			loc = &profile.Location{ID: f.ID, Line: []profile.Line{{Function: f}}}
			locs[c.fn] = loc
			p.Function = append(p.Function, f)
			p.Location = append(p.Location, loc)
		}
		scale := 1 / prob
		objs, bytes := int64(float64(k)*scale), int64(float64(int64(k)*c.size)*scale)
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{objs, bytes, 0, 0},
			NumLabel: map[string][]int64{"bytes": {c.size}},
		})
	}
	return p
}

// compilerLike returns a mix of sizes shaped like the Go compiler's heap
// (most objects small, a few large ones), scaled by f, under one
// function.
func compilerLike(f float64) []heapClass {
	var cs []heapClass
	for i, size := range []int64{16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096, 8192, 32768, 262144} {
		n := int(f * 4e6 / float64(size) / float64(i+1))
		cs = append(cs, heapClass{fn: "pkg.alloc", size: size, n: n})
	}
	return cs
}

// diffSimCase is one scenario of TestDiffSim: two profiles of known truth
// and the true ratio of the row checked.
type diffSimCase struct {
	name  string
	by    string
	key   string  // the row checked
	ratio float64 // its true ratio NEW/BASE
	// minPower is the flag rate the method reaches (measured); the test
	// fails if the observed rate is improbably low for it.
	minPower float64
	make     func(t *testing.T, rng *rand.Rand, seed uint64) (base, next *profile.Profile)
}

// TestDiffSim measures, by simulation with known truth, how often Diff
// flags a row at C = 0.95: the false alarm rate where the true ratio is 1
// (at most 5%), and the power where it is not. Arena cases run real arenas
// (seeded); Go heap cases draw runtime-format profiles from the runtime's
// sampling model. Every case uses fixed seeds, so the run is
// deterministic.
//
// Failure probability: for a null case the flags are independent, each
// with probability at most 0.05 if the method holds its level, and the
// test fails when their number reaches the Chernoff 5e-8 quantile of
// Binomial(runs, 0.05); for a power case it fails when the number falls to
// the Chernoff 5e-8 lower quantile of Binomial(runs, minPower). With at
// most 20 cases a false failure has probability below 1e-6.
func TestDiffSim(t *testing.T) {
	runs := 400
	if testing.Short() {
		runs = 100
	}
	if *diffSimRuns > 0 {
		runs = *diffSimRuns
	}
	byType := "type"
	byFunc := "func"
	arenaPair := func(meanB, meanN int64, b, n [3]int) func(*testing.T, *rand.Rand, uint64) (*profile.Profile, *profile.Profile) {
		return func(t *testing.T, _ *rand.Rand, seed uint64) (*profile.Profile, *profile.Profile) {
			return diffProfile(t, meanB, 2*seed+1, b[0], b[1], b[2]), diffProfile(t, meanN, 2*seed+2, n[0], n[1], n[2])
		}
	}
	heapPair := func(rate int64, b, n []heapClass) func(*testing.T, *rand.Rand, uint64) (*profile.Profile, *profile.Profile) {
		return func(_ *testing.T, rng *rand.Rand, _ uint64) (*profile.Profile, *profile.Profile) {
			return roundTrip(t, simHeapProfile(rng, rate, b)), roundTrip(t, simHeapProfile(rng, rate, n))
		}
	}
	sized := func(fn string, size int64, n int) []heapClass { return []heapClass{{fn: fn, size: size, n: n}} }
	small := func(fn string, n int) []heapClass { return sized(fn, 64, n) }
	mixed := []heapClass{{fn: "pkg.mix", size: 64, n: 2000000}, {fn: "pkg.mix", size: 4 << 20, n: 20}}
	cases := []diffSimCase{
		// [16]byte at mean 1024: 768 objects draw about 12 events.
		{name: "arena 12 vs 12 events", by: byType, key: "[16]uint8", ratio: 1,
			make: arenaPair(1024, 1024, [3]int{768, 0, 0}, [3]int{768, 0, 0})},
		{name: "arena 12 -> 24 events", by: byType, key: "[16]uint8", ratio: 2, minPower: 0.40,
			make: arenaPair(1024, 1024, [3]int{768, 0, 0}, [3]int{1536, 0, 0})},
		{name: "arena 12 vs 4 events (means 1024, 3000)", by: byType, key: "[16]uint8", ratio: 1,
			make: arenaPair(1024, 3000, [3]int{768, 0, 0}, [3]int{768, 0, 0})},
		// [4096]byte at mean 1024: each object sampled with probability 0.98.
		{name: "arena large objects, 50 vs 50", by: byType, key: "[4096]uint8", ratio: 1,
			make: arenaPair(1024, 1024, [3]int{0, 0, 50}, [3]int{0, 0, 50})},
		// Objects as large as the mean: each sampled with probability 0.63,
		// or 0.39 at twice the mean.
		{name: "arena [4096]byte at mean 4096, 5 vs 5", by: byType, key: "[4096]uint8", ratio: 1,
			make: arenaPair(4096, 4096, [3]int{0, 0, 5}, [3]int{0, 0, 5})},
		{name: "arena [4096]byte at mean 4096, 20 -> 40", by: byType, key: "[4096]uint8", ratio: 2, minPower: 0.75,
			make: arenaPair(4096, 4096, [3]int{0, 0, 20}, [3]int{0, 0, 40})},
		{name: "arena [4096]byte at mean 4096, 300 vs 300", by: byType, key: "[4096]uint8", ratio: 1,
			make: arenaPair(4096, 4096, [3]int{0, 0, 300}, [3]int{0, 0, 300})},
		{name: "arena [4096]byte at mean 8192, 20 vs 20", by: byType, key: "[4096]uint8", ratio: 1,
			make: arenaPair(8192, 8192, [3]int{0, 0, 20}, [3]int{0, 0, 20})},
		// One function allocating three sizes: a row mixing weights.
		{name: "arena mixed sizes by func", by: byFunc, key: "github.com/arenaprof/arenaprof/report_test.diffWorkload", ratio: 1,
			make: arenaPair(1024, 1024, [3]int{1000, 300, 20}, [3]int{1000, 300, 20})},
		{name: "heap 12 vs 12 samples (64 B, rate 4096)", by: byFunc, key: "pkg.f", ratio: 1,
			make: heapPair(4096, small("pkg.f", 770), small("pkg.f", 770))},
		{name: "heap 12 -> 24 samples (64 B, rate 4096)", by: byFunc, key: "pkg.f", ratio: 2, minPower: 0.40,
			make: heapPair(4096, small("pkg.f", 770), small("pkg.f", 1540))},
		{name: "heap 4 KiB at rate 4096, 10 vs 10 objects", by: byFunc, key: "pkg.f", ratio: 1,
			make: heapPair(4096, sized("pkg.f", 4096, 10), sized("pkg.f", 4096, 10))},
		{name: "heap 4 KiB at rate 4096, 20 -> 40 objects", by: byFunc, key: "pkg.f", ratio: 2, minPower: 0.75,
			make: heapPair(4096, sized("pkg.f", 4096, 20), sized("pkg.f", 4096, 40))},
		{name: "heap 4 KiB at rate 4096, 300 vs 300 objects", by: byFunc, key: "pkg.f", ratio: 1,
			make: heapPair(4096, sized("pkg.f", 4096, 300), sized("pkg.f", 4096, 300))},
		{name: "heap 32 KiB at rate 4096, 3 vs 3 objects", by: byFunc, key: "pkg.f", ratio: 1,
			make: heapPair(4096, sized("pkg.f", 32768, 3), sized("pkg.f", 32768, 3))},
		// One function mixing 2M x 64 B with 20 x 4 MiB at the default rate.
		{name: "heap 64 B and 4 MiB mixed, rate 512 KiB", by: byFunc, key: "pkg.mix", ratio: 1,
			make: heapPair(512*1024, mixed, mixed)},
		{name: "heap compiler-like mix, rate 512 KiB", by: byFunc, key: "total", ratio: 1,
			make: heapPair(512*1024, compilerLike(1), compilerLike(1))},
		{name: "heap compiler-like mix, same", by: byFunc, key: "total", ratio: 1,
			make: heapPair(4096, compilerLike(1), compilerLike(1))},
		{name: "heap compiler-like mix, 0.64x", by: byFunc, key: "total", ratio: 0.64, minPower: 0.99,
			make: heapPair(4096, compilerLike(1), compilerLike(0.64))},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-42s %6s %8s %8s %10s\n", "case", "ratio", "flagged", "runs", "rate")
	for ci, c := range cases {
		flagged, events := 0, 0.0
		rng := rand.New(rand.NewPCG(uint64(ci), 42))
		for r := range runs {
			base, next := c.make(t, rng, uint64(1000*ci+r))
			res, err := report.Diff(base, next, report.DiffOptions{By: c.by, Confidence: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			row := res.Total
			if c.key != "total" {
				row = report.DiffRow{}
				for _, x := range res.Rows {
					if x.Key == c.key {
						row = x
					}
				}
			}
			events += float64(row.Base.Samples)
			if row.Significant {
				flagged++
			}
		}
		fmt.Fprintf(&out, "%-42s %6.2f %8d %8d %9.1f%%   (base events %.1f)\n", c.name, c.ratio, flagged, runs, 100*float64(flagged)/float64(runs), events/float64(runs))
		switch {
		case c.ratio == 1 && flagged >= chernoffMax(runs, 0.05, 5e-8):
			t.Errorf("%s: %d false alarms in %d runs at 95%%", c.name, flagged, runs)
		case c.ratio != 1 && flagged <= chernoffMin(runs, c.minPower, 5e-8):
			t.Errorf("%s: flagged %d of %d runs, power %v expected", c.name, flagged, runs, c.minPower)
		}
	}
	t.Log(out.String())
}
