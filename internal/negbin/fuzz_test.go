package negbin

import (
	"math"
	"testing"
)

// FuzzCDF: for any input the CDF is an error or a number in [0, 1],
// never NaN, and monotone in k.
func FuzzCDF(f *testing.F) {
	f.Add(int64(2591), int64(1), 1.0/102400)
	f.Add(int64(1_000_000_000), int64(10000), 1e-5)
	f.Add(int64(0), int64(0), 0.5)
	f.Add(int64(-3), int64(5), 1.0)
	f.Add(int64(1e15), int64(1e7), 1e-9)
	f.Add(int64(40), int64(1000), 0.97)
	f.Fuzz(func(t *testing.T, k, s int64, p float64) {
		if s > 1e8 {
			s %= 1e8 // keep each case fast; larger s is covered by the tests
		}
		v, err := CDF(k, s, p)
		if err != nil {
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("CDF(%d; %d, %v) = %v", k, s, p, v)
		}
		if k < math.MaxInt64 {
			w, _ := CDF(k+1, s, p)
			if w < v-1e-12 {
				t.Fatalf("CDF(%d; %d, %v) = %v > CDF(k+1) = %v", k, s, p, v, w)
			}
		}
		if k < math.MaxInt64/2 {
			w, _ := CDF(2*k+1, s, p)
			if w < v-1e-12 {
				t.Fatalf("CDF(%d; %d, %v) = %v > CDF(2k+1) = %v", k, s, p, v, w)
			}
		}
		c, err := CDFCampPaulson(k, s, p)
		if err != nil || !(c >= 0 && c <= 1) {
			t.Fatalf("Camp-Paulson(%d; %d, %v) = %v, %v", k, s, p, c, err)
		}
	})
}

// FuzzQuantile: the quantile satisfies its convention
// CDF(k) < target <= CDF(k+1) (up to the 2^53 cap).
func FuzzQuantile(f *testing.F) {
	f.Add(0.025, int64(8), 1.0/102400)
	f.Add(0.975, int64(10000), 1.0/102400)
	f.Add(0.5, int64(0), 0.3)
	f.Add(1e-9, int64(3), 1.0)
	f.Fuzz(func(t *testing.T, target float64, s int64, p float64) {
		if s > 1e8 {
			s %= 1e8
		}
		k, err := Quantile(target, s, p)
		if err != nil {
			return
		}
		if k < -1 || k > nbMaxK {
			t.Fatalf("quantile(%v; %d, %v) = %d", target, s, p, k)
		}
		if k >= 0 {
			if v := nbCDF(k, s, p); !(v < target) {
				t.Fatalf("quantile(%v; %d, %v) = %d but CDF(k) = %v", target, s, p, k, v)
			}
		}
		if k < nbMaxK {
			if v := nbCDF(k+1, s, p); !(v >= target) {
				t.Fatalf("quantile(%v; %d, %v) = %d but CDF(k+1) = %v", target, s, p, k, v)
			}
		}
	})
}

// FuzzSurvivalQuantile: the upper quantile satisfies its convention
// SF(k) > tail >= SF(k+1) (up to the 2^53 cap).
func FuzzSurvivalQuantile(f *testing.F) {
	f.Add(0.025, int64(8), 1.0/102400)
	f.Add(1e-15, int64(10000), 1.0/102400)
	f.Add(0.5, int64(0), 0.3)
	f.Fuzz(func(t *testing.T, tail float64, s int64, p float64) {
		if s > 1e8 {
			s %= 1e8
		}
		if !(tail > 0 && tail < 1) || nbCheck(s, p) != nil {
			return
		}
		k := SurvivalQuantileUnchecked(tail, s, p)
		if k < -1 || k > nbMaxK {
			t.Fatalf("survival quantile(%v; %d, %v) = %d", tail, s, p, k)
		}
		if k >= 0 {
			if v := nbSF(k, s, p); !(v > tail) {
				t.Fatalf("survival quantile(%v; %d, %v) = %d but SF(k) = %v", tail, s, p, k, v)
			}
		}
		if k < nbMaxK {
			if v := nbSF(k+1, s, p); !(v <= tail) {
				t.Fatalf("survival quantile(%v; %d, %v) = %d but SF(k+1) = %v", tail, s, p, k, v)
			}
		}
	})
}
