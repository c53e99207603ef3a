package arena

import (
	"math"
	"testing"
)

// chiSquareCritical returns the value a chi-square variable with df degrees
// of freedom exceeds with probability about 1e-7 (z = 5.2 one-sided), by
// the Wilson-Hilferty approximation.
func chiSquareCritical(df int) float64 {
	const z = 5.2
	d := float64(df)
	c := 1 - 2/(9*d) + z*math.Sqrt(2/(9*d))
	return d * c * c * c
}

// TestLargeSmallMix allocates, over and over, one object larger than a
// chunk (129*8 KiB + 1 bytes, rounded to 129*8 KiB + 8) and 129 objects of
// 8 KiB, at a mean of 256 KiB, and checks the per-byte model:
//
//   - the number of sampled objects of each size is within 6 sigma of its
//     expectation n*(1-q^size), q = 1 - 1/mean (false failure < 2e-9 per
//     size under the normal approximation of the binomial);
//   - the offsets of the sampled objects of each size follow the geometric
//     distribution truncated to [0, size): a chi-square test over 16 bins
//     of equal probability, at a threshold exceeded with probability about
//     1e-7.
//
// The seed is fixed, so the test is deterministic; the bounds say how
// likely another seed would be to fail it. Total false-failure
// probability: below 1e-6.
func TestLargeSmallMix(t *testing.T) {
	const (
		mean  = 256 << 10
		small = 8 << 10
		big   = 129*small + 1
	)
	reps := 400
	if testing.Short() {
		reps = 150
	}
	rec := record(t, mean, false)
	a := NewArena(WithSeed(42, 7))
	defer a.Free()
	for range reps {
		_ = MakeSlice[byte](a, big, big)
		for range 129 {
			_ = MakeSlice[byte](a, small, small)
		}
		a.Reset()
	}
	bigSize := int64(fastSize(big))
	offsets := map[int64][]int64{}
	for _, e := range rec.take() {
		if e.Size != bigSize && e.Size != small {
			t.Fatalf("event of size %d", e.Size)
		}
		if e.Offset < 0 || e.Offset >= e.Size {
			t.Fatalf("offset %d outside [0, %d)", e.Offset, e.Size)
		}
		offsets[e.Size] = append(offsets[e.Size], e.Offset)
	}
	q := 1 - 1.0/mean
	for _, c := range []struct {
		size int64
		n    int
	}{{bigSize, reps}, {small, 129 * reps}} {
		got := offsets[c.size]
		p := 1 - math.Pow(q, float64(c.size))
		want := float64(c.n) * p
		sigma := math.Sqrt(float64(c.n) * p * (1 - p))
		if math.Abs(float64(len(got))-want) > 6*sigma {
			t.Errorf("size %d: %d of %d objects sampled, want %.1f ± 6*%.1f", c.size, len(got), c.n, want, sigma)
		}
		// Bin edges with equal probability under the truncated geometric
		// distribution: P(off < x) = (1 - q^x) / (1 - q^size).
		const bins = 16
		edges := make([]float64, bins)
		for i := range edges {
			u := float64(i+1) / bins * p
			edges[i] = math.Log1p(-u) / math.Log(q) // P(off < edge) = (i+1)/bins
		}
		counts := make([]int, bins)
		for _, off := range got {
			i := 0
			for i < bins-1 && float64(off) >= edges[i] {
				i++
			}
			counts[i]++
		}
		// Discreteness: the edges fall between integers; with sizes of 8 KiB
		// and up each bin spans hundreds of offsets, so the bin
		// probabilities differ from 1/bins by < 1e-3 relative.
		exp := float64(len(got)) / bins
		chi := 0.0
		for _, k := range counts {
			chi += (float64(k) - exp) * (float64(k) - exp) / exp
		}
		if crit := chiSquareCritical(bins - 1); chi > crit {
			t.Errorf("size %d: offsets chi-square %.1f > %.1f (counts %v)", c.size, chi, crit, counts)
		}
		t.Logf("size %d: %d sampled of %d (expected %.1f), offsets chi-square %.1f", c.size, len(got), c.n, want, chi)
	}
}
