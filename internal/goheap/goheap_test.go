package goheap

import (
	"math"
	"testing"
)

// scale reproduces runtime/pprof's scaleHeapSample.
func scale(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	avg := float64(size) / float64(count)
	s := 1 / (1 - math.Exp(-avg/float64(rate)))
	return int64(float64(count) * s), int64(float64(size) * s)
}

// TestRawCountExact: the count of a record as runtime/pprof writes it is
// recovered exactly, and sums of up to Slack records stay within range.
func TestRawCountExact(t *testing.T) {
	for _, rate := range []int64{1, 2, 512, 4096, 512 * 1024} {
		for _, size := range []int64{8, 16, 48, 1024, 32768, 40960, 1 << 20, 64 << 20} {
			for _, c := range []int64{1, 2, 3, 10, 99, 1000, 123457} {
				o, b := scale(c, c*size, rate)
				lo, hi, err := RawCount(o, b, size, rate)
				if err != nil || lo > c || hi < c {
					t.Fatalf("rate %d size %d count %d: [%d, %d], %v", rate, size, c, lo, hi, err)
				}
				if rate > 2*Slack && lo != hi {
					t.Errorf("rate %d size %d count %d: not exact: [%d, %d]", rate, size, c, lo, hi)
				}
				// Two records of the same key summed (hidden runtime frames).
				o2, b2 := scale(c+1, (c+1)*size, rate)
				lo, hi, err = RawCount(o+o2, b+b2, size, rate)
				if err != nil || lo > 2*c+1 || hi < 2*c+1 {
					t.Fatalf("rate %d size %d counts %d+%d: [%d, %d], %v", rate, size, c, c+1, lo, hi, err)
				}
			}
		}
	}
}

func TestRawCountErrors(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		objects, bytes, size, rate int64
	}{
		{"negative", -1, 10, 8, 4096},
		{"no size", 10, 10, 0, 4096},
		{"unscaled, inconsistent", 5, 41, 8, 1},
		{"bytes far from any count", 1, 1 << 40, 16, 4096},
		{"objects far from the count", 1 << 30, 4104, 16, 4096},
	} {
		if lo, hi, err := RawCount(tc.objects, tc.bytes, tc.size, tc.rate); err == nil {
			t.Errorf("%s: [%d, %d], no error", tc.name, lo, hi)
		}
	}
}

// FuzzRawCount: never panics; a count it returns reproduces values within
// the slack.
func FuzzRawCount(f *testing.F) {
	f.Add(int64(256), int64(4104), int64(16), int64(4096))
	f.Add(int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(1<<62), int64(1<<62), int64(1), int64(2))
	f.Fuzz(func(t *testing.T, objects, bytes, size, rate int64) {
		lo, hi, err := RawCount(objects, bytes, size, rate)
		if err != nil {
			return
		}
		if lo < 0 || hi < lo {
			t.Fatalf("RawCount(%d, %d, %d, %d) = [%d, %d]", objects, bytes, size, rate, lo, hi)
		}
	})
}
