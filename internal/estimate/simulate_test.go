package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simWorkload returns a fixed allocation sequence: object sizes from 1 byte
// to 1 MiB (log-uniform), interleaved with a periodic pattern (eleven 8-byte
// objects, one 4096-byte and one 100000-byte object, repeated), the kind of
// pattern fixed-stride sampling gets wrong.
func simWorkload(seed uint64, nrandom, nperiods int) []int64 {
	r := rand.New(rand.NewPCG(seed, 99))
	var sizes []int64
	for i := 0; i < nrandom; i++ {
		sizes = append(sizes, int64(math.Exp(r.Float64()*math.Log(1<<20)))) // 1 .. 1 MiB
	}
	sizes = append(sizes, 1, 1<<20)
	for i := 0; i < nperiods; i++ {
		for j := 0; j < 11; j++ {
			sizes = append(sizes, 8)
		}
		sizes = append(sizes, 4096, 100000)
	}
	return sizes
}

// simEvent samples one object under the per-byte Bernoulli model with an
// exact per-object draw: the offset of the first success is geometric,
// floor(ln U / ln q), and the object is sampled when it is below the size.
// (Trials are independent, so a fresh draw per object is the same model as
// one running stream.) It uses its own generator, not GapSampler.
func simEvent(r *rand.Rand, size int64, lq float64) (offset int64, sampled bool) {
	u := 1 - r.Float64() // (0, 1]
	off := math.Floor(math.Log(u) / lq)
	if off < float64(size) {
		return int64(off), true
	}
	return 0, false
}

type simResult struct {
	weighted, failed float64
	s, u             int64
}

func simRun(r *rand.Rand, sizes []int64, mean int64) simResult {
	lq := math.Log1p(-1 / float64(mean))
	var res simResult
	for _, n := range sizes {
		if off, ok := simEvent(r, n, lq); ok {
			w, _ := WeightedBytes(n, mean)
			res.weighted += w
			res.s++
			res.u += n - off
		}
	}
	res.failed, _ = BytesFromSums(res.s, res.u, mean)
	return res
}

// TestSimulationUnbiasedAndCoverage simulates the sampling model over a
// fixed workload many times and checks:
//   - the weighted and the failed-trials estimates average to the truth
//     within 6 standard errors (false failure about 2e-9 each);
//   - the 95% interval (window "end": each run starts a fresh stream and
//     ends between events) covers the truth in a fraction at least
//     0.95 - 6 binomial sigma (false failure below 1e-9; the interval is
//     conservative, so the fraction may exceed 0.95).
func TestSimulationUnbiasedAndCoverage(t *testing.T) {
	runs := 4000
	if testing.Short() {
		runs = 2000
	}
	sizes := simWorkload(1, 300, 100)
	var truth float64
	for _, n := range sizes {
		truth += float64(n)
	}
	for _, mean := range []int64{102400, 1 << 20} {
		r := rand.New(rand.NewPCG(uint64(mean), 2024))
		var sumW, sumF, sumF2 float64
		covered, coveredBoth, coveredAligned := 0, 0, 0
		var sumS float64
		for i := 0; i < runs; i++ {
			res := simRun(r, sizes, mean)
			sumW += res.weighted
			sumF += res.failed
			sumF2 += res.failed * res.failed
			sumS += float64(res.s)
			for _, c := range []struct {
				w   Window
				cnt *int
			}{{WindowEnd, &covered}, {WindowBoth, &coveredBoth}, {WindowAligned, &coveredAligned}} {
				iv, err := SingleMeanInterval(res.s, res.u, mean, 0.95, c.w)
				if err != nil {
					t.Fatal(err)
				}
				if iv.Lo <= truth && truth <= iv.Hi {
					*c.cnt++
				}
			}
		}
		R := float64(runs)
		// Exact variance of the weighted estimate: sum of n^2 q^n/(1-q^n).
		var varW float64
		lq := math.Log1p(-1 / float64(mean))
		for _, n := range sizes {
			qn := math.Exp(float64(n) * lq)
			varW += float64(n) * float64(n) * qn / -math.Expm1(float64(n)*lq)
		}
		avgW := sumW / R
		if se := math.Sqrt(varW / R); math.Abs(avgW-truth) > 6*se {
			t.Errorf("mean %d: weighted estimate averages %.6g, truth %.6g (6 SE = %.3g)", mean, avgW, truth, 6*se)
		}
		avgF := sumF / R
		sdF := math.Sqrt((sumF2/R - avgF*avgF) * R / (R - 1))
		if se := sdF / math.Sqrt(R); math.Abs(avgF-truth) > 6*se {
			t.Errorf("mean %d: failed-trials estimate averages %.6g, truth %.6g (6 SE = %.3g)", mean, avgF, truth, 6*se)
		}
		frac := float64(covered) / R
		sigma := math.Sqrt(0.95 * 0.05 / R)
		t.Logf("mean %d: %d runs, %.1f events per run; coverage of the 95%% interval: window end %.4f, both %.4f, aligned %.4f (lower limit %.4f)",
			mean, runs, sumS/R, frac, float64(coveredBoth)/R, float64(coveredAligned)/R, 0.95-6*sigma)
		if frac < 0.95-6*sigma {
			t.Errorf("mean %d: coverage %.4f below 0.95 - 6 sigma = %.4f", mean, frac, 0.95-6*sigma)
		}
		if fb := float64(coveredBoth) / R; fb < 0.95-6*sigma {
			t.Errorf("mean %d: window both coverage %.4f below %.4f", mean, fb, 0.95-6*sigma)
		}
	}
}

// TestSimulationBytewise runs the literal model, one Bernoulli trial per
// byte (success when a uniform integer below mean is 0), with the trials of
// an object stopping at its first success, and checks the same unbiasedness
// (6 standard errors) and coverage (0.95 - 6 sigma) on a small workload.
func TestSimulationBytewise(t *testing.T) {
	const mean = 64
	runs, nrandom, nperiods := 3000, 400, 50
	if testing.Short() {
		runs, nrandom, nperiods = 2000, 150, 20
	}
	r := rand.New(rand.NewPCG(5, 6))
	var sizes []int64
	for i := 0; i < nrandom; i++ {
		sizes = append(sizes, 1+int64(r.IntN(200)))
	}
	for i := 0; i < nperiods; i++ {
		sizes = append(sizes, 1, 1, 1, 8, 8, 300) // periodic
	}
	var truth float64
	for _, n := range sizes {
		truth += float64(n)
	}
	var sumW, sumW2, sumF, sumF2 float64
	covered := 0
	for i := 0; i < runs; i++ {
		var tl EventSums
		for _, n := range sizes {
			for off := int64(0); off < n; off++ {
				if r.Uint64N(mean) == 0 {
					if err := tl.Add(n, off, mean); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
		}
		w, f := tl.WeightedBytes(), tl.BytesFromSums()
		sumW += w
		sumW2 += w * w
		sumF += f
		sumF2 += f * f
		iv, err := GroupInterval(append(tl.ByMean(), MeanSums{MeanBytes: mean}), 0.95, WindowEnd)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lo <= truth && truth <= iv.Hi {
			covered++
		}
	}
	R := float64(runs)
	for _, c := range []struct {
		name      string
		sum, sum2 float64
	}{{"weighted", sumW, sumW2}, {"failed-trials", sumF, sumF2}} {
		avg := c.sum / R
		se := math.Sqrt((c.sum2/R-avg*avg)*R/(R-1)) / math.Sqrt(R)
		if math.Abs(avg-truth) > 6*se {
			t.Errorf("%s estimate averages %.6g, truth %.6g (6 SE = %.3g)", c.name, avg, truth, 6*se)
		}
	}
	frac := float64(covered) / R
	sigma := math.Sqrt(0.95 * 0.05 / R)
	t.Logf("byte-by-byte, mean %d: coverage %.4f over %d runs (lower limit %.4f)", mean, frac, runs, 0.95-6*sigma)
	if frac < 0.95-6*sigma {
		t.Errorf("coverage %.4f below %.4f", frac, 0.95-6*sigma)
	}
}

// TestSimulationMeanChange changes the mean halfway through the workload:
// the weighted sum stays unbiased (6 SE) and GroupInterval's
// interval covers at least 0.95 - 6 sigma of the runs.
func TestSimulationMeanChange(t *testing.T) {
	runs := 2000
	sizes := simWorkload(3, 200, 60)
	half := len(sizes) / 2
	var truth float64
	for _, n := range sizes {
		truth += float64(n)
	}
	means := []int64{102400, 16384}
	r := rand.New(rand.NewPCG(11, 12))
	var sumW, sumW2 float64
	covered := 0
	for i := 0; i < runs; i++ {
		var tl EventSums
		for j, n := range sizes {
			mean := means[0]
			if j >= half {
				mean = means[1]
			}
			if off, ok := simEvent(r, n, math.Log1p(-1/float64(mean))); ok {
				if err := tl.Add(n, off, mean); err != nil {
					t.Fatal(err)
				}
			}
		}
		st := append(tl.ByMean(), MeanSums{MeanBytes: means[0]}, MeanSums{MeanBytes: means[1]})
		iv, err := GroupInterval(st, 0.95, WindowEnd)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lo <= truth && truth <= iv.Hi {
			covered++
		}
		w := tl.WeightedBytes()
		sumW += w
		sumW2 += w * w
	}
	R := float64(runs)
	avg := sumW / R
	se := math.Sqrt((sumW2/R-avg*avg)*R/(R-1)) / math.Sqrt(R)
	if math.Abs(avg-truth) > 6*se {
		t.Errorf("weighted estimate across a mean change averages %.6g, truth %.6g (6 SE = %.3g)", avg, truth, 6*se)
	}
	frac := float64(covered) / R
	sigma := math.Sqrt(0.95 * 0.05 / R)
	t.Logf("mean change %v: coverage %.4f over %d runs (lower limit %.4f)", means, frac, runs, 0.95-6*sigma)
	if frac < 0.95-6*sigma {
		t.Errorf("coverage %.4f below %.4f", frac, 0.95-6*sigma)
	}
}

// TestGroupIntervalCoverageStrata simulates the per-byte model for groups
// whose bytes fall under several means, including means under which the
// group often draws no event at all (their stratum then has Samples = 0),
// and checks that each side of GroupInterval's 95% interval misses in at
// most 2.5% of the runs: the count of misses on one side is
// Binomial(runs, m) with m <= 0.025 for a sound interval, and the limit
// 0.025 + 6*sqrt(0.025*0.975/runs) fails falsely with probability below
// 1e-9 per side and scenario (below 1e-8 for the test).
func TestGroupIntervalCoverageStrata(t *testing.T) {
	type part struct {
		mean, size, count int64
	}
	for _, c := range []struct {
		name  string
		parts []part
	}{
		// Events under the small mean; the large one (3 means of bytes)
		// draws none in about 5% of the runs.
		{"allowance", []part{{4096, 48, 8000}, {102400, 4096, 75}}},
		// The large mean's bytes are tiny: almost never an event.
		{"rare under the large mean", []part{{4096, 48, 8000}, {102400, 48, 200}}},
		{"balanced", []part{{4096, 64, 2000}, {16384, 64, 8000}}},
		{"four means", []part{{1024, 24, 1000}, {4096, 24, 3000}, {102400, 24, 16000}, {1 << 20, 512, 100}}},
		{"one mean in two strata", []part{{8192, 40, 10000}, {8192, 1000, 100}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const runs = 2000
			r := rand.New(rand.NewPCG(21, uint64(len(c.parts))*7+uint64(c.parts[0].count)))
			var truth float64
			for _, p := range c.parts {
				truth += float64(p.size * p.count)
			}
			lowMiss, highMiss := 0, 0
			var width float64
			for range runs {
				st := make([]MeanSums, len(c.parts))
				for i, p := range c.parts {
					st[i].MeanBytes = p.mean
					lq := math.Log1p(-1 / float64(p.mean))
					for range p.count {
						if off, ok := simEvent(r, p.size, lq); ok {
							st[i].Samples++
							st[i].Tail += p.size - off
						}
					}
				}
				iv, err := GroupInterval(st, 0.95, WindowEnd)
				if err != nil {
					t.Fatal(err)
				}
				if truth < iv.Lo {
					lowMiss++
				}
				if truth > iv.Hi {
					highMiss++
				}
				width += (iv.Hi - iv.Lo) / truth
			}
			limit := 0.025 + 6*math.Sqrt(0.025*0.975/runs)
			lo, hi := float64(lowMiss)/runs, float64(highMiss)/runs
			t.Logf("coverage %.4f (below %.4f, above %.4f; limit %.4f per side), mean width/truth %.3f", 1-lo-hi, lo, hi, limit, width/runs)
			if lo > limit || hi > limit {
				t.Errorf("misses below %.4f, above %.4f; limit %.4f per side", lo, hi, limit)
			}
		})
	}
}

// TestSampledGroupIntervalCoverage simulates groups with few or no expected
// events (truth from a hundredth of the mean to a few means) and checks
// the 95% coverage of SampledGroupInterval over the runs in which the group
// has at least one event, the rows a table shows. The covered count is
// Binomial(shown, c), c >= 0.95 for a sound interval; 0.95 - 6 sigma fails
// falsely with probability below 1e-9 per case. It also logs the coverage
// of the unconditional GroupInterval over the same rows, which is below
// nominal for the smallest groups.
func TestSampledGroupIntervalCoverage(t *testing.T) {
	const mean = 102400
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name  string
		size  int64
		count int
	}{
		{"1 KiB in 16-byte objects", 16, 64},
		{"32 KiB in 64-byte objects", 64, 512},
		{"100 KiB in 512-byte objects", 512, 200},
		{"400 KiB in 4 KiB objects", 4096, 100},
	} {
		sizes := make([]int64, tc.count)
		for i := range sizes {
			sizes[i] = tc.size
		}
		truth := float64(tc.size) * float64(tc.count)
		shown, covered, coveredUncond := 0, 0, 0
		runs := 20000
		if testing.Short() {
			runs = 4000
		}
		for range runs {
			res := simRun(r, sizes, mean)
			if res.s == 0 {
				continue
			}
			shown++
			st := []MeanSums{{Samples: res.s, Tail: res.u, MeanBytes: mean}}
			in, err := SampledGroupInterval(st, 0.95, WindowEnd)
			if err != nil {
				t.Fatal(err)
			}
			// The table also floors the lower bound at the sampled objects' bytes.
			lo := max(in.Lo, float64(res.s*tc.size))
			if lo <= truth && truth <= in.Hi {
				covered++
			}
			un, _ := GroupInterval(st, 0.95, WindowEnd)
			if un.Lo <= truth && truth <= un.Hi {
				coveredUncond++
			}
		}
		c := float64(covered) / float64(shown)
		t.Logf("%s: %d of %d runs shown; coverage %.3f (unconditional interval: %.3f)", tc.name, shown, runs, c, float64(coveredUncond)/float64(shown))
		if bound := 0.95 - 6*math.Sqrt(0.95*0.05/float64(shown)); c < bound {
			t.Errorf("%s: coverage %.3f of %d rows shown, below %.3f", tc.name, c, shown, bound)
		}
	}
}
