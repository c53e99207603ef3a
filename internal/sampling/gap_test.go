package sampling

import (
	"github.com/arenaprof/arenaprof/internal/samplingstate"

	"math"
	"testing"
)

// chiSquareCritical returns the chi-square value exceeded with probability
// about 3e-7 for df degrees of freedom (Wilson-Hilferty with z = 5).
func chiSquareCritical(df int) float64 {
	d := float64(df)
	c := 2 / (9 * d)
	return d * math.Pow(1-c+5*math.Sqrt(c), 3)
}

// geometricBins returns integer bin boundaries 0 = b_0 < b_1 < ... for a
// geometric distribution with parameter q, about equally likely, and the
// probability of each bin [b_i, b_{i+1}) (the last bin is [b_last, inf)).
func geometricBins(mean int64, nbins int) ([]int64, []float64) {
	lq := math.Log1p(-1 / float64(mean))
	bounds := []int64{0}
	for i := 1; i < nbins; i++ {
		b := int64(math.Ceil(math.Log(1-float64(i)/float64(nbins)) / lq))
		if b > bounds[len(bounds)-1] {
			bounds = append(bounds, b)
		}
	}
	probs := make([]float64, len(bounds))
	for i, b := range bounds {
		pb := math.Exp(float64(b) * lq) // P(G >= b)
		next := 0.0
		if i+1 < len(bounds) {
			next = math.Exp(float64(bounds[i+1]) * lq)
		}
		probs[i] = pb - next
	}
	return bounds, probs
}

// TestGapDistribution draws 1e5 gaps for each mean and checks them with a
// chi-square goodness-of-fit test (false failure about 3e-7 per mean), the
// sample mean within 6 sigma (2e-9), and the largest draw against MaxGap.
func TestGapDistribution(t *testing.T) {
	const n = 100_000
	for i, mean := range []int64{1, 2, 4096, 102400, 1 << 21} {
		g, err := NewGapSamplerSeeded(mean, uint64(i)+1, 0x9e3779b97f4a7c15)
		if err != nil {
			t.Fatal(err)
		}
		draws := make([]int64, n)
		sum := 0.0
		maxGap := MaxGap(mean)
		for j := range draws {
			d := g.Next()
			if d < 0 || d > maxGap {
				t.Fatalf("mean %d: draw %d outside [0, %d]", mean, d, maxGap)
			}
			draws[j] = d
			sum += float64(d)
		}
		if mean == 1 {
			if sum != 0 {
				t.Errorf("mean 1: gaps sum to %v, want all 0", sum)
			}
			continue
		}
		p := 1 / float64(mean)
		wantMean := (1 - p) / p
		sd := math.Sqrt(1-p) / p
		if avg := sum / n; math.Abs(avg-wantMean) > 6*sd/math.Sqrt(n) {
			t.Errorf("mean %d: average gap %v, want %v ± %v", mean, avg, wantMean, 6*sd/math.Sqrt(n))
		}
		bounds, probs := geometricBins(mean, 50)
		counts := make([]float64, len(bounds))
		for _, d := range draws {
			// The last boundary <= d.
			lo, hi := 0, len(bounds)-1
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if bounds[mid] <= d {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			counts[lo]++
		}
		chi2 := 0.0
		for k, c := range counts {
			e := probs[k] * n
			chi2 += (c - e) * (c - e) / e
		}
		df := len(bounds) - 1
		if crit := chiSquareCritical(df); chi2 > crit {
			t.Errorf("mean %d: chi-square %.1f with %d degrees of freedom, above %.1f", mean, chi2, df, crit)
		} else {
			t.Logf("mean %d: chi-square %.1f, df %d (critical %.1f)", mean, chi2, df, crit)
		}
	}
}

// TestGapStreamsUncorrelated checks that streams from different seeds, and
// consecutive draws of one stream, are uncorrelated: |r| < 6/sqrt(n)
// (false failure about 2e-9 per check).
func TestGapStreamsUncorrelated(t *testing.T) {
	const n = 100_000
	a, _ := NewGapSamplerSeeded(102400, 1, 2)
	b, _ := NewGapSamplerSeeded(102400, 3, 4)
	c, _ := NewGapSampler(102400)
	d, _ := NewGapSampler(102400)
	xa, xb, xc, xd := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		xa[i], xb[i], xc[i], xd[i] = float64(a.Next()), float64(b.Next()), float64(c.Next()), float64(d.Next())
	}
	bound := 6 / math.Sqrt(n)
	for _, pair := range []struct {
		name string
		x, y []float64
	}{
		{"seeds (1,2) vs (3,4)", xa, xb},
		{"two default-seeded streams", xc, xd},
		{"lag 1 within a stream", xa[:n-1], xa[1:]},
	} {
		if r := correlation(pair.x, pair.y); math.Abs(r) > bound {
			t.Errorf("%s: correlation %v, above %v", pair.name, r, bound)
		}
	}
	same := 0
	for i := range xc {
		if xc[i] == xd[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Errorf("two default-seeded streams agree on %d of %d draws", same, n)
	}
}

func correlation(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	return sxy / math.Sqrt(sxx*syy)
}

func TestMaxGap(t *testing.T) {
	for _, m := range []int64{2, 3, 100, 4096, 102400, 1 << 21, 1<<40 - 1, samplingstate.MaxMeanBytes} {
		inv := 1 / math.Log1p(-1/float64(m))
		mg := MaxGap(m)
		if got := gapFromUniform(0x1p-53, inv); got != mg {
			t.Errorf("mean %d: smallest uniform gives %d, MaxGap %d", m, got, mg)
		}
		if gapFromUniform(1, inv) != 0 {
			t.Errorf("mean %d: U = 1 gives %d", m, gapFromUniform(1, inv))
		}
		// Monotone: any larger uniform gives no more.
		for _, u := range []float64{0x1p-53 * (1 + 0x1p-52), 0x1p-52, 1e-10, 0.5} {
			if g := gapFromUniform(u, inv); g > mg || g < 0 {
				t.Errorf("mean %d: U=%v gives %d above MaxGap %d", m, u, g, mg)
			}
		}
		if float64(mg) > MaxGapFactor*float64(m) {
			t.Errorf("mean %d: MaxGap %d above %v*mean", m, mg, MaxGapFactor)
		}
	}
	if mg := MaxGap(samplingstate.MaxMeanBytes); mg >= 1<<46 {
		t.Errorf("MaxGap(samplingstate.MaxMeanBytes) = %d, not below 2^46", mg)
	}
	if MaxGap(1) != 0 || MaxGap(0) != 0 || MaxGap(-3) != 0 {
		t.Error("MaxGap for mean <= 1 is not 0")
	}
}

func TestGapSamplerModes(t *testing.T) {
	var zero GapSampler
	if zero.Enabled() || zero.Next() != -1 {
		t.Error("zero GapSampler is not disabled")
	}
	g, err := NewGapSamplerSeeded(1, 1, 1)
	if err != nil || g.Next() != 0 || g.Mean() != 1 {
		t.Errorf("mean 1: %v %v", g, err)
	}
	if err := g.SetMean(-5); err != nil || g.Enabled() || g.Next() != -1 {
		t.Errorf("negative mean does not disable: %v", err)
	}
	if err := g.SetMean(samplingstate.MaxMeanBytes + 1); err == nil {
		t.Error("mean above samplingstate.MaxMeanBytes accepted")
	}
	if _, err := NewGapSamplerSeeded(samplingstate.MaxMeanBytes+1, 1, 1); err == nil {
		t.Error("NewGapSamplerSeeded accepted a too large mean")
	}
	// Same seed, same stream.
	a, _ := NewGapSamplerSeeded(4096, 7, 8)
	b, _ := NewGapSamplerSeeded(4096, 7, 8)
	for i := 0; i < 100; i++ {
		if a.Next() != b.Next() {
			t.Fatal("equal seeds give different streams")
		}
	}
	for i := 0; i < 1000; i++ {
		if u := a.Uniform(); !(u > 0 && u <= 1) {
			t.Fatalf("uniform %v outside (0, 1]", u)
		}
	}
}
