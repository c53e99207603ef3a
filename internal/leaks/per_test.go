package leaks

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPerExact: exact bytes that are a line in the count give its slope
// with no width, however the count stalls and jumps; a site that does not
// move with it gives 0.
func TestPerExact(t *testing.T) {
	times := seconds(40)
	count := make([]float64, 40)
	for i := range count {
		switch {
		case i < 10:
			count[i] = float64(i)
		case i < 25:
			count[i] = 9 // a stall
		case i == 25:
			count[i] = 30 // a jump
		default:
			count[i] = 30 + float64(i-25)/2
		}
		count[i] = math.Floor(count[i])
	}
	e, err := PerNew(times, count, 2, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		y     func(x float64) float64
		slope float64
	}{
		{"holds 64KiB each", func(x float64) float64 { return 4096 + 65536*x }, 65536},
		{"flat", func(float64) float64 { return 1 << 20 }, 0},
		{"gives back 100 each", func(x float64) float64 { return 1e6 - 100*x }, -100},
	} {
		y, v := make([]float64, len(count)), make([]float64, len(count))
		for i, x := range count {
			y[i] = tc.y(x)
		}
		f, err := e.Fit(y, v)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.Rate-tc.slope) > 1e-6*math.Max(1, math.Abs(tc.slope)) || f.SE > 1e-6*math.Max(1, math.Abs(tc.slope)) {
			t.Errorf("%s: %+v, want slope %v and no width", tc.name, f, tc.slope)
		}
	}
}

// TestPerRefused: counts that fall, that take one value over the fit, or
// that are no counts, are refused, saying which.
func TestPerRefused(t *testing.T) {
	up := func(n int) []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = float64(i)
		}
		return c
	}
	fall := up(12)
	fall[7] = 3
	stall := up(12)
	for i := 6; i < 12; i++ {
		stall[i] = 5 // one value from the fit's start (snapshot 6) on
	}
	nan := up(12)
	nan[4] = math.NaN()
	for _, tc := range []struct {
		name   string
		times  []float64
		count  []float64
		groups int
		conf   float64
		err    string
		falls  bool
	}{
		{"falls", seconds(12), fall, 1, 0.95, "falls from 6 to 3 at snapshot 7", true},
		{"stalls over the fit", seconds(12), stall, 1, 0.95, "is 5 at every snapshot of the fit", false},
		{"NaN", seconds(12), nan, 1, 0.95, "count NaN at snapshot 4", false},
		{"negative", seconds(12), append([]float64{-1}, up(11)...), 1, 0.95, "count -1 at snapshot 0", false},
		{"lengths", seconds(12), up(11), 1, 0.95, "11 counts for 12 snapshots", false},
		{"few", seconds(7), up(7), 1, 0.95, "7 snapshots; at least 8", false},
		{"no group", seconds(12), up(12), 0, 0.95, "no group", false},
		{"confidence", seconds(12), up(12), 1, 1, "confidence 1", false},
	} {
		_, err := PerNew(tc.times, tc.count, tc.groups, tc.conf)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
			continue
		}
		var ce *CountError
		if errors.As(err, &ce) && ce.Falls != tc.falls {
			t.Errorf("%s: Falls %v", tc.name, ce.Falls)
		}
	}
}

// leakedCounts returns the leaked goroutine count at the snapshots 1, 2,
// ..., n seconds: goroutines leak one by one as a Poisson process of 2
// per second during the first 20 s of each 50 s, none in the rest (the
// count stalls and climbs), and the seconds each was leaked at.
func leakedCounts(r *rand.Rand, n int) (count []float64, born []float64) {
	count = make([]float64, n)
	for sec := range n {
		if sec%50 < 20 {
			for range poisson(r, 2) {
				born = append(born, float64(sec)+r.Float64())
			}
		}
		count[sec] = float64(len(born))
	}
	return count, born
}

// holding returns the in-use estimates and sampling variances at the
// snapshots of a site where each leaked goroutine (born: when it leaked)
// holds one object of size bytes, sampled at rate R.
func holding(r *rand.Rand, born []float64, n int, size, rate int64) (y, v []float64) {
	p := -math.Expm1(-float64(size) / float64(rate))
	w := float64(size) / p
	y, v = make([]float64, n), make([]float64, n)
	var k int
	j := 0
	for sec := range n {
		for ; j < len(born) && born[j] < float64(sec+1); j++ {
			if r.Float64() < p {
				k++
			}
		}
		y[sec] = float64(k) * w
		v[sec] = y[sec] * Dispersion(size, rate)
	}
	return y, v
}

// TestPerTruth: each leaked goroutine holds 64 KiB at one site (sampled
// at the default MemProfileRate: 12% of them) while goroutines leak in
// bursts (2 per second for 20 s of every 50 s), among the controls of
// sim_test.go (a filled cache, a sawtooth, a steady state, churn), 10
// minutes of 1 s snapshots, 300 runs. The holding site's family-wise
// interval (C = 0.95 over 5 groups, 0.99 each) covers 65,536 bytes per
// goroutine in at least 285 runs: misses are at most Binomial(300,
// 0.01), and 16 or more has probability 9.5e-8. It is reported (lower
// bound above 0) in at least 270: the slope is about 5 standard errors
// above 0 and the half-width about 3 (median 38.7 KB), so a miss has
// probability about 0.02, and 31 or more of 300 at 0.03 has probability
// 3.5e-9. A control is reported with probability at most 0.025 per run:
// 25 or more of 300 has probability 2.2e-7. (Measured: 298 covered, 113
// without the sampling term; 300 reported; one control reported once.)
func TestPerTruth(t *testing.T) {
	const n, runs, truth = 600, 300, 64 << 10
	r := rand.New(rand.NewPCG(46, 7))
	ctl := controls(n)
	var covered, reported, scatterOnly int
	control := map[string]int{}
	var widths []float64
	for range runs {
		count, born := leakedCounts(r, n)
		yc, vc := simulate(r, ctl, n, defaultRate)
		yh, vh := holding(r, born, n, truth, defaultRate)
		e, err := PerNew(seconds(n), count, 1+len(ctl), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		f, err := e.Fit(yh, vh)
		if err != nil {
			t.Fatal(err)
		}
		if f.Lo <= truth && truth <= f.Hi {
			covered++
		}
		if f.Lo > 0 {
			reported++
		}
		if q := (f.Hi - f.Rate) / f.SE; math.Abs(f.Rate-truth) <= q*math.Sqrt(f.Scatter) {
			scatterOnly++
		}
		widths = append(widths, (f.Hi-f.Lo)/2)
		for g := range ctl {
			cf, err := e.Fit(yc[g], vc[g])
			if err != nil {
				t.Fatal(err)
			}
			if cf.Lo > 0 {
				control[ctl[g].name]++
			}
		}
	}
	slices.Sort(widths)
	t.Logf("64 KiB per goroutine: covered %d/%d (%d/%d without the sampling term), reported %d/%d, median half-width %.0f B; controls reported: %v",
		covered, runs, scatterOnly, runs, reported, runs, widths[runs/2], control)
	if covered < runs-15 {
		t.Errorf("the interval covered 65536 in %d of %d runs, want at least %d", covered, runs, runs-15)
	}
	if reported < runs-30 {
		t.Errorf("the holding site was reported in %d of %d runs, want at least %d", reported, runs, runs-30)
	}
	for name, k := range control {
		if k > 24 {
			t.Errorf("control %s reported in %d of %d runs", name, k, runs)
		}
	}
}

// FuzzPer: whatever the times, counts, values and variances, PerNew and
// Fit return an error or finite bounds around the slope; a refused count
// names its snapshot.
func FuzzPer(f *testing.F) {
	f.Add(1.0, uint64(0x0102030405060708), 3.0, 65536.0, 5.0, 0.95)
	f.Add(0.5, uint64(0), 0.0, -5.0, 1e300, 0.5)
	f.Add(1e-300, ^uint64(0), 1e300, 1e300, 0.0, 0.999999)
	f.Fuzz(func(t *testing.T, step float64, steps uint64, base, per, variance, conf float64) {
		times := make([]float64, 12)
		count, y, v := make([]float64, 12), make([]float64, 12), make([]float64, 12)
		c := 0.0
		for i := range times {
			times[i] = float64(i+1) * step
			// each snapshot's count moves by a nibble of steps, 15
			// read as a fall of 3
			if d := float64((steps >> (4 * i)) & 15); d == 15 {
				c -= 3
			} else {
				c += d
			}
			count[i] = c
			y[i] = base + per*c
			v[i] = variance * float64(i%4)
		}
		e, err := PerNew(times, count, 3, conf)
		if err != nil {
			var ce *CountError
			if errors.As(err, &ce) && (ce.At < 0 || ce.At >= len(count)) {
				t.Errorf("refused at snapshot %d of %d", ce.At, len(count))
			}
			return
		}
		fit, err := e.Fit(y, v)
		if err != nil {
			return
		}
		if !(fit.Lo <= fit.Rate && fit.Rate <= fit.Hi) && !math.IsNaN(fit.Rate) {
			t.Errorf("bounds %v, %v around %v", fit.Lo, fit.Hi, fit.Rate)
		}
	})
}

// TestPerTimeLeak measures what the join cannot tell: a site leaking 50
// KiB/s on its own, whatever the goroutines do, while they leak in
// bursts as in TestPerTruth, is reported as tracking the count too (the
// count grows over the same half; docs/leaks.md, "What tracks means").
// Measured: 300 of 300 runs. The partial fit (PartialNew,
// TestPartialTruth) tells them apart where the count departs from a
// line in the time; these 50 s cycles leave too little (cannot tell in
// 236 of 300 runs, the rest never held). The check is loose: were the probability
// as low as 0.9, fewer than 150 of 300 would have probability below
// 1e-60.
func TestPerTimeLeak(t *testing.T) {
	const n, runs = 600, 300
	r := rand.New(rand.NewPCG(46, 9))
	sites := []site{{name: "time", size: 512, rate: 50 << 10, kind: "leak"}}
	var reported int
	for range runs {
		count, _ := leakedCounts(r, n)
		y, v := simulate(r, sites, n, defaultRate)
		e, err := PerNew(seconds(n), count, 5, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		f, err := e.Fit(y[0], v[0])
		if err != nil {
			t.Fatal(err)
		}
		if f.Lo > 0 {
			reported++
		}
	}
	t.Logf("a 50 KiB/s leak of its own reported as tracking the bursty count in %d of %d runs", reported, runs)
	if reported < runs/2 {
		t.Errorf("reported in %d of %d runs: the docs say nearly always", reported, runs)
	}
}
