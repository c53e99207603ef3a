package pprofmt

import (
	"math"
	"testing"

	"github.com/arenaprof/arenaprof/internal/estimate"
)

// TestVarianceSums checks each sample's values against the sums computed
// in float64, their rounding up and saturation, and that the weight bound
// holds the weight of the events summed.
func TestVarianceSums(t *testing.T) {
	tests := []struct {
		name             string
		c, size, mean    int64
		wantZero, capped bool
	}{
		{"small objects", 7, 32, 64 << 10, false, false},
		{"near the mean", 3, 4096, 4096, false, false},
		{"above the mean", 5, 16384, 4096, false, false},
		{"certain: mean 1", 4, 64, 1, true, false},
		{"certain: p rounds to 1", 2, 1 << 30, 4096, true, false},
		{"no events", 0, 32, 4096, true, false},
		{"negative count", -3, 32, 4096, true, false},
		{"bad size", 1, 0, 4096, true, false},
		{"bad mean", 1, 32, 0, true, false},
		{"saturated", math.MaxInt64 / 2, 4096, 1 << 30, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, wb := VarianceSums(tt.c, tt.size, tt.mean)
			if tt.wantZero {
				if v != 0 || wb != 0 {
					t.Fatalf("VarianceSums = %d, %d, want zeros", v, wb)
				}
				return
			}
			if tt.capped {
				if v != VarCap {
					t.Fatalf("alloc_var %d, want the cap %d", v, int64(VarCap))
				}
				return
			}
			w, _ := estimate.WeightedBytes(tt.size, tt.mean)
			m := float64(tt.mean)
			wantV := float64(tt.c) * w * (w - float64(tt.size)) / m
			if float64(v) < wantV || float64(v) > wantV+1 {
				t.Errorf("alloc_var %d, want ceil(%g)", v, wantV)
			}
			x := (w - m) / m
			wantWB := float64(tt.c) * x * x * x * x * m
			if float64(wb) < wantWB || float64(wb) > wantWB+1 {
				t.Errorf("alloc_wbound %d, want ceil(%g)", wb, wantWB)
			}
			bound, ok := WeightBound(wb, tt.mean)
			if !ok || bound < w {
				t.Errorf("WeightBound(%d, %d) = %g, %v; the weight is %g", wb, tt.mean, bound, ok, w)
			}
		})
	}
	if _, ok := WeightBound(VarCap, 4096); ok {
		t.Error("a saturated sum gave a bound")
	}
	if _, ok := WeightBound(-1, 4096); ok {
		t.Error("a negative sum gave a bound")
	}
}

// FuzzVarianceSums: any numbers give sums in [0, VarCap], and the bound
// from a sample's own alloc_wbound holds its weight.
func FuzzVarianceSums(f *testing.F) {
	f.Add(int64(3), int64(32), int64(4096))
	f.Add(int64(1), int64(16384), int64(4096))
	f.Add(int64(1<<40), int64(1<<20), int64(1<<40))
	f.Fuzz(func(t *testing.T, c, size, mean int64) {
		v, wb := VarianceSums(c, size, mean)
		if v < 0 || v > VarCap || wb < 0 || wb > VarCap {
			t.Fatalf("VarianceSums(%d, %d, %d) = %d, %d", c, size, mean, v, wb)
		}
		w, err := estimate.WeightedBytes(size, mean)
		if err != nil || c <= 0 || !(w > float64(size)) {
			return
		}
		if bound, ok := WeightBound(wb, mean); ok && bound < w*(1-1e-9) {
			t.Fatalf("bound %g below the weight %g (size %d, mean %d, c %d)", bound, w, size, mean, c)
		}
	})
}
