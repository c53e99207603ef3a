package negbin

import (
	"github.com/arenaprof/arenaprof/internal/negbin/negbintest"
	"math"
	"math/big"
	"testing"
)

// quantileTable is the reference's table (see package negbintest).
var quantileTable = negbintest.Table

func TestQuantileTable(t *testing.T) {
	p := 1.0 / 102400
	for _, row := range quantileTable {
		for _, c := range []struct {
			target float64
			want   int64
		}{{0.025, row.Lo}, {0.975, row.Hi}} {
			got, err := Quantile(c.target, row.S, p)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("s=%d target=%v: quantile %d, table %d", row.S, c.target, got, c.want)
			}
			// The convention: CDF(k) < target <= CDF(k+1).
			if f := nbCDF(got, row.S, p); !(f < c.target) {
				t.Errorf("s=%d: CDF(%d) = %v, not < %v", row.S, got, f, c.target)
			}
			if f := nbCDF(got+1, row.S, p); !(f >= c.target) {
				t.Errorf("s=%d: CDF(%d) = %v, not >= %v", row.S, got+1, f, c.target)
			}
		}
	}
}

// bigCDF returns P(NB(s,p) <= k) = P(Binomial(s+k, p) >= s)
// = 1 - sum_{j<s} C(n,j) p^j q^(n-j) with n = s+k, in 320-bit arithmetic.
// The terms are formed by the recurrence t_{j+1} = t_j (n-j)/(j+1) p/q from
// t_0 = q^n, so no lgamma is involved.
func bigCDF(k, s int64, p float64) float64 {
	const prec = 320
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	bp := nf().SetFloat64(p)
	bq := nf().Sub(nf().SetInt64(1), bp)
	n := s + k
	// q^n by squaring.
	pow := nf().SetInt64(1)
	base := nf().Set(bq)
	for e := n; e > 0; e >>= 1 {
		if e&1 == 1 {
			pow.Mul(pow, base)
		}
		base.Mul(base, base)
	}
	ratio := nf().Quo(bp, bq)
	term := pow
	sum := nf()
	tmp := nf()
	for j := int64(0); j < s; j++ {
		sum.Add(sum, term)
		term.Mul(term, tmp.SetInt64(n-j))
		term.Quo(term, tmp.SetInt64(j+1))
		term.Mul(term, ratio)
	}
	res, _ := nf().Sub(nf().SetInt64(1), sum).Float64()
	return res
}

func TestNegBinCDFAgainstBig(t *testing.T) {
	type tc struct {
		k, s int64
		p    float64
	}
	cases := []tc{
		{2591, 1, 1.0 / 102400},
		{2592, 1, 1.0 / 102400},
		{377738, 1, 1.0 / 102400},
		{353666, 8, 1.0 / 102400},
		{1476871, 8, 1.0 / 102400},
		{8331581, 100, 1.0 / 102400},
		{12342054, 100, 1.0 / 102400},
		{1004017229, 10000, 1.0 / 102400},
		{1044156744, 10000, 1.0 / 102400},
		{999_999_999, 10000, 1e-5},
		{1_000_000_000, 9999, 1e-5},
		{1_003_000_000, 10000, 1e-5},
		{970_000_000, 10000, 1e-5},
		{1_050_000_000, 10001, 1e-5},
		{2_000_000_000, 3, 1e-9},
		{999_999_999_999, 1000, 1e-9},
		{1_030_000_000_000, 1000, 1e-9},
		{10, 10, 0.5},
		{3, 50, 0.9},
		{0, 50, 0.999},
		{0, 1, 1e-9},
		{40, 1000, 0.97},
		{1 << 40, 3000, 1.0 / (1 << 28)},
	}
	if !testing.Short() {
		// k near 1e15 at p = 1e-9 puts the bulk at s near 1e6.
		cases = append(cases,
			tc{999_000_000_000_000, 1_000_000, 1e-9},
			tc{1_001_500_000_000_000, 1_000_000, 1e-9},
		)
	}
	for _, c := range cases {
		got, err := CDF(c.k, c.s, c.p)
		if err != nil {
			t.Fatal(err)
		}
		want := bigCDF(c.k, c.s, c.p)
		if d := math.Abs(got - want); !(d <= 1e-9) {
			t.Errorf("CDF(k=%d; s=%d, p=%v) = %.15g, reference %.15g (error %.3g)", c.k, c.s, c.p, got, want, d)
		} else {
			t.Logf("CDF(k=%d; s=%d, p=%v) = %.15g, error %.2g", c.k, c.s, c.p, got, d)
		}
	}
}

// TestNegBinCDFLargeParameters covers the corners of the promised range
// (p down to 1e-9, s up to 1e7, k up to 1e15), where the big reference is
// too slow: the CDF must be in [0, 1], monotone in k, equal about 1/2 near
// the median and agree with Camp-Paulson (whose error is tiny for large s).
func TestNegBinCDFLargeParameters(t *testing.T) {
	for _, c := range []struct {
		s int64
		p float64
	}{{10_000_000, 1e-8}, {10_000_000, 1e-2}, {10_000_000, 0.5}, {1, 1e-9}, {1_000_000, 1e-9}, {10_000_000, 1.0 / 102400}} {
		mean := float64(c.s) * (1 - c.p) / c.p
		sd := math.Sqrt(float64(c.s)*(1-c.p)) / c.p
		prev := -1.0
		for z := -8.0; z <= 8; z += 0.5 {
			k := int64(mean + z*sd)
			if k < 0 || k > 1e15 {
				continue
			}
			got, err := CDF(k, c.s, c.p)
			if err != nil {
				t.Fatal(err)
			}
			if !(got >= 0 && got <= 1) || got < prev {
				t.Fatalf("s=%d p=%v k=%d: CDF %v (previous %v)", c.s, c.p, k, got, prev)
			}
			prev = got
			cp, _ := CDFCampPaulson(k, c.s, c.p)
			if c.s >= 1_000_000 && math.Abs(cp-got) > 1e-6 {
				t.Errorf("s=%d p=%v k=%d: CDF %v, Camp-Paulson %v", c.s, c.p, k, got, cp)
			}
		}
	}
	for _, k := range []int64{0, 1, 1e9, 1e12, 1e15} {
		for _, s := range []int64{1, 1e4, 1e7} {
			for _, p := range []float64{1e-9, 1e-5, 0.3, 1} {
				v, _ := CDF(k, s, p)
				if !(v >= 0 && v <= 1) {
					t.Errorf("CDF(%d; %d, %v) = %v", k, s, p, v)
				}
			}
		}
	}
}

// TestNegBinIterations measures the continued fraction's iteration counts
// and the quantile search's CDF evaluations at the interval quantiles.
func TestNegBinIterations(t *testing.T) {
	for _, s := range []int64{1, 10, 100, 10_000, 1_000_000, 10_000_000} {
		for _, mean := range []int64{2, 4096, 102400, 1 << 30} {
			p := 1 / float64(mean)
			for _, target := range []float64{0.025, 0.975} {
				k, evals := nbQuantile(target, s, p)
				_, it := nbIncBeta(p, 1-p, float64(s), float64(k)+1)
				if it > 200 || evals > 30 {
					t.Errorf("s=%d mean=%d target=%v: %d iterations, %d evaluations", s, mean, target, it, evals)
				}
				if s == 10_000 || s == 10_000_000 {
					t.Logf("s=%d mean=%d target=%v: k=%d, %d CF iterations, %d CDF evaluations", s, mean, target, k, it, evals)
				}
			}
		}
	}
}

func TestNegBinEdgeCases(t *testing.T) {
	p := 1.0 / 102400
	for _, c := range []struct {
		k, s int64
		p    float64
		want float64
	}{
		{-1, 5, p, 0},
		{0, 0, p, 1},
		{7, 0, p, 1},
		{0, 3, 1, 1},
		{-5, 0, 1, 0},
		{0, 1, 0.25, 0.25},
		{1, 1, 0.25, 1 - 0.75*0.75},
		{0, 2, 0.5, 0.25},
	} {
		got, err := CDF(c.k, c.s, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-15 {
			t.Errorf("CDF(%d; %d, %v) = %v, want %v", c.k, c.s, c.p, got, c.want)
		}
	}
	// s = 1 is geometric: CDF(k) = 1 - q^(k+1).
	for _, k := range []int64{0, 1, 100, 102400, 1e6, 3e6} {
		want := -math.Expm1(float64(k+1) * math.Log1p(-p))
		if got, _ := CDF(k, 1, p); math.Abs(got-want) > 1e-13 {
			t.Errorf("geometric CDF(%d) = %v, want %v", k, got, want)
		}
	}
	if q, _ := Quantile(0.5, 0, p); q != -1 {
		t.Errorf("quantile of the point mass: %d, want -1", q)
	}
	if q, _ := Quantile(0.2, 1, 0.25); q != -1 {
		t.Errorf("quantile below CDF(0): %d, want -1", q)
	}
	if q, _ := Quantile(0.3, 1, 0.25); q != 0 {
		t.Errorf("quantile: %d, want 0", q)
	}
}

func TestNegBinErrors(t *testing.T) {
	for _, c := range []struct {
		s int64
		p float64
	}{{-1, 0.5}, {1 << 41, 0.5}, {1, 0}, {1, -0.1}, {1, 1.5}, {1, math.NaN()}, {1, math.Inf(1)}} {
		if _, err := CDF(1, c.s, c.p); err == nil {
			t.Errorf("CDF(1, %d, %v): no error", c.s, c.p)
		}
		if _, err := CDFCampPaulson(1, c.s, c.p); err == nil {
			t.Errorf("CDFCampPaulson(1, %d, %v): no error", c.s, c.p)
		}
		if _, err := Quantile(0.5, c.s, c.p); err == nil {
			t.Errorf("Quantile(0.5, %d, %v): no error", c.s, c.p)
		}
	}
	for _, target := range []float64{0, 1, -1, 2, math.NaN(), math.Inf(-1)} {
		if _, err := Quantile(target, 1, 0.5); err == nil {
			t.Errorf("Quantile(%v): no error", target)
		}
	}
}

// TestCampPaulsonError measures the largest absolute error of the
// Camp-Paulson approximation at p = 1/102400 (the figures quoted in its doc
// comment) and checks them against bounds.
func TestCampPaulsonError(t *testing.T) {
	p := 1.0 / 102400
	for _, c := range []struct {
		s     int64
		bound float64
	}{{1, 0.015}, {5, 0.0016}, {10, 8e-4}, {100, 1e-4}} {
		mean := float64(c.s) / p
		worst, at := 0.0, int64(0)
		for k := int64(0); float64(k) < 12*mean+20/p; k += max(1, int64(mean/2000)) {
			exact := nbCDF(k, c.s, p)
			approx, _ := CDFCampPaulson(k, c.s, p)
			if d := math.Abs(exact - approx); d > worst {
				worst, at = d, k
			}
		}
		t.Logf("Camp-Paulson at p=1/102400, s=%d: largest error %.3g at k=%d", c.s, worst, at)
		if worst > c.bound {
			t.Errorf("s=%d: Camp-Paulson error %v above %v", c.s, worst, c.bound)
		}
	}
}

// bigSF returns P(NB(s,p) > k) = P(Binomial(s+k, p) < s) in 320-bit
// arithmetic, as bigCDF does, without forming 1 - CDF.
func bigSF(k, s int64, p float64) float64 {
	const prec = 320
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	bp := nf().SetFloat64(p)
	bq := nf().Sub(nf().SetInt64(1), bp)
	n := s + k
	pow := nf().SetInt64(1)
	base := nf().Set(bq)
	for e := n; e > 0; e >>= 1 {
		if e&1 == 1 {
			pow.Mul(pow, base)
		}
		base.Mul(base, base)
	}
	ratio := nf().Quo(bp, bq)
	term := pow
	sum := nf()
	tmp := nf()
	for j := int64(0); j < s; j++ {
		sum.Add(sum, term)
		term.Mul(term, tmp.SetInt64(n-j))
		term.Quo(term, tmp.SetInt64(j+1))
		term.Mul(term, ratio)
	}
	res, _ := sum.Float64()
	return res
}

// TestSurvivalQuantileExtremeTails: the upper quantile compares the
// survival function with the tail, so it is right (against 320-bit
// arithmetic, to the CDF's 1e-9 relative precision) even where 1-tail
// cannot be told from 1 in float64.
func TestSurvivalQuantileExtremeTails(t *testing.T) {
	for _, s := range []int64{1, 2, 10, 100} {
		for _, p := range []float64{1.0 / 102400, 1.0 / 4096, 0.3} {
			for _, tail := range []float64{0.025, 5e-10, 1e-15, 1e-30} {
				k := SurvivalQuantileUnchecked(tail, s, p) + 1 // smallest k with SF(k) <= tail
				if sf := bigSF(k, s, p); !(sf <= tail*(1+1e-9)) {
					t.Errorf("s=%d p=%v tail=%v: k=%d has SF %v above the tail", s, p, tail, k, sf)
				}
				if k > 0 {
					if sf := bigSF(k-1, s, p); !(sf > tail*(1-1e-9)) {
						t.Errorf("s=%d p=%v tail=%v: k-1=%d has SF %v, k is not the smallest", s, p, tail, k-1, sf)
					}
				}
			}
		}
	}
}
