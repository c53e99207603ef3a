package leaks

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// burstCounts returns the leaked goroutine count at the snapshots 1, 2,
// ..., n seconds where goroutines leak size at once (a stuck batch of
// requests), the bursts a Poisson process of one per every seconds, and
// the seconds each was leaked at.
func burstCounts(r *rand.Rand, n int, every float64, size int) (count, born []float64) {
	count = make([]float64, n)
	next := r.ExpFloat64() * every
	for sec := range n {
		for next < float64(sec+1) {
			for range size {
				born = append(born, next)
			}
			next += r.ExpFloat64() * every
		}
		count[sec] = float64(len(born))
	}
	return count, born
}

// TestPartialExact: exact bytes that are a plane in the time and the
// count give the count's coefficient with no width, whatever the time's;
// a count that is a line in the time, or a fit of too few batches, is
// refused as collinear.
func TestPartialExact(t *testing.T) {
	times := seconds(40)
	count := make([]float64, 40)
	for i := range count {
		switch { // stalls and jumps: far from a line in the time
		case i < 24:
			count[i] = float64(i / 3)
		case i < 30:
			count[i] = 50
		case i < 35:
			count[i] = 52
		default:
			count[i] = 90
		}
	}
	p, err := PartialNew(times, count, 3, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		y    func(t, x float64) float64
		c    float64
	}{
		{"held: 64KiB each", func(_, x float64) float64 { return 4096 + 65536*x }, 65536},
		{"beside: 50KiB/s of its own", func(t, _ float64) float64 { return 1e6 + 51200*t }, 0},
		{"both", func(t, x float64) float64 { return 1000*t + 65536*x }, 65536},
		{"gives back 100 each", func(t, x float64) float64 { return 1e6 + 7*t - 100*x }, -100},
		{"flat", func(float64, float64) float64 { return 1 << 20 }, 0},
	} {
		y, v := make([]float64, len(count)), make([]float64, len(count))
		for i := range count {
			y[i] = tc.y(times[i], count[i])
		}
		f, err := p.Fit(y, v)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-6 * math.Max(1, math.Abs(tc.c))
		if math.Abs(f.Rate-tc.c) > tol || f.SE > tol || !(f.Lo <= f.Rate && f.Rate <= f.Hi) {
			t.Errorf("%s: %+v, want %v and no width", tc.name, f, tc.c)
		}
	}
	line := make([]float64, 40)
	for i := range line {
		line[i] = 2 * times[i]
	}
	nearLine := slices.Clone(line)
	nearLine[35]++ // one goroutine early: still all but a trace in step
	for _, tc := range []struct {
		name    string
		times   []float64
		count   []float64
		batches int
	}{
		{"a line in the time", times, line, 16},
		{"a line but one", times, nearLine, 16},
		{"4 batches", seconds(8), []float64{0, 1, 2, 3, 4, 9, 9, 30}, 4},
	} {
		_, err := PartialNew(tc.times, tc.count, 1, 0.95)
		var ce *CollinearError
		if !errors.As(err, &ce) || ce.Batches != tc.batches || (tc.batches >= minPartialBatches && !(ce.Unexplained < MinBeyondTime)) {
			t.Errorf("%s: %v, want a CollinearError of %d batches", tc.name, err, tc.batches)
		}
	}
	// PerNew's refusals carry over.
	if _, err := PartialNew(seconds(12), []float64{0, 1, 2, 3, 4, 5, 6, 2, 8, 9, 10, 11}, 1, 0.95); err == nil || !strings.Contains(err.Error(), "falls") {
		t.Errorf("a falling count: %v", err)
	}
}

// TestPartialWeights: the partial fit's weights add up to 0 and are
// orthogonal to the time (a plane's time and constant move no
// coefficient, TestPartialExact), and R bounds |suffix(b)-suffix(d+1)|
// for every run b..d: the sampling bound's argument.
func TestPartialWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 11))
	count, _ := burstCounts(r, 600, 60, 60)
	p, err := PartialNew(seconds(600), count, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	m := len(count) - p.from
	suffix := make([]float64, m+1)
	for j := m - 1; j >= 0; j-- {
		k := p.batch[j]
		suffix[j] = suffix[j+1] + p.r[k]/p.srr/p.count[k]
	}
	var dot float64
	for j := range m {
		dot += (suffix[j] - suffix[j+1]) * float64(p.from+j+1)
	}
	if math.Abs(suffix[0]) > 1e-12 || math.Abs(dot) > 1e-9 {
		t.Errorf("weights sum to %v, against the time %v; want 0 and 0", suffix[0], dot)
	}
	var worst float64
	for b := range m {
		for d := b; d < m; d++ {
			worst = max(worst, math.Abs(suffix[b]-suffix[d+1]))
		}
	}
	if worst*worst > p.r2*(1+1e-12) {
		t.Errorf("a run's weight %v beyond R %v", worst, math.Sqrt(p.r2))
	}
	if slices.Min(suffix) >= 0 {
		t.Errorf("no negative suffix sum: the test does not show why R is needed")
	}
}

// TestPartialTruth: goroutines leak 60 at once, the bursts a Poisson
// process of one a minute, each holding one 64 KiB object at one site,
// beside a site leaking 50 KiB/s on its own and the four controls of
// sim_test.go, 10 minutes of 1 s snapshots at MemProfileRate 64 KiB
// (63% of the held objects sampled), 300 runs, family-wise C = 0.95
// over the 6 groups (each interval two-sided at 1-0.05/6).
//
//   - No burst over the last half (probability e^-5 = 0.0067), or the
//     count's batch means leave less than MinBeyondTime unexplained by
//     the time (about 0.01): cannot tell, about 0.017 a run; 25 or more
//     of 300 has probability 1.3e-10.
//   - The held site's partial interval misses 65,536 with probability at
//     most 0.0083 a run: 16 or more misses has probability 9e-9; it is
//     held (lower bound above 0) in at least 265 (a miss, cannot tell
//     included, about 0.03 a run: 36 or more has probability below
//     1e-10).
//   - The 50 KiB/s site and each control grow with the count beyond time
//     by 0 bytes per goroutine, so each is held with probability at most
//     0.05/12 a run, all five together at most 0.021: 25 or more of
//     300 has probability below 2.2e-7.
//
// Measured: cannot tell 2/300; covered 298 of 298, held 298 of 300,
// median half-width 32.4 KB. The 50 KiB/s site, where listed as
// tracking the count (292 runs): never held, beside in 17, cannot tell
// in 275; a control listed in 11 runs, never held.
//
// At the default MemProfileRate (512 KiB: 12% sampled) the held site is
// held in 4 runs of 300 only, median half-width 114 KB: see
// docs/leaks.md.
func TestPartialTruth(t *testing.T) {
	const n, runs, truth, rate = 600, 300, 64 << 10, 64 << 10
	r := rand.New(rand.NewPCG(46, 13))
	sites := append(controls(n), site{name: "own 50KiB/s", size: 512, rate: 50 << 10, kind: "leak"})
	var cannot, covered, held int
	verdicts := map[string]map[string]int{}
	var widths []float64
	for range runs {
		count, born := burstCounts(r, n, 60, 60)
		yh, vh := holding(r, born, n, truth, rate)
		ys, vs := simulate(r, sites, n, rate)
		p, err := PartialNew(seconds(n), count, 1+len(sites), 0.95)
		var ce *CollinearError
		var flat *CountError
		if errors.As(err, &ce) || (errors.As(err, &flat) && !flat.Falls) {
			cannot++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := p.Fit(yh, vh)
		if err != nil {
			t.Fatal(err)
		}
		if f.Lo <= truth && truth <= f.Hi {
			covered++
		}
		if f.Lo > 0 {
			held++
		}
		widths = append(widths, (f.Hi-f.Lo)/2)
		e, err := PerNew(seconds(n), count, 1+len(sites), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		for g, s := range sites {
			f, err := p.Fit(ys[g], vs[g])
			if err != nil {
				t.Fatal(err)
			}
			m, err := e.Fit(ys[g], vs[g])
			if err != nil {
				t.Fatal(err)
			}
			if verdicts[s.name] == nil {
				verdicts[s.name] = map[string]int{}
			}
			switch { // the verdicts of leaks URL on a listed group
			case !(m.Lo > 0):
				verdicts[s.name]["not listed"]++
			case f.Lo > 0:
				verdicts[s.name]["held"]++
			case f.Hi < m.Lo:
				verdicts[s.name]["beside"]++
			default:
				verdicts[s.name]["cannot tell"]++
			}
		}
	}
	slices.Sort(widths)
	t.Logf("cannot tell %d/%d; 64 KiB per goroutine beyond time: covered %d, held %d, median half-width %.0f B; the others' verdicts: %v",
		cannot, runs, covered, held, widths[len(widths)/2], verdicts)
	if cannot > 24 {
		t.Errorf("cannot tell in %d of %d runs, want at most 24", cannot, runs)
	}
	if fitted := runs - cannot; covered < fitted-15 {
		t.Errorf("the partial interval covered 65536 in %d of %d fitted runs", covered, fitted)
	}
	if held < runs-35 {
		t.Errorf("the holding site held in %d of %d runs, want at least %d", held, runs, runs-35)
	}
	var others int
	for _, v := range verdicts {
		others += v["held"]
	}
	if others > 24 {
		t.Errorf("sites holding nothing per goroutine held in %d runs of %d: %v", others, runs, verdicts)
	}
}

// TestPartialSteady: goroutines leaking one by one at a steady pace (a
// Poisson process of 2 a second, and of 10) make a count that is a line
// in the time but for a trace: every run is refused as collinear
// (measured: at most 0.5% of the count's variance left unexplained in
// 300 runs of each), so neither the held site nor a leak of its own gets
// a number. The check asks for 290 of 300: a refusal is the rule here,
// the time explaining over 99% of the random walk's batch means'
// variance (its share unexplained has median 0.001).
func TestPartialSteady(t *testing.T) {
	const n, runs = 600, 300
	r := rand.New(rand.NewPCG(46, 17))
	for _, every := range []float64{0.5, 0.1} {
		var cannot int
		var worst float64
		for range runs {
			count, _ := burstCounts(r, n, every, 1)
			_, err := PartialNew(seconds(n), count, 2, 0.95)
			var ce *CollinearError
			if errors.As(err, &ce) {
				cannot++
				worst = max(worst, ce.Unexplained)
			}
		}
		t.Logf("a goroutine every %v s on average: cannot tell in %d of %d runs, at most %.4f unexplained", every, cannot, runs, worst)
		if cannot < runs-10 {
			t.Errorf("a steady pace (every %v s): cannot tell in %d of %d runs", every, cannot, runs)
		}
	}
}

// FuzzPartial: whatever the times, counts, values and variances,
// PartialNew and Fit return an error or finite bounds around the
// coefficient.
func FuzzPartial(f *testing.F) {
	f.Add(1.0, uint64(0x0f0102030f040506), 3.0, 65536.0, 100.0, 5.0, 0.95)
	f.Add(0.5, uint64(0x1111111111111111), 0.0, -5.0, 0.0, 1e300, 0.5)
	f.Add(1e-300, ^uint64(0), 1e300, 1e300, -1e300, 0.0, 0.999999)
	f.Fuzz(func(t *testing.T, step float64, steps uint64, base, per, perSec, variance, conf float64) {
		const n = 16
		times := make([]float64, n)
		count, y, v := make([]float64, n), make([]float64, n), make([]float64, n)
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
			y[i] = base + per*c + perSec*times[i]
			v[i] = variance * float64(i%4)
		}
		p, err := PartialNew(times, count, 3, conf)
		if err != nil {
			return
		}
		if u := p.Unexplained(); !(u >= MinBeyondTime && u <= 1+1e-9) {
			t.Errorf("unexplained share %v", u)
		}
		fit, err := p.Fit(y, v)
		if err != nil {
			return
		}
		if !(fit.Lo <= fit.Rate && fit.Rate <= fit.Hi) && !math.IsNaN(fit.Rate) && !math.IsNaN(fit.SE) {
			t.Errorf("bounds %v, %v around %v", fit.Lo, fit.Hi, fit.Rate)
		}
	})
}
