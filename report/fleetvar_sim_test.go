package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/arenaprof/arenaprof/internal/estimate"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// fleetVarCase is a scenario of TestFleetVarSim: one stack allocating
// objects of several sizes under one mean, in uploads (pods or
// intervals) whose per-size samples the server merges.
type fleetVarCase struct {
	name    string
	mean    int64
	sizes   []int64 // object sizes
	objects []int   // objects of each size per upload, on the base side
	uploads int     // uploads per side
	ratio   float64 // new/base: the new side allocates ratio times the objects
}

// logSizes returns k sizes from lo to hi bytes, log-spaced, rounded up to
// multiples of 8, and objects per size so that each size allocates about
// bytes.
func logSizes(k int, lo, hi float64, bytes float64) ([]int64, []int) {
	sizes := make([]int64, k)
	objs := make([]int, k)
	for i := range k {
		s := math.Exp(math.Log(lo) + float64(i)/float64(k-1)*(math.Log(hi)-math.Log(lo)))
		sizes[i] = (int64(s) + 7) &^ 7
		objs[i] = max(1, int(bytes/float64(sizes[i])))
	}
	return sizes, objs
}

// fleetVarSide is one side of a simulated diff read three ways: from the
// files (one sample per size), from Pyroscope with the variance sums, and
// from Pyroscope without them (addMixed).
type fleetVarSide struct {
	file, fleet, mixed ratioSums
	events             int64
}

// simulate draws one side: each object of size S is sampled with
// p = 1-(1-1/m)^S, independently (binomial counts per size and upload).
func (c fleetVarCase) simulate(rng *rand.Rand, factor float64) (fleetVarSide, error) {
	var out fleetVarSide
	var b, v, wb int64
	for range c.uploads {
		for i, size := range c.sizes {
			w, err := estimate.WeightedBytes(size, c.mean)
			if err != nil {
				return out, err
			}
			n := math.Round(float64(c.objects[i]) * factor)
			k := int64(distuv.Binomial{N: n, P: float64(size) / w, Src: rng}.Rand())
			if k == 0 {
				continue
			}
			out.file.add(float64(k), w, float64(size))
			b += int64(math.Round(float64(k) * w)) // alloc_space, as the exporter rounds it
			sv, swb := pprofmt.VarianceSums(k, size, c.mean)
			v += sv
			wb += swb
			out.events += k
		}
	}
	m := float64(c.mean)
	bound, ok := pprofmt.WeightBound(wb, c.mean)
	if !ok {
		return out, fmt.Errorf("weight bound sum %d saturated", wb)
	}
	out.fleet.addKnown(float64(out.events), m, float64(b), float64(v)*m, bound)
	out.mixed.addMixed(float64(out.events), m, float64(b))
	// diffFill's allowance: an event at the mean in force.
	for _, s := range []*ratioSums{&out.file, &out.fleet, &out.mixed} {
		s.wmax = max(s.wmax, m)
	}
	return out, nil
}

// TestFleetVarSim checks the coverage of the ratio intervals a Pyroscope
// read gets from the variance sums (alloc_var, alloc_wbound) of stacks
// that mix object sizes, against the interval of the same events read
// from files (one sample per size) and addMixed's (uploads without the
// sums). Each case draws runs diffs at confidence 0.95 and counts those
// whose fleet interval holds the true ratio; it fails when that count k
// has P(Binomial(runs, 0.95) <= k) < 5e-8, which an interval of nominal
// coverage does with probability below 5e-8: over the cases (at most 12, 6e-7 in all)
// a false failure has probability below 1e-6. The means it logs are the
// table of ACCURACY.md ("Fleet diff"):
//
//	go test -run TestFleetVarSim -v ./report
func TestFleetVarSim(t *testing.T) {
	runs := 4000
	if testing.Short() {
		runs = 1000
	}
	wide, wideObjs := logSizes(16, 32, 30000, 2<<20)
	near, nearObjs := logSizes(16, 512, 16384, 64<<10)
	few, fewObjs := logSizes(16, 32, 30000, 128<<10)
	tiny, tinyObjs := logSizes(16, 32, 30000, 12<<10)  // about 3 events a side: the allowance decides
	above, aboveObjs := logSizes(12, 64, 1<<20, 1<<20) // up to 16 times the mean: the large ones sampled with near certainty
	cases := []fleetVarCase{
		{"32 B..30 KB at mean 64 KiB, ~500 events, ratio 1", 64 << 10, wide, wideObjs, 1, 1},
		{"32 B..30 KB at mean 64 KiB, ~500 events, ratio 2", 64 << 10, wide, wideObjs, 1, 2},
		{"32 B..30 KB at mean 64 KiB, 4 uploads, ratio 2", 64 << 10, wide, divObjs(wideObjs, 4), 4, 2},
		{"32 B..30 KB at mean 64 KiB, ~30 events, ratio 1", 64 << 10, few, fewObjs, 1, 1},
		{"32 B..30 KB at mean 64 KiB, ~30 events, ratio 2", 64 << 10, few, fewObjs, 1, 2},
		{"512 B..16 KiB at mean 4 KiB, ~250 events, ratio 1", 4096, near, nearObjs, 1, 1},
		{"512 B..16 KiB at mean 4 KiB, ~250 events, ratio 2", 4096, near, nearObjs, 1, 2},
		{"512 B..16 KiB at mean 4 KiB, 4 uploads, ratio 1", 4096, near, divObjs(nearObjs, 4), 4, 1},
		{"32 B..30 KB at mean 64 KiB, ~3 events, ratio 1", 64 << 10, tiny, tinyObjs, 1, 1},
		{"32 B..30 KB at mean 64 KiB, ~3 events, ratio 2", 64 << 10, tiny, tinyObjs, 1, 2},
		{"64 B..1 MiB at mean 64 KiB, ratio 1", 64 << 10, above, aboveObjs, 1, 1},
		{"64 B..1 MiB at mean 64 KiB, ratio 2", 64 << 10, above, aboveObjs, 1, 2},
	}
	t.Logf("| case | fleet coverage | files coverage | addMixed coverage | hi/lo fleet | hi/lo files | hi/lo addMixed |")
	for ci, c := range cases {
		rng := rand.New(rand.NewPCG(uint64(ci)+1, 38))
		var cover [3]int
		var width [3]float64
		n := 0
		for range runs {
			base, err := c.simulate(rng, 1)
			if err != nil {
				t.Fatal(err)
			}
			next, err := c.simulate(rng, c.ratio)
			if err != nil {
				t.Fatal(err)
			}
			if base.events == 0 || next.events == 0 {
				continue // Diff gives no ratio
			}
			n++
			for i, pair := range [][2]ratioSums{{base.fleet, next.fleet}, {base.file, next.file}, {base.mixed, next.mixed}} {
				lo, hi, err := ratioInterval(pair[0], pair[0], pair[1], pair[1], 0.95)
				if err != nil {
					t.Fatal(err)
				}
				if lo <= c.ratio && c.ratio <= hi {
					cover[i]++
				}
				width[i] += math.Log(hi / lo)
			}
		}
		t.Logf("| %s | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f |", c.name,
			float64(cover[0])/float64(n), float64(cover[1])/float64(n), float64(cover[2])/float64(n),
			math.Exp(width[0]/float64(n)), math.Exp(width[1]/float64(n)), math.Exp(width[2]/float64(n)))
		if p := (distuv.Binomial{N: float64(n), P: 0.95}).CDF(float64(cover[0])); p < 5e-8 {
			t.Errorf("%s: fleet interval covered %d of %d (P = %.2g under nominal coverage)", c.name, cover[0], n, p)
		}
	}
}

// divObjs divides object counts among k uploads.
func divObjs(objs []int, k int) []int {
	out := make([]int, len(objs))
	for i, o := range objs {
		out[i] = max(1, o/k)
	}
	return out
}
