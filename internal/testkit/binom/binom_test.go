package binom

import (
	"math"
	"testing"
)

// The floors the tests quote, and tails that are known in closed form.
func TestBinom(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{
		{60, 1e-7, 45},   // TestGoHeapBias's coverage floor
		{150, 1e-7, 125}, // TestHeapCoverage's
	} {
		if got := Min(c.n, 0.95, c.p); got != c.want {
			t.Errorf("Min(%d, 0.95, %g) = %d, want %d", c.n, c.p, got, c.want)
		}
		k := Min(c.n, 0.95, c.p)
		if below := 1 - Tail(c.n, k, 0.95); below >= c.p || 1-Tail(c.n, k+1, 0.95) < c.p {
			t.Errorf("n %d: P(Y < %d) = %g: not the smallest k below %g", c.n, k, below, c.p)
		}
	}
	if got := Tail(10, 0, 0.3); math.Abs(got-1) > 1e-12 {
		t.Errorf("Tail(10, 0, 0.3) = %v, want 1", got)
	}
	if got, want := Tail(10, 10, 0.5), math.Pow(0.5, 10); math.Abs(got-want) > 1e-15 {
		t.Errorf("Tail(10, 10, 0.5) = %v, want %v", got, want)
	}
}
