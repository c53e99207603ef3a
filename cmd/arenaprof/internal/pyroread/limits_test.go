package pyroread

import (
	"math"
	"strings"
	"testing"
)

// FuzzSuggestions: a suggested -max-memory or -max-bytes is a power of two
// above the need and at least twice the limit (or the largest int64); a
// suggested -max-requests is above the need; the message names the flag
// and a value the CLI reads back.
func FuzzSuggestions(f *testing.F) {
	f.Add(int64(512<<20), 3e9, 50413)
	f.Add(int64(1), 0.0, 0)
	f.Add(int64(1), math.Inf(1), 0)
	f.Add(int64(math.MaxInt64), 1e300, math.MaxInt/2)
	f.Fuzz(func(t *testing.T, limit int64, need float64, requests int) {
		if limit <= 0 || math.IsNaN(need) || need < 0 || requests < 0 {
			return
		}
		s := powerAbove(float64(limit), need)
		if s != math.MaxInt64 && (s&(s-1) != 0 || float64(s) <= need || s < 2*limit && limit < math.MaxInt64/2) {
			t.Fatalf("powerAbove(%d, %g) = %d", limit, need, s)
		}
		e := &LimitError{Flag: FlagMaxMemory, Limit: limit, Suggest: s, What: "x"}
		if !strings.Contains(e.Error(), "raise -max-memory (e.g. -max-memory ") || (s < 1<<40 && strings.Contains(showBytes(s), " ")) {
			t.Fatalf("%q", e.Error())
		}
		if n := niceAbove(requests); n <= requests && n < math.MaxInt/20 {
			t.Fatalf("niceAbove(%d) = %d", requests, n)
		}
	})
}

func TestShowBytes(t *testing.T) {
	for n, want := range map[int64]string{1 << 30: "1GiB", 3 << 20: "3MiB", 256 << 10: "256KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := showBytes(n); got != want {
			t.Errorf("showBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
