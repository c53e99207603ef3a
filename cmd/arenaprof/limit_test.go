package main

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// TestLimitErr: a refusal at -max-memory suggests more than was given
// (twice at least, and above what the data read already needs), and says
// instead that the input is no profile when it is none.
func TestLimitErr(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		name      string
		limit     int64
		err       error
		want, not string
	}{
		{"4GiB, need 5GiB", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib}, "e.g. -max-memory 8GiB", "not a profile"},
		{"4GiB, need 9GiB", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 9 * gib}, "e.g. -max-memory 16GiB", "not a profile"},
		{"512MiB, just over", 512 << 20, &pprofmt.MemoryLimitError{Limit: 512 << 20, Need: 512<<20 + 1}, "e.g. -max-memory 1GiB", "not a profile"},
		{"1MiB", 1 << 20, &pprofmt.MemoryLimitError{Limit: 1 << 20, Need: 3 << 20}, "e.g. -max-memory 4MiB", "not a profile"},
		{"wrapped", 4 * gib, fmt.Errorf("report: %w", &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib}), "e.g. -max-memory 8GiB", "not a profile"},
		{"sentinel alone", 4 * gib, pprofmt.ErrMemoryLimit, "e.g. -max-memory 8GiB", "not a profile"},
		{"zeros", 4 * gib, &pprofmt.MemoryLimitError{Limit: 4 * gib, Need: 5 * gib, NotProfile: true}, "zeros.gz: not a profile", "e.g."},
		{"-max-bytes", 4 * gib, fmt.Errorf("report: %w of 1 bytes", pprofmt.ErrTooLarge), "larger than -max-bytes", "-max-memory"},
	} {
		msg := limitErr("zeros.gz", c.err, report.ParseOptions{MaxBytes: 1 << 30, MaxMemory: c.limit}).Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%s: %q; want %q and not %q", c.name, msg, c.want, c.not)
		}
	}
}

// FuzzSuggestMemory: for any -max-memory and need, the suggestion is a
// power of two above both, at least twice the limit (or the largest
// int64, when none is).
func FuzzSuggestMemory(f *testing.F) {
	for _, c := range [][2]int64{{1, 0}, {512 << 20, 600 << 20}, {4 << 30, 5 << 30}, {math.MaxInt64 / 4, math.MaxInt64 / 4}, {1 << 62, 0}, {3, math.MaxInt64}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, limit, need int64) {
		if limit <= 0 || need < 0 {
			return
		}
		s := suggestMemory(limit, need)
		if s == math.MaxInt64 {
			if limit <= math.MaxInt64/4 && need < 1<<62 {
				t.Fatalf("suggestMemory(%d, %d) gave up with room left", limit, need)
			}
			return
		}
		if bits.OnesCount64(uint64(s)) != 1 || s/2 < limit || s <= need {
			t.Fatalf("suggestMemory(%d, %d) = %d", limit, need, s)
		}
	})
}
