//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessAdvances: the CPU time grows while the process computes, and
// by about as much as the wall time a busy single goroutine spends.
func TestProcessAdvances(t *testing.T) {
	t0, w0 := Process(), time.Now()
	x := 0
	for time.Since(w0) < 50*time.Millisecond {
		for i := range 1 << 16 {
			x += i
		}
	}
	if d := Process() - t0; d <= 0 || d > time.Minute {
		t.Fatalf("CPU time grew by %v over %v of computing (%d)", d, time.Since(w0), x)
	}
}
