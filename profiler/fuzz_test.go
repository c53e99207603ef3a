package profiler

import (
	"math"
	"testing"
)

// FuzzNegBinCDF: for any input the CDF is an error or a number in [0, 1],
// never NaN, and monotone in k.
func FuzzNegBinCDF(f *testing.F) {
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
		v, err := NegBinCDF(k, s, p)
		if err != nil {
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("CDF(%d; %d, %v) = %v", k, s, p, v)
		}
		if k < math.MaxInt64 {
			w, _ := NegBinCDF(k+1, s, p)
			if w < v-1e-12 {
				t.Fatalf("CDF(%d; %d, %v) = %v > CDF(k+1) = %v", k, s, p, v, w)
			}
		}
		if k < math.MaxInt64/2 {
			w, _ := NegBinCDF(2*k+1, s, p)
			if w < v-1e-12 {
				t.Fatalf("CDF(%d; %d, %v) = %v > CDF(2k+1) = %v", k, s, p, v, w)
			}
		}
		c, err := NegBinCDFCampPaulson(k, s, p)
		if err != nil || !(c >= 0 && c <= 1) {
			t.Fatalf("Camp-Paulson(%d; %d, %v) = %v, %v", k, s, p, c, err)
		}
	})
}

// FuzzNegBinQuantile: the quantile satisfies its convention
// CDF(k) < target <= CDF(k+1) (up to the 2^53 cap).
func FuzzNegBinQuantile(f *testing.F) {
	f.Add(0.025, int64(8), 1.0/102400)
	f.Add(0.975, int64(10000), 1.0/102400)
	f.Add(0.5, int64(0), 0.3)
	f.Add(1e-9, int64(3), 1.0)
	f.Fuzz(func(t *testing.T, target float64, s int64, p float64) {
		if s > 1e8 {
			s %= 1e8
		}
		k, err := NegBinQuantile(target, s, p)
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

// FuzzComputeInterval: an error, or finite bounds with u <= Lo <= Hi, and
// Lo <= Estimate <= Hi when s > 0 and the confidence is at least 1/2 (a
// narrower interval sits around the median, which is below the mean).
func FuzzComputeInterval(f *testing.F) {
	f.Add(int64(8), int64(10908), int64(102400), 0.95, uint8(0))
	f.Add(int64(0), int64(0), int64(102400), 0.95, uint8(3))
	f.Add(int64(1), int64(1), int64(1), 0.5, uint8(1))
	f.Add(int64(10000), int64(1<<30), int64(4096), 0.999, uint8(2))
	f.Add(int64(-1), int64(5), int64(0), math.NaN(), uint8(9))
	f.Fuzz(func(t *testing.T, s, u, mean int64, conf float64, w uint8) {
		if s > 1e8 {
			s %= 1e8
		}
		iv, err := ComputeInterval(s, u, mean, conf, Window(w))
		if err != nil {
			return
		}
		for _, v := range []float64{iv.Lo, iv.Hi, iv.Estimate} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%+v", iv)
			}
		}
		if !(float64(u) <= iv.Lo && iv.Lo <= iv.Hi) || iv.FailuresLo < 0 || iv.FailuresHi < iv.FailuresLo {
			t.Fatalf("bad interval %+v", iv)
		}
		if s > 0 && conf >= 0.5 && !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
			t.Fatalf("estimate outside %+v", iv)
		}
	})
}

// FuzzWeightedBytes: an error, or a finite weight between size and
// size*mean.
func FuzzWeightedBytes(f *testing.F) {
	f.Add(int64(1), int64(102400))
	f.Add(int64(1<<40), int64(3))
	f.Add(int64(-5), int64(0))
	f.Fuzz(func(t *testing.T, size, mean int64) {
		w, err := WeightedBytes(size, mean)
		if err != nil {
			return
		}
		if math.IsNaN(w) || w < float64(size) || w > float64(size)*float64(mean)*(1+1e-12) {
			t.Fatalf("WeightedBytes(%d, %d) = %v", size, mean, w)
		}
	})
}
