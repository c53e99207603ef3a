package estimate

import (
	"math"
	"testing"
)

// FuzzSingleMeanInterval: an error, or finite bounds with u <= Lo <= Hi, and
// Lo <= Estimate <= Hi when s > 0 and the confidence is at least 1/2 (a
// narrower interval sits around the median, which is below the mean).
func FuzzSingleMeanInterval(f *testing.F) {
	f.Add(int64(8), int64(10908), int64(102400), 0.95, uint8(0))
	f.Add(int64(0), int64(0), int64(102400), 0.95, uint8(3))
	f.Add(int64(1), int64(1), int64(1), 0.5, uint8(1))
	f.Add(int64(10000), int64(1<<30), int64(4096), 0.999, uint8(2))
	f.Add(int64(-1), int64(5), int64(0), math.NaN(), uint8(9))
	f.Fuzz(func(t *testing.T, s, u, mean int64, conf float64, w uint8) {
		if s > 1e8 {
			s %= 1e8
		}
		iv, err := SingleMeanInterval(s, u, mean, conf, Window(w))
		if err != nil {
			return
		}
		for _, v := range []float64{iv.Lo, iv.Hi, iv.Estimate} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%+v", iv)
			}
		}
		if !(float64(u) <= iv.Lo && iv.Lo <= iv.Hi) || iv.UnsampledLo < 0 || iv.UnsampledHi < iv.UnsampledLo {
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
